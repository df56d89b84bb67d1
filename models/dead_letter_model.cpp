// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/dead_letter_model.h"

#include "models/db/database_session.h"
#include "models/db/sql_statement.h"
#include "models/display_format.h"
#include "models/logging.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QTimeZone>

namespace redrive {

using db::DbExpected;
using db::QueryParams;
using db::ResultSet;
using db::Statement;

namespace {

// Result columns of fragments/dead_letter_columns.sql.
enum ResultColumn {
    RId,
    RDeadAt,
    RQueue,
    RKind,
    RStatus,
    RErrorClass,
    RErrorCode,
    RLastError,
    RAttempts,
    RIdempotencyKey,
    RFingerprint,
    RVersion,
    RClaimedBy,
    RReason,
    RJobRef,
    RAgeSeconds
};

Statement statementFor(DeadLetterModel::Sort sort)
{
    switch (sort) {
    case DeadLetterModel::Sort::NewestFirst:
        return Statement::DeadLetterPageNewest;
    case DeadLetterModel::Sort::OldestFirst:
        return Statement::DeadLetterPageOldest;
    case DeadLetterModel::Sort::ByStatus:
        return Statement::DeadLetterPageByStatus;
    case DeadLetterModel::Sort::ByQueue:
        return Statement::DeadLetterPageByQueue;
    case DeadLetterModel::Sort::ByKind:
        return Statement::DeadLetterPageByKind;
    case DeadLetterModel::Sort::ByErrorClass:
        return Statement::DeadLetterPageByErrorClass;
    }
    return Statement::DeadLetterPageNewest;
}

int sortKeyColumn(DeadLetterModel::Sort sort)
{
    switch (sort) {
    case DeadLetterModel::Sort::ByStatus:
        return RStatus;
    case DeadLetterModel::Sort::ByQueue:
        return RQueue;
    case DeadLetterModel::Sort::ByKind:
        return RKind;
    case DeadLetterModel::Sort::ByErrorClass:
        return RErrorClass;
    default:
        return -1;
    }
}

} // namespace

DeadLetterModel::DeadLetterModel(db::DatabaseSession *session, QObject *parent)
    : QAbstractTableModel(parent)
    , m_session(session)
{ }

QString DeadLetterModel::formatTime(const QDateTime &utc, bool showUtc)
{
    return display::time(utc, showUtc);
}

QString DeadLetterModel::formatAge(qint64 seconds)
{
    return display::age(seconds);
}

void DeadLetterModel::setFilter(const DeadLetterFilter &filter)
{
    m_filter = filter;
    m_active = true;
    reload();
}

void DeadLetterModel::reload()
{
    ++m_generation;
    beginResetModel();
    m_pages.clear();
    m_rows = 0;
    m_atEnd = false;
    m_pendingPage = false;
    endResetModel();
    m_total = -1;
    Q_EMIT totalChanged(-1, false);
    Q_EMIT newerCountChanged(0);
    if (!m_active)
        return; // nothing asked for yet (a view may set its sort before the first filter)
    requestPage();
    requestTotal();
}

void DeadLetterModel::setShowUtc(bool utc)
{
    if (utc == m_showUtc)
        return;
    m_showUtc = utc;
    if (m_rows > 0)
        Q_EMIT dataChanged(index(0, DeadAt), index(m_rows - 1, DeadAt), { Qt::DisplayRole });
}

void DeadLetterModel::requestPage()
{
    if (m_pendingPage || m_atEnd)
        return;
    QueryParams params;
    m_filter.appendParams(params);
    int keyOffset = 0;
    const ResultSet *last = m_rows > 0 ? pageFor(m_rows - 1, &keyOffset) : nullptr;
    if (last) {
        params.addTimestampText(last->raw(keyOffset, RDeadAt));
        params.addBigInt(last->bigInt(keyOffset, RId).value_or(0));
    } else {
        params.addNull(db::ParamType::TimestampTz);
        params.addNull(db::ParamType::BigInt);
    }
    params.addInt(kPageSize);
    const int keyColumn = sortKeyColumn(m_sort);
    if (keyColumn >= 0) {
        if (last)
            params.addText(last->text(keyOffset, keyColumn));
        else
            params.addNull(db::ParamType::Text);
    }
    m_pendingPage = true;
    Q_EMIT loadingChanged(true);
    const quint64 generation = m_generation;
    m_session->execute(db::statementSql(statementFor(m_sort)), params, this,
                       [this, generation](const DbExpected<ResultSet> &page) {
                           if (generation != m_generation)
                               return; // the filter changed meanwhile: drop it
                           // Views and testers may call fetchMore() from inside the row
                           // signals: the request counts as pending until the rows are in.
                           if (!page) {
                               m_atEnd = true;
                               m_pendingPage = false;
                               Q_EMIT loadingChanged(false);
                               Q_EMIT failed(page.error());
                               return;
                           }
                           const int n = page->rowCount();
                           if (n < kPageSize)
                               m_atEnd = true;
                           if (n > 0) {
                               beginInsertRows({}, m_rows, m_rows + n - 1);
                               m_pages.append(page.value());
                               m_rows += n;
                               endInsertRows();
                           }
                           m_pendingPage = false;
                           Q_EMIT loadingChanged(false);
                       });
}

void DeadLetterModel::requestTotal()
{
    QueryParams params;
    m_filter.appendParams(params);
    QueryParams capped = params;
    capped.addBigInt(kExactCountCap + 1);
    const quint64 generation = m_generation;
    m_session->execute(db::statementSql(Statement::DeadLetterCount), capped, this,
                       [this, generation, params](const DbExpected<ResultSet> &count) {
                           if (generation != m_generation || !count)
                               return;
                           const qint64 n = count->bigInt(0, 0).value_or(0);
                           if (n <= kExactCountCap) {
                               m_total = n;
                               m_totalExact = true;
                               Q_EMIT totalChanged(m_total, true);
                               return;
                           }
                           // Too many to count on every filter change: ask the planner.
                           m_session->execute(
                               db::statementSql(Statement::DeadLetterEstimate), params, this,
                               [this, generation](const DbExpected<ResultSet> &plan) {
                                   if (generation != m_generation || !plan)
                                       return;
                                   const QJsonArray doc
                                       = QJsonDocument::fromJson(plan->raw(0, 0)).array();
                                   const double rows = doc.first()
                                                           .toObject()
                                                           .value(QStringLiteral("Plan"))
                                                           .toObject()
                                                           .value(QStringLiteral("Plan Rows"))
                                                           .toDouble();
                                   m_total = std::max<qint64>(kExactCountCap + 1, qint64(rows));
                                   m_totalExact = false;
                                   Q_EMIT totalChanged(m_total, false);
                               });
                       });
}

void DeadLetterModel::checkForNewer()
{
    if (m_sort != Sort::NewestFirst || m_rows == 0)
        return;
    QueryParams params;
    m_filter.appendParams(params);
    params.addTimestampText(m_pages.first().raw(0, RDeadAt));
    params.addBigInt(m_pages.first().bigInt(0, RId).value_or(0));
    const quint64 generation = m_generation;
    m_session->execute(db::statementSql(Statement::DeadLetterNewerCount), params, this,
                       [this, generation](const DbExpected<ResultSet> &count) {
                           if (generation == m_generation && count)
                               Q_EMIT newerCountChanged(count->integer(0, 0).value_or(0));
                       });
}

const ResultSet *DeadLetterModel::pageFor(int row, int *offset) const
{
    if (row < 0 || row >= m_rows)
        return nullptr;
    const int page = row / kPageSize; // every page but the last holds kPageSize rows
    *offset = row % kPageSize;
    return &m_pages.at(page);
}

qint64 DeadLetterModel::idAt(int row) const
{
    int offset = 0;
    const ResultSet *page = pageFor(row, &offset);
    return page ? page->bigInt(offset, RId).value_or(0) : 0;
}

int DeadLetterModel::rowCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : m_rows;
}

int DeadLetterModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

int DeadLetterModel::columnIndexInResult(Column column) const
{
    switch (column) {
    case DeadAt:
        return RDeadAt;
    case Queue:
        return RQueue;
    case Kind:
        return RKind;
    case Status:
        return RStatus;
    case ErrorClass:
        return RErrorClass;
    case ErrorCode:
        return RErrorCode;
    case LastError:
        return RLastError;
    case Attempts:
        return RAttempts;
    case IdempotencyKey:
        return RIdempotencyKey;
    case FailureGroup:
        return RFingerprint;
    case Age:
        return RAgeSeconds;
    case Id:
        return RId;
    case ColumnCount:
        break;
    }
    return -1;
}

QVariant DeadLetterModel::data(const QModelIndex &index, int role) const
{
    int offset = 0;
    const ResultSet *page = index.isValid() ? pageFor(index.row(), &offset) : nullptr;
    if (!page)
        return {};
    const auto column = Column(index.column());
    const int rc = columnIndexInResult(column);
    switch (role) {
    case Qt::DisplayRole:
        switch (column) {
        case DeadAt:
            return formatTime(page->timestamp(offset, RDeadAt), m_showUtc);
        case Age:
            return formatAge(page->bigInt(offset, RAgeSeconds).value_or(0));
        case FailureGroup:
            return page->text(offset, RFingerprint).left(10);
        case Attempts:
            return page->integer(offset, RAttempts).value_or(0);
        case Id:
            return page->bigInt(offset, RId).value_or(0);
        default:
            return page->text(offset, rc);
        }
    case Qt::ToolTipRole:
        if (column == LastError || column == IdempotencyKey || column == FailureGroup)
            return page->text(offset, rc);
        if (column == DeadAt)
            return formatTime(page->timestamp(offset, RDeadAt), !m_showUtc);
        return {};
    case Qt::TextAlignmentRole:
        if (column == Attempts || column == Age || column == Id)
            return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case IdRole:
        return page->bigInt(offset, RId).value_or(0);
    case VersionRole:
        return page->integer(offset, RVersion).value_or(0);
    case FingerprintRole:
        return page->text(offset, RFingerprint);
    case DeadAtRole:
        return page->timestamp(offset, RDeadAt);
    case SortValueRole:
        return page->text(offset, rc);
    default:
        return {};
    }
}

