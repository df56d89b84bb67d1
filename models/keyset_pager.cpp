// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/keyset_pager.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QStringList>
#include <algorithm>
#include <iterator>

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
    m_pageStarts.clear();
    m_rows = 0;
    m_frozenIds = {};
    m_frozenChunks.clear();
    m_frozenChunkStarts.clear();
    m_frozenCount = 0;
    m_frozenStarted = false;
    m_frozenComplete = false;
    m_frozenKeys.clear();
    m_consumed = 0;
    m_requestedTo = 0;
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

quint64 KeysetPager::beginFreeze(QList<KeysetKey> keys)
{
    m_frozenKeys = std::move(keys);
    m_pending = true;
    return m_generation;
}

bool KeysetPager::freeze(quint64 generation, const db::ResultSet &keys)
{
    return appendFrozen(generation, keys, true);
}

bool KeysetPager::appendFrozen(quint64 generation, const db::ResultSet &keys, bool complete)
{
    if (!isCurrent(generation))
        return false;
    if (!m_frozenStarted) {
        m_consumed = 0;
        m_requestedTo = 0;
        m_pending = false;
        m_frozenStarted = true;
    }
    const int n = keys.rowCount();
    const bool idsOnly
        = m_frozenKeys.size() == 1 && m_frozenKeys.first().type == db::ParamType::BigInt;
    if (idsOnly) {
        const int column = keys.columnIndex(m_frozenKeys.first().name);
        m_frozenIds.reserve(m_frozenIds.size() + n);
        for (int row = 0; row < n; ++row)
            m_frozenIds.push_back(keys.bigInt(row, column).value_or(0));
    } else if (n > 0) {
        m_frozenChunks.append(keys);
        m_frozenChunkStarts.append(m_frozenCount);
    }
    m_frozenCount += n;
    m_frozenComplete = complete;
    if (complete && m_consumed >= m_frozenCount && !m_pending)
        m_atEnd = true;
    return true;
}

const db::ResultSet &KeysetPager::frozenChunkFor(int entry, int *row) const
{
    const auto next
        = std::upper_bound(m_frozenChunkStarts.cbegin(), m_frozenChunkStarts.cend(), entry);
    const qsizetype chunk = std::distance(m_frozenChunkStarts.cbegin(), next) - 1;
    *row = entry - m_frozenChunkStarts.at(chunk);
    return m_frozenChunks.at(chunk);
}

void KeysetPager::appendFrozenSlice(db::QueryParams &params, int from, int to) const
{
    for (const KeysetKey &key : std::as_const(m_frozenKeys)) {
        if (key.type == db::ParamType::BigInt) {
            QList<qint64> values;
            values.reserve(to - from);
            if (!m_frozenIds.empty()) {
                for (int entry = from; entry < to; ++entry)
                    values.append(m_frozenIds[size_t(entry)]);
            } else {
                for (int entry = from; entry < to; ++entry) {
                    int row = 0;
                    const db::ResultSet &chunk = frozenChunkFor(entry, &row);
                    values.append(chunk.bigInt(row, key.name).value_or(0));
                }
            }
            params.addBigIntArray(values);
        } else {
            QStringList values;
            values.reserve(to - from);
            for (int entry = from; entry < to; ++entry) {
                int row = 0;
                const db::ResultSet &chunk = frozenChunkFor(entry, &row);
                values.append(chunk.text(row, key.name));
            }
            params.addTextArray(values);
        }
    }
}

quint64 KeysetPager::beginReread(db::QueryParams &params)
{
    appendFrozenSlice(params, 0, m_consumed);
    m_pending = true;
    return m_generation;
}

bool KeysetPager::abandonReread(quint64 generation)
{
    if (!isCurrent(generation))
        return false;
    m_pending = false;
    return true;
}

bool KeysetPager::acceptReread(quint64 generation, const db::ResultSet &rows)
{
    if (!isCurrent(generation))
        return false;
    m_pages.clear();
    m_pageStarts.clear();
    m_rows = rows.rowCount();
    if (m_rows > 0) {
        m_pages.append(rows);
        m_pageStarts.append(0);
    }
    m_pending = false;
    return true;
}

quint64 KeysetPager::beginRequest(db::QueryParams &params)
{
    if (m_frozenStarted) {
        m_requestedTo = std::min(m_consumed + m_pageSize, m_frozenCount);
        appendFrozenSlice(params, m_consumed, m_requestedTo);
        m_pending = true;
        return m_generation;
    }
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
    if (m_frozenStarted) {
        m_consumed = m_requestedTo;
        if (m_frozenComplete && m_consumed >= m_frozenCount)
            m_atEnd = true;
    } else if (n < m_pageSize) {
        m_atEnd = true;
    }
    if (n > 0) {
        m_pages.append(page);
        m_pageStarts.append(m_rows);
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
    // Pages of a frozen pass (and a re-read) may be shorter than pageSize().
    const auto next = std::upper_bound(m_pageStarts.cbegin(), m_pageStarts.cend(), row);
    const qsizetype page = std::distance(m_pageStarts.cbegin(), next) - 1;
    *offset = row - m_pageStarts.at(page);
    return &m_pages.at(page);
}

} // namespace redrive
