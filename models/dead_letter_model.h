// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/db_error.h"
#include "models/db/result_set.h"
#include "models/dead_letter_filter.h"

#include <QAbstractTableModel>
#include <QJsonArray>
#include <QList>

namespace redrive {

namespace db {
class DatabaseSession;
}

/// The dead-letter triage list: keyset pagination through the read contract, never
/// OFFSET and never the whole table. Pages stay the ResultSets the server sent; a cell becomes
/// text only in data(). Every request carries a generation number, so a page that arrives after
/// the filter or sort changed is dropped (docs/architecture.md#reading-a-page). The total comes
/// from a separate capped count, or the planner's estimate above the cap, and says which.
class DeadLetterModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column {
        DeadAt,
        Queue,
        Kind,
        Status,
        ErrorClass,
        ErrorCode,
        LastError,
        Attempts,
        IdempotencyKey,
        FailureGroup,
        Age,
        Id, ///< the dead letter's id (last in the model; the view shows it first)
        ColumnCount
    };
    enum Role {
        IdRole = Qt::UserRole + 1, ///< qint64 dead letter id
        VersionRole, ///< int, for optimistic locking in actions
        FingerprintRole, ///< QString
        DeadAtRole, ///< QDateTime (UTC)
        SortValueRole, ///< raw text of the cell, for copy-out
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
    /// Reloads from the first page with the same filter and sort (F5, reconnect).
    void reload();
    /// Counts rows newer than the newest shown (for the "N new" badge); emits newerCountChanged.
    void checkForNewer();
    /// Show times in UTC instead of local time with offset.
    void setShowUtc(bool utc);
    bool isLoading() const { return m_pendingPage; }
    /// The total: rows matching the filter (-1 until known) and whether it is exact.
    qint64 total() const { return m_total; }
    bool totalIsExact() const { return m_totalExact; }

    qint64 idAt(int row) const;
    /// Rows as JSON objects with raw values (Ctrl+C).
    QJsonArray rowsAsJson(const QList<int> &rows) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;
    bool canFetchMore(const QModelIndex &parent) const override;
    void fetchMore(const QModelIndex &parent) override;
    /// Dead at (both ways), queue, kind, status and error class sort in SQL; other columns
    /// keep the current order.
    void sort(int column, Qt::SortOrder order = Qt::AscendingOrder) override;

    /// "2026-11-29 17:46:27 +01:00" in local time, or "2026-11-29 16:46:27 UTC".
    static QString formatTime(const QDateTime &utc, bool showUtc);
    /// "45 s", "12 min", "3 h 12 min", "2 d 3 h".
    static QString formatAge(qint64 seconds);

Q_SIGNALS:
    void loadingChanged(bool loading);
    void totalChanged(qint64 total, bool exact);
    void newerCountChanged(int count);
    void failed(const redrive::db::DbError &error);

private:
    void requestPage();
    void requestTotal();
    int columnIndexInResult(Column column) const;
    const db::ResultSet *pageFor(int row, int *offset) const;

    db::DatabaseSession *m_session;
    DeadLetterFilter m_filter;
    Sort m_sort = Sort::NewestFirst;
    QList<db::ResultSet> m_pages;
    int m_rows = 0;
    bool m_atEnd = false;
    bool m_pendingPage = false;
    quint64 m_generation = 0;
    qint64 m_total = -1;
    bool m_totalExact = false;
    bool m_showUtc = false;
    bool m_active = false; ///< set by the first setFilter(); until then nothing is queried
};

} // namespace redrive
