// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QList>
#include <QString>

namespace redrive::db {

/// Named SQL statements kept as .sql files under resources/sql/ and compiled in
/// (docs/architecture.md#named-statements): a misspelt name is a compile error, and
/// tst_sql_statements PREPAREs every one against the real schema. A file may include a fragment
/// from resources/sql/fragments/ as {{name}}; statements that differ only in their sort column
/// share one template whose {{sort_column}} is filled from this fixed list, never from operator
/// input. Read-contract names in them are unqualified: the session's search_path picks the source.
enum class Statement {
    SessionRoles, ///< login role and the Redrive roles it holds
    DeadLetterPageNewest, ///< keyset page, dead_at DESC
    DeadLetterPageOldest, ///< keyset page, dead_at ASC
    DeadLetterPageByStatus, ///< keyset page, status then dead_at DESC
    DeadLetterPageByQueue, ///< keyset page, queue then dead_at DESC
    DeadLetterPageByKind, ///< keyset page, kind then dead_at DESC
    DeadLetterPageByErrorClass, ///< keyset page, error_class then dead_at DESC
    DeadLetterCount, ///< exact count up to a cap
    DeadLetterEstimate, ///< planner estimate (EXPLAIN)
    DeadLetterNewerCount, ///< rows newer than the newest shown
    FailureGroups, ///< failure groups with counts
    FailureGroupVerdicts, ///< safe-to-retry verdicts of listed groups, sampled beyond a cap
    DeadLetterFacets, ///< distinct queues and kinds
    DeadLetterDetail, ///< one dead letter with a payload preview
    DeadLetterPayload, ///< the full payload
    AttemptHistory, ///< attempts of a dead letter's job
    DeadLetterIdempotencyKey, ///< the job's idempotency-key record
    DeadLetterMismatches, ///< mismatches for the job's payment
    DeadLetterOutbox, ///< outbox commands for it
    DeadLetterAudit, ///< audit entries naming it
    DeadLetterLastChange, ///< who last changed each of a set of dead letters, and when
    RetryVerdict, ///< is it safe to retry?
    StuckKeys, ///< keys processing past their lease
    KeyConflicts, ///< keys that saw another request hash
    IdempotencyKeyPage, ///< keyset page of keys
    ReconciliationRuns, ///< latest runs
    MismatchPage, ///< keyset page of mismatches
    MismatchCounts, ///< mismatches per kind
    OverviewDeadLettersByClass, ///< buckets by error class
    OverviewAttemptOutcomes, ///< buckets by attempt outcome
    OverviewOpenResolved, ///< buckets arrived vs resolved
    SchemaPresence, ///< is there a Redrive schema
    SchemaVersion, ///< its version
    ActionRequeue, ///< action_requeue.sql
    ActionEditAndRequeue, ///< action_edit_and_requeue.sql
    ActionResolve, ///< action_resolve.sql
    ActionClaim, ///< action_claim.sql
    ActionNote, ///< action_note.sql
    ActionReleaseKey, ///< action_release_key.sql
    ActionResolveMismatch, ///< action_resolve_mismatch.sql
    ActionRequestCompensation, ///< action_request_compensation.sql
    ActionDecideCompensation, ///< action_decide_compensation.sql
    ActionFreezeBulk, ///< action_freeze_bulk.sql
    CompensationList, ///< compensation_list.sql
    AuditEntries, ///< audit_entries.sql
    VerifyAuditChain, ///< verify_audit_chain.sql
    AuditChainHead, ///< audit_chain_head.sql
    ActionPreview, ///< targets of an action with their retry verdicts
    RequeueFollowUp, ///< where the dead letters of a requeue went
    CompensationTarget, ///< the payment a compensation would refund
    AuditEntryPage, ///< keyset page of audit entries, filtered (audit view)
    AuditEntryCount, ///< audit entries matching a filter, up to a cap
    AuditEntryDetail, ///< one audit entry in full
    AuditExportPage, ///< a page of an audit export, oldest first, up to the chain head
    AuditActors, ///< distinct actors of the audit log
    CompensationContext, ///< a compensation request with its target and what is refundable
    SourceList, ///< installed sources and the search_path of each
    ActionReleaseStuckJobs, ///< action_release_stuck.sql (sources with release_stuck)
    ServerClock, ///< the server's clock_timestamp()
    ApprovalPolicy, ///< the compensation approval threshold (minor units)
    AuditChainRows, ///< the raw columns of every audit entry in id order, for the client verifier
    AuditChainCount, ///< how many audit entries there are (the client verifier's progress)
    FindMentions, ///< dead letters, mismatches, compensations, audit entries mentioning a term
    BulkActionList, ///< unfinished bulk actions with their progress (the caller's or everyone's)
    BulkBeginRun, ///< take a bulk's run lock and read its frozen list and chunks done
    BulkEndRun, ///< give back a bulk's run lock
    ActionTakeOverBulk, ///< action_take_over_bulk.sql
    ActionAbandonBulk, ///< action_abandon_bulk.sql
    ExpiredLeases, ///< running jobs whose lease expired, whatever their idempotency key
    MismatchCompensationTarget, ///< what a compensation from a mismatch would refund
    PaymentCompensations, ///< every compensation request of one payment
    ActionRequestMismatchCompensation, ///< action_request_mismatch_compensation.sql
    AttemptRounds, ///< the rounds of a retry history, one per requeue plus one
    AttemptHistoryPage, ///< keyset page of attempts and requeue markers, newest first
    AttemptHistoryCount, ///< a dead letter's attempts, up to a cap
    AttemptWholeText, ///< the whole message and stack trace of the given attempts
    AttemptText, ///< what the attempt pane shows of one attempt's message and stack trace
    AttemptTimelineBuckets, ///< attempts counted in time buckets for the timeline
    DeadLetterKeysNewest, ///< the frozen pass's ids, dead_at DESC (docs/architecture.md)
    DeadLetterKeysOldest, ///< the frozen pass's ids, dead_at ASC
    DeadLetterKeysByStatus, ///< the frozen pass's ids, status then dead_at DESC
    DeadLetterKeysByQueue, ///< the frozen pass's ids, queue then dead_at DESC
    DeadLetterKeysByKind, ///< the frozen pass's ids, kind then dead_at DESC
    DeadLetterKeysByErrorClass, ///< the frozen pass's ids, error_class then dead_at DESC
    DeadLetterRows, ///< the list's rows of the given ids, in the order given
    DeadLetterWholeError, ///< the whole last error of the given dead letters
    IdempotencyKeyKeys, ///< the frozen pass's (scope, key) pairs, most recently changed first
    IdempotencyKeyRows, ///< the keys list's rows of the given (scope, key) pairs, in that order
    DeadLetterOfJob, ///< the dead letter of one job, by the source's job reference
    // Partitions (docs/architecture.md#partitions).
    MaintainPartitions, ///< `redrive maintain`: create the coming months' partitions
    // Retention (docs/architecture.md#retention).
    ArchiveCandidates, ///< `redrive archive`: the next dead letters that may go, with their lines
    ArchiveDeadLetters, ///< `redrive archive`: remove exactly the exported dead letters, audited
    AuditDetachMonth, ///< `redrive audit-detach`: record a month's end head and detach it
    // Add new statements above this line, and a row at the end of kSources in the .cpp.
    Count ///< the number of statements; not a statement
};

/// Every statement, for tests that prepare them all.
QList<Statement> allStatements();
/// A stable name, e.g. "dead_letter_page_newest" (the file, or the template and its column).
QString statementName(Statement statement);
/// The SQL text with fragments expanded; empty if a resource is missing (the tests catch it).
QByteArray statementSql(Statement statement);

// --- Reading from a standby (docs/architecture.md#reading-from-a-standby) ----------------------

/// True when `statement` must run on the primary even when reads go to a hot standby: every
/// action function (it writes), the bulk run lock and the list that shows who holds it (a
/// session lock lives on the primary only), and the audit chain's verification and export (the
/// primary's chain is the one that counts). Everything else reads and may run on a standby.
bool statementRunsOnPrimary(Statement statement);
/// statementRunsOnPrimary() for the SQL text of a statement, as DatabaseSession receives it;
/// false for SQL that is no named statement.
bool sqlRunsOnPrimary(const QByteArray &sql);

} // namespace redrive::db
