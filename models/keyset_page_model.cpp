// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/keyset_page_model.h"

#include "models/db/database_session.h"

#include <QFutureWatcher>
#include <QHash>
#include <QJsonObject>
#include <QtConcurrent/QtConcurrentRun>
#include <memory>
#include <utility>

namespace redrive {

namespace {

// The frozen pass's transaction and cursor (docs/architecture.md#paging-a-frozen-pass). Fixed
// text; the keys statement comes from resources/sql/ and its values are bound as parameters of
// the DECLARE (FETCH takes no parameters: its counts are the model's constants).
const QByteArray kBeginPass = QByteArrayLiteral("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
const QByteArray kCommitPass = QByteArrayLiteral("COMMIT");
const QByteArray kRollbackPass = QByteArrayLiteral("ROLLBACK");

QByteArray declarePass(db::Statement keys)
{
    return QByteArrayLiteral("DECLARE redrive_pass NO SCROLL CURSOR FOR\n")
        + db::statementSql(keys);
}

QByteArray fetchPass(int rows)
{
    return QByteArrayLiteral("FETCH FORWARD ") + QByteArray::number(rows)
        + QByteArrayLiteral(" FROM redrive_pass");
}

// A JSON value of a result column as a number, whether it was typed (Integer) or left text.
qint64 integerOf(const QJsonValue &value)
{
    return value.isString() ? value.toString().toLongLong() : value.toInteger();
}

} // namespace

KeysetPageModel::KeysetPageModel(db::DatabaseSession *session, db::Statement statement,
                                 QList<KeysetKey> keys, ResultColumnSet columns, int pageSize,
                                 QObject *parent)
    : QAbstractTableModel(parent)
    , m_session(session)
    , m_statement(statement)
    , m_columns(std::move(columns))
    , m_pager(std::move(keys), pageSize)
{ }

void KeysetPageModel::setStatement(db::Statement statement, QList<KeysetKey> keys)
{
    m_statement = statement;
    m_pager.setKeys(std::move(keys));
}

void KeysetPageModel::reload()
{
    m_started = true;
    const bool wasLoading = m_pager.isPending();
    // Whatever is still on its way is for the old filters: withdraw it rather than wait for it.
    for (quint64 *request : { &m_pageRequest, &m_totalRequest }) {
        if (*request != 0)
            m_session->cancelRequest(std::exchange(*request, 0));
    }
    // A pass still being read is abandoned: its requests withdrawn (the one running cancelled on
    // the server) and its transaction rolled back before the new pass begins on that connection.
    endPass(false);
    beginResetModel();
    m_pager.reset();
    m_rereadWanted = false;
    m_fetchWanted = false;
    endResetModel();
    if (wasLoading)
        Q_EMIT loadingChanged(false);
    if (m_frozenPass)
        requestFrozenKeys();
    else
        requestPage();
    if (m_count)
        requestTotal();
}

void KeysetPageModel::recount()
{
    if (!m_started || !m_count)
        return;
    if (m_totalRequest != 0)
        m_session->cancelRequest(std::exchange(m_totalRequest, 0));
    requestTotal();
}

void KeysetPageModel::setShowUtc(bool utc)
{
    if (utc == m_showUtc)
        return;
    m_showUtc = utc;
    if (rowCount() > 0)
        Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, columnCount() - 1),
                           { Qt::DisplayRole, Qt::ToolTipRole });
}

void KeysetPageModel::requestFrozenKeys()
{
    db::QueryParams params;
    appendFilterParams(params);
    const quint64 generation = m_pager.beginFreeze(m_frozenPass->keyColumns);
    Q_EMIT loadingChanged(true);
    // One snapshot for the whole pass, on the model's own connection (the interactive one's other
    // requests must not see an old snapshot). The first page's keys come at once (the cursor's
    // plan starts fast); the rest is read after the first page is shown, and the transaction
    // ends as soon as the last key is in.
    m_passOpen = true;
    passExecute(kBeginPass, {}, generation, {});
    passExecute(declarePass(m_frozenPass->keys), params, generation, {});
    passExecute(fetchPass(m_pager.pageSize()), {}, generation,
                [this, generation](const db::ResultSet &keys) {
                    const bool complete = keys.rowCount() < m_pager.pageSize();
                    if (complete)
                        endPass(true);
                    m_pager.appendFrozen(generation, keys, complete);
                    if (m_pager.isAtEnd()) {
                        Q_EMIT loadingChanged(false);
                        Q_EMIT pageLoaded(0);
                        return;
                    }
                    requestPage();
                });
}

