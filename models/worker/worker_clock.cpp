// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/worker/worker_clock.h"

#include <QThread>

namespace redrive::worker {

WorkerClock WorkerClock::real(qint64 serverOffsetMs, const WallClock &wall)
{
    WorkerClock c;
    c.m_elapsed.start();
    c.m_now = (wall ? wall() : QDateTime::currentDateTimeUtc()).toUTC().addMSecs(serverOffsetMs);
    return c;
}

WorkerClock WorkerClock::simulated(const QDateTime &start)
{
    WorkerClock c;
    c.m_virtual = true;
    c.m_now = start.toUTC();
    return c;
}

QDateTime WorkerClock::now() const
{
    if (m_virtual)
        return m_now;
    // Monotonic: a step of the wall clock (NTP, a suspended VM, an operator) is never seen.
    return m_now.addMSecs(m_elapsed.elapsed());
}

void WorkerClock::advanceTo(const QDateTime &t)
{
    if (m_virtual && t > m_now)
        m_now = t.toUTC();
}

void WorkerClock::sleepMs(qint64 ms)
{
    if (ms <= 0)
        return;
    if (m_virtual)
        m_now = m_now.addMSecs(ms);
    else
        QThread::msleep(quint64(ms));
}

} // namespace redrive::worker
