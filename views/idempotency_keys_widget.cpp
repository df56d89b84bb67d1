// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/idempotency_keys_widget.h"

#include "models/db/db_error.h"
#include "models/display_format.h"
#include "models/expired_lease_model.h"
#include "models/idempotency_key_model.h"
#include "models/key_conflict_model.h"
#include "models/stuck_key_model.h"
#include "views/checked_values_button.h"
#include "views/dead_letter_actions.h"
#include "views/error_presenter.h"
#include "views/reason_dialog.h"
#include "views/result_table_view.h"
#include "views/single_action.h"
#include "views/text_panes.h"

#include <QAction>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QRegularExpressionValidator>
#include <QSplitter>
#include <QToolButton>
#include <QUuid>
#include <QVBoxLayout>

namespace redrive {

namespace {

constexpr int kTime = ResultTableView::kTimeWidth;

// A titled section of the splitter: a bold title line over its table.
} // namespace

IdempotencyKeysWidget::IdempotencyKeysWidget(db::DatabaseSession *session, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_stuckModel(new StuckKeyModel(session, this))
    , m_conflictModel(new KeyConflictModel(session, this))
    , m_keyModel(new IdempotencyKeyModel(session, this))
    , m_leaseModel(new ExpiredLeaseModel(session, this))
{
    // Help > Keyboard shortcuts names the place of this tab's keys by it.
    setAccessibleName(tr("Idempotency keys"));
    // Filter bar.
    m_scopeEdit = new QLineEdit(this);
    m_scopeEdit->setObjectName(QStringLiteral("scopeFilter"));
    m_scopeEdit->setPlaceholderText(tr("all scopes, or a comma list"));
    m_scopeEdit->setClearButtonEnabled(true);
    m_scopeEdit->setMinimumWidth(300);
    m_scopeEdit->setToolTip(tr("Exact scopes separated by commas, e.g. charge_card, send_receipt; "
                               "press Enter to apply"));
    connect(m_scopeEdit, &QLineEdit::editingFinished, this, &IdempotencyKeysWidget::applyScopes);

    m_keySearch = new QLineEdit(this);
    // A NUL cannot reach the server in a text parameter (libpq cuts the value there): a paste
    // holding one is refused whole, here and in the scope filter.
    for (QLineEdit *edit : { m_scopeEdit, m_keySearch })
        edit->setValidator(new QRegularExpressionValidator(
            QRegularExpression(QStringLiteral("[^\\x{0}]*")), edit));
    m_keySearch->setObjectName(QStringLiteral("keySearch"));
    m_keySearch->setPlaceholderText(tr("key contains…"));
    m_keySearch->setClearButtonEnabled(true);
    m_keySearch->setMinimumWidth(200);
    m_keySearch->setToolTip(tr("Show only keys containing this text, exactly as typed (no "
                               "wildcards, case-sensitive); press Enter to apply"));
    connect(m_keySearch, &QLineEdit::editingFinished, this, &IdempotencyKeysWidget::applyStates);

    m_stateButton = new CheckedValuesButton(IdempotencyKeyModel::allStates(), this);
    m_stateButton->setObjectName(QStringLiteral("stateFilter"));
    m_stateButton->setToolButtonStyle(Qt::ToolButtonTextOnly);
    m_stateButton->setToolTip(tr("Show only keys in the checked states (none checked: any)"));
    connect(m_stateButton, &CheckedValuesButton::checkedValuesChanged, this,
            &IdempotencyKeysWidget::applyStates);

    auto *refreshButton = new QPushButton(tr("Refresh"), this);
    refreshButton->setToolTip(tr("Load all three lists again"));
    connect(refreshButton, &QPushButton::clicked, this, &IdempotencyKeysWidget::refresh);

    m_activity = new QLabel(this);
    m_activity->setTextFormat(Qt::PlainText);

    auto *bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Scope:"), this));
    bar->addWidget(m_scopeEdit);
    bar->addSpacing(8);
    bar->addWidget(new QLabel(tr("State:"), this));
    bar->addWidget(m_stateButton);
    bar->addSpacing(8);
    bar->addWidget(new QLabel(tr("Key:"), this));
    bar->addWidget(m_keySearch);
    bar->addSpacing(8);
    bar->addWidget(refreshButton);
    bar->addStretch(1);
    bar->addWidget(m_activity);

    // The three lists.
    m_stuckView = new ResultTableView(this);
    m_stuckView->setObjectName(QStringLiteral("stuckKeys"));
    m_stuckView->setModel(m_stuckModel);
    m_stuckView->setRowKey(QStringLiteral("key")); // live re-reads keep the place
    m_stuckView->showServerOrder(StuckKeyModel::StuckFor, Qt::DescendingOrder);
    m_stuckView->setColumnWidths({ 110, 130, 240, 150, kTime, 80, 130, kTime });

    m_conflictView = new ResultTableView(this);
    m_conflictView->setObjectName(QStringLiteral("keyConflicts"));
    m_conflictView->setModel(m_conflictModel);
    m_conflictView->setRowKey(QStringLiteral("key")); // live re-reads keep the place
    m_conflictView->showServerOrder(KeyConflictModel::LastConflictAt, Qt::DescendingOrder);
    m_conflictView->setColumnWidths({ kTime, 130, 240, 100, 80, 130, 130, 80 });

    m_keyView = new ResultTableView(this);
    m_keyView->setObjectName(QStringLiteral("allKeys"));
    m_keyView->setModel(m_keyModel);
    m_keyView->setRowKey(QStringLiteral("key")); // live re-reads keep the place
    m_keyView->showServerOrder(IdempotencyKeyModel::UpdatedAt, Qt::DescendingOrder);
    m_keyView->setColumnWidths(
        { kTime, 130, 200, 150, 100, kTime, 60, 75, 240, 120, kTime, kTime });

    // Release a stuck key: only once its lease expired; the database re-checks.
    m_releaseKey = new QAction(tr("Release stuck key…"), this);
    m_releaseKey->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_L));
    m_releaseKey->setShortcutContext(Qt::WidgetWithChildrenShortcut);
    connect(m_releaseKey, &QAction::triggered, this, &IdempotencyKeysWidget::releaseStuckKey);
    m_stuckView->addAction(m_releaseKey);
    addAction(m_releaseKey);
    auto *releaseButton = new QToolButton(this);
    releaseButton->setDefaultAction(m_releaseKey);
    bar->insertWidget(bar->count() - 2, releaseButton);
    connect(m_stuckView->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &IdempotencyKeysWidget::updateReleaseAction);
    connect(m_stuckModel, &QAbstractItemModel::modelReset, this,
            &IdempotencyKeysWidget::updateReleaseAction);
    updateReleaseAction();

