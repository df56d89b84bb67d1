// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QStringList>
#include <QWidget>

class QAction;
class QDialog;
class QLabel;
class QPlainTextEdit;
class QPushButton;

namespace redrive {

namespace db {
class DatabaseSession;
class DbError;
} // namespace db

class CheckedValuesButton;
class MismatchCountModel;
class MismatchModel;
class ReconciliationRunModel;
class ResultTableView;

/// The reconciliation tab: the latest runs, mismatches per kind (each
/// kind checkable as a filter), and every mismatch keyset-paginated with our side next to the
/// provider's (amount, currency, status; differing cells highlighted). Selecting a run narrows
/// the list to that run; a status menu narrows it by mismatch status. The detail pane shows our
/// record and the provider's side by side, with differing top-level fields marked. Everything
/// loads through the session; errors go through ErrorPresenter. Times are local with the UTC
/// offset, or UTC (setShowUtc()).
class ReconciliationWidget : public QWidget
{
    Q_OBJECT
public:
    /// `session` must outlive the widget. Nothing loads until refresh().
    explicit ReconciliationWidget(db::DatabaseSession *session, QWidget *parent = nullptr);

    ReconciliationRunModel *runModel() const { return m_runModel; }
    MismatchCountModel *countModel() const { return m_countModel; }
    MismatchModel *mismatchModel() const { return m_mismatchModel; }
    /// True while any list waits for the server.
    bool isLoading() const;
    /// Narrows the list to run `runId` (0: all runs) and selects it in the runs table.
    void setRunFilter(qint64 runId);
    qint64 runFilter() const { return m_runId; }
    /// Checks exactly `statuses` in the status menu (empty: any) and applies it.
    void setStatusFilter(const QStringList &statuses);
    QStringList statusFilter() const;
    /// Selects the mismatch in `row` of the list (and shows it in the detail pane).
    void selectMismatch(int row);
    /// Shows mismatch `id` of run `runId` selected in the list: every status, that run, pages
    /// fetched until it is there (the search's "open where it lives").
    void showMismatch(qint64 id, qint64 runId);
    /// The caller's Redrive roles: resolving a mismatch needs redrive_support.
    void setRoles(const QStringList &redriveRoles);
    /// "Resolve mismatch…" (context menu of the mismatch list, and the button by the detail).
    QAction *resolveMismatchAction() const { return m_resolveMismatch; }
    /// "Request refund…" (context menu and the button by the detail): a compensation from the
    /// selected open duplicate_external or amount_mismatch mismatch (CompensationRequestDialog).
    QAction *refundMismatchAction() const { return m_refundMismatch; }
    /// True while a selected mismatch's records are still being prepared or fed into the detail
    /// pane (big records: docs/architecture.md#long-text-in-panes).
    bool isShowingRecords() const;
    /// The detail pane's two documents as shown (pretty-printed JSON, or a note).
    QString internalRecordText() const;
    QString externalRecordText() const;

public Q_SLOTS:
    /// Loads runs, counts and the mismatch list again with the current filters.
    void refresh();
    /// Show times in UTC instead of local time with the UTC offset.
    void setShowUtc(bool utc);

Q_SIGNALS:
    /// Emitted when the loading state of any list changed.
    void loadingChanged(bool loading);
    /// A dialog was opened over the tab (the refund request); for tests.
    void dialogShown(QDialog *dialog);
    /// A compensation was requested from a mismatch (the other views refresh).
    void compensationRequested();

private:
    void resolveMismatch();
    void refundMismatch();
    /// The selected mismatch when a refund can be requested from it, else 0.
    qint64 refundableMismatch() const;
    void updateResolveAction();
    void applyFilter();
    void onRunSelectionChanged();
    void selectRunRow();
    void showDetail();
    void updateTitles();
    void reportError(const db::DbError &error, const QString &what);

    db::DatabaseSession *m_session;
    ReconciliationRunModel *m_runModel;
    MismatchCountModel *m_countModel;
    MismatchModel *m_mismatchModel;
    ResultTableView *m_runView = nullptr;
    ResultTableView *m_countView = nullptr;
    ResultTableView *m_mismatchView = nullptr;
    QPlainTextEdit *m_internal = nullptr;
    QPlainTextEdit *m_external = nullptr;
    QLabel *m_detailTitle = nullptr;
    QLabel *m_runTitle = nullptr;
    QLabel *m_countTitle = nullptr;
    QLabel *m_mismatchTitle = nullptr;
    QLabel *m_activity = nullptr;
    CheckedValuesButton *m_statusButton = nullptr;
    QPushButton *m_allRunsButton = nullptr;
    qint64 m_runId = 0;
    qint64 m_showAfterLoad = 0; ///< a mismatch showMismatch() waits to select
    bool m_selectingRun = false;
    QStringList m_roles;
    QAction *m_resolveMismatch = nullptr;
    QAction *m_refundMismatch = nullptr;
};

} // namespace redrive