void KeysetPageModel::requestFrozenChunk(quint64 generation)
{
    passExecute(fetchPass(kFreezeChunkRows), {}, generation,
                [this, generation](const db::ResultSet &keys) {
                    const bool complete = keys.rowCount() < kFreezeChunkRows;
                    if (complete)
                        endPass(true);
                    m_pager.appendFrozen(generation, keys, complete);
                    if (!complete)
                        requestFrozenChunk(generation);
                    if (!m_fetchWanted)
                        return;
                    if (m_pager.canRequest()) {
                        m_fetchWanted = false;
                        requestPage();
                    } else if (m_pager.isAtEnd()) {
                        m_fetchWanted = false; // the page waited for holds nothing more
                        Q_EMIT loadingChanged(false);
                        Q_EMIT pageLoaded(0);
                    }
                });
}

void KeysetPageModel::passExecute(const QByteArray &sql, const db::QueryParams &params,
                                  quint64 generation,
                                  std::function<void(const db::ResultSet &)> onRows)
{
    auto id = std::make_shared<quint64>(0);
    *id = m_session->execute(
        sql, params, this,
        [this, generation, id,
         onRows = std::move(onRows)](const db::DbExpected<db::ResultSet> &result) {
            m_passRequests.removeOne(*id);
            if (!m_pager.isCurrent(generation))
                return; // reloaded meanwhile: drop it
            if (!result) {
                failPass(generation, result.error());
                return;
            }
            if (onRows)
                onRows(result.value());
        },
        db::DatabaseSession::Priority::OwnConnection);
    m_passRequests.append(*id);
}

void KeysetPageModel::endPass(bool complete)
{
    for (quint64 request : std::exchange(m_passRequests, {}))
        m_session->abortRequest(request);
    if (!std::exchange(m_passOpen, false))
        return;
    m_session->execute(
        complete ? kCommitPass : kRollbackPass, {}, this,
        [](const db::DbExpected<db::ResultSet> &) {
            // Nothing to show: a failed ROLLBACK leaves no transaction either, and the next
            // pass's BEGIN reports a connection that is gone.
        },
        db::DatabaseSession::Priority::OwnConnection);
}

void KeysetPageModel::failPass(quint64 generation, const db::DbError &error)
{
    endPass(false);
    const bool pageOnItsWay = m_pageRequest != 0;
    m_pager.fail(generation);
    if (pageOnItsWay)
        m_session->cancelRequest(std::exchange(m_pageRequest, 0));
    m_fetchWanted = false;
    Q_EMIT loadingChanged(false);
    Q_EMIT failed(error);
}

void KeysetPageModel::rereadShown()
{
    if (!m_started)
        return;
    if (!m_frozenPass) {
        reload();
        return;
    }
    if (!m_pager.isFrozen())
        return; // the pass is being read now: its rows will be current
    if (m_pager.isPending()) {
        m_rereadWanted = true;
        return;
    }
    if (m_pager.consumed() == 0) {
        Q_EMIT rowsReread();
        return;
    }
    requestReread();
}

void KeysetPageModel::requestReread()
{
    m_rereadWanted = false;
    db::QueryParams params;
    const quint64 generation = m_pager.beginReread(params);
    Q_EMIT loadingChanged(true);
    m_pageRequest = m_session->execute(
        db::statementSql(m_frozenPass->rows), params, this,
        [this, generation](const db::DbExpected<db::ResultSet> &rows) {
            if (!m_pager.isCurrent(generation))
                return; // reloaded meanwhile: drop it
            m_pageRequest = 0;
            if (!rows) {
                m_pager.abandonReread(generation);
                Q_EMIT loadingChanged(false);
                Q_EMIT failed(rows.error());
                return;
            }
            // The same rows in the same order: changed in place, the view keeps its place as it
            // is. Otherwise (a row deleted or no longer visible) a reset, after which
            // ResultTableView puts selection, current row and scroll back by the row key.
            bool same = rows->rowCount() == m_pager.rowCount();
            for (int row = 0; same && row < rows->rowCount(); ++row) {
                for (const KeysetKey &key : std::as_const(m_frozenPass->keyColumns)) {
                    if (rows->text(row, key.name) != text(row, key.name)) {
                        same = false;
                        break;
                    }
                }
            }
            if (same) {
                m_pager.acceptReread(generation, rows.value());
                if (rowCount() > 0)
                    Q_EMIT dataChanged(index(0, 0), index(rowCount() - 1, columnCount() - 1));
            } else {
                beginResetModel();
                if (m_pager.rowCount() == 0 && rows->rowCount() > 0)
                    m_columns.resolve(rows.value());
                m_pager.acceptReread(generation, rows.value());
                endResetModel();
            }
            Q_EMIT loadingChanged(false);
            Q_EMIT rowsReread();
            if (m_rereadWanted)
                requestReread(); // another change arrived while this one was on its way
        });
}

