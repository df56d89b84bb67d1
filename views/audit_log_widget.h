// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/audit_chain_verifier.h"
#include "models/audit_export.h"
#include "models/audit_filter.h"

#include <QDateTime>
#include <QPointer>
#include <QWidget>
#include <memory>

class QElapsedTimer;
class QHBoxLayout;
class QLabel;
class QProgressBar;
class QPushButton;
class QSplitter;
class QTimer;

namespace redrive {

namespace db {
class DatabaseSession;
class DbError;
class ResultSet;
} // namespace db

class AuditDiffModel;
class AuditEntryDetail;
class AuditFilterBar;
class AuditEntryModel;
class AuditExportJob;
class AuditVerifyJob;
class ResultTableView;

/// The audit view for auditors: filters by actor, action,
/// target and time range; audit entries newest first, keyset-paginated; the details of the
/// selected entry with its before/after as a per-field diff (and the raw JSON); "Verify chain",
/// which reads the raw audit log on a connection of its own and recomputes the hash chain in the
/// console with AuditChainVerifier, trusting no server function (a progress bar of entries
/// checked, and Cancel, while the rest of the console keeps using the main session), and names
/// the first broken entry or the ids between which entries are missing; and "Export…" of the
/// current filter to CSV or JSON Lines with the chain head, page by page with progress and Cancel.
/// Everything goes through DatabaseSession; errors through ErrorPresenter. Times are local with the
/// UTC offset, or UTC (setShowUtc()).
class AuditLogWidget : public QWidget
{
    Q_OBJECT
public:
    /// The outcome of the last chain verification.
    struct VerifyResult
    {
        enum class State { NotRun, Running, Ok, Broken, Canceled, Failed };
        State state = State::NotRun;
        qint64 brokenId = 0; ///< the first entry that does not hold (Broken)
        QString problem; ///< why it does not hold (Broken), or the error (Failed)
        qint64 checked = 0; ///< entries verified (Ok), or verified before the broken one
        AuditChainHead head; ///< the last entry read: id, hash, entries (Ok, Broken)
        QList<AuditChainProblem> problems; ///< every problem found, in id order (Broken)
        QString startText; ///< where the chain read started after detached months, or empty
    };

    /// `session` must outlive the widget. Nothing loads until reload().
    explicit AuditLogWidget(db::DatabaseSession *session, QWidget *parent = nullptr);
    ~AuditLogWidget() override;

    AuditEntryModel *entryModel() const { return m_model; }
    AuditDiffModel *diffModel() const;
    AuditExportJob *exportJob() const { return m_exportJob; }
    AuditVerifyJob *verifyJob() const { return m_verifyJob; }
    /// True while the list or the details wait for the server.
    bool isLoading() const;

    /// The filter the controls hold (what the list shows after the last apply).
    AuditFilter filter() const;
    /// Puts `filter` into the controls and applies it (reloads the list).
    void setFilter(const AuditFilter &filter);

    /// Selects the entry in `row` of the list (and shows it in the details pane).
    void selectEntry(int row);
    /// Loads entry `id` into the details pane, whether or not the list shows it.
    void showEntry(qint64 id);
    /// Shows entry `id`, written at `at`, selected in the list: selected at once when the list
    /// holds it, else the list is narrowed to the millisecond of `at` (the filter shows that)
    /// and the entry selected when it arrives (the search's "open where it lives").
    void showEntryInList(qint64 id, const QDateTime &at);
    /// The entry the details pane shows (0: none).
    qint64 shownEntryId() const { return m_shownId; }
    /// The details pane's header text as shown.
    QString detailText() const;

    /// Starts verifying the chain (no-op while one runs).
    void verifyChain();
    /// Cancels a running verification (the server stops the COPY).
    void cancelVerify();
    bool isVerifying() const { return m_verify.state == VerifyResult::State::Running; }
    const VerifyResult &verifyResult() const { return m_verify; }
    /// The verification line as shown.
    QString verifyText() const;

    /// Exports the current filter to `path` in `format` without asking (what "Export…" does
    /// after the file dialog). False when the export cannot start (see exportJob()).
    bool exportTo(const QString &path, AuditExportFormat format);
    /// The export line as shown (progress, or the summary with the chain head).
    QString exportText() const;

public Q_SLOTS:
    /// Loads the list (first page and count) and the actor list again with the current filter.
    void reload();
    /// Show times in UTC instead of local time with the UTC offset.
    void setShowUtc(bool utc);
    /// Asks for a file and a format, then exports the current filter.
    void exportWithDialog();

Q_SIGNALS:
    /// Emitted when the loading state of the list or the details changed.
    void loadingChanged(bool loading);
    /// A verification ended (see verifyResult()).
    void verifyFinished();
    /// An export ended: `ok` when the file is complete (see exportJob()->summary()).
    void exportFinished(bool ok);

private:
    QHBoxLayout *buildVerifyBar();
    QHBoxLayout *buildExportBar();
    QSplitter *buildListAndDetail();
    void applyFilter();
    void clearFilter();
    void loadActors();
    void onCurrentRowChanged();
    void showDetail(const db::ResultSet &rows);
    void clearDetail(const QString &title);
    void updateTitle();
    void setVerifyState(const VerifyResult &result);
    void finishVerify(const VerifyResult &result);
    void onVerifyProgress(qint64 checked, qint64 total);
    void onVerifyFinished(bool canceled);
    void onVerifyFailed(const db::DbError &error);
    void reportError(const db::DbError &error, const QString &what);
    void onExportProgress(qint64 written, qint64 total);
    void onExportFinished(bool canceled);

    db::DatabaseSession *m_session;
    AuditEntryModel *m_model;
    AuditExportJob *m_exportJob;
    AuditVerifyJob *m_verifyJob;

    AuditFilterBar *m_filterBar = nullptr;

    // Verification.
    QPushButton *m_verifyButton = nullptr;
    QProgressBar *m_verifyProgress = nullptr;
    QLabel *m_verifyLabel = nullptr;
    QPushButton *m_verifyCancel = nullptr;
    QPushButton *m_showBroken = nullptr;
    QTimer *m_verifyTicker = nullptr;
    std::unique_ptr<QElapsedTimer> m_verifyClock;
    qint64 m_verifyChecked = 0;
    qint64 m_verifyTotal = -1;
    VerifyResult m_verify;

    // Export.
    QPushButton *m_exportButton = nullptr;
    QProgressBar *m_exportProgress = nullptr;
    QLabel *m_exportLabel = nullptr;
    QPushButton *m_exportCancel = nullptr;

    // List and details.
    QLabel *m_title = nullptr;
    ResultTableView *m_view = nullptr;
    AuditEntryDetail *m_detail = nullptr;
    qint64 m_shownId = 0;
    qint64 m_selectAfterLoad = 0; ///< an entry showEntryInList() waits to select
    quint64 m_detailGeneration = 0;
    bool m_detailLoading = false;
    bool m_showUtc = false;
};

} // namespace redrive
