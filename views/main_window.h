// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/connection_settings.h"
#include "models/dead_letter_filter.h"
#include "models/live_updates.h"
#include "models/mention_search_model.h"

#include <QMainWindow>
#include <QStringList>
#include <memory>

class QComboBox;
class QLabel;
class QPushButton;
class QSplitter;
class QTableView;
class QTabWidget;
class QTimer;

namespace redrive {

namespace db {
class DatabaseSession;
class DbError;
struct ServerInfo;
} // namespace db

class AuditLogWidget;
class BulkActionsDialog;
class CaseView;
class CompensationWidget;
class DeadLetterActions;
class DeadLetterFilterBar;
class DeadLetterTab;
struct DeadLetterSelection;
class IdempotencyKeysWidget;
class MentionSearchDialog;
class OverviewWidget;
class ReconciliationWidget;
class DeadLetterModel;
class FailureGroupModel;

/// The console's main window: the dead-letter triage table with its filters and the
/// failure-groups panel, live "N new" updates, a banner while the connection is lost or the
/// schema does not match, and a status bar with server, database, login role, Redrive roles,
/// connection state and the last round-trip time. It owns the DatabaseSession; every query runs
/// off the GUI thread.
class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    explicit MainWindow(QWidget *parent = nullptr);
    ~MainWindow() override;

    /// Connects (again) with `settings`, rebuilding the views on the new session.
    void connectTo(const db::ConnectionSettings &settings);
    /// Opens the connection dialog; connects when the operator confirms.
    void showConnectionDialog(const QString &message = {});

    db::DatabaseSession *session() const { return m_session.get(); }
    DeadLetterTab *deadLetterTab() const { return m_deadLetterTab; }
    DeadLetterModel *deadLetterModel() const;
    FailureGroupModel *failureGroupModel() const;
    QTableView *deadLetterView() const;
    DeadLetterFilterBar *filterBar() const;
    /// True once the schema was checked and matches this console.
    bool schemaReady() const { return m_schemaReady; }
    QString bannerText() const;
    /// The operator actions on dead letters (toolbar, Actions menu, context menus).
    DeadLetterActions *actions() const { return m_actions; }
    /// Opens the case view of dead letter `id` in its own window, with the actions the login's
    /// roles allow on it; the window deletes itself when closed.
    CaseView *openCase(qint64 id);
    /// Opens (or raises) the customer search, View ▸ Find customer… (Ctrl+K), focused on its box.
    MentionSearchDialog *openSearch();
    /// Opens a search hit where it lives: a dead letter in its case view, a mismatch selected on
    /// the Reconciliation tab (`runId` its run), a compensation selected on the Compensations
    /// tab, an audit entry selected on the Audit log tab (`at` its time). Returns false when the
    /// tab is not there yet.
    bool openMention(MentionSearchModel::Kind kind, qint64 id, qint64 runId, const QDateTime &at);
    /// The tab widget (the search switches tabs).
    QTabWidget *tabs() const { return m_tabs; }
    ReconciliationWidget *reconciliationTab() const { return m_reconciliationTab; }
    CompensationWidget *compensationsTab() const { return m_compensationsTab; }
    AuditLogWidget *auditTab() const { return m_auditTab; }
    /// The source picker (native dead letters, or an installed job-queue adapter).
    QComboBox *sourceBox() const { return m_sourceBox; }
    /// The caller's Redrive roles once known (empty before, or for a login without one).
    QStringList redriveRoles() const { return m_redriveRoles; }
    /// Opens the list of unfinished bulk actions (Actions ▸ Unfinished bulk actions…): the
    /// caller's own, or every operator's. With `onlyIfAny`, it shows only once the list turned
    /// out not to be empty (as offered when the console connects). Returns the dialog.
    BulkActionsDialog *showBulkActions(bool mineOnly, bool onlyIfAny = false);

    /// Whether a refused login may open a password prompt (default true). Headless modes
    /// (screenshots) turn it off: a modal prompt nobody can see would wait forever.
    void setPromptsAllowed(bool allowed) { m_promptsAllowed = allowed; }
    /// True while the server refuses the login and nothing retries it (see loginRefused()).
    bool isLoginRefused() const { return m_loginRefused; }
    /// The server's reason for the refused login, on one line; never holds a password.
    QString loginRefusedReason() const { return m_loginRefusedReason; }
    /// The live link of the current session (null before connectTo()): every tab and open case
    /// view re-reads when it says so (docs/architecture.md#live-updates).
    LiveUpdates *liveUpdates() const { return m_live.get(); }
    /// The status bar's live indicator: "Live", or how long ago the views were last current.
    QString liveStatusText() const;