void KeysetPageModel::requestPage()
{
    // A list with a frozen pass pages only once the pass's keys are in (a view may ask from
    // inside reload()'s model reset, before they were asked for).
    if (!m_pager.canRequest() || (m_frozenPass && !m_pager.isFrozen()))
        return;
    db::QueryParams params;
    if (!m_pager.isFrozen())
        appendFilterParams(params);
    const quint64 generation = m_pager.beginRequest(params);
    const db::Statement statement = m_pager.isFrozen() ? m_frozenPass->rows : m_statement;
    Q_EMIT loadingChanged(true);
    m_pageRequest
        = m_session->execute(db::statementSql(statement), params, this,
                             [this, generation](const db::DbExpected<db::ResultSet> &page) {
                                 if (!m_pager.isCurrent(generation))
                                     return; // reloaded meanwhile: drop it
                                 m_pageRequest = 0;
                                 // Views and testers may call fetchMore() from inside the row
                                 // signals: the request counts as pending until the rows are in.
                                 if (!page) {
                                     m_pager.fail(generation);
                                     Q_EMIT loadingChanged(false);
                                     Q_EMIT failed(page.error());
                                     return;
                                 }
                                 const int first = m_pager.rowCount();
                                 const int n = page->rowCount();
                                 if (first == 0 && n > 0)
                                     m_columns.resolve(page.value());
                                 if (n > 0)
                                     beginInsertRows({}, first, first + n - 1);
                                 m_pager.accept(generation, page.value());
                                 if (n > 0)
                                     endInsertRows();
                                 Q_EMIT loadingChanged(isLoading());
                                 Q_EMIT pageLoaded(n);
                                 if (!m_pager.isCurrent(generation))
                                     return; // a receiver reloaded
                                 // The first page of a pass is shown: now read the rest of its
                                 // keys (they did not compete with the first page).
                                 if (first == 0 && m_pager.isFrozen() && !m_pager.isFrozenComplete()
                                     && m_passOpen && m_passRequests.isEmpty())
                                     requestFrozenChunk(generation);
                                 if (m_rereadWanted && !m_pager.isPending())
                                     requestReread();
                             });
}

void KeysetPageModel::setTotal(ListTotal total)
{
    m_total = total;
    Q_EMIT totalChanged(m_total.rows, m_total.exact);
}

void KeysetPageModel::requestTotal()
{
    setTotal({});
    db::QueryParams params;
    appendFilterParams(params);
    db::QueryParams capped = params;
    capped.addBigInt(m_count->cap + 1);
    const quint64 generation = m_pager.generation();
    const CountSpec spec = *m_count;
    // Counts are background work: the page the operator asked for goes first.
    m_totalRequest = m_session->execute(
        db::statementSql(spec.count), capped, this,
        [this, generation, params, spec](const db::DbExpected<db::ResultSet> &count) {
            if (m_pager.isCurrent(generation))
                m_totalRequest = 0;
            if (!m_pager.isCurrent(generation) || !count || count->rowCount() < 1)
                return; // stale, or failed: the page request reports errors
            const ListTotal counted = ListTotal::fromCount(
                count->bigInt(0, QStringLiteral("count")).value_or(0), spec.cap);
            if (counted.exact || !spec.estimate) {
                setTotal(counted);
                return;
            }
            // Too many to count on every filter change: ask the planner.
            m_totalRequest = m_session->execute(
                db::statementSql(*spec.estimate), params, this,
                [this, generation, spec](const db::DbExpected<db::ResultSet> &plan) {
                    if (m_pager.isCurrent(generation))
                        m_totalRequest = 0;
                    if (m_pager.isCurrent(generation) && plan)
                        setTotal(ListTotal::fromEstimate(plan.value(), spec.cap));
                },
                db::DatabaseSession::Priority::Background);
        },
        db::DatabaseSession::Priority::Background);
}

QString KeysetPageModel::text(int row, const QString &name) const
{
    int offset = 0;
    const db::ResultSet *page = pageFor(row, &offset);
    return page ? page->text(offset, name) : QString();
}

qint64 KeysetPageModel::bigInt(int row, const QString &name) const
{
    int offset = 0;
    const db::ResultSet *page = pageFor(row, &offset);
    return page ? page->bigInt(offset, name).value_or(0) : 0;
}

int KeysetPageModel::rowOf(const QString &name, qint64 value) const
{
    for (int row = 0; row < rowCount(); ++row) {
        if (bigInt(row, name) == value)
            return row;
    }
    return -1;
}

QJsonArray KeysetPageModel::rowsAsJson(const QList<int> &rows) const
{
    QJsonArray out;
    for (int row : rows) {
        int offset = 0;
        if (const db::ResultSet *page = pageFor(row, &offset))
            out.append(m_columns.rowJson(*page, offset));
    }
    return out;
}

qint64 KeysetPageModel::cutBytes(int row, const QString &column) const
{
    if (!m_wholeValues)
        return 0;
    qint64 bytes = 0;
    for (const QString &c : m_wholeValues->columns) {
        if (column.isEmpty() || column == c)
            bytes += bigInt(row, c + QLatin1String("_cut_bytes"));
    }
    return bytes;
}

