// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QStringList>
#include <QWidget>

class QAction;
class QLabel;
class QLineEdit;

namespace redrive {

namespace db {
class DatabaseSession;
class DbError;
} // namespace db

class CheckedValuesButton;
class ExpiredLeaseModel;
class IdempotencyKeyModel;
struct IdempotencyKeyFilter;
class KeyConflictModel;
class ResultTableView;
class StuckKeyModel;

/// The idempotency-keys tab: keys stuck in processing past their lease
/// (oldest first, with how long by the server's clock), keys that saw a conflicting request, and
/// every key, keyset-paginated. A scope filter (comma list) narrows all three; a state filter
/// narrows the full list. Everything loads through the session, off the GUI thread; errors go
/// through ErrorPresenter. Times are local with the UTC offset, or UTC (setShowUtc()).
class IdempotencyKeysWidget : public QWidget
{
    Q_OBJECT
public:
    /// `session` must outlive the widget. Nothing loads until refresh().
    explicit IdempotencyKeysWidget(db::DatabaseSession *session, QWidget *parent = nullptr);

    StuckKeyModel *stuckKeyModel() const { return m_stuckModel; }
    KeyConflictModel *keyConflictModel() const { return m_conflictModel; }
    IdempotencyKeyModel *keyModel() const { return m_keyModel; }
    /// Jobs whose lease expired, whatever their idempotency key (docs/reliability.md).
    ExpiredLeaseModel *expiredLeaseModel() const { return m_leaseModel; }
    /// True while any of the three lists waits for the server.
    bool isLoading() const;
    /// The scopes typed in the scope filter (empty: all).
    QStringList scopeFilter() const;
    /// The checked states (empty: any).
    QStringList stateFilter() const;
    /// Sets the scope filter's text ("charge_card, send_receipt") and applies it.
    void setScopeFilterText(const QString &text);
    /// Checks exactly `states` in the state menu and applies it.
    void setStateFilter(const QStringList &states);

    /// The caller's Redrive roles: releasing a stuck key needs redrive_oncall or redrive_support.
    void setRoles(const QStringList &redriveRoles);
    /// "Release stuck key…" (context menu of the stuck list, and the button above it).
    QAction *releaseKeyAction() const { return m_releaseKey; }
    /// "Show dead letters with this key" (context menu of the stuck and "All keys" lists):
    /// emits deadLettersWithKeyRequested() with the current row's key.
    QAction *showDeadLettersAction() const { return m_showDeadLetters; }
    /// "Open the case of this key's job" (context menu of the stuck and "All keys" lists): emits
    /// jobCaseRequested() with the current row's job reference; disabled for a key that names no
    /// job.
    QAction *openJobCaseAction() const { return m_openJobCase; }

public Q_SLOTS:
    /// Loads all lists again with the current filters; the "All keys" list starts a new pass.
    void refresh();
    /// A live update (docs/architecture.md#live-updates): the short lists load again, the "All
    /// keys" list re-reads the keys it shows in place (its frozen pass keeps them once each,
    /// docs/architecture.md#paging-a-frozen-pass); keys added since show after refresh().
    void followChanges();
    /// Shows only keys containing `text` (taken literally; empty: any) in "All keys".
    void setKeySearch(const QString &text);
    /// Show times in UTC instead of local time with the UTC offset.
    void setShowUtc(bool utc);

Q_SIGNALS:
    /// Emitted when the loading state of any list changed.
    void loadingChanged(bool loading);
    /// "Show dead letters with this key" on a key of the stuck or "All keys" list.
    void deadLettersWithKeyRequested(const QString &key);
    /// "Open the case of this key's job" on a key whose job is `jobRef` (job_ref as listed).
    void jobCaseRequested(const QString &jobRef);

private:
    void applyScopes();
    void applyStates();
    IdempotencyKeyFilter keyFilter() const;
    void updateTitles();
    void reportError(const db::DbError &error, const QString &what);
    void releaseStuckKey();
    void updateReleaseAction();
    /// The job reference of the current row of the list the operator is in (empty: none).
    QString currentJobRef() const;
    void updateJobCaseAction();

    db::DatabaseSession *m_session;
    StuckKeyModel *m_stuckModel;
    KeyConflictModel *m_conflictModel;
    IdempotencyKeyModel *m_keyModel;
    ExpiredLeaseModel *m_leaseModel;
    ResultTableView *m_leaseView = nullptr;
    QLabel *m_leaseTitle = nullptr;
    ResultTableView *m_stuckView = nullptr;
    ResultTableView *m_conflictView = nullptr;
    ResultTableView *m_keyView = nullptr;
    QLineEdit *m_scopeEdit = nullptr;
    QLineEdit *m_keySearch = nullptr;
    CheckedValuesButton *m_stateButton = nullptr;
    QLabel *m_stuckTitle = nullptr;
    QLabel *m_conflictTitle = nullptr;
    QLabel *m_keyTitle = nullptr;
    QLabel *m_activity = nullptr;
    QStringList m_appliedScopes;
    QStringList m_roles;
    QAction *m_releaseKey = nullptr;
    QAction *m_openJobCase = nullptr;
    QAction *m_showDeadLetters = nullptr;
};

} // namespace redrive
