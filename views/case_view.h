// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/dead_letter_case.h"
#include "views/field_grid.h"

#include <QStringList>
#include <QWidget>

class QFrame;
class QLabel;
class QPushButton;
class QStandardItemModel;
class QTabWidget;
class QTableView;
class QToolBar;

namespace redrive {

class AttemptTimelinePlot;
class CaseHeadersTab;
class CaseHistoryTab;
class CaseKeyTab;
class CaseLastErrorTab;
class CaseOutboxAuditTab;
class CasePayloadTab;
class CaseReconciliationTab;

namespace db {
class DatabaseSession;
}

/// The case view of one dead letter: a top-level window with a header (queue, kind,
/// status, error, attempts, dead at, age, idempotency key, failure group, claim), the "Is it safe
/// to retry?" verdict box (worst reason first), and tabs for the payload, headers and ordering
/// key, last error with its full stack trace, retry history with its timeline, idempotency-key
/// record, reconciliation mismatches, and outbox and audit entries. Read-only: actions go into
/// actionsToolBar(). Times are local with their UTC offset, or UTC when asked.
/// Esc closes the window, F5 reloads, Ctrl+C in a table copies the selected rows as JSON.
/// Everything is loaded through DeadLetterCase, so nothing waits for the database on the GUI
/// thread; payload formatting runs on a pool thread. The window does not delete itself on close;
/// set Qt::WA_DeleteOnClose when opening it from the console.
class CaseView : public QWidget
{
    Q_OBJECT
public:
    /// `session` must outlive the window. Starts loading at once.
    CaseView(db::DatabaseSession *session, qint64 deadLetterId, bool showUtc,
             QWidget *parent = nullptr);
    ~CaseView() override;

    DeadLetterCase *deadLetterCase() const { return m_case; }
    /// The empty slot at the top for operator actions (named "actions"); it shows itself when
    /// the first action is added.
    QToolBar *actionsToolBar() const { return m_actions; }
    AttemptTimelinePlot *timeline() const;
    /// The JSON tree of the payload (Payload tab).
    QStandardItemModel *payloadTreeModel() const;
    /// True while the payload is being loaded in full or formatted.
    bool isPayloadBusy() const;
    /// True while the payload is busy or a long text is still going into one of the text panes
    /// (panes::setPlainTextInSlices): what was loaded is not all on screen yet.
    bool isTextBusy() const;

    /// Local time with offset (false) or UTC (true) everywhere in the window.
    void setShowUtc(bool utc);
    /// Loads every part again (F5).
    void reload();
    /// The caller's Redrive roles: releasing a stuck key (Idempotency key tab) needs
    /// redrive_oncall or redrive_support; the database checks again.
    void setRoles(const QStringList &redriveRoles);
    /// "Release stuck key…" on the Idempotency key tab: shown while the key is stuck.
    QPushButton *releaseKeyButton() const;

protected:
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    void buildUi();
    void saveLayout() const;
    void restoreLayout();
    QTableView *makeTable(QWidget *parent, const QString &name);

    void onPartLoaded(DeadLetterCase::Part part);
    void onFailed(DeadLetterCase::Part part, const db::DbError &error);

    void renderDetail();
    void renderVerdict();
    void renderAttemptsField();
    void renderCounts();
    void copyRows(QTableView *table);
    QString time(const QDateTime &utc) const;

    db::DatabaseSession *m_session;
    DeadLetterCase *m_case;
    bool m_showUtc;
    QToolBar *m_actions = nullptr;
    QLabel *m_banner = nullptr;
    QStringList m_bannerLines;
    QLabel *m_title = nullptr;
    FieldGrid m_fields; ///< the header's
    QFrame *m_verdictBox = nullptr;
    QLabel *m_verdictLine = nullptr;
    QLabel *m_verdictReasons = nullptr;
    QTabWidget *m_tabs = nullptr;

    CasePayloadTab *m_payloadTab = nullptr;
    CaseHeadersTab *m_headersTab = nullptr;
    CaseLastErrorTab *m_lastErrorTab = nullptr;
    CaseHistoryTab *m_historyTab = nullptr;
    CaseKeyTab *m_keyTab = nullptr;
    CaseReconciliationTab *m_reconciliationTab = nullptr;
    CaseOutboxAuditTab *m_outboxAuditTab = nullptr;
    QList<QTableView *> m_tables; ///< what makeTable() made: Ctrl+C copies their rows
};

} // namespace redrive
