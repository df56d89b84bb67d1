// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/connection_settings.h"
#include "models/db/db_expected.h"
#include "models/db/query_params.h"
#include "models/db/result_set.h"

#include <QByteArray>
#include <QList>
#include <QString>
#include <memory>

struct pg_conn;
struct pg_cancel;

namespace redrive::db {

/// One notification received on a LISTEN channel.
struct Notification
{
    QString channel;
    QString payload;
    int senderPid = 0;
};

/// What the server told us about this session right after connecting.
struct ServerInfo
{
    QString serverVersion; ///< e.g. "15.18"
    QString host; ///< host name or socket directory
    QString port;
    QString database;
    QString user; ///< session_user, the login role
    int backendPid = 0;
    /// A hot standby in recovery (read-only), as the server reports `in_hot_standby`.
    bool hotStandby = false;
};

/// How far a hot standby's replay is behind the primary
/// (docs/architecture.md#reading-from-a-standby), measured by comparing WAL positions: the
/// primary's pg_current_wal_lsn() read first, then the standby's pg_last_wal_replay_lsn(). The time
/// is `now() - pg_last_xact_replay_timestamp()` on the standby, taken only when the positions say
/// it is behind (on an idle primary the last replayed commit is old while nothing is missing).
struct ReplayStatus
{
    bool onStandby = false; ///< the read connection is on a hot standby
    quint64 primaryLsn = 0; ///< the primary's WAL position (0 when unknown)
    quint64 replayLsn = 0; ///< the standby's replay position (0 when not on a standby)
    qint64 lagBytes = 0; ///< WAL bytes the standby has not replayed yet; 0 when caught up
    double lagSeconds = 0; ///< how old the newest replayed commit is when behind, else 0; seconds
    bool replayPaused = false; ///< pg_wal_replay_pause() is in effect on the standby
};

/// A WAL position as PostgreSQL prints a pg_lsn ("16/B374D848") as one number; 0 when `text`
/// is not one.
quint64 parseLsn(const QString &text);

/// Cancels the statement running on a connection. Safe to call from any thread except the one
/// blocked in the statement; PQcancel is blocking, so call it off the GUI thread
/// (libpq "Canceling Queries in Progress"; libpq 15 has no non-blocking cancel).
class CancelHandle
{
public:
    CancelHandle() = default;
    explicit CancelHandle(pg_cancel *cancel);
    /// Sends the cancel request; returns false with a message when it could not be sent. A
    /// request that arrives after the statement ended has no effect.
    bool cancel(QString *errorMessage = nullptr) const;

private:
    std::shared_ptr<pg_cancel> m_cancel;
};

/// Owns one PGconn (closed with PQfinish). Move-only; used by one thread at a time.
/// Every statement goes through PQexecParams with typed parameters, except execScript(), which
/// runs SQL compiled into the binary (migrations) and never takes values.
class PgConnection
{
public:
    PgConnection();
    ~PgConnection();
    PgConnection(PgConnection &&other) noexcept;
    PgConnection &operator=(PgConnection &&other) noexcept;
    PgConnection(const PgConnection &) = delete;
    PgConnection &operator=(const PgConnection &) = delete;

    /// Connects with PQconnectStartParams (expand_dbname, so a full connection string or URI
    /// works; verbose errors while connecting, so the server's SQLSTATE is known) and pins
    /// TimeZone and DateStyle ISO for the session. Errors are ErrorKind::Authentication when the
    /// server refused the login (class 28) or a password was needed and none was given,
    /// ErrorKind::Connection otherwise, or ErrorKind::Other when the connection string itself
    /// cannot be parsed.
    static DbExpected<PgConnection> open(const ConnectionSettings &settings);

    bool isOpen() const;
    /// True while libpq believes the socket is usable (PQstatus == CONNECTION_OK).
    bool isHealthy() const;
    /// True while a transaction block is open on it, failed or not (PQtransactionStatus
    /// PQTRANS_INTRANS or PQTRANS_INERROR); false when closed.
    bool inTransactionBlock() const;

    /// Runs one statement with $n parameters and returns its rows or the error, decided by
    /// PQresultStatus. Results come in text format.
    ///
    /// On a connection opened with a search_path (ConnectionSettings::searchPath) and
    /// ConnectionSettings::pinEveryStatement (the console's), the session's settings are pinned
    /// again in front of every statement, in the same network round trip
    /// (libpq pipeline mode): outside a transaction block `RESET ALL` and the settings open()
    /// pins (search_path as pinnedSearchPath() makes it, TimeZone, DateStyle, IntervalStyle,
    /// synchronous_commit), inside one the same settings for the transaction (`set_config(...,
    /// true)`), so that nothing a function of the previous statement set for the session (code the
    /// queue's application planted, docs/security.md "The queue's own role") decides which names
    /// this one finds. When the pinning itself fails (a cancel that came while it ran), the
    /// statement does not run unpinned: its error is the pinning's (a cancel:
    /// ErrorKind::Canceled, SQLSTATE 57014) and the connection stays open, pinned again before
    /// the next statement. Only a pipeline that does not end as sent closes the connection
    /// (ErrorKind::Connection).
    DbExpected<ResultSet> exec(const QByteArray &sql, const QueryParams &params = {});
    /// The search_path a connection pins for `path`: "redrive_pgboss, redrive" gives
    /// "redrive_pgboss, redrive, pg_catalog, pg_temp" (pg_catalog added unless `path` names it,
    /// any pg_temp in `path` left out), so that the session's temporary objects are found last,
    /// never instead of the source's (the SECURITY DEFINER advice of PostgreSQL's CREATE FUNCTION
    /// page, applied to the session); the source's schema stays first, as current_schema().
    /// Empty for an empty `path`.
    static QString pinnedSearchPath(const QString &path);
    /// Prepares `sql` under `name` for this session (PQprepare); types come from the server.
    DbExpected<ResultSet> prepare(const QByteArray &name, const QByteArray &sql);
    /// Runs a statement prepared with prepare() (PQexecPrepared).
    DbExpected<ResultSet> execPrepared(const QByteArray &name, const QueryParams &params = {});
    /// Runs several statements of compiled-in SQL (no parameters, no user input).
    DbExpected<ResultSet> execScript(const QByteArray &sql);

    CancelHandle cancelHandle() const;
    /// The socket for a QSocketNotifier, or -1.
    int socket() const;
    /// Reads what arrived on the socket and returns the notifications it held. Returns an error
    /// when the connection broke.
    DbExpected<QList<Notification>> takeNotifications();
    /// Quotes a name as an SQL identifier (PQescapeIdentifier), for LISTEN channels only.
    QByteArray quoteIdentifier(const QString &name) const;
    ServerInfo serverInfo() const;

    pg_conn *handle() const { return m_conn; }

private:
    explicit PgConnection(pg_conn *conn);
    DbExpected<ResultSet> checked(struct pg_result *result);
    DbExpected<ResultSet> execPinned(const QByteArray &sql, const QueryParams &params,
                                     bool inTransaction);
    pg_conn *m_conn = nullptr;
    QByteArray m_timeZone; ///< pinned before every statement when m_searchPath is set
    /// pinnedSearchPath() of the settings with pinEveryStatement; empty: nothing pinned
    QByteArray m_searchPath;
};

} // namespace redrive::db

Q_DECLARE_METATYPE(redrive::db::ServerInfo)
Q_DECLARE_METATYPE(redrive::db::Notification)
Q_DECLARE_METATYPE(redrive::db::ReplayStatus)
