// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/connection_settings.h"
#include "models/db/db_error.h"
#include "models/db/pg_connection.h"
#include "models/db/query_params.h"
#include "models/db/result_set.h"

#include <QObject>
#include <QSet>
#include <atomic>
#include <condition_variable>
#include <mutex>

class QTimer;

namespace redrive::db {

/// Owns one connection and runs statements on it, in the thread it was moved to
/// (docs/architecture.md#threading). The GUI never calls it directly: DatabaseSession posts
/// requests to its slots and receives results through its queued signals. After a lost connection
/// it reports connectionLost() and reconnects by itself with capped exponential backoff and jitter;
/// statements requested while it is down fail at once with ErrorKind::Connection and are never
/// replayed (an operator action must not run twice behind the operator's back). A refused login
/// (ErrorKind::Authentication: a wrong or missing password) is not retried: the same password
/// would be refused again, and every try is a failed login in the server's log and towards any
/// lockout. It waits for retryWithPassword().
class DatabaseWorker : public QObject
{
    Q_OBJECT
public:
    explicit DatabaseWorker(ConnectionSettings settings, QObject *parent = nullptr);
    ~DatabaseWorker() override;

    /// Asks the server to cancel the statement running now (PQcancel). Thread-safe; blocks for a
    /// network round trip, so call it from a thread other than the GUI's and the worker's.
    void cancelRunning();

    /// The cancel epoch: a request queued with an epoch older than the current one is dropped
    /// before it runs (it fails with ErrorKind::Canceled). Thread-safe, never blocks.
    quint64 cancelEpoch() const { return m_cancelEpoch.load(); }
    /// Starts a new cancel epoch, so that every request queued until now is dropped unrun, and
    /// returns the request running now (0 when none). Thread-safe, never blocks.
    quint64 beginCancelEpoch();
    /// Cancels request `requestId` if it is still the one running, re-sending the cancel every
    /// 100 ms until it ends or `timeoutMs` passed (a cancel that reaches the server before the
    /// statement does is ignored by it). Returns whether it ended in time. Blocks: call it from a
    /// pool thread. The next request on this connection waits until it returned, so a cancel sent
    /// for this request never reaches the server while the next one runs.
    bool cancelRequest(quint64 requestId, int timeoutMs = 2000);
    /// Marks request `requestId` obsolete: if it has not started, it fails with
    /// ErrorKind::Canceled without reaching the server. Returns whether it is running now (then
    /// only cancelRequest() stops it). Thread-safe, never blocks.
    bool dropRequest(quint64 requestId);

public Q_SLOTS:
    /// Connects; emits connected() or connectionLost() and then keeps retrying.
    void open();
    /// Runs `sql` with `params`; emits resultReady() or failed() with the same request id.
    /// A request queued before the current cancel epoch (`epoch` older) fails with
    /// ErrorKind::Canceled without reaching the server.
    ///
    /// Reading from a standby (docs/architecture.md#reading-from-a-standby): with `minReplayLsn`
    /// not 0 and the connection on a hot standby, it first waits until the standby has replayed
    /// that WAL position, polling every kReplayPollStepMs for at most kReadYourWritesWaitMs, and
    /// when it has not emits standbyBehind() instead of running. With `reportCommit`, a success
    /// is followed by the server's WAL insert position (committed(), emitted before
    /// resultReady()).
    void execute(quint64 requestId, const QByteArray &sql, const redrive::db::QueryParams &params,
                 quint64 epoch = 0, quint64 minReplayLsn = 0, bool reportCommit = false);
    /// On the primary: reads pg_current_wal_lsn() and emits walPosition(); nothing when not
    /// connected. Returns whether it emitted.
    bool readWalPosition();
    /// On a read connection: emits replayStatus() measured against `primaryLsn`. A read
    /// connection of a standby setup that is on the primary (the standby was away) and `probe`
    /// set looks for a standby (target_session_attrs=standby) and moves there when one answers
    /// (connected() follows).
    void readReplayStatus(quint64 primaryLsn, bool probe);
    /// Closes the connection and stops reconnecting.
    void close();
    /// Connects again at once with `password` (after a refused login, or to replace the one in
    /// use); empty lets libpq fall back to the string, PGPASSWORD and .pgpass again.
    void retryWithPassword(const QString &password);

Q_SIGNALS:
    /// A connection attempt starts now (the first, a reconnect or a retry with a password).
    void connecting();
    void connected(const redrive::db::ServerInfo &info);
    void connectionLost(const redrive::db::DbError &error);
    /// A reconnect attempt (1-based) will start in `delayMs` milliseconds.
    void reconnectScheduled(int attempt, int delayMs);
    /// `elapsedMs` is the round-trip time measured in the worker thread, in milliseconds.
    void resultReady(quint64 requestId, const redrive::db::ResultSet &result, qint64 elapsedMs);
    void failed(quint64 requestId, const redrive::db::DbError &error);
    /// A read waited kReadYourWritesWaitMs for the standby to replay the caller's last action and
    /// it had not: it did not run; run it on the primary.
    void standbyBehind(quint64 requestId, const QByteArray &sql,
                       const redrive::db::QueryParams &params);
    /// A statement with reportCommit succeeded; `lsn` is the WAL insert position right after it.
    void committed(quint64 lsn);
    void walPosition(quint64 lsn);
    void replayStatus(const redrive::db::ReplayStatus &status);

public:
    /// How long a read after an action waits for the standby to replay it, in ms.
    static constexpr int kReadYourWritesWaitMs = 2000;
    static constexpr int kReplayPollStepMs = 20;

private:
    void connectNow();
    void adopt(PgConnection connection);
    bool waitForReplay(quint64 lsn);
    /// A read connection of a standby setup (target_session_attrs prefer-standby).
    bool prefersStandby() const;
    void dropConnection(const DbError &error);
    void scheduleReconnect();

    ConnectionSettings m_settings;
    PgConnection m_connection;
    std::mutex m_cancelMutex;
    CancelHandle m_cancel; // guarded by m_cancelMutex; copied out before PQcancel runs
    quint64 m_running = 0; // guarded by m_cancelMutex: the request on the server now, or 0
    int m_cancelling = 0; // guarded by m_cancelMutex: cancelRequest() calls sending cancels
    std::condition_variable m_cancelChanged; // m_running or m_cancelling changed
    std::atomic<quint64> m_cancelEpoch { 0 }; // bumped under m_cancelMutex
    QSet<quint64> m_dropped; // guarded by m_cancelMutex: queued requests made obsolete
    QTimer *m_reconnectTimer = nullptr;
    int m_reconnectAttempt = 0;
    ServerInfo m_serverInfo; ///< of the connection now
    quint64 m_replayedLsn = 0; ///< the standby replayed at least this far (last seen)
    bool m_closed = false;
    bool m_loginRefused = false; ///< the last attempt was refused: wait for a new password
};

/// Delay before reconnect attempt `attempt` (1-based), in ms: full jitter over
/// min(capMs, baseMs * 2^(attempt-1)), never below baseMs / 2 so a flapping server is not hammered.
int reconnectDelayMs(int attempt, int baseMs = 500, int capMs = 30000);

} // namespace redrive::db
