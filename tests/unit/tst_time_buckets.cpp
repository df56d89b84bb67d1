// SPDX-License-Identifier: GPL-3.0-or-later
// Chart buckets on the operator's wall clock (models/time_buckets.h), without a server: local
// days of 23 and 25 hours across daylight-saving changes, hours of a +05:30 zone starting at
// its half hours, minute widths from the epoch, and a row placed in the bucket that holds it.
#include "models/time_buckets.h"

#include <QTest>

using namespace redrive;

namespace {

constexpr qint64 kMinute = 60 * 1000;
constexpr qint64 kHour = 60 * kMinute;
constexpr qint64 kDay = 24 * kHour;

QDateTime utc(const char *iso)
{
    QDateTime t = QDateTime::fromString(QString::fromLatin1(iso), Qt::ISODate);
    t.setTimeZone(QTimeZone::utc());
    return t;
}

QString isoList(const QList<QDateTime> &times)
{
    QStringList out;
    for (const QDateTime &t : times)
        out << t.toUTC().toString(Qt::ISODate);
    return out.join(QLatin1Char(' '));
}

} // namespace

class TestTimeBuckets : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void starts_data()
    {
        QTest::addColumn<QByteArray>("zone");
        QTest::addColumn<QDateTime>("from");
        QTest::addColumn<QDateTime>("to");
        QTest::addColumn<qint64>("widthMs");
        QTest::addColumn<QString>("expected");
        // Berlin springs forward on 2026-03-29: that local day is 23 hours.
        QTest::newRow("Berlin days across spring forward")
            << QByteArray("Europe/Berlin") << utc("2026-03-28T12:00:00")
            << utc("2026-03-31T00:00:00") << kDay
            << "2026-03-27T23:00:00Z 2026-03-28T23:00:00Z 2026-03-29T22:00:00Z "
               "2026-03-30T22:00:00Z";
        // New York falls back on 2026-11-01: that local day is 25 hours.
        QTest::newRow("New York days across fall back")
            << QByteArray("America/New_York") << utc("2026-11-01T04:00:00")
            << utc("2026-11-03T00:00:00") << kDay << "2026-11-01T04:00:00Z 2026-11-02T05:00:00Z";
        // The hour Berlin skips (02:00-03:00 local) is no bucket; 01:00 and 03:00 are.
        QTest::newRow("Berlin hours across spring forward")
            << QByteArray("Europe/Berlin") << utc("2026-03-28T23:30:00")
            << utc("2026-03-29T02:00:00") << kHour
            << "2026-03-28T23:00:00Z 2026-03-29T00:00:00Z 2026-03-29T01:00:00Z";
        // The hour Berlin repeats (02:00-03:00 local twice) is one bucket of two hours.
        QTest::newRow("Berlin hours across fall back")
            << QByteArray("Europe/Berlin") << utc("2026-10-24T23:00:00")
            << utc("2026-10-25T03:00:00") << kHour
            << "2026-10-24T23:00:00Z 2026-10-25T00:00:00Z 2026-10-25T02:00:00Z";
        QTest::newRow("Kolkata hours start at :30 UTC")
            << QByteArray("Asia/Kolkata") << utc("2026-06-01T10:45:00")
            << utc("2026-06-01T12:00:00") << kHour << "2026-06-01T10:30:00Z 2026-06-01T11:30:00Z";
        QTest::newRow("Kolkata 6-hour buckets from local midnight")
            << QByteArray("Asia/Kolkata") << utc("2026-06-01T00:00:00")
            << utc("2026-06-01T12:00:00") << 6 * kHour
            << "2026-05-31T18:30:00Z 2026-06-01T00:30:00Z 2026-06-01T06:30:00Z";
        QTest::newRow("UTC days") << QByteArray("UTC") << utc("2026-03-28T12:00:00")
                                  << utc("2026-03-30T00:00:00") << kDay
                                  << "2026-03-28T00:00:00Z 2026-03-29T00:00:00Z";
        QTest::newRow("15 minutes from the epoch, whatever the zone")
            << QByteArray("Asia/Kolkata") << utc("2026-06-01T10:50:00")
            << utc("2026-06-01T11:20:00") << 15 * kMinute
            << "2026-06-01T10:45:00Z 2026-06-01T11:00:00Z 2026-06-01T11:15:00Z";
        QTest::newRow("empty range") << QByteArray("UTC") << utc("2026-06-01T10:00:00")
                                     << utc("2026-06-01T10:00:00") << kHour << "";
    }
    void starts()
    {
        QFETCH(QByteArray, zone);
        QFETCH(QDateTime, from);
        QFETCH(QDateTime, to);
        QFETCH(qint64, widthMs);
        QFETCH(QString, expected);
        const QTimeZone tz(zone);
        QVERIFY(tz.isValid());
        QCOMPARE(isoList(time_buckets::starts(from, to, widthMs, tz)), expected);
    }

    void indexOfPlacesARowInTheBucketThatHoldsIt()
    {
        const QTimeZone berlin("Europe/Berlin");
        const QList<QDateTime> starts = time_buckets::starts(
            utc("2026-10-24T23:00:00"), utc("2026-10-25T03:00:00"), kHour, berlin);
        const QDateTime end = time_buckets::next(starts.constLast(), kHour, berlin);
        QCOMPARE(end, utc("2026-10-25T03:00:00"));
        // PostgreSQL names the repeated local 02:00 by its later instant (01:00 UTC): it is
        // still the two-hour bucket that starts at 00:00 UTC.
        QCOMPARE(time_buckets::indexOf(starts, end, utc("2026-10-25T01:00:00")), 1);
        QCOMPARE(time_buckets::indexOf(starts, end, utc("2026-10-25T00:00:00")), 1);
        QCOMPARE(time_buckets::indexOf(starts, end, utc("2026-10-24T23:59:59")), 0);
        QCOMPARE(time_buckets::indexOf(starts, end, utc("2026-10-25T02:00:00")), 2);
        QCOMPARE(time_buckets::indexOf(starts, end, utc("2026-10-25T03:00:00")), -1);
        QCOMPARE(time_buckets::indexOf(starts, end, utc("2026-10-24T22:59:59")), -1);
    }

    void wholeHourOffsets()
    {
        const QDateTime from = utc("2026-03-01T00:00:00");
        const QDateTime to = utc("2026-04-30T00:00:00");
        QVERIFY(time_buckets::hasWholeHourOffsets(QTimeZone("Europe/Berlin"), from, to));
        QVERIFY(time_buckets::hasWholeHourOffsets(QTimeZone::utc(), from, to));
        QVERIFY(!time_buckets::hasWholeHourOffsets(QTimeZone("Asia/Kolkata"), from, to));
        QVERIFY(!time_buckets::hasWholeHourOffsets(QTimeZone("Asia/Kathmandu"), from, to));
        QCOMPARE(time_buckets::serverName(QTimeZone("Europe/Berlin")),
                 QStringLiteral("Europe/Berlin"));
        QCOMPARE(time_buckets::serverName(QTimeZone::utc()), QStringLiteral("UTC"));
    }
};

QTEST_APPLESS_MAIN(TestTimeBuckets)
#include "tst_time_buckets.moc"
