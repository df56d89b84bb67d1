// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/audit_diff_model.h"

#include "models/display_format.h"

#include <QBrush>
#include <QColor>

namespace redrive {

namespace {

// Light tints that keep dark text readable in any theme; the text colour is set with them.
QColor tint(AuditDiffLine::Change change)
{
    switch (change) {
    case AuditDiffLine::Change::Changed:
        return QColor(0xff, 0xe0, 0xa8);
    case AuditDiffLine::Change::Added:
        return QColor(0xd4, 0xf4, 0xd4);
    case AuditDiffLine::Change::Removed:
        return QColor(0xfa, 0xd4, 0xd4);
    case AuditDiffLine::Change::Unchanged:
        break;
    }
    return {};
}

} // namespace

AuditDiffModel::AuditDiffModel(QObject *parent)
    : QAbstractTableModel(parent)
{ }

void AuditDiffModel::setDiff(const AuditEntryDiff &diff)
{
    beginResetModel();
    m_diff = diff;
    endResetModel();
}

int AuditDiffModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : int(m_diff.lines().size());
}

int AuditDiffModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant AuditDiffModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const AuditDiffLine &line = m_diff.lines().at(index.row());
    switch (role) {
    case Qt::ToolTipRole:
        // The values are the database's text: shown literally, bounded.
        return display::plainToolTip(data(index, Qt::DisplayRole).toString());
    case Qt::DisplayRole:
        switch (Column(index.column())) {
        case Field:
            return line.path;
        case Change:
            return AuditEntryDiff::changeName(line.change);
        case Before:
            return display::boundedText(line.before, display::kMaxCellChars);
        case After:
            return display::boundedText(line.after, display::kMaxCellChars);
        case ColumnCount:
            break;
        }
        return {};
    case Qt::BackgroundRole: {
        const QColor color = tint(line.change);
        return color.isValid() ? QVariant(QBrush(color)) : QVariant();
    }
    case Qt::ForegroundRole:
        return line.change == AuditDiffLine::Change::Unchanged
            ? QVariant()
            : QVariant(QBrush(QColor(0x20, 0x20, 0x20)));
    case ChangeRole:
        return int(line.change);
    default:
        return {};
    }
}

QVariant AuditDiffModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (Column(section)) {
    case Field:
        return tr("Field");
    case Change:
        return tr("Change");
    case Before:
        return tr("Before");
    case After:
        return tr("After");
    case ColumnCount:
        break;
    }
    return {};
}

} // namespace redrive