    // From a key to the dead letters (and so the jobs) that hold it: the Dead letters tab lists
    // them, whatever their status.
    m_showDeadLetters = new QAction(tr("Show dead letters with this key"), this);
    m_showDeadLetters->setObjectName(QStringLiteral("showDeadLettersWithKey"));
    connect(m_showDeadLetters, &QAction::triggered, this, [this] {
        // The list the operator is in (a context menu focuses it), else "All keys".
        const bool stuck = m_stuckView->hasFocus();
        const QModelIndex current = (stuck ? m_stuckView : m_keyView)->currentIndex();
        if (!current.isValid())
            return;
        const QString key = stuck ? m_stuckModel->text(current.row(), QStringLiteral("key"))
                                  : m_keyModel->text(current.row(), QStringLiteral("key"));
        if (!key.isEmpty())
            Q_EMIT deadLettersWithKeyRequested(key);
    });
    m_keyView->addAction(m_showDeadLetters);
    m_stuckView->addAction(m_showDeadLetters);

    // From a key to its job: the case view of the job's dead letter (MainWindow finds it; a job
    // that has not failed for good has none, and the status bar says so).
    m_openJobCase = new QAction(tr("Open the case of this key's job"), this);
    m_openJobCase->setObjectName(QStringLiteral("openKeyJobCase"));
    connect(m_openJobCase, &QAction::triggered, this, [this] {
        const QString job = currentJobRef();
        if (!job.isEmpty())
            Q_EMIT jobCaseRequested(job);
    });
    m_keyView->addAction(m_openJobCase);
    m_stuckView->addAction(m_openJobCase);
    for (QAbstractItemView *view : { static_cast<QAbstractItemView *>(m_keyView),
                                     static_cast<QAbstractItemView *>(m_stuckView) }) {
        connect(view->selectionModel(), &QItemSelectionModel::currentChanged, this,
                &IdempotencyKeysWidget::updateJobCaseAction);
        connect(view->model(), &QAbstractItemModel::modelReset, this,
                &IdempotencyKeysWidget::updateJobCaseAction);
    }
    updateJobCaseAction();

    // Jobs whose worker died: listed whatever their key, so a job without one is not invisible.
    m_leaseView = new ResultTableView(this);
    m_leaseView->setObjectName(QStringLiteral("expiredLeases"));
    m_leaseView->setModel(m_leaseModel);
    m_leaseView->showServerOrder(ExpiredLeaseModel::ExpiredFor, Qt::DescendingOrder);
    m_leaseView->setColumnWidths({ 110, 80, 110, 130, 150, 80, kTime, 240 });

