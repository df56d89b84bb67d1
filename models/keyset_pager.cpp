// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/keyset_pager.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <algorithm>

namespace redrive {

ListTotal ListTotal::fromCount(qint64 counted, qint64 cap)
{
    if (counted <= cap)
        return { counted, true };
    return { cap, false };
}

ListTotal ListTotal::fromEstimate(const db::ResultSet &plan, qint64 cap)
{
    const QJsonArray doc
        = QJsonDocument::fromJson(plan.raw(0, plan.columnIndex(QStringLiteral("QUERY PLAN"))))
              .array();
    const double rows = doc.first()
                            .toObject()
                            .value(QStringLiteral("Plan"))
                            .toObject()
                            .value(QStringLiteral("Plan Rows"))
                            .toDouble();
    return { std::max<qint64>(cap + 1, qint64(rows)), false };
}

KeysetPager::KeysetPager(QList<KeysetKey> keys, int pageSize)
    : m_keys(std::move(keys))
    , m_pageSize(std::max(1, pageSize))
{ }

void KeysetPager::reset()
{
    ++m_generation;
    m_pages.clear();
    m_rows = 0;
    m_atEnd = false;
    m_pending = false;
}

void KeysetPager::appendKey(db::QueryParams &params, const KeysetKey &key,
                            const db::ResultSet *last, int lastRow) const
{
    const int column = last ? last->columnIndex(key.name) : -1;
    if (column < 0 || last->isNull(lastRow, column)) {
        params.addNull(key.type);
        return;
    }
    switch (key.type) {
    case db::ParamType::TimestampTz:
        params.addTimestampText(last->raw(lastRow, column)); // exactly as the server printed it
        break;
    case db::ParamType::BigInt:
        params.addBigInt(last->bigInt(lastRow, column).value_or(0));
        break;
    case db::ParamType::Int:
        params.addInt(last->integer(lastRow, column).value_or(0));
        break;
    default:
        params.addText(last->text(lastRow, column));
        break;
    }
}

quint64 KeysetPager::beginRequest(db::QueryParams &params)
{
    int lastRow = 0;
    const db::ResultSet *last = m_rows > 0 ? pageFor(m_rows - 1, &lastRow) : nullptr;
    for (const KeysetKey &key : std::as_const(m_keys)) {
        if (!key.afterLimit)
            appendKey(params, key, last, lastRow);
    }
    params.addInt(m_pageSize);
    for (const KeysetKey &key : std::as_const(m_keys)) {
        if (key.afterLimit)
            appendKey(params, key, last, lastRow);
    }
    m_pending = true;
    return m_generation;
}

bool KeysetPager::accept(quint64 generation, const db::ResultSet &page)
{
    if (!isCurrent(generation))
        return false;
    const int n = page.rowCount();
    if (n < m_pageSize)
        m_atEnd = true;
    if (n > 0) {
        m_pages.append(page);
        m_rows += n;
    }
    m_pending = false;
    return true;
}

bool KeysetPager::fail(quint64 generation)
{
    if (!isCurrent(generation))
        return false;
    m_atEnd = true;
    m_pending = false;
    return true;
}

const db::ResultSet *KeysetPager::pageFor(int row, int *offset) const
{
    if (row < 0 || row >= m_rows)
        return nullptr;
    const int page = row / m_pageSize; // every page but the last holds m_pageSize rows
    *offset = row % m_pageSize;
    return &m_pages.at(page);
}

} // namespace redrive
