// SPDX-License-Identifier: GPL-3.0-or-later
// The one display-formatting module (models/display_format.h): money exact in minor units with
// the ISO 4217 exponent, unknown currencies never guessed, typed amounts read back exactly or
// refused, JSON printed without changing a literal or the member order, times in a fixed zone,
// ages and durations at their unit boundaries.
#include "models/display_format.h"

#include <QLocale>
#include <QTest>
#include <algorithm>
#include <limits>

using namespace redrive;

using OptionalMinor = std::optional<qint64>;
Q_DECLARE_METATYPE(OptionalMinor)

class TestDisplayFormat : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates)); }

    void differingWords_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QStringList>("lookAlikes");
        QTest::addColumn<QString>("expected");
        const QString usd
            = QStringLiteral("<n> invalid_request: amount <n> must be at least <n> in USD");
        QTest::newRow("currency at the end")
            << usd
            << QStringList { QStringLiteral(
                                 "<n> invalid_request: amount <n> must be at least <n> in EUR"),
                             QStringLiteral(
                                 "<n> invalid_request: amount <n> must be at least <n> in GBP") }
            << QStringLiteral("\u2026USD");
        QTest::newRow("a word in the middle")
            << QStringLiteral("timeout waiting for smtp after data")
            << QStringList { QStringLiteral("timeout waiting for http after data") }
            << QStringLiteral("\u2026smtp\u2026");
        QTest::newRow("first word") << QStringLiteral("charge failed for <id>")
                                    << QStringList { QStringLiteral("refund failed for <id>") }
                                    << QStringLiteral("charge\u2026");
        QTest::newRow("prefix of a longer look-alike")
            << QStringLiteral("unknown event type")
            << QStringList { QStringLiteral("unknown event type in <id>") }
            << QStringLiteral("\u2026type");
        QTest::newRow("longer than a look-alike")
            << QStringLiteral("unknown event type in <id>")
            << QStringList { QStringLiteral("unknown event type") }
            << QStringLiteral("\u2026in <id>");
        QTest::newRow("nothing shared")
            << QStringLiteral("a b") << QStringList { QStringLiteral("c d") }
            << QStringLiteral("a b");
        QTest::newRow("no look-alikes") << usd << QStringList {} << usd;
        QTest::newRow("same text") << usd << QStringList { usd } << usd;
        QTest::newRow("same text left out")
            << usd
            << QStringList { usd,
                             QStringLiteral(
                                 "<n> invalid_request: amount <n> must be at least <n> in EUR") }
            << QStringLiteral("\u2026USD");
        QTest::newRow("shared only with one of two")
            << QStringLiteral("x y z")
            << QStringList { QStringLiteral("x y w"), QStringLiteral("v y z") }
            << QStringLiteral("x y z");
    }
    void differingWords()
    {
        QFETCH(QString, text);
        QFETCH(QStringList, lookAlikes);
        QFETCH(QString, expected);
        QCOMPARE(display::differingWords(text, lookAlikes), expected);
    }

    void money_data()
    {
        QTest::addColumn<qint64>("minor");
        QTest::addColumn<QString>("currency");
        QTest::addColumn<QString>("expected");
        QTest::newRow("JPY 1500") << qint64(1500) << "JPY"
                                  << "1,500 JPY";
        QTest::newRow("USD 15042") << qint64(15042) << "USD"
                                   << "150.42 USD";
        QTest::newRow("KWD 1250") << qint64(1250) << "KWD"
                                  << "1.250 KWD";
        QTest::newRow("USD zero") << qint64(0) << "USD"
                                  << "0.00 USD";
        QTest::newRow("USD 5 cents") << qint64(5) << "USD"
                                     << "0.05 USD";
        QTest::newRow("EUR negative") << qint64(-15042) << "EUR"
                                      << "-150.42 EUR";
        QTest::newRow("EUR negative below one") << qint64(-5) << "EUR"
                                                << "-0.05 EUR";
        QTest::newRow("JPY negative grouped") << qint64(-1234567) << "JPY"
                                              << "-1,234,567 JPY";
        QTest::newRow("KRW million") << qint64(1000000) << "KRW"
                                     << "1,000,000 KRW";
        QTest::newRow("GBP grouping") << qint64(123456789) << "GBP"
                                      << "1,234,567.89 GBP";
        QTest::newRow("three digits no group") << qint64(99999) << "CHF"
                                               << "999.99 CHF";
        QTest::newRow("BHD negative") << qint64(-1) << "BHD"
                                      << "-0.001 BHD";
        QTest::newRow("CLF exponent 4") << qint64(12345) << "CLF"
                                        << "1.2345 CLF";
        QTest::newRow("lower case code") << qint64(15042) << "usd"
                                         << "150.42 USD";
        QTest::newRow("qint64 max") << std::numeric_limits<qint64>::max() << "USD"
                                    << "92,233,720,368,547,758.07 USD";
        QTest::newRow("qint64 min") << std::numeric_limits<qint64>::min() << "USD"
                                    << "-92,233,720,368,547,758.08 USD";
        QTest::newRow("unknown code") << qint64(15042) << "XYZ"
                                      << "15042 minor units XYZ";
        QTest::newRow("unknown negative") << qint64(-7) << "ABC"
                                          << "-7 minor units ABC";
        QTest::newRow("not a code") << qint64(15042) << "US"
                                    << "15042 minor units US";
        QTest::newRow("no code") << qint64(15042) << ""
                                 << "15042 minor units";
    }
    void money()
    {
        QFETCH(qint64, minor);
        QFETCH(QString, currency);
        QFETCH(QString, expected);
        QCOMPARE(display::money(minor, currency), expected);
    }

    void exponent_data()
    {
        QTest::addColumn<QString>("currency");
        QTest::addColumn<int>("expected"); // -1: unknown
        for (const char *c : { "JPY", "KRW", "CLP", "ISK", "VND", "UGX", "XAF", "XOF" })
            QTest::newRow(c) << QString::fromLatin1(c) << 0;
        for (const char *c : { "USD", "EUR", "GBP", "CHF", "SEK", "CAD", "AUD", "INR" })
            QTest::newRow(c) << QString::fromLatin1(c) << 2;
        for (const char *c : { "KWD", "BHD", "JOD", "OMR", "TND", "IQD", "LYD" })
            QTest::newRow(c) << QString::fromLatin1(c) << 3;
        QTest::newRow("trimmed, any case") << " jpy " << 0;
        QTest::newRow("unknown") << "XYZ" << -1;
        QTest::newRow("empty") << "" << -1;
        QTest::newRow("too long") << "USDX" << -1;
    }
    void exponent()
    {
        QFETCH(QString, currency);
        QFETCH(int, expected);
        const std::optional<int> e = display::currencyExponent(currency);
        QCOMPARE(e.value_or(-1), expected);
    }

    void parseMoney_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("currency");
        QTest::addColumn<OptionalMinor>("expected");
        const OptionalMinor refused;
        QTest::newRow("USD two decimals") << "150.42"
                                          << "USD" << OptionalMinor(15042);
        QTest::newRow("USD one decimal") << "150.4"
                                         << "USD" << OptionalMinor(15040);
        QTest::newRow("USD whole") << "150"
                                   << "USD" << OptionalMinor(15000);
        QTest::newRow("USD with code") << " 150.42 USD "
                                       << "USD" << OptionalMinor(15042);
        QTest::newRow("USD grouped") << "1,234,567.89"
                                     << "USD" << OptionalMinor(123456789);
        QTest::newRow("USD zero") << "0.00"
                                  << "USD" << OptionalMinor(0);
        QTest::newRow("JPY") << "1,500"
                             << "JPY" << OptionalMinor(1500);
        QTest::newRow("KWD") << "1.250"
                             << "KWD" << OptionalMinor(1250);
        QTest::newRow("KWD short fraction") << "1.25"
                                            << "KWD" << OptionalMinor(1250);
        QTest::newRow("qint64 max") << "92233720368547758.07"
                                    << "USD" << OptionalMinor(std::numeric_limits<qint64>::max());
        QTest::newRow("too many decimals") << "150.421"
                                           << "USD" << refused;
        QTest::newRow("JPY decimals") << "1500.0"
                                      << "JPY" << refused;
        QTest::newRow("KWD four decimals") << "1.2500"
                                           << "KWD" << refused;
        QTest::newRow("minus") << "-150.42"
                               << "USD" << refused;
        QTest::newRow("plus") << "+150.42"
                              << "USD" << refused;
        QTest::newRow("garbage") << "15o.42"
                                 << "USD" << refused;
        QTest::newRow("two points") << "1.2.3"
                                    << "USD" << refused;
        QTest::newRow("trailing point") << "150."
                                        << "USD" << refused;
        QTest::newRow("leading point") << ".5"
                                       << "USD" << refused;
        QTest::newRow("empty") << ""
                               << "USD" << refused;
        QTest::newRow("exponent notation") << "1e3"
                                           << "USD" << refused;
        QTest::newRow("bad grouping") << "12,34.00"
                                      << "USD" << refused;
        QTest::newRow("group too long first") << "1234,567"
                                              << "USD" << refused;
        QTest::newRow("other code") << "150.42 EUR"
                                    << "USD" << refused;
        QTest::newRow("overflow") << "92233720368547758.08"
                                  << "USD" << refused;
        QTest::newRow("huge") << "99999999999999999999999"
                              << "JPY" << refused;
        QTest::newRow("unknown currency") << "150.42"
                                          << "XYZ" << refused;
        QTest::newRow("inner space") << "1 500"
                                     << "JPY" << refused;
    }
    void parseMoney()
    {
        QFETCH(QString, text);
        QFETCH(QString, currency);
        QFETCH(OptionalMinor, expected);
        QCOMPARE(display::parseMoney(text, currency), expected);
    }

    void moneyRoundTrip_data()
    {
        QTest::addColumn<qint64>("minor");
        QTest::addColumn<QString>("currency");
        QTest::newRow("USD") << qint64(15042) << "USD";
        QTest::newRow("JPY") << qint64(1500) << "JPY";
        QTest::newRow("KWD") << qint64(1250) << "KWD";
        QTest::newRow("KWD small") << qint64(7) << "KWD";
        QTest::newRow("EUR zero") << qint64(0) << "EUR";
        QTest::newRow("GBP large") << qint64(123456789012) << "GBP";
        QTest::newRow("max") << std::numeric_limits<qint64>::max() << "JPY";
    }
    void moneyRoundTrip()
    {
        QFETCH(qint64, minor);
        QFETCH(QString, currency);
        QCOMPARE(display::parseMoney(display::money(minor, currency), currency),
                 OptionalMinor(minor));
        QCOMPARE(display::parseMoney(*display::moneyAmount(minor, currency), currency),
                 OptionalMinor(minor));
    }

    void json_data()
    {
        QTest::addColumn<QByteArray>("input");
        QTest::addColumn<QByteArray>("pretty");
        QTest::addColumn<QByteArray>("compact");
        QTest::newRow("big integer and trailing zeros")
            << QByteArray(R"({"id": 12345678901234567890, "rate": 0.1000})")
            << QByteArray("{\n    \"id\": 12345678901234567890,\n    \"rate\": 0.1000\n}")
            << QByteArray(R"({"id":12345678901234567890,"rate":0.1000})");
        QTest::newRow("key order kept")
            << QByteArray(R"({"z": 1, "a": 2, "m": {"y": [], "b": {}}})")
            << QByteArray("{\n    \"z\": 1,\n    \"a\": 2,\n    \"m\": {\n        \"y\": [],\n"
                          "        \"b\": {}\n    }\n}")
            << QByteArray(R"({"z":1,"a":2,"m":{"y":[],"b":{}}})");
        QTest::newRow("strings verbatim")
            << QByteArray(
                   "{\"k\": \"a { b , c } : [ d ]\", \"e\": \"q\\\"u \\\\\", \"u\": \"\\u00e9\"}")
            << QByteArray("{\n    \"k\": \"a { b , c } : [ d ]\",\n    \"e\": \"q\\\"u \\\\\",\n"
                          "    \"u\": \"\\u00e9\"\n}")
            << QByteArray(
                   "{\"k\":\"a { b , c } : [ d ]\",\"e\":\"q\\\"u \\\\\",\"u\":\"\\u00e9\"}");
        QTest::newRow("numbers in array") << QByteArray("[ 1e400 , -0.0,\n 1.10 ]")
                                          << QByteArray("[\n    1e400,\n    -0.0,\n    1.10\n]")
                                          << QByteArray("[1e400,-0.0,1.10]");
        QTest::newRow("scalar") << QByteArray(" 42 ") << QByteArray("42") << QByteArray("42");
    }
    void json()
    {
        QFETCH(QByteArray, input);
        QFETCH(QByteArray, pretty);
        QFETCH(QByteArray, compact);
        QCOMPARE(display::prettyJson(input), pretty);
        QCOMPARE(display::compactJson(input), compact);
        // Printing again changes nothing, and the two forms print into each other.
        QCOMPARE(display::prettyJson(pretty), pretty);
        QCOMPARE(display::compactJson(pretty), compact);
        QCOMPARE(display::prettyJson(compact), pretty);
    }

    void jsonQuoted_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("expected");
        QTest::newRow("plain") << "open"
                               << "\"open\"";
        QTest::newRow("quote and backslash") << "a\"b\\c"
                                             << "\"a\\\"b\\\\c\"";
        QTest::newRow("controls") << QStringLiteral("l1\nl2\t\x01") << "\"l1\\nl2\\t\\u0001\"";
        QTest::newRow("unicode as is")
            << QStringLiteral("\u00e9\u20ac") << QStringLiteral("\"\u00e9\u20ac\"");
    }
    void jsonQuoted()
    {
        QFETCH(QString, text);
        QFETCH(QString, expected);
        QCOMPARE(display::jsonQuoted(text), expected);
    }

    void time_data()
    {
        QTest::addColumn<QDateTime>("utc");
        QTest::addColumn<QByteArray>("zone");
        QTest::addColumn<bool>("showUtc");
        QTest::addColumn<QString>("expected");
        const QDateTime winter(QDate(2026, 1, 15), QTime(12, 30, 5), QTimeZone::utc());
        const QDateTime summer(QDate(2026, 7, 15), QTime(23, 30, 0), QTimeZone::utc());
        QTest::newRow("UTC shown as UTC")
            << winter << QByteArray("Europe/Berlin") << true << "2026-01-15 12:30:05 UTC";
        QTest::newRow("Berlin winter")
            << winter << QByteArray("Europe/Berlin") << false << "2026-01-15 13:30:05 +01:00";
        QTest::newRow("Berlin summer, next day")
            << summer << QByteArray("Europe/Berlin") << false << "2026-07-16 01:30:00 +02:00";
        QTest::newRow("New York winter")
            << winter << QByteArray("America/New_York") << false << "2026-01-15 07:30:05 -05:00";
        QTest::newRow("Kolkata half hour")
            << winter << QByteArray("Asia/Kolkata") << false << "2026-01-15 18:00:05 +05:30";
        QTest::newRow("St Johns negative half hour")
            << winter << QByteArray("America/St_Johns") << false << "2026-01-15 09:00:05 -03:30";
        QTest::newRow("UTC zone") << winter << QByteArray("UTC") << false
                                  << "2026-01-15 12:30:05 +00:00";
        QTest::newRow("invalid") << QDateTime() << QByteArray("UTC") << false << QString();
        // The ends of timestamptz's range (docs/domain.md "Times at the ends of the range").
        QTest::newRow("infinity") << display::infiniteFuture() << QByteArray("Europe/Berlin")
                                  << false << QStringLiteral("\u221E");
        QTest::newRow("-infinity") << display::infinitePast() << QByteArray("Europe/Berlin") << true
                                   << QStringLiteral("\u2212\u221E");
        QTest::newRow("4713 BC") << QDateTime(QDate(-4713, 1, 1), QTime(12, 0), QTimeZone::utc())
                                 << QByteArray("UTC") << true << "4713-01-01 12:00:00 BC UTC";
        QTest::newRow("year 294276")
            << QDateTime(QDate(294276, 12, 31), QTime(23, 0), QTimeZone::utc()) << QByteArray("UTC")
            << true << "294276-12-31 23:00:00 UTC";
    }
    void time()
    {
        QFETCH(QDateTime, utc);
        QFETCH(QByteArray, zone);
        QFETCH(bool, showUtc);
        QFETCH(QString, expected);
        const QTimeZone tz(zone);
        QVERIFY2(tz.isValid(), zone.constData());
        QCOMPARE(display::time(utc, showUtc, tz), expected);
    }

    void localTimeHasOffset()
    {
        const QDateTime utc(QDate(2026, 1, 15), QTime(12, 30, 5), QTimeZone::utc());
        const QDateTime local = utc.toLocalTime();
        QCOMPARE(display::time(utc, false),
                 local.toString(QStringLiteral("yyyy-MM-dd HH:mm:ss")) + QLatin1Char(' ')
                     + display::offsetLabel(local.offsetFromUtc()));
        QCOMPARE(display::time(utc, true), QStringLiteral("2026-01-15 12:30:05 UTC"));
    }

    void offsetLabel_data()
    {
        QTest::addColumn<int>("seconds");
        QTest::addColumn<QString>("expected");
        QTest::newRow("zero") << 0 << "+00:00";
        QTest::newRow("plus one") << 3600 << "+01:00";
        QTest::newRow("minus five") << -5 * 3600 << "-05:00";
        QTest::newRow("plus 5:45") << 5 * 3600 + 45 * 60 << "+05:45";
        QTest::newRow("minus 3:30") << -(3 * 3600 + 30 * 60) << "-03:30";
        QTest::newRow("plus 14") << 14 * 3600 << "+14:00";
    }
    void offsetLabel()
    {
        QFETCH(int, seconds);
        QFETCH(QString, expected);
        QCOMPARE(display::offsetLabel(seconds), expected);
    }

    void age_data()
    {
        QTest::addColumn<qint64>("seconds");
        QTest::addColumn<QString>("expected");
        QTest::newRow("negative") << qint64(-5) << "0 s";
        QTest::newRow("zero") << qint64(0) << "0 s";
        QTest::newRow("59 s") << qint64(59) << "59 s";
        QTest::newRow("60 s") << qint64(60) << "1 min";
        QTest::newRow("3599 s") << qint64(3599) << "59 min";
        QTest::newRow("3600 s") << qint64(3600) << "1 h 0 min";
        QTest::newRow("3 h 12 min") << qint64(3 * 3600 + 12 * 60 + 59) << "3 h 12 min";
        QTest::newRow("86399 s") << qint64(86399) << "23 h 59 min";
        QTest::newRow("86400 s") << qint64(86400) << "1 d 0 h";
        QTest::newRow("2 d 5 h") << qint64(2 * 86400 + 5 * 3600 + 3599) << "2 d 5 h";
    }
    void age()
    {
        QFETCH(qint64, seconds);
        QFETCH(QString, expected);
        QCOMPARE(display::age(seconds), expected);
    }

    void duration_data()
    {
        QTest::addColumn<qint64>("ms");
        QTest::addColumn<QString>("expected");
        QTest::newRow("negative") << qint64(-1) << "0 ms";
        QTest::newRow("999 ms") << qint64(999) << "999 ms";
        QTest::newRow("1000 ms") << qint64(1000) << "1.0 s";
        QTest::newRow("1899 ms cut not rounded") << qint64(1899) << "1.8 s";
        QTest::newRow("59999 ms") << qint64(59999) << "59.9 s";
        QTest::newRow("60000 ms") << qint64(60000) << "1 min";
        QTest::newRow("4 min 12 s") << qint64(252000) << "4 min 12 s";
        QTest::newRow("1 h") << qint64(3600000) << "1 h";
        QTest::newRow("2 h 5 min") << qint64(7500000) << "2 h 5 min";
        QTest::newRow("1 d") << qint64(86400000) << "1 d";
        QTest::newRow("3 d 4 h") << qint64((3 * 86400 + 4 * 3600) * 1000LL) << "3 d 4 h";
    }
    void duration()
    {
        QFETCH(qint64, ms);
        QFETCH(QString, expected);
        QCOMPARE(display::duration(ms), expected);
    }

    void shortHash_data()
    {
        QTest::addColumn<QString>("hash");
        QTest::addColumn<QString>("expected");
        QTest::newRow("long") << "0123456789abcdef" << QStringLiteral("0123456789ab\u2026");
        QTest::newRow("exactly twelve") << "0123456789ab"
                                        << "0123456789ab";
        QTest::newRow("short") << "abc"
                               << "abc";
        QTest::newRow("empty") << ""
                               << "";
    }
    void shortHash()
    {
        QFETCH(QString, hash);
        QFETCH(QString, expected);
        QCOMPARE(display::shortHash(hash), expected);
    }

    void firstLine_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("maxChars");
        QTest::addColumn<QString>("expected");
        QTest::addColumn<bool>("shortened");
        QTest::newRow("one line") << "timeout after 30 s" << 300 << "timeout after 30 s" << false;
        // Two spaces stay two, and a TAB or an ideographic space before a formula stays too
        // (the cell shows the TAB as "␉"); only spaces at the ends go.
        QTest::newRow("inner spaces kept") << "a  b" << 300 << "a  b" << false;
        QTest::newRow("ends trimmed") << "  x  " << 300 << "x" << false;
        QTest::newRow("tab and ideographic space kept")
            << QStringLiteral("\t\u3000=1+1") << 300 << QStringLiteral("\t\u3000=1+1") << false;
        QTest::newRow("two lines") << "first\nsecond" << 300 << "first" << true;
        QTest::newRow("trailing newline") << "only\n  \n" << 300 << "only" << false;
        QTest::newRow("CR") << "first\r=1+1" << 300 << "first" << true;
        QTest::newRow("CR LF") << "first\r\nsecond" << 300 << "first" << true;
        QTest::newRow("trailing CR LF") << "only\r\n" << 300 << "only" << false;
        QTest::newRow("CR first") << "\r=1+1" << 300 << "" << true;
        QTest::newRow("cut") << "abcdefgh" << 5 << "abcde" << true;
        QTest::newRow("empty") << "" << 300 << "" << false;
    }
    void firstLine()
    {
        QFETCH(QString, text);
        QFETCH(int, maxChars);
        QFETCH(QString, expected);
        QFETCH(bool, shortened);
        bool cut = !shortened;
        QCOMPARE(display::firstLine(text, &cut, maxChars), expected);
        QCOMPARE(cut, shortened);
    }

    void colours()
    {
        QCOMPARE(display::colorName(display::Tone::Error), QStringLiteral("#b01c14"));
        QCOMPARE(display::colorName(display::Tone::Warning), QStringLiteral("#9a5b00"));
        QCOMPARE(display::colorName(display::Tone::Ok), QStringLiteral("#1e6b2f"));
        QVERIFY(display::rgb(display::Tone::Error) != display::rgb(display::Tone::Warning));
    }

    // ---- Text from the database (docs/security.md#text-from-the-database-is-plain-text) ----

    void boundedText()
    {
        QCOMPARE(display::boundedText(QStringLiteral("abc"), 3), QStringLiteral("abc"));
        QCOMPARE(display::boundedText(QString(1234567, QLatin1Char('x')), 4),
                 QStringLiteral("xxxx … (1,234,563 more characters)"));
        // Never half a surrogate pair: U+1F600 is two UTF-16 units.
        const QString smile = QString::fromUtf8("a\xF0\x9F\x98\x80"
                                                "b");
        // Counted in user-perceived characters: U+1F600 is one, so two are shown.
        QCOMPARE(display::boundedText(smile, 2),
                 QString::fromUtf8("a\xF0\x9F\x98\x80 … (1 more character)"));
        QCOMPARE(display::boundedText(smile, 1), QStringLiteral("a … (2 more characters)"));
        QCOMPARE(display::boundedText(smile, 3), smile);
    }

    // "comb" and 5,000 combining acute accents: four characters to a reader. The case view's
    // title (200) and its Kind field (1,000) used to say 4,804 and 4,004 more characters.
    void combiningMarksAreCountedAsOneCharacter()
    {
        const QString comb = QStringLiteral("comb") + QString(5000, QChar(0x0301));
        QCOMPARE(display::characterCount(comb), 4);
        QCOMPARE(display::characterCount(QStringLiteral("e\u0301")), 1);
        QCOMPARE(display::characterCount(QStringLiteral("a\r\nb")), 3);
        QCOMPARE(display::characterCount(QString::fromUtf8("a\xF0\x9F\x98\x80"
                                                           "b")),
                 3);
        QCOMPARE(display::characterCount(QString::fromUtf8("عربي")), 4);
        QCOMPARE(display::characterCount(QString(1000000, QLatin1Char('x'))), 1000000);
        QCOMPARE(display::characterCount(QString()), 0);
        // The 5,000 marks make one character too long to lay out in a cell: both bounds show
        // the same three letters and count the same one character left out.
        QCOMPARE(display::boundedText(comb, 200), QStringLiteral("com … (1 more character)"));
        QCOMPARE(display::boundedText(comb, display::kMaxCellChars),
                 QStringLiteral("com … (1 more character)"));
        // "Z" followed by 5,000 pairs of marks, twice: two characters, neither shown.
        const QString zalgo = QStringLiteral("Z") + QStringLiteral("\u0301\u0336").repeated(5000);
        QCOMPARE(display::characterCount(zalgo + zalgo), 2);
        QCOMPARE(display::boundedText(zalgo + zalgo, 1000),
                 QStringLiteral(" … (2 more characters)"));
        // A few marks stay with their letter.
        QCOMPARE(display::boundedText(QStringLiteral("e\u0301").repeated(3), 2),
                 QStringLiteral("e\u0301e\u0301 … (1 more character)"));
    }

    // BiDi overrides and zero-width characters from the database are shown, never applied
    // (docs/security.md#text-from-the-database-is-plain-text).
    void invisibleControlsAreShown_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("shown");
        QTest::newRow("RLO") << QStringLiteral("\u202Eevil") << QStringLiteral("⟨U+202E⟩evil");
        QTest::newRow("zero width space")
            << QStringLiteral("a\u200Bb") << QStringLiteral("a⟨U+200B⟩b");
        QTest::newRow("isolates") << QStringLiteral("\u2066x\u2069\u2067\u2068")
                                  << QStringLiteral("⟨U+2066⟩x⟨U+2069⟩⟨U+2067⟩⟨U+2068⟩");
        QTest::newRow("embeddings") << QStringLiteral("\u202A\u202B\u202C\u202D")
                                    << QStringLiteral("⟨U+202A⟩⟨U+202B⟩⟨U+202C⟩⟨U+202D⟩");
        QTest::newRow("marks and joiners")
            << QStringLiteral("\u200C\u200D\u200E\u200F\u2060\uFEFF\u061C")
            << QStringLiteral("⟨U+200C⟩⟨U+200D⟩⟨U+200E⟩⟨U+200F⟩⟨U+2060⟩⟨U+FEFF⟩⟨U+061C⟩");
        // Right-to-left letters without controls are left alone.
        QTest::newRow("Arabic") << QString::fromUtf8("عربي English")
                                << QString::fromUtf8("عربي English");
        QTest::newRow("Hebrew") << QString::fromUtf8("שלום") << QString::fromUtf8("שלום");
        QTest::newRow("neighbours kept") << QStringLiteral("\u200A\u2010\u2028\u2065")
                                         << QStringLiteral("\u200A\u2010\u2028\u2065");
        // C0 controls and DEL as their control pictures (an ESC showed as an empty box); TAB,
        // LF and CR stay.
        QTest::newRow("ESC") << QStringLiteral("hint\x1b[31m") << QStringLiteral("hint\u241B[31m");
        QTest::newRow("NUL BEL DEL")
            << (QStringLiteral("a") + QChar(0) + QStringLiteral("\x07") + QStringLiteral("b\x7f"))
            << QStringLiteral("a\u2400\u2407b\u2421");
        QTest::newRow("TAB CR kept") << QStringLiteral("a\tb\rc") << QStringLiteral("a\tb\rc");
        // Every other character that draws nothing (format characters, variation selectors,
        // fillers, C1 controls), astral ones named by their code point.
        QTest::newRow("invisible operators")
            << QStringLiteral("charge:42\u2061\u2062\u2063\u2064")
            << QStringLiteral("charge:42⟨U+2061⟩⟨U+2062⟩⟨U+2063⟩⟨U+2064⟩");
        QTest::newRow("tag space")
            << QStringLiteral("a\U000E0020b") << QStringLiteral("a⟨U+E0020⟩b");
        QTest::newRow("soft hyphen, vowel separator, grapheme joiner")
            << QStringLiteral("a\u00ADb\u180Ec\u034Fd")
            << QStringLiteral("a⟨U+00AD⟩b⟨U+180E⟩c⟨U+034F⟩d");
        QTest::newRow("variation selectors")
            << QStringLiteral("x\uFE0Fy\U000E0100") << QStringLiteral("x⟨U+FE0F⟩y⟨U+E0100⟩");
        QTest::newRow("fillers") << QStringLiteral("\u3164\u115F\uFFA0\u17B4")
                                 << QStringLiteral("⟨U+3164⟩⟨U+115F⟩⟨U+FFA0⟩⟨U+17B4⟩");
        QTest::newRow("NEL") << QStringLiteral("a\u0085b") << QStringLiteral("a⟨U+0085⟩b");
        QTest::newRow("emoji kept")
            << QStringLiteral("\U0001F600 ok") << QStringLiteral("\U0001F600 ok");
    }
    void invisibleControlsAreShown()
    {
        QFETCH(QString, text);
        QFETCH(QString, shown);
        QCOMPARE(display::revealInvisible(text), shown);
        QCOMPARE(display::boundedText(text, display::kMaxCellChars), shown);
        QCOMPARE(display::plainToolTip(text),
                 QStringLiteral("<qt><p style=\"white-space:pre-wrap\">") + shown.toHtmlEscaped()
                     + QStringLiteral("</p></qt>"));
    }

    // Identifiers that differ only in what a reader cannot see look different.
    void lookAlikesAreShown_data()
    {
        QTest::addColumn<QString>("identifier");
        QTest::addColumn<QString>("shown");
        QTest::newRow("plain") << QStringLiteral("charge:7") << QStringLiteral("charge:7");
        QTest::newRow("inner space kept") << QStringLiteral("a b") << QStringLiteral("a b");
        QTest::newRow("trailing space")
            << QStringLiteral("charge:7 ") << QStringLiteral("charge:7⟨U+0020⟩");
        QTest::newRow("leading space") << QStringLiteral(" x") << QStringLiteral("⟨U+0020⟩x");
        QTest::newRow("no-break space")
            << QStringLiteral("charge:7\u00A0") << QStringLiteral("charge:7⟨U+00A0⟩");
        QTest::newRow("ideographic space")
            << QStringLiteral("charge:7\u3000") << QStringLiteral("charge:7⟨U+3000⟩");
        QTest::newRow("composed stays")
            << QStringLiteral("caf\u00E9:1") << QStringLiteral("caf\u00E9:1");
        QTest::newRow("decomposed")
            << QStringLiteral("cafe\u0301:1") << QStringLiteral("cafe⟨U+0301⟩:1");
        QTest::newRow("TAB LF CR ESC") << QStringLiteral("k\t1\n2\r\x1b")
                                       << QStringLiteral("k⟨U+0009⟩1⟨U+000A⟩2⟨U+000D⟩⟨U+001B⟩");
        QTest::newRow("invisible separator")
            << QStringLiteral("charge:42\u2063") << QStringLiteral("charge:42⟨U+2063⟩");
        QTest::newRow("tag space")
            << QStringLiteral("charge:42\U000E0020") << QStringLiteral("charge:42⟨U+E0020⟩");
        QTest::newRow("empty") << QString() << QString();
    }
    void lookAlikesAreShown()
    {
        QFETCH(QString, identifier);
        QFETCH(QString, shown);
        QCOMPARE(display::revealLookAlikes(identifier), shown);
    }

    void rightToLeftTextStillReadsRightToLeft()
    {
        const QString arabic = QString::fromUtf8("عربي");
        QVERIFY(display::revealInvisible(arabic).isRightToLeft());
        // An override no longer turns the rest of a line around: no character of the shown text
        // has an explicit direction class any more.
        const QString hostile = QStringLiteral("\u202Eevil \u2067x\u202Ay\u200F");
        auto explicitDirections = [](const QString &text) {
            return std::count_if(text.cbegin(), text.cend(), [](QChar c) {
                switch (c.direction()) {
                case QChar::DirLRE:
                case QChar::DirRLE:
                case QChar::DirLRO:
                case QChar::DirRLO:
                case QChar::DirPDF:
                case QChar::DirLRI:
                case QChar::DirRLI:
                case QChar::DirFSI:
                case QChar::DirPDI:
                case QChar::DirR:
                    return true;
                default:
                    return false;
                }
            });
        };
        QCOMPARE(explicitDirections(hostile),
                 qsizetype(4)); // U+200F is a strong right-to-left mark
        QCOMPARE(explicitDirections(display::revealInvisible(hostile)), qsizetype(0));
        QCOMPARE(display::revealInvisible(hostile),
                 QStringLiteral("⟨U+202E⟩evil ⟨U+2067⟩x⟨U+202A⟩y⟨U+200F⟩"));
    }

    void headLines_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("maxLines");
        QTest::addColumn<QString>("head");
        QTest::addColumn<int>("left");
        QTest::newRow("fewer") << "a\nb" << 3 << "a\nb" << 0;
        QTest::newRow("exactly") << "a\nb\nc" << 3 << "a\nb\nc" << 0;
        QTest::newRow("exactly, final line end") << "a\nb\nc\n" << 3 << "a\nb\nc\n" << 0;
        QTest::newRow("one more") << "a\nb\nc\nd" << 3 << "a\nb\nc" << 1;
        QTest::newRow("two more, final line end") << "a\nb\nc\nd\ne\n" << 3 << "a\nb\nc" << 2;
        QTest::newRow("empty lines count") << "\n\n\n\n" << 2 << "\n" << 2;
        QTest::newRow("CR stays in its line") << "a\r\nb\r\nc" << 1 << "a\r" << 2;
        QTest::newRow("none") << "a\nb" << 0 << "" << 2;
        QTest::newRow("empty") << "" << 5 << "" << 0;
    }
    void headLines()
    {
        QFETCH(QString, text);
        QFETCH(int, maxLines);
        QFETCH(QString, head);
        QFETCH(int, left);
        qsizetype leftOut = -1;
        QCOMPARE(display::headLines(text, maxLines, &leftOut), head);
        QCOMPARE(leftOut, qsizetype(left));
    }

    void boundedLines()
    {
        QCOMPARE(display::boundedLines(QStringLiteral("a\nb"), 2), QStringLiteral("a\nb"));
        QCOMPARE(display::boundedLines(QStringLiteral("a\nb\n"), 2), QStringLiteral("a\nb\n"));
        QCOMPARE(display::boundedLines(QStringLiteral("a\nb\nc"), 2),
                 QStringLiteral("a\nb\n… (1 more line)"));
        QCOMPARE(display::boundedLines(QStringLiteral("a\nb\nc\nd\n"), 1),
                 QStringLiteral("a\n… (3 more lines)"));
        QStringList lines;
        for (int i = 1; i <= 100000; ++i)
            lines << QStringLiteral("line %1").arg(i);
        QCOMPARE(display::boundedLines(lines.join(QLatin1Char('\n')), 2),
                 QStringLiteral("line 1\nline 2\n… (99,998 more lines)"));
        // Characters are bounded too, before the line count.
        QCOMPARE(
            display::boundedLines(QString(10, QLatin1Char('x')) + QStringLiteral("\ny\nz"), 1, 4),
            QStringLiteral("xxxx … (6 more characters)\n… (2 more lines)"));
        QCOMPARE(display::boundedLines(QString(10, QLatin1Char('x')), 3, 4),
                 QStringLiteral("xxxx … (6 more characters)"));
    }

    void plainToolTipShowsMarkupLiterally()
    {
        QCOMPARE(display::plainToolTip(QStringLiteral("<b>x</b><img src=\"a.png\">\n& y")),
                 QStringLiteral("<qt><p style=\"white-space:pre-wrap\">&lt;b&gt;x&lt;/b&gt;"
                                "&lt;img src=&quot;a.png&quot;&gt;<br>&amp; y</p></qt>"));
        QCOMPARE(display::plainToolTip(QString()), QString());
        const QString tip = display::plainToolTip(QString(1000000, QLatin1Char('y')));
        QCOMPARE(tip,
                 QStringLiteral("<qt><p style=\"white-space:pre-wrap\">")
                     + QString(int(display::kMaxToolTipChars), QLatin1Char('y'))
                     + QStringLiteral(" … (998,000 more characters)</p></qt>"));
    }

    // A tooltip of 100,000 short lines shows 30 of them and how many more: bounded in characters
    // alone it was taller than the screen.
    void toolTipIsBoundedInLines()
    {
        QStringList lines;
        for (int i = 1; i <= 100000; ++i)
            lines << QStringLiteral("line %1").arg(i);
        const QString tip = display::plainToolTip(lines.join(QLatin1Char('\n')));
        QCOMPARE(tip,
                 QStringLiteral("<qt><p style=\"white-space:pre-wrap\">")
                     + lines.first(30).join(QStringLiteral("<br>"))
                     + QStringLiteral("<br>\u2026 (99,970 more lines)</p></qt>"));
    }

    // A value inside a sentence: bounded, markers for invisible controls, each line break
    // (a CR LF pair as one) as "⏎".
    void oneLine()
    {
        QCOMPARE(display::oneLine(QStringLiteral("a\r\nb\nc\rd")),
                 QStringLiteral("a\u23CEb\u23CEc\u23CEd"));
        QCOMPARE(display::oneLine(QStringLiteral("\u202Eevil\x1b")),
                 QStringLiteral("\u27E8U+202E\u27E9evil\u241B"));
        QCOMPARE(display::oneLine(QString(400, QLatin1Char('x')), 10),
                 QString(10, QLatin1Char('x')) + QStringLiteral(" \u2026 (390 more characters)"));
    }

    void inPieces()
    {
        bool broken = true;
        QCOMPARE(display::inPieces(QStringLiteral("ab\ncd"), 3, &broken), QStringLiteral("ab\ncd"));
        QVERIFY(!broken);
        QCOMPARE(display::inPieces(QStringLiteral("abcdefg\nhi"), 3, &broken),
                 QStringLiteral("abc\ndef\ng\nhi"));
        QVERIFY(broken);
        const QString huge(1000000, QLatin1Char('z'));
        const QString pieces = display::inPieces(huge);
        QCOMPARE(pieces.count(QLatin1Char('\n')), 499);
        QCOMPARE(QString(pieces).remove(QLatin1Char('\n')), huge);
    }

    // The cuts, exactly: the same text as a character-at-a-time reference on texts made of line
    // ends, CRs, surrogate pairs and letters, at several widths.
    void inPiecesCutsExactly()
    {
        const auto reference = [](const QString &text, qsizetype max, bool *broken) {
            *broken = false;
            if (text.size() <= max)
                return text;
            QString out;
            qsizetype run = 0;
            for (const QChar c : text) {
                if (c == QLatin1Char('\n')) {
                    run = 0;
                } else if (run >= max && !c.isLowSurrogate()) {
                    out += QLatin1Char('\n');
                    run = 0;
                    *broken = true;
                }
                out += c;
                if (c != QLatin1Char('\n'))
                    ++run;
            }
            return out;
        };
        const QString alphabet = QStringLiteral("ab\n\r") + QString::fromUtf8("\xF0\x9F\x98\x80");
        quint32 seed = 7;
        for (int round = 0; round < 2000; ++round) {
            QString text;
            seed = seed * 1664525u + 1013904223u;
            const int length = int(seed % 60);
            for (int i = 0; i < length; ++i) {
                seed = seed * 1664525u + 1013904223u;
                const int pick = int(seed % 5);
                text += pick == 4 ? alphabet.sliced(4, 2) : alphabet.sliced(pick, 1);
            }
            for (qsizetype max : { 2, 3, 5, 8 }) {
                bool broken = false;
                bool expectedBroken = false;
                const QString expected = reference(text, max, &expectedBroken);
                QCOMPARE(display::inPieces(text, max, &broken), expected);
                QCOMPARE(broken, expectedBroken);
            }
        }
        bool broken = false;
        QCOMPARE(display::inPieces(QStringLiteral("abcd\n"), 3, &broken),
                 QStringLiteral("abc\nd\n"));
        QCOMPARE(display::inPieces(QStringLiteral("ab\r\nabcd"), 3, &broken),
                 QStringLiteral("ab\r\nabc\nd"));
    }

    void firstLineReadsAWindowOnly()
    {
        bool shortened = false;
        const QString line = display::firstLine(
            QStringLiteral("a  b ") + QString(1000000, QLatin1Char('c')), &shortened, 10);
        QCOMPARE(line, QStringLiteral("a  b ccccc"));
        QVERIFY(shortened);
        QCOMPARE(display::firstLine(QStringLiteral("short\n  \n"), &shortened),
                 QStringLiteral("short"));
        QVERIFY(!shortened);
    }

    void prettyJsonCapsTheIndentation()
    {
        constexpr int kDepth = 5000;
        const QByteArray deep = QByteArray(kDepth, '[') + "1" + QByteArray(kDepth, ']');
        bool flattened = false;
        const QByteArray out = display::prettyJson(deep, &flattened);
        QVERIFY(flattened);
        // Indenting every level would take 4 * 5000 * 5000 / 2 * 2 = 100 million bytes.
        QVERIFY2(out.size() < 20 * deep.size(), QByteArray::number(out.size()));
        QCOMPARE(display::compactJson(out), deep); // every token kept, in order
        QVERIFY(out.contains('\n' + QByteArray(4 * display::kMaxIndentDepth, ' ') + "[[[["));
        QVERIFY(!out.contains(QByteArray(4 * display::kMaxIndentDepth + 1, ' ')));
        // Lines of a flat stretch stay short enough to lay out.
        for (const QByteArray &line : out.split('\n'))
            QVERIFY(line.size() <= display::kMaxFlatLineBytes + 4 * display::kMaxIndentDepth + 2);
        // Shallow JSON is indented as before and says nothing.
        QCOMPARE(display::prettyJson("{\"a\":[1,{\"b\":2}]}", &flattened),
                 QByteArray("{\n    \"a\": [\n        1,\n        {\n            \"b\": 2\n"
                            "        }\n    ]\n}"));
        QVERIFY(!flattened);
    }
};

QTEST_GUILESS_MAIN(TestDisplayFormat)
#include "tst_display_format.moc"
