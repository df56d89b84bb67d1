// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/result_table_model.h"

#include "models/db/database_session.h"

namespace redrive {

ResultTableModel::ResultTableModel(db::DatabaseSession *session, QList<ResultColumn> columns,
                                   QObject *parent)
    : QAbstractTableModel(parent)
    , m_session(session)
    , m_columns(std::move(columns))
{ }

void ResultTableModel::load(db::Statement statement, const db::QueryParams &params)
{
    const quint64 generation = ++m_generation;
    if (!m_loading) {
        m_loading = true;
        Q_EMIT loadingChanged(true);
    }
    m_session->execute(db::statementSql(statement), params, this,
                       [this, generation](const db::DbExpected<db::ResultSet> &rows) {
                           if (generation != m_generation)
                               return; // a newer load() is on its way
                           m_loading = false;
                           if (!rows) {
                               Q_EMIT loadingChanged(false);
                               Q_EMIT failed(rows.error());
                               return;
                           }
                           beginResetModel();
                           m_result = rows.value();
                           m_indexes = resolveColumns(m_columns, m_result);
                           endResetModel();
                           Q_EMIT loadingChanged(false);
                           Q_EMIT loaded();
                       });
}

void ResultTableModel::setShowUtc(bool utc)
{
    if (utc == m_showUtc)
        return;
    m_showUtc = utc;
    if (rowCount() > 0)
        Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, columnCount() - 1),
                           { Qt::DisplayRole, Qt::ToolTipRole });
}

QString ResultTableModel::text(int row, const QString &name) const
{
    if (row < 0 || row >= m_result.rowCount())
        return {};
    return m_result.text(row, name);
}

QString ResultTableModel::resultColumnName(int column) const
{
    return column >= 0 && column < m_columns.size() ? m_columns.at(column).name : QString();
}

QJsonArray ResultTableModel::rowsAsJson(const QList<int> &rows) const
{
    QJsonArray out;
    for (int row : rows) {
        if (row >= 0 && row < m_result.rowCount())
            out.append(resultRowToJson(m_result, row, m_jsonKinds));
    }
    return out;
}

int ResultTableModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : m_result.rowCount();
}

int ResultTableModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_columns.size());
}

QVariant ResultTableModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const ResultColumn &column = m_columns.at(index.column());
    const int rc = resultIndex(index.column());
    switch (role) {
    case Qt::DisplayRole:
        return column.display(m_result, index.row(), rc, m_showUtc);
    case Qt::ToolTipRole:
        return column.toolTip(m_result, index.row(), rc, m_showUtc);
    case Qt::TextAlignmentRole:
        return column.alignment();
    case kRowJsonRole:
        return resultRowToJson(m_result, index.row(), m_jsonKinds);
    default:
        return {};
    }
}

QVariant ResultTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Horizontal && role == Qt::DisplayRole && section >= 0
        && section < m_columns.size())
        return m_columns.at(section).header;
    return QAbstractTableModel::headerData(section, orientation, role);
}

} // namespace redrive
