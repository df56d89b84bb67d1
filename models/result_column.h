// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/query_params.h"
#include "models/db/result_set.h"

#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <QVariant>
#include <functional>
#include <optional>

namespace redrive {

/// A role every result-backed model in models/ answers on any cell of a row: the whole row as a
/// QJsonObject with raw values (what Ctrl+C copies). Views ask for it without knowing the model.
inline constexpr int kRowJsonRole = Qt::UserRole + 64;
/// A role result-backed models answer in headerData() of a horizontal section: the result
/// column's name ("dead_at"), what a saved column layout is matched by.
inline constexpr int kColumnNameRole = Qt::UserRole + 65;

/// How a raw result cell becomes JSON for copy-out.
enum class JsonValueKind {
    Text, ///< the server's text
    Integer, ///< a JSON number
    Boolean, ///< true / false
    Timestamp, ///< ISO 8601 in UTC with milliseconds
    Document, ///< a JSON document kept as nested JSON (e.g. a stored result or record)
};
using JsonKinds = QHash<QString, JsonValueKind>;

/// One row of `rows` as a JSON object keyed by result column name; SQL NULL is JSON null.
/// Columns not in `kinds` stay text.
QJsonObject resultRowToJson(const db::ResultSet &rows, int row, const JsonKinds &kinds);
/// The cell (`row`, `column`) read as `kind`: qint64, bool, QDateTime (UTC) or QString; an
/// invalid QVariant for a missing column. NULL reads as 0, false, an invalid time or a null text.
QVariant typedValue(const db::ResultSet &rows, int row, int column, JsonValueKind kind);

/// Appends a filter's list as a text[] parameter: NULL when `values` is empty (meaning "any").
void addAnyOf(db::QueryParams &params, const QStringList &values);

/// The cell a ResultColumn is asked about: its row in `rows`, the index of the column's own
/// result column (-1 when the result has no such column), the time zone to show, and the index
/// of the result column `name`_cut_bytes (-1 when the page sends the value whole;
/// docs/architecture.md#long-values-in-lists).
struct ResultCell
{
    const db::ResultSet &rows;
    int row;
    int column;
    bool showUtc;
    int cutColumn = -1;

    bool isNull() const { return column < 0 || rows.isNull(row, column); }
    /// The cell's text as the server sent it (null for NULL or a missing column).
    QString text() const { return rows.text(row, column); }
    /// At most the first `maxBytes` bytes of it (db::ResultSet::textPrefix).
    QString textPrefix(qsizetype maxBytes, bool *cut = nullptr) const
    {
        return rows.textPrefix(row, column, maxBytes, cut);
    }
    /// Another result column of the same row, by name (null for NULL or a missing column).
    QString text(const QString &name) const { return rows.text(row, name); }
    bool isNull(const QString &name) const { return rows.isNull(row, name); }
};

/// One column of a result-backed table, bound to its result column by NAME (never by position,
/// so a column added to the SQL never shifts the others): its header, how a cell is turned into
/// text when it is painted (never earlier, never copied row by row; all text comes from
/// models/display_format.h), its alignment, how the
/// result column is copied out as JSON, and an optional hook for the roles a format cannot say
/// (colours, custom tooltips, values computed from several result columns).
struct ResultColumn
{
    enum class Format {
        Text, ///< the server's text, at most display::kMaxCellChars characters (" …" when cut)
        Identifier, ///< as Text, with what could make two identifiers look alike shown as
                    ///< markers (display::revealLookAlikes): keys, payment references
        Integer, ///< a number, right-aligned
        Time, ///< a timestamptz as local time with offset (or UTC), the other one as tooltip
        AgeSeconds, ///< a number of seconds as "3 h 12 min", right-aligned
        DurationMs, ///< milliseconds as "350 ms", "1.8 s", "4 min 12 s", right-aligned
        ShortHash, ///< the first 12 characters of a hash and "…", the full hash as tooltip
        OneLine, ///< the first line, spaces at its ends left out, at most 300 characters, " …" when
                 ///< shortened; the full text as tooltip
    };
    /// Answers `role` for a cell before the format does; std::nullopt leaves the role to the
    /// format, any QVariant (even an invalid one) is the answer.
    using Hook = std::function<std::optional<QVariant>(const ResultCell &cell, int role)>;

