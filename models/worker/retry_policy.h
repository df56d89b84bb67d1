// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>
#include <optional>

class QRandomGenerator;

namespace redrive::worker {

/// What kind of failure an attempt had (docs/domain.md#error-class); decides retry, not the status
/// code alone.
enum class ErrorClass {
    Transient, ///< nothing happened outside (timeout before sending, refused, 5xx, 429, 40001)
    Permanent, ///< retrying cannot help (validation, card declined, key reused for another request)
    Ambiguous, ///< the side effect may have happened (timeout or crash after sending)
};

/// "transient", "permanent" or "ambiguous", as stored in redrive.attempt.error_class.
QString errorClassName(ErrorClass errorClass);

/// Retry settings for one job kind. Defaults: base 1 s, cap 300 s, 8 attempts,
/// deadline 1 h, ambiguous failures retried (only safe where the receiver dedupes by key).
struct RetryPolicy
{
    qint64 baseMs = 1000;
    qint64 capMs = 300000;
    int maxAttempts = 8; ///< the runner uses each job's own max_attempts here
    qint64 deadlineMs = 3600000;
    bool retryAmbiguous = true;

    /// The same policy with every duration divided by `factor` (time compression for demos).
    RetryPolicy compressed(double factor) const;
};

/// The upper bound of the full-jitter delay after attempt `attempt` (1-based), in ms:
/// min(cap, base · 2^attempt).
qint64 backoffCeilingMs(int attempt, qint64 baseMs, qint64 capMs);

/// Exponential backoff with full jitter: a uniform random delay in [0, backoffCeilingMs], in ms
/// ("Exponential Backoff And Jitter", AWS Architecture Blog, 2015).
qint64 fullJitterBackoffMs(int attempt, qint64 baseMs, qint64 capMs, QRandomGenerator &rng);

/// What to do after a failed attempt.
struct RetryDecision
{
    enum class Action { Retry, DeadLetter };
    Action action = Action::DeadLetter;
    qint64 delayMs = 0; ///< before the next attempt, when retrying
    QString deadReason; ///< "permanent", "exhausted", "deadline" or "ambiguous"
};

/// Decides retry or dead letter after attempt number `attempt` failed with `errorClass`.
/// `msUntilDeadline` is what is left of the job's total deadline; a Retry-After hint (429, 503)
/// raises the delay to at least that long. A retry that would start after the deadline is a dead
/// letter instead.
RetryDecision decideRetry(ErrorClass errorClass, int attempt, const RetryPolicy &policy,
                          qint64 msUntilDeadline, std::optional<qint64> retryAfterMs,
                          QRandomGenerator &rng);

} // namespace redrive::worker
