// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/result_column.h"

#include "models/dead_letter_model.h"

#include <QJsonDocument>

namespace redrive {

QJsonObject resultRowToJson(const db::ResultSet &rows, int row, const JsonKinds &kinds)
{
    QJsonObject out;
    if (row < 0 || row >= rows.rowCount())
        return out;
    for (int c = 0; c < rows.columnCount(); ++c) {
        const QString name = rows.columnName(c);
        if (rows.isNull(row, c)) {
            out.insert(name, QJsonValue::Null);
            continue;
        }
        switch (kinds.value(name, JsonValueKind::Text)) {
        case JsonValueKind::Integer:
            out.insert(name, rows.bigInt(row, c).value_or(0));
            break;
        case JsonValueKind::Boolean:
            out.insert(name, rows.boolean(row, c).value_or(false));
            break;
        case JsonValueKind::Timestamp:
            out.insert(name, rows.timestamp(row, c).toUTC().toString(Qt::ISODateWithMs));
            break;
        case JsonValueKind::Document: {
            QJsonParseError error;
            const QJsonDocument doc = QJsonDocument::fromJson(rows.raw(row, c), &error);
            if (error.error != QJsonParseError::NoError)
                out.insert(name, rows.text(row, c));
            else if (doc.isObject())
                out.insert(name, doc.object());
            else if (doc.isArray())
                out.insert(name, doc.array());
            else
                out.insert(name, rows.text(row, c));
            break;
        }
        case JsonValueKind::Text:
            out.insert(name, rows.text(row, c));
            break;
        }
    }
    return out;
}

QVariant ResultColumn::display(const db::ResultSet &rows, int row, int column, bool showUtc) const
{
    if (column < 0 || rows.isNull(row, column))
        return {};
    switch (format) {
    case Format::Text:
        return rows.text(row, column);
    case Format::Integer:
        return rows.bigInt(row, column).value_or(0);
    case Format::Time:
        return DeadLetterModel::formatTime(rows.timestamp(row, column), showUtc);
    case Format::AgeSeconds:
        return DeadLetterModel::formatAge(rows.bigInt(row, column).value_or(0));
    case Format::ShortHash: {
        const QString hash = rows.text(row, column);
        return hash.size() > 12 ? hash.left(12) + QChar(0x2026) : hash;
    }
    case Format::FirstLine:
        return rows.text(row, column).section(QLatin1Char('\n'), 0, 0);
    }
    return {};
}

QVariant ResultColumn::toolTip(const db::ResultSet &rows, int row, int column, bool showUtc) const
{
    if (column < 0 || rows.isNull(row, column))
        return {};
    switch (format) {
    case Format::Time:
        return DeadLetterModel::formatTime(rows.timestamp(row, column), !showUtc);
    case Format::ShortHash:
    case Format::FirstLine:
    case Format::Text:
        return rows.text(row, column);
    case Format::Integer:
    case Format::AgeSeconds:
        return {};
    }
    return {};
}

QVariant ResultColumn::alignment() const
{
    if (format == Format::Integer || format == Format::AgeSeconds)
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    return {};
}

QList<int> resolveColumns(const QList<ResultColumn> &columns, const db::ResultSet &rows)
{
    QList<int> indexes;
    indexes.reserve(columns.size());
    for (const ResultColumn &c : columns)
        indexes << rows.columnIndex(c.name);
    return indexes;
}

} // namespace redrive
