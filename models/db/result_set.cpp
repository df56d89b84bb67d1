// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/db/result_set.h"

#include "models/db/utf8_text.h"
#include "models/display_format.h"

#include <QRegularExpression>
#include <QTimeZone>
#include <algorithm>
#include <libpq-fe.h>

namespace redrive::db {

ResultSet::ResultSet(pg_result *result)
    : m_result(result, [](pg_result *r) { PQclear(r); })
{ }

int ResultSet::rowCount() const
{
    return m_result ? PQntuples(m_result.get()) : 0;
}

int ResultSet::columnCount() const
{
    return m_result ? PQnfields(m_result.get()) : 0;
}

QString ResultSet::columnName(int column) const
{
    if (!m_result || column < 0 || column >= columnCount())
        return {};
    return QString::fromUtf8(PQfname(m_result.get(), column));
}

int ResultSet::columnIndex(const QString &name) const
{
    if (!m_result)
        return -1;
    // PQfnumber folds unquoted names to lower case, like SQL; quote to match exactly.
    const QByteArray quoted = '"' + name.toUtf8().replace('"', "\"\"") + '"';
    return PQfnumber(m_result.get(), quoted.constData());
}

qint64 ResultSet::affectedRows() const
{
    if (!m_result)
        return 0;
    return QByteArray(PQcmdTuples(m_result.get())).toLongLong();
}

bool ResultSet::inRange(int row, int column) const
{
    return m_result && row >= 0 && column >= 0 && row < rowCount() && column < columnCount();
}

bool ResultSet::isNull(int row, int column) const
{
    return !inRange(row, column) || PQgetisnull(m_result.get(), row, column);
}

bool ResultSet::isNull(int row, const QString &column) const
{
    return isNull(row, columnIndex(column));
}

QByteArray ResultSet::raw(int row, int column) const
{
    if (isNull(row, column))
        return {};
    return QByteArray(PQgetvalue(m_result.get(), row, column),
                      PQgetlength(m_result.get(), row, column));
}

QByteArrayView ResultSet::view(int row, int column) const
{
    if (isNull(row, column))
        return {};
    return QByteArrayView(PQgetvalue(m_result.get(), row, column),
                          PQgetlength(m_result.get(), row, column));
}

qsizetype ResultSet::byteLength(int row, int column) const
{
    return isNull(row, column) ? 0 : PQgetlength(m_result.get(), row, column);
}

QString ResultSet::textPrefix(int row, int column, qsizetype maxBytes, bool *cut) const
{
    if (cut)
        *cut = false;
    if (isNull(row, column))
        return {};
    const char *value = PQgetvalue(m_result.get(), row, column);
    const qsizetype length = PQgetlength(m_result.get(), row, column);
    if (length <= maxBytes)
        return textFromUtf8(value, length);
    if (cut)
        *cut = true;
    qsizetype end = std::max<qsizetype>(maxBytes, 0);
    // Back to the first byte of a character: UTF-8 continuation bytes are 10xxxxxx.
    while (end > 0 && (static_cast<unsigned char>(value[end]) & 0xC0) == 0x80)
        --end;
    return textFromUtf8(value, end);
}

QString ResultSet::text(int row, int column) const
{
    if (isNull(row, column))
        return {};
    return textFromUtf8(PQgetvalue(m_result.get(), row, column),
                        PQgetlength(m_result.get(), row, column));
}

std::optional<qint64> ResultSet::bigInt(int row, int column) const
{
    if (isNull(row, column))
        return std::nullopt;
    bool ok = false;
    const qint64 v = raw(row, column).toLongLong(&ok);
    return ok ? std::optional<qint64>(v) : std::nullopt;
}

std::optional<int> ResultSet::integer(int row, int column) const
{
    if (isNull(row, column))
        return std::nullopt;
    bool ok = false;
    const int v = raw(row, column).toInt(&ok);
    return ok ? std::optional<int>(v) : std::nullopt;
}

std::optional<bool> ResultSet::boolean(int row, int column) const
{
    if (isNull(row, column))
        return std::nullopt;
    return PQgetvalue(m_result.get(), row, column)[0] == 't';
}

QDateTime ResultSet::timestamp(int row, int column) const
{
    if (isNull(row, column))
        return {};
    return parseTimestampTz(QByteArrayView(PQgetvalue(m_result.get(), row, column),
                                           PQgetlength(m_result.get(), row, column)));
}

QByteArray ResultSet::bytes(int row, int column) const
{
    if (isNull(row, column))
        return {};
    size_t length = 0;
    unsigned char *decoded = PQunescapeBytea(
        reinterpret_cast<const unsigned char *>(PQgetvalue(m_result.get(), row, column)), &length);
    if (!decoded)
        return {};
    QByteArray out(reinterpret_cast<const char *>(decoded), qsizetype(length));
    PQfreemem(decoded);
    if (out.isNull())
        out = QByteArray(""); // an empty bytea is not NULL
    return out;
}

QUuid ResultSet::uuid(int row, int column) const
{
    if (isNull(row, column))
        return {};
    return QUuid::fromString(QLatin1String(raw(row, column)));
}

QList<qint64> ResultSet::bigIntArray(int row, int column) const
{
    QList<qint64> out;
    QByteArray text = raw(row, column);
    if (text.size() < 2)
        return out;
    text = text.mid(1, text.size() - 2); // strip { }
    if (text.isEmpty())
        return out;
    for (const QByteArray &part : text.split(','))
        out.append(part.toLongLong());
    return out;
}

QDateTime parseTimestampTz(QByteArrayView text)
{
    // DateStyle ISO output: date, time with up to 6 fraction digits, offset as +HH[:MM[:SS]].
    // The infinities (docs/domain.md "Times at the ends of the range") and years BC.
    if (text == "infinity")
        return display::infiniteFuture();
    if (text == "-infinity")
        return display::infinitePast();
    static const QRegularExpression re(QStringLiteral(
        R"(^(\d{4,})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:\.(\d{1,6}))?([+-])(\d\d)(?::?(\d\d))?(?::?(\d\d))?( BC)?$)"));
    const QRegularExpressionMatch m = re.match(QString::fromLatin1(text));
    if (!m.hasMatch())
        return {};
    const int year = m.captured(1).toInt();
    const QDate date(m.hasCaptured(12) ? -year : year, m.captured(2).toInt(),
                     m.captured(3).toInt());
    int ms = 0;
    if (m.hasCaptured(7))
        ms = (m.captured(7) + QStringLiteral("000000")).left(3).toInt();
    const QTime time(m.captured(4).toInt(), m.captured(5).toInt(), m.captured(6).toInt(), ms);
    int offset
        = m.captured(9).toInt() * 3600 + m.captured(10).toInt() * 60 + m.captured(11).toInt();
    if (m.captured(8) == QLatin1String("-"))
        offset = -offset;
    const QDateTime local(date, time, QTimeZone(offset));
    return local.isValid() ? local.toUTC() : QDateTime();
}

} // namespace redrive::db
