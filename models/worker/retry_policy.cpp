// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/worker/retry_policy.h"

#include <QRandomGenerator>
#include <algorithm>

namespace redrive::worker {

QString errorClassName(ErrorClass errorClass)
{
    switch (errorClass) {
    case ErrorClass::Transient:
        return QStringLiteral("transient");
    case ErrorClass::Permanent:
        return QStringLiteral("permanent");
    case ErrorClass::Ambiguous:
        return QStringLiteral("ambiguous");
    }
    return {};
}

RetryPolicy RetryPolicy::compressed(double factor) const
{
    if (factor <= 1.0)
        return *this;
    RetryPolicy p = *this;
    p.baseMs = std::max<qint64>(1, qint64(double(baseMs) / factor));
    p.capMs = std::max<qint64>(1, qint64(double(capMs) / factor));
    p.deadlineMs = std::max<qint64>(1, qint64(double(deadlineMs) / factor));
    return p;
}

qint64 backoffCeilingMs(int attempt, qint64 baseMs, qint64 capMs)
{
    const int exponent = std::clamp(attempt, 0, 40);
    // base · 2^attempt without overflow: stop doubling once past the cap.
    qint64 ceiling = baseMs;
    for (int i = 0; i < exponent && ceiling < capMs; ++i)
        ceiling *= 2;
    return std::min(capMs, ceiling);
}

qint64 fullJitterBackoffMs(int attempt, qint64 baseMs, qint64 capMs, QRandomGenerator &rng)
{
    const qint64 ceiling = backoffCeilingMs(attempt, baseMs, capMs);
    return ceiling <= 0 ? 0 : qint64(rng.bounded(quint64(ceiling) + 1));
}

RetryDecision decideRetry(ErrorClass errorClass, int attempt, const RetryPolicy &policy,
                          qint64 msUntilDeadline, std::optional<qint64> retryAfterMs,
                          QRandomGenerator &rng)
{
    RetryDecision d;
    if (errorClass == ErrorClass::Permanent) {
        d.deadReason = QStringLiteral("permanent");
        return d;
    }
    if (errorClass == ErrorClass::Ambiguous && !policy.retryAmbiguous) {
        d.deadReason = QStringLiteral("ambiguous");
        return d;
    }
    if (attempt >= policy.maxAttempts) {
        d.deadReason = QStringLiteral("exhausted");
        return d;
    }
    qint64 delay = fullJitterBackoffMs(attempt, policy.baseMs, policy.capMs, rng);
    if (retryAfterMs)
        delay = std::max(delay, *retryAfterMs);
    if (delay > msUntilDeadline) {
        d.deadReason = QStringLiteral("deadline");
        return d;
    }
    d.action = RetryDecision::Action::Retry;
    d.delayMs = delay;
    return d;
}

} // namespace redrive::worker
