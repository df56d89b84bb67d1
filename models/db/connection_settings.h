#pragma once

#include <QMetaType>
#include <QString>

namespace redrive::db {

/// How to reach a server. Everything not given here falls back to libpq's own rules, exactly as
/// in psql: PG* environment variables, pg_service.conf (`service=name`), ~/.pgpass, sslmode.
/// (PostgreSQL manual, libpq "Connection Strings", "Environment Variables", "The Password File".)
struct ConnectionSettings
{
    /// A connection string ("host=db port=5432 dbname=app sslmode=require", "service=prod") or a
    /// URI ("postgresql://user@host/app"); empty means "environment and defaults only".
    QString connInfo;
    /// Reported to the server as application_name unless the string or PGAPPNAME sets one.
    QString applicationName = QStringLiteral("redrive");
    /// Used unless the string or PGCONNECT_TIMEOUT sets one; seconds.
    int connectTimeoutSeconds = 10;
    /// The session TimeZone pinned after connecting, so timestamps read back the same way on
    /// every machine. The console converts to the operator's local zone for display.
    QString sessionTimeZone = QStringLiteral("UTC");
    /// The session search_path, e.g. "redrive" so that the read contract's unqualified names
    /// resolve to the native source (DESIGN §4); empty leaves the server's default.
    QString searchPath;
    /// A password typed by the operator in the console, never stored; empty to let libpq use
    /// .pgpass or PGPASSWORD.
    QString password;
};

} // namespace redrive::db

Q_DECLARE_METATYPE(redrive::db::ConnectionSettings)
