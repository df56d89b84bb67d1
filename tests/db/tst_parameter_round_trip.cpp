// SPDX-License-Identifier: GPL-3.0-or-later
// Values sent as typed parameters come back unchanged from a real PostgreSQL.
#include "tests/support/test_database.h"

#include <QTest>
#include <QTimeZone>

using namespace redrive;
using namespace redrive::db;

class TestParameterRoundTrip : public QObject
{
    Q_OBJECT
private:
    std::unique_ptr<test::TestDatabase> m_db;
    PgConnection m_conn;

    ResultSet one(const QByteArray &sql, const QueryParams &params)
    {
        auto r = m_conn.exec(sql, params);
        if (!r)
            qFatal("%s failed: %s", sql.constData(), qPrintable(r.error().summary()));
        return r.value();
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_db = std::make_unique<test::TestDatabase>(QStringLiteral("params"));
        QVERIFY2(m_db->isValid(), qPrintable(m_db->error()));
        m_conn = m_db->connect();
    }
    void cleanupTestCase()
    {
        m_conn = PgConnection();
        m_db.reset();
    }

    void nullBothWays_data()
    {
        QTest::addColumn<ParamType>("type");
        QTest::newRow("text") << ParamType::Text;
        QTest::newRow("int") << ParamType::Int;
        QTest::newRow("bigint") << ParamType::BigInt;
        QTest::newRow("numeric") << ParamType::Numeric;
        QTest::newRow("bool") << ParamType::Bool;
        QTest::newRow("timestamptz") << ParamType::TimestampTz;
        QTest::newRow("jsonb") << ParamType::Jsonb;
        QTest::newRow("bytea") << ParamType::Bytea;
        QTest::newRow("uuid") << ParamType::Uuid;
        QTest::newRow("bigint[]") << ParamType::BigIntArray;
        QTest::newRow("uuid[]") << ParamType::UuidArray;
    }
    void nullBothWays()
    {
        QFETCH(ParamType, type);
        const ResultSet r
            = one("SELECT $1 IS NULL, $1, pg_typeof($1)::text", QueryParams().addNull(type));
        QCOMPARE(r.boolean(0, 0), std::optional<bool>(true));
        QVERIFY(r.isNull(0, 1));
        QVERIFY(r.text(0, 1).isNull());
        QVERIFY(!r.bigInt(0, 1).has_value());
        QVERIFY(!r.timestamp(0, 1).isValid());
        QVERIFY(r.bytes(0, 1).isNull());
        QVERIFY(!r.isNull(0, 2)); // the server knew the type without guessing
    }

    void byteaThatIsNotUtf8()
    {
        QByteArray bytes;
        for (int i = 0; i < 256; ++i)
            bytes.append(char(i));
        bytes.append("\xc3\x28\xff\xfe\x00\x80", 6); // invalid UTF-8 sequences and a NUL
        const ResultSet r = one("SELECT $1::bytea, length($1::bytea), $2::bytea",
                                QueryParams().addBytes(bytes).addBytes(QByteArray("")));
        QCOMPARE(r.bytes(0, 0), bytes);
        QCOMPARE(r.bigInt(0, 1), std::optional<qint64>(bytes.size()));
        QVERIFY(!r.isNull(0, 2));
        QCOMPARE(r.bytes(0, 2).size(), 0);
        QVERIFY(!r.bytes(0, 2).isNull()); // empty bytes are not NULL
    }

    void nonAsciiText()
    {
        const QString text = QStringLiteral("Zürich · 東京 · 🚀 · עברית · ñ'\"\\%_[");
        const ResultSet r = one("SELECT $1::text, char_length($1::text), octet_length($1::text)",
                                QueryParams().addText(text));
        QCOMPARE(r.text(0, 0), text);
        QCOMPARE(r.integer(0, 1), std::optional<int>(int(text.toUcs4().size())));
        QCOMPARE(r.integer(0, 2), std::optional<int>(int(text.toUtf8().size())));
    }

