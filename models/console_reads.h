// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/db_expected.h"
#include "models/db/result_set.h"

#include <QDateTime>
#include <QString>
#include <QStringList>
#include <QTimeZone>
#include <functional>
#include <optional>

class QObject;

namespace redrive {

namespace db {
class DatabaseSession;
}
class DeadLetterFilter;

/// The reads a view asks for that are not a table model of their own: one function per named
/// statement (resources/sql/), each run through the session off the GUI thread. Views ask
/// here; only models/ run statements (docs/architecture.md#layers, checked by the layering
/// test). `done` runs on the session's thread with the value or the server's error, unless
/// `context` was destroyed meanwhile. Results that stay a ResultSet are read by column name.
namespace reads {

template<class T>
using Done = std::function<void(const db::DbExpected<T> &)>;

// --- The console's start-up --------------------------------------------------------------

/// The Redrive schema version the database holds: 0 when it has no Redrive schema at all.
void schemaVersion(db::DatabaseSession *session, QObject *context, Done<int> done);

/// Who the console is logged in as: the login role and the Redrive roles it holds
/// (redrive_oncall, redrive_support, …; docs/security.md#roles).
struct SessionRoles
{
    QString login;
    QStringList redriveRoles;
};
void sessionRoles(db::DatabaseSession *session, QObject *context, Done<SessionRoles> done);

/// The queues and kinds the filter bar offers (background work: DatabaseSession::Priority).
struct DeadLetterFacets
{
    QStringList queues;
    QStringList kinds;
};
void deadLetterFacets(db::DatabaseSession *session, QObject *context, Done<DeadLetterFacets> done);

/// One source a console can show (source_list.sql): Redrive's own tables or a job queue whose
/// adapter is installed.
struct Source
{
    QString label;
    QString searchPath; ///< the connection's search_path that reads this source
    QStringList capabilities; ///< actions beyond the common ones, e.g. release_stuck
    QDateTime historyStartsAt; ///< where captured attempt history starts (UTC); invalid: always
    /// False when a queue source's capture trigger or views are missing (its schema was dropped
    /// and recreated): history has stopped until `redrive install-source` reinstalls it.
    bool captureActive = true;
};
/// The sources, native first.
void sources(db::DatabaseSession *session, QObject *context, Done<QList<Source>> done);

// --- Overview ------------------------------------------------------------------------------

/// The id of the dead letter of job `jobRef` (dead_letter_list.job_ref: the native job id or the
/// queue's own job id, as text), or std::nullopt when the job has none (it has not failed for
/// good). Interactive.
void deadLetterOfJob(db::DatabaseSession *session, QObject *context, const QString &jobRef,
                     Done<std::optional<qint64>> done);

/// The database server's clock now (UTC): "ending now" on a chart means the server's now.
void serverClock(db::DatabaseSession *session, QObject *context, Done<QDateTime> done);

/// The overview's time charts.
enum class OverviewChart { DeadLettersByClass, AttemptOutcomes, OpenResolved };
/// The buckets of `chart` from `from` to `to`, each `widthMs` wide (a whole number of minutes:
/// the rollups of migration 18 count per minute and per hour), cut in `zone` as
/// time_buckets::starts() cuts them (a width of whole hours follows the zone's wall clock, so a
/// day is a local day); `from` a bucket start, `to` a bucket end. Rows: bucket start (an
/// instant), then the chart's series. Background work (DatabaseSession::Priority).
void overviewBuckets(db::DatabaseSession *session, QObject *context, OverviewChart chart,
                     qint64 widthMs, const QDateTime &from, const QDateTime &to,
                     const QTimeZone &zone, Done<db::ResultSet> done);
/// The `limit` largest failure groups among the dead letters `filter` selects
/// (failure_groups.sql; a text filter counts at most FailureGroupModel::kSearchSample of its
/// matches). Background work (DatabaseSession::Priority).
void failureGroups(db::DatabaseSession *session, QObject *context, const DeadLetterFilter &filter,
                   int limit, Done<db::ResultSet> done);

// --- After an action --------------------------------------------------------------------

/// Where the dead letters of a requeue went (requeue_follow_up.sql), counted by the server now.
struct RequeueFollowUp
{
    qint64 waiting = 0; ///< requeued, the worker has not carried the requeue out yet
    qint64 inFlight = 0; ///< requeued and carried out: the job is queued or running again
    qint64 requeueFailed = 0; ///< the worker could not carry the requeue out
    qint64 succeeded = 0; ///< resolved: succeeded after the requeue
    qint64 deadAgain = 0; ///< open again: the job failed again
    qint64 elsewhere = 0; ///< changed otherwise since (resolved by hand, compensation, ...)
    /// Nothing of the requeue is still on its way.
    bool settled() const { return waiting == 0 && inFlight == 0; }
};
/// Where dead letters `ids` (the targets a requeue applied to) are now.
void requeueFollowUp(db::DatabaseSession *session, QObject *context, const QList<qint64> &ids,
                     Done<RequeueFollowUp> done);

/// Who last changed a dead letter and when (dead_letter_last_change.sql): the newest audit
/// entry that applied a change to it.
struct LastChange
{
    qint64 id = 0; ///< the dead letter
    QString action; ///< the audit entry's action, e.g. "resolve", "worker_dead_again"
    QString login; ///< the database login that made the change
    QDateTime at; ///< when (UTC)
    qint64 ageSeconds = 0; ///< how long ago by the server's clock
};
/// The last change of each of `ids` that an audit entry records; ids without one are left out.
void lastChanges(db::DatabaseSession *session, QObject *context, const QList<qint64> &ids,
                 Done<QList<LastChange>> done);

// --- Audit log -----------------------------------------------------------------------------

/// Up to `limit` actors that appear in the audit log, most recent first.
void auditActors(db::DatabaseSession *session, QObject *context, int limit, Done<QStringList> done);
/// Audit entry `id` with its before/after (audit_entry_detail.sql); no row when it is gone.
void auditEntryDetail(db::DatabaseSession *session, QObject *context, qint64 id,
                      Done<db::ResultSet> done);

// --- Compensation and the dead letter behind it --------------------------------------------

/// Compensation request `requestId` with its payment and target (compensation_context.sql).
void compensationContext(db::DatabaseSession *session, QObject *context, qint64 requestId,
                         Done<db::ResultSet> done);
/// The payment behind dead letter `deadLetterId` and what is still refundable, in minor units
/// (compensation_target.sql).
void compensationTarget(db::DatabaseSession *session, QObject *context, qint64 deadLetterId,
                        Done<db::ResultSet> done);
/// What a refund from reconciliation mismatch `mismatchId` would act on: both provider charges,
/// the default and largest amount, the currency's threshold (mismatch_compensation_target.sql).
void mismatchCompensationTarget(db::DatabaseSession *session, QObject *context, qint64 mismatchId,
                                Done<db::ResultSet> done);
/// Every compensation request of payment `paymentRef`, oldest first (payment_compensations.sql).
void paymentCompensations(db::DatabaseSession *session, QObject *context, const QString &paymentRef,
                          Done<db::ResultSet> done);
/// Every attempt of dead letter `deadLetterId`, oldest first (attempt_history.sql).
void attemptHistory(db::DatabaseSession *session, QObject *context, qint64 deadLetterId,
                    Done<db::ResultSet> done);
/// The reconciliation mismatches of the payment behind dead letter `deadLetterId`.
void deadLetterMismatches(db::DatabaseSession *session, QObject *context, qint64 deadLetterId,
                          Done<db::ResultSet> done);

/// Dead letter `deadLetterId` as the action preview shows it (version, status, queue, kind,
/// verdict and its reasons); no row when it does not exist.
void deadLetterPreview(db::DatabaseSession *session, QObject *context, qint64 deadLetterId,
                       Done<db::ResultSet> done);
/// The payload of dead letter `deadLetterId`: column 0 the JSON text, NULL when it is bytes.
void deadLetterPayload(db::DatabaseSession *session, QObject *context, qint64 deadLetterId,
                       Done<db::ResultSet> done);

} // namespace reads
} // namespace redrive
