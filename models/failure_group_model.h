// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/dead_letter_filter.h"
#include "models/result_table_model.h"

namespace redrive {

/// The failure-groups panel: one row per fingerprint among the dead letters that match
/// the current filter (ignoring its failure-group condition), largest first, with count, open
/// count, first and last seen and a sample error, through Statement::FailureGroups. Counted in
/// SQL; at most kMaxGroups rows.
class FailureGroupModel : public ResultTableModel
{
    Q_OBJECT
public:
    /// Indexes into the column list (failure_group_model.cpp) that views name. A column appended
    /// to the list needs no entry here.
    enum Column {
        Count,
        Open,
        ErrorCode,
        Kind,
        ErrorClass,
        Sample,
        FirstSeen,
        LastSeen,
    };
    enum Role { FingerprintRole = Qt::UserRole + 1 };
    static constexpr int kMaxGroups = 500;

    /// `session` must outlive the model. Nothing loads until setFilter() or reload().
    explicit FailureGroupModel(db::DatabaseSession *session, QObject *parent = nullptr);

    /// Reloads the groups for `filter` (its fingerprint is ignored).
    void setFilter(const DeadLetterFilter &filter);
    void reload();
    /// The row of `fingerprint`, or -1.
    int rowOf(const QString &fingerprint) const
    {
        return ResultTableModel::rowOf(QStringLiteral("fingerprint"), fingerprint);
    }
    QString fingerprintAt(int row) const { return text(row, QStringLiteral("fingerprint")); }

private:
    DeadLetterFilter m_filter;
};

} // namespace redrive
