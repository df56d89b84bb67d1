// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "views/result_table_view.h"

#include <QWidget>
#include <optional>

class QLabel;
class QPushButton;
class QSettings;
class QSplitter;
class QTableView;
class QTimer;
class QHBoxLayout;

namespace redrive {

namespace db {
class DatabaseSession;
}
class DeadLetterActions;
class DeadLetterFilter;
class DeadLetterFilterBar;
class DeadLetterModel;
class FailureGroupModel;
class RequeueFollowUpBar;
struct DeadLetterSelection;

/// The Dead letters tab: the filter bar, the failure groups (choose one to filter) and the
/// keyset-paged dead-letter list, with the "N new" badge that live notifications keep current
/// without moving the list (docs/architecture.md#reading-a-page). It owns the two models and
/// rebuilds them on every new session; the main window owns the session, the menus and the
/// actions, and asks this tab for its selection.
class DeadLetterTab : public QWidget
{
    Q_OBJECT

public:
    explicit DeadLetterTab(QWidget *parent = nullptr);
    ~DeadLetterTab() override;

    /// Drops the models of the previous session and builds new ones on `session` (which must
    /// outlive them). Nothing loads until load().
    void setSession(db::DatabaseSession *session);
    /// Loads the list and the groups with the current filters (connect, F5, reconnect).
    void load();
    /// Reloads both (F5, the "N new" badge), keeping filters and the selection by id.
    void reload();
    /// After the operator's own action: the rows shown are read again in place with their new
    /// status (no new pass: docs/architecture.md#paging-a-frozen-pass), the total is counted
    /// again and the groups are reloaded.
    void refreshAfterAction();
    /// Dead letters changed (LiveUpdates): after a short quiet period, count what is newer than
    /// the list (the "N new" badge) and re-read the failure groups, keeping the chosen one.
    void notifyChanged();
    /// Lists every dead letter whose idempotency key (or error message) contains `key`
    /// (DeadLetterFilterBar::showSearch()).
    void showDeadLettersWithKey(const QString &key);

    /// Show times in UTC instead of local time with offset.
    void setShowUtc(bool utc);
    /// Puts `picker` (the source chooser) at the start of the filter row.
    void setSourcePicker(QWidget *picker);
    /// The actions' context menus: `actions` on the list, the group actions on the groups; the
    /// actions' enabled state follows this tab's selection and filters.
    void installActions(DeadLetterActions *actions);

    /// The selected dead letters (ids in list order) and the chosen failure group.
    DeadLetterSelection selection() const;

    DeadLetterModel *model() const { return m_deadLetters; }
    FailureGroupModel *groups() const { return m_groups; }
    QTableView *table() const { return m_table; }
    DeadLetterFilterBar *filterBar() const { return m_filterBar; }
    /// Where the dead letters of the last requeue went.
    RequeueFollowUpBar *followUpBar() const { return m_followUp; }

    /// Splitter and column layout, under "main/…" keys so earlier saved layouts still apply.
    void saveLayout(QSettings &settings) const;
    void restoreLayout(QSettings &settings);

Q_SIGNALS:
    /// The operator asked to open the case view of dead letter `id` (Enter, double-click).
    void openCaseRequested(qint64 id);
    /// A short message for the status bar, shown for `timeoutMs`.
    void statusMessage(const QString &text, int timeoutMs);

private:
    void applyFilter(const DeadLetterFilter &filter);
    void onGroupActivated();
    void onTotalChanged(qint64 total, bool exact);
    /// The failure groups' title; with `sampledMatches`, says the groups of a search are those
    /// of that many matches (FailureGroupModel::sampledMatches()).
    void showGroupsTitle(std::optional<qint64> sampledMatches);
    void onNewerCount(int count);
    void copySelection();
    void openCurrentCase();

    db::DatabaseSession *m_session = nullptr;
    DeadLetterModel *m_deadLetters = nullptr;
    FailureGroupModel *m_groups = nullptr;
    DeadLetterActions *m_actions = nullptr;

    QHBoxLayout *m_filterRow = nullptr;
    DeadLetterFilterBar *m_filterBar = nullptr;
    QPushButton *m_newBadge = nullptr;
    QLabel *m_totalLabel = nullptr;
    RequeueFollowUpBar *m_followUp = nullptr;
    QSplitter *m_splitter = nullptr;
    QTableView *m_groupView = nullptr;
    QLabel *m_groupsTitle = nullptr; ///< says when a search's groups are counted over a sample
    ResultTableView *m_table = nullptr;
    QTimer *m_liveTimer = nullptr;
    bool m_showUtc = false;
};

} // namespace redrive
