// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QDateTime>
#include <QList>
#include <QMetaType>
#include <QString>
#include <QUuid>
#include <memory>
#include <optional>

struct pg_result;

namespace redrive::db {

/// A read-only result of one statement, owning its PGresult (freed with PQclear when the last
/// copy goes). Copies share the same result, so a page can travel through a queued signal and be
/// read by a model on the GUI thread without copying rows; cells are converted only when read.
/// Results are requested in text format; the getters parse PostgreSQL's text output with the
/// session settings the connection pins (TimeZone, DateStyle ISO).
class ResultSet
{
public:
    ResultSet() = default;
    /// Takes ownership of `result` (may be null for an empty set).
    explicit ResultSet(pg_result *result);

    int rowCount() const;
    int columnCount() const;
    QString columnName(int column) const;
    /// Index of the column called `name`, or -1.
    int columnIndex(const QString &name) const;
    /// Rows affected by INSERT/UPDATE/DELETE (PQcmdTuples), 0 otherwise.
    qint64 affectedRows() const;

    bool isNull(int row, int column) const;
    /// The cell's text as sent by the server (UTF-8), null QString for SQL NULL.
    QString text(int row, int column) const;
    QByteArray raw(int row, int column) const;
    /// The cell's bytes as sent by the server, not copied: valid while this ResultSet (or a copy
    /// of it) lives. Empty for SQL NULL (isNull() tells NULL from '').
    QByteArrayView view(int row, int column) const;
    /// The cell's length in bytes as sent (0 for NULL).
    qsizetype byteLength(int row, int column) const;
    /// At most the first `maxBytes` bytes of the cell's text, cut back to a whole UTF-8
    /// character, decoded; `cut` (optional) says whether anything was left out. For painting a
    /// cell that may hold a megabyte without decoding all of it on every repaint.
    QString textPrefix(int row, int column, qsizetype maxBytes, bool *cut = nullptr) const;
    std::optional<qint64> bigInt(int row, int column) const;
    std::optional<int> integer(int row, int column) const;
    std::optional<bool> boolean(int row, int column) const;
    /// A timestamptz as an instant (UTC-based QDateTime, microseconds truncated to ms);
    /// invalid for NULL or text that is not a timestamp.
    QDateTime timestamp(int row, int column) const;
    /// A bytea cell decoded from the server's hex output ("\x...") to its exact bytes.
    QByteArray bytes(int row, int column) const;
    QUuid uuid(int row, int column) const;
    /// Elements of a one-dimensional bigint[] cell.
    QList<qint64> bigIntArray(int row, int column) const;

    // Convenience overloads by column name; a missing column reads as NULL.
    QString text(int row, const QString &column) const { return text(row, columnIndex(column)); }
    std::optional<qint64> bigInt(int row, const QString &column) const
    {
        return bigInt(row, columnIndex(column));
    }
    std::optional<int> integer(int row, const QString &column) const
    {
        return integer(row, columnIndex(column));
    }
    bool isNull(int row, const QString &column) const;

private:
    bool inRange(int row, int column) const;
    std::shared_ptr<pg_result> m_result;
};

/// Parses PostgreSQL's ISO timestamptz output ("2026-11-29 16:46:27.123456+00",
/// "2026-11-29 11:46:27-05", "...+05:30", a year BC as "4713-01-01 00:00:00+00 BC", which is
/// year -4713 of QDate) into an instant; "infinity" and "-infinity" give display::infiniteFuture()
/// and display::infinitePast(); invalid QDateTime when it is none of these.
QDateTime parseTimestampTz(QByteArrayView text);

} // namespace redrive::db

Q_DECLARE_METATYPE(redrive::db::ResultSet)