    // --- Reading from a standby (docs/architecture.md#reading-from-a-standby) -----------------
    /// Where reads come from and the standby's replay lag, as the status bar shows it: "Reads:
    /// standby HOST:PORT · lag 0 ms", "Reads: primary HOST:PORT (standby not available)"; empty
    /// with one server.
    QString readsStatusText() const;
    /// The banner shown while the standby's lag is at least the threshold; empty otherwise.
    QString lagBannerText() const;
    /// The lag from which the banner shows, in ms (default kReplayLagThresholdMs).
    void setReplayLagThresholdMs(qint64 ms) { m_lagThresholdMs = ms; }
    static constexpr qint64 kReplayLagThresholdMs = 5000;

Q_SIGNALS:
    /// The server refused the login (wrong or missing password, no pg_hba.conf entry) and no
    /// password was given at a prompt: nothing reconnects until File ▸ Connect….
    void loginRefused(const QString &reason);

protected:
    void closeEvent(QCloseEvent *event) override;

private:
    void buildUi();
    void buildActions();
    void onConnected(const db::ServerInfo &info);
    void onConnectionLost(const db::DbError &error);
    void onLoginRefused(const db::DbError &error);
    void onReconnectScheduled(int attempt, int delayMs);
    void checkSchema();
    void buildTabs();
    void loadTriage();
    void loadEverything();
    void loadFacets();
    void loadRoles();
    void showBanner(const QString &text, bool error);
    void updateStatus();
    void loadSources();
    void onSourceChosen(int index);
    DeadLetterSelection currentSelection() const;
    void afterAction();
    void onLiveChanged(LiveAreas areas);
    void onLiveLink(bool live, const db::DbError &error);
    void updateLiveLabel();
    void updateReadsStatus();
    void toggleUtc(bool utc);
    void saveLayout();
    void restoreLayout();

    std::unique_ptr<db::DatabaseSession> m_session;
    std::unique_ptr<LiveUpdates> m_live; ///< declared after the session: destroyed before it
    db::ConnectionSettings m_settings;

    QTabWidget *m_tabs = nullptr;
    QLabel *m_banner = nullptr;
    DeadLetterTab *m_deadLetterTab = nullptr;
    QLabel *m_serverLabel = nullptr;
    QLabel *m_rolesLabel = nullptr;
    QLabel *m_stateLabel = nullptr;
    QLabel *m_roundTripLabel = nullptr;
    IdempotencyKeysWidget *m_keysTab = nullptr;
    ReconciliationWidget *m_reconciliationTab = nullptr;
    OverviewWidget *m_overviewTab = nullptr;
    CompensationWidget *m_compensationsTab = nullptr;
    AuditLogWidget *m_auditTab = nullptr;
    QComboBox *m_sourceBox = nullptr;
    QLabel *m_sourceLabel = nullptr;
    DeadLetterActions *m_actions = nullptr;
    MentionSearchDialog *m_searchDialog = nullptr;
    QTimer *m_statusTimer = nullptr;
    QLabel *m_liveLabel = nullptr;
    QLabel *m_readsLabel = nullptr; ///< where reads come from, with a standby
    QLabel *m_lagBanner = nullptr; ///< the standby's lag passed the threshold
    qint64 m_lagThresholdMs = kReplayLagThresholdMs;
    QTimer *m_liveTimer = nullptr;
    QDateTime m_liveDownSince; ///< when the live link dropped (UTC); invalid while live
    bool m_overviewStale = false; ///< changed while hidden: re-read when shown

    QString m_loginRole;
    QStringList m_redriveRoles;
    bool m_schemaReady = false;
    bool m_wasConnected = false;
    bool m_showUtc = false;
    bool m_promptsAllowed = true;
    bool m_bulkActionsOffered = false; ///< unfinished bulks offered once per console
    bool m_loginRefused = false;
    QString m_loginRefusedReason;
};

} // namespace redrive
