// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/query_params.h"
#include "models/db/result_set.h"

#include <QList>
#include <QString>

namespace redrive {

/// One value of a keyset (docs/architecture.md#reading-a-page): the result column it is read
/// from in the last row shown, and the parameter type it is bound as. Timestamps go back exactly
/// as the server printed them (microseconds and all), so a page never skips or repeats a row
/// that shares a timestamp with its neighbour.
struct KeysetKey
{
    QString name;
    db::ParamType type = db::ParamType::Text;
    /// Bound after the page size rather than before it (where the statement expects it).
    bool afterLimit = false;
};

/// The total of a list: a count up to a cap, beyond it the planner's estimate (or the cap).
struct ListTotal
{
    qint64 rows = -1; ///< -1 while unknown
    bool exact = false;

    bool operator==(const ListTotal &) const = default;
    /// The total from a count of at most `cap` + 1 rows: exact up to `cap`; above it the cap
    /// itself, not exact, until an estimate replaces it.
    static ListTotal fromCount(qint64 counted, qint64 cap);
    /// The total from the planner's EXPLAIN (FORMAT JSON) output (its top node's "Plan Rows"),
    /// never below `cap` + 1 since the count already saw more than `cap`; never exact.
    static ListTotal fromEstimate(const db::ResultSet &plan, qint64 cap);
};

/// The paging state of a keyset-paginated list, without a model or a server: the pages as the
/// server sent them, the keyset of the last row, whether the list has ended, and the generation
/// that makes a page asked for before reset() arrive stale. KeysetPageModel drives it.
class KeysetPager
{
public:
    /// `pageSize` rows per request (the statement's LIMIT, at least 1).
    KeysetPager(QList<KeysetKey> keys, int pageSize);

    void setKeys(QList<KeysetKey> keys) { m_keys = std::move(keys); }
    const QList<KeysetKey> &keys() const { return m_keys; }
    int pageSize() const { return m_pageSize; }

    /// Drops every page and starts a new generation; pages of the old one are stale.
    void reset();
    quint64 generation() const { return m_generation; }
    bool isCurrent(quint64 generation) const { return generation == m_generation; }

    /// True when a request may go out: nothing pending and the list has not ended.
    bool canRequest() const { return !m_pending && !m_atEnd; }
    /// Appends the keyset values of the last row (NULLs of the keys' types before the first
    /// page), the page size, then the keys bound after it; marks a request pending and returns
    /// its generation.
    quint64 beginRequest(db::QueryParams &params);
    bool isPending() const { return m_pending; }
    /// True once a page shorter than pageSize() (or an error) ended the list.
    bool isAtEnd() const { return m_atEnd; }

    /// Takes a page asked for in `generation`: false (and nothing changes) when it is stale.
    /// A page shorter than pageSize() ends the list.
    bool accept(quint64 generation, const db::ResultSet &page);
    /// The request of `generation` failed: the list ends (until reset()). False when stale.
    bool fail(quint64 generation);

    int rowCount() const { return m_rows; }
    int pageCount() const { return int(m_pages.size()); }
    /// The page holding row `row` and the row's index in it; nullptr when out of range.
    const db::ResultSet *pageFor(int row, int *offset) const;

private:
    void appendKey(db::QueryParams &params, const KeysetKey &key, const db::ResultSet *last,
                   int lastRow) const;

    QList<KeysetKey> m_keys;
    int m_pageSize;
    QList<db::ResultSet> m_pages;
    int m_rows = 0;
    bool m_atEnd = false;
    bool m_pending = false;
    quint64 m_generation = 0;
};

} // namespace redrive