    // A leading byte order mark is a character of the value: QString::fromUtf8 dropped it, so
    // the key "\uFEFFk1" read back as "k1" and an action on it went to the key "k1" beside it.
    void leadingByteOrderMarkIsKept()
    {
        const QString bom = QString(QChar(0xFEFF));
        for (const QString &text : { bom + QStringLiteral("k1"), bom + bom + QStringLiteral("k1"),
                                     bom, QStringLiteral("k1") + bom }) {
            const ResultSet r = one("SELECT $1::text, $1::text = 'k1', octet_length($1::text)",
                                    QueryParams().addText(text));
            QCOMPARE(r.text(0, 0), text);
            QCOMPARE(r.textPrefix(0, 0, 1000), text);
            QCOMPARE(r.text(0, 1), QStringLiteral("f"));
            // Sent back as read, it names the same value.
            const ResultSet again = one("SELECT $1::text = $2::text",
                                        QueryParams().addText(r.text(0, 0)).addText(text));
            QCOMPARE(again.text(0, 0), QStringLiteral("t"));
        }
    }

    void timestampUnderTwoSessionTimeZones_data()
    {
        QTest::addColumn<QString>("sessionZone");
        QTest::newRow("UTC") << QStringLiteral("UTC");
        QTest::newRow("America/New_York") << QStringLiteral("America/New_York");
        QTest::newRow("Asia/Kolkata") << QStringLiteral("Asia/Kolkata");
    }
    void timestampUnderTwoSessionTimeZones()
    {
        QFETCH(QString, sessionZone);
        ConnectionSettings s = m_db->settings();
        s.sessionTimeZone = sessionZone;
        auto conn = PgConnection::open(s);
        QVERIFY2(conn.ok(), conn.ok() ? "" : qPrintable(conn.error().summary()));
        // Across a DST change in New York (2026-03-08), with milliseconds.
        const QDateTime instant(QDate(2026, 3, 8), QTime(6, 59, 59, 987), QTimeZone::utc());
        auto r = conn->exec("SELECT $1::timestamptz, current_setting('TimeZone'),"
                            " extract(epoch FROM $1::timestamptz)::numeric(20,3)::text,"
                            " $1::timestamptz = '2026-03-08 06:59:59.987+00'::timestamptz",
                            QueryParams().addTimestamp(instant.toTimeZone(QTimeZone(3600 * 9))));
        QVERIFY(r.ok());
        QCOMPARE(r->text(0, 1), sessionZone);
        QCOMPARE(r->timestamp(0, 0).toMSecsSinceEpoch(), instant.toMSecsSinceEpoch());
        QCOMPARE(r->text(0, 2), QStringLiteral("1772953199.987"));
        QCOMPARE(r->boolean(0, 3), std::optional<bool>(true));
        // What the server's own clock says reads back as a valid instant in every zone.
        auto now = conn->exec("SELECT now()");
        QVERIFY(now.ok());
        QVERIFY(qAbs(now->timestamp(0, 0).secsTo(QDateTime::currentDateTimeUtc())) < 120);
    }

    void numericExact_data()
    {
        QTest::addColumn<QString>("value");
        QTest::newRow("2 digits") << QStringLiteral("12.34");
        QTest::newRow("18 digits") << QStringLiteral("123456789.123456789");
        QTest::newRow("18 fraction digits") << QStringLiteral("-0.000000000000000001");
        QTest::newRow("cents of a large amount") << QStringLiteral("999999999999999999.99");
    }
    void numericExact()
    {
        QFETCH(QString, value);
        const ResultSet r = one("SELECT $1::numeric, ($1::numeric + 0)::text, scale($1::numeric)",
                                QueryParams().addNumeric(value));
        QCOMPARE(r.text(0, 0), value);
        QCOMPARE(r.text(0, 1), value); // arithmetic on the server keeps every digit
        const qsizetype dot = value.indexOf(QLatin1Char('.'));
        QCOMPARE(r.integer(0, 2), std::optional<int>(int(value.size() - dot - 1)));
    }

