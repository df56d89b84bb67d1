// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/db_error.h"
#include "models/db/db_expected.h"
#include "models/db/query_params.h"
#include "models/db/result_set.h"
#include "models/db/sql_statement.h"
#include "models/keyset_pager.h"
#include "models/result_column.h"

#include <QAbstractTableModel>
#include <QJsonArray>
#include <QList>
#include <functional>
#include <optional>

namespace redrive {

namespace db {
class DatabaseSession;
}

/// A keyset-paginated list (docs/architecture.md#reading-a-page) shown through a
/// ResultColumnSet: pages of one statement are kept as the ResultSets the server sent, the next
/// page is asked for with the last row's keyset values (never OFFSET) through
/// canFetchMore()/fetchMore(), and every request carries a generation number so a page that
/// arrives after reload() is dropped (KeysetPager). With a CountSpec, every reload() also counts
/// the matching rows up to a cap, and above it asks the planner for an estimate (ListTotal).
/// Subclasses bind only their filter's parameters; the statement gets them first, then the
/// keyset values, the page size and any keys bound after it.
class KeysetPageModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    /// The total's statements: `count` takes the filter's parameters and a LIMIT (cap + 1);
    /// `estimate` (optional) the filter's parameters, answering EXPLAIN (FORMAT JSON).
    struct CountSpec
    {
        db::Statement count;
        std::optional<db::Statement> estimate;
        qint64 cap;
    };

    /// A frozen pass (docs/architecture.md#paging-a-frozen-pass): `keys` takes the filter's
    /// parameters and answers the ordered keys of every matching row (the result columns named
    /// by `keyColumns`), once per reload(), read through a cursor on one snapshot on the
    /// model's own connection: the first pageSize() keys at once, the rest in chunks of
    /// kFreezeChunkRows after the first page is shown; `rows` takes one array per key column
    /// (a slice of that list) and answers those rows in the order of the arrays.
    struct FrozenPass
    {
        db::Statement keys;
        db::Statement rows;
        QList<KeysetKey> keyColumns;
    };

    /// Long values a page sends cut short (docs/architecture.md#long-values-in-lists): for each
    /// result column c in `columns`, the pages (and a frozen pass's rows) also answer
    /// c_cut_bytes, the bytes of c they did not send (0 or NULL when c is whole). `keys` are the
    /// result columns that together name one row (an attempt's id alone does not: its table's
    /// key is the id with the start); `statement` takes, for the rows cut short, one text[] per
    /// key column in that order (each value as the server sent it) and answers the key columns
    /// and the whole values of `columns`, through the same role-checked read as the pages.
    struct WholeValues
    {
        db::Statement statement;
        QStringList keys;
        QStringList columns;
    };

    /// Keys read per FETCH after the first page of a frozen pass.
    static constexpr int kFreezeChunkRows = 50000;

    /// `session` must outlive the model; `pageSize` rows per request (the statement's LIMIT).
    KeysetPageModel(db::DatabaseSession *session, db::Statement statement, QList<KeysetKey> keys,
                    ResultColumnSet columns, int pageSize, QObject *parent = nullptr);

