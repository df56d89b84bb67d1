// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/main_window.h"

#include "models/bulk_action_list_model.h"
#include "models/console_reads.h"
#include "models/db/database_session.h"
#include "models/db/schema_migrator.h"
#include "models/dead_letter_model.h"
#include "models/display_format.h"
#include "models/failure_group_model.h"
#include "models/logging.h"
#include "models/operator_action.h"
#include "models/owner_only_settings.h"
#include "views/audit_log_widget.h"
#include "views/bulk_actions_dialog.h"
#include "views/case_view.h"
#include "views/compensation_widget.h"
#include "views/connection_dialog.h"
#include "views/dead_letter_actions.h"
#include "views/dead_letter_filter_bar.h"
#include "views/dead_letter_tab.h"
#include "views/elided_label.h"
#include "views/error_presenter.h"
#include "views/idempotency_keys_widget.h"
#include "views/keyboard_shortcuts_dialog.h"
#include "views/mention_search_dialog.h"
#include "views/overview_widget.h"
#include "views/reconciliation_widget.h"
#include "views/result_table_view.h"
#include "views/text_panes.h"

#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QCloseEvent>
#include <QComboBox>
#include <QHeaderView>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QMenuBar>
#include <QMessageBox>
#include <QPushButton>
#include <QSettings>
#include <QSplitter>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTimer>
#include <QToolBar>
#include <QVBoxLayout>

