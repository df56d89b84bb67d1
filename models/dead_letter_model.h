// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/dead_letter_filter.h"
#include "models/keyset_page_model.h"

namespace redrive {

/// The dead-letter triage list: keyset pagination through the read contract, never
/// OFFSET and never the whole table (KeysetPageModel). The total comes from a separate capped
/// count, or the planner's estimate above the cap, and says which
/// (docs/architecture.md#reading-a-page). Sorting happens in SQL, each order through its own
/// statement. Every order pages through a frozen pass (the ids in that order, read once per
/// reload(); docs/architecture.md#paging-a-frozen-pass), so a row whose status, time or sort
/// value changes while the operator pages is listed once, and rereadShown() updates the rows
/// shown in place.
class DeadLetterModel : public KeysetPageModel
{
    Q_OBJECT
public:
    /// The list's column that shows result column `name` of fragments/dead_letter_columns.sql
    /// ("dead_at", "status", "job_ref", ...), or -1 when the list does not show it. Views and
    /// tests name a column by what it shows, so a column added anywhere in the list
    /// (dead_letter_model.cpp) moves nothing else (docs/architecture.md#where-things-live).
    static int column(const QString &name);
    enum Role {
        IdRole = Qt::UserRole + 1, ///< qint64 dead letter id
        VersionRole, ///< int, for optimistic locking in actions
        FingerprintRole, ///< QString
        DeadAtRole, ///< QDateTime (UTC)
    };
    /// The orders SQL can serve from an index (sorting happens in SQL).
    enum class Sort { NewestFirst, OldestFirst, ByStatus, ByQueue, ByKind, ByErrorClass };

    static constexpr int kPageSize = 200;
    static constexpr int kExactCountCap = 10000;

    explicit DeadLetterModel(db::DatabaseSession *session, QObject *parent = nullptr);

    /// Replaces the filter and reloads from the first page. Nothing is queried before the first
    /// call.
    void setFilter(const DeadLetterFilter &filter);
    DeadLetterFilter filter() const { return m_filter; }
    Sort sortOrder() const { return m_sort; }
    /// Reloads from the first page with the same filter and sort (F5, reconnect); nothing before
    /// the first setFilter().
    void reload();
    /// Counts rows newer than the newest shown (for the "N new" badge); emits newerCountChanged.
    /// An empty list is read again instead, since there is no position to keep.
    void checkForNewer();

    qint64 idAt(int row) const { return bigInt(row, QStringLiteral("id")); }

    /// Dead at (both ways), queue, kind, status and error class sort in SQL; other columns
    /// keep the current order.
    void sort(int column, Qt::SortOrder order = Qt::AscendingOrder) override;

Q_SIGNALS:
    void newerCountChanged(int count);

protected:
    void appendFilterParams(db::QueryParams &params) const override;

private:
    DeadLetterFilter m_filter;
    Sort m_sort = Sort::NewestFirst;
    bool m_active = false; ///< set by the first setFilter(); until then nothing is queried
};

} // namespace redrive