QVariant DeadLetterModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return QAbstractTableModel::headerData(section, orientation, role);
    switch (Column(section)) {
    case DeadAt:
        return tr("Dead at");
    case Queue:
        return tr("Queue");
    case Kind:
        return tr("Kind");
    case Status:
        return tr("Status");
    case ErrorClass:
        return tr("Error class");
    case ErrorCode:
        return tr("Error code");
    case LastError:
        return tr("Last error");
    case Attempts:
        return tr("Attempts");
    case IdempotencyKey:
        return tr("Idempotency key");
    case FailureGroup:
        return tr("Failure group");
    case Age:
        return tr("Age");
    case Id:
        return tr("Id");
    case ColumnCount:
        break;
    }
    return {};
}

bool DeadLetterModel::canFetchMore(const QModelIndex &parent) const
{
    return m_active && !parent.isValid() && !m_atEnd && !m_pendingPage;
}

void DeadLetterModel::fetchMore(const QModelIndex &parent)
{
    if (!parent.isValid())
        requestPage();
}

void DeadLetterModel::sort(int column, Qt::SortOrder order)
{
    Sort next = m_sort;
    switch (Column(column)) {
    case DeadAt:
    case Age:
        // Newest first is "descending" by time, but "ascending" by age.
        next = (column == DeadAt) == (order == Qt::DescendingOrder) ? Sort::NewestFirst
                                                                    : Sort::OldestFirst;
        break;
    case Status:
        next = Sort::ByStatus;
        break;
    case Queue:
        next = Sort::ByQueue;
        break;
    case Kind:
        next = Sort::ByKind;
        break;
    case ErrorClass:
        next = Sort::ByErrorClass;
        break;
    default:
        return; // not served by an index: keep the order
    }
    if (next == m_sort)
        return;
    m_sort = next;
    reload();
}

QJsonArray DeadLetterModel::rowsAsJson(const QList<int> &rows) const
{
    QJsonArray out;
    for (int row : rows) {
        int offset = 0;
        const ResultSet *page = pageFor(row, &offset);
        if (!page)
            continue;
        QJsonObject o;
        for (int c = 0; c < page->columnCount(); ++c) {
            const QString name = page->columnName(c);
            if (page->isNull(offset, c))
                o.insert(name, QJsonValue::Null);
            else if (c == RId || c == RAttempts || c == RVersion || c == RAgeSeconds)
                o.insert(name, page->bigInt(offset, c).value_or(0));
            else if (c == RDeadAt)
                o.insert(name, page->timestamp(offset, c).toString(Qt::ISODateWithMs));
            else
                o.insert(name, page->text(offset, c));
        }
        out.append(o);
    }
    return out;
}

} // namespace redrive