namespace redrive {

namespace {

// What the source picker keeps per source besides its search_path (the item's data).
constexpr int kSourceCapabilitiesRole = Qt::UserRole + 1; ///< QStringList, e.g. release_stuck
constexpr int kSourceHistoryRole = Qt::UserRole + 2; ///< where captured attempt history starts
constexpr int kSourceCaptureRole = Qt::UserRole + 3; ///< bool: the adapter's capture is active
/// How many characters of a server's message a banner or a status-bar note shows.
constexpr qsizetype kMaxNoteChars = 300;
/// How many characters of a login, host or database name the title and status bar show.
constexpr qsizetype kMaxServerNameChars = 120;

} // namespace

MainWindow::MainWindow(QWidget *parent)
    : QMainWindow(parent)
{
    setWindowTitle(tr("Redrive"));
    resize(1400, 860);
    buildUi();
    buildActions();
    restoreLayout();
}

MainWindow::~MainWindow() = default;

DeadLetterModel *MainWindow::deadLetterModel() const
{
    return m_deadLetterTab->model();
}

FailureGroupModel *MainWindow::failureGroupModel() const
{
    return m_deadLetterTab->groups();
}

QTableView *MainWindow::deadLetterView() const
{
    return m_deadLetterTab->table();
}

DeadLetterFilterBar *MainWindow::filterBar() const
{
    return m_deadLetterTab->filterBar();
}

void MainWindow::buildUi()
{
    auto *central = new QWidget(this);
    auto *layout = new QVBoxLayout(central);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(0);
    // Connection trouble concerns every tab: the banner stands above them.
    m_banner = new QLabel(central);
    m_banner->setTextFormat(Qt::PlainText);
    m_banner->setWordWrap(true);
    m_banner->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_banner->setObjectName(QStringLiteral("connectionBanner"));
    panes::ignoreTextWidth(m_banner);
    m_banner->hide();
    layout->addWidget(m_banner);
    // A standby that replays behind the primary: a banner of its own, so it never hides (or is
    // hidden by) one about the connection (docs/architecture.md#reading-from-a-standby).
    m_lagBanner = new QLabel(central);
    m_lagBanner->setObjectName(QStringLiteral("lagBanner"));
    m_lagBanner->setTextFormat(Qt::PlainText);
    m_lagBanner->setWordWrap(true);
    panes::ignoreTextWidth(m_lagBanner);
    m_lagBanner->setStyleSheet(QStringLiteral("QLabel { background: #fff4ce; color: #5c4400;"
                                              " padding: 6px; }"));
    m_lagBanner->hide();
    layout->addWidget(m_lagBanner);
    m_tabs = new QTabWidget(central);
    layout->addWidget(m_tabs, 1);

    m_deadLetterTab = new DeadLetterTab(m_tabs);
    m_sourceBox = new QComboBox(m_deadLetterTab);
    m_sourceBox->setObjectName(QStringLiteral("sourceBox"));
    m_sourceBox->setToolTip(tr("Where the dead letters come from: Redrive's own tables, or a job "
                               "queue whose adapter is installed (redrive install-source)"));
    m_sourceBox->setSizeAdjustPolicy(QComboBox::AdjustToContents);
    m_sourceBox->hide(); // shown when a database has more than one source
    connect(m_sourceBox, &QComboBox::activated, this, &MainWindow::onSourceChosen);
    m_deadLetterTab->setSourcePicker(m_sourceBox);
    connect(m_deadLetterTab, &DeadLetterTab::openCaseRequested, this, &MainWindow::openCase);
    connect(m_deadLetterTab, &DeadLetterTab::statusMessage, statusBar(), &QStatusBar::showMessage);
    m_tabs->addTab(m_deadLetterTab, tr("Dead letters"));
    setCentralWidget(central);

    m_sourceLabel = new ElidedLabel({}, this);
    m_sourceLabel->setTextFormat(Qt::PlainText);
    statusBar()->addPermanentWidget(m_sourceLabel);
    m_serverLabel = new ElidedLabel(tr("Not connected"), this);
    m_rolesLabel = new ElidedLabel({}, this);
    m_rolesLabel->setTextFormat(Qt::PlainText);
    m_stateLabel = new QLabel(this);
    m_roundTripLabel = new QLabel(this);
    statusBar()->addPermanentWidget(m_serverLabel);
    statusBar()->addPermanentWidget(m_rolesLabel);
    statusBar()->addPermanentWidget(m_stateLabel);
    statusBar()->addPermanentWidget(m_roundTripLabel);
    m_readsLabel = new QLabel(this);
    m_readsLabel->setObjectName(QStringLiteral("readsLabel"));
    m_readsLabel->hide(); // shown when the connection string names a standby
    statusBar()->addPermanentWidget(m_readsLabel);
    m_liveLabel = new QLabel(this);
    m_liveLabel->setObjectName(QStringLiteral("liveLabel"));
    statusBar()->addPermanentWidget(m_liveLabel);
    m_liveTimer = new QTimer(this); // "updated N s ago" counts up while the link is down
    m_liveTimer->setInterval(1000);
    connect(m_liveTimer, &QTimer::timeout, this, &MainWindow::updateLiveLabel);

    m_statusTimer = new QTimer(this);
    m_statusTimer->setInterval(2000);
    connect(m_statusTimer, &QTimer::timeout, this, &MainWindow::updateStatus);
    m_statusTimer->start();
}

void MainWindow::buildActions()
{
    QMenu *fileMenu = menuBar()->addMenu(tr("&File"));
    QAction *connectAction = fileMenu->addAction(tr("&Connect…"));
    connectAction->setShortcut(QKeySequence::Open);
    connect(connectAction, &QAction::triggered, this, [this] { showConnectionDialog(); });
    fileMenu->addSeparator();
    QAction *quit = fileMenu->addAction(tr("&Quit"));
    quit->setShortcut(QKeySequence::Quit);
    connect(quit, &QAction::triggered, this, &QWidget::close);

    QMenu *viewMenu = menuBar()->addMenu(tr("&View"));
    QAction *refresh = viewMenu->addAction(tr("&Refresh"));
    refresh->setObjectName(QStringLiteral("refreshAction"));
    // F5 alone: QKeySequence::Refresh also means Ctrl+R on GNOME and KDE, which is Requeue.
    refresh->setShortcut(QKeySequence(Qt::Key_F5));
    connect(refresh, &QAction::triggered, this, &MainWindow::loadEverything);
    QAction *find = viewMenu->addAction(tr("&Find / filter"));
    find->setShortcut(QKeySequence::Find);
    connect(find, &QAction::triggered, m_deadLetterTab->filterBar(),
            &DeadLetterFilterBar::focusSearch);
    QAction *findCustomer = viewMenu->addAction(tr("Find &customer…"));
    findCustomer->setObjectName(QStringLiteral("findCustomerAction"));
    findCustomer->setShortcut(QKeySequence(Qt::CTRL | Qt::Key_K));
    findCustomer->setToolTip(tr("Find every dead letter, mismatch, compensation and audit entry "
                                "that mentions an order number, payment reference, e-mail "
                                "address or provider charge id"));
    connect(findCustomer, &QAction::triggered, this, &MainWindow::openSearch);
    QAction *cancel = viewMenu->addAction(tr("Cancel running query"));
    cancel->setShortcut(Qt::Key_Escape);
    cancel->setShortcutContext(Qt::WindowShortcut);
    connect(cancel, &QAction::triggered, this, [this] {
        if (m_session && m_session->pendingCount() > 0) {
            m_session->cancelAll();
            statusBar()->showMessage(tr("Cancelling the running query and those queued behind "
                                        "it…"),
                                     4000);
        }
    });
    QAction *utc = viewMenu->addAction(tr("Show times in &UTC"));
    utc->setCheckable(true);
    utc->setShortcut(QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_U));
    connect(utc, &QAction::toggled, this, &MainWindow::toggleUtc);
    QAction *reset = viewMenu->addAction(tr("Reset filters"));
    connect(reset, &QAction::triggered, m_deadLetterTab->filterBar(), &DeadLetterFilterBar::clear);
    viewMenu->addSeparator();
    // Tabs from anywhere in the window (QTabWidget's own Ctrl+Tab needs focus on its tab bar).
    QAction *nextTab = viewMenu->addAction(tr("Next tab"));
    nextTab->setShortcuts(
        { QKeySequence(Qt::CTRL | Qt::Key_Tab), QKeySequence(Qt::CTRL | Qt::Key_PageDown) });
    connect(nextTab, &QAction::triggered, this,
            [this] { m_tabs->setCurrentIndex((m_tabs->currentIndex() + 1) % m_tabs->count()); });
    QAction *previousTab = viewMenu->addAction(tr("Previous tab"));
    previousTab->setShortcuts({ QKeySequence(Qt::CTRL | Qt::SHIFT | Qt::Key_Backtab),
                                QKeySequence(Qt::CTRL | Qt::Key_PageUp) });
    connect(previousTab, &QAction::triggered, this, [this] {
        m_tabs->setCurrentIndex((m_tabs->currentIndex() + m_tabs->count() - 1) % m_tabs->count());
    });

