// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/db_expected.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <functional>
#include <optional>

namespace redrive::db {

class PgConnection;

/// One numbered migration compiled into the binary from resources/migrations/NNNN_name.sql (or a
/// set's own folder). A line `\ir PATH` in the file (psql's include, relative to the file) stands
/// for that file's text: `sql` and `checksum` are of the text with every include expanded.
struct Migration
{
    int version = 0;
    QString name;
    QByteArray sql;
    QString checksum; ///< SHA-256 of `sql`, hex
};

/// What migrate() did: the version before and after and the migrations it applied.
struct MigrationReport
{
    int fromVersion = 0;
    int toVersion = 0;
    QList<int> applied;
};

/// A family of migrations: the schema they build, where they are compiled in, the lock that
/// serializes them. Redrive's own schema is one; the reference worker's simulated world another.
struct MigrationSet
{
    QString schema; ///< e.g. "redrive"; holds the <schema>.schema_version table
    QString resourceDir; ///< e.g. ":/migrations"
    qint64 advisoryLockKey = 0;
    /// Checks run inside each migration's transaction (READ COMMITTED: each statement sees what
    /// was committed when it started): `beforeScript` before the migration's SQL, `afterScript`
    /// after it, before COMMIT. An error rolls the migration back and is what migrate()
    /// returns. Empty for Redrive's own schemas; a source's install checks the queue's tables
    /// with them (docs/security.md, "The queue's own role").
    using Check = std::function<std::optional<DbError>(PgConnection &)>;
    Check beforeScript = {};
    Check afterScript = {};
    /// All pending migrations in one transaction (with their schema_version rows), `first` run
    /// inside it before anything else: a failure anywhere rolls back all of it, `first`'s work
    /// included, and leaves the schema as it was. Source adapters use it: a reinstall drops the
    /// adapter's schema in `first`, and an adapter stopped between two versions would run at
    /// one its later versions made safe (docs/security.md, "The queue's own role").
    bool oneTransaction = false;
    Check first = {};
    /// Lines `\ir PATH` of the files are expanded (Migration). Off for files that are not the
    /// compiled-in ones as shipped: a source's SQL rewritten for another queue schema holds the
    /// operator's schema name, which must never make a line that reads a file.
    bool expandIncludes = true;

    /// The native Redrive schema (resources/migrations).
    static MigrationSet redrive();
    /// The reference worker's simulated outside world (resources/sim), schema "sim".
    static MigrationSet simulatedWorld();
};

/// Applies the bundled migrations to a database. Serialized across
/// processes with a session advisory lock; each migration runs in its own transaction together
/// with its row in redrive.schema_version, so a failure leaves the schema at the previous
/// version (or all of them in one, MigrationSet::oneTransaction). Running it again applies nothing.
/// A migration whose text changed after it was applied is reported as an error rather than silently
/// skipped or re-run.
class SchemaMigrator
{
public:
    explicit SchemaMigrator(PgConnection &connection, MigrationSet set = MigrationSet::redrive());

    /// The migrations compiled in, ordered by version.
    static QList<Migration> bundledMigrations(const MigrationSet &set = MigrationSet::redrive());
    /// The schema version this build expects (the highest bundled version).
    static int expectedVersion(const MigrationSet &set = MigrationSet::redrive());

    /// Refuses (returns the error to show) when `schema` exists but belongs neither to the
    /// connection's role nor to a superuser, or when another role may create objects in it:
    /// its owner, or that role, could replace what Redrive installs there or plant objects that
    /// Redrive's code reads (docs/security.md, "Who owns Redrive's schemas"). Nothing in the
    /// schema is read. std::nullopt when the schema is absent or safe to use.
    static std::optional<DbError> foreignSchema(PgConnection &connection, const QString &schema);

    /// The version recorded in the database; 0 when Redrive was never installed there.
    DbExpected<int> currentVersion();
    /// Brings the database to expectedVersion().
    DbExpected<MigrationReport> migrate();

private:
    PgConnection &m_connection;
    MigrationSet m_set;
};

} // namespace redrive::db
