// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/db/query_params.h"

#include "models/display_format.h"

#include <QTimeZone>
#include <cstdlib>

namespace redrive::db {

QueryParams &QueryParams::add(ParamType type, QByteArray data, bool binary)
{
    // libpq takes a text-format value up to its first NUL: the rest would be dropped silently.
    if (!binary && !m_error && data.contains('\0'))
        m_error = DbError(ErrorKind::Other,
                          QStringLiteral("parameter $%1 holds a NUL character (U+0000), which "
                                         "PostgreSQL text cannot hold; nothing was sent")
                              .arg(m_values.size() + 1),
                          QStringLiteral("22021"));
    m_values.push_back(Value { type, std::move(data), false, binary });
    return *this;
}

QueryParams &QueryParams::addText(const QString &value)
{
    if (value.isNull())
        return addNull(ParamType::Text);
    return add(ParamType::Text, value.toUtf8());
}

QueryParams &QueryParams::addInt(int value)
{
    return add(ParamType::Int, QByteArray::number(value));
}

QueryParams &QueryParams::addBigInt(qint64 value)
{
    return add(ParamType::BigInt, QByteArray::number(value));
}

QueryParams &QueryParams::addNumeric(const QString &decimal)
{
    if (decimal.isNull())
        return addNull(ParamType::Numeric);
    return add(ParamType::Numeric, decimal.toLatin1());
}

QueryParams &QueryParams::addBool(bool value)
{
    return add(ParamType::Bool, value ? QByteArrayLiteral("t") : QByteArrayLiteral("f"));
}

QueryParams &QueryParams::addTimestamp(const QDateTime &value)
{
    if (!value.isValid())
        return addNull(ParamType::TimestampTz);
    if (value == display::infiniteFuture())
        return add(ParamType::TimestampTz, QByteArrayLiteral("infinity"));
    if (value == display::infinitePast())
        return add(ParamType::TimestampTz, QByteArrayLiteral("-infinity"));
    const QDateTime utc = value.toUTC();
    const int year = utc.date().year();
    if (year < 1 || year > 9999) {
        // Qt writes no ISO text outside years 1 to 9999; PostgreSQL reads "294276-01-01 ...+00"
        // and, for a year BC, "4713-01-01 ...+00 BC".
        const QDateTime ad(QDate(std::abs(year), utc.date().month(), utc.date().day()), utc.time(),
                           QTimeZone::utc());
        return add(ParamType::TimestampTz,
                   ad.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss.zzz")).toLatin1()
                       + (year < 1 ? QByteArrayLiteral("+00 BC") : QByteArrayLiteral("+00")));
    }
    // ISO 8601 with milliseconds and an explicit offset: "2026-11-29T16:46:27.123Z".
    return add(ParamType::TimestampTz, utc.toString(Qt::ISODateWithMs).toLatin1());
}

QueryParams &QueryParams::addTimestampText(const QByteArray &serverText)
{
    if (serverText.isNull())
        return addNull(ParamType::TimestampTz);
    return add(ParamType::TimestampTz, serverText);
}

QueryParams &QueryParams::addJson(const QByteArray &utf8Json)
{
    if (utf8Json.isNull())
        return addNull(ParamType::Jsonb);
    return add(ParamType::Jsonb, utf8Json);
}

QueryParams &QueryParams::addBytes(const QByteArray &bytes)
{
    if (bytes.isNull())
        return addNull(ParamType::Bytea);
    return add(ParamType::Bytea, bytes, true);
}

QueryParams &QueryParams::addUuid(const QUuid &value)
{
    if (value.isNull())
        return addNull(ParamType::Uuid);
    return add(ParamType::Uuid, value.toByteArray(QUuid::WithoutBraces));
}

QueryParams &QueryParams::addBigIntArray(const QList<qint64> &values)
{
    QByteArray text = "{";
    for (qsizetype i = 0; i < values.size(); ++i) {
        if (i)
            text += ',';
        text += QByteArray::number(values[i]);
    }
    return add(ParamType::BigIntArray, text + '}');
}

QueryParams &QueryParams::addUuidArray(const QList<QUuid> &values)
{
    QByteArray text = "{";
    for (qsizetype i = 0; i < values.size(); ++i) {
        if (i)
            text += ',';
        text += values[i].isNull() ? QByteArrayLiteral("NULL")
                                   : values[i].toByteArray(QUuid::WithoutBraces);
    }
    return add(ParamType::UuidArray, text + '}');
}

QueryParams &QueryParams::addTextArray(const QStringList &values)
{
    QByteArray text = "{";
    for (qsizetype i = 0; i < values.size(); ++i) {
        if (i)
            text += ',';
        if (values[i].isNull()) {
            text += "NULL";
            continue;
        }
        QByteArray element = values[i].toUtf8();
        element.replace('\\', "\\\\").replace('"', "\\\"");
        text += '"' + element + '"';
    }
    return add(ParamType::TextArray, text + '}');
}

QueryParams &QueryParams::addNull(ParamType type)
{
    m_values.push_back(Value { type, {}, true, false });
    return *this;
}

std::vector<unsigned int> QueryParams::types() const
{
    std::vector<unsigned int> out;
    out.reserve(m_values.size());
    for (const Value &v : m_values)
        out.push_back(static_cast<unsigned int>(v.type));
    return out;
}

std::vector<const char *> QueryParams::values() const
{
    std::vector<const char *> out;
    out.reserve(m_values.size());
    for (const Value &v : m_values)
        out.push_back(v.isNull ? nullptr : v.data.constData());
    return out;
}

std::vector<int> QueryParams::lengths() const
{
    std::vector<int> out;
    out.reserve(m_values.size());
    for (const Value &v : m_values)
        out.push_back(int(v.data.size()));
    return out;
}

std::vector<int> QueryParams::formats() const
{
    std::vector<int> out;
    out.reserve(m_values.size());
    for (const Value &v : m_values)
        out.push_back(v.binary ? 1 : 0);
    return out;
}

} // namespace redrive::db
