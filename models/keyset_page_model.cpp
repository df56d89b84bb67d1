// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/keyset_page_model.h"

#include "models/db/database_session.h"

#include <algorithm>

namespace redrive {

KeysetPageModel::KeysetPageModel(db::DatabaseSession *session, db::Statement statement,
                                 int pageSize, QObject *parent)
    : QAbstractTableModel(parent)
    , m_session(session)
    , m_statement(statement)
    , m_pageSize(std::max(1, pageSize))
{ }

void KeysetPageModel::reload()
{
    ++m_generation;
    m_started = true;
    const bool wasLoading = m_pendingPage;
    beginResetModel();
    m_pages.clear();
    m_rows = 0;
    m_atEnd = false;
    m_pendingPage = false;
    endResetModel();
    if (wasLoading)
        Q_EMIT loadingChanged(false);
    requestPage();
}

void KeysetPageModel::setShowUtc(bool utc)
{
    if (utc == m_showUtc)
        return;
    m_showUtc = utc;
    if (m_rows > 0)
        Q_EMIT dataChanged(index(0, 0), index(m_rows - 1, columnCount() - 1),
                           { Qt::DisplayRole, Qt::ToolTipRole });
}

void KeysetPageModel::requestPage()
{
    if (m_pendingPage || m_atEnd)
        return;
    int lastRow = 0;
    const db::ResultSet *last = m_rows > 0 ? pageFor(m_rows - 1, &lastRow) : nullptr;
    db::QueryParams params;
    appendParams(params, last, lastRow);
    m_pendingPage = true;
    Q_EMIT loadingChanged(true);
    const quint64 generation = m_generation;
    m_session->execute(db::statementSql(m_statement), params, this,
                       [this, generation](const db::DbExpected<db::ResultSet> &page) {
                           if (generation != m_generation)
                               return; // reloaded meanwhile: drop it
                           // Views and testers may call fetchMore() from inside the row
                           // signals: the request counts as pending until the rows are in.
                           if (!page) {
                               m_atEnd = true;
                               m_pendingPage = false;
                               Q_EMIT loadingChanged(false);
                               Q_EMIT failed(page.error());
                               return;
                           }
                           const int n = page->rowCount();
                           if (n < m_pageSize)
                               m_atEnd = true;
                           if (n > 0) {
                               beginInsertRows({}, m_rows, m_rows + n - 1);
                               m_pages.append(page.value());
                               m_rows += n;
                               endInsertRows();
                           }
                           m_pendingPage = false;
                           Q_EMIT loadingChanged(false);
                           Q_EMIT pageLoaded(n);
                       });
}

const db::ResultSet *KeysetPageModel::pageFor(int row, int *offset) const
{
    if (row < 0 || row >= m_rows)
        return nullptr;
    const int page = row / m_pageSize; // every page but the last holds m_pageSize rows
    *offset = row % m_pageSize;
    return &m_pages.at(page);
}

QString KeysetPageModel::text(int row, const QString &name) const
{
    int offset = 0;
    const db::ResultSet *page = pageFor(row, &offset);
    return page ? page->text(offset, name) : QString();
}

QJsonArray KeysetPageModel::rowsAsJson(const QList<int> &rows) const
{
    QJsonArray out;
    for (int row : rows) {
        int offset = 0;
        if (const db::ResultSet *page = pageFor(row, &offset))
            out.append(resultRowToJson(*page, offset, m_jsonKinds));
    }
    return out;
}

int KeysetPageModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : m_rows;
}

QVariant KeysetPageModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    int offset = 0;
    const db::ResultSet *page = pageFor(index.row(), &offset);
    if (!page)
        return {};
    if (role == kRowJsonRole)
        return resultRowToJson(*page, offset, m_jsonKinds);
    return cellData(*page, offset, index.column(), role);
}

bool KeysetPageModel::canFetchMore(const QModelIndex &parent) const
{
    return !parent.isValid() && m_started && !m_atEnd && !m_pendingPage;
}

void KeysetPageModel::fetchMore(const QModelIndex &parent)
{
    if (!parent.isValid() && m_started)
        requestPage();
}

} // namespace redrive
