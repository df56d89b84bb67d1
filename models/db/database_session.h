// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/connection_settings.h"
#include "models/db/db_error.h"
#include "models/db/db_expected.h"
#include "models/db/pg_connection.h"
#include "models/db/query_params.h"
#include "models/db/result_set.h"

#include <QFuture>
#include <QHash>
#include <QObject>
#include <QPointer>
#include <QStringList>
#include <QThread>
#include <QTimer>
#include <functional>

namespace redrive::db {

class DatabaseWorker;
class NotificationListener;

/// The GUI thread's handle on the database: owns a DatabaseWorker in its own QThread (and, once
/// listen() is called, a NotificationListener in another), posts statements to it and hands
/// results back on the thread that owns the session, by queued signals. No call here waits for
/// the network (docs/architecture.md#threading).
///
/// Interactive first: a request is Interactive (what the operator just asked for: a page, a
/// case view, a filter change) or Background (facets, charts, counts, other tabs' loads). The
/// two run on separate connections, each first in, first out, so an interactive request never
/// waits behind a background one; the background connection is opened by the first background
/// request. A request a newer one made obsolete is withdrawn with cancelRequest().
///
/// Reading from a standby (docs/architecture.md#reading-from-a-standby): when the connection
/// string names a standby (connInfoNamesStandby(): several hosts, or target_session_attrs
/// prefer-standby), both of those connections read with target_session_attrs=prefer-standby, and
/// a third, with read-write, runs what must reach the primary (statementRunsOnPrimary(): every
/// action) and is where the listener and the audit jobs connect. After such a statement the
/// reads that follow wait for the standby to replay it, or run on the primary. With one server
/// all of this is off and everything runs as described above.
class DatabaseSession : public QObject
{
    Q_OBJECT
public:
    using Callback = std::function<void(const DbExpected<ResultSet> &)>;

    /// Which connection a request runs on. Default: Background inside a BackgroundScope,
    /// Interactive otherwise. OwnConnection: a connection of the request's `context` alone,
    /// opened by its first such request and kept until the session goes, for a transaction that
    /// spans several requests (a frozen pass read through a cursor on one snapshot,
    /// docs/architecture.md#paging-a-frozen-pass) without any other request seeing it. Its owner
    /// runs its requests in order and ends every transaction it begins. Its application_name is
    /// the session's with " (own)" appended.
    enum class Priority { Default, Interactive, Background, OwnConnection };

    /// While one lives, execute() calls with Priority::Default on `session` run as Background
    /// (e.g. around loading the tabs the operator is not looking at). Nests.
    class BackgroundScope
    {
    public:
        explicit BackgroundScope(DatabaseSession *session);
        ~BackgroundScope();
        BackgroundScope(const BackgroundScope &) = delete;
        BackgroundScope &operator=(const BackgroundScope &) = delete;

    private:
        QPointer<DatabaseSession> m_session;
    };

    explicit DatabaseSession(ConnectionSettings settings, QObject *parent = nullptr);
    /// Cancels what runs, closes the connections and joins the threads.
    ~DatabaseSession() override;

    /// Starts connecting in the worker thread; connected() or connectionLost() follows.
    void open();
    /// Queues `sql` with `params` on the connection of `priority` and returns the request id.
    /// `done` runs on this object's thread with the rows or the error, unless `context` was
    /// destroyed or the request withdrawn (cancelRequest()) meanwhile.
    quint64 execute(const QByteArray &sql, const QueryParams &params, QObject *context,
                    Callback done, Priority priority = Priority::Default);
    /// Withdraws request `requestId`, which a newer request made obsolete: its callback is never
    /// called; queued, it never reaches the server; running, it finishes unseen (a PQcancel could
    /// hit the newer request queued behind it). Unknown or finished ids are ignored.
    void cancelRequest(quint64 requestId);
    /// Withdraws request `requestId` like cancelRequest(), and if it runs now on its context's
    /// own connection (Priority::OwnConnection), cancels it on the server too (PQcancel from a
    /// pool thread, re-sent until it ends, for at most kCancelTimeoutMs): nothing but its owner's
    /// requests run there, so the cancel cannot hit someone else's. On the shared connections it
    /// is cancelRequest().
    void abortRequest(quint64 requestId);
    /// Cancels the statement running now, if any; its request then fails with
    /// ErrorKind::Canceled. Sends the cancel from a pool thread, so it returns at once.
    void cancelRunning();
    /// What Esc does: cancels the statement running now and drops every request queued behind it
    /// unrun, each failing with ErrorKind::Canceled, so that nothing this session asked for is
    /// left waiting on the server. The cancel is re-sent until the statement ends, for at most
    /// kCancelTimeoutMs. Returns at once (the cancel goes out from a pool thread); requests made
    /// afterwards run normally.
    void cancelAll();
    static constexpr int kCancelTimeoutMs = 2000;
    /// Starts a listener on a dedicated connection for `channels`; listening() and notified()
    /// follow. After its connection drops it reconnects by itself (listenerLost(), then
    /// listening() again).
    void listen(const QStringList &channels);
    /// The listener's heartbeat (NotificationListener::setHeartbeat), in ms; call before listen().
    void setListenerHeartbeat(int intervalMs, int timeoutMs);
    /// True while the listener is connected and LISTENing.
    bool isListening() const { return m_listening; }
    /// After a refused login (connectionLost() with ErrorKind::Authentication, after which
    /// nothing reconnects by itself): connects again at once with `password`, which the
    /// listener uses too. Never stored anywhere but in memory.
    void retryWithPassword(const QString &password);

    /// True after the server refused the login and until retryWithPassword() or a connection.
    bool isLoginRefused() const { return m_loginRefused; }

