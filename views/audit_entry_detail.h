// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QWidget>

class QLabel;
class QPlainTextEdit;
class QTabWidget;
class QTableView;

namespace redrive {

namespace db {
class ResultSet;
} // namespace db

class AuditDiffModel;

/// The details of one audit entry: a title, the entry's fields (time in both zones, actor and
/// where from, action id, reason, ticket, outcome, hashes), its before → after as a per-field diff
/// (AuditEntryDiff: byte-exact values, never through a double) and the raw JSON of before, after
/// and targets. Everything is plain text. It reads nothing itself: the audit view hands it the row
/// of `audit_entry_detail.sql`.
class AuditEntryDetail : public QWidget
{
    Q_OBJECT
public:
    explicit AuditEntryDetail(QWidget *parent = nullptr);

    AuditDiffModel *diffModel() const { return m_diffModel; }
    /// Shows row 0 of `rows` (the columns of audit_entry_detail.sql), times in UTC when `utc`
    /// (else local with the offset). A non-empty `chainBreak` is why the chain breaks at this
    /// entry, shown first. Returns the entry's id.
    qint64 show(const db::ResultSet &rows, bool utc, const QString &chainBreak);
    /// Empties the pane and shows `title` instead.
    void clear(const QString &title);
    /// Only the title (e.g. "Entry 7: loading…").
    void setTitle(const QString &title);
    /// The title and the fields as shown (each field bounded: display::boundedLines; the
    /// "Entry (raw)" tab has them whole).
    QString text() const;

private:
    AuditDiffModel *m_diffModel;
    QLabel *m_title = nullptr;
    QLabel *m_fields = nullptr;
    QLabel *m_diffNote = nullptr;
    QTabWidget *m_tabs = nullptr;
    QTableView *m_diffView = nullptr;
    QPlainTextEdit *m_beforeRaw = nullptr;
    QPlainTextEdit *m_afterRaw = nullptr;
    QPlainTextEdit *m_targetsRaw = nullptr;
    QPlainTextEdit *m_entryRaw = nullptr; ///< The title and every field whole.
};

} // namespace redrive
