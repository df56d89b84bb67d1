// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/result_table_view.h"

#include "models/display_format.h"
#include "models/keyset_page_model.h"
#include "models/result_column.h"
#include "views/error_presenter.h"

#include <QApplication>
#include <QClipboard>
#include <QContextMenuEvent>
#include <QFutureWatcher>
#include <QHeaderView>
#include <QJsonDocument>
#include <QKeyEvent>
#include <QLocale>
#include <QMenu>
#include <QMimeData>
#include <QScrollBar>
#include <QTimer>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <utility>

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
    // Tab and Shift+Tab leave the table (arrows move between cells): every view can be entered
    // and left from the keyboard, none traps the focus.
    setTabKeyNavigation(false);
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

void ResultTableView::setRowKey(const QString &field)
{
    m_rowKey = field;
    setModel(model()); // connects to the model's resets
}

void ResultTableView::setModel(QAbstractItemModel *newModel)
{
    if (model() && model() != newModel)
        disconnect(model(), nullptr, this, nullptr);
    m_place.reset();
    if (newModel != model())
        QTableView::setModel(newModel);
    if (!newModel || m_rowKey.isEmpty())
        return;
    connect(newModel, &QAbstractItemModel::modelAboutToBeReset, this,
            &ResultTableView::capturePlace, Qt::UniqueConnection);
    connect(newModel, &QAbstractItemModel::modelReset, this, &ResultTableView::restorePlace,
            Qt::UniqueConnection);
    connect(newModel, &QAbstractItemModel::rowsInserted, this, &ResultTableView::restorePlace,
            Qt::UniqueConnection);
}

QString ResultTableView::keyAt(int row) const
{
    const QJsonValue v = model()->index(row, 0).data(kRowJsonRole).toJsonObject().value(m_rowKey);
    return v.isDouble() ? QString::number(qint64(v.toDouble())) : v.toVariant().toString();
}

void ResultTableView::capturePlace()
{
    if (!model() || !selectionModel() || model()->rowCount() == 0) {
        return; // nothing shown: keep any place still waiting from an earlier reset
    }
    Place place;
    QList<int> rows;
    for (const QModelIndex &index : selectionModel()->selectedRows())
        rows << index.row();
    std::sort(rows.begin(), rows.end());
    for (int row : std::as_const(rows)) {
        if (const QString key = keyAt(row); !key.isEmpty())
            place.selected << key;
    }
    const QModelIndex current = currentIndex();
    if (current.isValid()) {
        place.current = keyAt(current.row());
        place.currentColumn = current.column();
    }
    const int top = rowAt(0);
    if (top >= 0)
        place.top = keyAt(top);
    place.vertical = verticalScrollBar()->value();
    place.rowCount = model()->rowCount();
    place.horizontal = horizontalScrollBar()->value();
    m_place = place;
}

