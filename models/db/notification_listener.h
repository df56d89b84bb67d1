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
/// libpq "Asynchronous Notification"). Lives in its own thread. A closed socket is noticed at
/// once; a server or network that stops answering without closing it (a paused server, a cut
/// cable) by a heartbeat: every heartbeatIntervalMs() an idle listener sends `SELECT 1`, and one
/// not answered within heartbeatTimeoutMs() drops the connection. After a lost connection it
/// reports it, reconnects with capped exponential backoff and jitter and LISTENs again;
/// notifications sent while it was away are lost, so a receiver re-reads when listening() follows
/// connectionLost() (docs/architecture.md#live-updates).
class NotificationListener : public QObject
{
    Q_OBJECT
public:
    NotificationListener(ConnectionSettings settings, QStringList channels,
                         QObject *parent = nullptr);
    ~NotificationListener() override;

    /// The heartbeat: an idle connection is probed every `intervalMs` and dropped when a probe is
    /// not answered within `timeoutMs` (defaults kHeartbeatIntervalMs, kHeartbeatTimeoutMs).
    /// Call before start().
    void setHeartbeat(int intervalMs, int timeoutMs);
    static constexpr int kHeartbeatIntervalMs = 10000;
    static constexpr int kHeartbeatTimeoutMs = 5000;

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
    void beat();

    ConnectionSettings m_settings;
    QStringList m_channels;
    PgConnection m_connection;
    QSocketNotifier *m_notifier = nullptr;
    QTimer *m_reconnectTimer = nullptr;
    QTimer *m_heartbeatTimer = nullptr;
    int m_heartbeatIntervalMs = kHeartbeatIntervalMs;
    int m_heartbeatTimeoutMs = kHeartbeatTimeoutMs;
    qint64 m_lastHeardMs = 0; ///< when the server was last heard from (steady clock)
    qint64 m_probeSentAtMs = -1; ///< when the unanswered probe went out (steady clock), or -1
    int m_reconnectAttempt = 0;
    bool m_stopped = false;
};

} // namespace redrive::db