    // Operator actions: on the selection, or on the whole current failure group.
    m_actions = new DeadLetterActions(nullptr, this);
    m_actions->setSelectionProvider([this] { return currentSelection(); });
    connect(m_actions, &DeadLetterActions::actionApplied, this, &MainWindow::afterAction);
    QMenu *actionsMenu = menuBar()->addMenu(tr("&Actions"));
    actionsMenu->setToolTipsVisible(true);
    QToolBar *toolBar = addToolBar(tr("Actions"));
    toolBar->setObjectName(QStringLiteral("actionsToolBar"));
    toolBar->setToolButtonStyle(Qt::ToolButtonTextOnly);
    toolBar->setMovable(false);
    for (QAction *action : m_actions->actions()) {
        if (!action) {
            actionsMenu->addSeparator();
            toolBar->addSeparator();
            continue;
        }
        actionsMenu->addAction(action);
        toolBar->addAction(action);
    }
    actionsMenu->addSeparator();
    QAction *bulks = actionsMenu->addAction(tr("Unfinished &bulk actions…"));
    bulks->setObjectName(QStringLiteral("unfinishedBulkActions"));
    bulks->setToolTip(tr("Bulk actions stopped before every chunk was applied: resume, take "
                         "over or give up"));
    connect(bulks, &QAction::triggered, this, [this] { showBulkActions(false); });
    m_deadLetterTab->installActions(m_actions);

    QMenu *helpMenu = menuBar()->addMenu(tr("&Help"));
    QAction *keys = helpMenu->addAction(tr("&Keyboard shortcuts"));
    keys->setObjectName(QStringLiteral("keyboardShortcutsAction"));
    keys->setShortcut(QKeySequence(Qt::Key_F1));
    connect(keys, &QAction::triggered, this, [this] {
        auto *dialog = new KeyboardShortcutsDialog(this);
        dialog->setObjectName(QStringLiteral("keyboardShortcutsDialog"));
        dialog->setAttribute(Qt::WA_DeleteOnClose);
        dialog->show();
    });
    QAction *about = helpMenu->addAction(tr("&About Redrive"));
    connect(about, &QAction::triggered, this, [this] {
        QMessageBox box(QMessageBox::Information, tr("About Redrive"),
                        tr("Redrive %1\nAn operator console for dead letters: requeue, resolve "
                           "and compensate under a tamper-evident audit log.\n\nLicensed under "
                           "the GNU General Public License, version 3 or later.")
                            .arg(QCoreApplication::applicationVersion()),
                        QMessageBox::Ok, this);
        box.setTextFormat(Qt::PlainText);
        box.exec();
    });
    connect(m_tabs, &QTabWidget::currentChanged, m_actions, &DeadLetterActions::updateEnabled);
    connect(m_tabs, &QTabWidget::currentChanged, this, [this] {
        if (m_overviewStale && m_overviewTab && m_tabs->currentWidget() == m_overviewTab) {
            m_overviewStale = false;
            m_overviewTab->refresh();
        }
    });
}

BulkActionsDialog *MainWindow::showBulkActions(bool mineOnly, bool onlyIfAny)
{
    if (!m_session)
        return nullptr;
    auto *dialog = new BulkActionsDialog(m_session.get(), m_redriveRoles, mineOnly, this);
    dialog->setObjectName(QStringLiteral("bulkActionsDialog"));
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowModality(Qt::WindowModal);
    connect(dialog, &BulkActionsDialog::resumeRequested, m_actions, &DeadLetterActions::resumeBulk);
    if (!onlyIfAny) {
        dialog->show();
        return dialog;
    }
    connect(dialog->model(), &ResultTableModel::loaded, dialog, [dialog] {
        if (dialog->model()->rowCount() > 0)
            dialog->show();
        else
            dialog->deleteLater();
    });
    return dialog;
}

DeadLetterSelection MainWindow::currentSelection() const
{
    // The toolbar and menus act on what the operator is looking at: with another tab in front,
    // a dead letter still selected on the hidden tab is never a target.
    if (m_tabs->currentWidget() != m_deadLetterTab) {
        DeadLetterSelection selection;
        selection.outOfView = m_tabs->currentWidget() == m_reconciliationTab
            ? tr("acts on the Dead letters tab; for a mismatch use Request refund… on this tab")
            : tr("acts on the Dead letters tab: switch to it first");
        return selection;
    }
    return m_deadLetterTab->selection();
}

void MainWindow::afterAction()
{
    // Statuses changed: the rows shown are read again in place (no new pass of the whole list,
    // docs/architecture.md#paging-a-frozen-pass), so each acted-on row stays where it was and
    // shows its new status; the total counts what still matches the filter.
    m_deadLetterTab->refreshAfterAction();
    if (m_compensationsTab) {
        m_compensationsTab->reload();
        m_auditTab->reload();
    }
    statusBar()->showMessage(tr("Action applied: the rows stay in place with their new status; "
                                "the total counts the filter again, F5 lists it anew"),
                             6000);
}