    m_leaseTitle = panes::title(this);
    m_stuckTitle = panes::title(this);
    m_conflictTitle = panes::title(this);
    m_keyTitle = panes::title(this);
    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->setChildrenCollapsible(false);
    splitter->addWidget(panes::titled(m_leaseTitle, m_leaseView, splitter));
    splitter->addWidget(panes::titled(m_stuckTitle, m_stuckView, splitter));
    splitter->addWidget(panes::titled(m_conflictTitle, m_conflictView, splitter));
    splitter->addWidget(panes::titled(m_keyTitle, m_keyView, splitter));
    splitter->setStretchFactor(0, 1);
    splitter->setStretchFactor(1, 1);
    splitter->setStretchFactor(2, 1);
    splitter->setStretchFactor(3, 2);

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(splitter, 1);

    auto loading = [this] {
        m_activity->setText(isLoading() ? tr("Loading…") : QString());
        updateTitles();
        Q_EMIT loadingChanged(isLoading());
    };
    connect(m_stuckModel, &ResultTableModel::loadingChanged, this, loading);
    connect(m_leaseModel, &ResultTableModel::loadingChanged, this, loading);
    connect(m_leaseModel, &ResultTableModel::failed, this,
            [this](const db::DbError &e) { reportError(e, tr("Loading expired leases")); });
    connect(m_conflictModel, &ResultTableModel::loadingChanged, this, loading);
    connect(m_keyModel, &KeysetPageModel::loadingChanged, this, loading);
    connect(m_stuckModel, &ResultTableModel::failed, this,
            [this](const db::DbError &e) { reportError(e, tr("Loading stuck keys")); });
    connect(m_conflictModel, &ResultTableModel::failed, this,
            [this](const db::DbError &e) { reportError(e, tr("Loading conflicting requests")); });
    connect(m_keyModel, &KeysetPageModel::failed, this,
            [this](const db::DbError &e) { reportError(e, tr("Loading idempotency keys")); });
    updateTitles();
}

void IdempotencyKeysWidget::setRoles(const QStringList &redriveRoles)
{
    m_roles = redriveRoles;
    updateReleaseAction();
}

void IdempotencyKeysWidget::updateReleaseAction()
{
    const bool permitted = m_roles.contains(QStringLiteral("redrive_oncall"))
        || m_roles.contains(QStringLiteral("redrive_support"));
    const bool selected = m_stuckView->selectionModel()
        && m_stuckView->selectionModel()->selectedRows().size() == 1;
    m_releaseKey->setEnabled(permitted && selected);
    // The reason a role cannot release is the tooltip: in the text it widened the tab past
    // 1024 px.
    m_releaseKey->setText(tr("Release stuck key…"));
    m_releaseKey->setToolTip(!permitted     ? tr("Needs role redrive_oncall or redrive_support")
                                 : selected ? tr("Mark the selected stuck key failed so its job "
                                                 "can be retried (audited)")
                                            : tr("Select one stuck key first"));
}

