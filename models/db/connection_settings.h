// SPDX-License-Identifier: GPL-3.0-or-later
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
    /// resolve to the native source (docs/architecture.md); empty leaves the server's default.
    QString searchPath;
    /// A password typed by the operator in the console, never stored; empty to let libpq use
    /// .pgpass or PGPASSWORD.
    QString password;
};

/// `connInfo` (a key=value connection string or a postgresql:// URI, as libpq parses it) rebuilt
/// as key=value pairs without any secret: password and sslpassword are dropped, wherever they
/// were (a `password=` pair, `user:secret@` in a URI, a `?password=` query parameter). Safe to
/// show, log or save. Empty for an empty string; when libpq cannot parse it, nothing of it is
/// returned: a fixed placeholder, and `*ok` (if given) is set to false.
QString redactedConnInfo(const QString &connInfo, bool *ok = nullptr);

/// True when `connInfo` names a password (or sslpassword) anywhere libpq would read one; false
/// also when it cannot be parsed.
bool connInfoHasPassword(const QString &connInfo);

/// The password `connInfo` carries (a `password=` pair, `user:secret@` or `?password=` in a
/// URI), decoded as libpq would use it; empty when it has none or cannot be parsed. For moving a
/// typed password out of the string into ConnectionSettings::password, never for display.
QString connInfoPassword(const QString &connInfo);

} // namespace redrive::db

Q_DECLARE_METATYPE(redrive::db::ConnectionSettings)