    QString name; ///< column name in the result
    QString header; ///< translated header text
    Format format = Format::Text;
    Hook hook = {};
    /// How `name` is copied out; by default from the format (numbers as numbers, times as
    /// ISO 8601 UTC, the rest as text).
    std::optional<JsonValueKind> json = std::nullopt;

    /// The value of `cell` for `role`: the hook's answer, else the format's (DisplayRole,
    /// ToolTipRole, TextAlignmentRole; nothing for other roles). Empty for a missing column
    /// or NULL. A text tooltip comes as display::plainToolTip(): escaped and bounded.
    QVariant data(const ResultCell &cell, int role) const;
    /// data() before a tooltip is made plain: the hook's answer, else the format's.
    QVariant formatOrHook(const ResultCell &cell, int role) const;
    /// The DisplayRole value by format alone.
    QVariant display(const ResultCell &cell) const;
    /// The ToolTipRole value by format alone: the full text where display() shortens it, the
    /// other time zone for times, the exact milliseconds for durations.
    QVariant toolTip(const ResultCell &cell) const;
    /// Qt::TextAlignmentRole: numbers right-aligned, everything else the default.
    QVariant alignment() const;
    /// Bytes of the cell's value the page did not send: result column `name`_cut_bytes
    /// (ResultCell::cutColumn), 0 when there is none (KeysetPageModel::WholeValues,
    /// docs/architecture.md#long-values-in-lists).
    qint64 notSentBytes(const ResultCell &cell) const;
    /// How the column is copied out as JSON.
    JsonValueKind jsonKind() const;
    /// A hook showing the cell, an amount in minor units, as money in the currency held by
    /// result column `currencyColumn` ("12.34 USD"; the exponent is the currency's). Use it with
    /// Format::Integer, which right-aligns the amount and copies it out as a number.
    static Hook moneyIn(const QString &currencyColumn);
};

/// A model role answered on every cell of a row from one result column read as `kind` (ids,
/// versions, fingerprints, ...).
struct RowRole
{
    int role;
    QString name;
    JsonValueKind kind = JsonValueKind::Text;
};

/// The column list of a result-backed model and everything it derives from it: the result
/// column index of each column in the current result, the value of any cell for any role, the
/// header, and a row as JSON. Shared by ResultTableModel and KeysetPageModel.
class ResultColumnSet
{
public:
    /// `extraJson` names result columns that no column shows but copy-out types (e.g. version);
    /// `rowRoles` are answered on every cell.
    explicit ResultColumnSet(QList<ResultColumn> columns, QList<RowRole> rowRoles = {},
                             JsonKinds extraJson = {});

    int size() const { return int(m_columns.size()); }
    const ResultColumn &at(int column) const { return m_columns.at(column); }
    /// Looks the columns up in `rows` (every page of one statement has the same columns).
    void resolve(const db::ResultSet &rows);
    /// The result index read by table column `column` after resolve(), or -1.
    int resultIndex(int column) const { return m_indexes.value(column, -1); }
    /// The value of cell (`row`, `column`) of `rows` for `role`; kRowJsonRole is the whole row.
    QVariant data(const db::ResultSet &rows, int row, int column, int role, bool showUtc) const;
    /// The horizontal header of `section` (DisplayRole only).
    QVariant header(int section, int role) const;
    /// `row` of `rows` as JSON with the columns' kinds.
    QJsonObject rowJson(const db::ResultSet &rows, int row) const;
    /// The table column showing result column `name`, or -1.
    int columnOf(const QString &name) const;

private:
    QList<ResultColumn> m_columns;
    QList<RowRole> m_rowRoles;
    JsonKinds m_json;
    QList<int> m_indexes;
    QList<int> m_cutIndexes; ///< of each column's `name`_cut_bytes, -1 when the page has none
};

} // namespace redrive
