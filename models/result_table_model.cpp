// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/result_table_model.h"

#include "models/db/database_session.h"

namespace redrive {

ResultTableModel::ResultTableModel(db::DatabaseSession *session, ResultColumnSet columns,
                                   QObject *parent)
    : QAbstractTableModel(parent)
    , m_session(session)
    , m_columns(std::move(columns))
{ }

namespace {

// The statement and every parameter (type, length, bytes; NULL apart from empty), to tell the
// same question asked again.
QByteArray questionOf(db::Statement statement, const db::QueryParams &params)
{
    QByteArray key = QByteArray::number(int(statement));
    const std::vector<unsigned int> types = params.types();
    const std::vector<const char *> values = params.values();
    const std::vector<int> lengths = params.lengths();
    for (std::size_t i = 0; i < values.size(); ++i) {
        key += '|' + QByteArray::number(types[i]) + ':';
        if (!values[i]) {
            key += 'N';
            continue;
        }
        key += QByteArray::number(lengths[i]) + ':' + QByteArray(values[i], lengths[i]);
    }
    return key;
}

} // namespace

void ResultTableModel::load(db::Statement statement, const db::QueryParams &params)
{
    if (m_request != 0 && questionOf(statement, params) == questionOf(m_statement, m_params)) {
        m_again = true; // the same question is on its way: once more after it
        return;
    }
    const quint64 generation = ++m_generation;
    if (m_request != 0)
        m_session->abortRequest(m_request); // obsolete: never let it run or finish
    m_again = false;
    m_statement = statement;
    m_params = params;
    if (!m_loading) {
        m_loading = true;
        Q_EMIT loadingChanged(true);
    }
    m_request = m_session->execute(
        db::statementSql(statement), params, this,
        [this, generation](const db::DbExpected<db::ResultSet> &rows) {
            if (generation != m_generation)
                return; // a newer load() is on its way
            m_request = 0;
            const bool again = std::exchange(m_again, false);
            if (!rows) {
                m_loading = false;
                Q_EMIT loadingChanged(false);
                Q_EMIT failed(rows.error());
            } else {
                setResult(rows.value());
                Q_EMIT loaded();
            }
            if (again && m_request == 0)
                load(m_statement, m_params);
        },
        m_priority);
}

void ResultTableModel::setResult(const db::ResultSet &result)
{
    ++m_generation;
    m_again = false;
    if (m_request != 0) {
        m_session->abortRequest(m_request); // ended: never let it run or finish
        m_request = 0;
    }
    beginResetModel();
    m_result = result;
    m_columns.resolve(m_result);
    endResetModel();
    if (m_loading) {
        m_loading = false;
        Q_EMIT loadingChanged(false);
    }
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

int ResultTableModel::rowOf(const QString &name, const QString &value) const
{
    const int column = m_result.columnIndex(name);
    for (int row = 0; column >= 0 && row < m_result.rowCount(); ++row) {
        if (m_result.text(row, column) == value)
            return row;
    }
    return -1;
}

QJsonArray ResultTableModel::rowsAsJson(const QList<int> &rows) const
{
    QJsonArray out;
    for (int row : rows) {
        if (row >= 0 && row < m_result.rowCount())
            out.append(m_columns.rowJson(m_result, row));
    }
    return out;
}

int ResultTableModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : m_result.rowCount();
}

int ResultTableModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : m_columns.size();
}

QVariant ResultTableModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    return m_columns.data(m_result, index.row(), index.column(), role, m_showUtc);
}

QVariant ResultTableModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Horizontal && (role == Qt::DisplayRole || role == kColumnNameRole))
        return m_columns.header(section, role);
    return QAbstractTableModel::headerData(section, orientation, role);
}

} // namespace redrive
