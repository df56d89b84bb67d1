// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/query_params.h"
#include "models/db/result_set.h"

#include <QList>
#include <QString>
#include <optional>
#include <vector>

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
///
/// A list whose rows change while the operator pages through it (a status, a time, the sort
/// column's value) pages through a **frozen pass** instead
/// (docs/architecture.md#paging-a-frozen-pass): freeze() takes the ordered keys of every matching
/// row, read once in one snapshot when the pass begins, and each page then asks for the rows of the
/// next pageSize() keys of that list, so a row is listed once whatever happens to it meanwhile. A
/// page of a frozen pass may hold fewer rows than it asked for (a row deleted or no longer visible
/// to the caller).
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

    /// Marks the request for the frozen list pending (FrozenKeys mode) and returns its
    /// generation; `keys` are the result columns of that list, bound as arrays (BigInt: bigint[],
    /// anything else text[]), one array per key in this order.
    quint64 beginFreeze(QList<KeysetKey> keys);
    /// Takes the whole ordered list of the pass's keys (one row per list entry), asked for in
    /// `generation`: false (and nothing changes) when it is stale. An empty list ends the list.
    bool freeze(quint64 generation, const db::ResultSet &keys);
    /// Takes the next entries of the pass's ordered keys (a chunk read through a cursor, in
    /// order), asked for in `generation`; `complete` when they are the last ones. The first chunk
    /// starts the pass (isFrozen()); pages are asked for as soon as the entries they need are in.
    /// False (and nothing changes) when stale. A pass that completes empty ends the list.
    bool appendFrozen(quint64 generation, const db::ResultSet &keys, bool complete);
    /// True once the first entries of the pass's keys are in (until reset()).
    bool isFrozen() const { return m_frozenStarted; }
    /// True once every entry of the pass's keys is in.
    bool isFrozenComplete() const { return m_frozenStarted && m_frozenComplete; }
    /// Entries in the frozen list so far (0 when not frozen).
    int frozenCount() const { return m_frozenCount; }
    /// True when the next page's entries are not all in yet: it waits for the next chunk.
    bool waitsForFrozen() const
    {
        return m_frozenStarted && !m_frozenComplete && m_consumed + m_pageSize > m_frozenCount;
    }
    /// Entries of the frozen list already asked for and answered.
    int consumed() const { return m_consumed; }
    /// Binds the keys of every entry already answered (a re-read of the rows shown, in place),
    /// marks a request pending and returns its generation. Only for a frozen pass with rows.
    quint64 beginReread(db::QueryParams &params);
    /// The re-read of `generation` failed: the rows shown stay, nothing is pending any more.
    /// False when stale.
    bool abandonReread(quint64 generation);
    /// Replaces every page by `rows`, the answer to beginReread() asked for in `generation`:
    /// false (and nothing changes) when it is stale.
    bool acceptReread(quint64 generation, const db::ResultSet &rows);

    /// True when a request may go out: nothing pending, the list has not ended and, in a frozen
    /// pass, the entries of the next page are in.
    bool canRequest() const { return !m_pending && !m_atEnd && !waitsForFrozen(); }
    /// Appends the keyset values of the last row (NULLs of the keys' types before the first
    /// page), the page size, then the keys bound after it; marks a request pending and returns
    /// its generation.
    /// In a frozen pass, binds instead the next pageSize() keys of the frozen list as arrays.
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
    void appendFrozenSlice(db::QueryParams &params, int from, int to) const;
    /// The chunk of the frozen list holding entry `entry` and the entry's row in it.
    const db::ResultSet &frozenChunkFor(int entry, int *row) const;

    QList<db::ResultSet> m_pages;
    QList<int> m_pageStarts; ///< the model row of each page's first row
    int m_rows = 0;
    QList<KeysetKey> m_frozenKeys;
    /// The pass's ordered keys. With one bigint key (the dead-letter ids) only the numbers are
    /// kept (8 bytes an entry, about 8 MB at 1,000,000); otherwise the chunks as read.
    std::vector<qint64> m_frozenIds;
    QList<db::ResultSet> m_frozenChunks;
    QList<int> m_frozenChunkStarts; ///< the entry of each chunk's first row
    int m_frozenCount = 0;
    bool m_frozenStarted = false;
    bool m_frozenComplete = false;
    int m_consumed = 0; ///< frozen entries answered
    int m_requestedTo = 0; ///< frozen entries asked for by the pending request
    bool m_atEnd = false;
    bool m_pending = false;
    quint64 m_generation = 0;
};

} // namespace redrive
