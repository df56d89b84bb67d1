// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/dead_letter_actions.h"

#include "models/action_preview_model.h"
#include "models/db/database_session.h"
#include "models/display_format.h"
#include "models/operator_action.h"
#include "views/action_confirmation_dialog.h"
#include "views/action_result_dialog.h"
#include "views/compensation_request_dialog.h"
#include "views/edit_payload_dialog.h"
#include "views/error_presenter.h"
#include "views/single_action.h"

#include <QAction>
#include <QInputDialog>
#include <QJsonArray>
#include <QJsonDocument>
#include <QProgressDialog>
#include <QUuid>
#include <QWidget>

namespace redrive {

namespace {

const QString kOncall = QStringLiteral("redrive_oncall");
const QString kSupport = QStringLiteral("redrive_support");
const QString kApprover = QStringLiteral("redrive_approver");

} // namespace

DeadLetterActions::DeadLetterActions(db::DatabaseSession *session, QWidget *window)
    : QObject(window)
    , m_session(session)
    , m_window(window)
{
    auto make = [this](const QString &text, const QKeySequence &key, const QStringList &roles) {
        auto *action = new QAction(text, this);
        action->setData(text);
        QString shortText = text;
        action->setIconText(shortText.remove(QLatin1Char('&')).remove(QStringLiteral("…")));
        if (!key.isEmpty())
            action->setShortcut(key);
        m_required.insert(action, roles);
        return action;
    };
    m_requeue = make(tr("&Requeue…"), QKeySequence(Qt::CTRL | Qt::Key_R), { kOncall });
    m_requeueGroup = make(tr("Requeue the whole failure &group…"),
                          QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_R), { kOncall });
    m_editAndRequeue
        = make(tr("&Edit payload and requeue…"), QKeySequence(Qt::CTRL | Qt::Key_E), { kOncall });
    m_resolve
        = make(tr("Mark re&solved…"), QKeySequence(Qt::CTRL | Qt::Key_D), { kOncall, kSupport });
    m_resolveGroup = make(tr("Mark the whole failure group resolved…"),
                          QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_D), { kOncall, kSupport });
    m_claim = make(tr("&Claim"), QKeySequence(Qt::CTRL | Qt::Key_M), { kOncall, kSupport });
    m_releaseClaim = make(tr("Release claim"), {}, { kOncall, kSupport });
    m_note = make(tr("Add &note…"), QKeySequence(Qt::CTRL | Qt::Key_N),
                  { kOncall, kSupport, kApprover });
    m_compensate
        = make(tr("Request com&pensation…"), QKeySequence(Qt::CTRL | Qt::Key_P), { kSupport });
    m_releaseStuck = make(tr("Release stuc&k jobs…"), {}, { kOncall, kSupport });
    m_releaseStuck->setIconText(tr("Release stuck"));
    m_releaseStuck->setVisible(false);
    connect(m_releaseStuck, &QAction::triggered, this, &DeadLetterActions::releaseStuck);
    m_requeueGroup->setIconText(tr("Requeue group"));
    m_resolve->setIconText(tr("Resolve"));
    m_resolveGroup->setIconText(tr("Resolve group"));
    m_editAndRequeue->setIconText(tr("Edit and requeue"));
    m_compensate->setIconText(tr("Compensate"));
    m_requeue->setStatusTip(tr("Send the selected dead letters back to their queue"));
    m_requeueGroup->setStatusTip(tr("Requeue every open dead letter of the current failure group"));
    m_resolve->setStatusTip(tr("Close the selected dead letters without running them again"));

    connect(m_requeue, &QAction::triggered, this,
            [this] { runBulk(BulkActionRunner::Action::Requeue, Scope::Selection); });
    connect(m_requeueGroup, &QAction::triggered, this,
            [this] { runBulk(BulkActionRunner::Action::Requeue, Scope::FailureGroup); });
    connect(m_resolve, &QAction::triggered, this,
            [this] { runBulk(BulkActionRunner::Action::Resolve, Scope::Selection); });
    connect(m_resolveGroup, &QAction::triggered, this,
            [this] { runBulk(BulkActionRunner::Action::Resolve, Scope::FailureGroup); });
    connect(m_claim, &QAction::triggered, this, [this] { runClaim(false); });
    connect(m_releaseClaim, &QAction::triggered, this, [this] { runClaim(true); });
    connect(m_note, &QAction::triggered, this, &DeadLetterActions::addNote);
    connect(m_editAndRequeue, &QAction::triggered, this, &DeadLetterActions::editAndRequeue);
    connect(m_compensate, &QAction::triggered, this, &DeadLetterActions::requestCompensation);
    updateEnabled();
}