void MainWindow::onLiveChanged(LiveAreas areas)
{
    // Each view re-reads through the role-checked views and keeps the operator's place
    // (docs/architecture.md#live-updates).
    if (areas & (LiveArea::DeadLetters | LiveArea::Outbox))
        m_deadLetterTab->notifyChanged();
    if (!m_keysTab)
        return;
    if (areas & LiveArea::Compensations)
        m_compensationsTab->reload();
    // Audit entries come with the changes they record (migration 0013_live_notifications.sql).
    if (areas & ~LiveAreas(LiveArea::Attempts))
        m_auditTab->reload();
    if (areas & LiveArea::Keys)
        m_keysTab->followChanges();
    if (areas & LiveArea::Reconciliation)
        m_reconciliationTab->refresh();
    if (areas & (LiveArea::DeadLetters | LiveArea::Attempts)) {
        // The charts are the costliest read: only the one on screen follows at once.
        if (m_tabs->currentWidget() == m_overviewTab)
            m_overviewTab->refresh();
        else
            m_overviewStale = true;
    }
}

void MainWindow::onLiveLink(bool live, const db::DbError &error)
{
    if (live) {
        if (m_liveDownSince.isValid())
            statusBar()->showMessage(tr("Live updates are back; re-reading what changed while "
                                        "they were down"),
                                     8000);
        m_liveDownSince = {};
    } else {
        m_liveDownSince = QDateTime::currentDateTimeUtc();
        statusBar()->showMessage(tr("Live updates lost (%1); reconnecting")
                                     .arg(display::boundedText(error.summary(), kMaxNoteChars)),
                                 8000);
    }
    updateLiveLabel();
}

QString MainWindow::liveStatusText() const
{
    if (!m_live)
        return {};
    if (m_live->isLive())
        return tr("● Live");
    if (!m_liveDownSince.isValid())
        return tr("○ Not live yet");
    const qint64 ago = m_liveDownSince.secsTo(QDateTime::currentDateTimeUtc());
    return tr("○ Not live: updated %1 ago (F5 re-reads)").arg(display::duration(ago * 1000));
}

void MainWindow::updateLiveLabel()
{
    m_liveLabel->setText(liveStatusText());
    m_liveLabel->setToolTip(
        m_live && m_live->isLive()
            ? tr("Every tab follows changes as they happen (last re-read %1)")
                  .arg(m_live->lastChangeAt().isValid()
                           ? display::time(m_live->lastChangeAt(), m_showUtc)
                           : tr("not yet"))
            : tr("The live link is down and reconnecting by itself; the views show what was "
                 "current when it dropped"));
    m_liveLabel->setStyleSheet(m_live && m_live->isLive()
                                   ? QStringLiteral("QLabel { color: #1a7f37; }")
                                   : QStringLiteral("QLabel { color: #b35900; }"));
    if (m_live && !m_live->isLive() && m_liveDownSince.isValid())
        m_liveTimer->start();
    else
        m_liveTimer->stop();
}

void MainWindow::connectTo(const db::ConnectionSettings &settings)
{
    m_settings = settings;
    if (m_settings.searchPath.isEmpty())
        m_settings.searchPath = QStringLiteral("redrive");
    m_schemaReady = false;
    m_wasConnected = false;
    m_loginRefused = false;
    m_loginRefusedReason.clear();
    m_live.reset(); // listens on the old session
    m_session = std::make_unique<db::DatabaseSession>(m_settings);
    m_deadLetterTab->setSession(m_session.get());
    m_live = std::make_unique<LiveUpdates>(m_session.get());
    connect(m_live.get(), &LiveUpdates::changed, this, &MainWindow::onLiveChanged);
    connect(m_live.get(), &LiveUpdates::linkChanged, this, &MainWindow::onLiveLink);
    m_liveDownSince = {};
    updateLiveLabel();

    connect(m_session.get(), &db::DatabaseSession::connected, this, &MainWindow::onConnected);
    connect(m_session.get(), &db::DatabaseSession::connectionLost, this,
            &MainWindow::onConnectionLost);
    connect(m_session.get(), &db::DatabaseSession::reconnectScheduled, this,
            &MainWindow::onReconnectScheduled);
    connect(m_session.get(), &db::DatabaseSession::replayStatusChanged, this,
            &MainWindow::updateReadsStatus);
    connect(m_session.get(), &db::DatabaseSession::readRoutedToPrimary, this, [this] {
        statusBar()->showMessage(tr("The standby has not replayed your last action yet: read from "
                                    "the primary until it has"),
                                 5000);
    });
    m_actions->setSession(m_session.get());

    // The other tabs are rebuilt on the new session too (each holds its own models).
    while (m_tabs->count() > 1) {
        QWidget *old = m_tabs->widget(1);
        m_tabs->removeTab(1);
        delete old;
    }
    delete m_searchDialog; // it searched through the old session
    m_searchDialog = nullptr;
    m_keysTab = nullptr; // built once the schema is known to match: they query at once
    m_reconciliationTab = nullptr;
    m_overviewTab = nullptr;
    m_compensationsTab = nullptr;
    m_auditTab = nullptr;

    m_serverLabel->setText(tr("Connecting…"));
    m_stateLabel->setText(tr("Connecting"));
    showBanner({}, false);
    updateReadsStatus();
    m_session->open();
}

