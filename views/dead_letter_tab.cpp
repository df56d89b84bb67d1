// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/dead_letter_tab.h"

#include "models/db/db_error.h"
#include "models/dead_letter_filter.h"
#include "models/dead_letter_model.h"
#include "models/display_format.h"
#include "models/failure_group_model.h"
#include "views/dead_letter_actions.h"
#include "views/dead_letter_filter_bar.h"
#include "views/error_presenter.h"
#include "views/requeue_follow_up_bar.h"
#include "views/result_table_view.h"
#include "views/text_panes.h"

#include <QAction>
#include <QApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QLabel>
#include <QPushButton>
#include <QSettings>
#include <QSplitter>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>

namespace redrive {

namespace {

/// How many characters of a failure group's name the filter chip and the bulk confirmation get,
/// and of a filter's description the status bar and the count show.
constexpr qsizetype kMaxGroupLabelChars = 300;

ResultTableView *makeTable(QWidget *parent)
{
    auto *view = new ResultTableView(parent);
    view->horizontalHeader()->setSectionsMovable(true);
    view->horizontalHeader()->setStretchLastSection(false);
    return view;
}

} // namespace

DeadLetterTab::DeadLetterTab(QWidget *parent)
    : QWidget(parent)
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(6, 6, 6, 0);

    m_filterRow = new QHBoxLayout;
    m_filterBar = new DeadLetterFilterBar(this);
    m_newBadge = new QPushButton(this);
    m_newBadge->setToolTip(tr("New dead letters arrived; click to show them (the list does not "
                              "move by itself)"));
    m_newBadge->setStyleSheet(QStringLiteral(
        "QPushButton { background: #1d6fd8; color: white; border-radius: 10px; padding: 3px 10px;"
        " font-weight: bold; }"));
    m_newBadge->hide();
    m_filterRow->addWidget(m_filterBar, 1);
    m_filterRow->addWidget(m_newBadge);
    layout->addLayout(m_filterRow);

    m_totalLabel = new QLabel(this);
    m_totalLabel->setObjectName(QStringLiteral("totalLabel"));
    // It names the filter, a failure group's text among it: plain text, never markup
    // (docs/security.md#text-from-the-database-is-plain-text).
    m_totalLabel->setTextFormat(Qt::PlainText);
    m_totalLabel->setStyleSheet(QStringLiteral("QLabel { font-weight: bold; }"));
    layout->addWidget(m_totalLabel);
    m_followUp = new RequeueFollowUpBar(this);
    layout->addWidget(m_followUp);

    m_splitter = new QSplitter(Qt::Horizontal, this);
    auto *groupsBox = new QWidget(m_splitter);
    auto *groupsLayout = new QVBoxLayout(groupsBox);
    groupsLayout->setContentsMargins(0, 0, 0, 0);
    m_groupsTitle = new QLabel(groupsBox);
    m_groupsTitle->setObjectName(QStringLiteral("failureGroupsTitle"));
    showGroupsTitle(std::nullopt);
    m_groupView = makeTable(groupsBox);
    m_groupView->setObjectName(QStringLiteral("failureGroups"));
    m_groupView->setAccessibleName(tr("Failure groups"));
    m_groupView->setSelectionMode(QAbstractItemView::SingleSelection);
    groupsLayout->addWidget(m_groupsTitle);
    groupsLayout->addWidget(m_groupView);
    m_table = makeTable(m_splitter);
    m_table->setObjectName(QStringLiteral("deadLetters"));
    m_table->setAccessibleName(tr("Dead letters list"));
    m_table->setSortingEnabled(true); // in SQL: DeadLetterModel::sort()
    m_table->horizontalHeader()->setSectionsClickable(true);
    m_table->setContextMenuPolicy(Qt::ActionsContextMenu);
    // Reloads (F5, a reconnect, a live re-read) keep the operator's selection, current row and
    // scroll position: the view finds them again by id once the rows are back.
    m_table->setRowKey(QStringLiteral("id"));
    m_splitter->addWidget(groupsBox);
    m_splitter->addWidget(m_table);
    m_splitter->setStretchFactor(0, 3);
    m_splitter->setStretchFactor(1, 5);
    m_splitter->setSizes({ 520, 880 });
    layout->addWidget(m_splitter, 1);

    m_liveTimer = new QTimer(this);
    m_liveTimer->setSingleShot(true);
    m_liveTimer->setInterval(200); // LiveUpdates coalesces bursts; this joins its callers

