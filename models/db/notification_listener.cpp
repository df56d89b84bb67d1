// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/db/notification_listener.h"

#include "models/db/database_worker.h"
#include "models/logging.h"

#include <QDeadlineTimer>
#include <QSocketNotifier>
#include <QTimer>
#include <libpq-fe.h>

namespace redrive::db {

NotificationListener::NotificationListener(ConnectionSettings settings, QStringList channels,
                                           QObject *parent)
    : QObject(parent)
    , m_settings(std::move(settings))
    , m_channels(std::move(channels))
{
    if (m_settings.applicationName == QLatin1String("redrive"))
        m_settings.applicationName = QStringLiteral("redrive-listener");
}

NotificationListener::~NotificationListener() = default;

namespace {

qint64 steadyNowMs()
{
    return QDeadlineTimer::current().deadline();
}

} // namespace

void NotificationListener::setHeartbeat(int intervalMs, int timeoutMs)
{
    m_heartbeatIntervalMs = std::max(50, intervalMs);
    m_heartbeatTimeoutMs = std::max(50, timeoutMs);
}

void NotificationListener::start()
{
    m_stopped = false;
    if (!m_reconnectTimer) {
        m_reconnectTimer = new QTimer(this);
        m_reconnectTimer->setSingleShot(true);
        connect(m_reconnectTimer, &QTimer::timeout, this, &NotificationListener::connectNow);
    }
    if (!m_heartbeatTimer) {
        m_heartbeatTimer = new QTimer(this);
        connect(m_heartbeatTimer, &QTimer::timeout, this, &NotificationListener::beat);
    }
    // Ticks often enough to notice an unanswered probe within its timeout.
    m_heartbeatTimer->setInterval(std::min(m_heartbeatIntervalMs, m_heartbeatTimeoutMs) / 2);
    connectNow();
}

void NotificationListener::stop()
{
    m_stopped = true;
    if (m_reconnectTimer)
        m_reconnectTimer->stop();
    if (m_heartbeatTimer)
        m_heartbeatTimer->stop();
    delete m_notifier;
    m_notifier = nullptr;
    m_connection = PgConnection();
}

void NotificationListener::connectNow()
{
    if (m_stopped)
        return;
    auto opened = PgConnection::open(m_settings);
    if (!opened) {
        drop(opened.error());
        return;
    }
    m_connection = std::move(opened.value());
    for (const QString &channel : std::as_const(m_channels)) {
        // LISTEN takes an identifier, not a value, so it cannot be a $n parameter; the channel
        // names are the console's own constants and are quoted with PQescapeIdentifier anyway.
        auto listened = m_connection.exec("LISTEN " + m_connection.quoteIdentifier(channel));
        if (!listened) {
            drop(listened.error());
            return;
        }
    }
    m_notifier = new QSocketNotifier(qintptr(m_connection.socket()), QSocketNotifier::Read, this);
    connect(m_notifier, &QSocketNotifier::activated, this, &NotificationListener::readSocket);
    m_reconnectAttempt = 0;
    m_probeSentAtMs = -1;
    m_lastHeardMs = steadyNowMs();
    if (m_heartbeatTimer)
        m_heartbeatTimer->start();
    Q_EMIT listening();
}

void NotificationListener::readSocket()
{
    auto notifications = m_connection.takeNotifications();
    if (!notifications) {
        drop(notifications.error());
        return;
    }
    m_lastHeardMs = steadyNowMs();
    // The heartbeat's answer, as far as it arrived (PQconsumeInput above took it off the
    // socket): PQgetResult never blocks while PQisBusy() is 0, and NULL ends the answer.
    while (m_probeSentAtMs >= 0 && PQisBusy(m_connection.handle()) == 0) {
        PGresult *result = PQgetResult(m_connection.handle());
        if (!result)
            m_probeSentAtMs = -1;
        PQclear(result);
    }
    for (const Notification &n : std::as_const(notifications.value()))
        Q_EMIT notified(n);
}

void NotificationListener::beat()
{
    if (!m_connection.isOpen())
        return;
    const qint64 now = steadyNowMs();
    if (m_probeSentAtMs >= 0) {
        if (now - m_probeSentAtMs >= m_heartbeatTimeoutMs)
            drop(DbError(ErrorKind::Connection,
                         QStringLiteral("the server did not answer the listener's heartbeat "
                                        "within %1 ms")
                             .arg(m_heartbeatTimeoutMs)));
        return;
    }
    if (now - m_lastHeardMs < m_heartbeatIntervalMs)
        return;
    // A constant statement with no parameters and no input: nothing to bind.
    if (PQsendQuery(m_connection.handle(), "SELECT 1") == 0) {
        drop(DbError::fromConnection(m_connection.handle()));
        return;
    }
    PQflush(m_connection.handle());
    m_probeSentAtMs = now;
}

void NotificationListener::drop(const DbError &error)
{
    delete m_notifier;
    m_notifier = nullptr;
    if (m_heartbeatTimer)
        m_heartbeatTimer->stop();
    m_probeSentAtMs = -1;
    m_connection = PgConnection();
    qCInfo(lcDb) << "listener lost its connection:" << error.summary();
    Q_EMIT connectionLost(error);
    // A refused login is not retried: the same password would be refused again.
    if (m_stopped || !m_reconnectTimer || error.kind() == ErrorKind::Authentication)
        return;
    m_reconnectTimer->start(reconnectDelayMs(++m_reconnectAttempt));
}

} // namespace redrive::db