void MainWindow::showConnectionDialog(const QString &message)
{
    ConnectionDialog dialog(this);
    db::ConnectionSettings initial = m_settings;
    if (m_loginRefused) { // the password the server refused is not offered again
        initial.connInfo = db::redactedConnInfo(initial.connInfo);
        initial.password.clear();
    }
    dialog.setInitial(initial, message);
    if (dialog.exec() == QDialog::Accepted)
        connectTo(dialog.settings());
}

void MainWindow::onConnected(const db::ServerInfo &info)
{
    const bool reconnect = m_wasConnected;
    m_wasConnected = true;
    m_loginRefused = false;
    m_loginRefusedReason.clear();
    // The server names them: bounded, invisible controls shown as markers
    // (docs/security.md#text-from-the-database-is-plain-text).
    auto name = [](const QString &value) {
        return display::boundedLines(value, 1, kMaxServerNameChars)
            .replace(QLatin1Char('\n'), QLatin1Char(' '));
    };
    m_serverLabel->setText(tr("%1@%2:%3/%4 · PostgreSQL %5")
                               .arg(name(info.user), name(info.host), name(info.port),
                                    name(info.database), name(info.serverVersion)));
    m_stateLabel->setText(tr("Connected"));
    setWindowTitle(
        tr("Redrive — %1@%2 (%3)").arg(name(info.user), name(info.database), name(info.host)));
    showBanner({}, false);
    const bool movedReads = m_session->usesStandby() && reconnect;
    updateReadsStatus();
    if (reconnect && m_schemaReady) {
        statusBar()->showMessage(
            !movedReads ? tr("Reconnected; refreshing with the same filters")
                : info.hotStandby
                ? tr("The standby is back: reading from it again; refreshing")
                : tr("The standby is not available: reading from the primary; refreshing"),
            5000);
        loadEverything();
        return;
    }
    checkSchema();
}

void MainWindow::checkSchema()
{
    reads::schemaVersion(m_session.get(), this, [this](const db::DbExpected<int> &version) {
        if (!version) {
            ErrorPresenter::report(this, version.error(), tr("Checking the schema"));
            return;
        }
        const int expected = db::SchemaMigrator::expectedVersion();
        const int found = *version;
        if (found == 0) {
            showBanner(tr("This database has no Redrive schema. Create it with:  redrive "
                          "migrate --conninfo \"%1\"  (this console expects schema version "
                          "%2).")
                           .arg(display::oneLine(db::redactedConnInfo(m_settings.connInfo), 500),
                                QString::number(expected)),
                       true);
            return;
        }
        if (found < expected) {
            showBanner(tr("This database has Redrive schema version %1; this console "
                          "expects version %2. Upgrade it with:  redrive migrate "
                          "--conninfo \"%3\"")
                           .arg(found)
                           .arg(expected)
                           .arg(display::oneLine(db::redactedConnInfo(m_settings.connInfo), 500)),
                       true);
            return;
        }
        if (found > expected)
            showBanner(tr("This database has Redrive schema version %1, newer than "
                          "this console (version %2). Some views may fail: upgrade "
                          "Redrive.")
                           .arg(found)
                           .arg(expected),
                       true);
        m_schemaReady = true;
        if (!m_keysTab)
            buildTabs();
        m_live->start();
        // Every tab loads now: a tab that waited to be refreshed would show zero
        // stuck keys or mismatches, which reads as an all-clear.
        loadEverything();
    });
}

void MainWindow::buildTabs()
{
    m_keysTab = new IdempotencyKeysWidget(m_session.get(), m_tabs);
    connect(m_keysTab, &IdempotencyKeysWidget::deadLettersWithKeyRequested, this,
            [this](const QString &key) {
                m_deadLetterTab->showDeadLettersWithKey(key);
                m_tabs->setCurrentWidget(m_deadLetterTab);
            });
    connect(m_keysTab, &IdempotencyKeysWidget::jobCaseRequested, this, [this](const QString &job) {
        reads::deadLetterOfJob(m_session.get(), this, job,
                               [this, job](const db::DbExpected<std::optional<qint64>> &found) {
                                   if (!found)
                                       ErrorPresenter::report(this, found.error(),
                                                              tr("Finding the job's dead letter"));
                                   else if (!found->has_value())
                                       statusBar()->showMessage(
                                           tr("Job %1 has no dead letter: it has not failed for "
                                              "good")
                                               .arg(job),
                                           8000);
                                   else
                                       openCase(**found);
                               });
    });
    m_reconciliationTab = new ReconciliationWidget(m_session.get(), m_tabs);
    m_overviewTab = new OverviewWidget(m_session.get(), m_tabs);
    m_tabs->addTab(m_keysTab, tr("Idempotency keys"));
    m_tabs->addTab(m_reconciliationTab, tr("Reconciliation"));
    connect(m_reconciliationTab, &ReconciliationWidget::compensationRequested, this,
            &MainWindow::afterAction);
    m_tabs->addTab(m_overviewTab, tr("Overview"));
    m_keysTab->setShowUtc(m_showUtc);
    m_reconciliationTab->setShowUtc(m_showUtc);
    m_overviewTab->setShowUtc(m_showUtc);

    // Compensation requests and approvals, and the audit log.
    m_compensationsTab = new CompensationWidget(m_session.get(), m_tabs);
    m_compensationsTab->setOsUser(OperatorAction::osUser());
    m_compensationsTab->setShowUtc(m_showUtc);
    m_tabs->addTab(m_compensationsTab, tr("Compensations"));
    connect(m_compensationsTab, &CompensationWidget::compensationDecided, this,
            &MainWindow::afterAction);
    m_auditTab = new AuditLogWidget(m_session.get(), m_tabs);
    m_auditTab->setShowUtc(m_showUtc);
    m_tabs->addTab(m_auditTab, tr("Audit log"));
}