void ResultTableView::restorePlace()
{
    if (!m_place || !model() || !selectionModel() || model()->rowCount() == 0)
        return;
    const Place place = *m_place;
    // The keys of the selection; the rows are found in one pass over what is loaded.
    QHash<QString, int> wanted;
    for (const QString &key : place.selected)
        wanted.insert(key, -1);
    if (!place.current.isEmpty())
        wanted.insert(place.current, -1);
    if (!place.top.isEmpty())
        wanted.insert(place.top, -1);
    int found = 0;
    const int rows = model()->rowCount();
    for (int row = 0; row < rows && found < wanted.size(); ++row) {
        auto it = wanted.find(keyAt(row));
        if (it != wanted.end() && it.value() < 0) {
            it.value() = row;
            ++found;
        }
    }
    const int currentRow = place.current.isEmpty() ? -1 : wanted.value(place.current, -1);
    // A keyset list brings its rows page by page: bring as many as were shown before, to find
    // the current row among them.
    if (!place.current.isEmpty() && currentRow < 0 && rows < place.rowCount
        && model()->canFetchMore({})) {
        model()->fetchMore({});
        return;
    }
    m_place.reset();

    QItemSelection selection;
    for (const QString &key : place.selected) {
        const int row = wanted.value(key, -1);
        if (row >= 0)
            selection.select(model()->index(row, 0),
                             model()->index(row, model()->columnCount() - 1));
    }
    if (currentRow >= 0)
        selectionModel()->setCurrentIndex(model()->index(currentRow, place.currentColumn),
                                          QItemSelectionModel::NoUpdate);
    selectionModel()->select(selection, QItemSelectionModel::ClearAndSelect);
    const int topRow = place.top.isEmpty() ? -1 : wanted.value(place.top, -1);
    // The scroll bars take the new range only once the layout ran: set them after it.
    QTimer::singleShot(0, this, [this, topRow, place] {
        if (!model())
            return;
        if (topRow >= 0 && topRow < model()->rowCount())
            scrollTo(model()->index(topRow, 0), QAbstractItemView::PositionAtTop);
        else
            verticalScrollBar()->setValue(place.vertical);
        horizontalScrollBar()->setValue(place.horizontal);
    });
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
    // The operator's last copy is what stays: a slower whole read of an earlier one is dropped.
    const quint64 copy = ++m_copyGeneration;
    auto *keyset = qobject_cast<KeysetPageModel *>(model());
    if (!keyset || !keyset->cutsLongValues() || !selectionModel()) {
        putOnClipboard(selectedRowsAsJson());
        return;
    }
    // Long values the page sent cut short are read whole first
    // (docs/architecture.md#long-values-in-lists); the clipboard gets them when they are in.
    QList<int> rows;
    qint64 cut = 0;
    for (const QModelIndex &index : selectionModel()->selectedRows()) {
        rows << index.row();
        cut += keyset->cutBytes(index.row());
    }
    if (rows.isEmpty())
        return;
    std::sort(rows.begin(), rows.end());
    if (cut > kMaxCopyBytes) {
        ErrorPresenter::note(
            this,
            tr("Not copied: the %n selected row(s) hold %1 of text, more than a "
               "copy takes (%2). Select fewer rows.",
               nullptr, int(rows.size()))
                .arg(QLocale().formattedDataSize(cut), QLocale().formattedDataSize(kMaxCopyBytes)));
        return;
    }
    if (cut > 0)
        ErrorPresenter::note(
            this,
            tr("Copying %n row(s): reading %1 more of their text…", nullptr, int(rows.size()))
                .arg(QLocale().formattedDataSize(cut)));
    keyset->wholeRowsAsJson(rows, this, [this, cut, copy](const db::DbExpected<QJsonArray> &json) {
        if (copy != m_copyGeneration)
            return;
        if (!json) {
            ErrorPresenter::report(this, json.error(), tr("Copying rows"));
            return;
        }
        if (cut == 0) {
            putOnClipboard(*json);
            return;
        }
        // Tens of megabytes of JSON text, and its decoded copy, are made on a pool thread; the
        // clipboard is set here.
        using Texts = std::pair<QByteArray, QString>;
        auto *watcher = new QFutureWatcher<Texts>(this);
        const int count = int(json->size());
        connect(watcher, &QFutureWatcher<Texts>::finished, this, [this, watcher, copy, count] {
            watcher->deleteLater();
            if (copy != m_copyGeneration)
                return;
            const Texts texts = watcher->result();
            putOnClipboard(texts.first, texts.second, count);
            ErrorPresenter::note(this, tr("Copied %n row(s) whole.", nullptr, count));
        });
        watcher->setFuture(QtConcurrent::run([rows = *json] {
            QByteArray text = QJsonDocument(rows).toJson(QJsonDocument::Indented);
            QString decoded = QString::fromUtf8(text);
            return Texts { std::move(text), std::move(decoded) };
        }));
    });
}

void ResultTableView::putOnClipboard(const QJsonArray &rows)
{
    if (rows.isEmpty())
        return;
    const QByteArray json = QJsonDocument(rows).toJson(QJsonDocument::Indented);
    putOnClipboard(json, QString::fromUtf8(json), int(rows.size()));
}

void ResultTableView::putOnClipboard(const QByteArray &json, const QString &text, int rows)
{
    auto *mime = new QMimeData;
    mime->setText(text);
    mime->setData(QStringLiteral("application/json"), json);
    QApplication::clipboard()->setMimeData(mime);
    Q_EMIT copied(rows);
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
