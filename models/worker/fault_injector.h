// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QDateTime>
#include <QHash>
#include <QList>
#include <QString>
#include <array>

namespace redrive::worker {

/// A fault the simulated world injects into one call to a downstream.
enum class FaultKind {
    None, ///< the call succeeds
    ServerError, ///< 5xx, nothing happened: transient
    RateLimited, ///< 429 with Retry-After, nothing happened: transient
    ConnectionRefused, ///< nothing happened: transient
    TimeoutBeforeSend, ///< gave up before the request left: transient
    TimeoutAfterEffect, ///< the effect happened, the reply was lost: ambiguous
    CrashAfterEffect, ///< the effect happened, then the worker died before recording it
    Declined, ///< the provider refused for good (card declined): permanent
    ValidationError, ///< the request is malformed: permanent
    Outage, ///< the downstream is down (503) during an outage window: transient
    SerializationFailure, ///< our own database said 40001: transient
};

/// The fault drawn for a call, with the latency it takes and any Retry-After hint, in ms.
struct Fault
{
    FaultKind kind = FaultKind::None;
    qint64 latencyMs = 0;
    qint64 retryAfterMs = 0;
};

/// Probabilities (0..1) of each fault for one downstream, and the latency range in ms.
struct FaultRates
{
    double serverError = 0;
    double rateLimited = 0;
    double connectionRefused = 0;
    double timeoutBeforeSend = 0;
    double timeoutAfterEffect = 0;
    double crashAfterEffect = 0;
    double declined = 0;
    double validationError = 0;
    double serializationFailure = 0;
    qint64 latencyMinMs = 20;
    qint64 latencyMaxMs = 400;
    qint64 retryAfterMs = 30000;
};

/// Seeded, reproducible fault injection: the fault for (downstream, job, attempt, item) depends
/// only on the seed and those values, never on timing or call order, so the same seed gives the
/// same world: fault injection is seeded and reproducible.
class FaultInjector
{
public:
    explicit FaultInjector(quint64 seed = 0);

    void setRates(const QString &downstream, const FaultRates &rates);
    /// Every call to `downstream` in [start, end) fails with FaultKind::Outage.
    void addOutage(const QString &downstream, const QDateTime &start, const QDateTime &end);
    /// Forces `kind` for one job's attempt (tests and scripted demo scenes); `item` names one item
    /// of a batch job.
    void force(const QString &downstream, qint64 jobId, int attempt, FaultKind kind, int item = 0);

    Fault draw(const QString &downstream, qint64 jobId, int attempt, const QDateTime &now,
               int item = 0) const;
    quint64 seed() const { return m_seed; }

private:
    struct Outage
    {
        QString downstream;
        QDateTime start;
        QDateTime end;
    };
    quint64 m_seed;
    QHash<QString, FaultRates> m_rates;
    QList<Outage> m_outages;
    QHash<QString, FaultKind> m_forced;
};

/// The first four 32-bit words (little-endian) of the SHA-256 of `text`'s UTF-8: the same in
/// every process and on every machine, for the simulated world's choices and fault draws.
/// qHash() is seeded per process, so it made one --seed give another world in each run
/// (docs/reliability.md, "Same seed, same world").
std::array<quint32, 4> stableWords(const QString &text);

} // namespace redrive::worker
