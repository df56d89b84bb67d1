// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/db/sql_statement.h"

#include <QFile>
#include <QHash>
#include <QMutex>
#include <QRegularExpression>
#include <QSet>
#include <iterator>

namespace redrive::db {

namespace {

struct Source
{
    Statement statement;
    const char *file; ///< resources/sql/<file>.sql
    const char *sortColumn; ///< fills {{sort_column}}, or nullptr
    const char *name;
};

// One row per statement, in enum order (checked by tst_sql_statements through allStatements()).
constexpr Source kSources[] = {
    { Statement::SessionRoles, "session_roles", nullptr, "session_roles" },
    { Statement::DeadLetterPageNewest, "dead_letter_page_newest", nullptr,
      "dead_letter_page_newest" },
    { Statement::DeadLetterPageOldest, "dead_letter_page_oldest", nullptr,
      "dead_letter_page_oldest" },
    { Statement::DeadLetterPageByStatus, "dead_letter_page_by_column", "status",
      "dead_letter_page_by_status" },
    { Statement::DeadLetterPageByQueue, "dead_letter_page_by_column", "queue",
      "dead_letter_page_by_queue" },
    { Statement::DeadLetterPageByKind, "dead_letter_page_by_column", "kind",
      "dead_letter_page_by_kind" },
    { Statement::DeadLetterPageByErrorClass, "dead_letter_page_by_column", "error_class",
      "dead_letter_page_by_error_class" },
    { Statement::DeadLetterCount, "dead_letter_count", nullptr, "dead_letter_count" },
    { Statement::DeadLetterEstimate, "dead_letter_estimate", nullptr, "dead_letter_estimate" },
    { Statement::DeadLetterNewerCount, "dead_letter_newer_count", nullptr,
      "dead_letter_newer_count" },
    { Statement::FailureGroups, "failure_groups", nullptr, "failure_groups" },
    { Statement::FailureGroupVerdicts, "failure_group_verdicts", nullptr,
      "failure_group_verdicts" },
    { Statement::DeadLetterFacets, "dead_letter_facets", nullptr, "dead_letter_facets" },
    { Statement::DeadLetterDetail, "dead_letter_detail", nullptr, "dead_letter_detail" },
    { Statement::DeadLetterPayload, "dead_letter_payload", nullptr, "dead_letter_payload" },
    { Statement::AttemptHistory, "attempt_history", nullptr, "attempt_history" },
    { Statement::DeadLetterIdempotencyKey, "dead_letter_idempotency_key", nullptr,
      "dead_letter_idempotency_key" },
    { Statement::DeadLetterMismatches, "dead_letter_mismatches", nullptr,
      "dead_letter_mismatches" },
    { Statement::DeadLetterOutbox, "dead_letter_outbox", nullptr, "dead_letter_outbox" },
    { Statement::DeadLetterAudit, "dead_letter_audit", nullptr, "dead_letter_audit" },
    { Statement::DeadLetterLastChange, "dead_letter_last_change", nullptr,
      "dead_letter_last_change" },
    { Statement::RetryVerdict, "retry_verdict", nullptr, "retry_verdict" },
    { Statement::StuckKeys, "stuck_keys", nullptr, "stuck_keys" },
    { Statement::KeyConflicts, "key_conflicts", nullptr, "key_conflicts" },
    { Statement::IdempotencyKeyPage, "idempotency_key_page", nullptr, "idempotency_key_page" },
    { Statement::ReconciliationRuns, "reconciliation_runs", nullptr, "reconciliation_runs" },
    { Statement::MismatchPage, "mismatch_page", nullptr, "mismatch_page" },
    { Statement::MismatchCounts, "mismatch_counts", nullptr, "mismatch_counts" },
    { Statement::OverviewDeadLettersByClass, "overview_dead_letters_by_class", nullptr,
      "overview_dead_letters_by_class" },
    { Statement::OverviewAttemptOutcomes, "overview_attempt_outcomes", nullptr,
      "overview_attempt_outcomes" },
    { Statement::OverviewOpenResolved, "overview_open_resolved", nullptr,
      "overview_open_resolved" },
    { Statement::SchemaPresence, "schema_presence", nullptr, "schema_presence" },
    { Statement::SchemaVersion, "schema_version", nullptr, "schema_version" },
    { Statement::ActionRequeue, "action_requeue", nullptr, "action_requeue" },
    { Statement::ActionEditAndRequeue, "action_edit_and_requeue", nullptr,
      "action_edit_and_requeue" },
    { Statement::ActionResolve, "action_resolve", nullptr, "action_resolve" },
    { Statement::ActionClaim, "action_claim", nullptr, "action_claim" },
    { Statement::ActionNote, "action_note", nullptr, "action_note" },
    { Statement::ActionReleaseKey, "action_release_key", nullptr, "action_release_key" },
    { Statement::ActionResolveMismatch, "action_resolve_mismatch", nullptr,
      "action_resolve_mismatch" },
    { Statement::ActionRequestCompensation, "action_request_compensation", nullptr,
      "action_request_compensation" },
    { Statement::ActionDecideCompensation, "action_decide_compensation", nullptr,
      "action_decide_compensation" },
    { Statement::ActionFreezeBulk, "action_freeze_bulk", nullptr, "action_freeze_bulk" },
    { Statement::CompensationList, "compensation_list", nullptr, "compensation_list" },
    { Statement::AuditEntries, "audit_entries", nullptr, "audit_entries" },
    { Statement::VerifyAuditChain, "verify_audit_chain", nullptr, "verify_audit_chain" },
    { Statement::AuditChainHead, "audit_chain_head", nullptr, "audit_chain_head" },
    { Statement::ActionPreview, "action_preview", nullptr, "action_preview" },
    { Statement::RequeueFollowUp, "requeue_follow_up", nullptr, "requeue_follow_up" },
    { Statement::CompensationTarget, "compensation_target", nullptr, "compensation_target" },
    { Statement::AuditEntryPage, "audit_entry_page", nullptr, "audit_entry_page" },
    { Statement::AuditEntryCount, "audit_entry_count", nullptr, "audit_entry_count" },
    { Statement::AuditEntryDetail, "audit_entry_detail", nullptr, "audit_entry_detail" },
    { Statement::AuditExportPage, "audit_export_page", nullptr, "audit_export_page" },
    { Statement::AuditActors, "audit_actors", nullptr, "audit_actors" },
    { Statement::CompensationContext, "compensation_context", nullptr, "compensation_context" },
    { Statement::SourceList, "source_list", nullptr, "source_list" },
    { Statement::ActionReleaseStuckJobs, "action_release_stuck", nullptr, "action_release_stuck" },
    { Statement::ServerClock, "server_clock", nullptr, "server_clock" },
    { Statement::ApprovalPolicy, "approval_policy", nullptr, "approval_policy" },
    { Statement::AuditChainRows, "audit_chain_rows", nullptr, "audit_chain_rows" },
    { Statement::AuditChainCount, "audit_chain_count", nullptr, "audit_chain_count" },
    { Statement::FindMentions, "find_mentions", nullptr, "find_mentions" },
    { Statement::BulkActionList, "bulk_action_list", nullptr, "bulk_action_list" },
    { Statement::BulkBeginRun, "bulk_begin_run", nullptr, "bulk_begin_run" },
    { Statement::BulkEndRun, "bulk_end_run", nullptr, "bulk_end_run" },
    { Statement::ActionTakeOverBulk, "action_take_over_bulk", nullptr, "action_take_over_bulk" },
    { Statement::ActionAbandonBulk, "action_abandon_bulk", nullptr, "action_abandon_bulk" },
    { Statement::ExpiredLeases, "expired_leases", nullptr, "expired_leases" },
    { Statement::MismatchCompensationTarget, "mismatch_compensation_target", nullptr,
      "mismatch_compensation_target" },
    { Statement::PaymentCompensations, "payment_compensations", nullptr, "payment_compensations" },
    { Statement::ActionRequestMismatchCompensation, "action_request_mismatch_compensation", nullptr,
      "action_request_mismatch_compensation" },
    { Statement::AttemptRounds, "attempt_rounds", nullptr, "attempt_rounds" },
    { Statement::AttemptHistoryPage, "attempt_history_page", nullptr, "attempt_history_page" },
    { Statement::AttemptHistoryCount, "attempt_history_count", nullptr, "attempt_history_count" },
    { Statement::AttemptWholeText, "attempt_whole_text", nullptr, "attempt_whole_text" },
    { Statement::AttemptText, "attempt_text", nullptr, "attempt_text" },
    { Statement::AttemptTimelineBuckets, "attempt_timeline_buckets", nullptr,
      "attempt_timeline_buckets" },
    // The frozen pass's keys share one template; {{sort_column}} is the whole compiled-in order.
    { Statement::DeadLetterKeysNewest, "dead_letter_keys", "d.dead_at DESC, d.id DESC",
      "dead_letter_keys_newest" },
    { Statement::DeadLetterKeysOldest, "dead_letter_keys", "d.dead_at ASC, d.id ASC",
      "dead_letter_keys_oldest" },
    { Statement::DeadLetterKeysByStatus, "dead_letter_keys", "d.status, d.dead_at DESC, d.id DESC",
      "dead_letter_keys_by_status" },
    { Statement::DeadLetterKeysByQueue, "dead_letter_keys", "d.queue, d.dead_at DESC, d.id DESC",
      "dead_letter_keys_by_queue" },
    { Statement::DeadLetterKeysByKind, "dead_letter_keys", "d.kind, d.dead_at DESC, d.id DESC",
      "dead_letter_keys_by_kind" },
    { Statement::DeadLetterKeysByErrorClass, "dead_letter_keys",
      "d.error_class, d.dead_at DESC, d.id DESC", "dead_letter_keys_by_error_class" },
    { Statement::DeadLetterRows, "dead_letter_rows", nullptr, "dead_letter_rows" },
    { Statement::DeadLetterWholeError, "dead_letter_whole_error", nullptr,
      "dead_letter_whole_error" },
    { Statement::IdempotencyKeyKeys, "idempotency_key_keys", nullptr, "idempotency_key_keys" },
    { Statement::IdempotencyKeyRows, "idempotency_key_rows", nullptr, "idempotency_key_rows" },
    { Statement::DeadLetterOfJob, "dead_letter_of_job", nullptr, "dead_letter_of_job" },
    // Partitions (docs/architecture.md#partitions).
    { Statement::MaintainPartitions, "maintain_partitions", nullptr, "maintain_partitions" },
    // Retention (docs/architecture.md#retention).
    { Statement::ArchiveCandidates, "archive_candidates", nullptr, "archive_candidates" },
    { Statement::ArchiveDeadLetters, "archive_dead_letters", nullptr, "archive_dead_letters" },
    { Statement::AuditDetachMonth, "audit_detach_month", nullptr, "audit_detach_month" },
};

const Source &sourceOf(Statement statement)
{
    for (const Source &s : kSources)
        if (s.statement == statement)
            return s;
    static const Source none { statement, "", nullptr, "" };
    return none;
}

QByteArray readResource(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

QByteArray expand(const Source &source)
{
    QByteArray sql = readResource(QStringLiteral(":/sql/%1.sql").arg(QLatin1String(source.file)));
    if (sql.isEmpty())
        return {};
    if (source.sortColumn)
        sql.replace("{{sort_column}}", source.sortColumn);
    static const QRegularExpression include(QStringLiteral(R"(\{\{([a-z_]+)\}\})"));
    QString text = QString::fromUtf8(sql);
    QRegularExpressionMatch m;
    while ((m = include.match(text)).hasMatch()) {
        const QByteArray fragment
            = readResource(QStringLiteral(":/sql/fragments/%1.sql").arg(m.captured(1)));
        if (fragment.isEmpty())
            return {}; // a missing fragment makes the whole statement missing
        text.replace(m.capturedStart(), m.capturedLength(), QString::fromUtf8(fragment).trimmed());
    }
    return text.toUtf8();
}

} // namespace

QList<Statement> allStatements()
{
    QList<Statement> out;
    out.reserve(qsizetype(std::size(kSources)));
    for (const Source &s : kSources)
        out << s.statement;
    return out;
}

QString statementName(Statement statement)
{
    return QString::fromLatin1(sourceOf(statement).name);
}

QByteArray statementSql(Statement statement)
{
    static QMutex mutex;
    static QHash<Statement, QByteArray> cache;
    QMutexLocker lock(&mutex);
    auto it = cache.constFind(statement);
    if (it != cache.constEnd())
        return *it;
    const QByteArray sql = expand(sourceOf(statement));
    cache.insert(statement, sql);
    return sql;
}

// --- Reading from a standby (docs/architecture.md#reading-from-a-standby) ----------------------

bool statementRunsOnPrimary(Statement statement)
{
    switch (statement) {
    case Statement::ActionRequeue:
    case Statement::ActionEditAndRequeue:
    case Statement::ActionResolve:
    case Statement::ActionClaim:
    case Statement::ActionNote:
    case Statement::ActionReleaseKey:
    case Statement::ActionResolveMismatch:
    case Statement::ActionRequestCompensation:
    case Statement::ActionDecideCompensation:
    case Statement::ActionFreezeBulk:
    case Statement::ActionReleaseStuckJobs:
    case Statement::ActionTakeOverBulk:
    case Statement::ActionAbandonBulk:
    case Statement::ActionRequestMismatchCompensation:
    case Statement::BulkActionList:
    case Statement::BulkBeginRun:
    case Statement::BulkEndRun:
    case Statement::VerifyAuditChain:
    case Statement::AuditChainHead:
    case Statement::AuditExportPage:
    case Statement::AuditChainRows:
    case Statement::AuditChainCount:
    case Statement::MaintainPartitions:
    case Statement::ArchiveCandidates:
    case Statement::ArchiveDeadLetters:
    case Statement::AuditDetachMonth:
        return true;
    default:
        return false;
    }
}

bool sqlRunsOnPrimary(const QByteArray &sql)
{
    static const QSet<QByteArray> onPrimary = [] {
        QSet<QByteArray> out;
        for (const Statement s : allStatements())
            if (statementRunsOnPrimary(s))
                out.insert(statementSql(s));
        return out;
    }();
    return onPrimary.contains(sql);
}

} // namespace redrive::db
