// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/db_error.h"

#include <QByteArray>
#include <QDateTime>
#include <QList>
#include <QMetaType>
#include <QString>
#include <QStringList>
#include <QUuid>
#include <optional>
#include <vector>

namespace redrive::db {

/// PostgreSQL type of a parameter, so the server never has to guess (the Oids are from pg_type).
enum class ParamType : unsigned int {
    Text = 25,
    Int = 23,
    BigInt = 20,
    Numeric = 1700,
    Bool = 16,
    TimestampTz = 1184,
    Jsonb = 3802,
    Bytea = 17,
    Uuid = 2950,
    BigIntArray = 1016,
    UuidArray = 2951,
    TextArray = 1009,
};

/// Typed, ordered values for $1, $2, ... of one statement, handed to PQexecParams.
/// Every value the console or the worker sends to the server travels this way: SQL text is
/// never built from values (docs/architecture.md#named-statements). Text values go in text format;
/// bytea goes in binary format, byte for byte.
///
/// A text-format value cannot hold a NUL character: libpq reads it as a C string and would send
/// only what comes before the NUL, and PostgreSQL text has no NUL at all. Such a value is refused
/// here, for every caller (docs/security.md#text-from-the-database-is-plain-text): error() names
/// the parameter and PgConnection::exec/execPrepared return that error without sending anything.
class QueryParams
{
public:
    /// Text as UTF-8; a null QString is SQL NULL. A NUL character (U+0000) sets error().
    QueryParams &addText(const QString &value);
    QueryParams &addInt(int value);
    QueryParams &addBigInt(qint64 value);
    /// A decimal number in PostgreSQL's text form ("12.34", "-0.000000000000000001"),
    /// kept as text so no digit is lost to floating point.
    QueryParams &addNumeric(const QString &decimal);
    QueryParams &addBool(bool value);
    /// An instant; sent with its UTC offset, so the session TimeZone does not change its meaning.
    /// An invalid QDateTime is sent as NULL; display::infiniteFuture() / infinitePast() as
    /// 'infinity' / '-infinity', a year before 1 as PostgreSQL's "… BC".
    QueryParams &addTimestamp(const QDateTime &value);
    /// An instant exactly as the server printed it (e.g. a keyset value read back from a row),
    /// keeping its microseconds; null text is NULL.
    QueryParams &addTimestampText(const QByteArray &serverText);
    /// A JSON document as UTF-8 text; the server validates it.
    QueryParams &addJson(const QByteArray &utf8Json);
    /// Raw bytes, exactly as given (need not be UTF-8).
    QueryParams &addBytes(const QByteArray &bytes);
    /// A UUID; a null QUuid is sent as NULL.
    QueryParams &addUuid(const QUuid &value);
    QueryParams &addBigIntArray(const QList<qint64> &values);
    QueryParams &addUuidArray(const QList<QUuid> &values);
    /// A text[]; each element is quoted, so commas, quotes and braces stay inside it.
    QueryParams &addTextArray(const QStringList &values);
    /// SQL NULL of the given type.
    QueryParams &addNull(ParamType type);

    int size() const { return int(m_values.size()); }
    /// Why these parameters must not be sent, or nothing: the first text-format value that holds
    /// a NUL byte, as SQLSTATE 22021 (character_not_in_repertoire, what the server says of a NUL
    /// in text) naming its position ("$3"), never its value.
    std::optional<DbError> error() const { return m_error; }

    // For the libpq layer: arrays parallel to the parameters, valid while this object lives.
    std::vector<unsigned int> types() const;
    std::vector<const char *> values() const;
    std::vector<int> lengths() const;
    std::vector<int> formats() const;

private:
    struct Value
    {
        ParamType type;
        QByteArray data;
        bool isNull = false;
        bool binary = false;
    };
    QueryParams &add(ParamType type, QByteArray data, bool binary = false);

    std::vector<Value> m_values;
    std::optional<DbError> m_error;
};

} // namespace redrive::db

Q_DECLARE_METATYPE(redrive::db::QueryParams)
