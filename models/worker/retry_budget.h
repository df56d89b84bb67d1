// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QtGlobal>
#include <deque>

namespace redrive::worker {

/// Caps retries at a share of recent requests for one queue, so a downstream outage does not
/// turn into a retry storm (the model is Finagle's RetryBudget and the gRPC retry
/// throttling proposal A6). Within a sliding window, retries may be at most
/// `minRetriesPerSecond · window` plus `ratio` of the first attempts seen. Times are in ms on
/// any monotonic scale the caller chooses (virtual time in the demo).
class RetryBudget
{
public:
    explicit RetryBudget(double ratio = 0.1, double minRetriesPerSecond = 1.0,
                         qint64 windowMs = 10000);

    /// Notes a first attempt (a request that is not a retry) at `nowMs`.
    void recordRequest(qint64 nowMs);
    /// Takes a retry from the budget at `nowMs`: true and counted when there is room, false
    /// (nothing counted) when the retry must wait.
    bool tryAcquireRetry(qint64 nowMs);
    /// Retries the budget allows at `nowMs` in the current window.
    double allowance(qint64 nowMs);
    bool enabled() const { return m_enabled; }
    void setEnabled(bool enabled) { m_enabled = enabled; }
    qint64 windowMs() const { return m_windowMs; }

private:
    void expire(qint64 nowMs);

    double m_ratio;
    double m_minRetriesPerSecond;
    qint64 m_windowMs;
    bool m_enabled = true;
    std::deque<qint64> m_requests;
    std::deque<qint64> m_retries;
};

} // namespace redrive::worker