QList<QAction *> DeadLetterActions::actions() const
{
    return { m_requeue,      m_editAndRequeue, m_requeueGroup, nullptr,        m_resolve,
             m_resolveGroup, nullptr,          m_claim,        m_releaseClaim, m_note,
             nullptr,        m_compensate,     m_releaseStuck };
}

void DeadLetterActions::setSession(db::DatabaseSession *session)
{
    m_session = session;
    m_roles.clear(); // until the new login's roles are known
    updateEnabled();
}

void DeadLetterActions::setCapabilities(const QStringList &capabilities)
{
    m_capabilities = capabilities;
    m_releaseStuck->setVisible(capabilities.contains(QStringLiteral("release_stuck")));
    updateEnabled();
}

void DeadLetterActions::setSelectionProvider(SelectionProvider provider)
{
    m_provider = std::move(provider);
    updateEnabled();
}

void DeadLetterActions::setRoles(const QStringList &redriveRoles)
{
    m_roles = redriveRoles;
    updateEnabled();
}

bool DeadLetterActions::allowed(const QStringList &roles) const
{
    for (const QString &role : roles)
        if (m_roles.contains(role))
            return true;
    return false;
}

void DeadLetterActions::gate(QAction *action, bool hasTargets, const QString &why)
{
    const QStringList roles = m_required.value(action);
    const QString text = action->data().toString();
    if (!allowed(roles)) {
        action->setEnabled(false);
        const QString need = tr("needs role %1").arg(roles.join(tr(" or ")));
        action->setText(tr("%1 (%2)").arg(text, need));
        action->setToolTip(tr("%1 — your login holds %2")
                               .arg(need,
                                    m_roles.isEmpty() ? tr("no Redrive role")
                                                      : m_roles.join(QStringLiteral(", "))));
        return;
    }
    action->setText(text);
    action->setEnabled(hasTargets);
    QString plain = text;
    plain.remove(QLatin1Char('&'));
    action->setToolTip(hasTargets ? plain : tr("%1 — %2").arg(plain, why));
}

void DeadLetterActions::updateEnabled()
{
    DeadLetterSelection selection = m_provider ? m_provider() : DeadLetterSelection();
    if (!m_session)
        selection = {};
    const bool inView = selection.outOfView.isEmpty();
    const bool some = inView && !selection.ids.isEmpty();
    const bool one = inView && selection.ids.size() == 1;
    const bool group = inView && !selection.fingerprint.isEmpty();
    const QString select
        = inView ? tr("select one or more dead letters first") : selection.outOfView;
    const QString selectOne = inView ? tr("select exactly one dead letter") : selection.outOfView;
    const QString chooseGroup = inView ? tr("choose a failure group first") : selection.outOfView;
    gate(m_requeue, some, select);
    gate(m_requeueGroup, group, chooseGroup);
    gate(m_editAndRequeue, one, selectOne);
    gate(m_resolve, some, select);
    gate(m_resolveGroup, group, chooseGroup);
    gate(m_claim, some, select);
    gate(m_releaseClaim, some, select);
    gate(m_note, one, selectOne);
    gate(m_compensate, one, selectOne);
    gate(m_releaseStuck, some, select);
}