void KeysetPageModel::wholeRowsAsJson(
    const QList<int> &rows, QObject *context,
    std::function<void(const db::DbExpected<QJsonArray> &)> done) const
{
    QJsonArray json = rowsAsJson(rows);
    if (!m_wholeValues) {
        done(json);
        return;
    }
    const WholeValues whole = *m_wholeValues;
    // Each row's key as the server sent it, and one array per key column of the rows cut short.
    QList<QStringList> rowKeys;
    QList<QStringList> keyArrays(whole.keys.size());
    for (int row : rows) {
        QStringList key;
        for (const QString &k : whole.keys)
            key.append(text(row, k));
        if (cutBytes(row) > 0) {
            for (qsizetype k = 0; k < key.size(); ++k)
                keyArrays[k].append(key.at(k));
        }
        rowKeys.append(key);
    }
    // The rows whole: the values read again in place of their prefixes, each c_cut_bytes left out
    // unless c is still cut (its row is gone). `answer` holds the rows read again by key.
    auto complete = [json, whole, rowKeys](const db::ResultSet *answer) mutable {
        QHash<QStringList, int> byKey;
        QList<int> keyColumns;
        for (const QString &k : whole.keys)
            keyColumns.append(answer ? answer->columnIndex(k) : -1);
        for (int r = 0; answer && r < answer->rowCount(); ++r) {
            QStringList key;
            for (int column : std::as_const(keyColumns))
                key.append(answer->text(r, column));
            byKey.insert(key, r);
        }
        for (qsizetype i = 0; i < json.size(); ++i) {
            QJsonObject row = json.at(i).toObject();
            const auto found = byKey.constFind(rowKeys.value(i));
            for (const QString &c : whole.columns) {
                const QString cutName = c + QLatin1String("_cut_bytes");
                const bool cut = integerOf(row.value(cutName)) > 0;
                if (cut && found != byKey.constEnd()) {
                    const int column = answer->columnIndex(c);
                    row.insert(c,
                               answer->isNull(*found, column)
                                   ? QJsonValue(QJsonValue::Null)
                                   : QJsonValue(answer->text(*found, column)));
                }
                if (!cut || found != byKey.constEnd())
                    row.remove(cutName);
            }
            json.replace(i, row);
        }
        return json;
    };
    if (keyArrays.isEmpty() || keyArrays.constFirst().isEmpty()) {
        done(complete(nullptr));
        return;
    }
    db::QueryParams params;
    for (const QStringList &values : std::as_const(keyArrays))
        params.addTextArray(values);
    // The whole values may be tens of megabytes: they are decoded and put into the rows on a
    // pool thread, never on the GUI thread (the result is read-only and may be read there).
    m_session->execute(
        db::statementSql(whole.statement), params, context,
        [complete, context,
         done = std::move(done)](const db::DbExpected<db::ResultSet> &result) mutable {
            if (!result) {
                done(result.error());
                return;
            }
            auto *watcher = new QFutureWatcher<QJsonArray>(context);
            QObject::connect(watcher, &QFutureWatcher<QJsonArray>::finished, context,
                             [watcher, done = std::move(done)] {
                                 watcher->deleteLater();
                                 done(watcher->result());
                             });
            watcher->setFuture(QtConcurrent::run(
                [complete, rows = result.value()]() mutable { return complete(&rows); }));
        });
}

int KeysetPageModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : m_pager.rowCount();
}

int KeysetPageModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : m_columns.size();
}

QVariant KeysetPageModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    int offset = 0;
    const db::ResultSet *page = pageFor(index.row(), &offset);
    if (!page)
        return {};
    return m_columns.data(*page, offset, index.column(), role, m_showUtc);
}

QVariant KeysetPageModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Horizontal && (role == Qt::DisplayRole || role == kColumnNameRole))
        return m_columns.header(section, role);
    return QAbstractTableModel::headerData(section, orientation, role);
}

bool KeysetPageModel::canFetchMore(const QModelIndex &parent) const
{
    // A page whose keys are still being read counts: fetchMore() then waits for them.
    return !parent.isValid() && m_started && !m_pager.isPending() && !m_pager.isAtEnd()
        && !m_fetchWanted && (!m_frozenPass || m_pager.isFrozen());
}

void KeysetPageModel::fetchMore(const QModelIndex &parent)
{
    if (parent.isValid() || !m_started)
        return;
    if (m_frozenPass && m_pager.waitsForFrozen() && !m_pager.isPending()) {
        if (!std::exchange(m_fetchWanted, true))
            Q_EMIT loadingChanged(true); // the next chunk of the pass's keys asks for it
        return;
    }
    requestPage();
}

} // namespace redrive
