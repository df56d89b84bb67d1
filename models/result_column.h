// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/result_set.h"

#include <QHash>
#include <QJsonObject>
#include <QList>
#include <QString>
#include <QVariant>

namespace redrive {

/// A role every result-backed model in models/ answers on any cell of a row: the whole row as a
/// QJsonObject with raw values (what Ctrl+C copies). Views ask for it without knowing the model.
inline constexpr int kRowJsonRole = Qt::UserRole + 64;

/// How a raw result cell becomes JSON for copy-out; anything not listed stays text.
enum class JsonValueKind {
    Text,
    Integer, ///< a JSON number
    Boolean, ///< true / false
    Timestamp, ///< ISO 8601 in UTC with milliseconds
    Document, ///< a JSON document kept as nested JSON (e.g. a stored result or record)
};
using JsonKinds = QHash<QString, JsonValueKind>;

/// One row of `rows` as a JSON object keyed by result column name; SQL NULL is JSON null.
QJsonObject resultRowToJson(const db::ResultSet &rows, int row, const JsonKinds &kinds);

/// One column of a result-backed table: which result column it reads, its header, and how a
/// cell is turned into text when it is painted (never earlier, never copied row by row).
struct ResultColumn
{
    enum class Format {
        Text, ///< the server's text
        Integer, ///< a number, right-aligned
        Time, ///< a timestamptz via DeadLetterModel::formatTime (local with offset, or UTC)
        AgeSeconds, ///< a number of seconds via DeadLetterModel::formatAge ("3 h 12 min")
        ShortHash, ///< the first 12 characters of a hash, the full hash as tooltip
        FirstLine, ///< the first line only, the full text as tooltip
    };

    QString name; ///< column name in the result
    QString header; ///< translated header text
    Format format = Format::Text;

    /// The DisplayRole value of cell (`row`, `column`) of `rows`, `column` being the index of
    /// `name` in the result (-1 when missing: an empty cell).
    QVariant display(const db::ResultSet &rows, int row, int column, bool showUtc) const;
    /// The ToolTipRole value: the full text where display() shortens it, the other time zone
    /// for times.
    QVariant toolTip(const db::ResultSet &rows, int row, int column, bool showUtc) const;
    /// Qt::TextAlignmentRole: numbers right-aligned, everything else the default.
    QVariant alignment() const;
};

/// Resolves each column's result index in `rows` (-1 for a missing column).
QList<int> resolveColumns(const QList<ResultColumn> &columns, const db::ResultSet &rows);

} // namespace redrive
