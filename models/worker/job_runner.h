// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/db_expected.h"
#include "models/db/pg_connection.h"
#include "models/worker/fault_injector.h"
#include "models/worker/retry_budget.h"
#include "models/worker/retry_policy.h"
#include "models/worker/worker_clock.h"

#include <QDateTime>
#include <QHash>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QStringList>
#include <functional>
#include <optional>

namespace redrive::worker {

/// How a worker runs. Durations in ms.
struct WorkerConfig
{
    QString workerId;
    QStringList queues = { QStringLiteral("payments"), QStringLiteral("emails"),
                           QStringLiteral("webhooks"), QStringLiteral("ledger") };
    int batchSize = 20;
    int leaseMs = 30000; ///< job lease; renewed by heartbeats while an attempt runs
    int keyLeaseMs = 30000; ///< idempotency-key lease while processing
    double timeCompression = 1.0;
    RetryPolicy defaultPolicy;
    QHash<QString, RetryPolicy> policies; ///< by job kind
    bool retryBudget = true;
    double retryBudgetRatio = 0.1;
    double retryBudgetMinPerSecond = 1.0;
    qint64 retryBudgetWindowMs = 10000;
    /// On a CrashAfterEffect fault, end the process for real (std::_Exit) instead of only
    /// abandoning the job; used by the killed-worker test and the live demo.
    bool crashForReal = false;
    quint64 seed = 1; ///< for backoff jitter

    /// The retry policy for `kind`, compressed by timeCompression.
    RetryPolicy policyFor(const QString &kind) const;
    /// The defaults of the reference world: payments and webhooks retry ambiguous failures
    /// (the receiver dedupes by key), receipts do not (the mail sender is not idempotent).
    static WorkerConfig referenceDefaults(const QString &workerId);
};

/// What happened to one claimed job, for logs, tests and the retry-storm report.
struct AttemptReport
{
    qint64 jobId = 0;
    QString queue;
    QString kind;
    int attempt = 0;
    /// "succeeded", "failed", "crashed" (abandoned with the lease held), "deferred" (the retry
    /// budget said wait; no attempt counted) or "lost_lease"
    QString outcome;
    QString errorClass;
    QString errorCode;
    QString next; ///< "succeeded", "retry", "dead" or empty
    qint64 backoffMs = 0;
    QDateTime startedAt;
    QDateTime finishedAt;
};

/// The reference worker's engine (the terms and rules are in docs/domain.md). Claims due jobs with
/// FOR UPDATE SKIP LOCKED under a lease, runs each through the idempotency-key protocol and the
/// simulated world, classifies failures, and records every attempt — with the retry or
/// dead-letter decision — in one transaction with the job's new state. Uses one connection,
/// synchronously, from one thread; run several runners for several workers.
class JobRunner
{
public:
    /// `faults` and `clock` must outlive the runner.
    JobRunner(db::PgConnection &connection, WorkerConfig config, FaultInjector *faults,
              WorkerClock *clock);

    /// Claims up to batchSize due jobs and runs them one after another.
    db::DbExpected<QList<AttemptReport>> runDueBatch();
    /// Reclaims jobs whose lease expired (their worker died); returns how many.
    db::DbExpected<int> reclaimExpiredLeases();
    /// Relays pending outbox commands (requeue); returns how many were handled.
    db::DbExpected<int> relayOutbox();
    /// The earliest run_at of a queued job in this runner's queues, if any.
    db::DbExpected<std::optional<QDateTime>> nextDueAt();

    const WorkerConfig &config() const { return m_config; }
    WorkerClock &clock() { return *m_clock; }

private:
    struct Job
    {
        qint64 id = 0;
        QString queue;
        QString kind;
        QJsonObject payload;
        QByteArray payloadText;
        QString idempotencyKey;
        int attempt = 0;
        int maxAttempts = 0;
        QDateTime createdAt;
        QDateTime deadlineAt;
    };

    /// What a handler did. On success `commit` runs inside the recording transaction.
    struct Effect
    {
        bool ok = false;
        bool crashed = false;
        ErrorClass errorClass = ErrorClass::Transient;
        QString errorCode;
        QString message;
        QString stackTrace;
        std::optional<qint64> retryAfterMs;
        qint64 latencyMs = 0;
        QJsonObject result;
        std::function<db::DbExpected<db::ResultSet>(db::PgConnection &)> commit;
    };

    AttemptReport runJob(const Job &job);
    Effect execute(const Job &job, const QDateTime &startedAt, bool replay,
                   const QJsonObject &storedResult);
    Effect chargeCard(const Job &job, const QDateTime &now);
    Effect sendReceipt(const Job &job, const QDateTime &now);
    Effect processWebhook(const Job &job, const QDateTime &now, bool replay);
    Effect syncLedger(const Job &job, const QDateTime &now);
    void waitLatency(const Job &job, qint64 latencyMs);
    RetryBudget &budgetFor(const QString &queue);

    db::PgConnection &m_connection;
    WorkerConfig m_config;
    FaultInjector *m_faults;
    WorkerClock *m_clock;
    QRandomGenerator m_rng;
    QHash<QString, RetryBudget> m_budgets;
};

/// SHA-256 (hex) of the canonical form of a JSON payload (keys sorted, compact), the request
/// hash stored with an idempotency key.
QString requestHash(const QJsonObject &payload);

} // namespace redrive::worker
