// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/db_expected.h"
#include "models/db/schema_migrator.h"

#include <QList>
#include <QString>
#include <optional>

namespace redrive {

namespace db {
class PgConnection;
}

/// A job queue Redrive can open as a source (docs/architecture.md, "The read
/// contract and the action functions"): the adapter's SQL compiled in from
/// resources/sources/<dir>/NNNN_name.sql, the schema it is installed into, and the queue schema
/// versions it was verified against.
struct SourceDefinition
{
    QString name; ///< as typed: "pgboss", "graphile-worker"
    QString label; ///< "pg-boss 10.x"
    QString schema; ///< the source's schema, e.g. "redrive_pgboss"
    QString queueSchema; ///< the queue's own schema, e.g. "pgboss"
    QString resourceDir; ///< e.g. ":/sources/pgboss"
    qint64 advisoryLockKey = 0;
    /// The queue's schema version must lie in [min, max]; how it is read is per queue.
    QByteArray queueVersionSql; ///< one row, one integer column; no parameters
    int minQueueVersion = 0;
    int maxQueueVersion = 0;

    /// Other majors of the same queue that need an adapter line of their own (pg-boss 12: the
    /// 10.x adapter's views name columns 12 dropped). Each is a complete definition with the same
    /// name and schema; install() picks the one whose version range holds the queue's version.
    QList<SourceDefinition> otherLines;

    /// The line (this one or one of otherLines) verified against queue schema version
    /// `queueVersion`; nullopt when none is.
    std::optional<SourceDefinition> lineFor(int queueVersion) const;

    /// The queue schema name the adapter's SQL is written against ("pgboss"); queueSchema may
    /// differ (the library's `schema` option): install() then applies the SQL with every
    /// qualified reference to this schema rewritten to queueSchema.
    QString shippedQueueSchema;
    /// queueSchema was given by the operator (`--queue-schema`); otherwise install() keeps the
    /// one an earlier install recorded in redrive.source.
    bool queueSchemaGiven = false;
    /// The table of queueSchema that queueVersionSql reads ("version", "migrations"): locked and
    /// checked before it is read (docs/security.md, "The queue's own role").
    QString queueVersionTable = {};
    /// The enum types of queueSchema that the library's tables use ("job_state" for pg-boss,
    /// none for graphile-worker): a column of the tables read may be of a built-in type, of one
    /// of these or an array of one, and nothing else (docs/security.md, "The queue's own role").
    QStringList queueEnums = {};

    /// This definition (and its other lines) for a queue whose schema is `schema`.
    SourceDefinition withQueueSchema(const QString &schema) const;

    /// The search_path the console sets to read this source: its schema, then Redrive's.
    QString searchPath() const;
    db::MigrationSet migrationSet() const;

    static QList<SourceDefinition> known();
    static std::optional<SourceDefinition> find(const QString &name);
};

/// What install() did.
struct SourceInstallReport
{
    int queueVersion = 0;
    QString label; ///< the adapter line installed, e.g. "pg-boss 12.x"
    /// The adapter was recorded as installed but its capture trigger or views were gone (the
    /// queue's schema was dropped and recreated): its schema was dropped and installed afresh.
    bool reinstalled = false;
    /// What the adapter's confined role had lost of the rights the migrations granted it on the
    /// queue's schema, e.g. "SELECT on job, USAGE on the schema" (the queue's owner revoked
    /// them; every read of the console fails), empty when nothing. When install() succeeds they
    /// were granted again (it fails when they cannot be).
    QString rightsMissing;
    /// The adapter installed was not a beginning of this line's versions: an earlier release's
    /// (applied version by version before the line was squashed into one file), or of another
    /// line or made for another queue schema (pg-boss 10's line, and now pg-boss 12 runs in a
    /// schema of its own, since pg-boss 12 cannot migrate a pg-boss 10 schema): its schema was
    /// dropped and this line installed, its settings (graphile-worker's stuck_after) kept.
    bool replaced = false;
    int replacedVersion = 0; ///< when replaced: the highest version the replaced adapter had
    QString queueSchema; ///< the queue schema the adapter now reads
    db::MigrationReport migrations;
};

/// Installs or upgrades one source adapter, like SchemaMigrator does for Redrive's own schema
/// (versioned, each version one transaction, a second run applies nothing). Refuses unless
/// Redrive's schema is migrated to this build's version and the queue's schema is there at a
/// version the adapter was verified against. An installed adapter whose capture trigger or
/// views are missing (the queue's schema was dropped and recreated, which drops them with it)
/// is reinstalled (a right its confined role lost is granted again, nothing dropped): its schema is
/// dropped and migrated from version 0; Redrive's own record of the jobs (redrive.source_job,
/// redrive.source_attempt, the audit log) is kept, and so are the adapter's settings. So is an
/// adapter whose applied versions are not a beginning of the chosen line's (an earlier release's,
/// another line's, or one made for another queue schema): replaced, the record kept. An adapter
/// of the chosen line newer than this build's is left as it is (a reinstall over it is refused).
class SourceInstaller
{
public:
    explicit SourceInstaller(db::PgConnection &connection);

    db::DbExpected<SourceInstallReport> install(const SourceDefinition &source);

private:
    db::DbExpected<SourceInstallReport> installChosen(const SourceDefinition &source);

    db::PgConnection &m_connection;
};

/// `redrive install-source NAME`: prints what happened; returns the process exit code
/// (0 done, 1 refused or failed, 64 unknown source, 69 cannot connect). `queueSchema`: the
/// library's schema when it is not the default (pg-boss and graphile-worker `schema` option);
/// empty keeps the one installed before, else the default. A refusal for lack of
/// rights names the role that installs a source and the grants it needs (README, "Sources").
int runInstallSource(const QString &name, const QString &connInfo,
                     const QString &queueSchema = QString());

/// The sentence `install-source` adds to a "permission denied" error: which role installs
/// `source` and which rights on Redrive's schema and on the queue's schema it needs.
QString installRoleHint(const SourceDefinition &source);

} // namespace redrive
