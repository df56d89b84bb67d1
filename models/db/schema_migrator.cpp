// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/db/schema_migrator.h"

#include "models/db/pg_connection.h"
#include "models/logging.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QFileInfo>
#include <QRegularExpression>
#include <algorithm>

namespace redrive::db {

namespace {

// Creates the schema and its version table. The schema name is one of MigrationSet's compiled-in
// constants, quoted with PQescapeIdentifier: an identifier cannot be a $n parameter.
QByteArray bootstrapSql(const QByteArray &schema)
{
    return "CREATE SCHEMA IF NOT EXISTS " + schema
        + ";\n"
          "CREATE TABLE IF NOT EXISTS "
        + schema
        + ".schema_version (\n"
          "    version    integer     PRIMARY KEY,\n"
          "    name       text        NOT NULL,\n"
          "    checksum   text        NOT NULL,\n"
          "    applied_at timestamptz NOT NULL DEFAULT clock_timestamp(),\n"
          "    applied_by text        NOT NULL DEFAULT session_user\n"
          ");\n";
}

// Replaces each line `\ir PATH` of `sql` (psql's include, PATH relative to `dir`, the including
// file's folder) with that file's text, expanded in turn, so that a migration reads as `psql -f`
// runs it. Two lines of one source adapter share their common parts this way
// (docs/architecture.md, "What pg-boss's two lines share"). A file that cannot be read leaves
// its line, which the server then refuses as a syntax error; the tests read every bundled
// migration and find none left.
QByteArray expandIncludes(const QString &dir, const QByteArray &sql, int depth = 0)
{
    static const QRegularExpression include(QStringLiteral(R"(^\\ir\s+(\S+)\s*$)"));
    if (!sql.contains("\\ir"))
        return sql;
    QByteArray out;
    out.reserve(sql.size());
    for (const QByteArray &line : sql.split('\n')) {
        const QRegularExpressionMatch m = include.match(QString::fromUtf8(line));
        if (!m.hasMatch()) {
            out += line + '\n';
            continue;
        }
        QFile included(QDir::cleanPath(QDir(dir).filePath(m.captured(1))));
        if (depth >= 4 || !included.open(QIODevice::ReadOnly)) {
            qCWarning(lcDb) << "cannot include" << included.fileName();
            out += line + '\n';
            continue;
        }
        QByteArray text
            = expandIncludes(QFileInfo(included).absolutePath(), included.readAll(), depth + 1);
        if (!text.endsWith('\n'))
            text += '\n';
        out += text;
    }
    out.chop(1); // split() gave one more line than there were newlines
    return out;
}

} // namespace

MigrationSet MigrationSet::redrive()
{
    return { QStringLiteral("redrive"), QStringLiteral(":/migrations"), 0x52454452495645 };
}

MigrationSet MigrationSet::simulatedWorld()
{
    return { QStringLiteral("sim"), QStringLiteral(":/sim"), 0x52454452495646 };
}

SchemaMigrator::SchemaMigrator(PgConnection &connection, MigrationSet set)
    : m_connection(connection)
    , m_set(std::move(set))
{ }

QList<Migration> SchemaMigrator::bundledMigrations(const MigrationSet &set)
{
    static const QRegularExpression pattern(QStringLiteral(R"(^(\d{4})_([a-z0-9_]+)\.sql$)"));
    QList<Migration> out;
    const QDir dir(set.resourceDir);
    for (const QString &file : dir.entryList(QDir::Files, QDir::Name)) {
        const QRegularExpressionMatch m = pattern.match(file);
        if (!m.hasMatch())
            continue;
        QFile f(dir.filePath(file));
        if (!f.open(QIODevice::ReadOnly))
            continue;
        Migration migration;
        migration.version = m.captured(1).toInt();
        migration.name = m.captured(2);
        migration.sql
            = set.expandIncludes ? expandIncludes(set.resourceDir, f.readAll()) : f.readAll();
        migration.checksum = QString::fromLatin1(
            QCryptographicHash::hash(migration.sql, QCryptographicHash::Sha256).toHex());
        out.append(migration);
    }
    std::sort(out.begin(), out.end(),
              [](const Migration &a, const Migration &b) { return a.version < b.version; });
    return out;
}

int SchemaMigrator::expectedVersion(const MigrationSet &set)
{
    const QList<Migration> all = bundledMigrations(set);
    return all.isEmpty() ? 0 : all.last().version;
}

DbExpected<int> SchemaMigrator::currentVersion()
{
    const QByteArray table = m_connection.quoteIdentifier(m_set.schema) + ".schema_version";
    auto exists = m_connection.exec("SELECT to_regclass($1) IS NOT NULL",
                                    QueryParams().addText(QString::fromUtf8(table)));
    if (!exists)
        return exists.error();
    if (!exists->boolean(0, 0).value_or(false))
        return 0;
    auto version = m_connection.exec("SELECT coalesce(max(version), 0) FROM " + table);
    if (!version)
        return version.error();
    return version->integer(0, 0).value_or(0);
}

std::optional<DbError> SchemaMigrator::foreignSchema(PgConnection &connection,
                                                     const QString &schema)
{
    const QString quoted = QString::fromUtf8(connection.quoteIdentifier(schema));
    auto owner = connection.exec(
        "SELECT pg_catalog.pg_get_userbyid(n.nspowner),"
        "       n.nspowner OPERATOR(pg_catalog.=) (SELECT r.oid FROM pg_catalog.pg_roles r"
        "                                          WHERE r.rolname OPERATOR(pg_catalog.=)"
        "                                                current_user)"
        "       OR (SELECT r.rolsuper FROM pg_catalog.pg_roles r"
        "            WHERE r.oid OPERATOR(pg_catalog.=) n.nspowner),"
        "       (SELECT pg_catalog.string_agg(DISTINCT CASE a.grantee WHEN 0 THEN 'PUBLIC'"
        "                    ELSE pg_catalog.quote_ident(pg_catalog.pg_get_userbyid(a.grantee))"
        "                    END, ', ')"
        "          FROM pg_catalog.aclexplode(n.nspacl) a"
        "         WHERE a.privilege_type OPERATOR(pg_catalog.=) 'CREATE'"
        "           AND a.grantee OPERATOR(pg_catalog.<>) n.nspowner),"
        "       pg_catalog.quote_ident(current_user)"
        "  FROM pg_catalog.pg_namespace n WHERE n.nspname OPERATOR(pg_catalog.=) $1",
        QueryParams().addText(schema));
    if (!owner)
        return owner.error();
    if (owner->rowCount() == 1 && !owner->boolean(0, 1).value_or(false)) {
        return DbError(
            ErrorKind::Other,
            QStringLiteral("schema %1 belongs to role %2, not to the role that runs this (%3) nor "
                           "to a superuser: its owner could replace what Redrive installs there; "
                           "refusing to continue. Check what the schema holds, drop it (or let its "
                           "owner hand it over: ALTER SCHEMA %1 OWNER TO ...), then run again.")
                .arg(quoted, owner->text(0, 0), owner->text(0, 3)));
    }
    if (owner->rowCount() == 1 && !owner->text(0, 2).isEmpty()) {
        return DbError(ErrorKind::Other,
                       QStringLiteral("%1 may create objects in schema %2, where Redrive's "
                                      "code would find them; refusing to continue. Run: "
                                      "REVOKE CREATE ON SCHEMA %2 FROM %1;")
                           .arg(owner->text(0, 2), quoted));
    }

    return std::nullopt;
}

DbExpected<MigrationReport> SchemaMigrator::migrate()
{
    const QByteArray schema = m_connection.quoteIdentifier(m_set.schema);
    const QByteArray table = schema + ".schema_version";
    auto locked = m_connection.exec("SELECT pg_advisory_lock($1)",
                                    QueryParams().addBigInt(m_set.advisoryLockKey));
    if (!locked)
        return locked.error();
    auto unlock = [this] {
        m_connection.exec("SELECT pg_advisory_unlock($1)",
                          QueryParams().addBigInt(m_set.advisoryLockKey));
    };

    auto fail = [&](const DbError &error) -> DbExpected<MigrationReport> {
        m_connection.exec("ROLLBACK");
        unlock();
        return error;
    };

    if (m_set.oneTransaction) {
        auto begun = m_connection.exec("BEGIN ISOLATION LEVEL READ COMMITTED");
        if (!begun)
            return fail(begun.error());
        if (m_set.first) {
            if (std::optional<DbError> refused = m_set.first(m_connection))
                return fail(*refused);
        }
    }
    auto boot = m_connection.execScript(bootstrapSql(schema));
    if (!boot)
        return fail(boot.error());
    // CREATE SCHEMA IF NOT EXISTS takes a schema someone else made first as it is. Its owner may
    // drop and replace every object in it, and a role with CREATE on it may add objects that the
    // console's path (which names Redrive's schemas first) or Redrive's own functions would find:
    // the queue's application, making the schema before the installer, ran its code as the
    // installer and as each operator (docs/security.md, "Who owns Redrive's schemas"). Refused
    // unless the schema belongs to the role that migrates or to a superuser, and nobody else may
    // create in it.
    if (std::optional<DbError> refused = foreignSchema(m_connection, m_set.schema))
        return fail(*refused);

    auto applied
        = m_connection.exec("SELECT version, checksum FROM " + table + " ORDER BY version");
    if (!applied)
        return fail(applied.error());

    MigrationReport report;
    QHash<int, QString> appliedChecksums;
    for (int row = 0; row < applied->rowCount(); ++row) {
        const int version = applied->integer(row, 0).value_or(0);
        appliedChecksums.insert(version, applied->text(row, 1));
        report.fromVersion = std::max(report.fromVersion, version);
    }

    for (const Migration &migration : bundledMigrations(m_set)) {
        if (appliedChecksums.contains(migration.version)) {
            if (appliedChecksums.value(migration.version) != migration.checksum) {
                return fail(
                    DbError(ErrorKind::Other,
                            QStringLiteral("migration %1 (%2) differs from the one applied to this "
                                           "database; refusing to continue")
                                .arg(migration.version)
                                .arg(migration.name)));
            }
            continue;
        }
        qCInfo(lcDb) << "applying migration" << migration.version << migration.name;
        // READ COMMITTED whatever the role's or database's default: a check before or after the
        // script must see what was committed when it runs, as the script's DDL does.
        if (!m_set.oneTransaction) {
            auto begun = m_connection.exec("BEGIN ISOLATION LEVEL READ COMMITTED");
            if (!begun)
                return fail(begun.error());
        }
        if (m_set.beforeScript) {
            if (std::optional<DbError> refused = m_set.beforeScript(m_connection))
                return fail(*refused);
        }
        auto ran = m_connection.execScript(migration.sql);
        if (!ran)
            return fail(ran.error());
        if (m_set.afterScript) {
            if (std::optional<DbError> refused = m_set.afterScript(m_connection))
                return fail(*refused);
        }
        auto recorded = m_connection.exec("INSERT INTO " + table
                                              + " (version, name, checksum) VALUES ($1, $2, $3)",
                                          QueryParams()
                                              .addInt(migration.version)
                                              .addText(migration.name)
                                              .addText(migration.checksum));
        if (!recorded)
            return fail(recorded.error());
        if (!m_set.oneTransaction) {
            auto committed = m_connection.exec("COMMIT");
            if (!committed)
                return fail(committed.error());
        }
        report.applied.append(migration.version);
    }
    if (m_set.oneTransaction) {
        auto committed = m_connection.exec("COMMIT");
        if (!committed)
            return fail(committed.error());
    }
    unlock();
    report.toVersion
        = std::max(report.fromVersion, report.applied.isEmpty() ? 0 : report.applied.last());
    return report;
}

} // namespace redrive::db