    /// Drops every row and loads the first page again (filter change, F5, reconnect), and
    /// counts again when the model has a CountSpec.
    void reload();
    /// Reads again, in place, the rows already shown (a live update: another session resolved,
    /// requeued or claimed one), through the same role-checked read as the pages. Only a model
    /// with a FrozenPass pages by a fixed list of keys, so only it re-reads; any other model
    /// reloads. A page on its way is waited for first. The same keys in the same order:
    /// dataChanged() over every row, and the view keeps its selection, current row and scroll;
    /// rows gone: a model reset (ResultTableView::setRowKey restores the place). Emits
    /// rowsReread().
    void rereadShown();
    /// Counts the matching rows again (a model with a CountSpec), without touching the rows: after
    /// the operator's own action the rows shown are re-read in place (rereadShown()) and the
    /// total says how many still match the filter.
    void recount();
    /// Show times in UTC instead of local time with offset.
    void setShowUtc(bool utc);
    bool showUtc() const { return m_showUtc; }
    /// True while a page request is on its way (or waits for the keys of a frozen pass).
    bool isLoading() const { return m_pager.isPending() || m_fetchWanted; }
    /// In a frozen pass: keys of the pass read so far, and whether all are in (the pass's
    /// transaction has ended).
    int frozenCount() const { return m_pager.frozenCount(); }
    bool isFrozenComplete() const { return m_pager.isFrozenComplete(); }
    /// True once a page shorter than pageSize() (or an error) ended the list.
    bool isAtEnd() const { return m_pager.isAtEnd(); }
    /// True once reload() was called.
    bool hasStarted() const { return m_started; }
    int pageSize() const { return m_pager.pageSize(); }
    /// Pages received since the last reload().
    int pageCount() const { return m_pager.pageCount(); }
    /// The total: rows matching the filter (-1 until known) and whether it is exact.
    qint64 total() const { return m_total.rows; }
    bool totalIsExact() const { return m_total.exact; }
    /// The raw text of result column `name` in `row` (null for NULL or a missing column).
    QString text(int row, const QString &name) const;
    /// Result column `name` in `row` as a number (0 for NULL, a missing column or row).
    qint64 bigInt(int row, const QString &name) const;
    /// The first loaded row whose result column `name` is `value`, or -1.
    int rowOf(const QString &name, qint64 value) const;
    /// Rows as JSON objects with raw values, as loaded: a value cut short is its prefix.
    QJsonArray rowsAsJson(const QList<int> &rows) const;
    /// Bytes of row `row`'s values the page did not send (WholeValues): of result column
    /// `column`, or of all of them when `column` is empty. 0 when every value is whole.
    qint64 cutBytes(int row, const QString &column = {}) const;
    /// True when the model has WholeValues (its pages may cut long values short).
    bool cutsLongValues() const { return m_wholeValues.has_value(); }
    /// rowsAsJson() with every value whole (what Ctrl+C copies): the rows cut short are read
    /// again by key first, and `done` gets the array from the event loop, unless `context` is
    /// destroyed meanwhile; when no row is cut short, `done` runs before this returns. The
    /// c_cut_bytes columns are left out, but for a value still cut (its row is gone or no longer
    /// readable): it stays its prefix, and c_cut_bytes says how much is missing. A failed read
    /// gives the error.
    void wholeRowsAsJson(const QList<int> &rows, QObject *context,
                         std::function<void(const db::DbExpected<QJsonArray> &)> done) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
    /// False until the first reload(): a view attached early does not load before the filters
    /// are set.
    bool canFetchMore(const QModelIndex &parent) const override;
    void fetchMore(const QModelIndex &parent) override;

Q_SIGNALS:
    void loadingChanged(bool loading);
    /// A page of `rows` rows was appended (0 for an empty last page).
    void pageLoaded(int rows);
    /// total() changed: a count or estimate arrived, or a new count started (-1).
    void totalChanged(qint64 total, bool exact);
    void failed(const redrive::db::DbError &error);
    /// rereadShown() put the current rows in place.
    void rowsReread();

protected:
    /// Appends the filter's parameters (those before the keyset).
    virtual void appendFilterParams(db::QueryParams &params) const = 0;
    /// Another statement and keyset (a sort served by another index); takes effect at reload().
    void setStatement(db::Statement statement, QList<KeysetKey> keys);
    void setCount(CountSpec count) { m_count = count; }
    void setWholeValues(WholeValues whole) { m_wholeValues = std::move(whole); }
    /// Pages through a frozen pass from the next reload() on (std::nullopt: by keyset).
    void setFrozenPass(std::optional<FrozenPass> pass) { m_frozenPass = std::move(pass); }
    db::DatabaseSession *session() const { return m_session; }
    /// Bumped by every reload(): an answer asked for in another generation is stale.
    quint64 generation() const { return m_pager.generation(); }
    /// The page holding model row `row` and the row's index in it; nullptr when out of range.
    const db::ResultSet *pageFor(int row, int *offset) const
    {
        return m_pager.pageFor(row, offset);
    }

private:
    void requestPage();
    void requestFrozenKeys();
    void requestFrozenChunk(quint64 generation);
    /// Runs `sql` on the model's own connection for the pass of `generation`; `onRows` gets the
    /// rows unless the pass was replaced meanwhile; an error ends the pass (failPass()).
    void passExecute(const QByteArray &sql, const db::QueryParams &params, quint64 generation,
                     std::function<void(const db::ResultSet &)> onRows);
    /// Withdraws the pass's requests (cancelled on the server if one runs) and ends its
    /// transaction: COMMIT when every key is in, else ROLLBACK.
    void endPass(bool complete);
    void failPass(quint64 generation, const db::DbError &error);
    void requestReread();
    void requestTotal();
    void setTotal(ListTotal total);

    db::DatabaseSession *m_session;
    db::Statement m_statement;
    ResultColumnSet m_columns;
    KeysetPager m_pager;
    std::optional<CountSpec> m_count;
    std::optional<FrozenPass> m_frozenPass;
    std::optional<WholeValues> m_wholeValues;
    bool m_rereadWanted = false; ///< rereadShown() waits for the page on its way
    bool m_fetchWanted = false; ///< fetchMore() waits for the next chunk of the pass's keys
    bool m_passOpen = false; ///< a pass's transaction is open on the model's own connection
    QList<quint64> m_passRequests; ///< the pass's requests on its way
    ListTotal m_total;
    quint64 m_pageRequest = 0; ///< the session's id of the page on its way, 0 when none
    quint64 m_totalRequest = 0; ///< the session's id of the count on its way, 0 when none
    bool m_started = false; ///< reload() was called at least once
    bool m_showUtc = false;
};

} // namespace redrive
