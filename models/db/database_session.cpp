// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/db/database_session.h"

#include "models/db/database_worker.h"
#include "models/db/meta_types.h"
#include "models/db/notification_listener.h"

#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

namespace redrive::db {

DatabaseSession::DatabaseSession(ConnectionSettings settings, QObject *parent)
    : QObject(parent)
    , m_settings(std::move(settings))
{
    registerMetaTypes();
    m_workerThread.setObjectName(QStringLiteral("redrive-db"));
    m_worker = new DatabaseWorker(m_settings);
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
    m_workerThread.start();
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
        for (DatabaseWorker *own : std::as_const(m_own))
            own->cancelRunning();
    }
    m_cancelTask.waitForFinished(); // it uses the workers, which go with their threads
    for (QFuture<void> &task : m_withdrawTasks)
        task.waitForFinished();
    QMetaObject::invokeMethod(m_worker, &DatabaseWorker::close, Qt::QueuedConnection);
    m_workerThread.quit();
    m_workerThread.wait();
    if (m_background) {
        QMetaObject::invokeMethod(m_background, &DatabaseWorker::close, Qt::QueuedConnection);
        m_backgroundThread.quit();
        m_backgroundThread.wait();
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
    thread->start();
    QMetaObject::invokeMethod(worker, &DatabaseWorker::open, Qt::QueuedConnection);
    return worker;
}

DatabaseWorker *DatabaseSession::backgroundWorker()
{
    if (!m_background)
        m_background
            = startWorker(&m_backgroundThread, QStringLiteral("redrive-db-bg"), m_settings);
    return m_background;
}

DatabaseWorker *DatabaseSession::ownWorker(QObject *context)
{
    if (DatabaseWorker *worker = m_own.value(context))
        return worker;
    auto *thread = new QThread;
    m_ownThreads.append(thread);
    // Named apart in pg_stat_activity: the backend that may hold a snapshot open for a while.
    ConnectionSettings settings = m_settings;
    settings.applicationName += QStringLiteral(" (own)");
    DatabaseWorker *worker = startWorker(thread, QStringLiteral("redrive-db-own"), settings);
    m_own.insert(context, worker);
    // The connection goes with its context (a transaction left open ends with it).
    connect(context, &QObject::destroyed, this, [this, context] {
        if (DatabaseWorker *gone = m_own.take(context))
            QMetaObject::invokeMethod(gone, &DatabaseWorker::close, Qt::QueuedConnection);
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
    if (priority == Priority::Background && m_connected)
        worker = backgroundWorker();
    else if (priority == Priority::OwnConnection && context)
        worker = ownWorker(context); // never the interactive one, even while disconnected
    const quint64 id = m_nextRequestId++;
    m_pending.insert(id, Pending { context, std::move(done), worker });
    if (m_pending.size() == 1)
        Q_EMIT activityChanged(true);
    QMetaObject::invokeMethod(
        worker,
        [worker, id, sql, params, epoch = worker->cancelEpoch()] {
            worker->execute(id, sql, params, epoch);
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
    m_withdrawTasks.removeIf([](const QFuture<void> &task) { return task.isFinished(); });
    m_withdrawTasks.append(QtConcurrent::run(
        [worker, requestId] { worker->cancelRequest(requestId, kCancelTimeoutMs); }));
}

void DatabaseSession::cancelRunning()
{
    if (m_pending.isEmpty())
        return;
    // PQcancel opens a connection and waits for it: never on the GUI thread.
    m_cancelTask = QtConcurrent::run([worker = m_worker, background = m_background] {
        worker->cancelRunning();
        if (background)
            background->cancelRunning();
    });
}

void DatabaseSession::cancelAll()
{
    if (m_pending.isEmpty())
        return;
    const quint64 running = m_worker->beginCancelEpoch();
    const quint64 runningInBackground = m_background ? m_background->beginCancelEpoch() : 0;
    // Own connections too (a frozen pass being read): their owners end their transactions when
    // their requests fail with ErrorKind::Canceled.
    QList<std::pair<DatabaseWorker *, quint64>> runningOwn;
    for (DatabaseWorker *own : std::as_const(m_own)) {
        if (const quint64 id = own->beginCancelEpoch())
            runningOwn.append({ own, id });
    }
    if (running == 0 && runningInBackground == 0 && runningOwn.isEmpty())
        return; // between two statements: the queued ones are dropped before they run
    m_cancelTask = QtConcurrent::run(
        [worker = m_worker, background = m_background, running, runningInBackground, runningOwn] {
            if (running != 0)
                worker->cancelRequest(running, kCancelTimeoutMs);
            if (runningInBackground != 0)
                background->cancelRequest(runningInBackground, kCancelTimeoutMs);
            for (const auto &[own, id] : runningOwn)
                own->cancelRequest(id, kCancelTimeoutMs);
        });
}

void DatabaseSession::listen(const QStringList &channels)
{
    if (m_listener)
        return;
    m_listenerThread.setObjectName(QStringLiteral("redrive-listen"));
    m_listener = new NotificationListener(m_settings, channels);
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
    for (DatabaseWorker *worker : { m_worker, m_background }) {
        if (worker)
            QMetaObject::invokeMethod(
                worker, [worker, password] { worker->retryWithPassword(password); },
                Qt::QueuedConnection);
    }
}

void DatabaseSession::deliver(quint64 requestId, const DbExpected<ResultSet> &outcome)
{
    const Pending pending = m_pending.take(requestId);
    if (pending.context && pending.done)
        pending.done(outcome);
    if (m_pending.isEmpty())
        Q_EMIT activityChanged(false);
}

} // namespace redrive::db
