// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/result_table_view.h"

#include "models/display_format.h"
#include "models/result_column.h"

#include <QApplication>
#include <QClipboard>
#include <QContextMenuEvent>
#include <QHeaderView>
#include <QJsonDocument>
#include <QKeyEvent>
#include <QMenu>
#include <QMimeData>
#include <algorithm>

namespace redrive {

ResultTableView::ResultTableView(QWidget *parent)
    : QTableView(parent)
{
    setSelectionBehavior(QAbstractItemView::SelectRows);
    setSelectionMode(QAbstractItemView::ExtendedSelection);
    setSortingEnabled(false);
    setWordWrap(false);
    setAlternatingRowColors(true);
    setEditTriggers(QAbstractItemView::NoEditTriggers);
    setHorizontalScrollMode(QAbstractItemView::ScrollPerPixel);
    setTextElideMode(Qt::ElideRight);
    QHeaderView *rows = verticalHeader();
    rows->setSectionResizeMode(QHeaderView::Fixed);
    rows->setDefaultSectionSize(fontMetrics().height() + 8);
    rows->hide();
    QHeaderView *columns = horizontalHeader();
    columns->setSectionResizeMode(QHeaderView::Interactive);
    columns->setHighlightSections(false);
    columns->setSectionsClickable(false);
    columns->setStretchLastSection(true);
    columns->setDefaultAlignment(Qt::AlignLeft | Qt::AlignVCenter);
}

void ResultTableView::showServerOrder(int column, Qt::SortOrder order)
{
    horizontalHeader()->setSortIndicatorShown(true);
    horizontalHeader()->setSortIndicator(column, order);
}

QJsonArray ResultTableView::selectedRowsAsJson() const
{
    QJsonArray out;
    if (!model() || !selectionModel())
        return out;
    QList<int> rows;
    for (const QModelIndex &index : selectionModel()->selectedRows())
        rows << index.row();
    std::sort(rows.begin(), rows.end());
    for (int row : rows)
        out.append(model()->index(row, 0).data(kRowJsonRole).toJsonObject());
    return out;
}

void ResultTableView::copySelectedRows()
{
    const QJsonArray rows = selectedRowsAsJson();
    if (rows.isEmpty())
        return;
    auto *mime = new QMimeData;
    const QByteArray json = QJsonDocument(rows).toJson(QJsonDocument::Indented);
    mime->setText(QString::fromUtf8(json));
    mime->setData(QStringLiteral("application/json"), json);
    QApplication::clipboard()->setMimeData(mime);
}

void ResultTableView::setColumnWidths(const QList<int> &widths)
{
    const QString sample = display::time(QDateTime(QDate(2026, 12, 28), QTime(23, 58, 58)), false);
    const int timeWidth = fontMetrics().horizontalAdvance(sample) + 16;
    for (int c = 0; c < widths.size(); ++c)
        horizontalHeader()->resizeSection(c, widths.at(c) == kTimeWidth ? timeWidth : widths.at(c));
}

void ResultTableView::keyPressEvent(QKeyEvent *event)
{
    if (event == QKeySequence::Copy) {
        copySelectedRows();
        event->accept();
        return;
    }
    QTableView::keyPressEvent(event);
}

void ResultTableView::contextMenuEvent(QContextMenuEvent *event)
{
    QMenu menu(this);
    QAction *copy = menu.addAction(tr("Copy as JSON"));
    copy->setShortcut(QKeySequence::Copy);
    copy->setEnabled(selectionModel() && selectionModel()->hasSelection());
    if (!actions().isEmpty()) { // operator actions the owning widget added
        menu.addSeparator();
        menu.setToolTipsVisible(true);
        menu.addActions(actions());
    }
    if (menu.exec(event->globalPos()) == copy)
        copySelectedRows();
}

} // namespace redrive
