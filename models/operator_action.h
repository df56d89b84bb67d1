// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/db_expected.h"
#include "models/db/query_params.h"
#include "models/db/sql_statement.h"

#include <QJsonObject>
#include <QString>
#include <QUuid>
#include <functional>

class QObject;

namespace redrive {

namespace db {
class DatabaseSession;
}

/// One operator action ready to run: the action function's statement and its parameters, the
/// action id first (docs/domain.md#a-repeated-action-id-changes-nothing: the same id replayed
/// changes nothing), and that id as the reference the audit log shows. Built by the factory
/// functions below, which are the one place that knows each action function's parameter order;
/// views never bind parameters of an action themselves (docs/architecture.md#layers).
struct OperatorAction
{
    db::Statement statement;
    db::QueryParams params;
    QUuid actionId;

    /// The action id as the audit log prints it (no braces).
    QString reference() const { return actionId.toString(QUuid::WithoutBraces); }

    /// The login name of the person at this computer ($USER, $LOGNAME, $USERNAME, else the
    /// process's account), sent with every action and recorded in the audit entry as "reported
    /// by client": the database cannot check it (docs/security.md).
    static QString osUser();

    /// Claim (or, with `release`, release a claim on) the frozen targets, `targetsJson` as
    /// BulkActionRunner::targetsJson() writes it (id and version per dead letter).
    static OperatorAction claim(const QByteArray &targetsJson, bool release, const QString &reason);
    /// A note on dead letter `deadLetterId`, kept in the audit log.
    static OperatorAction note(qint64 deadLetterId, const QString &text);
    /// Release the stuck source jobs behind `targetsJson` (sources with that capability only).
    static OperatorAction releaseStuckJobs(const QByteArray &targetsJson, const QString &reason,
                                           const QString &ticket);
    /// Release a stuck idempotency key (`scope`, `key`) seen at `version`.
    static OperatorAction releaseKey(const QString &scope, const QString &key, int version,
                                     const QString &reason, const QString &ticket);
    /// Take over bulk action `bulkId` from `expectedActor`, the owner the operator saw (someone
    /// else by then: a conflict, nothing changes). Needs the role the bulk's action needs; refused
    /// while a session runs it (docs/reliability.md#bulk-actions-survive-the-console).
    static OperatorAction takeOverBulk(const QUuid &bulkId, const QString &expectedActor,
                                       const QString &reason, const QString &ticket);
    /// Give up the caller's own unfinished bulk action `bulkId`: its remaining chunks never run.
    static OperatorAction abandonBulk(const QUuid &bulkId, const QString &reason,
                                      const QString &ticket);
    /// Resolve reconciliation mismatch `mismatchId` seen at `version` with `resolution`
    /// (corrected_internal, settled_external, no_action or duplicate).
    static OperatorAction resolveMismatch(qint64 mismatchId, int version, const QString &resolution,
                                          const QString &reason, const QString &ticket);
    /// Replace the payload of dead letter `deadLetterId` (seen at `version`) with `payload`
    /// (compact JSON text) and requeue it; `resetAttempts` starts a new attempt budget.
    static OperatorAction editAndRequeue(qint64 deadLetterId, int version,
                                         const QByteArray &payload, bool resetAttempts,
                                         const QString &reason, const QString &ticket);
    /// Request a compensation of `kind` (refund, void, reversal) for `amountMinor` minor units of
    /// the payment behind dead letter `deadLetterId`, seen at `version`.
    static OperatorAction requestCompensation(qint64 deadLetterId, int version, const QString &kind,
                                              qint64 amountMinor, const QString &reason,
                                              const QString &ticket);
    /// Request a refund of `amountMinor` minor units (of the charge's currency) from reconciliation
    /// mismatch `mismatchId` seen at `version`: the duplicate charge of a duplicate_external, the
    /// difference of an amount_mismatch, never more (docs/domain.md#refundable).
    static OperatorAction requestMismatchCompensation(qint64 mismatchId, int version,
                                                      qint64 amountMinor, const QString &reason,
                                                      const QString &ticket);
    /// Approve or reject compensation request `requestId` seen at `version`. `actionId` is kept
    /// by the caller across retries so a reply lost on the way cannot decide twice.
    static OperatorAction decideCompensation(const QUuid &actionId, qint64 requestId, int version,
                                             bool approve, const QString &reason,
                                             const QString &osUser);
};

/// `error` as an operator should read it: an action function PostgreSQL did not find
/// (SQLSTATE 42883, what a login without a Redrive role is told) becomes a Permission error that
/// says so; any other error is returned as it is.
db::DbError explainedActionError(const db::DbError &error);

/// Runs `action` through `session` off the GUI thread. `done` runs on the session's thread with
/// the outcome JSON the action function returned (applied, conflicts, results per target) or the
/// server's error, unless `context` was destroyed meanwhile.
void runOperatorAction(db::DatabaseSession *session, QObject *context, const OperatorAction &action,
                       std::function<void(const db::DbExpected<QJsonObject> &)> done);

} // namespace redrive