DeadLetterSelection DeadLetterActions::targets() const
{
    // Asked again when the action fires, not taken from when it was enabled: a shortcut or a
    // stale toolbar state must never act on dead letters the operator is not looking at.
    if (!m_provider || !m_session)
        return {};
    DeadLetterSelection selection = m_provider();
    if (!selection.outOfView.isEmpty())
        return {};
    return selection;
}

void DeadLetterActions::show(QDialog *dialog)
{
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowModality(Qt::WindowModal);
    dialog->show();
    Q_EMIT dialogShown(dialog);
}

void DeadLetterActions::reportError(const db::DbError &error, const QString &what)
{
    ErrorPresenter::report(m_window, error, what);
}

void DeadLetterActions::runBulk(BulkActionRunner::Action action, Scope scope)
{
    const DeadLetterSelection selection = targets();
    if (scope == Scope::Selection ? selection.ids.isEmpty() : selection.fingerprint.isEmpty())
        return;
    const auto kind = action == BulkActionRunner::Action::Requeue
        ? ActionConfirmationDialog::Kind::Requeue
        : ActionConfirmationDialog::Kind::Resolve;
    const QString scopeText = scope == Scope::Selection
        ? tr("%n selected dead letter(s)", nullptr, int(selection.ids.size()))
        : tr("failure group %1").arg(selection.groupLabel);
    auto *dialog = new ActionConfirmationDialog(kind, scopeText, m_window);
    auto *preview = new ActionPreviewModel(m_session, dialog);
    dialog->setPreview(preview);
    if (scope == Scope::Selection)
        preview->loadIds(selection.ids);
    else
        preview->loadFailureGroup(selection.fingerprint);
    connect(preview, &ActionPreviewModel::failed, this,
            [this](const db::DbError &e) { reportError(e, tr("Loading the preview")); });
    connect(dialog, &QDialog::accepted, this, [this, dialog, preview, action] {
        BulkActionRunner::Request request;
        request.action = action;
        request.targets = preview->targets(); // frozen: exactly the rows the operator saw
        request.resetAttempts = dialog->resetAttempts();
        request.resolution = dialog->resolution();
        request.note = dialog->note();
        request.reason = dialog->reason();
        request.ticket = dialog->ticket();
        request.osUser = OperatorAction::osUser();
        request.chunkSize = m_chunkSize;
        const QString title
            = action == BulkActionRunner::Action::Requeue ? tr("Requeue") : tr("Mark resolved");
        auto *runner = new BulkActionRunner(m_session, this);
        connect(runner, &BulkActionRunner::finished, this,
                [this, runner, title](bool canceled) { showBulkResult(runner, title, canceled); });
        connect(runner, &BulkActionRunner::failed, this,
                [this, runner, title](const db::DbError &e) {
                    reportError(e, title);
                    if (runner->chunksDone() > 0)
                        showBulkResult(runner, title, true); // offer to resume the rest
                    else
                        runner->deleteLater();
                });
        showProgress(runner, title);
        Q_EMIT bulkStarted(runner);
        runner->start(request);
    });
    show(dialog);
}

void DeadLetterActions::resumeBulk(const QUuid &bulkId, const QString &action)
{
    if (!m_session || bulkId.isNull())
        return;
    const QString title = action == QLatin1String("requeue") ? tr("Requeue") : tr("Mark resolved");
    auto *runner = new BulkActionRunner(m_session, this);
    connect(runner, &BulkActionRunner::finished, this,
            [this, runner, title](bool canceled) { showBulkResult(runner, title, canceled); });
    connect(runner, &BulkActionRunner::failed, this, [this, runner, title](const db::DbError &e) {
        reportError(e, title);
        if (runner->chunksDone() > 0 && runner->targetCount() > 0)
            showBulkResult(runner, title, true); // offer to resume the rest
        else
            runner->deleteLater();
    });
    showProgress(runner, title);
    Q_EMIT bulkStarted(runner);
    runner->resumeFrozen(bulkId);
}