void MainWindow::loadTriage()
{
    if (!m_session || !m_schemaReady)
        return;
    loadRoles();
    loadSources();
    m_deadLetterTab->load();
    loadFacets(); // background work: never on the path to the first page
}

void MainWindow::loadEverything()
{
    if (!m_session || !m_schemaReady)
        return;
    loadTriage();
    if (m_keysTab) {
        // The other tabs load in the background: a page or case view asked for meanwhile
        // runs on the interactive connection and never waits for them.
        const db::DatabaseSession::BackgroundScope background(m_session.get());
        m_keysTab->refresh();
        m_reconciliationTab->refresh();
        m_overviewTab->refresh();
        m_compensationsTab->reload();
        m_auditTab->reload();
    }
}

void MainWindow::loadFacets()
{
    reads::deadLetterFacets(
        m_session.get(), this, [this](const db::DbExpected<reads::DeadLetterFacets> &facets) {
            if (facets)
                m_deadLetterTab->filterBar()->setFacets(facets->queues, facets->kinds);
        });
}

void MainWindow::loadRoles()
{
    reads::sessionRoles(
        m_session.get(), this, [this](const db::DbExpected<reads::SessionRoles> &roles) {
            if (!roles || roles->login.isEmpty())
                return;
            m_loginRole = roles->login;
            m_redriveRoles = roles->redriveRoles;
            m_actions->setRoles(m_redriveRoles);
            // On start, the caller's own bulks a closed or crashed console left
            // unfinished (docs/reliability.md).
            if (!m_bulkActionsOffered && m_promptsAllowed
                && (m_redriveRoles.contains(QStringLiteral("redrive_oncall"))
                    || m_redriveRoles.contains(QStringLiteral("redrive_support")))) {
                m_bulkActionsOffered = true;
                showBulkActions(true, true);
            }
            if (m_keysTab) {
                m_keysTab->setRoles(m_redriveRoles);
                m_reconciliationTab->setRoles(m_redriveRoles);
                m_compensationsTab->setRoles(m_loginRole, m_redriveRoles);
            }
            updateStatus();
        });
}

void MainWindow::loadSources()
{
    reads::sources(
        m_session.get(), this, [this](const db::DbExpected<QList<reads::Source>> &sources) {
            if (!sources)
                return; // an older schema without sources: native only
            const QSignalBlocker block(m_sourceBox);
            m_sourceBox->clear();
            auto normalized = [](QString path) {
                return path.remove(QLatin1Char(' '));
            };
            int current = -1;
            for (const reads::Source &source : *sources) {
                m_sourceBox->addItem(source.label, source.searchPath);
                const int r = m_sourceBox->count() - 1;
                m_sourceBox->setItemData(r, source.capabilities, kSourceCapabilitiesRole);
                m_sourceBox->setItemData(r, source.historyStartsAt, kSourceHistoryRole);
                m_sourceBox->setItemData(r, source.captureActive, kSourceCaptureRole);
                if (normalized(source.searchPath) == normalized(m_settings.searchPath))
                    current = r;
            }
            m_sourceBox->setVisible(m_sourceBox->count() > 1);
            if (current < 0) {
                m_sourceLabel->clear();
                return;
            }
            m_sourceBox->setCurrentIndex(current);
            m_actions->setCapabilities(
                m_sourceBox->itemData(current, kSourceCapabilitiesRole).toStringList());
            const QDateTime since = m_sourceBox->itemData(current, kSourceHistoryRole).toDateTime();
            const QString label = m_sourceBox->itemText(current);
            if (!m_sourceBox->itemData(current, kSourceCaptureRole).toBool()) {
                // docs/architecture.md, "Source adapters": a dropped and recreated queue schema
                // takes the capture trigger with it; say so instead of a history that just ends.
                m_sourceLabel->setText(
                    tr("Source: %1 · capture NOT active: failures are not being recorded")
                        .arg(label));
                m_sourceLabel->setToolTip(
                    tr("The adapter's capture trigger is missing (was the queue's schema dropped "
                       "and recreated?). Run `redrive install-source` as the owner of Redrive's "
                       "schema to reinstall it; failures in between were not captured."));
                return;
            }
            m_sourceLabel->setText(!since.isValid()
                                       ? tr("Source: %1").arg(label)
                                       : tr("Source: %1 · attempt history captured since %2")
                                             .arg(label, display::time(since, m_showUtc)));
            m_sourceLabel->setToolTip(!since.isValid()
                                          ? QString()
                                          : tr("This queue keeps no history of its own; Redrive "
                                               "records each failure from the adapter's "
                                               "installation on. Earlier attempts show only the "
                                               "last error the queue kept."));
        });
}

