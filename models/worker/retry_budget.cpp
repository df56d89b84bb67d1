// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/worker/retry_budget.h"

namespace redrive::worker {

RetryBudget::RetryBudget(double ratio, double minRetriesPerSecond, qint64 windowMs)
    : m_ratio(ratio)
    , m_minRetriesPerSecond(minRetriesPerSecond)
    , m_windowMs(windowMs)
{ }

void RetryBudget::expire(qint64 nowMs)
{
    while (!m_requests.empty() && m_requests.front() <= nowMs - m_windowMs)
        m_requests.pop_front();
    while (!m_retries.empty() && m_retries.front() <= nowMs - m_windowMs)
        m_retries.pop_front();
}

void RetryBudget::recordRequest(qint64 nowMs)
{
    expire(nowMs);
    m_requests.push_back(nowMs);
}

double RetryBudget::allowance(qint64 nowMs)
{
    expire(nowMs);
    return m_minRetriesPerSecond * double(m_windowMs) / 1000.0
        + m_ratio * double(m_requests.size());
}

bool RetryBudget::tryAcquireRetry(qint64 nowMs)
{
    if (!m_enabled)
        return true;
    const double allowed = allowance(nowMs); // expires old entries first
    if (double(m_retries.size()) + 1.0 > allowed)
        return false;
    m_retries.push_back(nowMs);
    return true;
}

} // namespace redrive::worker
