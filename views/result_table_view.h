// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QJsonArray>
#include <QTableView>
#include <optional>

namespace redrive {

/// The house table for result-backed models, fit for big tables: fixed row height
/// (QHeaderView::Fixed, never ResizeToContents), whole-row selection, no client-side sorting,
/// and Ctrl+C (or "Copy as JSON" in the context menu) copies the selected rows as a JSON array
/// built from the model's kRowJsonRole, with raw values rather than the painted text.
class ResultTableView : public QTableView
{
    Q_OBJECT
public:
    explicit ResultTableView(QWidget *parent = nullptr);

    /// Shows the order the SQL serves as the header's sort indicator (clicks do nothing).
    void showServerOrder(int column, Qt::SortOrder order);
    /// The selected rows as JSON objects, top to bottom.
    QJsonArray selectedRowsAsJson() const;
    /// Puts the selected rows on the clipboard as indented JSON text (and application/json),
    /// every value whole: from a KeysetPageModel whose pages cut long values short
    /// (KeysetPageModel::wholeRowsAsJson), the rows cut short are read again first, with a
    /// status-bar note, and the clipboard is set when they are in (copied() then); else at
    /// once. A failed read is reported (ErrorPresenter) and leaves the clipboard as it was; a
    /// copy asked for later wins over one still reading (the earlier one is dropped). Rows whose
    /// text left to read passes kMaxCopyBytes are not copied: a status-bar note says so and the
    /// clipboard stays as it was (40 rows of 10 MB took 1.4 GB and stopped the GUI thread).
    void copySelectedRows();
    /// Most bytes of long values one copy reads again (64 MiB).
    static constexpr qint64 kMaxCopyBytes = qint64(64) * 1024 * 1024;
    /// Sets the columns' initial widths in pixels; kTimeWidth fits a time as
    /// display::time() prints it in this view's font.
    void setColumnWidths(const QList<int> &widths);
    static constexpr int kTimeWidth = -1;

    /// Keeps the operator's place when the model re-reads (a live update, F5): the result column
    /// `field` identifies a row (read from kRowJsonRole, e.g. "id"), and when the model is reset,
    /// the selected rows, the current row and column and the row at the top of the viewport are
    /// found again by that key as soon as the new rows are there, and the scroll position is kept
    /// (docs/architecture.md#live-updates). Rows that are gone are no longer selected; the
    /// viewport then stays where it was. Empty (the default) turns it off.
    void setRowKey(const QString &field);
    QString rowKey() const { return m_rowKey; }
    void setModel(QAbstractItemModel *model) override;

Q_SIGNALS:
    /// copySelectedRows() put `rows` rows on the clipboard.
    void copied(int rows);

protected:
    void keyPressEvent(QKeyEvent *event) override;
    void contextMenuEvent(QContextMenuEvent *event) override;

private:
    void putOnClipboard(const QJsonArray &rows);
    /// Puts `json` (`rows` rows) on the clipboard as application/json and `text` (the same,
    /// decoded: made on a pool thread for a big copy) as text; emits copied().
    void putOnClipboard(const QByteArray &json, const QString &text, int rows);
    QString keyAt(int row) const;
    void capturePlace();
    void restorePlace();

    struct Place
    {
        QStringList selected;
        QString current;
        int currentColumn = 0;
        QString top;
        int vertical = 0;
        int horizontal = 0;
        int rowCount = 0;
    };
    QString m_rowKey;
    quint64 m_copyGeneration = 0; ///< bumped by every copySelectedRows(): the last one lands
    std::optional<Place> m_place; ///< waiting for the rows to find it in
};

} // namespace redrive