    void scalarsAndArrays()
    {
        const QUuid id = QUuid::createUuid();
        const QUuid other = QUuid::createUuid();
        const ResultSet r
            = one("SELECT $1::int, $2::bigint, $3::bool, $4::bool, $5::jsonb ->> 'name', $6::uuid,"
                  " $7::bigint[], cardinality($7::bigint[]), $8::uuid[] @> ARRAY[$6::uuid]",
                  QueryParams()
                      .addInt(-2147483647)
                      .addBigInt(std::numeric_limits<qint64>::max())
                      .addBool(true)
                      .addBool(false)
                      .addJson(QStringLiteral("{\"name\": \"Müller \\\"quoted\\\"\"}").toUtf8())
                      .addUuid(id)
                      .addBigIntArray({ 9007199254740993LL, -1, 0 })
                      .addUuidArray({ other, id }));
        QCOMPARE(r.integer(0, 0), std::optional<int>(-2147483647));
        QCOMPARE(r.bigInt(0, 1), std::optional<qint64>(std::numeric_limits<qint64>::max()));
        QCOMPARE(r.boolean(0, 2), std::optional<bool>(true));
        QCOMPARE(r.boolean(0, 3), std::optional<bool>(false));
        QCOMPARE(r.text(0, 4), QStringLiteral("Müller \"quoted\""));
        QCOMPARE(r.uuid(0, 5), id);
        QCOMPARE(r.bigIntArray(0, 6), (QList<qint64> { 9007199254740993LL, -1, 0 }));
        QCOMPARE(r.integer(0, 7), std::optional<int>(3));
        QCOMPARE(r.boolean(0, 8), std::optional<bool>(true));
    }

    void invalidJsonIsRejectedByTheServer()
    {
        auto r = m_conn.exec("SELECT $1::jsonb", QueryParams().addJson("{not json"));
        QVERIFY(!r.ok());
        QCOMPARE(r.error().sqlState(), QStringLiteral("22P02"));
    }

    void textWithNulIsRefusedBeforeSending()
    {
        // libpq would send "ab" and drop the rest; the row must not be written cut.
        QVERIFY(m_conn.exec("CREATE TEMP TABLE nul_probe (x text)").ok());
        const QString withNul = QStringLiteral("ab") + QChar(0) + QStringLiteral("cd");
        auto r = m_conn.exec("INSERT INTO nul_probe VALUES ($1)", QueryParams().addText(withNul));
        QVERIFY(!r.ok());
        QCOMPARE(r.error().sqlState(), QStringLiteral("22021"));
        QCOMPARE(r.error().message(),
                 QStringLiteral("parameter $1 holds a NUL character (U+0000), which PostgreSQL "
                                "text cannot hold; nothing was sent"));
        QVERIFY(m_conn.prepare("nul_insert", "INSERT INTO nul_probe VALUES ($1), ($2)").ok());
        auto p = m_conn.execPrepared("nul_insert",
                                     QueryParams().addText(QStringLiteral("ok")).addText(withNul));
        QVERIFY(!p.ok());
        QCOMPARE(p.error().sqlState(), QStringLiteral("22021"));
        QVERIFY(p.error().message().startsWith(QStringLiteral("parameter $2 holds a NUL")));
        // Nothing reached the table, and the connection still works.
        QCOMPARE(one("SELECT count(*) FROM nul_probe", {}).bigInt(0, 0), std::optional<qint64>(0));
    }

    void parametersAreNeverSql()
    {
        // A value that looks like SQL stays a value.
        const QString evil = QStringLiteral("x'); DROP TABLE redrive.job; --");
        const ResultSet r
            = one("SELECT $1::text = $2::text, to_regclass('redrive.job') IS NOT NULL",
                  QueryParams().addText(evil).addText(evil));
        QCOMPARE(r.boolean(0, 0), std::optional<bool>(true));
        QCOMPARE(r.boolean(0, 1), std::optional<bool>(true));
    }

    void preparedStatement()
    {
        QVERIFY(m_conn.prepare("add", "SELECT $1::bigint + $2::bigint").ok());
        auto r = m_conn.execPrepared("add", QueryParams().addBigInt(40).addBigInt(2));
        QVERIFY(r.ok());
        QCOMPARE(r->bigInt(0, 0), std::optional<qint64>(42));
    }
};

QTEST_GUILESS_MAIN(TestParameterRoundTrip)
#include "tst_parameter_round_trip.moc"
