// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/result_column.h"

#include "models/display_format.h"

#include <QCoreApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLocale>
#include <algorithm>

namespace redrive {

namespace {

// A cell's control characters other than line breaks as the Unicode control picture naming
// them (TAB as U+2409 "␉", ESC as U+241B "␛", DEL as U+2421): a TAB moved the rest of the cell
// to a tab stop and an ESC showed as an empty box (docs/security.md#text-from-the-database-is-
// plain-text). Copy-out reads the raw cell.
QString controlsAsPictures(QString text)
{
    auto isControl = [](QChar c) {
        const char16_t u = c.unicode();
        return (u < 0x20 && u != u'\n' && u != u'\r') || u == 0x7f;
    };
    if (std::none_of(text.cbegin(), text.cend(), isControl))
        return text;
    for (QChar &c : text) {
        if (isControl(c))
            c = QChar(c.unicode() == 0x7f ? char16_t(0x2421) : char16_t(0x2400 + c.unicode()));
    }
    return text;
}

/// A one-line cell reads at most this many bytes of its text (display::firstLine's window).
constexpr qsizetype kOneLineBytes = 8 * 1024;

} // namespace

void addAnyOf(db::QueryParams &params, const QStringList &values)
{
    if (values.isEmpty())
        params.addNull(db::ParamType::TextArray);
    else
        params.addTextArray(values);
}

QVariant typedValue(const db::ResultSet &rows, int row, int column, JsonValueKind kind)
{
    if (column < 0)
        return {};
    switch (kind) {
    case JsonValueKind::Integer:
        return rows.bigInt(row, column).value_or(0);
    case JsonValueKind::Boolean:
        return rows.boolean(row, column).value_or(false);
    case JsonValueKind::Timestamp:
        return rows.timestamp(row, column);
    case JsonValueKind::Text:
    case JsonValueKind::Document:
        break;
    }
    return rows.text(row, column);
}

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
            if (error.error == QJsonParseError::NoError && doc.isObject())
                out.insert(name, doc.object());
            else if (error.error == QJsonParseError::NoError && doc.isArray())
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

QVariant ResultColumn::formatOrHook(const ResultCell &cell, int role) const
{
    if (hook) {
        if (std::optional<QVariant> answer = hook(cell, role))
            return *answer;
    }
    switch (role) {
    case Qt::DisplayRole:
        return display(cell);
    case Qt::ToolTipRole:
        return toolTip(cell);
    case Qt::TextAlignmentRole:
        return alignment();
    default:
        return {};
    }
}

QVariant ResultColumn::data(const ResultCell &cell, int role) const
{
    QVariant value = formatOrHook(cell, role);
    // Every tooltip, the hooks' too, is plain text shown literally and bounded: the database's
    // text may look like markup or be a megabyte long (docs/security.md#text-from-the-database-
    // is-plain-text).
    // A value the page sent cut short says so, after what the tooltip shows of it.
    if (role == Qt::ToolTipRole && value.typeId() == QMetaType::QString) {
        const qint64 notSent = notSentBytes(cell);
        return display::plainToolTip(
            value.toString(), display::kMaxToolTipChars,
            notSent > 0 ? QCoreApplication::translate("ResultColumn",
                                                      "… and %1 more not loaded: Ctrl+C copies "
                                                      "the row whole")
                              .arg(QLocale().formattedDataSize(notSent))
                        : QString());
    }
    // BiDi overrides and zero-width characters are shown as markers, never applied: a queue
    // named "\u202Eevil" must not read "live" (copy-out reads the raw cell, whole).
    if (role == Qt::DisplayRole && value.typeId() == QMetaType::QString)
        return controlsAsPictures(display::revealInvisible(value.toString()));
    return value;
}

qint64 ResultColumn::notSentBytes(const ResultCell &cell) const
{
    return cell.cutColumn < 0 ? 0 : cell.rows.bigInt(cell.row, cell.cutColumn).value_or(0);
}

QVariant ResultColumn::display(const ResultCell &cell) const
{
    if (cell.isNull())
        return {};
    const db::ResultSet &rows = cell.rows;
    // The page sent only the value's start (KeysetPageModel::WholeValues): it reads as cut too.
    const auto sentCut = [&] {
        return notSentBytes(cell) > 0;
    };
    switch (format) {
    case Format::Text:
    case Format::Identifier: {
        // A bounded prefix: a cell never decodes nor lays out a megabyte on a repaint.
        bool cut = false;
        QString text = cell.textPrefix(display::kMaxCellChars * 4, &cut);
        if (format == Format::Identifier)
            text = display::revealLookAlikes(text);
        return cut || text.size() > display::kMaxCellChars || sentCut()
            ? text.left(display::kMaxCellChars) + QStringLiteral(" \u2026")
            : text;
    }
    case Format::Integer:
        return rows.bigInt(cell.row, cell.column).value_or(0);
    case Format::Time:
        return display::time(rows.timestamp(cell.row, cell.column), cell.showUtc);
    case Format::AgeSeconds:
        return display::age(rows.bigInt(cell.row, cell.column).value_or(0));
    case Format::DurationMs:
        return display::duration(rows.bigInt(cell.row, cell.column).value_or(0));
    case Format::ShortHash:
        return display::shortHash(cell.text());
    case Format::OneLine: {
        bool shortened = false;
        bool cut = false;
        QString line = display::firstLine(cell.textPrefix(kOneLineBytes, &cut), &shortened);
        shortened = shortened || cut || sentCut();
        return shortened ? line + QStringLiteral(" …") : line;
    }
    }
    return {};
}

QVariant ResultColumn::toolTip(const ResultCell &cell) const
{
    if (cell.isNull())
        return {};
    switch (format) {
    case Format::Time:
        return display::time(cell.rows.timestamp(cell.row, cell.column), !cell.showUtc);
    case Format::DurationMs:
        return QCoreApplication::translate("ResultColumn", "%1 ms")
            .arg(QLocale().toString(cell.rows.bigInt(cell.row, cell.column).value_or(0)));
    case Format::ShortHash:
    case Format::OneLine:
    case Format::Text:
        return cell.text();
    case Format::Identifier:
        return display::revealLookAlikes(cell.text());
    case Format::Integer:
    case Format::AgeSeconds:
        return {};
    }
    return {};
}

QVariant ResultColumn::alignment() const
{
    switch (format) {
    case Format::Integer:
    case Format::AgeSeconds:
    case Format::DurationMs:
        return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
    default:
        return {};
    }
}

ResultColumn::Hook ResultColumn::moneyIn(const QString &currencyColumn)
{
    return [currencyColumn](const ResultCell &cell, int role) -> std::optional<QVariant> {
        if (role != Qt::DisplayRole || cell.isNull())
            return std::nullopt;
        return display::money(cell.rows.bigInt(cell.row, cell.column).value_or(0),
                              cell.text(currencyColumn));
    };
}

JsonValueKind ResultColumn::jsonKind() const
{
    if (json)
        return *json;
    switch (format) {
    case Format::Integer:
    case Format::AgeSeconds:
    case Format::DurationMs:
        return JsonValueKind::Integer;
    case Format::Time:
        return JsonValueKind::Timestamp;
    default:
        return JsonValueKind::Text;
    }
}

ResultColumnSet::ResultColumnSet(QList<ResultColumn> columns, QList<RowRole> rowRoles,
                                 JsonKinds extraJson)
    : m_columns(std::move(columns))
    , m_rowRoles(std::move(rowRoles))
    , m_json(std::move(extraJson))
{
    for (const ResultColumn &c : std::as_const(m_columns)) {
        if (c.jsonKind() != JsonValueKind::Text)
            m_json.insert(c.name, c.jsonKind());
    }
    m_indexes.fill(-1, m_columns.size());
    m_cutIndexes.fill(-1, m_columns.size());
}

void ResultColumnSet::resolve(const db::ResultSet &rows)
{
    for (int c = 0; c < m_columns.size(); ++c) {
        m_indexes[c] = rows.columnIndex(m_columns.at(c).name);
        m_cutIndexes[c] = rows.columnIndex(m_columns.at(c).name + QLatin1String("_cut_bytes"));
    }
}

QVariant ResultColumnSet::data(const db::ResultSet &rows, int row, int column, int role,
                               bool showUtc) const
{
    if (row < 0 || row >= rows.rowCount() || column < 0 || column >= m_columns.size())
        return {};
    if (role == kRowJsonRole)
        return rowJson(rows, row);
    for (const RowRole &r : m_rowRoles) {
        if (r.role == role)
            return typedValue(rows, row, rows.columnIndex(r.name), r.kind);
    }
    return m_columns.at(column).data(
        { rows, row, resultIndex(column), showUtc, m_cutIndexes.value(column, -1) }, role);
}

QVariant ResultColumnSet::header(int section, int role) const
{
    if (section < 0 || section >= m_columns.size())
        return {};
    if (role == Qt::DisplayRole)
        return m_columns.at(section).header;
    if (role == kColumnNameRole)
        return m_columns.at(section).name;
    return {};
}

QJsonObject ResultColumnSet::rowJson(const db::ResultSet &rows, int row) const
{
    return resultRowToJson(rows, row, m_json);
}

int ResultColumnSet::columnOf(const QString &name) const
{
    for (int c = 0; c < m_columns.size(); ++c) {
        if (m_columns.at(c).name == name)
            return c;
    }
    return -1;
}

} // namespace redrive