void MainWindow::onSourceChosen(int index)
{
    const QString path = m_sourceBox->itemData(index).toString();
    if (path.isEmpty() || path == m_settings.searchPath)
        return;
    db::ConnectionSettings settings = m_settings;
    settings.searchPath = path; // the read contract and actions of that source
    statusBar()->showMessage(tr("Switching to %1…").arg(m_sourceBox->itemText(index)), 4000);
    connectTo(settings);
}

void MainWindow::onConnectionLost(const db::DbError &error)
{
    m_stateLabel->setText(tr("Disconnected"));
    updateReadsStatus();
    // The server's message, bounded and with its invisible controls shown: a 20,000-character
    // word made the window 32,767 px wide (docs/security.md#text-from-the-database-is-plain-text).
    const QString message = display::boundedText(error.message().simplified(), kMaxNoteChars);
    if (error.kind() == db::ErrorKind::Authentication) {
        onLoginRefused(error);
        return;
    }
    showBanner(m_wasConnected ? tr("Connection lost: %1 — reconnecting; your filters and "
                                   "selection are kept.")
                                    .arg(message)
                              : tr("Cannot connect: %1 — retrying. (File ▸ Connect… to change "
                                   "the connection.)")
                                    .arg(message),
               true);
}

void MainWindow::onLoginRefused(const db::DbError &error)
{
    // Nothing retries a refused login by itself (the session waits): ask for a password, or say
    // how to give one. 28000 (no pg_hba.conf entry, role cannot log in) is not about a password.
    m_loginRefused = true;
    m_loginRefusedReason = display::boundedText(error.message().simplified(), kMaxNoteChars);
    m_serverLabel->setText(tr("Not connected"));
    m_stateLabel->setText(tr("Login refused"));
    const QString what = m_settings.connInfo.trimmed().isEmpty()
        ? tr("the default connection")
        : db::redactedConnInfo(m_settings.connInfo);
    if (m_promptsAllowed && error.sqlState() != QLatin1String("28000")) {
        const QString password = ConnectionDialog::askPassword(this, what, m_loginRefusedReason);
        if (!password.isEmpty() && m_session) {
            m_loginRefused = false;
            m_settings.password = password;
            m_stateLabel->setText(tr("Connecting"));
            showBanner({}, false);
            m_session->retryWithPassword(password);
            return;
        }
    }
    showBanner(tr("The server refused the login: %1 — not retrying. Choose File ▸ Connect… to "
                  "give a password (or put it in ~/.pgpass).")
                   .arg(m_loginRefusedReason),
               true);
    Q_EMIT loginRefused(m_loginRefusedReason);
}

void MainWindow::onReconnectScheduled(int attempt, int delayMs)
{
    m_stateLabel->setText(
        tr("Reconnecting (attempt %1 in %2)").arg(attempt).arg(display::duration(delayMs)));
}

void MainWindow::showBanner(const QString &text, bool error)
{
    m_banner->setText(text);
    m_banner->setStyleSheet(error ? QStringLiteral("QLabel { background: #fde2e1; color: #7a1512;"
                                                   " padding: 8px; border: 1px solid #e0a09c; }")
                                  : QStringLiteral("QLabel { background: #e6f1ff; color: #123c6b;"
                                                   " padding: 8px; border: 1px solid #a9c7ee; }"));
    m_banner->setVisible(!text.isEmpty());
}

QString MainWindow::bannerText() const
{
    return m_banner->isVisible() ? m_banner->text() : QString();
}

QString MainWindow::readsStatusText() const
{
    if (!m_session || !m_session->usesStandby())
        return {};
    if (!m_session->isConnected())
        return tr("Reads: not connected");
    const db::ServerInfo info = m_session->serverInfo();
    if (!info.hotStandby)
        return tr("Reads: primary %1:%2 (standby not available)").arg(info.host, info.port);
    const db::ReplayStatus status = m_session->replayStatus();
    QString text
        = tr("Reads: standby %1:%2 · lag %3")
              .arg(info.host, info.port, display::duration(qint64(status.lagSeconds * 1000.0)));
    if (status.replayPaused)
        text += tr(" (replay paused)");
    return text;
}

QString MainWindow::lagBannerText() const
{
    return m_lagBanner->isVisible() ? m_lagBanner->text() : QString();
}

void MainWindow::updateReadsStatus()
{
    const QString text = readsStatusText();
    m_readsLabel->setText(text);
    m_readsLabel->setVisible(!text.isEmpty());
    const db::ReplayStatus status = m_session ? m_session->replayStatus() : db::ReplayStatus();
    m_readsLabel->setToolTip(
        text.isEmpty() ? QString()
                       : tr("Lists and case views are read from a hot standby when one answers; "
                            "actions always run on the primary, and what an action changed is "
                            "read from the primary until the standby has replayed it. WAL not "
                            "replayed yet: %1 bytes.")
                             .arg(status.lagBytes));
    const qint64 lagMs = qint64(status.lagSeconds * 1000.0);
    const bool behind = m_session && m_session->readsFromStandby() && status.onStandby
        && status.lagBytes > 0 && lagMs >= m_lagThresholdMs;
    if (behind)
        m_lagBanner->setText(
            tr("The standby these views are read from is %1 behind the primary%2: what you see "
               "may be that old. Your own actions are read from the primary until it catches up.")
                .arg(display::duration(lagMs),
                     status.replayPaused ? tr(" (its replay is paused)") : QString()));
    m_lagBanner->setVisible(behind);
}