void DeadLetterActions::showProgress(BulkActionRunner *runner, const QString &title)
{
    auto *progress = new QProgressDialog(tr("%1: applying…").arg(title),
                                         tr("Cancel after this chunk"), 0, 1, m_window);
    progress->setWindowTitle(title);
    progress->setAttribute(Qt::WA_DeleteOnClose);
    progress->setWindowModality(Qt::WindowModal);
    progress->setMinimumDuration(400);
    progress->setAutoClose(false);
    progress->setAutoReset(false);
    progress->setValue(0);
    connect(runner, &BulkActionRunner::progress, progress, [progress](int done, int count) {
        progress->setMaximum(std::max(1, count));
        progress->setValue(done);
        progress->setLabelText(
            DeadLetterActions::tr("Chunk %1 of %2 applied (each chunk is one transaction with "
                                  "its audit entry)")
                .arg(done)
                .arg(count));
    });
    connect(progress, &QProgressDialog::canceled, runner, [runner, progress] {
        runner->cancel();
        progress->setLabelText(DeadLetterActions::tr("Cancelling after the running chunk…"));
    });
    connect(runner, &BulkActionRunner::finished, progress, &QWidget::close);
    connect(runner, &BulkActionRunner::failed, progress, &QWidget::close);
    Q_EMIT dialogShown(progress);
}

void DeadLetterActions::showBulkResult(BulkActionRunner *runner, const QString &title,
                                       bool canceled)
{
    const BulkActionRunner::Totals &totals = runner->totals();
    ActionResultDialog::Outcome outcome;
    outcome.action = title;
    outcome.confirmed = runner->targetCount(); // what the operator confirmed, run or not
    outcome.applied = totals.applied;
    outcome.conflicts = totals.conflicts;
    outcome.refused = totals.refused;
    outcome.notApplied = totals.notApplied;
    outcome.canceled = canceled;
    outcome.chunksDone = runner->chunksDone();
    outcome.chunkCount = runner->chunkCount();
    outcome.reference = display::auditReference(totals.auditIds, totals.actionIds);
    outcome.reference += (outcome.reference.isEmpty() ? QString() : QStringLiteral(" \u00b7 "))
        + tr("bulk %1").arg(runner->bulkId().toString(QUuid::WithoutBraces));
    auto *result = new ActionResultDialog(outcome, m_window);
    result->explainConflicts(m_session);
    if (canceled) {
        connect(result, &ActionResultDialog::resumeRequested, this, [this, runner, title] {
            showProgress(runner, title);
            runner->resume();
        });
    } else {
        connect(result, &QObject::destroyed, runner, &QObject::deleteLater);
    }
    show(result);
    if (totals.applied > 0)
        Q_EMIT actionApplied(title == tr("Requeue") ? QStringLiteral("requeue")
                                                    : QStringLiteral("resolve"));
    if (title == tr("Requeue") && !totals.appliedIds.isEmpty())
        Q_EMIT requeueApplied(totals.appliedIds);
}

void DeadLetterActions::showSingleResult(const QString &title, const QJsonObject &outcome,
                                         const QString &ref, const QString &headline)
{
    ActionResultDialog::Outcome o = ActionResultDialog::Outcome::fromJson(title, outcome, ref);
    o.headline = headline;
    auto *result = new ActionResultDialog(o, m_window);
    show(result);
    result->explainConflicts(m_session);
}

void DeadLetterActions::runClaim(bool release)
{
    const DeadLetterSelection selection = targets();
    if (selection.ids.isEmpty())
        return;
    const auto kind = release ? ActionConfirmationDialog::Kind::ReleaseClaim
                              : ActionConfirmationDialog::Kind::Claim;
    auto *dialog = new ActionConfirmationDialog(
        kind, tr("%n selected dead letter(s)", nullptr, int(selection.ids.size())), m_window);
    auto *preview = new ActionPreviewModel(m_session, dialog);
    dialog->setPreview(preview);
    preview->loadIds(selection.ids);
    connect(dialog, &QDialog::accepted, this, [this, dialog, preview, release] {
        runSingleAction(m_session, m_window, release ? tr("Release claim") : tr("Claim"),
                        OperatorAction::claim(BulkActionRunner::targetsJson(preview->targets()),
                                              release, dialog->reason()),
                        [this] { Q_EMIT actionApplied(QStringLiteral("claim")); });
    });
    show(dialog);
}

