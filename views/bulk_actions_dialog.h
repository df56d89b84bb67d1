// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QDialog>
#include <QStringList>
#include <QUuid>

class QCheckBox;
class QLabel;
class QPushButton;

namespace redrive {

namespace db {
class DatabaseSession;
}
class BulkActionListModel;
class ResultTableView;

/// The unfinished bulk actions a closed or crashed console left behind, with their progress
/// (docs/reliability.md#bulk-actions-survive-the-console): the caller's own (as offered when the
/// console connects) or every operator's. The owner resumes one (resumeRequested(); the runner
/// takes the bulk's run lock, so only one console runs it) or gives it up; another operator with
/// the role its action needs takes it over. Take-over and abandon are audited operator actions
/// with a reason.
class BulkActionsDialog : public QDialog
{
    Q_OBJECT
public:
    /// `session` must outlive the dialog; `redriveRoles` gate the buttons (the database checks
    /// again). Loads the list at once.
    BulkActionsDialog(db::DatabaseSession *session, const QStringList &redriveRoles, bool mineOnly,
                      QWidget *parent = nullptr);

    BulkActionListModel *model() const { return m_model; }
    ResultTableView *view() const { return m_view; }
    QPushButton *resumeButton() const { return m_resume; }
    QPushButton *takeOverButton() const { return m_takeOver; }
    QPushButton *abandonButton() const { return m_abandon; }
    QCheckBox *everyoneCheck() const { return m_everyone; }
    /// Loads the list again.
    void reload();

Q_SIGNALS:
    /// The operator asked to resume bulk `bulkId` (a "requeue" or "resolve").
    void resumeRequested(const QUuid &bulkId, const QString &action);

private:
    void updateButtons();
    int selectedRow() const;
    void takeOver();
    void abandon();

    db::DatabaseSession *m_session;
    QStringList m_roles;
    BulkActionListModel *m_model;
    ResultTableView *m_view;
    QLabel *m_summary;
    QCheckBox *m_everyone;
    QPushButton *m_resume;
    QPushButton *m_takeOver;
    QPushButton *m_abandon;
};

} // namespace redrive
