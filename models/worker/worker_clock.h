// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QDateTime>

namespace redrive::worker {

/// The worker's notion of "now". Real: the local clock corrected by the offset to the database
/// server's clock measured at start, so leases and run_at agree with the server
/// (docs/domain.md#times-are-timestamptz-on-the-server-clock). Virtual: an instant the caller moves
/// forward, so the demo generator lives through a day of backoff in seconds and every timestamp it
/// writes follows from the seed.
class WorkerClock
{
public:
    /// A real clock; `serverOffsetMs` = server time − local time, in ms.
    static WorkerClock real(qint64 serverOffsetMs = 0);
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
    qint64 m_offsetMs = 0;
    QDateTime m_now;
};

} // namespace redrive::worker
