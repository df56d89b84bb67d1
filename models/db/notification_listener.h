// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/connection_settings.h"
#include "models/db/db_error.h"
#include "models/db/pg_connection.h"

#include <QObject>
#include <QStringList>

class QSocketNotifier;
class QTimer;

namespace redrive::db {

/// LISTENs on a dedicated connection and delivers NOTIFY messages as they arrive, woken by a
/// QSocketNotifier on PQsocket() rather than by polling (docs/architecture.md#threading;
/// libpq "Asynchronous Notification"). Lives in its own thread. After a lost connection it reports
/// it, reconnects with backoff and LISTENs again; notifications sent while it was away are lost, so
/// a receiver should refresh when listening() follows connectionLost().
class NotificationListener : public QObject
{
    Q_OBJECT
public:
    NotificationListener(ConnectionSettings settings, QStringList channels,
                         QObject *parent = nullptr);
    ~NotificationListener() override;

public Q_SLOTS:
    void start();
    void stop();

Q_SIGNALS:
    /// Connected and LISTENing on every channel.
    void listening();
    void notified(const redrive::db::Notification &notification);
    void connectionLost(const redrive::db::DbError &error);

private:
    void connectNow();
    void readSocket();
    void drop(const DbError &error);

    ConnectionSettings m_settings;
    QStringList m_channels;
    PgConnection m_connection;
    QSocketNotifier *m_notifier = nullptr;
    QTimer *m_reconnectTimer = nullptr;
    int m_reconnectAttempt = 0;
    bool m_stopped = false;
};

} // namespace redrive::db
