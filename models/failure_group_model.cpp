// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/failure_group_model.h"

#include "models/db/database_session.h"
#include "models/db/sql_statement.h"
#include "models/dead_letter_model.h"

namespace redrive {

namespace {
// Result columns of failure_groups.sql.
enum { RFingerprint, RKind, RErrorClass, RErrorCode, RSample, RCount, ROpen, RFirst, RLast };
} // namespace

FailureGroupModel::FailureGroupModel(db::DatabaseSession *session, QObject *parent)
    : QAbstractTableModel(parent)
    , m_session(session)
{ }

void FailureGroupModel::setFilter(const DeadLetterFilter &filter)
{
    m_filter = filter.withoutFingerprint();
    reload();
}

void FailureGroupModel::reload()
{
    const quint64 generation = ++m_generation;
    db::QueryParams params;
    m_filter.appendParams(params);
    params.addInt(kMaxGroups);
    m_session->execute(db::statementSql(db::Statement::FailureGroups), params, this,
                       [this, generation](const db::DbExpected<db::ResultSet> &rows) {
                           if (generation != m_generation)
                               return;
                           if (!rows) {
                               Q_EMIT failed(rows.error());
                               return;
                           }
                           beginResetModel();
                           m_rows = rows.value();
                           endResetModel();
                           Q_EMIT loaded();
                       });
}

void FailureGroupModel::setShowUtc(bool utc)
{
    m_showUtc = utc;
    if (rowCount() > 0)
        Q_EMIT dataChanged(index(0, FirstSeen), index(rowCount() - 1, LastSeen));
}

int FailureGroupModel::rowOf(const QString &fingerprint) const
{
    for (int r = 0; r < m_rows.rowCount(); ++r)
        if (m_rows.text(r, RFingerprint) == fingerprint)
            return r;
    return -1;
}

QString FailureGroupModel::fingerprintAt(int row) const
{
    return m_rows.text(row, RFingerprint);
}

int FailureGroupModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : m_rows.rowCount();
}

int FailureGroupModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant FailureGroupModel::data(const QModelIndex &index, int role) const
{
    if (!index.isValid() || index.row() >= m_rows.rowCount())
        return {};
    const int r = index.row();
    if (role == FingerprintRole)
        return m_rows.text(r, RFingerprint);
    if (role == Qt::TextAlignmentRole && (index.column() == Count || index.column() == Open))
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    if (role == Qt::ToolTipRole && index.column() == Sample)
        return m_rows.text(r, RSample);
    if (role != Qt::DisplayRole)
        return {};
    switch (Column(index.column())) {
    case Count:
        return m_rows.bigInt(r, RCount).value_or(0);
    case Open:
        return m_rows.bigInt(r, ROpen).value_or(0);
    case Kind:
        return m_rows.text(r, RKind);
    case ErrorClass:
        return m_rows.text(r, RErrorClass);
    case ErrorCode:
        return m_rows.text(r, RErrorCode);
    case Sample:
        return m_rows.text(r, RSample);
    case FirstSeen:
        return DeadLetterModel::formatTime(m_rows.timestamp(r, RFirst), m_showUtc);
    case LastSeen:
        return DeadLetterModel::formatTime(m_rows.timestamp(r, RLast), m_showUtc);
    case ColumnCount:
        break;
    }
    return {};
}

QVariant FailureGroupModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (Column(section)) {
    case Count:
        return tr("Count");
    case Open:
        return tr("Open");
    case Kind:
        return tr("Kind");
    case ErrorClass:
        return tr("Class");
    case ErrorCode:
        return tr("Code");
    case Sample:
        return tr("Sample error");
    case FirstSeen:
        return tr("First seen");
    case LastSeen:
        return tr("Last seen");
    case ColumnCount:
        break;
    }
    return {};
}

} // namespace redrive