    connect(m_filterBar, &DeadLetterFilterBar::filterChanged, this, &DeadLetterTab::applyFilter);
    connect(m_newBadge, &QPushButton::clicked, this, [this] {
        m_newBadge->hide();
        if (m_deadLetters)
            m_deadLetters->reload();
        if (m_groups)
            m_groups->reload();
    });
    connect(m_table, &QTableView::doubleClicked, this, &DeadLetterTab::openCurrentCase);

    QAction *open = new QAction(tr("Open case"), m_table);
    open->setShortcuts({ QKeySequence(Qt::Key_Return), QKeySequence(Qt::Key_Enter) });
    open->setShortcutContext(Qt::WidgetShortcut);
    connect(open, &QAction::triggered, this, &DeadLetterTab::openCurrentCase);
    QAction *copy = new QAction(tr("Copy rows as JSON"), m_table);
    copy->setShortcut(QKeySequence::Copy);
    copy->setShortcutContext(Qt::WidgetShortcut);
    connect(copy, &QAction::triggered, this, &DeadLetterTab::copySelection);
    m_table->addActions({ open, copy });
    connect(m_table, &ResultTableView::copied, this, [this](int rows) {
        Q_EMIT statusMessage(tr("Copied %n row(s) as JSON", nullptr, rows), 3000);
    });

    // A group filters the list only when chosen: a click, Enter or Space. Moving through the
    // groups with the arrows (or tabbing into them) changes nothing, so the keyboard can pass.
    connect(m_groupView, &QAbstractItemView::clicked, this, &DeadLetterTab::onGroupActivated);
    QAction *choose = new QAction(tr("Filter by this failure group"), m_groupView);
    choose->setShortcuts(
        { QKeySequence(Qt::Key_Return), QKeySequence(Qt::Key_Enter), QKeySequence(Qt::Key_Space) });
    choose->setShortcutContext(Qt::WidgetShortcut);
    connect(choose, &QAction::triggered, this, &DeadLetterTab::onGroupActivated);
    m_groupView->addAction(choose);
}

DeadLetterTab::~DeadLetterTab() = default;

void DeadLetterTab::setSession(db::DatabaseSession *session)
{
    m_session = session;
    m_followUp->follow(nullptr, {}); // the old session goes; a new requeue starts following
    m_groupView->setModel(nullptr);
    m_table->setModel(nullptr);
    delete m_deadLetters;
    delete m_groups;
    m_deadLetters = new DeadLetterModel(session, this);
    m_groups = new FailureGroupModel(session, this);
    // The groups beside the list never hold up a page or a case view, nor the list's count on
    // the background connection: they and their verdicts run on the model's own connection,
    // where a newer filter cancels them (docs/architecture.md#threading).
    m_groups->setPriority(db::DatabaseSession::Priority::OwnConnection);
    m_deadLetters->setShowUtc(m_showUtc);
    m_groups->setShowUtc(m_showUtc);
    m_table->setModel(m_deadLetters);
    m_groupView->setModel(m_groups);
    m_table->horizontalHeader()->setSortIndicator(
        DeadLetterModel::column(QStringLiteral("dead_at")), Qt::DescendingOrder);
    QSettings settings;
    restoreLayout(settings);

    connect(m_liveTimer, &QTimer::timeout, m_deadLetters, &DeadLetterModel::checkForNewer);
    // The groups' counts follow at once. The list's own rows are read again in place (the
    // frozen pass keeps its rows and their order: docs/architecture.md#paging-a-frozen-pass);
    // newer dead letters are only counted (the "N new" badge).
    connect(m_liveTimer, &QTimer::timeout, m_groups, &FailureGroupModel::reload);
    connect(m_liveTimer, &QTimer::timeout, m_deadLetters, &DeadLetterModel::rereadShown);
    connect(m_deadLetters, &DeadLetterModel::totalChanged, this, &DeadLetterTab::onTotalChanged);
    connect(m_deadLetters, &DeadLetterModel::newerCountChanged, this, &DeadLetterTab::onNewerCount);
    connect(m_deadLetters, &DeadLetterModel::failed, this, [this](const db::DbError &e) {
        ErrorPresenter::report(this, e, tr("Loading dead letters"));
    });
    connect(m_groups, &FailureGroupModel::failed, this, [this](const db::DbError &e) {
        ErrorPresenter::report(this, e, tr("Loading failure groups"));
    });
    // The title's sample note belongs to the rows shown: cleared with them when another filter
    // empties the list, set again when its groups arrive.
    connect(m_groups, &QAbstractItemModel::modelReset, this,
            [this] { showGroupsTitle(m_groups->sampledMatches()); });
    connect(m_groups, &FailureGroupModel::loaded, this, [this] {
        showGroupsTitle(m_groups->sampledMatches());
        const int row = m_groups->rowOf(m_filterBar->filter().fingerprint);
        const QSignalBlocker block(m_groupView->selectionModel());
        if (row >= 0)
            m_groupView->selectRow(row);
    });
    if (m_actions) {
        connect(m_table->selectionModel(), &QItemSelectionModel::selectionChanged, m_actions,
                &DeadLetterActions::updateEnabled);
        // A reset clears the selection without selectionChanged: the actions must follow it.
        connect(m_deadLetters, &QAbstractItemModel::modelReset, m_actions,
                &DeadLetterActions::updateEnabled);
    }
}

