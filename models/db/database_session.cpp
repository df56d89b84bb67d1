// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/db/database_session.h"

#include "models/db/database_worker.h"
#include "models/db/meta_types.h"
#include "models/db/notification_listener.h"
#include "models/db/sql_statement.h"

#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <utility>

namespace redrive::db {

DatabaseSession::DatabaseSession(ConnectionSettings settings, QObject *parent)
    : QObject(parent)
    , m_settings(std::move(settings))
    , m_usesStandby(connInfoNamesStandby(m_settings.connInfo))
{
    // Every connection of the console's, the listener's and the own ones included.
    m_settings.pinEveryStatement = true;
    registerMetaTypes();
    m_workerThread.setObjectName(QStringLiteral("redrive-db"));
    m_worker = new DatabaseWorker(readSettings(m_settings));
    m_worker->moveToThread(&m_workerThread);
    connect(&m_workerThread, &QThread::finished, m_worker, &QObject::deleteLater);

    connect(m_worker, &DatabaseWorker::connecting, this, &DatabaseSession::connecting);
    connect(m_worker, &DatabaseWorker::connected, this, [this](const ServerInfo &info) {
        m_connected = true;
        m_loginRefused = false;
        m_serverInfo = info;
        Q_EMIT connected(info);
    });
    connect(m_worker, &DatabaseWorker::connectionLost, this, [this](const DbError &error) {
        m_connected = false;
        m_loginRefused = error.kind() == ErrorKind::Authentication;
        Q_EMIT connectionLost(error);
    });
    connect(m_worker, &DatabaseWorker::reconnectScheduled, this,
            &DatabaseSession::reconnectScheduled);
    connect(m_worker, &DatabaseWorker::resultReady, this,
            [this](quint64 id, const ResultSet &rows, qint64 elapsedMs) {
                m_lastRoundTripMs = elapsedMs;
                deliver(id, rows);
            });
    connect(m_worker, &DatabaseWorker::failed, this,
            [this](quint64 id, const DbError &error) { deliver(id, error); });
    connect(m_worker, &DatabaseWorker::standbyBehind, this, &DatabaseSession::onStandbyBehind);
    connect(m_worker, &DatabaseWorker::replayStatus, this, [this](const ReplayStatus &status) {
        m_replayStatus = status;
        if (status.onStandby && status.replayLsn >= m_commitLsn) {
            m_commitLsn = 0; // replayed: reads need not wait any more
            m_readsOnPrimary = false;
        }
        Q_EMIT replayStatusChanged(status);
    });
    m_workerThread.start();

    if (!m_usesStandby) {
        m_primary = m_worker;
        return;
    }
    // Reading from a standby (docs/architecture.md#reading-from-a-standby): actions on a
    // connection of their own to the primary.
    m_primaryThread.setObjectName(QStringLiteral("redrive-db-primary"));
    m_primary = new DatabaseWorker(db::primarySettings(m_settings));
    m_primary->moveToThread(&m_primaryThread);
    connect(&m_primaryThread, &QThread::finished, m_primary, &QObject::deleteLater);
    connect(m_primary, &DatabaseWorker::resultReady, this,
            [this](quint64 id, const ResultSet &rows, qint64) { deliver(id, rows); });
    connect(m_primary, &DatabaseWorker::failed, this,
            [this](quint64 id, const DbError &error) { deliver(id, error); });
    connect(m_primary, &DatabaseWorker::committed, this,
            [this](quint64 lsn) { m_commitLsn = std::max(m_commitLsn, lsn); });
    connect(m_primary, &DatabaseWorker::walPosition, this, [this](quint64 lsn) {
        const bool probe = ++m_replayPolls % kStandbyProbeEvery == 0;
        QMetaObject::invokeMethod(
            m_worker,
            [this, worker = m_worker, lsn, probe] {
                worker->readReplayStatus(lsn, probe);
                // The session outlives its workers' threads (~DatabaseSession waits for them).
                QMetaObject::invokeMethod(
                    this, [this] { m_replayPollOutstanding = false; }, Qt::QueuedConnection);
            },
            Qt::QueuedConnection);
        if (m_background && probe) // only to look for the standby again: its status is not shown
            QMetaObject::invokeMethod(
                m_background, [worker = m_background, lsn] { worker->readReplayStatus(lsn, true); },
                Qt::QueuedConnection);
    });
    m_primaryThread.start();
    m_replayTimer = new QTimer(this);
    m_replayTimer->setInterval(kReplayPollMs);
    connect(m_replayTimer, &QTimer::timeout, this, &DatabaseSession::pollReplay);
}

ConnectionSettings DatabaseSession::primarySettings() const
{
    return db::primarySettings(m_settings);
}

void DatabaseSession::setReplayPollInterval(int intervalMs)
{
    if (m_replayTimer)
        m_replayTimer->setInterval(intervalMs);
}

void DatabaseSession::pollReplay()
{
    // Skipped while the last measurement has not come back: behind a long action on the
    // primary, or a slow read on the read connection, ticks would otherwise pile up and run
    // one after another when it ends (docs/architecture.md#reading-from-a-standby).
    if (std::exchange(m_replayPollOutstanding, true))
        return;
    QMetaObject::invokeMethod(
        m_primary,
        [this, primary = m_primary] {
            if (!primary->readWalPosition())
                QMetaObject::invokeMethod(
                    this, [this] { m_replayPollOutstanding = false; }, Qt::QueuedConnection);
        },
        Qt::QueuedConnection);
}

void DatabaseSession::onStandbyBehind(quint64 requestId, const QByteArray &sql,
                                      const QueryParams &params)
{
    const auto it = m_pending.find(requestId);
    if (it == m_pending.end())
        return; // withdrawn meanwhile
    it->worker = m_primary;
    // The reads after it go to the primary at once, until the standby has replayed this
    // session's last action (the next replay measurement says so).
    m_readsOnPrimary = true;
    QMetaObject::invokeMethod(
        m_primary,
        [worker = m_primary, requestId, sql, params, epoch = m_primary->cancelEpoch()] {
            worker->execute(requestId, sql, params, epoch);
        },
        Qt::QueuedConnection);
    Q_EMIT readRoutedToPrimary();
}

DatabaseSession::BackgroundScope::BackgroundScope(DatabaseSession *session)
    : m_session(session)
{
    if (m_session)
        ++m_session->m_backgroundDepth;
}

DatabaseSession::BackgroundScope::~BackgroundScope()
{
    if (m_session)
        --m_session->m_backgroundDepth;
}

DatabaseSession::~DatabaseSession()
{
    if (!m_pending.isEmpty()) {
        // The worker threads are busy: stop their statements first.
        m_worker->cancelRunning();
        if (m_background)
            m_background->cancelRunning();
        if (m_primary != m_worker)
            m_primary->cancelRunning();
        for (DatabaseWorker *own : std::as_const(m_own))
            own->cancelRunning();
    }
    for (QFuture<void> &task : m_cancelTasks) // they use the workers, which go with their threads
        task.waitForFinished();
    QMetaObject::invokeMethod(m_worker, &DatabaseWorker::close, Qt::QueuedConnection);
    m_workerThread.quit();
    m_workerThread.wait();
    if (m_background) {
        QMetaObject::invokeMethod(m_background, &DatabaseWorker::close, Qt::QueuedConnection);
        m_backgroundThread.quit();
        m_backgroundThread.wait();
    }
    if (m_primary != m_worker) {
        QMetaObject::invokeMethod(m_primary, &DatabaseWorker::close, Qt::QueuedConnection);
        m_primaryThread.quit();
        m_primaryThread.wait();
    }
    for (DatabaseWorker *own : std::as_const(m_own))
        QMetaObject::invokeMethod(own, &DatabaseWorker::close, Qt::QueuedConnection);
    for (QThread *thread : std::as_const(m_ownThreads)) {
        thread->quit();
        thread->wait();
        delete thread;
    }
    if (m_listener) {
        QMetaObject::invokeMethod(m_listener, &NotificationListener::stop, Qt::QueuedConnection);
        m_listenerThread.quit();
        m_listenerThread.wait();
    }
}

void DatabaseSession::open()
{
    QMetaObject::invokeMethod(m_worker, &DatabaseWorker::open, Qt::QueuedConnection);
    if (m_primary != m_worker) {
        QMetaObject::invokeMethod(m_primary, &DatabaseWorker::open, Qt::QueuedConnection);
        m_replayTimer->start();
    }
}

DatabaseWorker *DatabaseSession::startWorker(QThread *thread, const QString &name,
                                             const ConnectionSettings &settings)
{
    // Its own connection, opened now with the settings in use (a password given after a refused
    // login included); it reconnects by itself like the interactive one. Its connection state is
    // not the session's: a request that finds it down fails with ErrorKind::Connection.
    thread->setObjectName(name);
    auto *worker = new DatabaseWorker(settings);
    worker->moveToThread(thread);
    connect(thread, &QThread::finished, worker, &QObject::deleteLater);
    connect(worker, &DatabaseWorker::resultReady, this,
            [this](quint64 id, const ResultSet &rows, qint64) { deliver(id, rows); });
    connect(worker, &DatabaseWorker::failed, this,
            [this](quint64 id, const DbError &error) { deliver(id, error); });
    connect(worker, &DatabaseWorker::standbyBehind, this, &DatabaseSession::onStandbyBehind);
    thread->start();
    QMetaObject::invokeMethod(worker, &DatabaseWorker::open, Qt::QueuedConnection);
    return worker;
}

DatabaseWorker *DatabaseSession::backgroundWorker()
{
    if (!m_background)
        m_background = startWorker(&m_backgroundThread, QStringLiteral("redrive-db-bg"),
                                   readSettings(m_settings));
    return m_background;
}

DatabaseWorker *DatabaseSession::ownWorker(QObject *context)
{
    if (DatabaseWorker *worker = m_own.value(context))
        return worker;
    auto *thread = new QThread;
    m_ownThreads.append(thread);
    // Named apart in pg_stat_activity: the backend that may hold a snapshot open for a while.
    // With a standby, on the primary: a transaction held open on a hot standby can be cancelled
    // by replay (a recovery conflict), and the pass must see this session's own actions.
    ConnectionSettings settings = m_usesStandby ? db::primarySettings(m_settings) : m_settings;
    settings.applicationName += QStringLiteral(" (own)");
    DatabaseWorker *worker = startWorker(thread, QStringLiteral("redrive-db-own"), settings);
    m_own.insert(context, worker);
    // Stopped when its context goes (below); one still running when the session ends is stopped
    // by the destructor.
    connect(thread, &QThread::finished, this, [this, thread] {
        if (m_ownThreads.removeOne(thread)) {
            thread->wait();
            delete thread;
        }
    });
    // The connection goes with its context (a transaction left open ends with it), and so does
    // the work the context left on it: its queued requests are dropped before they run and the
    // one running is cancelled on the server, as abortRequest() does. Otherwise a destroyed
    // list's frozen pass went on reading its cursor for seconds before the close was reached.
    connect(context, &QObject::destroyed, this, [this, context] {
        DatabaseWorker *gone = m_own.take(context);
        if (!gone)
            return;
        // A new cancel epoch: every request queued there fails unrun, whether or not it is still
        // pending here (one withdrawn with cancelRequest() is not).
        const quint64 running = gone->beginCancelEpoch();
        const auto erased = m_pending.removeIf(
            [gone](const QHash<quint64, Pending>::iterator &it) { return it->worker == gone; });
        // Then the connection is closed and the thread stopped, in the worker's thread; the
        // worker goes with its thread (deleteLater on finished). Told only once the cancel task
        // is done with the worker; the session's destructor waits for that task.
        const auto stop = [gone] {
            gone->close();
            QThread::currentThread()->quit();
        };
        if (running != 0) {
            sendCancel([gone, running, stop] {
                gone->cancelRequest(running, kCancelTimeoutMs);
                QMetaObject::invokeMethod(gone, stop, Qt::QueuedConnection);
            });
        } else {
            QMetaObject::invokeMethod(gone, stop, Qt::QueuedConnection);
        }
        if (erased > 0 && m_pending.isEmpty())
            Q_EMIT activityChanged(false);
    });
    return worker;
}

quint64 DatabaseSession::execute(const QByteArray &sql, const QueryParams &params, QObject *context,
                                 Callback done, Priority priority)
{
    if (priority == Priority::Default)
        priority = m_backgroundDepth > 0 ? Priority::Background : Priority::Interactive;
    // Until the session is connected (or after a refused login) everything goes the interactive
    // way, which knows the connection's state and reports it.
    DatabaseWorker *worker = m_worker;
    const bool own = priority == Priority::OwnConnection && context;
    if (priority == Priority::Background && m_connected)
        worker = backgroundWorker();
    else if (own)
        worker = ownWorker(context); // never the interactive one, even while disconnected
    // Reading from a standby: the one place that decides what must reach the primary
    // (docs/architecture.md#reading-from-a-standby). With one server m_primary is m_worker and
    // nothing changes. An own connection is never rerouted: it holds a transaction across
    // requests (a frozen pass), and it is on the primary already when a standby is in use.
    const bool onPrimary = m_usesStandby && sqlRunsOnPrimary(sql);
    if (!own && (onPrimary || (m_readsOnPrimary && m_commitLsn != 0)))
        worker = m_primary; // an action, or a read while the standby is behind this session's last
    const quint64 minReplayLsn = m_usesStandby && !onPrimary && !own ? m_commitLsn : 0;
    const quint64 id = m_nextRequestId++;
    m_pending.insert(id, Pending { context, std::move(done), worker });
    if (m_pending.size() == 1)
        Q_EMIT activityChanged(true);
    QMetaObject::invokeMethod(
        worker,
        [worker, id, sql, params, epoch = worker->cancelEpoch(), minReplayLsn, onPrimary] {
            worker->execute(id, sql, params, epoch, minReplayLsn, onPrimary);
        },
        Qt::QueuedConnection);
    return id;
}

void DatabaseSession::cancelRequest(quint64 requestId)
{
    const auto it = m_pending.find(requestId);
    if (it == m_pending.end())
        return;
    DatabaseWorker *worker = it->worker;
    m_pending.erase(it);
    // Queued, it is dropped before it runs. Running, it is left to finish unseen: PQcancel
    // cancels whatever runs on the connection when it arrives, which could be the newer request
    // queued right behind it.
    worker->dropRequest(requestId);
    if (m_pending.isEmpty())
        Q_EMIT activityChanged(false);
}

void DatabaseSession::abortRequest(quint64 requestId)
{
    const auto it = m_pending.constFind(requestId);
    if (it == m_pending.cend())
        return;
    DatabaseWorker *worker = it->worker;
    const bool own = std::find(m_own.cbegin(), m_own.cend(), worker) != m_own.cend();
    m_pending.erase(it);
    const bool running = worker->dropRequest(requestId);
    if (m_pending.isEmpty())
        Q_EMIT activityChanged(false);
    if (!own || !running)
        return; // shared (see cancelRequest()), or dropped before it runs
    sendCancel([worker, requestId] { worker->cancelRequest(requestId, kCancelTimeoutMs); });
}

void DatabaseSession::cancelRunning()
{
    if (m_pending.isEmpty())
        return;
    // PQcancel opens a connection and waits for it: never on the GUI thread.
    sendCancel([worker = m_worker, background = m_background,
                primary = m_primary != m_worker ? m_primary : nullptr] {
        worker->cancelRunning();
        if (background)
            background->cancelRunning();
        if (primary)
            primary->cancelRunning();
    });
}

void DatabaseSession::cancelAll()
{
    if (m_pending.isEmpty())
        return;
    const quint64 running = m_worker->beginCancelEpoch();
    const quint64 runningInBackground = m_background ? m_background->beginCancelEpoch() : 0;
    DatabaseWorker *primary = m_primary != m_worker ? m_primary : nullptr;
    const quint64 runningOnPrimary = primary ? primary->beginCancelEpoch() : 0;
    // Own connections too (a frozen pass being read): their owners end their transactions when
    // their requests fail with ErrorKind::Canceled.
    QList<std::pair<DatabaseWorker *, quint64>> runningOwn;
    for (DatabaseWorker *own : std::as_const(m_own)) {
        if (const quint64 id = own->beginCancelEpoch())
            runningOwn.append({ own, id });
    }
    if (running == 0 && runningInBackground == 0 && runningOnPrimary == 0 && runningOwn.isEmpty())
        return; // between two statements: the queued ones are dropped before they run
    sendCancel([worker = m_worker, background = m_background, primary, running, runningInBackground,
                runningOnPrimary, runningOwn] {
        if (running != 0)
            worker->cancelRequest(running, kCancelTimeoutMs);
        if (runningInBackground != 0)
            background->cancelRequest(runningInBackground, kCancelTimeoutMs);
        if (runningOnPrimary != 0)
            primary->cancelRequest(runningOnPrimary, kCancelTimeoutMs);
        for (const auto &[own, id] : runningOwn)
            own->cancelRequest(id, kCancelTimeoutMs);
    });
}

void DatabaseSession::listen(const QStringList &channels)
{
    if (m_listener)
        return;
    m_listenerThread.setObjectName(QStringLiteral("redrive-listen"));
    // LISTEN works on the primary only (docs/architecture.md#reading-from-a-standby).
    m_listener = new NotificationListener(db::primarySettings(m_settings), channels);
    m_listener->moveToThread(&m_listenerThread);
    connect(&m_listenerThread, &QThread::finished, m_listener, &QObject::deleteLater);
    connect(m_listener, &NotificationListener::notified, this, &DatabaseSession::notified);
    connect(m_listener, &NotificationListener::listening, this, [this] {
        m_listening = true;
        Q_EMIT listening();
    });
    connect(m_listener, &NotificationListener::connectionLost, this, [this](const DbError &error) {
        m_listening = false;
        Q_EMIT listenerLost(error);
    });
    if (m_heartbeatIntervalMs > 0)
        m_listener->setHeartbeat(m_heartbeatIntervalMs, m_heartbeatTimeoutMs);
    m_listenerThread.start();
    QMetaObject::invokeMethod(m_listener, &NotificationListener::start, Qt::QueuedConnection);
}

void DatabaseSession::setListenerHeartbeat(int intervalMs, int timeoutMs)
{
    m_heartbeatIntervalMs = intervalMs;
    m_heartbeatTimeoutMs = timeoutMs;
}

void DatabaseSession::retryWithPassword(const QString &password)
{
    m_settings.password = password;
    m_loginRefused = false;
    for (DatabaseWorker *worker :
         { m_worker, m_background, m_primary != m_worker ? m_primary : nullptr }) {
        if (worker)
            QMetaObject::invokeMethod(
                worker, [worker, password] { worker->retryWithPassword(password); },
                Qt::QueuedConnection);
    }
}

void DatabaseSession::sendCancel(std::function<void()> cancel)
{
    m_cancelTasks.removeIf([](const QFuture<void> &task) { return task.isFinished(); });
    m_cancelTasks.append(QtConcurrent::run(std::move(cancel)));
}

void DatabaseSession::deliver(quint64 requestId, const DbExpected<ResultSet> &outcome)
{
    const auto it = m_pending.find(requestId);
    if (it == m_pending.end())
        return; // withdrawn, or its context's connection closed with it: nobody waits for it
    const Pending pending = *it;
    m_pending.erase(it);
    if (pending.context && pending.done)
        pending.done(outcome);
    if (m_pending.isEmpty())
        Q_EMIT activityChanged(false);
}

} // namespace redrive::db
