// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QJsonArray>
#include <QTableView>

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
    /// Puts selectedRowsAsJson() on the clipboard (indented JSON text).
    void copySelectedRows();
    /// Sets the columns' initial widths in pixels; kTimeWidth fits a time as
    /// display::time() prints it in this view's font.
    void setColumnWidths(const QList<int> &widths);
    static constexpr int kTimeWidth = -1;

protected:
    void keyPressEvent(QKeyEvent *event) override;
    void contextMenuEvent(QContextMenuEvent *event) override;
};

} // namespace redrive
