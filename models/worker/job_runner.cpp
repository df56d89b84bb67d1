// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/worker/job_runner.h"

#include "models/logging.h"

#include <QCryptographicHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <cstdlib>

namespace redrive::worker {

using db::DbError;
using db::DbExpected;
using db::ErrorKind;
using db::PgConnection;
using db::QueryParams;
using db::ResultSet;

namespace {

qint64 msBetween(const QDateTime &a, const QDateTime &b)
{
    return a.msecsTo(b);
}

// A stack trace as the failing call site would print it; stable per code so that it groups.
QString stackTrace(const QString &exception, const QString &message, const QStringList &frames)
{
    QString out = exception + QStringLiteral(": ") + message;
    for (const QString &f : frames)
        out += QStringLiteral("\n    at ") + f;
    return out;
}

const QStringList kChargeFrames = {
    QStringLiteral("redrive::sim::PaymentProvider::createCharge (payment_provider.cpp:214)"),
    QStringLiteral("redrive::worker::JobRunner::chargeCard (job_runner.cpp:301)"),
    QStringLiteral("redrive::worker::JobRunner::execute (job_runner.cpp:262)"),
    QStringLiteral("redrive::worker::JobRunner::runJob (job_runner.cpp:158)"),
    QStringLiteral("main (worker_main.cpp:88)"),
};
const QStringList kMailFrames = {
    QStringLiteral("redrive::sim::MailSender::send (mail_sender.cpp:77)"),
    QStringLiteral("redrive::worker::JobRunner::sendReceipt (job_runner.cpp:366)"),
    QStringLiteral("redrive::worker::JobRunner::execute (job_runner.cpp:264)"),
    QStringLiteral("redrive::worker::JobRunner::runJob (job_runner.cpp:158)"),
};
const QStringList kWebhookFrames = {
    QStringLiteral("redrive::sim::WebhookEvent::parse (webhook_event.cpp:41)"),
    QStringLiteral("redrive::worker::JobRunner::processWebhook (job_runner.cpp:402)"),
    QStringLiteral("redrive::worker::JobRunner::execute (job_runner.cpp:266)"),
    QStringLiteral("redrive::worker::JobRunner::runJob (job_runner.cpp:158)"),
};
const QStringList kLedgerFrames = {
    QStringLiteral("redrive::sim::Ledger::applyItem (ledger.cpp:133)"),
    QStringLiteral("redrive::worker::JobRunner::syncLedger (job_runner.cpp:447)"),
    QStringLiteral("redrive::worker::JobRunner::runJob (job_runner.cpp:158)"),
};

QString paymentStatusForEvent(const QString &type)
{
    if (type == QLatin1String("payment.succeeded"))
        return QStringLiteral("succeeded");
    if (type == QLatin1String("payment.processing"))
        return QStringLiteral("processing");
    if (type == QLatin1String("payment.failed"))
        return QStringLiteral("failed");
    if (type == QLatin1String("payment.refunded"))
        return QStringLiteral("refunded");
    return {};
}

} // namespace

QString requestHash(const QJsonObject &payload)
{
    // QJsonObject keeps keys sorted, so its compact form is canonical.
    const QByteArray canonical = QJsonDocument(payload).toJson(QJsonDocument::Compact);
    return QString::fromLatin1(
        QCryptographicHash::hash(canonical, QCryptographicHash::Sha256).toHex());
}

RetryPolicy WorkerConfig::policyFor(const QString &kind) const
{
    return policies.value(kind, defaultPolicy).compressed(timeCompression);
}

WorkerConfig WorkerConfig::referenceDefaults(const QString &workerId)
{
    WorkerConfig c;
    c.workerId = workerId;
    RetryPolicy receipts;
    receipts.retryAmbiguous = false; // the mail sender is not idempotent: a human decides
    c.policies.insert(QStringLiteral("send_receipt"), receipts);
    return c;
}

JobRunner::JobRunner(PgConnection &connection, WorkerConfig config, FaultInjector *faults,
                     WorkerClock *clock)
    : m_connection(connection)
    , m_config(std::move(config))
    , m_faults(faults)
    , m_clock(clock)
    , m_rng(quint32(m_config.seed ^ (m_config.seed >> 32)))
{ }

RetryBudget &JobRunner::budgetFor(const QString &queue)
{
    auto it = m_budgets.find(queue);
    if (it == m_budgets.end()) {
        RetryBudget budget(
            m_config.retryBudgetRatio, m_config.retryBudgetMinPerSecond,
            qint64(double(m_config.retryBudgetWindowMs) / std::max(1.0, m_config.timeCompression)));
        budget.setEnabled(m_config.retryBudget);
        it = m_budgets.insert(queue, budget);
    }
    return *it;
}

DbExpected<std::optional<QDateTime>> JobRunner::nextDueAt()
{
    auto r = m_connection.exec("SELECT min(run_at) FROM redrive.job"
                               " WHERE state = 'queued' AND queue = ANY ($1::text[])",
                               QueryParams().addTextArray(m_config.queues));
    if (!r)
        return r.error();
    if (r->isNull(0, 0))
        return std::optional<QDateTime>();
    return std::optional<QDateTime>(r->timestamp(0, 0));
}

DbExpected<int> JobRunner::reclaimExpiredLeases()
{
    auto r
        = m_connection.exec("SELECT count(*) FROM redrive.reclaim_expired_leases($1, $2)",
                            QueryParams().addText(m_config.workerId).addTimestamp(m_clock->now()));
    if (!r)
        return r.error();
    return r->integer(0, 0).value_or(0);
}

DbExpected<int> JobRunner::relayOutbox()
{
    const QDateTime now = m_clock->now();
    auto claimed = m_connection.exec(
        "SELECT id, command, target_id, payload::text FROM redrive.claim_outbox($1, $2, $3, $4)",
        QueryParams()
            .addText(m_config.workerId)
            .addInt(m_config.batchSize)
            .addInt(m_config.leaseMs)
            .addTimestamp(now));
    if (!claimed)
        return claimed.error();
    int handled = 0;
    for (int row = 0; row < claimed->rowCount(); ++row) {
        const qint64 id = claimed->bigInt(row, 0).value_or(0);
        const QString command = claimed->text(row, 1);
        const QJsonObject payload = QJsonDocument::fromJson(claimed->raw(row, 3)).object();
        bool ok = false;
        QString error;
        if (command == QLatin1String("requeue")) {
            // The server reads the job, the attempt reset and any edited payload from the
            // claimed outbox row itself: a worker carries out commands, it does not name them.
            auto applied = m_connection.exec(
                "SELECT redrive.apply_requeue($1, $2, $3)",
                QueryParams().addBigInt(id).addText(m_config.workerId).addTimestamp(now));
            if (!applied)
                return applied.error();
            ok = applied->boolean(0, 0).value_or(false);
            if (!ok)
                error = QStringLiteral(
                    "job is not dead, or its dead letter no longer waits for this requeue");
        } else if (command == QLatin1String("compensate")) {
            // The refund carries its own idempotency key, so a relay retry cannot refund twice.
            // It refunds the charge the command names (for a double charge, the duplicate) by
            // amount_minor (commands written before schema version 8 carry amount_cents).
            const qint64 compensation
                = qint64(payload.value(QStringLiteral("compensation_id")).toDouble());
            auto refunded = m_connection.exec(
                "SELECT refund_id FROM sim.provider_refund($1, $2, $3, $4)",
                QueryParams()
                    .addText(QStringLiteral("refund:%1").arg(compensation))
                    .addText(payload.value(QStringLiteral("charge_ref")).toString())
                    .addBigInt(payload.contains(QStringLiteral("amount_minor"))
                                   ? payload.value(QStringLiteral("amount_minor")).toInteger()
                                   : payload.value(QStringLiteral("amount_cents")).toInteger())
                    .addTimestamp(now));
            const bool permanent = !refunded && refunded.error().kind() != ErrorKind::Connection
                && refunded.error().kind() != ErrorKind::Retryable;
            if (refunded || permanent) {
                auto completed = m_connection.exec(
                    "SELECT redrive.complete_compensation($1, $2, $3, $4, $5)",
                    QueryParams()
                        .addBigInt(id)
                        .addText(m_config.workerId)
                        .addBool(refunded.ok())
                        .addText(refunded ? refunded->text(0, 0) : QString())
                        .addText(refunded ? QString() : refunded.error().message()));
                if (!completed)
                    return completed.error();
                ok = true; // the command is done either way; a failed refund is recorded
            } else {
                error = refunded.error().message();
            }
        } else {
            error = QStringLiteral("command %1 is not handled by this worker").arg(command);
        }
        auto finished = m_connection.exec("SELECT redrive.finish_outbox($1, $2, $3, $4, 5000, $5)",
                                          QueryParams()
                                              .addBigInt(id)
                                              .addText(m_config.workerId)
                                              .addBool(ok)
                                              .addText(ok ? QString() : error)
                                              .addTimestamp(now));
        if (!finished)
            return finished.error();
        ++handled;
    }
    return handled;
}

DbExpected<QList<AttemptReport>> JobRunner::runDueBatch()
{
    auto claimed = m_connection.exec(
        "SELECT id, queue, kind, payload::text, idempotency_key, attempt, max_attempts,"
        "       created_at, deadline_at"
        "  FROM redrive.claim_jobs($1, $2::text[], $3, $4, $5)",
        QueryParams()
            .addText(m_config.workerId)
            .addTextArray(m_config.queues)
            .addInt(m_config.batchSize)
            .addInt(m_config.leaseMs)
            .addTimestamp(m_clock->now()));
    if (!claimed)
        return claimed.error();
    QList<AttemptReport> reports;
    for (int row = 0; row < claimed->rowCount(); ++row) {
        Job job;
        job.id = claimed->bigInt(row, 0).value_or(0);
        job.queue = claimed->text(row, 1);
        job.kind = claimed->text(row, 2);
        job.payloadText = claimed->raw(row, 3);
        job.payload = QJsonDocument::fromJson(job.payloadText).object();
        job.idempotencyKey = claimed->text(row, 4);
        job.attempt = claimed->integer(row, 5).value_or(1);
        job.maxAttempts = claimed->integer(row, 6).value_or(8);
        job.createdAt = claimed->timestamp(row, 7);
        job.deadlineAt = claimed->timestamp(row, 8);
        AttemptReport report = runJob(job);
        if (report.outcome == QLatin1String("error")) {
            // The database went away mid-job: the lease will expire and another run reclaims it.
            return DbError(ErrorKind::Connection, report.errorCode);
        }
        reports.append(report);
    }
    return reports;
}

void JobRunner::waitLatency(const Job &job, qint64 latencyMs)
{
    if (m_clock->isVirtual() || latencyMs <= 0)
        return;
    // Sleep in slices and renew the lease, so a slow call is never mistaken for a dead worker.
    const qint64 slice = std::max<qint64>(50, m_config.leaseMs / 3);
    qint64 left = latencyMs;
    while (left > 0) {
        const qint64 step = std::min(slice, left);
        m_clock->sleepMs(step);
        left -= step;
        if (left > 0)
            m_connection.exec("SELECT redrive.heartbeat_job($1, $2, $3, $4)",
                              QueryParams()
                                  .addBigInt(job.id)
                                  .addText(m_config.workerId)
                                  .addInt(m_config.leaseMs)
                                  .addTimestamp(m_clock->now()));
    }
}

AttemptReport JobRunner::runJob(const Job &job)
{
    AttemptReport report;
    report.jobId = job.id;
    report.queue = job.queue;
    report.kind = job.kind;
    report.attempt = job.attempt;
    const QDateTime started = m_clock->now();
    report.startedAt = started;
    auto dbFailure = [&](const DbError &e) {
        m_connection.exec("ROLLBACK");
        report.outcome = QStringLiteral("error");
        report.errorCode = e.summary();
        return report;
    };

    // The retry budget gates retries, not first attempts: a deferred retry is not an attempt.
    RetryBudget &budget = budgetFor(job.queue);
    const qint64 nowMs = started.toMSecsSinceEpoch();
    if (job.attempt > 1) {
        if (!budget.tryAcquireRetry(nowMs)) {
            const qint64 window = budget.windowMs();
            const qint64 delay = window / 2 + qint64(m_rng.bounded(quint64(window) + 1));
            auto deferred = m_connection.exec("SELECT redrive.defer_job($1, $2, $3, $4)",
                                              QueryParams()
                                                  .addBigInt(job.id)
                                                  .addText(m_config.workerId)
                                                  .addBigInt(delay)
                                                  .addTimestamp(started));
            if (!deferred)
                return dbFailure(deferred.error());
            report.outcome = QStringLiteral("deferred");
            report.backoffMs = delay;
            return report;
        }
    } else {
        budget.recordRequest(nowMs);
    }

    // The idempotency-key protocol (docs/domain.md#idempotency-key-record) decides whether the side
    // effect may run.
    Effect effect;
    bool decided = false;
    bool keyHeld = false;
    if (!job.idempotencyKey.isEmpty()) {
        auto verdict = m_connection.exec("SELECT verdict, result::text FROM "
                                         "redrive.begin_idempotent($1, $2, $3, $4, $5, $6, $7)",
                                         QueryParams()
                                             .addText(job.kind)
                                             .addText(job.idempotencyKey)
                                             .addText(requestHash(job.payload))
                                             .addBigInt(job.id)
                                             .addText(m_config.workerId)
                                             .addInt(m_config.keyLeaseMs)
                                             .addTimestamp(started));
        if (!verdict)
            return dbFailure(verdict.error());
        const QString v = verdict->text(0, 0);
        if (v == QLatin1String("replay")) {
            effect
                = execute(job, started, true, QJsonDocument::fromJson(verdict->raw(0, 1)).object());
            decided = true;
        } else if (v == QLatin1String("conflict")) {
            effect.errorClass = ErrorClass::Transient;
            effect.errorCode = QStringLiteral("idempotency_conflict");
            effect.message = QStringLiteral("idempotency key %1 is being processed by another "
                                            "attempt; retrying later")
                                 .arg(job.idempotencyKey);
            decided = true;
        } else if (v == QLatin1String("mismatch")) {
            effect.errorClass = ErrorClass::Permanent;
            effect.errorCode = QStringLiteral("idempotency_key_reuse");
            effect.message = QStringLiteral("idempotency key %1 was already used for a different "
                                            "request (request hash differs); refusing to replay")
                                 .arg(job.idempotencyKey);
            effect.stackTrace = stackTrace(QStringLiteral("IdempotencyKeyReuse"), effect.message,
                                           { QStringLiteral("redrive::worker::JobRunner::runJob "
                                                            "(job_runner.cpp:231)") });
            decided = true;
        } else {
            keyHeld = true;
        }
    }
    if (!decided)
        effect = execute(job, started, false, {});

    if (effect.crashed) {
        // The side effect happened and nothing was recorded: the job keeps its lease and the
        // key stays processing until the lease expires: the side effect may have
        // happened without its acknowledgement, the hardest window.
        if (m_config.crashForReal) {
            qCWarning(lcWorker) << "simulated crash after side effect, job" << job.id;
            std::_Exit(137);
        }
        report.outcome = QStringLiteral("crashed");
        return report;
    }

    waitLatency(job, effect.latencyMs);
    const QDateTime finished
        = m_clock->isVirtual() ? started.addMSecs(effect.latencyMs) : m_clock->now();
    report.finishedAt = finished;

    auto begun = m_connection.exec("BEGIN");
    if (!begun)
        return dbFailure(begun.error());

    QString next;
    qint64 backoff = 0;
    QString deadReason;
    if (effect.ok) {
        next = QStringLiteral("succeeded");
        if (effect.commit) {
            auto committed = effect.commit(m_connection);
            if (!committed)
                return dbFailure(committed.error());
        }
        if (keyHeld) {
            auto done = m_connection.exec(
                "SELECT redrive.complete_idempotent($1, $2, $3, 'done', $4, NULL, $5)",
                QueryParams()
                    .addText(job.kind)
                    .addText(job.idempotencyKey)
                    .addText(m_config.workerId)
                    .addJson(QJsonDocument(effect.result).toJson(QJsonDocument::Compact))
                    .addTimestamp(finished));
            if (!done)
                return dbFailure(done.error());
        }
    } else {
        // The job's own max_attempts wins over the kind's default: it was set at enqueue and
        // may have been raised by a requeue.
        RetryPolicy policy = m_config.policyFor(job.kind);
        policy.maxAttempts = job.maxAttempts;
        const RetryDecision decision
            = decideRetry(effect.errorClass, job.attempt, policy,
                          job.deadlineAt.isValid() ? msBetween(finished, job.deadlineAt)
                                                   : std::numeric_limits<qint64>::max(),
                          effect.retryAfterMs, m_rng);
        const bool retry = decision.action == RetryDecision::Action::Retry;
        next = retry ? QStringLiteral("retry") : QStringLiteral("dead");
        backoff = decision.delayMs;
        deadReason = decision.deadReason;
        // An ambiguous failure that is not retried leaves the key processing: nobody knows
        // whether the effect happened, so it stays stuck until an operator releases it.
        const bool leaveKeyStuck = effect.errorClass == ErrorClass::Ambiguous && !retry;
        if (keyHeld && !leaveKeyStuck) {
            auto failed = m_connection.exec(
                "SELECT redrive.complete_idempotent($1, $2, $3, 'failed', NULL, $4, $5)",
                QueryParams()
                    .addText(job.kind)
                    .addText(job.idempotencyKey)
                    .addText(m_config.workerId)
                    .addText(effect.message)
                    .addTimestamp(finished));
            if (!failed)
                return dbFailure(failed.error());
        }
    }

    const QString outcome = effect.ok                               ? QStringLiteral("succeeded")
        : effect.errorCode == QLatin1String("idempotency_conflict") ? QStringLiteral("conflict")
                                                                    : QStringLiteral("failed");
    auto recorded = m_connection.exec(
        "SELECT redrive.finish_attempt($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)",
        QueryParams()
            .addBigInt(job.id)
            .addText(m_config.workerId)
            .addTimestamp(started)
            .addTimestamp(finished)
            .addText(outcome)
            .addText(effect.ok ? QString() : errorClassName(effect.errorClass))
            .addText(effect.ok ? QString() : effect.errorCode)
            .addText(effect.ok ? QString() : effect.message)
            .addText(effect.ok ? QString() : effect.stackTrace)
            .addText(next)
            .addBigInt(backoff)
            .addText(deadReason.isEmpty() ? QString() : deadReason));
    if (!recorded)
        return dbFailure(recorded.error());
    if (recorded->text(0, 0) == QLatin1String("lost_lease")) {
        m_connection.exec("ROLLBACK");
        report.outcome = QStringLiteral("lost_lease");
        return report;
    }
    auto committed = m_connection.exec("COMMIT");
    if (!committed)
        return dbFailure(committed.error());

    report.outcome = effect.ok ? QStringLiteral("succeeded") : QStringLiteral("failed");
    report.errorClass = effect.ok ? QString() : errorClassName(effect.errorClass);
    report.errorCode = effect.errorCode;
    report.next = next;
    report.backoffMs = backoff;
    return report;
}

JobRunner::Effect JobRunner::execute(const Job &job, const QDateTime &startedAt, bool replay,
                                     const QJsonObject &storedResult)
{
    if (replay && job.kind != QLatin1String("process_webhook")) {
        // Done before: return the stored result and run nothing.
        Effect e;
        e.ok = true;
        e.result = storedResult;
        e.result.insert(QStringLiteral("replayed_from_key"), true);
        return e;
    }
    if (job.kind == QLatin1String("charge_card"))
        return chargeCard(job, startedAt);
    if (job.kind == QLatin1String("send_receipt"))
        return sendReceipt(job, startedAt);
    if (job.kind == QLatin1String("process_webhook"))
        return processWebhook(job, startedAt, replay);
    if (job.kind == QLatin1String("sync_ledger"))
        return syncLedger(job, startedAt);
    Effect e;
    e.errorClass = ErrorClass::Permanent;
    e.errorCode = QStringLiteral("unknown_kind");
    e.message = QStringLiteral("no handler for job kind '%1'").arg(job.kind);
    return e;
}

JobRunner::Effect JobRunner::chargeCard(const Job &job, const QDateTime &now)
{
    Effect e;
    const QString paymentId = job.payload.value(QStringLiteral("payment_id")).toString();
    // amount_minor; charge jobs queued before schema version 21 carry it as amount_cents.
    const QString amountKey = job.payload.contains(QStringLiteral("amount_minor"))
        ? QStringLiteral("amount_minor")
        : QStringLiteral("amount_cents");
    const qint64 amount = qint64(job.payload.value(amountKey).toDouble());
    const QString currency = job.payload.value(QStringLiteral("currency")).toString();
    const Fault fault = m_faults->draw(QStringLiteral("provider"), job.id, job.attempt, now);
    e.latencyMs = fault.latencyMs;
    auto fail = [&](ErrorClass cls, const QString &code, const QString &message,
                    const QString &exception) {
        e.errorClass = cls;
        e.errorCode = code;
        e.message = message;
        e.stackTrace = stackTrace(exception, message, kChargeFrames);
        return e;
    };
    switch (fault.kind) {
    case FaultKind::Outage:
        return fail(ErrorClass::Transient, QStringLiteral("provider_unavailable"),
                    QStringLiteral("503 Service Unavailable from POST /v1/charges (provider "
                                   "incident in progress)"),
                    QStringLiteral("ProviderHttpError"));
    case FaultKind::ServerError:
        return fail(ErrorClass::Transient, QStringLiteral("provider_5xx"),
                    QStringLiteral("502 Bad Gateway from POST /v1/charges after %1 ms")
                        .arg(fault.latencyMs),
                    QStringLiteral("ProviderHttpError"));
    case FaultKind::RateLimited:
        e.retryAfterMs
            = qint64(double(fault.retryAfterMs) / std::max(1.0, m_config.timeCompression));
        return fail(
            ErrorClass::Transient, QStringLiteral("rate_limited"),
            QStringLiteral("429 Too Many Requests from POST /v1/charges (Retry-After: %1 s)")
                .arg(fault.retryAfterMs / 1000),
            QStringLiteral("ProviderHttpError"));
    case FaultKind::ConnectionRefused:
        return fail(ErrorClass::Transient, QStringLiteral("connection_refused"),
                    QStringLiteral("connect ECONNREFUSED 10.20.0.7:443 (api.provider.example)"),
                    QStringLiteral("ConnectError"));
    case FaultKind::TimeoutBeforeSend:
        return fail(ErrorClass::Transient, QStringLiteral("timeout_before_send"),
                    QStringLiteral("connect timeout after 5000 ms: request not sent"),
                    QStringLiteral("ConnectTimeout"));
    case FaultKind::Declined:
        return fail(
            ErrorClass::Permanent, QStringLiteral("card_declined"),
            QStringLiteral("402 card_declined: insufficient_funds for payment %1").arg(paymentId),
            QStringLiteral("CardDeclined"));
    case FaultKind::ValidationError:
        return fail(ErrorClass::Permanent, QStringLiteral("invalid_request"),
                    QStringLiteral("400 invalid_request: amount %1 must be at least 50 in %2")
                        .arg(amount)
                        .arg(currency),
                    QStringLiteral("ProviderValidationError"));
    default:
        break;
    }

    // The side effect: the provider charges (and dedupes by our key when it honours keys).
    auto charged = m_connection.exec(
        "SELECT charge_id, replayed FROM sim.provider_charge($1, $2, $3, $4, $5)",
        QueryParams()
            .addText(job.idempotencyKey)
            .addText(paymentId)
            .addBigInt(amount)
            .addText(currency)
            .addTimestamp(now));
    if (!charged) {
        return fail(ErrorClass::Transient, QStringLiteral("provider_error"),
                    charged.error().message(), QStringLiteral("ProviderError"));
    }
    const QString chargeId = charged->text(0, 0);
    if (fault.kind == FaultKind::TimeoutAfterEffect) {
        return fail(ErrorClass::Ambiguous, QStringLiteral("timeout_after_send"),
                    QStringLiteral("read timeout after 30000 ms on POST /v1/charges: the "
                                   "request may have been processed"),
                    QStringLiteral("ReadTimeout"));
    }
    if (fault.kind == FaultKind::CrashAfterEffect) {
        e.crashed = true;
        return e;
    }
    e.ok = true;
    e.result = QJsonObject { { QStringLiteral("charge_id"), chargeId },
                             { QStringLiteral("provider_replayed"),
                               charged->boolean(0, 1).value_or(false) } };
    e.commit = [paymentId, chargeId, now](PgConnection &c) -> DbExpected<ResultSet> {
        // Our ledger, the receipt to send and the provider's webhook, in the attempt's
        // transaction (the outbox pattern: follow-up work is written with the state change).
        auto updated
            = c.exec("WITH p AS (UPDATE sim.ledger_payment SET status = 'succeeded',"
                     "                  provider_charge_id = $2, updated_at = $3"
                     "            WHERE id = $1 AND status IN ('pending', 'processing')"
                     "           RETURNING id, order_id)"
                     "SELECT redrive.enqueue_job_received('emails', 'send_receipt',"
                     "         json_build_object('payment_id', p.id, 'order_id', p.order_id,"
                     "                            'customer', o.customer, 'to', o.email,"
                     "                            'template', 'receipt')::text,"
                     "         'receipt:' || p.id, p.id, NULL, $3, 8, $3 + interval '3 seconds')"
                     "  FROM p JOIN sim.ledger_order o ON o.id = p.order_id",
                     QueryParams().addText(paymentId).addText(chargeId).addTimestamp(now));
        if (!updated)
            return updated.error();
        // The provider announces the charge; some deliveries arrive twice, and some payments
        // also get a late, older "processing" event
        // (docs/domain.md#requeue-checks-the-ordering-key). Each event carries the order and
        // the customer the charge was made for (the metadata a provider echoes back), so a
        // dead-lettered event names them.
        const quint32 h = stableWords(paymentId)[0];
        const int copies = (h % 9 == 0) ? 2 : 1;
        for (int i = 0; i < copies; ++i) {
            auto hook = c.exec("SELECT redrive.enqueue_job_received('webhooks', 'process_webhook',"
                               "   json_build_object('event_id', $1, 'type', 'payment.succeeded',"
                               "                      'payment_id', $2, 'seq', 2, 'charge_id', $3,"
                               "                      'order_id', p.order_id,"
                               "                      'customer', o.customer)::text,"
                               "   $1, $2, 2, $4, 8, $4 + $5 * interval '1 second')"
                               "  FROM sim.ledger_payment p"
                               "  JOIN sim.ledger_order o ON o.id = p.order_id WHERE p.id = $2",
                               QueryParams()
                                   .addText(QStringLiteral("evt_%1_succeeded").arg(paymentId))
                                   .addText(paymentId)
                                   .addText(chargeId)
                                   .addTimestamp(now)
                                   .addInt(5 + i * 40));
            if (!hook)
                return hook.error();
        }
        if (h % 7 == 0) {
            auto stale = c.exec(
                "SELECT redrive.enqueue_job_received('webhooks', 'process_webhook',"
                "   json_build_object('event_id', $1, 'type', 'payment.processing',"
                "                      'payment_id', $2, 'seq', 1,"
                "                      'order_id', p.order_id, 'customer', o.customer)::text,"
                "   $1, $2, 1, $3 - interval '1 second', 8, $3 + interval '90 seconds')"
                "  FROM sim.ledger_payment p"
                "  JOIN sim.ledger_order o ON o.id = p.order_id WHERE p.id = $2",
                QueryParams()
                    .addText(QStringLiteral("evt_%1_processing").arg(paymentId))
                    .addText(paymentId)
                    .addTimestamp(now));
            if (!stale)
                return stale.error();
        }
        return ResultSet();
    };
    return e;
}

JobRunner::Effect JobRunner::sendReceipt(const Job &job, const QDateTime &now)
{
    Effect e;
    const QString to = job.payload.value(QStringLiteral("to")).toString();
    const QString paymentId = job.payload.value(QStringLiteral("payment_id")).toString();
    const Fault fault = m_faults->draw(QStringLiteral("mail"), job.id, job.attempt, now);
    e.latencyMs = fault.latencyMs;
    auto fail = [&](ErrorClass cls, const QString &code, const QString &message) {
        e.errorClass = cls;
        e.errorCode = code;
        e.message = message;
        e.stackTrace = stackTrace(QStringLiteral("SmtpError"), message, kMailFrames);
        return e;
    };
    switch (fault.kind) {
    case FaultKind::Outage:
    case FaultKind::ServerError:
    case FaultKind::RateLimited:
        return fail(ErrorClass::Transient, QStringLiteral("smtp_4xx"),
                    QStringLiteral("451 4.3.0 temporary server error, try again later"));
    case FaultKind::ConnectionRefused:
    case FaultKind::TimeoutBeforeSend:
        return fail(ErrorClass::Transient, QStringLiteral("smtp_connect"),
                    QStringLiteral("connect timeout to smtp.mail.example:587 after 10000 ms"));
    case FaultKind::Declined:
    case FaultKind::ValidationError:
        return fail(ErrorClass::Permanent, QStringLiteral("invalid_recipient"),
                    QStringLiteral("550 5.1.1 <%1>: recipient address rejected").arg(to));
    default:
        break;
    }
    // The side effect: not idempotent, every call sends (and is counted).
    auto sent
        = m_connection.exec("INSERT INTO sim.mail_send (to_address, template, payment_ref, sent_at)"
                            " VALUES ($1, 'receipt', $2, $3)",
                            QueryParams().addText(to).addText(paymentId).addTimestamp(now));
    if (!sent)
        return fail(ErrorClass::Transient, QStringLiteral("smtp_error"), sent.error().message());
    if (fault.kind == FaultKind::TimeoutAfterEffect)
        return fail(ErrorClass::Ambiguous, QStringLiteral("smtp_timeout_after_data"),
                    QStringLiteral("timeout waiting for 250 after DATA (message may have been "
                                   "delivered to %1)")
                        .arg(to));
    if (fault.kind == FaultKind::CrashAfterEffect) {
        e.crashed = true;
        return e;
    }
    e.ok = true;
    e.result = QJsonObject { { QStringLiteral("sent_to"), to } };
    return e;
}

JobRunner::Effect JobRunner::processWebhook(const Job &job, const QDateTime &now, bool replay)
{
    Effect e;
    const QString eventId = job.payload.value(QStringLiteral("event_id")).toString();
    const QString type = job.payload.value(QStringLiteral("type")).toString();
    const QString paymentId = job.payload.value(QStringLiteral("payment_id")).toString();
    const qint64 seq = qint64(job.payload.value(QStringLiteral("seq")).toDouble());
    if (replay) {
        // A duplicate delivery: already applied once, nothing to do.
        e.ok = true;
        e.result = QJsonObject { { QStringLiteral("duplicate_delivery"), true } };
        return e;
    }
    const Fault fault = m_faults->draw(QStringLiteral("webhook"), job.id, job.attempt, now);
    e.latencyMs = fault.latencyMs / 4;
    const QString status = paymentStatusForEvent(type);
    if (fault.kind == FaultKind::ValidationError || status.isEmpty()) {
        e.errorClass = ErrorClass::Permanent;
        e.errorCode = QStringLiteral("schema_validation");
        e.message = status.isEmpty()
            ? QStringLiteral("unknown event type '%1' in %2").arg(type, eventId)
            : QStringLiteral("event %1: data.object.amount: expected integer, got "
                             "string \"12.50\"")
                  .arg(eventId);
        e.stackTrace
            = stackTrace(QStringLiteral("SchemaValidationError"), e.message, kWebhookFrames);
        return e;
    }
    if (fault.kind == FaultKind::SerializationFailure || fault.kind == FaultKind::ServerError
        || fault.kind == FaultKind::Outage) {
        e.errorClass = ErrorClass::Transient;
        e.errorCode = QStringLiteral("40001");
        e.message = QStringLiteral("could not serialize access due to concurrent update of "
                                   "payment %1")
                        .arg(paymentId);
        e.stackTrace
            = stackTrace(QStringLiteral("SerializationFailure"), e.message, kWebhookFrames);
        return e;
    }
    e.ok = true;
    e.result = QJsonObject { { QStringLiteral("event_id"), eventId } };
    // Applied only when newer than what this payment already saw
    // (docs/domain.md#requeue-checks-the-ordering-key), in the same transaction as the key's
    // "done": exactly one effect per event.
    e.commit = [=](PgConnection &c) {
        return c.exec(
            "WITH upd AS (UPDATE sim.ledger_payment SET status = $4, last_event_seq = $5,"
            "                    updated_at = $6"
            "              WHERE id = $2 AND last_event_seq < $5 RETURNING 1)"
            "INSERT INTO sim.webhook_effect (event_id, payment_id, type, seq, applied, at)"
            "SELECT $1, $2, $3, $5, EXISTS (SELECT 1 FROM upd), $6",
            QueryParams()
                .addText(eventId)
                .addText(paymentId)
                .addText(type)
                .addText(status)
                .addBigInt(seq)
                .addTimestamp(now));
    };
    return e;
}

JobRunner::Effect JobRunner::syncLedger(const Job &job, const QDateTime &now)
{
    Effect e;
    const QString batchId = job.payload.value(QStringLiteral("batch_id")).toString();
    const QJsonArray items = job.payload.value(QStringLiteral("items")).toArray();
    auto applied = m_connection.exec(
        "SELECT coalesce(array_agg(item_no), '{}')::bigint[] FROM sim.ledger_sync_item"
        " WHERE batch_id = $1",
        QueryParams().addText(batchId));
    if (!applied) {
        e.errorCode = QStringLiteral("ledger_error");
        e.message = applied.error().message();
        return e;
    }
    const QList<qint64> done = applied->bigIntArray(0, 0);
    QStringList failed;
    int attemptedNow = 0;
    for (int i = 0; i < items.size(); ++i) {
        if (done.contains(i))
            continue;
        ++attemptedNow;
        const Fault fault = m_faults->draw(QStringLiteral("ledger"), job.id, job.attempt, now, i);
        e.latencyMs += fault.latencyMs / 10;
        if (fault.kind != FaultKind::None && fault.kind != FaultKind::CrashAfterEffect) {
            failed << QString::number(i);
            continue;
        }
        // Each item commits on its own: a failed item never takes the others with it.
        auto item = m_connection.exec(
            "INSERT INTO sim.ledger_sync_item (batch_id, item_no, payment_id, applied_at)"
            " VALUES ($1, $2, $3, $4) ON CONFLICT DO NOTHING",
            QueryParams()
                .addText(batchId)
                .addInt(i)
                .addText(items[i].toObject().value(QStringLiteral("payment_id")).toString())
                .addTimestamp(now));
        if (!item)
            failed << QString::number(i);
    }
    if (!failed.isEmpty()) {
        e.errorClass = ErrorClass::Transient;
        e.errorCode = QStringLiteral("partial_batch");
        e.message = QStringLiteral("%1 of %2 items failed in batch %3 (items %4): ledger API "
                                   "returned 503")
                        .arg(failed.size())
                        .arg(attemptedNow)
                        .arg(batchId, failed.join(QStringLiteral(", ")));
        e.stackTrace = stackTrace(QStringLiteral("PartialBatchFailure"), e.message, kLedgerFrames);
        return e;
    }
    e.ok = true;
    e.result = QJsonObject { { QStringLiteral("batch_id"), batchId },
                             { QStringLiteral("items"), int(items.size()) } };
    return e;
}

} // namespace redrive::worker
