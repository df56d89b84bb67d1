// SPDX-License-Identifier: GPL-3.0-or-later
// Parsing PostgreSQL's text output for timestamptz (DateStyle ISO), without a server.
#include "models/db/result_set.h"
#include "models/display_format.h"

#include <QTest>
#include <QTimeZone>

using namespace redrive::db;

class TestResultSet : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void parseTimestampTz_data()
    {
        QTest::addColumn<QByteArray>("text");
        QTest::addColumn<QDateTime>("expected");
        const QDateTime base(QDate(2026, 11, 29), QTime(16, 46, 27), QTimeZone::utc());
        QTest::newRow("utc, no fraction") << QByteArray("2026-11-29 16:46:27+00") << base;
        QTest::newRow("microseconds truncated to ms")
            << QByteArray("2026-11-29 16:46:27.123456+00") << base.addMSecs(123);
        QTest::newRow("one fraction digit")
            << QByteArray("2026-11-29 16:46:27.5+00") << base.addMSecs(500);
        QTest::newRow("negative offset") << QByteArray("2026-11-29 11:46:27-05") << base;
        QTest::newRow("offset with minutes") << QByteArray("2026-11-29 22:16:27+05:30") << base;
        QTest::newRow("offset with seconds (LMT)")
            << QByteArray("1850-01-01 00:00:00+00:19:32")
            << QDateTime(QDate(1849, 12, 31), QTime(23, 40, 28), QTimeZone::utc());
        // The ends of timestamptz's range (docs/domain.md "Times at the ends of the range").
        QTest::newRow("infinity") << QByteArray("infinity") << redrive::display::infiniteFuture();
        QTest::newRow("-infinity") << QByteArray("-infinity") << redrive::display::infinitePast();
        QTest::newRow("4713 BC") << QByteArray("4713-01-01 00:00:00+00 BC")
                                 << QDateTime(QDate(-4713, 1, 1), QTime(0, 0), QTimeZone::utc());
        QTest::newRow("year 294276")
            << QByteArray("294276-12-31 23:00:00+00")
            << QDateTime(QDate(294276, 12, 31), QTime(23, 0), QTimeZone::utc());
        QTest::newRow("not a timestamp") << QByteArray("Infinity") << QDateTime();
        QTest::newRow("empty") << QByteArray() << QDateTime();
    }
    void parseTimestampTz()
    {
        QFETCH(QByteArray, text);
        QFETCH(QDateTime, expected);
        const QDateTime parsed = redrive::db::parseTimestampTz(text);
        QCOMPARE(parsed.isValid(), expected.isValid());
        if (expected.isValid())
            QCOMPARE(parsed.toMSecsSinceEpoch(), expected.toMSecsSinceEpoch());
    }

    void emptyResultIsSafe()
    {
        const ResultSet empty;
        QCOMPARE(empty.rowCount(), 0);
        QVERIFY(empty.isNull(0, 0));
        QVERIFY(empty.text(0, 0).isNull());
        QCOMPARE(empty.columnIndex(QStringLiteral("x")), -1);
    }
};

QTEST_GUILESS_MAIN(TestResultSet)
#include "tst_result_set.moc"
