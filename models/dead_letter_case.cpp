// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/dead_letter_case.h"

#include "models/db/database_session.h"
#include "models/db/sql_statement.h"
#include "models/display_format.h"
#include "models/logging.h"

#include <QJsonObject>
#include <memory>
#include <utility>

namespace redrive {

using db::DbExpected;
using db::QueryParams;
using db::ResultSet;
using db::Statement;

// --- DeadLetterCase ---------------------------------------------------------------------------

qint64 DeadLetterCase::Detail::ageSeconds() const
{
    if (!deadAt.isValid() || !serverNow.isValid() || display::isInfinite(deadAt))
        return 0;
    return std::max<qint64>(0, deadAt.secsTo(serverNow));
}

DeadLetterCase::DeadLetterCase(db::DatabaseSession *session, qint64 deadLetterId, QObject *parent)
    : QObject(parent)
    , m_session(session)
    , m_id(deadLetterId)
{
    using F = ResultColumn::Format;
    const JsonKinds idJson = { { QStringLiteral("id"), JsonValueKind::Integer } };
    m_attemptsModel = new AttemptHistoryModel(session, this);
    m_mismatchesModel = new ResultTableModel(
        nullptr,
        ResultColumnSet(
            {
                { QStringLiteral("kind"), tr("Kind"), F::Text },
                { QStringLiteral("payment_ref"), tr("Payment"), ResultColumn::Format::Identifier },
                { QStringLiteral("internal_amount_minor"), tr("Our amount"), F::Integer,
                  ResultColumn::moneyIn(QStringLiteral("internal_currency")) },
                { QStringLiteral("internal_currency"), tr("Our currency"), F::Text },
                { QStringLiteral("internal_status"), tr("Our status"), F::Text },
                { QStringLiteral("external_amount_minor"), tr("Provider amount"), F::Integer,
                  ResultColumn::moneyIn(QStringLiteral("external_currency")) },
                { QStringLiteral("external_currency"), tr("Provider currency"), F::Text },
                { QStringLiteral("external_status"), tr("Provider status"), F::Text },
                { QStringLiteral("status"), tr("Status"), F::Text },
                { QStringLiteral("detected_at"), tr("Detected"), F::Time },
            },
            {}, idJson),
        this);
    m_outboxModel = new ResultTableModel(
        nullptr,
        ResultColumnSet(
            {
                { QStringLiteral("created_at"), tr("Created"), F::Time },
                { QStringLiteral("command"), tr("Command"), F::Text },
                { QStringLiteral("status"), tr("Status"), F::Text },
                { QStringLiteral("attempts"), tr("Attempts"), F::Integer },
                { QStringLiteral("processed_at"), tr("Processed"), F::Time },
                { QStringLiteral("last_error"), tr("Last error"), F::OneLine },
                { QStringLiteral("payload_text"), tr("Payload"), F::OneLine },
                { QStringLiteral("action_id"), tr("Action id"), F::Text },
            },
            {}, idJson),
        this);
    m_auditModel = new ResultTableModel(
        nullptr,
        ResultColumnSet(
            {
                { QStringLiteral("at"), tr("At"), F::Time },
                { QStringLiteral("action"), tr("Action"), F::Text },
                { QStringLiteral("db_user"), tr("Database user"), F::Text },
                { QStringLiteral("os_user"), tr("OS user (reported by client)"), F::Text },
                { QStringLiteral("reason"), tr("Reason"), F::OneLine },
                { QStringLiteral("ticket"), tr("Ticket"), F::Text },
                { QStringLiteral("outcome_text"), tr("Outcome"), F::OneLine },
                { QStringLiteral("action_id"), tr("Action id"), F::Text },
            },
            {}, idJson),
        this);
}

void DeadLetterCase::load()
{
    ++m_generation;
    // The panes of an earlier load still on their way are obsolete: withdraw them.
    for (quint64 request : std::exchange(m_requests, {}))
        m_session->cancelRequest(request);
    m_loaded.fill(false);
    m_failed.fill(false);
    m_fullPayloadPending = false;
    m_attempts.clear();
    m_buckets.clear();
    m_attemptsModel->setDeadLetter(m_id);
    for (Part part : { Part::Detail, Part::Attempts, Part::IdempotencyKey, Part::Mismatches,
                       Part::Outbox, Part::Audit, Part::Verdict })
        request(part);
}

bool DeadLetterCase::isComplete() const
{
    for (std::size_t p = 0; p < std::size_t(Part::FullPayload); ++p) {
        if (!m_loaded[p])
            return false;
    }
    return m_attemptsModel->pageCount() > 0 || m_attemptsModel->isAtEnd();
}

void DeadLetterCase::request(Part part)
{
    Statement statement = Statement::DeadLetterDetail;
    QueryParams params;
    params.addBigInt(m_id);
    switch (part) {
    case Part::Detail:
        statement = Statement::DeadLetterDetail;
        params.addInt(kPreviewBytes);
        break;
    case Part::Attempts:
        statement = Statement::AttemptRounds;
        break;
    case Part::Timeline:
        // Each attempt when the plot has a pixel for each; otherwise buckets counted on the
        // server, so tens of thousands of attempts never travel nor become plot items.
        if (attemptCount() <= m_timelineBuckets) {
            statement = Statement::AttemptHistory;
        } else {
            statement = Statement::AttemptTimelineBuckets;
            params.addInt(m_timelineBuckets);
        }
        break;
    case Part::IdempotencyKey:
        statement = Statement::DeadLetterIdempotencyKey;
        break;
    case Part::Mismatches:
        statement = Statement::DeadLetterMismatches;
        break;
    case Part::Outbox:
        statement = Statement::DeadLetterOutbox;
        break;
    case Part::Audit:
        statement = Statement::DeadLetterAudit;
        break;
    case Part::Verdict:
        statement = Statement::RetryVerdict;
        break;
    case Part::FullPayload:
        statement = Statement::DeadLetterPayload;
        break;
    }
    const quint64 generation = m_generation;
    auto request = std::make_shared<quint64>(0);
    *request = m_session->execute(
        db::statementSql(statement), params, this,
        [this, generation, part, request](const DbExpected<ResultSet> &rows) {
            if (generation != m_generation)
                return; // a reload happened meanwhile: drop it
            m_requests.removeOne(*request);
            if (!rows) {
                m_loaded[std::size_t(part)] = true;
                m_failed[std::size_t(part)] = true;
                if (part == Part::FullPayload)
                    m_fullPayloadPending = false;
                qCWarning(lcModel) << "case" << m_id << part << rows.error().summary();
                Q_EMIT failed(part, rows.error());
                return;
            }
            accept(part, rows.value());
        },
        db::DatabaseSession::Priority::Interactive);
    m_requests << *request;
}

void DeadLetterCase::loadFullPayload()
{
    if (m_fullPayloadPending)
        return;
    m_fullPayloadPending = true;
    m_loaded[std::size_t(Part::FullPayload)] = false;
    m_failed[std::size_t(Part::FullPayload)] = false;
    request(Part::FullPayload);
}

namespace {

QString textOf(const ResultSet &r, const char *column)
{
    return r.text(0, QString::fromLatin1(column));
}

QDateTime timeOf(const ResultSet &r, const char *column)
{
    return r.timestamp(0, r.columnIndex(QString::fromLatin1(column)));
}

std::optional<qint64> bigIntOf(const ResultSet &r, const char *column)
{
    return r.bigInt(0, r.columnIndex(QString::fromLatin1(column)));
}

} // namespace

void DeadLetterCase::accept(Part part, const ResultSet &rows)
{
    m_results[std::size_t(part)] = rows;
    m_loaded[std::size_t(part)] = true;
    switch (part) {
    case Part::Detail: {
        if (rows.rowCount() == 0) {
            m_detail.reset();
            m_failed[std::size_t(part)] = true;
            Q_EMIT failed(
                part,
                db::DbError(db::ErrorKind::Other, tr("Dead letter #%1 does not exist.").arg(m_id)));
            return;
        }
        Detail d;
        d.id = bigIntOf(rows, "id").value_or(m_id);
        d.jobRef = textOf(rows, "job_ref");
        d.queue = textOf(rows, "queue");
        d.kind = textOf(rows, "kind");
        d.status = textOf(rows, "status");
        d.reason = textOf(rows, "reason");
        d.errorClass = textOf(rows, "error_class");
        d.classBecause = textOf(rows, "class_because");
        d.errorCode = textOf(rows, "error_code");
        d.lastError = textOf(rows, "last_error");
        d.stackTrace = textOf(rows, "stack_trace");
        d.attempts = int(bigIntOf(rows, "attempts").value_or(0));
        d.idempotencyKey = textOf(rows, "idempotency_key");
        d.fingerprint = textOf(rows, "fingerprint");
        d.groupName = textOf(rows, "group_name");
        d.deadAt = timeOf(rows, "dead_at");
        d.version = int(bigIntOf(rows, "version").value_or(0));
        d.claimedBy = textOf(rows, "claimed_by");
        d.claimedAt = timeOf(rows, "claimed_at");
        d.resolution = textOf(rows, "resolution");
        d.resolutionNote = textOf(rows, "resolution_note");
        d.resolvedBy = textOf(rows, "resolved_by");
        d.resolvedAt = timeOf(rows, "resolved_at");
        d.payloadSize = bigIntOf(rows, "payload_size").value_or(0);
        const bool isBytes
            = rows.boolean(0, rows.columnIndex(QStringLiteral("payload_is_bytes"))).value_or(false);
        d.payloadIsJson = !isBytes && d.payloadSize > 0;
        const int preview = rows.columnIndex(QStringLiteral("payload_preview"));
        if (!rows.isNull(0, preview)) {
            d.payload = rows.bytes(0, preview);
            d.payloadComplete = false;
        } else if (isBytes) {
            d.payload = rows.bytes(0, rows.columnIndex(QStringLiteral("payload_bytes")));
        } else {
            d.payload = rows.raw(0, rows.columnIndex(QStringLiteral("payload_text")));
        }
        const int received = rows.columnIndex(QStringLiteral("payload_received"));
        if (!rows.isNull(0, received))
            d.payloadReceived = rows.raw(0, received);
        d.headersText = textOf(rows, "headers_text");
        d.entityId = textOf(rows, "entity_id");
        d.eventSeq = bigIntOf(rows, "event_seq");
        d.eventAt = timeOf(rows, "event_at");
        d.jobState = textOf(rows, "job_state");
        d.jobAttempt = int(bigIntOf(rows, "job_attempt").value_or(0));
        d.maxAttempts = int(bigIntOf(rows, "max_attempts").value_or(0));
        d.lockedBy = textOf(rows, "locked_by");
        d.lockedUntil = timeOf(rows, "locked_until");
        d.runAt = timeOf(rows, "run_at");
        d.jobCreatedAt = timeOf(rows, "job_created_at");
        d.deadlineAt = timeOf(rows, "deadline_at");
        d.source = textOf(rows, "source");
        d.serverNow = timeOf(rows, "server_now");
        m_detail = std::move(d);
        break;
    }
    case Part::Attempts: {
        m_rounds.clear();
        for (int r = 0; r < rows.rowCount(); ++r) {
            Round round;
            round.round = rows.integer(r, QStringLiteral("round")).value_or(r + 1);
            round.requeuedAt = rows.timestamp(r, rows.columnIndex(QStringLiteral("requeued_at")));
            round.requeuedBy = rows.text(r, QStringLiteral("requeued_by"));
            round.actionId = rows.text(r, QStringLiteral("action_id"));
            const int reset = rows.columnIndex(QStringLiteral("reset_attempts"));
            if (!rows.isNull(r, reset))
                round.resetAttempts = rows.boolean(r, reset);
            round.attempts = rows.bigInt(r, QStringLiteral("attempts")).value_or(0);
            round.lastAttemptNo = rows.integer(r, QStringLiteral("last_attempt_no")).value_or(0);
            round.lastOutcome = rows.text(r, QStringLiteral("last_outcome"));
            round.lastErrorClass = rows.text(r, QStringLiteral("last_error_class"));
            m_rounds.append(round);
        }
        request(Part::Timeline);
        break;
    }
    case Part::Timeline: {
        m_attempts.clear();
        m_buckets.clear();
        if (rows.columnIndex(QStringLiteral("bucket")) >= 0) {
            for (int r = 0; r < rows.rowCount(); ++r) {
                AttemptBucket b;
                b.from = rows.timestamp(r, rows.columnIndex(QStringLiteral("bucket_from")));
                b.until = rows.timestamp(r, rows.columnIndex(QStringLiteral("bucket_until")));
                b.outcome = rows.text(r, QStringLiteral("outcome"));
                b.errorClass = rows.text(r, QStringLiteral("error_class"));
                b.attempts = rows.bigInt(r, QStringLiteral("attempts")).value_or(0);
                m_buckets.append(b);
            }
            break;
        }
        const int cId = rows.columnIndex(QStringLiteral("id"));
        const int cNo = rows.columnIndex(QStringLiteral("attempt_no"));
        const int cStarted = rows.columnIndex(QStringLiteral("started_at"));
        const int cFinished = rows.columnIndex(QStringLiteral("finished_at"));
        const int cDuration = rows.columnIndex(QStringLiteral("duration_ms"));
        const int cOutcome = rows.columnIndex(QStringLiteral("outcome"));
        const int cClass = rows.columnIndex(QStringLiteral("error_class"));
        const int cCode = rows.columnIndex(QStringLiteral("error_code"));
        const int cMessage = rows.columnIndex(QStringLiteral("message"));
        const int cStack = rows.columnIndex(QStringLiteral("stack_trace"));
        const int cWorker = rows.columnIndex(QStringLiteral("worker_id"));
        const int cBackoff = rows.columnIndex(QStringLiteral("backoff_ms"));
        for (int r = 0; r < rows.rowCount(); ++r) {
            Attempt a;
            a.id = rows.bigInt(r, cId).value_or(0);
            a.attemptNo = rows.integer(r, cNo).value_or(0);
            a.startedAt = rows.timestamp(r, cStarted);
            a.finishedAt = rows.timestamp(r, cFinished);
            a.durationMs = rows.bigInt(r, cDuration);
            a.outcome = rows.text(r, cOutcome);
            a.errorClass = rows.text(r, cClass);
            a.errorCode = rows.text(r, cCode);
            a.message = rows.text(r, cMessage);
            a.stackTrace = rows.text(r, cStack);
            a.workerId = rows.text(r, cWorker);
            a.backoffMs = rows.bigInt(r, cBackoff);
            m_attempts.append(a);
        }
        break;
    }
    case Part::IdempotencyKey: {
        if (rows.rowCount() == 0) {
            m_keyRecord.reset();
            break;
        }
        KeyRecord k;
        k.scope = textOf(rows, "scope");
        k.key = textOf(rows, "key");
        k.requestHash = textOf(rows, "request_hash");
        k.state = textOf(rows, "state");
        k.lockedBy = textOf(rows, "locked_by");
        k.lockedUntil = timeOf(rows, "locked_until");
        k.resultText = textOf(rows, "result_text");
        k.errorMessage = textOf(rows, "error_message");
        k.conflictingHash = textOf(rows, "conflicting_hash");
        k.conflictCount = int(bigIntOf(rows, "conflict_count").value_or(0));
        k.lastConflictAt = timeOf(rows, "last_conflict_at");
        k.createdAt = timeOf(rows, "created_at");
        k.updatedAt = timeOf(rows, "updated_at");
        k.expiresAt = timeOf(rows, "expires_at");
        k.version = int(bigIntOf(rows, "version").value_or(0));
        k.stuck = rows.boolean(0, rows.columnIndex(QStringLiteral("stuck"))).value_or(false);
        m_keyRecord = std::move(k);
        break;
    }
    case Part::Mismatches:
        m_mismatchesModel->setResult(rows);
        break;
    case Part::Outbox:
        m_outboxModel->setResult(rows);
        break;
    case Part::Audit:
        m_auditModel->setResult(rows);
        break;
    case Part::Verdict: {
        m_verdict.clear();
        for (int r = 0; r < rows.rowCount(); ++r) {
            m_verdict.append({ severityFromText(rows.text(r, QStringLiteral("severity"))),
                               rows.text(r, QStringLiteral("code")),
                               rows.text(r, QStringLiteral("explanation")) });
        }
        // The statement orders worst first; keep that promise even if a source does not.
        std::stable_sort(m_verdict.begin(), m_verdict.end(),
                         [](const VerdictReason &a, const VerdictReason &b) {
                             return int(a.severity) > int(b.severity);
                         });
        break;
    }
    case Part::FullPayload: {
        m_fullPayloadPending = false;
        if (rows.rowCount() == 0) {
            m_failed[std::size_t(part)] = true;
            Q_EMIT failed(
                part,
                db::DbError(db::ErrorKind::Other, tr("Dead letter #%1 does not exist.").arg(m_id)));
            return;
        }
        const int text = rows.columnIndex(QStringLiteral("payload_text"));
        const bool isJson = !rows.isNull(0, text);
        m_fullPayload = isJson ? rows.raw(0, text)
                               : rows.bytes(0, rows.columnIndex(QStringLiteral("payload_bytes")));
        Q_EMIT fullPayloadLoaded(m_fullPayload, isJson);
        return;
    }
    }
    Q_EMIT partLoaded(part);
}

DeadLetterCase::Severity DeadLetterCase::worstSeverity() const
{
    Severity worst = Severity::Ok;
    for (const VerdictReason &r : m_verdict)
        worst = std::max(worst, r.severity);
    return worst;
}

void DeadLetterCase::setShowUtc(bool utc)
{
    m_attemptsModel->setShowUtc(utc);
    for (ResultTableModel *m : { m_mismatchesModel, m_outboxModel, m_auditModel })
        m->setShowUtc(utc);
}

qint64 DeadLetterCase::attemptCount() const
{
    qint64 n = 0;
    for (const Round &r : m_rounds)
        n += r.attempts;
    return n;
}

QString DeadLetterCase::story(bool showUtc) const
{
    if (m_rounds.isEmpty() || !m_detail)
        return {};
    QStringList parts;
    for (qsizetype i = 0; i < m_rounds.size(); ++i) {
        const Round &r = m_rounds.at(i);
        const bool last = i + 1 == m_rounds.size();
        if (r.round > 1) {
            QString requeue = tr("requeued by %1 at %2")
                                  .arg(r.requeuedBy, display::time(r.requeuedAt, showUtc));
            if (r.resetAttempts)
                requeue += *r.resetAttempts ? tr(" (attempt counter reset)")
                                            : tr(" (attempt counter kept)");
            parts << requeue;
        }
        // How the round ended: success, or why it went dead. A finished round's reason is read
        // from its last attempt (a permanent or ambiguous error, else the attempts ran out); the
        // current round's is the dead letter's own while it is dead.
        QString ending;
        if (r.attempts == 0)
            ending = tr("no attempt yet");
        else if (r.lastOutcome == QLatin1String("succeeded"))
            ending = r.attempts == 1 ? tr("attempt 1 succeeded")
                                     : tr("%1 attempts, the last succeeded").arg(r.attempts);
        else {
            QString why;
            if (last && m_detail->status == QLatin1String("open"))
                why = m_detail->reason;
            else if (last)
                why = tr("last %1").arg(r.lastOutcome);
            else if (r.lastErrorClass == QLatin1String("permanent")
                     || r.lastErrorClass == QLatin1String("ambiguous"))
                why = r.lastErrorClass;
            else
                why = QStringLiteral("exhausted");
            ending = (r.attempts == 1 ? tr("1 attempt") : tr("%1 attempts").arg(r.attempts))
                + QStringLiteral(", ") + why;
        }
        parts << tr("round %1: %2").arg(r.round).arg(ending);
    }
    return parts.join(QStringLiteral("; "));
}

DeadLetterCase::Severity DeadLetterCase::severityFromText(const QString &text)
{
    if (text == QLatin1String("block"))
        return Severity::Block;
    if (text == QLatin1String("warn"))
        return Severity::Warn;
    return Severity::Ok;
}

} // namespace redrive