void DeadLetterActions::addNote()
{
    const DeadLetterSelection selection = targets();
    if (selection.ids.size() != 1)
        return;
    const qint64 id = selection.ids.first();
    auto *dialog = new QInputDialog(m_window);
    dialog->setWindowTitle(tr("Add a note"));
    dialog->setLabelText(tr("Note on dead letter %1 (kept in the audit log, visible to everyone "
                            "who opens it):")
                             .arg(id));
    dialog->setOption(QInputDialog::UsePlainTextEditForTextInput);
    dialog->resize(560, 260);
    connect(dialog, &QInputDialog::textValueSelected, this, [this, id](const QString &text) {
        const QString note = text.trimmed();
        if (note.isEmpty())
            return;
        runOperatorAction(m_session, this, OperatorAction::note(id, note),
                          [this](const db::DbExpected<QJsonObject> &outcome) {
                              if (!outcome) {
                                  reportError(outcome.error(), tr("Adding a note"));
                                  return;
                              }
                              Q_EMIT actionApplied(QStringLiteral("note"));
                          });
    });
    show(dialog);
}

void DeadLetterActions::editAndRequeue()
{
    const DeadLetterSelection selection = targets();
    if (selection.ids.size() != 1)
        return;
    auto *dialog = new EditPayloadDialog(m_session, selection.ids.first(), m_window);
    connect(dialog, &EditPayloadDialog::applied, this,
            [this](const QJsonObject &outcome, const QString &ref) {
                showSingleResult(tr("Edit and requeue"), outcome, ref);
                Q_EMIT actionApplied(QStringLiteral("edit_and_requeue"));
            });
    show(dialog);
}

void DeadLetterActions::requestCompensation()
{
    const DeadLetterSelection selection = targets();
    if (selection.ids.size() != 1)
        return;
    auto *dialog = new CompensationRequestDialog(m_session, selection.ids.first(), m_window);
    connect(dialog, &CompensationRequestDialog::applied, this,
            [this](const QJsonObject &outcome, const QString &ref) {
                const bool waits = outcome.value(QStringLiteral("requires_approval")).toBool();
                const bool applied = outcome.value(QStringLiteral("applied")).toInt() > 0;
                showSingleResult(tr("Request compensation"), outcome, ref,
                                 !applied    ? QString()
                                     : waits ? tr("Requested: it waits for approval by a second "
                                                  "person (an approver who is not you)")
                                             : tr("Requested: below the approval threshold, the "
                                                  "worker executes it now"));
                Q_EMIT actionApplied(QStringLiteral("compensate_request"));
            });
    show(dialog);
}

void DeadLetterActions::releaseStuck()
{
    const DeadLetterSelection selection = targets();
    if (selection.ids.isEmpty())
        return;
    auto *dialog = new ActionConfirmationDialog(
        ActionConfirmationDialog::Kind::ReleaseStuck,
        tr("%n selected dead letter(s)", nullptr, int(selection.ids.size())), m_window);
    auto *preview = new ActionPreviewModel(m_session, dialog);
    dialog->setPreview(preview);
    preview->loadIds(selection.ids);
    connect(dialog, &QDialog::accepted, this, [this, dialog, preview] {
        runSingleAction(
            m_session, m_window, tr("Release stuck jobs"),
            OperatorAction::releaseStuckJobs(BulkActionRunner::targetsJson(preview->targets()),
                                             dialog->reason(), dialog->ticket()),
            [this] { Q_EMIT actionApplied(QStringLiteral("release_stuck")); });
    });
    show(dialog);
}

} // namespace redrive
