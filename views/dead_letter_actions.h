// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/bulk_action_runner.h"

#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QStringList>
#include <functional>

class QAction;
class QDialog;
class QProgressDialog;
class QWidget;

namespace redrive {

namespace db {
class DatabaseSession;
class DbError;
} // namespace db

class ActionConfirmationDialog;
class ActionResultDialog;

/// What an action applies to: the selected dead letters, and the failure group in view.
struct DeadLetterSelection
{
    QList<qint64> ids; ///< selected dead letters, in view order
    QString fingerprint; ///< the current failure group, or empty
    QString groupLabel; ///< how the group is named to the operator
    /// Set when the dead letters are not what the operator is looking at (another tab has
    /// focus): then nothing may be acted on, and this says where the dead letters are. An
    /// action only ever acts on the focused view.
    QString outOfView;
};

/// The operator actions on dead letters, as QActions for the toolbar, the menus, the context
/// menus and the keyboard: requeue and mark resolved on the selection or on
/// the whole current failure group, edit and requeue, claim and release, add a note, and request
/// a compensation. Each one previews its targets (ActionPreviewModel), asks for confirmation and
/// a reason (ActionConfirmationDialog), runs through the action functions only — requeue and
/// resolve as a frozen bulk in chunks with progress, cancel and resume (BulkActionRunner) — and
/// ends with a result summary (ActionResultDialog). Actions the caller's Redrive roles cannot
/// take are disabled and say which role they need
/// (docs/domain.md#roles-are-enforced-by-postgresql); the database enforces it regardless. Dialogs
/// open window-modal without blocking; dialogShown() hands them to tests.
class DeadLetterActions : public QObject
{
    Q_OBJECT
public:
    using SelectionProvider = std::function<DeadLetterSelection()>;

    /// `session` (may be null until setSession()) must outlive this object or be replaced
    /// first; dialogs open over `window`, which owns this object.
    DeadLetterActions(db::DatabaseSession *session, QWidget *window);

    /// The session actions run on (a new connection); null disables every action.
    void setSession(db::DatabaseSession *session);

    /// Where the targets come from (called when an action is triggered and on updateEnabled()).
    void setSelectionProvider(SelectionProvider provider);
    /// The caller's Redrive group roles (e.g. "redrive_oncall"), from Statement::SessionRoles.
    void setRoles(const QStringList &redriveRoles);
    /// What the current source offers beyond the common actions (Statement::SourceList's
    /// capabilities, e.g. "release_stuck"); "Release stuck jobs" shows only with it.
    void setCapabilities(const QStringList &capabilities);
    /// Re-evaluates which actions are enabled (selection or roles changed).
    void updateEnabled();

    QAction *requeueAction() const { return m_requeue; }
    QAction *requeueGroupAction() const { return m_requeueGroup; }
    QAction *editAndRequeueAction() const { return m_editAndRequeue; }
    QAction *resolveAction() const { return m_resolve; }
    QAction *resolveGroupAction() const { return m_resolveGroup; }
    QAction *claimAction() const { return m_claim; }
    QAction *releaseClaimAction() const { return m_releaseClaim; }
    QAction *noteAction() const { return m_note; }
    QAction *compensateAction() const { return m_compensate; }
    QAction *releaseStuckAction() const { return m_releaseStuck; }
    /// Every action, in menu order (nullptr marks a separator).
    QList<QAction *> actions() const;

    /// The Redrive roles allowed to take `action`, as the database checks them.
    QStringList requiredRoles(const QAction *action) const { return m_required.value(action); }
    /// Bulk actions run in chunks of this many targets, each one transaction.
    void setChunkSize(int size) { m_chunkSize = size; }
    /// Resumes bulk `bulkId` (`action`: "requeue" or "resolve") frozen earlier by this console
    /// or a closed or crashed one, with the same progress and result dialogs as a new bulk: only
    /// the chunks not applied yet run (docs/reliability.md#bulk-actions-survive-the-console).
    void resumeBulk(const QUuid &bulkId, const QString &action);

Q_SIGNALS:
    /// An action changed something (the views refresh). `action` is e.g. "requeue".
    void actionApplied(const QString &action);
    /// A requeue applied to dead letters `ids` (their outcome can be followed from here on).
    void requeueApplied(const QList<qint64> &ids);
    /// A dialog was opened (confirmation, result, editor, progress); for tests.
    void dialogShown(QDialog *dialog);
    /// A bulk action started running its chunks.
    void bulkStarted(redrive::BulkActionRunner *runner);

private:
    enum class Scope { Selection, FailureGroup };
    void runBulk(BulkActionRunner::Action action, Scope scope);
    void runClaim(bool release);
    void addNote();
    void editAndRequeue();
    void requestCompensation();
    void releaseStuck();
    void showProgress(BulkActionRunner *runner, const QString &title);
    void showBulkResult(BulkActionRunner *runner, const QString &title, bool canceled);
    void showSingleResult(const QString &title, const QJsonObject &outcome, const QString &ref,
                          const QString &headline = {});
    void reportError(const db::DbError &error, const QString &what);
    /// The selection to act on now: empty when it is out of view (another tab in front).
    DeadLetterSelection targets() const;
    void show(QDialog *dialog);
    bool allowed(const QStringList &roles) const;
    void gate(QAction *action, bool hasTargets, const QString &why);

    db::DatabaseSession *m_session;
    QWidget *m_window;
    SelectionProvider m_provider;
    QStringList m_roles;
    int m_chunkSize = 1000;
    QHash<const QAction *, QStringList> m_required;
    QAction *m_requeue;
    QAction *m_requeueGroup;
    QAction *m_editAndRequeue;
    QAction *m_resolve;
    QAction *m_resolveGroup;
    QAction *m_claim;
    QAction *m_releaseClaim;
    QAction *m_note;
    QAction *m_compensate;
    QAction *m_releaseStuck;
    QStringList m_capabilities;
};

} // namespace redrive
