// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/db/database_session.h"

#include "models/db/database_worker.h"
#include "models/db/meta_types.h"
#include "models/db/notification_listener.h"

#include <QtConcurrent/QtConcurrentRun>

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

DatabaseSession::~DatabaseSession()
{
    if (!m_pending.isEmpty())
        m_worker->cancelRunning(); // the worker thread is busy: stop its statement first
    m_cancelTask.waitForFinished(); // it uses the worker, which goes with its thread
    QMetaObject::invokeMethod(m_worker, &DatabaseWorker::close, Qt::QueuedConnection);
    m_workerThread.quit();
    m_workerThread.wait();
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

quint64 DatabaseSession::execute(const QByteArray &sql, const QueryParams &params, QObject *context,
                                 Callback done)
{
    const quint64 id = m_nextRequestId++;
    m_pending.insert(id, Pending { context, std::move(done) });
    if (m_pending.size() == 1)
        Q_EMIT activityChanged(true);
    QMetaObject::invokeMethod(
        m_worker,
        [worker = m_worker, id, sql, params, epoch = m_worker->cancelEpoch()] {
            worker->execute(id, sql, params, epoch);
        },
        Qt::QueuedConnection);
    return id;
}

void DatabaseSession::cancelRunning()
{
    if (m_pending.isEmpty())
        return;
    // PQcancel opens a connection and waits for it: never on the GUI thread.
    m_cancelTask = QtConcurrent::run([worker = m_worker] { worker->cancelRunning(); });
}

void DatabaseSession::cancelAll()
{
    if (m_pending.isEmpty())
        return;
    const quint64 running = m_worker->beginCancelEpoch();
    if (running == 0)
        return; // between two statements: the queued ones are dropped before they run
    m_cancelTask = QtConcurrent::run(
        [worker = m_worker, running] { worker->cancelRequest(running, kCancelTimeoutMs); });
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
    QMetaObject::invokeMethod(
        m_worker, [worker = m_worker, password] { worker->retryWithPassword(password); },
        Qt::QueuedConnection);
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