void MainWindow::updateStatus()
{
    if (!m_loginRole.isEmpty())
        m_rolesLabel->setText(tr("%1 · roles: %2")
                                  .arg(m_loginRole,
                                       m_redriveRoles.isEmpty()
                                           ? tr("none (read-only)")
                                           : m_redriveRoles.join(QStringLiteral(", "))));
    if (m_session && m_session->lastRoundTripMs() >= 0)
        m_roundTripLabel->setText(tr("round trip %1 ms").arg(m_session->lastRoundTripMs()));
}

CaseView *MainWindow::openCase(qint64 id)
{
    auto *caseView = new CaseView(m_session.get(), id, m_showUtc, this);
    caseView->setAttribute(Qt::WA_DeleteOnClose);
    caseView->setRoles(m_redriveRoles);
    // The same actions as the main window, on this one dead letter.
    auto *caseActions = new DeadLetterActions(m_session.get(), caseView);
    caseActions->setSelectionProvider([id] {
        DeadLetterSelection selection;
        selection.ids = { id };
        return selection;
    });
    caseActions->setRoles(m_redriveRoles);
    caseActions->setCapabilities(m_sourceBox->currentData(kSourceCapabilitiesRole).toStringList());
    for (QAction *action : caseActions->actions())
        if (action && action != caseActions->requeueGroupAction()
            && action != caseActions->resolveGroupAction())
            caseView->actionsToolBar()->addAction(action);
    connect(caseActions, &DeadLetterActions::actionApplied, caseView, &CaseView::reload);
    connect(caseActions, &DeadLetterActions::actionApplied, this, &MainWindow::afterAction);
    // Changes by others (and the outbox and audit rows the worker writes after this window's own
    // action) are re-read as they happen.
    if (m_live)
        connect(m_live.get(), &LiveUpdates::changed, caseView, [caseView](LiveAreas areas) {
            if (areas
                & (LiveArea::DeadLetters | LiveArea::Attempts | LiveArea::Outbox | LiveArea::Audit
                   | LiveArea::Keys | LiveArea::Compensations))
                caseView->reload();
        });
    caseView->show();
    return caseView;
}

MentionSearchDialog *MainWindow::openSearch()
{
    if (!m_session)
        return nullptr;
    if (!m_searchDialog) {
        m_searchDialog = new MentionSearchDialog(m_session.get(), this);
        m_searchDialog->setShowUtc(m_showUtc);
        connect(m_searchDialog, &MentionSearchDialog::openRequested, this,
                &MainWindow::openMention);
    }
    m_searchDialog->show();
    m_searchDialog->raise();
    m_searchDialog->activateWindow();
    m_searchDialog->searchBox()->setFocus();
    m_searchDialog->searchBox()->selectAll();
    return m_searchDialog;
}

bool MainWindow::openMention(MentionSearchModel::Kind kind, qint64 id, qint64 runId,
                             const QDateTime &at)
{
    using K = MentionSearchModel::Kind;
    if (kind == K::DeadLetter) {
        openCase(id);
        return true;
    }
    if (!m_reconciliationTab)
        return false; // the other tabs are built once the schema is known to match
    switch (kind) {
    case K::Mismatch:
        m_tabs->setCurrentWidget(m_reconciliationTab);
        m_reconciliationTab->showMismatch(id, runId);
        break;
    case K::Compensation:
        m_tabs->setCurrentWidget(m_compensationsTab);
        m_compensationsTab->showRequest(id);
        break;
    case K::AuditEntry:
        m_tabs->setCurrentWidget(m_auditTab);
        m_auditTab->showEntryInList(id, at);
        break;
    default:
        return false;
    }
    activateWindow();
    return true;
}

void MainWindow::toggleUtc(bool utc)
{
    m_showUtc = utc;
    if (m_searchDialog)
        m_searchDialog->setShowUtc(utc);
    m_deadLetterTab->setShowUtc(utc);
    if (m_keysTab) {
        m_keysTab->setShowUtc(utc);
        m_reconciliationTab->setShowUtc(utc);
        m_overviewTab->setShowUtc(utc);
        m_compensationsTab->setShowUtc(utc);
        m_auditTab->setShowUtc(utc);
    }
}

void MainWindow::saveLayout()
{
    QSettings settings;
    // A window larger than the screen is not saved (docs/security.md#text-from-the-database-is-
    // plain-text): the next start opens at the default size instead of the poisoned one.
    const QByteArray geometry = panes::geometryWorthSaving(this);
    if (geometry.isEmpty())
        settings.remove(QStringLiteral("main/geometry"));
    else
        settings.setValue(QStringLiteral("main/geometry"), geometry);
    settings.setValue(QStringLiteral("main/state"), saveState());
    m_deadLetterTab->saveLayout(settings);
    syncOwnerOnly(settings);
}

void MainWindow::restoreLayout()
{
    QSettings settings;
    panes::restoreGeometryOnScreen(this,
                                   settings.value(QStringLiteral("main/geometry")).toByteArray());
    restoreState(settings.value(QStringLiteral("main/state")).toByteArray());
    m_deadLetterTab->restoreLayout(settings);
}

void MainWindow::closeEvent(QCloseEvent *event)
{
    saveLayout();
    QMainWindow::closeEvent(event);
}

} // namespace redrive
