// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/db/notification_listener.h"

#include "models/db/database_worker.h"
#include "models/logging.h"

#include <QSocketNotifier>
#include <QTimer>

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

void NotificationListener::start()
{
    m_stopped = false;
    if (!m_reconnectTimer) {
        m_reconnectTimer = new QTimer(this);
        m_reconnectTimer->setSingleShot(true);
        connect(m_reconnectTimer, &QTimer::timeout, this, &NotificationListener::connectNow);
    }
    connectNow();
}

void NotificationListener::stop()
{
    m_stopped = true;
    if (m_reconnectTimer)
        m_reconnectTimer->stop();
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
    Q_EMIT listening();
}

void NotificationListener::readSocket()
{
    auto notifications = m_connection.takeNotifications();
    if (!notifications) {
        drop(notifications.error());
        return;
    }
    for (const Notification &n : std::as_const(notifications.value()))
        Q_EMIT notified(n);
}

void NotificationListener::drop(const DbError &error)
{
    delete m_notifier;
    m_notifier = nullptr;
    m_connection = PgConnection();
    qCInfo(lcDb) << "listener lost its connection:" << error.summary();
    Q_EMIT connectionLost(error);
    // A refused login is not retried: the same password would be refused again.
    if (m_stopped || !m_reconnectTimer || error.kind() == ErrorKind::Authentication)
        return;
    m_reconnectTimer->start(reconnectDelayMs(++m_reconnectAttempt));
}

} // namespace redrive::db
