// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/audit_entry_diff.h"

#include <QAbstractTableModel>

namespace redrive {

/// The lines of an AuditEntryDiff as a table (Field, Change, Before, After) for the audit view's
/// details pane: changed, added and removed lines are tinted, unchanged ones stay plain. The
/// diff is computed on the client from the entry already loaded, so setDiff() replaces the rows
/// at once.
class AuditDiffModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column { Field, Change, Before, After, ColumnCount };
    /// Qt::UserRole + 1: the line's AuditDiffLine::Change as an int.
    static constexpr int ChangeRole = Qt::UserRole + 1;

    explicit AuditDiffModel(QObject *parent = nullptr);

    /// Shows `diff` (an empty AuditEntryDiff clears the table).
    void setDiff(const AuditEntryDiff &diff);
    const AuditEntryDiff &diff() const { return m_diff; }

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

private:
    AuditEntryDiff m_diff;
};

} // namespace redrive
