// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/live_updates.h"

#include "models/db/database_session.h"
#include "models/db/pg_connection.h"

#include <QTimer>
#include <algorithm>
#include <array>

namespace redrive {

namespace {

struct Channel
{
    const char *name;
    LiveArea area;
};

// The channels of migration 0013_live_notifications.sql.
constexpr std::array<Channel, 7> kChannels { {
    { "redrive_dead_letter", LiveArea::DeadLetters },
    { "redrive_attempt", LiveArea::Attempts },
    { "redrive_outbox", LiveArea::Outbox },
    { "redrive_audit", LiveArea::Audit },
    { "redrive_compensation", LiveArea::Compensations },
    { "redrive_key", LiveArea::Keys },
    { "redrive_reconciliation", LiveArea::Reconciliation },
} };

} // namespace

LiveUpdates::LiveUpdates(db::DatabaseSession *session, QObject *parent)
    : QObject(parent)
    , m_session(session)
{
    m_timer = new QTimer(this);
    m_timer->setSingleShot(true);
    connect(m_timer, &QTimer::timeout, this, &LiveUpdates::flush);
    connect(m_session, &db::DatabaseSession::notified, this, &LiveUpdates::onNotified);
    connect(m_session, &db::DatabaseSession::listening, this, [this] {
        m_live = true;
        Q_EMIT linkChanged(true, {});
        // Whatever changed while nobody listened (or before the first LISTEN) is re-read now.
        m_dirty |= kAllLiveAreas;
        m_timer->stop();
        flush();
    });
    connect(m_session, &db::DatabaseSession::listenerLost, this, [this](const db::DbError &error) {
        const bool was = m_live;
        m_live = false;
        if (was)
            Q_EMIT linkChanged(false, error);
    });
}

LiveUpdates::~LiveUpdates() = default;

QStringList LiveUpdates::channels()
{
    QStringList out;
    for (const Channel &c : kChannels)
        out << QString::fromLatin1(c.name);
    return out;
}

LiveAreas LiveUpdates::areaOf(const QString &channel)
{
    for (const Channel &c : kChannels) {
        if (channel == QLatin1String(c.name))
            return c.area;
    }
    return {};
}

void LiveUpdates::setTiming(int quietMs, int minIntervalMs)
{
    m_quietMs = std::max(0, quietMs);
    m_minIntervalMs = std::max(0, minIntervalMs);
}

void LiveUpdates::start()
{
    if (m_started)
        return;
    m_started = true;
    m_session->listen(channels());
}

void LiveUpdates::onNotified(const db::Notification &notification)
{
    const LiveAreas area = areaOf(notification.channel);
    if (!area)
        return; // not ours; the payload is never read (docs/security.md)
    m_dirty |= area;
    schedule();
}

void LiveUpdates::schedule()
{
    if (m_timer->isActive())
        return; // already due: this notification is re-read with the others (never pushed back,
                // so a steady stream cannot starve the views)
    qint64 delay = m_quietMs;
    if (m_sinceFlush.isValid())
        delay = std::max<qint64>(delay, m_minIntervalMs - m_sinceFlush.elapsed());
    m_timer->start(int(delay));
}

void LiveUpdates::flush()
{
    if (!m_dirty)
        return;
    const LiveAreas areas = m_dirty;
    m_dirty = {};
    m_sinceFlush.start();
    m_lastChangeAt = QDateTime::currentDateTimeUtc();
    ++m_changeCount;
    Q_EMIT changed(areas);
}

} // namespace redrive
