// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/dead_letter_model.h"

#include "models/db/database_session.h"

namespace redrive {

namespace {

using F = ResultColumn::Format;

// The columns of fragments/dead_letter_columns.sql the list shows, in the order shown; views
// find them by name (DeadLetterModel::column()).
ResultColumnSet columns()
{
    return ResultColumnSet(
        {
            { QStringLiteral("dead_at"), DeadLetterModel::tr("Dead at"), F::Time },
            { QStringLiteral("queue"), DeadLetterModel::tr("Queue") },
            { QStringLiteral("kind"), DeadLetterModel::tr("Kind") },
            // What the queue adds to the status (read contract column state_note, e.g. a
            // pg-boss 10 failure moved to its archive) follows it: "open (archived)", also as
            // the tooltip when the column is too narrow.
            { QStringLiteral("status"), DeadLetterModel::tr("Status"), F::Text,
              [](const ResultCell &cell, int role) -> std::optional<QVariant> {
                  const QString note = cell.text(QStringLiteral("state_note"));
                  if ((role != Qt::DisplayRole && role != Qt::ToolTipRole) || note.isEmpty()
                      || cell.isNull())
                      return std::nullopt;
                  return DeadLetterModel::tr("%1 (%2)").arg(cell.text(), note);
              } },
            // The payment a dead letter is about and what was charged (docs/domain.md#money):
            // empty when it has none. Not sortable: no index serves an order by amount.
            { QStringLiteral("payment_ref"), DeadLetterModel::tr("Payment"),
              ResultColumn::Format::Identifier },
            { QStringLiteral("amount_minor"), DeadLetterModel::tr("Amount"), F::Integer,
              ResultColumn::moneyIn(QStringLiteral("currency")) },
            { QStringLiteral("error_class"), DeadLetterModel::tr("Error class") },
            { QStringLiteral("error_code"), DeadLetterModel::tr("Error code") },
            // Its first line, " …" when there is more; the page sends the first 4,096
            // characters and Ctrl+C reads the rest (docs/architecture.md#long-values-in-lists).
            { QStringLiteral("last_error"), DeadLetterModel::tr("Last error"), F::OneLine },
            { QStringLiteral("attempts"), DeadLetterModel::tr("Attempts"), F::Integer },
            { QStringLiteral("idempotency_key"), DeadLetterModel::tr("Idempotency key"),
              ResultColumn::Format::Identifier },
            { QStringLiteral("fingerprint"), DeadLetterModel::tr("Failure group"), F::ShortHash },
            { QStringLiteral("age_seconds"), DeadLetterModel::tr("Age"), F::AgeSeconds },
            { QStringLiteral("id"), DeadLetterModel::tr("Id"), F::Integer },
            // The queue's own job id (pg-boss uuid, graphile-worker bigint, native job id): the
            // one its library's tools and logs use, shown first; Redrive's dead-letter id (for
            // graphile-worker 2^62 + the job id) stays in the Id column.
            { QStringLiteral("job_ref"), DeadLetterModel::tr("Job id") },
        },
        {
            { DeadLetterModel::IdRole, QStringLiteral("id"), JsonValueKind::Integer },
            { DeadLetterModel::VersionRole, QStringLiteral("version"), JsonValueKind::Integer },
            { DeadLetterModel::FingerprintRole, QStringLiteral("fingerprint") },
            { DeadLetterModel::DeadAtRole, QStringLiteral("dead_at"), JsonValueKind::Timestamp },
        },
        { { QStringLiteral("version"), JsonValueKind::Integer } });
}

db::Statement statementFor(DeadLetterModel::Sort sort)
{
    switch (sort) {
    case DeadLetterModel::Sort::NewestFirst:
        return db::Statement::DeadLetterPageNewest;
    case DeadLetterModel::Sort::OldestFirst:
        return db::Statement::DeadLetterPageOldest;
    case DeadLetterModel::Sort::ByStatus:
        return db::Statement::DeadLetterPageByStatus;
    case DeadLetterModel::Sort::ByQueue:
        return db::Statement::DeadLetterPageByQueue;
    case DeadLetterModel::Sort::ByKind:
        return db::Statement::DeadLetterPageByKind;
    case DeadLetterModel::Sort::ByErrorClass:
        return db::Statement::DeadLetterPageByErrorClass;
    }
    return db::Statement::DeadLetterPageNewest;
}

// The frozen pass of each order (docs/architecture.md#paging-a-frozen-pass): its ids in that
// order, then pages of rows by id.
KeysetPageModel::FrozenPass frozenPassFor(DeadLetterModel::Sort sort)
{
    db::Statement keys = db::Statement::DeadLetterKeysNewest;
    switch (sort) {
    case DeadLetterModel::Sort::NewestFirst:
        keys = db::Statement::DeadLetterKeysNewest;
        break;
    case DeadLetterModel::Sort::OldestFirst:
        keys = db::Statement::DeadLetterKeysOldest;
        break;
    case DeadLetterModel::Sort::ByStatus:
        keys = db::Statement::DeadLetterKeysByStatus;
        break;
    case DeadLetterModel::Sort::ByQueue:
        keys = db::Statement::DeadLetterKeysByQueue;
        break;
    case DeadLetterModel::Sort::ByKind:
        keys = db::Statement::DeadLetterKeysByKind;
        break;
    case DeadLetterModel::Sort::ByErrorClass:
        keys = db::Statement::DeadLetterKeysByErrorClass;
        break;
    }
    return { keys,
             db::Statement::DeadLetterRows,
             { { QStringLiteral("id"), db::ParamType::BigInt } } };
}

// (dead_at, id), and for the sorts by a column that column's value after the page size
// (resources/sql/dead_letter_page_by_column.sql).
QList<KeysetKey> keysFor(DeadLetterModel::Sort sort)
{
    QList<KeysetKey> keys = { { QStringLiteral("dead_at"), db::ParamType::TimestampTz },
                              { QStringLiteral("id"), db::ParamType::BigInt } };
    const char *column = nullptr;
    switch (sort) {
    case DeadLetterModel::Sort::ByStatus:
        column = "status";
        break;
    case DeadLetterModel::Sort::ByQueue:
        column = "queue";
        break;
    case DeadLetterModel::Sort::ByKind:
        column = "kind";
        break;
    case DeadLetterModel::Sort::ByErrorClass:
        column = "error_class";
        break;
    default:
        return keys;
    }
    keys.append({ QString::fromLatin1(column), db::ParamType::Text, true });
    return keys;
}

} // namespace

DeadLetterModel::DeadLetterModel(db::DatabaseSession *session, QObject *parent)
    : KeysetPageModel(session, statementFor(Sort::NewestFirst), keysFor(Sort::NewestFirst),
                      columns(), kPageSize, parent)
{
    setCount({ db::Statement::DeadLetterCount, db::Statement::DeadLetterEstimate, kExactCountCap });
    setFrozenPass(frozenPassFor(Sort::NewestFirst));
    setWholeValues({ db::Statement::DeadLetterWholeError,
                     { QStringLiteral("id") },
                     { QStringLiteral("last_error") } });
}

void DeadLetterModel::setFilter(const DeadLetterFilter &filter)
{
    m_filter = filter;
    m_active = true;
    reload();
}

void DeadLetterModel::reload()
{
    Q_EMIT newerCountChanged(0);
    if (m_active)
        KeysetPageModel::reload();
}

void DeadLetterModel::appendFilterParams(db::QueryParams &params) const
{
    m_filter.appendParams(params);
}

void DeadLetterModel::checkForNewer()
{
    if (rowCount() == 0) {
        // Nothing shown, so nothing can move: read the list again rather than count. A failure
        // group requeued in full leaves the list empty, and the one that dies again must show
        // without F5 (docs/architecture.md#live-updates).
        if (m_active && !isLoading())
            KeysetPageModel::reload();
        return;
    }
    if (m_sort != Sort::NewestFirst)
        return;
    db::QueryParams params;
    m_filter.appendParams(params);
    int offset = 0;
    const db::ResultSet *first = pageFor(0, &offset);
    params.addTimestampText(first->raw(offset, first->columnIndex(QStringLiteral("dead_at"))));
    params.addBigInt(idAt(0));
    const quint64 generation = this->generation();
    session()->execute(db::statementSql(db::Statement::DeadLetterNewerCount), params, this,
                       [this, generation](const db::DbExpected<db::ResultSet> &count) {
                           if (generation == this->generation() && count)
                               Q_EMIT newerCountChanged(
                                   count->integer(0, QStringLiteral("count")).value_or(0));
                       });
}

int DeadLetterModel::column(const QString &name)
{
    static const ResultColumnSet list = columns();
    return list.columnOf(name);
}

void DeadLetterModel::sort(int column, Qt::SortOrder order)
{
    // The orders an index serves, by the result column the header shows; other columns keep
    // the order.
    const QString name = headerData(column, Qt::Horizontal, kColumnNameRole).toString();
    Sort next = m_sort;
    if (name == QLatin1String("dead_at") || name == QLatin1String("age_seconds")) {
        // Newest first is "descending" by time, but "ascending" by age.
        next = (name == QLatin1String("dead_at")) == (order == Qt::DescendingOrder)
            ? Sort::NewestFirst
            : Sort::OldestFirst;
    } else if (name == QLatin1String("status")) {
        next = Sort::ByStatus;
    } else if (name == QLatin1String("queue")) {
        next = Sort::ByQueue;
    } else if (name == QLatin1String("kind")) {
        next = Sort::ByKind;
    } else if (name == QLatin1String("error_class")) {
        next = Sort::ByErrorClass;
    } else {
        return; // not served by an index: keep the order
    }
    if (next == m_sort)
        return;
    m_sort = next;
    setStatement(statementFor(m_sort), keysFor(m_sort));
    setFrozenPass(frozenPassFor(m_sort));
    reload();
}

} // namespace redrive
