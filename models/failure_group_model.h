// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/dead_letter_filter.h"
#include "models/result_table_model.h"

namespace redrive {

/// The failure-groups panel (docs/domain.md#failure-groups): one row per failure group among the
/// dead letters that match the current filter (ignoring its failure-group condition), largest
/// first, through Statement::FailureGroups. Each row names the group by error code and
/// normalized message, says what tells it apart from look-alikes (same code), counts its dead
/// letters (matching, open, in flight, resolved), shows first and last seen, a 24-hour trend
/// (one block per UTC hour), the safe-to-retry verdicts of its open dead letters and whether it
/// is a regression (resolved, then failing again). Counted in SQL; at most kMaxGroups rows.
class FailureGroupModel : public ResultTableModel
{
    Q_OBJECT
public:
    /// Indexes into the column list (failure_group_model.cpp) that views name. A column appended
    /// to the list needs no entry here.
    enum Column {
        Name,
        Verdicts,
        Count,
        Open,
        InFlight,
        Resolved,
        Trend,
        Differs,
        FirstSeen,
        LastSeen,
        Kind,
        ErrorClass,
    };
    enum Role { FingerprintRole = Qt::UserRole + 1 };
    static constexpr int kMaxGroups = 500;
    /// Verdicts are counted for this many groups, the first listed (failure_groups.sql); the
    /// rest show "—".
    static constexpr int kVerdictGroups = 50;

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
    /// The group's name as the list shows it: "invalid_request: amount must be <n> or more".
    QString nameAt(int row) const { return text(row, QStringLiteral("group_name")); }

private:
    DeadLetterFilter m_filter;
};

} // namespace redrive