void DeadLetterTab::showGroupsTitle(std::optional<qint64> sampledMatches)
{
    const QString title = tr("<b>Failure groups</b> — largest first; click one or press Enter on "
                             "it to filter");
    m_groupsTitle->setText(
        sampledMatches ? title
                + tr("<br><i>More dead letters match the search than were counted: the groups "
                     "are those of the first %L1 found (counts marked \u2265).</i>")
                      .arg(*sampledMatches)
                       : title);
}

void DeadLetterTab::load()
{
    m_newBadge->hide();
    applyFilter(m_filterBar->filter());
}

void DeadLetterTab::reload()
{
    if (m_deadLetters)
        m_deadLetters->reload();
    if (m_groups)
        m_groups->reload();
}

void DeadLetterTab::refreshAfterAction()
{
    if (m_deadLetters) {
        m_deadLetters->rereadShown();
        m_deadLetters->recount();
    }
    if (m_groups)
        m_groups->reload();
}

void DeadLetterTab::notifyChanged()
{
    m_liveTimer->start();
}

void DeadLetterTab::showDeadLettersWithKey(const QString &key)
{
    m_filterBar->showSearch(key);
}

void DeadLetterTab::setShowUtc(bool utc)
{
    m_showUtc = utc;
    if (m_deadLetters)
        m_deadLetters->setShowUtc(utc);
    if (m_groups)
        m_groups->setShowUtc(utc);
}

void DeadLetterTab::setSourcePicker(QWidget *picker)
{
    m_filterRow->insertWidget(0, picker);
}

void DeadLetterTab::installActions(DeadLetterActions *actions)
{
    m_actions = actions;
    connect(actions, &DeadLetterActions::requeueApplied, m_followUp,
            [this](const QList<qint64> &ids) { m_followUp->follow(m_session, ids); });
    auto *separator = new QAction(m_table);
    separator->setSeparator(true);
    m_table->addAction(separator);
    for (QAction *action : actions->actions()) {
        if (action && action != actions->requeueGroupAction()
            && action != actions->resolveGroupAction())
            m_table->addAction(action);
    }
    m_groupView->setContextMenuPolicy(Qt::ActionsContextMenu);
    m_groupView->addActions({ actions->requeueGroupAction(), actions->resolveGroupAction() });
    connect(m_filterBar, &DeadLetterFilterBar::filterChanged, actions,
            &DeadLetterActions::updateEnabled);
}

DeadLetterSelection DeadLetterTab::selection() const
{
    DeadLetterSelection selection;
    if (!m_deadLetters || !m_table->selectionModel())
        return selection;
    QList<int> rows;
    for (const QModelIndex &i : m_table->selectionModel()->selectedRows())
        rows << i.row();
    std::sort(rows.begin(), rows.end());
    for (int row : rows)
        selection.ids << m_deadLetters->idAt(row);
    selection.fingerprint = m_filterBar->filter().fingerprint;
    selection.groupLabel = m_filterBar->failureGroupLabel();
    return selection;
}

void DeadLetterTab::applyFilter(const DeadLetterFilter &filter)
{
    if (!m_deadLetters)
        return;
    m_newBadge->hide();
    m_deadLetters->setFilter(filter);
    m_groups->setFilter(filter);
    // The filter names queues and kinds from the database: bounded, invisible controls shown.
    Q_EMIT statusMessage(display::boundedText(filter.describe(), kMaxGroupLabelChars), 4000);
}

void DeadLetterTab::onGroupActivated()
{
    const QModelIndex current = m_groupView->currentIndex();
    if (!current.isValid())
        return;
    const QString fingerprint = m_groups->fingerprintAt(current.row());
    // A bounded prefix of the name (invisible controls as markers): the label goes into the
    // filter chip and the bulk confirmation (docs/security.md#text-from-the-database-is-plain-
    // text).
    const QString label = display::boundedText(m_groups->nameAt(current.row()), kMaxGroupLabelChars)
        + QStringLiteral(" · ")
        + m_groups->index(current.row(), FailureGroupModel::Kind).data().toString();
    m_filterBar->setFailureGroup(fingerprint, label);
}

