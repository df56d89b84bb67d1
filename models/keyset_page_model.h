// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/db_error.h"
#include "models/db/query_params.h"
#include "models/db/result_set.h"
#include "models/db/sql_statement.h"
#include "models/result_column.h"

#include <QAbstractTableModel>
#include <QJsonArray>
#include <QList>

namespace redrive {

namespace db {
class DatabaseSession;
}

/// The common half of a keyset-paginated list (docs/architecture.md#reading-a-page): pages of one
/// statement are kept as the ResultSets the server sent, the next page is asked for with the last
/// row's keyset values (never OFFSET) through canFetchMore()/fetchMore(), and every request carries
/// a generation number so a page that arrives after reload() is dropped. Subclasses name the
/// statement, bind its parameters (filters, keyset, LIMIT pageSize()) and turn cells into display
/// values.
class KeysetPageModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    /// `session` must outlive the model; `pageSize` rows per request (the statement's LIMIT).
    KeysetPageModel(db::DatabaseSession *session, db::Statement statement, int pageSize,
                    QObject *parent = nullptr);

    /// Drops every row and loads the first page again (filter change, F5, reconnect).
    void reload();
    /// Show times in UTC instead of local time with offset.
    void setShowUtc(bool utc);
    bool showUtc() const { return m_showUtc; }
    /// True while a page request is on its way.
    bool isLoading() const { return m_pendingPage; }
    /// True once a page shorter than pageSize() (or an error) ended the list.
    bool isAtEnd() const { return m_atEnd; }
    int pageSize() const { return m_pageSize; }
    /// Pages received since the last reload().
    int pageCount() const { return int(m_pages.size()); }
    /// The raw text of result column `name` in `row` (null for NULL or a missing column).
    QString text(int row, const QString &name) const;
    /// Rows as JSON objects with raw values (Ctrl+C).
    QJsonArray rowsAsJson(const QList<int> &rows) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    /// False until the first reload(): a view attached early does not load before the filters
    /// are set.
    bool canFetchMore(const QModelIndex &parent) const override;
    void fetchMore(const QModelIndex &parent) override;

Q_SIGNALS:
    void loadingChanged(bool loading);
    /// A page of `rows` rows was appended (0 for an empty last page).
    void pageLoaded(int rows);
    void failed(const redrive::db::DbError &error);

protected:
    /// Appends all the statement's parameters. `last` is the page holding the last loaded row and
    /// `lastRow` its index there (for the keyset values), or nullptr for the first page.
    virtual void appendParams(db::QueryParams &params, const db::ResultSet *last,
                              int lastRow) const = 0;
    /// The value of a cell for `role`; `rows` is the page and `row` the row in it.
    virtual QVariant cellData(const db::ResultSet &rows, int row, int column, int role) const = 0;
    /// How result columns turn into JSON values for rowsAsJson().
    void setJsonKinds(JsonKinds kinds) { m_jsonKinds = std::move(kinds); }
    /// The page holding model row `row` and the row's index in it; nullptr when out of range.
    const db::ResultSet *pageFor(int row, int *offset) const;

private:
    void requestPage();

    db::DatabaseSession *m_session;
    db::Statement m_statement;
    int m_pageSize;
    JsonKinds m_jsonKinds;
    QList<db::ResultSet> m_pages;
    int m_rows = 0;
    bool m_atEnd = false;
    bool m_started = false; ///< reload() was called at least once
    bool m_pendingPage = false;
    bool m_showUtc = false;
    quint64 m_generation = 0;
};

} // namespace redrive
