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
    /// Overrides the string's target_session_attrs when not empty ("prefer-standby" for the
    /// read connections, "read-write" for the primary's;
    /// docs/architecture.md#reading-from-a-standby). Empty keeps what the string and
    /// PGTARGETSESSIONATTRS say.
    QString targetSessionAttrs;
    /// Pin the session's settings again in front of every statement (PgConnection::exec(), in
    /// the same round trip), so that nothing a function of one statement set for the session
    /// decides what the next one runs (docs/security.md, "The queue's own role"). Every
    /// connection of a DatabaseSession (the console's) sets it; off, settings a caller SETs on
    /// the connection itself stay.
    bool pinEveryStatement = false;
};

/// True when the console should read from a hot standby and act on the primary
/// (docs/architecture.md#reading-from-a-standby): `connInfo` lists more than one host (libpq's
/// `host=a,b port=p,q`, or PGHOST when the string names no host), or sets target_session_attrs
/// to prefer-standby or standby. False for one server (reads and actions then share it, as
/// before), and when the string cannot be parsed.
bool connInfoNamesStandby(const QString &connInfo);

/// The settings of the connections that read: with a standby named (connInfoNamesStandby()),
/// `settings` with target_session_attrs "prefer-standby" (or "standby" when the string asks for
/// that), so libpq picks a hot standby when one answers and the primary otherwise. Otherwise
/// `settings` unchanged.
ConnectionSettings readSettings(const ConnectionSettings &settings);

/// The settings of the connections that act, LISTEN, migrate, verify and export the audit
/// chain: with a standby named, `settings` with target_session_attrs "read-write" (the
/// primary); otherwise `settings` unchanged.
ConnectionSettings primarySettings(const ConnectionSettings &settings);

/// The same settings with target_session_attrs "standby": how a read connection that fell back
/// to the primary looks for the standby again.
ConnectionSettings standbyOnlySettings(const ConnectionSettings &settings);

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
