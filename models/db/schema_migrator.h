#pragma once

#include "models/db/db_expected.h"

#include <QByteArray>
#include <QList>
#include <QString>

namespace redrive::db {

class PgConnection;

/// One numbered migration compiled into the binary from resources/migrations/NNNN_name.sql.
struct Migration
{
    int version = 0;
    QString name;
    QByteArray sql;
    QString checksum; ///< SHA-256 of the SQL text, hex
};

/// What migrate() did: the version before and after and the migrations it applied.
struct MigrationReport
{
    int fromVersion = 0;
    int toVersion = 0;
    QList<int> applied;
};

/// Applies the bundled migrations to a database (issue 2, "Native schema"). Serialized across
/// processes with a session advisory lock; each migration runs in its own transaction together
/// with its row in redrive.schema_version, so a failure leaves the schema at the previous
/// version. Running it again applies nothing. A migration whose text changed after it was
/// applied is reported as an error rather than silently skipped or re-run.
class SchemaMigrator
{
public:
    explicit SchemaMigrator(PgConnection &connection);

    /// The migrations compiled in, ordered by version.
    static QList<Migration> bundledMigrations();
    /// The schema version this build expects (the highest bundled version).
    static int expectedVersion();

    /// The version recorded in the database; 0 when Redrive was never installed there.
    DbExpected<int> currentVersion();
    /// Brings the database to expectedVersion().
    DbExpected<MigrationReport> migrate();

    /// Identifies the advisory lock, so tests and tools can see who holds it.
    static constexpr qint64 kAdvisoryLockKey = 0x52454452495645; // "REDRIVE"

private:
    PgConnection &m_connection;
};

} // namespace redrive::db
