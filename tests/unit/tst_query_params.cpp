// SPDX-License-Identifier: GPL-3.0-or-later
// How QueryParams encodes values for PQexecParams, without a server.
#include "models/db/query_params.h"
#include "models/display_format.h"

#include <QTest>
#include <QTimeZone>

using namespace redrive::db;

class TestQueryParams : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void typesAndFormats()
    {
        QueryParams p;
        p.addText(QStringLiteral("ä"))
            .addBigInt(-5)
            .addBytes(QByteArray("\xff\x00", 2))
            .addNull(ParamType::Uuid);
        QCOMPARE(p.size(), 4);
        const auto types = p.types();
        QCOMPARE(types[0], 25u);
        QCOMPARE(types[1], 20u);
        QCOMPARE(types[2], 17u);
        QCOMPARE(types[3], 2950u);
        QCOMPARE(p.formats()[2], 1); // bytea travels in binary format
        QCOMPARE(p.formats()[0], 0);
        QCOMPARE(p.lengths()[2], 2); // the embedded NUL is kept
        QVERIFY(p.values()[3] == nullptr);
        QCOMPARE(QByteArray(p.values()[0]), QByteArray("\xc3\xa4"));
    }

    void nullQStringIsSqlNull()
    {
        QueryParams p;
        p.addText(QString()).addText(QStringLiteral(""));
        QVERIFY(p.values()[0] == nullptr);
        QVERIFY(p.values()[1] != nullptr); // empty string is a value, not NULL
    }

    void arrays()
    {
        QueryParams p;
        p.addBigIntArray({ 1, -2, 3 })
            .addBigIntArray({})
            .addUuidArray({ QUuid(QStringLiteral("{550e8400-e29b-41d4-a716-446655440000}")) });
        QCOMPARE(QByteArray(p.values()[0]), QByteArray("{1,-2,3}"));
        QCOMPARE(QByteArray(p.values()[1]), QByteArray("{}"));
        QCOMPARE(QByteArray(p.values()[2]), QByteArray("{550e8400-e29b-41d4-a716-446655440000}"));
    }

    void timestampIsUtcWithOffset()
    {
        QueryParams p;
        const QDateTime t(QDate(2026, 3, 29), QTime(1, 30, 0, 250), QTimeZone(3600));
        p.addTimestamp(t).addTimestamp(QDateTime());
        QCOMPARE(QByteArray(p.values()[0]), QByteArray("2026-03-29T00:30:00.250Z"));
        QVERIFY(p.values()[1] == nullptr);
    }

    // The ends of timestamptz's range go back as PostgreSQL reads them (docs/domain.md "Times
    // at the ends of the range"); Qt writes no ISO text for them.
    void timestampAtTheEndsOfTheRange()
    {
        QueryParams p;
        p.addTimestamp(redrive::display::infiniteFuture())
            .addTimestamp(redrive::display::infinitePast())
            .addTimestamp(QDateTime(QDate(-4713, 1, 1), QTime(0, 0), QTimeZone::utc()))
            .addTimestamp(QDateTime(QDate(294276, 12, 31), QTime(23, 0, 0, 5), QTimeZone::utc()));
        QCOMPARE(QByteArray(p.values()[0]), QByteArray("infinity"));
        QCOMPARE(QByteArray(p.values()[1]), QByteArray("-infinity"));
        QCOMPARE(QByteArray(p.values()[2]), QByteArray("4713-01-01 00:00:00.000+00 BC"));
        QCOMPARE(QByteArray(p.values()[3]), QByteArray("294276-12-31 23:00:00.005+00"));
    }

    void nulInTextIsAnError()
    {
        QueryParams clean;
        clean.addText(QStringLiteral("a")).addBytes(QByteArray("\0", 1)); // bytea may hold NUL
        QVERIFY(!clean.error().has_value());
        QueryParams p;
        p.addInt(1)
            .addText(QStringLiteral("a") + QChar(0) + QStringLiteral("b"))
            .addTextArray({ QStringLiteral("x") + QChar(0) });
        QVERIFY(p.error().has_value());
        QCOMPARE(p.error()->sqlState(), QStringLiteral("22021"));
        QCOMPARE(p.error()->message(),
                 QStringLiteral("parameter $2 holds a NUL character (U+0000), which PostgreSQL "
                                "text cannot hold; nothing was sent"));
        QCOMPARE(p.size(), 3); // positions stay as the caller numbered them
        QueryParams json;
        json.addJson(QByteArray("{\"a\":\"\0\"}", 10));
        QCOMPARE(json.error()->message().left(13), QStringLiteral("parameter $1 "));
    }
};

QTEST_GUILESS_MAIN(TestQueryParams)
#include "tst_query_params.moc"
