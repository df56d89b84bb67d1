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
    adopt(std::move(opened.value()));
    m_reconnectAttempt = 0;
    Q_EMIT connected(m_serverInfo);
}

void DatabaseWorker::adopt(PgConnection connection)
{
    m_connection = std::move(connection);
    m_serverInfo = m_connection.serverInfo();
    m_replayedLsn = 0;
    std::lock_guard lock(m_cancelMutex);
    m_cancel = m_connection.cancelHandle();
}

bool DatabaseWorker::prefersStandby() const
{
    return m_settings.targetSessionAttrs == QLatin1String("prefer-standby");
}

void DatabaseWorker::dropConnection(const DbError &error)
{
    {
        std::lock_guard lock(m_cancelMutex);
        m_cancel = CancelHandle();
    }
    const bool wasStandby = m_serverInfo.hotStandby;
    m_connection = PgConnection();
    m_serverInfo = ServerInfo();
    // A read connection whose standby went away falls back to the primary at once
    // (docs/architecture.md#reading-from-a-standby): prefer-standby takes the primary when no
    // standby answers. Only when that fails too is the connection lost.
    if (wasStandby && prefersStandby() && !m_closed) {
        auto opened = PgConnection::open(m_settings);
        if (opened) {
            qCInfo(lcDb) << "the standby went away; reading from" << opened->serverInfo().host;
            adopt(std::move(opened.value()));
            Q_EMIT connected(m_serverInfo);
            return;
        }
    }
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
                             quint64 epoch, quint64 minReplayLsn, bool reportCommit)
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
    if (minReplayLsn != 0 && m_serverInfo.hotStandby && !waitForReplay(minReplayLsn)) {
        if (!m_connection.isHealthy()) {
            Q_EMIT failed(
                requestId,
                DbError(ErrorKind::Connection, QStringLiteral("not connected; reconnecting")));
            return;
        }
        if (m_serverInfo.hotStandby) {
            Q_EMIT standbyBehind(requestId, sql, params);
            return;
        }
        // The standby went away while we waited and dropConnection() moved to the primary,
        // which has every commit: run it here.
    }
    QElapsedTimer clock;
    clock.start();
    auto result = m_connection.exec(sql, params);
    if (!result && m_serverInfo.hotStandby && prefersStandby()
        && (result.error().kind() == ErrorKind::Connection || !m_connection.isHealthy())) {
        // A read on a standby that went away: fall back to the primary and read there once (a
        // read is safe to repeat; an action never runs here, see DatabaseSession::execute()).
        dropConnection(result.error());
        if (!m_connection.isHealthy()) {
            Q_EMIT failed(requestId, result.error());
            return;
        }
        clock.restart();
        result = m_connection.exec(sql, params);
    }
    if (result) {
        if (reportCommit) {
            auto lsn = m_connection.exec("SELECT pg_catalog.pg_current_wal_insert_lsn()::text");
            if (lsn && lsn->rowCount() == 1)
                Q_EMIT committed(parseLsn(lsn->text(0, 0)));
        }
        Q_EMIT resultReady(requestId, result.value(), clock.elapsed());
        return;
    }
    const DbError error = result.error();
    Q_EMIT failed(requestId, error);
    if (error.kind() == ErrorKind::Connection || !m_connection.isHealthy())
        dropConnection(error);
}

bool DatabaseWorker::waitForReplay(quint64 lsn)
{
    if (m_replayedLsn >= lsn)
        return true;
    QElapsedTimer clock;
    clock.start();
    while (true) {
        auto replayed = m_connection.exec("SELECT pg_catalog.pg_last_wal_replay_lsn()::text");
        if (!replayed) {
            if (!m_connection.isHealthy())
                dropConnection(replayed.error());
            return false;
        }
        m_replayedLsn = std::max(m_replayedLsn, parseLsn(replayed->text(0, 0)));
        if (m_replayedLsn >= lsn)
            return true;
        if (clock.elapsed() >= kReadYourWritesWaitMs)
            return false;
        QThread::msleep(kReplayPollStepMs);
    }
}

bool DatabaseWorker::readWalPosition()
{
    if (!m_connection.isHealthy())
        return false;
    auto lsn = m_connection.exec("SELECT pg_catalog.pg_current_wal_lsn()::text");
    if (lsn && lsn->rowCount() == 1) {
        Q_EMIT walPosition(parseLsn(lsn->text(0, 0)));
        return true;
    }
    if (!m_connection.isHealthy())
        dropConnection(lsn ? DbError(ErrorKind::Connection, QStringLiteral("connection lost"))
                           : lsn.error());
    return false;
}

void DatabaseWorker::readReplayStatus(quint64 primaryLsn, bool probe)
{
    if (!m_connection.isHealthy())
        return;
    if (!m_serverInfo.hotStandby && prefersStandby() && probe) {
        // On the primary because the standby was away: is it back? A short connect timeout
        // (unless the string or PGCONNECT_TIMEOUT sets one), since reads wait meanwhile.
        ConnectionSettings probeSettings = standbyOnlySettings(m_settings);
        probeSettings.connectTimeoutSeconds = 2;
        auto opened = PgConnection::open(probeSettings);
        if (opened) {
            qCInfo(lcDb) << "the standby is back; reading from" << opened->serverInfo().host;
            adopt(std::move(opened.value()));
            Q_EMIT connected(m_serverInfo);
        }
    }
    ReplayStatus status;
    status.primaryLsn = primaryLsn;
    if (!m_serverInfo.hotStandby) {
        Q_EMIT replayStatus(status);
        return;
    }
    auto rows = m_connection.exec("SELECT pg_catalog.pg_last_wal_replay_lsn()::text,"
                                  " extract(epoch FROM pg_catalog.now() - "
                                  "pg_catalog.pg_last_xact_replay_timestamp())::float8,"
                                  " pg_catalog.pg_is_wal_replay_paused()");
    if (!rows) {
        if (!m_connection.isHealthy())
            dropConnection(rows.error());
        return;
    }
    status.onStandby = true;
    status.replayLsn = parseLsn(rows->text(0, 0));
    m_replayedLsn = std::max(m_replayedLsn, status.replayLsn);
    status.replayPaused = rows->text(0, 2) == QLatin1String("t");
    if (primaryLsn > status.replayLsn) {
        status.lagBytes = qint64(primaryLsn - status.replayLsn);
        status.lagSeconds = std::max(0.0, rows->text(0, 1).toDouble());
    }
    Q_EMIT replayStatus(status);
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
    m_serverInfo = ServerInfo();
}

} // namespace redrive::db