void IdempotencyKeysWidget::releaseStuckKey()
{
    const QModelIndexList rows = m_stuckView->selectionModel()->selectedRows();
    if (rows.size() != 1)
        return;
    const int row = rows.first().row();
    const QString scope = m_stuckModel->text(row, QStringLiteral("scope"));
    const QString key = m_stuckModel->text(row, QStringLiteral("key"));
    const int version = m_stuckModel->text(row, QStringLiteral("version")).toInt();
    auto *dialog = new ReasonDialog(
        tr("Release stuck key"),
        tr("Release idempotency key <b>%1</b> in scope <b>%2</b>, held by %3 whose lease "
           "expired. The key becomes <i>failed</i>, so a retry of its job may run the side "
           "effect again: check the provider first (reconciliation, the provider's dashboard).")
            .arg(display::boundedLines(display::revealLookAlikes(key), 3, 300).toHtmlEscaped(),
                 display::boundedLines(scope, 1, 300).toHtmlEscaped(),
                 display::boundedLines(m_stuckModel->text(row, QStringLiteral("locked_by")), 1, 300)
                     .toHtmlEscaped()),
        tr("Release"), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowModality(Qt::WindowModal);
    connect(dialog, &QDialog::accepted, this, [this, dialog, scope, key, version] {
        runSingleAction(
            m_session, this, tr("Release stuck key"),
            OperatorAction::releaseKey(scope, key, version, dialog->reason(), dialog->ticket()),
            [this] { refresh(); });
    });
    dialog->show();
}

bool IdempotencyKeysWidget::isLoading() const
{
    return m_stuckModel->isLoading() || m_conflictModel->isLoading() || m_keyModel->isLoading()
        || m_leaseModel->isLoading();
}

QString IdempotencyKeysWidget::currentJobRef() const
{
    // The list the operator is in (a context menu focuses it), else "All keys".
    const bool stuck = m_stuckView->hasFocus();
    const QModelIndex current = (stuck ? m_stuckView : m_keyView)->currentIndex();
    if (!current.isValid())
        return {};
    return stuck ? m_stuckModel->text(current.row(), QStringLiteral("job_ref"))
                 : m_keyModel->text(current.row(), QStringLiteral("job_ref"));
}

void IdempotencyKeysWidget::updateJobCaseAction()
{
    const bool any = !currentJobRef().isEmpty();
    m_openJobCase->setEnabled(any);
    m_openJobCase->setToolTip(any ? tr("Open the case view of the dead letter of this key's job")
                                  : tr("This key names no job"));
}

QStringList IdempotencyKeysWidget::scopeFilter() const
{
    QStringList scopes;
    for (const QString &part : m_scopeEdit->text().split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const QString scope = part.trimmed();
        if (!scope.isEmpty() && !scopes.contains(scope))
            scopes << scope;
    }
    return scopes;
}

QStringList IdempotencyKeysWidget::stateFilter() const
{
    return m_stateButton->checkedValues();
}

void IdempotencyKeysWidget::setScopeFilterText(const QString &text)
{
    m_scopeEdit->setText(text);
    applyScopes();
}

void IdempotencyKeysWidget::setStateFilter(const QStringList &states)
{
    m_stateButton->setCheckedValues(states);
    applyStates();
}

void IdempotencyKeysWidget::refresh()
{
    m_appliedScopes = scopeFilter();
    m_stuckModel->setScopes(m_appliedScopes);
    m_conflictModel->setScopes(m_appliedScopes);
    m_stuckModel->reload();
    m_conflictModel->reload();
    m_leaseModel->reload();
    m_keyModel->setFilter(keyFilter());
}

void IdempotencyKeysWidget::followChanges()
{
    if (scopeFilter() != m_appliedScopes || keyFilter() != m_keyModel->filter()
        || !m_keyModel->hasStarted()) {
        refresh();
        return;
    }
    m_stuckModel->reload();
    m_conflictModel->reload();
    m_leaseModel->reload();
    m_keyModel->rereadShown();
}

IdempotencyKeyFilter IdempotencyKeysWidget::keyFilter() const
{
    return { m_appliedScopes, stateFilter(), m_keySearch->text() };
}

void IdempotencyKeysWidget::setKeySearch(const QString &text)
{
    m_keySearch->setText(text);
    applyStates();
}

void IdempotencyKeysWidget::setShowUtc(bool utc)
{
    m_stuckModel->setShowUtc(utc);
    m_leaseModel->setShowUtc(utc);
    m_conflictModel->setShowUtc(utc);
    m_keyModel->setShowUtc(utc);
}

void IdempotencyKeysWidget::applyScopes()
{
    if (scopeFilter() == m_appliedScopes)
        return;
    refresh();
}

void IdempotencyKeysWidget::applyStates()
{
    if (keyFilter() != m_keyModel->filter() || !m_keyModel->hasStarted())
        m_keyModel->setFilter(keyFilter());
}

void IdempotencyKeysWidget::updateTitles()
{
    const int leases = m_leaseModel->rowCount();
    m_leaseTitle->setText(
        m_leaseModel->reachedLimit()
            ? tr("Expired leases: the %1 longest expired (there may be more)").arg(leases)
            : tr("Expired leases: %n running job(s) whose worker stopped renewing its lease, "
                 "with or without a key, longest first",
                 nullptr, leases));
    const int stuck = m_stuckModel->rowCount();
    if (m_stuckModel->reachedLimit())
        m_stuckTitle->setText(tr("Stuck keys: the %1 oldest in processing past their lease "
                                 "(there may be more)")
                                  .arg(stuck));
    else
        m_stuckTitle->setText(
            tr("Stuck keys: %n in processing past their lease, oldest first", nullptr, stuck));
    m_conflictTitle->setText(
        tr("Conflicting requests: %n key(s) saw a different request hash (never replayed)", nullptr,
           m_conflictModel->rowCount()));
    const int keys = m_keyModel->rowCount();
    if (m_keyModel->isAtEnd())
        m_keyTitle->setText(tr("All keys: %n, most recently changed first", nullptr, keys));
    else
        m_keyTitle->setText(
            tr("All keys: %n loaded, most recently changed first; scroll for more", nullptr, keys));
}

void IdempotencyKeysWidget::reportError(const db::DbError &error, const QString &what)
{
    m_activity->setText(tr("%1 failed").arg(what));
    ErrorPresenter::report(this, error, what);
}

} // namespace redrive
