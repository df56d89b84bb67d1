// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/db_error.h"

#include <QDateTime>
#include <QElapsedTimer>
#include <QFlags>
#include <QObject>
#include <QStringList>

class QTimer;

namespace redrive {

namespace db {
class DatabaseSession;
struct Notification;
} // namespace db

/// What changed, by the notification channel that said so (migration
/// 0013_live_notifications.sql; docs/architecture.md#live-updates).
enum class LiveArea : quint32 {
    DeadLetters = 0x01, ///< redrive_dead_letter: dead letters, failure groups, adapter jobs
    Attempts = 0x02, ///< redrive_attempt: native attempts
    Outbox = 0x04, ///< redrive_outbox: outbox commands
    Audit = 0x08, ///< redrive_audit: operator actions and settings (each writes an audit entry)
    Compensations = 0x10, ///< redrive_compensation: requests and decisions
    Keys = 0x20, ///< redrive_key: idempotency keys
    Reconciliation = 0x40, ///< redrive_reconciliation: runs and mismatches
};
Q_DECLARE_FLAGS(LiveAreas, LiveArea)
Q_DECLARE_OPERATORS_FOR_FLAGS(LiveAreas)

/// Every area at once: what a re-read after a gap in the live link covers.
inline constexpr LiveAreas kAllLiveAreas = LiveAreas(0x7f);

/// Turns the session's notifications into "re-read these areas" for the views
/// (docs/architecture.md#live-updates). Notifications carry nothing (docs/security.md), so each
/// only marks its channel's area changed; the first notification of a burst schedules one changed()
/// signal quietMs() later, which takes every notification that arrives until then, and changed() is
/// never emitted more often than once per minIntervalMs() (defaults: 250 ms and 1000 ms, so at
/// most one re-read a second however busy the server is, and a steady stream still re-reads every
/// second). When the listener's connection drops, linkChanged(false) says the views are no
/// longer current; when it listens again, linkChanged(true) and changed(kAllLiveAreas) follow at
/// once, so everything that changed during the gap is re-read. Lives on the session's thread.
class LiveUpdates : public QObject
{
    Q_OBJECT
public:
    /// `session` must outlive this object. Nothing is listened to before start().
    explicit LiveUpdates(db::DatabaseSession *session, QObject *parent = nullptr);
    ~LiveUpdates() override;

    /// The channels of every area, in LiveArea order.
    static QStringList channels();
    /// The area a channel stands for; empty for a channel that is not one of channels().
    static LiveAreas areaOf(const QString &channel);

    /// Coalescing, in ms: the quiet period after the last notification of a burst, and the least
    /// time between two changed() signals. Call before start() (tests use short ones).
    void setTiming(int quietMs, int minIntervalMs);
    int quietMs() const { return m_quietMs; }
    int minIntervalMs() const { return m_minIntervalMs; }

    /// Starts listening on channels() (DatabaseSession::listen); idempotent.
    void start();
    /// True while the listener is connected and LISTENing: the views are current.
    bool isLive() const { return m_live; }
    /// When the views were last told to re-read (UTC, the client's clock); invalid before.
    QDateTime lastChangeAt() const { return m_lastChangeAt; }
    /// How many changed() signals were emitted (for tests and the status bar's tooltip).
    int changeCount() const { return m_changeCount; }

Q_SIGNALS:
    /// Re-read what shows `areas`: other sessions (or this one) changed them.
    void changed(redrive::LiveAreas areas);
    /// The live link went down (`live` false, `error` says why) or came back (`live` true).
    void linkChanged(bool live, const redrive::db::DbError &error);

private:
    void onNotified(const db::Notification &notification);
    void schedule();
    void flush();

    db::DatabaseSession *m_session;
    QTimer *m_timer = nullptr;
    LiveAreas m_dirty;
    QElapsedTimer m_sinceFlush;
    QDateTime m_lastChangeAt;
    int m_quietMs = 250;
    int m_minIntervalMs = 1000;
    int m_changeCount = 0;
    bool m_started = false;
    bool m_live = false;
};

} // namespace redrive
