// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/source_installer.h"

#include "models/db/pg_connection.h"
#include "models/logging.h"

#include <cstdio>

namespace redrive {

QString SourceDefinition::searchPath() const
{
    return schema + QStringLiteral(", redrive");
}

db::MigrationSet SourceDefinition::migrationSet() const
{
    return { schema, resourceDir, advisoryLockKey };
}

QList<SourceDefinition> SourceDefinition::known()
{
    // Versions read from the libraries in tests/sources/node (package-lock.json): pg-boss 10.x
    // records its schema version in pgboss.version (21 in 10.0.0 ... 24 since 10.1.5);
    // graphile-worker 0.17.x has migrations 16 ... 19 in graphile_worker.migrations (16 renamed
    // jobs to _private_jobs, which the adapter reads).
    return {
        { QStringLiteral("pgboss"), QStringLiteral("pg-boss 10.x"),
          QStringLiteral("redrive_pgboss"), QStringLiteral("pgboss"),
          QStringLiteral(":/sources/pgboss"), 0x52454452495650,
          "SELECT max(version)::integer FROM pgboss.version", 21, 24 },
        { QStringLiteral("graphile-worker"), QStringLiteral("graphile-worker 0.17.x"),
          QStringLiteral("redrive_graphile"), QStringLiteral("graphile_worker"),
          QStringLiteral(":/sources/graphile_worker"), 0x52454452495647,
          "SELECT max(id)::integer FROM graphile_worker.migrations", 16, 19 },
    };
}

std::optional<SourceDefinition> SourceDefinition::find(const QString &name)
{
    for (const SourceDefinition &s : known())
        if (s.name == name)
            return s;
    return std::nullopt;
}

SourceInstaller::SourceInstaller(db::PgConnection &connection)
    : m_connection(connection)
{ }

db::DbExpected<SourceInstallReport> SourceInstaller::install(const SourceDefinition &source)
{
    using db::DbError;
    using db::ErrorKind;

    db::SchemaMigrator redrive(m_connection);
    auto redriveVersion = redrive.currentVersion();
    if (!redriveVersion)
        return redriveVersion.error();
    const int expected = db::SchemaMigrator::expectedVersion();
    if (*redriveVersion < expected)
        return DbError(ErrorKind::Other,
                       QStringLiteral("the Redrive schema is at version %1, this build needs %2: "
                                      "run `redrive migrate` first")
                           .arg(*redriveVersion)
                           .arg(expected));

    auto present = m_connection.exec("SELECT to_regnamespace($1) IS NOT NULL",
                                     db::QueryParams().addText(source.queueSchema));
    if (!present)
        return present.error();
    if (!present->boolean(0, 0).value_or(false))
        return DbError(ErrorKind::Other,
                       QStringLiteral("schema %1 not found: start %2 once against this database "
                                      "so it installs its own schema, then install the source")
                           .arg(source.queueSchema, source.label));
    auto queueVersion = m_connection.exec(source.queueVersionSql);
    if (!queueVersion)
        return queueVersion.error();
    SourceInstallReport report;
    report.queueVersion = queueVersion->integer(0, 0).value_or(0);
    if (report.queueVersion < source.minQueueVersion
        || report.queueVersion > source.maxQueueVersion)
        return DbError(ErrorKind::Other,
                       QStringLiteral("%1 schema version %2 is not one this adapter was verified "
                                      "against (%3 to %4, %5)")
                           .arg(source.queueSchema)
                           .arg(report.queueVersion)
                           .arg(source.minQueueVersion)
                           .arg(source.maxQueueVersion)
                           .arg(source.label));

    db::SchemaMigrator adapter(m_connection, source.migrationSet());
    auto migrated = adapter.migrate();
    if (!migrated)
        return migrated.error();
    report.migrations = *migrated;
    qCInfo(lcDb) << "source" << source.name << "at adapter version" << migrated->toVersion;
    return report;
}

int runInstallSource(const QString &name, const QString &connInfo)
{
    const std::optional<SourceDefinition> source = SourceDefinition::find(name);
    if (!source) {
        QStringList names;
        for (const SourceDefinition &s : SourceDefinition::known())
            names << s.name;
        std::fprintf(stderr, "redrive install-source: unknown source '%s' (one of: %s)\n",
                     qPrintable(name), qPrintable(names.join(QStringLiteral(", "))));
        return 64;
    }
    db::ConnectionSettings settings;
    settings.connInfo = connInfo;
    auto connection = db::PgConnection::open(settings);
    if (!connection) {
        std::fprintf(stderr, "redrive install-source: cannot connect: %s\n",
                     qPrintable(connection.error().summary()));
        return 69;
    }
    SourceInstaller installer(connection.value());
    auto report = installer.install(*source);
    if (!report) {
        const db::DbError &e = report.error();
        std::fprintf(stderr, "redrive install-source %s: failed: %s\n", qPrintable(name),
                     qPrintable(e.summary()));
        if (!e.detail().isEmpty())
            std::fprintf(stderr, "  detail: %s\n", qPrintable(e.detail()));
        if (!e.hint().isEmpty())
            std::fprintf(stderr, "  hint: %s\n", qPrintable(e.hint()));
        return 1;
    }
    if (report->migrations.applied.isEmpty())
        std::printf("redrive install-source %s: up to date (adapter version %d)\n",
                    qPrintable(name), report->migrations.toVersion);
    else
        std::printf("redrive install-source %s: adapter version %d -> %d over %s schema version "
                    "%d; search_path for the console: %s\n",
                    qPrintable(name), report->migrations.fromVersion, report->migrations.toVersion,
                    qPrintable(source->queueSchema), report->queueVersion,
                    qPrintable(source->searchPath()));
    return 0;
}

} // namespace redrive