void DeadLetterTab::onTotalChanged(qint64 total, bool exact)
{
    if (total < 0) {
        m_totalLabel->setText(tr("Counting…"));
        return;
    }
    const QString what
        = display::boundedText(m_filterBar->filter().describe(), kMaxGroupLabelChars);
    m_totalLabel->setText(exact ? tr("%L1 dead letters (exact count) — %2").arg(total).arg(what)
                                : tr("≥ %L1 dead letters (more than the exact count covers; the "
                                     "planner's estimate) — %2")
                                      .arg(total)
                                      .arg(what));
}

void DeadLetterTab::onNewerCount(int count)
{
    m_newBadge->setText(count >= 1000 ? tr("1000+ new ▲") : tr("%1 new ▲").arg(count));
    m_newBadge->setVisible(count > 0);
}

void DeadLetterTab::copySelection()
{
    // The table's copy reads last errors the page cut short whole first
    // (docs/architecture.md#long-values-in-lists); copied() then says how many rows went.
    m_table->copySelectedRows();
}

void DeadLetterTab::openCurrentCase()
{
    const QModelIndex current = m_table->currentIndex();
    if (current.isValid())
        Q_EMIT openCaseRequested(m_deadLetters->idAt(current.row()));
}

void DeadLetterTab::saveLayout(QSettings &settings) const
{
    settings.setValue(QStringLiteral("main/splitter"), m_splitter->saveState());
    // With the names of the columns: a layout saved before a column was added is not restored
    // onto the new list (panes::restoreColumns), so adding a column needs no change here.
    panes::saveColumns(settings, QStringLiteral("main/deadLetterColumns"), m_table);
    panes::saveColumns(settings, QStringLiteral("main/failureGroupColumns"), m_groupView);
}

void DeadLetterTab::restoreLayout(QSettings &settings)
{
    m_splitter->restoreState(settings.value(QStringLiteral("main/splitter")).toByteArray());
    if (!m_table->model())
        return;
    if (!panes::restoreColumns(settings, QStringLiteral("main/deadLetterColumns"), m_table)) {
        // First run: widths that fit what each column holds; a column not named keeps Qt's.
        panes::setColumnWidthsByName(m_table,
                                     { { QStringLiteral("dead_at"), 190 },
                                       { QStringLiteral("queue"), 90 },
                                       { QStringLiteral("kind"), 120 },
                                       { QStringLiteral("status"), 120 },
                                       { QStringLiteral("payment_ref"), 110 },
                                       { QStringLiteral("amount_minor"), 120 },
                                       { QStringLiteral("error_class"), 90 },
                                       { QStringLiteral("error_code"), 190 },
                                       { QStringLiteral("last_error"), 380 },
                                       { QStringLiteral("attempts"), 70 },
                                       { QStringLiteral("idempotency_key"), 170 },
                                       { QStringLiteral("fingerprint"), 100 },
                                       { QStringLiteral("age_seconds"), 90 },
                                       { QStringLiteral("id"), 70 },
                                       { QStringLiteral("job_ref"), 150 } });
        // The queue's own job id first; Redrive's dead-letter id last, out of the way.
        m_table->horizontalHeader()->moveSection(DeadLetterModel::column(QStringLiteral("job_ref")),
                                                 0);
    }
    if (!panes::restoreColumns(settings, QStringLiteral("main/failureGroupColumns"), m_groupView)) {
        // Name and verdict fit the pane's first-run width; the trend is 24 blocks.
        panes::setColumnWidthsByName(m_groupView,
                                     { { QStringLiteral("group_name"), 250 },
                                       { QStringLiteral("verdict_safe"), 170 },
                                       { QStringLiteral("dead_letters"), 55 },
                                       { QStringLiteral("open_dead_letters"), 50 },
                                       { QStringLiteral("in_flight_dead_letters"), 62 },
                                       { QStringLiteral("resolved_dead_letters"), 68 },
                                       { QStringLiteral("hourly"), 150 },
                                       { QStringLiteral("differs"), 260 },
                                       { QStringLiteral("first_dead_at"), 190 },
                                       { QStringLiteral("last_dead_at"), 190 },
                                       { QStringLiteral("kind"), 110 },
                                       { QStringLiteral("error_class"), 80 } });
    }
}

} // namespace redrive
