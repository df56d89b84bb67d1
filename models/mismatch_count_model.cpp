// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/mismatch_count_model.h"

namespace redrive {

MismatchCountModel::MismatchCountModel(db::DatabaseSession *session, QObject *parent)
    : ResultTableModel(
        session,
        ResultColumnSet({
            { QStringLiteral("kind"), tr("Kind") },
            { QStringLiteral("mismatches"), tr("All"), ResultColumn::Format::Integer },
            { QStringLiteral("open"), tr("Open"), ResultColumn::Format::Integer },
        }),
        parent)
{ }

void MismatchCountModel::reload()
{
    load(db::Statement::MismatchCounts, {});
}

qint64 MismatchCountModel::valueFor(const QString &kind, const QString &column) const
{
    for (int row = 0; row < rowCount(); ++row) {
        if (kindAt(row) == kind)
            return text(row, column).toLongLong();
    }
    return 0;
}

qint64 MismatchCountModel::count(const QString &kind) const
{
    return valueFor(kind, QStringLiteral("mismatches"));
}

qint64 MismatchCountModel::openCount(const QString &kind) const
{
    return valueFor(kind, QStringLiteral("open"));
}

QStringList MismatchCountModel::checkedKinds() const
{
    QStringList kinds;
    for (int row = 0; row < rowCount(); ++row) {
        if (m_checked.contains(kindAt(row)))
            kinds << kindAt(row);
    }
    // Checked kinds that no longer have mismatches still filter, after the listed ones.
    QStringList rest;
    for (const QString &kind : m_checked) {
        if (!kinds.contains(kind))
            rest << kind;
    }
    rest.sort();
    return kinds + rest;
}

void MismatchCountModel::setCheckedKinds(const QStringList &kinds)
{
    const QSet<QString> next(kinds.begin(), kinds.end());
    if (next == m_checked)
        return;
    m_checked = next;
    if (rowCount() > 0)
        Q_EMIT dataChanged(index(0, Kind), index(rowCount() - 1, Kind), { Qt::CheckStateRole });
    Q_EMIT checkedKindsChanged(checkedKinds());
}

Qt::ItemFlags MismatchCountModel::flags(const QModelIndex &index) const
{
    Qt::ItemFlags f = ResultTableModel::flags(index);
    if (index.isValid() && index.column() == Kind)
        f |= Qt::ItemIsUserCheckable;
    return f;
}

QVariant MismatchCountModel::data(const QModelIndex &index, int role) const
{
    if (role == Qt::CheckStateRole) {
        if (!index.isValid() || index.column() != Kind)
            return {};
        return int(m_checked.contains(kindAt(index.row())) ? Qt::Checked : Qt::Unchecked);
    }
    return ResultTableModel::data(index, role);
}

bool MismatchCountModel::setData(const QModelIndex &index, const QVariant &value, int role)
{
    if (role != Qt::CheckStateRole || !index.isValid() || index.column() != Kind)
        return false;
    const QString kind = kindAt(index.row());
    const bool checked = value.toInt() == int(Qt::Checked);
    if (checked == m_checked.contains(kind))
        return true;
    if (checked)
        m_checked.insert(kind);
    else
        m_checked.remove(kind);
    Q_EMIT dataChanged(index, index, { Qt::CheckStateRole });
    Q_EMIT checkedKindsChanged(checkedKinds());
    return true;
}

} // namespace redrive
