// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/database_session.h"
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

/// A read-only table over one ResultSet, shown through a ResultColumnSet: the rows of one
/// statement with a bounded LIMIT (stuck keys, runs, counts, failure groups), or a result another
/// object loaded (the case view's tables, setResult()). The result stays the server's; a cell
/// becomes text only in data(). Subclasses decide the statement and its parameters and call
/// load(); a result that arrives after a newer load() of another question was asked for is
/// dropped (generation counter). Asked the same question again while it is on its way (a live
/// re-read), the load is not cancelled: its result is shown and the statement runs once more
/// after it, however many times it was asked meanwhile, so re-reads that come faster than the
/// statement answers never keep the table empty (docs/architecture.md#live-updates). Rows come
/// in the statement's ORDER BY; the model never sorts.
class ResultTableModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    /// `session` must outlive the model; it may be null when rows only come through setResult().
    ResultTableModel(db::DatabaseSession *session, ResultColumnSet columns,
                     QObject *parent = nullptr);

    /// Replaces the rows (a model reset) and ends any load() on its way.
    void setResult(const db::ResultSet &result);
    /// Show times in UTC instead of local time with offset.
    void setShowUtc(bool utc);
    /// The connection load() runs on (DatabaseSession::Priority); Default until set. On its own
    /// connection (OwnConnection) a load made obsolete is cancelled on the server too.
    void setPriority(db::DatabaseSession::Priority priority) { m_priority = priority; }
    bool showUtc() const { return m_showUtc; }
    /// True from load() until its result (or error) arrived.
    bool isLoading() const { return m_loading; }
    /// The result shown (empty before the first load).
    const db::ResultSet &result() const { return m_result; }
    /// The raw text of result column `name` in `row` (null for NULL or a missing column).
    QString text(int row, const QString &name) const;
    /// The result column read by table column `column`.
    QString resultColumnName(int column) const;
    /// The table column showing result column `name`, or -1.
    int columnOf(const QString &name) const { return m_columns.columnOf(name); }
    /// The first row whose result column `name` has the text `value`, or -1.
    int rowOf(const QString &name, const QString &value) const;
    /// Rows as JSON objects with raw values (Ctrl+C).
    QJsonArray rowsAsJson(const QList<int> &rows) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

Q_SIGNALS:
    void loadingChanged(bool loading);
    /// A new result replaced the rows.
    void loaded();
    void failed(const redrive::db::DbError &error);

protected:
    /// Runs `statement` with `params` through the session; its rows replace the current ones.
    /// The same statement and parameters as the load on its way: runs once more after it
    /// instead (see the class comment).
    void load(db::Statement statement, const db::QueryParams &params);
    db::DatabaseSession *session() const { return m_session; }

private:
    db::DatabaseSession *m_session;
    ResultColumnSet m_columns;
    db::ResultSet m_result;
    quint64 m_generation = 0;
    db::DatabaseSession::Priority m_priority = db::DatabaseSession::Priority::Default;
    quint64 m_request = 0; ///< the session's id of the load on its way, 0 when none
    db::QueryParams m_params; ///< the parameters of the load on its way
    db::Statement m_statement {}; ///< the statement of the load on its way
    bool m_again = false; ///< the load on its way is to run once more when it ends
    bool m_loading = false;
    bool m_showUtc = false;
};

} // namespace redrive
