// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/mention_search_model.h"

#include <QDialog>

class QLabel;
class QLineEdit;
class QPushButton;

namespace redrive {

namespace db {
class DatabaseSession;
class DbError;
} // namespace db

class ResultTableView;

/// The search box support starts from (View ▸ Find customer…, Ctrl+K; docs/domain.md#finding-a-
/// customer): an order number, a payment reference, an e-mail address or a provider charge id,
/// matched literally, finds every dead letter, mismatch, compensation and audit entry that
/// mentions it, grouped by kind with a count per kind. Enter in the box searches; Enter or a
/// double-click on a hit asks to open it where it lives (openRequested()); the dialog stays open
/// so the next hit is one click away. The query runs on the session's worker thread.
class MentionSearchDialog : public QDialog
{
    Q_OBJECT
public:
    /// `session` must outlive the dialog.
    explicit MentionSearchDialog(db::DatabaseSession *session, QWidget *parent = nullptr);

    MentionSearchModel *model() const { return m_model; }
    ResultTableView *table() const { return m_table; }
    QLineEdit *searchBox() const { return m_box; }
    /// The line under the box as shown (counts per kind, or why nothing was searched).
    QString statusText() const;

    /// Puts `term` in the box and searches for it.
    void search(const QString &term);
    /// Asks to open the hit in `row` (what Enter and a double-click do).
    void openRow(int row);
    /// Show times in UTC instead of local time with the UTC offset.
    void setShowUtc(bool utc);

Q_SIGNALS:
    /// The operator asked to open a hit: `id` of `kind`, its time `at` (UTC); `runId` is a
    /// mismatch's run (else 0).
    void openRequested(redrive::MentionSearchModel::Kind kind, qint64 id, qint64 runId,
                       const QDateTime &at);

private:
    void startSearch();
    void onLoaded();
    void onFailed(const db::DbError &error);

    MentionSearchModel *m_model = nullptr;
    QLineEdit *m_box = nullptr;
    QPushButton *m_searchButton = nullptr;
    QLabel *m_status = nullptr;
    ResultTableView *m_table = nullptr;
};

} // namespace redrive
