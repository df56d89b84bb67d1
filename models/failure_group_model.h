// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/dead_letter_filter.h"
#include "models/result_table_model.h"

#include <QHash>
#include <optional>

namespace redrive {

/// The failure-groups panel (docs/domain.md#failure-groups): one row per failure group among the
/// dead letters that match the current filter (ignoring its failure-group condition), largest
/// first, through Statement::FailureGroups. Each row names the group by error code and
/// normalized message, says what tells it apart from look-alikes (same code), counts its dead
/// letters (matching, open, in flight, resolved), shows first and last seen, a 24-hour trend
/// (one block per UTC hour), the safe-to-retry verdicts of its open dead letters and whether it
/// is a regression (resolved, then failing again). Counted in SQL; at most kMaxGroups rows.
///
/// The groups come first (Statement::FailureGroups, counts only); once they are in, the
/// verdicts of the first kVerdictGroups groups are asked on the model's own connection
/// (Statement::FailureGroupVerdicts) and filled into the rows when they arrive: until then the
/// verdict cells say "…" (verdictsPending()). Per group at most kVerdictSample open dead letters
/// are judged, the newest; a group with more says its counts are of that sample. A reload
/// withdraws a verdict request on its way and cancels it on the server (its own connection runs
/// nothing else, so the next filter's counts never wait behind it); a reload with the same
/// filter (a live re-read) keeps showing the verdicts it had until the new ones arrive.
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
    /// Verdicts are counted for this many groups, the first listed; the rest show "—".
    static constexpr int kVerdictGroups = 50;
    /// At most this many open dead letters per group are judged, the newest (dead_at, then id);
    /// a group with more shows the counts of these, marked as a sample. The cap bounds the
    /// verdicts' cost at any size: 50 groups judge at most 10,000 dead letters, about 1.3 s at
    /// 1,000,000 dead letters where a cap of 1,000 took 5.8 s (docs/benchmarks.md, "failure-group
    /// verdicts").
    static constexpr int kVerdictSample = 200;
    /// With a text filter, the groups are counted over at most this many dead letters that
    /// match the whole filter (the first found); when more match, sampledMatches() says so and
    /// the count cells say they are of a sample. Recounting every match of a common word per
    /// group cost more than the list's page and count together at 1,000,000 dead letters, and
    /// 10,000 (the list's exact-count cap) still took as long as the count beside it
    /// (docs/benchmarks.md, the search row).
    static constexpr int kSearchSample = 5000;

    /// The verdict counts of one group (failure_group_verdicts.sql): of `sample` open dead
    /// letters judged, how many are safe, to look at first, blocked, and why ("code n", blocking
    /// rules first; empty when all are safe). `sampled`: the group has more open dead letters
    /// than kVerdictSample, and these are the counts of its kVerdictSample newest.
    struct GroupVerdicts
    {
        qint64 sample = 0;
        qint64 safe = 0;
        qint64 warn = 0;
        qint64 blocked = 0;
        bool sampled = false;
        QString reasons;
    };

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
    /// The number of matching dead letters the counts were taken over when a text filter matched
    /// more than kSearchSample (the counts are then of a sample), else std::nullopt.
    std::optional<qint64> sampledMatches() const
    {
        return rowCount() > 0 ? result().bigInt(0, QStringLiteral("sampled_matches"))
                              : std::nullopt;
    }
    /// True from reload() until the verdicts of the groups listed arrived or failed.
    bool verdictsPending() const { return m_verdictsPending; }
    /// The verdicts of `row`'s group: std::nullopt before its first verdicts arrived, after a
    /// failure and beyond the first kVerdictGroups rows (while a re-read with the same filter
    /// is pending, the previous ones); all zero for a group with no open dead letter that
    /// matches.
    std::optional<GroupVerdicts> verdictsAt(int row) const;
    /// The error of the last verdict request, if it failed (empty otherwise).
    QString verdictError() const { return m_verdictError; }

    /// As ResultTableModel, and kRowJsonRole adds the row's verdicts (verdict_safe, _warn,
    /// _blocked, _reasons, _sample, _sampled) once they are in.
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;

Q_SIGNALS:
    /// The verdicts of the groups listed arrived and are in the rows.
    void verdictsLoaded();
    /// The verdict request failed; the verdict cells say so.
    void verdictsFailed(const redrive::db::DbError &error);

private:
    void loadVerdicts();
    /// Tells views that every verdict cell changed.
    void verdictCellsChanged();

    DeadLetterFilter m_filter;
    QHash<QString, GroupVerdicts> m_verdicts; ///< by fingerprint, for the groups asked
    quint64 m_verdictGeneration = 0;
    quint64 m_verdictRequest = 0; ///< the session's id of the verdicts on their way, 0 when none
    bool m_verdictsPending = false;
    QString m_verdictError;
};

} // namespace redrive
