// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QDateTime>
#include <QElapsedTimer>
#include <functional>

namespace redrive::worker {

/// The worker's notion of "now". Real: the database server's clock as measured at start, moved on
/// by a monotonic timer (never by the local wall clock), so leases and run_at agree with the server
/// (docs/domain.md#times-are-timestamptz-on-the-server-clock) and a wall clock that jumps forward
/// or steps back while the worker runs changes nothing: time never goes back, an attempt never
/// finishes before it started (docs/reliability.md#worker-clocks). Virtual: an instant the caller
/// moves forward, so the demo generator lives through a day of backoff in seconds and every
/// timestamp it writes follows from the seed.
class WorkerClock
{
public:
    /// The local wall clock (UTC); tests inject one that jumps.
    using WallClock = std::function<QDateTime()>;
    /// A real clock; `serverOffsetMs` = server time − local time, in ms, measured with `wall`
    /// (default: QDateTime::currentDateTimeUtc), which is read once, here.
    static WorkerClock real(qint64 serverOffsetMs = 0, const WallClock &wall = {});
    /// A virtual clock standing at `start` (UTC).
    static WorkerClock simulated(const QDateTime &start);

    QDateTime now() const;
    bool isVirtual() const { return m_virtual; }
    /// Virtual: moves to `t` if it is later. Real: no effect.
    void advanceTo(const QDateTime &t);
    /// Real: blocks for `ms`. Virtual: advances by `ms`.
    void sleepMs(qint64 ms);

private:
    bool m_virtual = false;
    QDateTime m_now; ///< virtual: now; real: the server's time when m_elapsed started
    QElapsedTimer m_elapsed; ///< real: monotonic time since m_now
};

} // namespace redrive::worker