    bool isConnected() const { return m_connected; }
    /// The server the interactive (read) connection is on.
    ServerInfo serverInfo() const { return m_serverInfo; }

    /// True when the connection string names a standby
    /// (docs/architecture.md#reading-from-a-standby).
    bool usesStandby() const { return m_usesStandby; }
    /// True while the interactive reads come from a hot standby.
    bool readsFromStandby() const { return m_connected && m_serverInfo.hotStandby; }
    /// The last replay measurement (all zero before the first, or with one server).
    ReplayStatus replayStatus() const { return m_replayStatus; }
    /// How often the standby's replay is measured, in ms (default kReplayPollMs); every
    /// kStandbyProbeEvery-th measurement a read connection that fell back to the primary looks
    /// for the standby again. One measurement is on its way at a time: while the primary's or
    /// the read connection's worker is busy (a long action, a slow read), ticks are skipped
    /// rather than queued behind it.
    void setReplayPollInterval(int intervalMs);
    static constexpr int kReplayPollMs = 2000;
    static constexpr int kStandbyProbeEvery = 5;
    /// The WAL position after this session's last action on the primary; reads wait for the
    /// standby to replay it. 0 before any, and with one server.
    quint64 lastCommitLsn() const { return m_commitLsn; }
    /// The settings the primary's connections use (the listener, the audit verifier and export):
    /// target_session_attrs=read-write when a standby is named, else settings().
    ConnectionSettings primarySettings() const;
    /// The last statement's round-trip time measured in the worker thread, in ms; -1 before any.
    qint64 lastRoundTripMs() const { return m_lastRoundTripMs; }
    int pendingCount() const { return int(m_pending.size()); }
    /// Whether the background connection was opened (by a first background request).
    bool hasBackgroundConnection() const { return m_background != nullptr; }
    /// Connections of their own opened for contexts (Priority::OwnConnection).
    int ownConnectionCount() const { return int(m_own.size()); }
    /// Threads of those connections still running: one whose context was destroyed stops once
    /// its connection is closed.
    int ownThreadCount() const { return int(m_ownThreads.size()); }
    const ConnectionSettings &settings() const { return m_settings; }

Q_SIGNALS:
    /// The worker starts a connection attempt (first, reconnect or retry with a password).
    void connecting();
    void connected(const redrive::db::ServerInfo &info);
    void connectionLost(const redrive::db::DbError &error);
    void reconnectScheduled(int attempt, int delayMs);
    void notified(const redrive::db::Notification &notification);
    void listening();
    /// The listener's connection dropped (or its heartbeat went unanswered); it reconnects by
    /// itself. Notifications sent until listening() are lost: re-read then.
    void listenerLost(const redrive::db::DbError &error);
    /// Emitted after every statement's callback ran; `busy` is false when nothing is pending.
    void activityChanged(bool busy);
    /// A new replay measurement (docs/architecture.md#reading-from-a-standby).
    void replayStatusChanged(const redrive::db::ReplayStatus &status);
    /// A read after this session's action found the standby behind it for
    /// DatabaseWorker::kReadYourWritesWaitMs and ran on the primary instead; so do the reads
    /// after it until the standby has replayed that action.
    void readRoutedToPrimary();

private:
    void deliver(quint64 requestId, const DbExpected<ResultSet> &outcome);
    /// Runs `cancel` on a pool thread, kept in m_cancelTasks.
    void sendCancel(std::function<void()> cancel);
    DatabaseWorker *backgroundWorker();
    void pollReplay();
    void onStandbyBehind(quint64 requestId, const QByteArray &sql, const QueryParams &params);
    DatabaseWorker *ownWorker(QObject *context);
    DatabaseWorker *startWorker(QThread *thread, const QString &name,
                                const ConnectionSettings &settings);

    struct Pending
    {
        QPointer<QObject> context;
        Callback done;
        DatabaseWorker *worker = nullptr;
    };

    ConnectionSettings m_settings;
    QThread m_workerThread;
    QThread m_listenerThread;
    QThread m_backgroundThread;
    QThread m_primaryThread;
    DatabaseWorker *m_worker = nullptr;
    /// Runs what must reach the primary: m_worker with one server, its own otherwise.
    DatabaseWorker *m_primary = nullptr;
    QTimer *m_replayTimer = nullptr;
    ReplayStatus m_replayStatus;
    quint64 m_commitLsn = 0;
    int m_replayPolls = 0;
    /// A replay measurement is on its way (pollReplay() until replayStatus, or until the
    /// primary could not be read): the timer's ticks meanwhile are skipped, not queued.
    bool m_replayPollOutstanding = false;
    bool m_usesStandby = false;
    bool m_readsOnPrimary = false; ///< a read found the standby behind m_commitLsn
    DatabaseWorker *m_background = nullptr; ///< created by the first background request
    /// Connections of their own (Priority::OwnConnection), by context, each in its own thread.
    QHash<QObject *, DatabaseWorker *> m_own;
    QList<QThread *> m_ownThreads;
    NotificationListener *m_listener = nullptr;
    QHash<quint64, Pending> m_pending;
    /// Cancels being sent from pool threads (PQcancel blocks). Every one is kept until it ends:
    /// they use the workers, which the destructor stops only after waiting for them all.
    QList<QFuture<void>> m_cancelTasks;
    int m_backgroundDepth = 0; ///< live BackgroundScopes
    quint64 m_nextRequestId = 1;
    bool m_connected = false;
    bool m_listening = false;
    int m_heartbeatIntervalMs = -1; ///< -1: the listener's default
    int m_heartbeatTimeoutMs = -1;
    bool m_loginRefused = false;
    ServerInfo m_serverInfo;
    qint64 m_lastRoundTripMs = -1;
};

} // namespace redrive::db
