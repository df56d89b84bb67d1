// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/db/database_worker.h"

#include "models/logging.h"

#include <QElapsedTimer>
#include <QRandomGenerator>
#include <QScopeGuard>
#include <QThread>
#include <QTimer>
#include <algorithm>

namespace redrive::db {

int reconnectDelayMs(int attempt, int baseMs, int capMs)
{
    const int exponent = std::clamp(attempt - 1, 0, 20);
    const qint64 ceiling = std::min<qint64>(capMs, qint64(baseMs) << exponent);
    const qint64 floor = baseMs / 2;
    return int(floor + QRandomGenerator::global()->bounded(std::max<qint64>(1, ceiling - floor)));
}

DatabaseWorker::DatabaseWorker(ConnectionSettings settings, QObject *parent)
    : QObject(parent)
    , m_settings(std::move(settings))
{ }

DatabaseWorker::~DatabaseWorker() = default;

void DatabaseWorker::cancelRunning()
{
    CancelHandle handle;
    {
        std::lock_guard lock(m_cancelMutex);
        handle = m_cancel;
    }
    QString message;
    if (!handle.cancel(&message))
        qCWarning(lcDb) << "cancel request not sent:" << message;
}

quint64 DatabaseWorker::beginCancelEpoch()
{
    std::lock_guard lock(m_cancelMutex);
    ++m_cancelEpoch;
    return m_running;
}

bool DatabaseWorker::cancelRequest(quint64 requestId, int timeoutMs)
{
    QElapsedTimer clock;
    clock.start();
    {
        std::lock_guard lock(m_cancelMutex);
        if (m_running != requestId)
            return true;
        ++m_cancelling;
    }
    const auto done = qScopeGuard([this] {
        {
            std::lock_guard lock(m_cancelMutex);
            --m_cancelling;
        }
        m_cancelChanged.notify_all();
    });
    while (true) {
        CancelHandle handle;
        {
            std::lock_guard lock(m_cancelMutex);
            if (m_running != requestId)
                return true;
            handle = m_cancel;
        }
        QString message;
        if (!handle.cancel(&message))
            qCWarning(lcDb) << "cancel request not sent:" << message;
        if (clock.elapsed() >= timeoutMs)
            return false;
        std::unique_lock lock(m_cancelMutex);
        if (m_cancelChanged.wait_for(lock, std::chrono::milliseconds(100),
                                     [this, requestId] { return m_running != requestId; }))
            return true;
    }
}

bool DatabaseWorker::dropRequest(quint64 requestId)
{
    std::lock_guard lock(m_cancelMutex);
    if (m_running == requestId)
        return true;
    m_dropped.insert(requestId);
    return false;
}

void DatabaseWorker::open()
{
    m_closed = false;
    if (!m_reconnectTimer) {
        m_reconnectTimer = new QTimer(this);
        m_reconnectTimer->setSingleShot(true);
        connect(m_reconnectTimer, &QTimer::timeout, this, &DatabaseWorker::connectNow);
    }
    connectNow();
}

void DatabaseWorker::connectNow()
{
    if (m_closed)
        return;
    Q_EMIT connecting();
    auto opened = PgConnection::open(m_settings);
    if (!opened) {
        qCInfo(lcDb) << "connect failed:" << opened.error().summary();
        m_loginRefused = opened.error().kind() == ErrorKind::Authentication;
        Q_EMIT connectionLost(opened.error());
        if (!m_loginRefused)
            scheduleReconnect();
        return;
    }
    m_loginRefused = false;
    m_connection = std::move(opened.value());
    {
        std::lock_guard lock(m_cancelMutex);
        m_cancel = m_connection.cancelHandle();
    }
    m_reconnectAttempt = 0;
    Q_EMIT connected(m_connection.serverInfo());
}

void DatabaseWorker::dropConnection(const DbError &error)
{
    {
        std::lock_guard lock(m_cancelMutex);
        m_cancel = CancelHandle();
    }
    m_connection = PgConnection();
    Q_EMIT connectionLost(error);
    scheduleReconnect();
}

void DatabaseWorker::scheduleReconnect()
{
    if (m_closed || m_loginRefused || !m_reconnectTimer || m_reconnectTimer->isActive())
        return;
    ++m_reconnectAttempt;
    const int delay = reconnectDelayMs(m_reconnectAttempt);
    Q_EMIT reconnectScheduled(m_reconnectAttempt, delay);
    m_reconnectTimer->start(delay);
}

void DatabaseWorker::execute(quint64 requestId, const QByteArray &sql, const QueryParams &params,
                             quint64 epoch)
{
    {
        std::unique_lock lock(m_cancelMutex);
        // A cancel still being sent for the request before this one must not reach this one.
        m_cancelChanged.wait(lock, [this] { return m_cancelling == 0; });
        if (m_dropped.remove(requestId)) {
            Q_EMIT failed(requestId,
                          DbError(ErrorKind::Canceled, QStringLiteral("obsolete before it ran")));
            return;
        }
        if (epoch < m_cancelEpoch.load()) {
            Q_EMIT failed(requestId,
                          DbError(ErrorKind::Canceled, QStringLiteral("canceled before it ran")));
            return;
        }
        m_running = requestId;
    }
    const auto notRunning = qScopeGuard([this] {
        {
            std::lock_guard lock(m_cancelMutex);
            m_running = 0;
        }
        m_cancelChanged.notify_all();
    });
    if (!m_connection.isHealthy()) {
        Q_EMIT failed(
            requestId,
            m_loginRefused
                ? DbError(ErrorKind::Authentication,
                          QStringLiteral("not connected: the server refused the login"))
                : DbError(ErrorKind::Connection, QStringLiteral("not connected; reconnecting")));
        return;
    }
    QElapsedTimer clock;
    clock.start();
    auto result = m_connection.exec(sql, params);
    if (result) {
        Q_EMIT resultReady(requestId, result.value(), clock.elapsed());
        return;
    }
    const DbError error = result.error();
    Q_EMIT failed(requestId, error);
    if (error.kind() == ErrorKind::Connection || !m_connection.isHealthy())
        dropConnection(error);
}

void DatabaseWorker::retryWithPassword(const QString &password)
{
    m_settings.password = password;
    if (m_reconnectTimer)
        m_reconnectTimer->stop();
    m_reconnectAttempt = 0;
    m_loginRefused = false;
    if (m_connection.isHealthy())
        return; // connected: the new password serves the next reconnect
    if (!m_reconnectTimer)
        open();
    else
        connectNow();
}

void DatabaseWorker::close()
{
    m_closed = true;
    if (m_reconnectTimer)
        m_reconnectTimer->stop();
    std::lock_guard lock(m_cancelMutex);
    m_cancel = CancelHandle();
    m_connection = PgConnection();
}

} // namespace redrive::db
