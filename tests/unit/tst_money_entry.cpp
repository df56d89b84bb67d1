// SPDX-License-Identifier: GPL-3.0-or-later
// An amount typed by a person, read exactly in its currency's minor units (docs/domain.md#money):
// 0 decimals for JPY, 2 for USD, 3 for KWD, never through a double, and every refusal says why
// (not a number, too many decimals, above what may be refunded, zero, too large, unknown code).
#include "models/money_entry.h"

#include <QTest>

using namespace redrive;

using Refusal = MoneyEntry::Refusal;
Q_DECLARE_METATYPE(redrive::MoneyEntry::Refusal)

class TestMoneyEntry : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void check_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<QString>("currency");
        QTest::addColumn<qint64>("maximum"); // -1: no maximum
        QTest::addColumn<Refusal>("refusal");
        QTest::addColumn<qint64>("minor");
        QTest::addColumn<QString>("message");

        const qint64 none = -1;
        // Accepted, exact per exponent.
        QTest::newRow("JPY whole")
            << "1500"
            << "JPY" << qint64(1500) << Refusal::None << qint64(1500) << QString();
        QTest::newRow("JPY grouped") << "1,500"
                                     << "JPY" << none << Refusal::None << qint64(1500) << QString();
        QTest::newRow("USD two decimals")
            << "150.42"
            << "USD" << none << Refusal::None << qint64(15042) << QString();
        QTest::newRow("USD one decimal")
            << "150.4"
            << "USD" << none << Refusal::None << qint64(15040) << QString();
        QTest::newRow("USD whole") << "20"
                                   << "USD" << none << Refusal::None << qint64(2000) << QString();
        QTest::newRow("USD code typed")
            << " 12.34 usd "
            << "USD" << none << Refusal::None << qint64(1234) << QString();
        QTest::newRow("KWD three decimals")
            << "1.250"
            << "KWD" << none << Refusal::None << qint64(1250) << QString();
        QTest::newRow("KWD one decimal")
            << "1.2"
            << "KWD" << none << Refusal::None << qint64(1200) << QString();
        // 0.29 is 0.28999999999999998 as a double: read exactly, it stays 29 cents.
        QTest::newRow("no double rounding")
            << "0.29"
            << "USD" << none << Refusal::None << qint64(29) << QString();
        QTest::newRow("at the maximum")
            << "40.00"
            << "USD" << qint64(4000) << Refusal::None << qint64(4000) << QString();
        // Refused, and why.
        QTest::newRow("200 above 150.00")
            << "200"
            << "USD" << qint64(15000) << Refusal::AboveMaximum << qint64(0)
            << "Above what can still be refunded: at most 150.00 "
               "USD.";
        QTest::newRow("JPY above") << "1501"
                                   << "JPY" << qint64(1500) << Refusal::AboveMaximum << qint64(0)
                                   << "Above what can still be refunded: at most 1,500 JPY.";
        QTest::newRow("KWD above") << "1.2501"
                                   << "KWD" << qint64(1250) << Refusal::TooManyDecimals << qint64(0)
                                   << "KWD has 3 decimal places: \"1.2501\" has more.";
        QTest::newRow("KWD above by one fils")
            << "1.251"
            << "KWD" << qint64(1250) << Refusal::AboveMaximum << qint64(0)
            << "Above what can still be refunded: at most "
               "1.250 KWD.";
        QTest::newRow("JPY decimals") << "15.00"
                                      << "JPY" << none << Refusal::TooManyDecimals << qint64(0)
                                      << "JPY has no minor unit: type whole JPY, without a "
                                         "decimal point.";
        QTest::newRow("USD three decimals")
            << "1.005"
            << "USD" << none << Refusal::TooManyDecimals << qint64(0)
            << "USD has 2 decimal places: \"1.005\" has more.";
        QTest::newRow("letters") << "12a"
                                 << "USD" << none << Refusal::NotANumber << qint64(0)
                                 << "\"12a\" is not an amount in USD: digits, optionally a point "
                                    "and up to 2 decimal places, e.g. 150.25.";
        QTest::newRow("negative") << "-5"
                                  << "USD" << none << Refusal::NotANumber << qint64(0)
                                  << "\"-5\" is not an amount in USD: digits, optionally a point "
                                     "and up to 2 decimal places, e.g. 150.25.";
        QTest::newRow("decimal comma") << "1,5"
                                       << "JPY" << none << Refusal::NotANumber << qint64(0)
                                       << "\"1,5\" is not an amount in JPY: whole JPY, digits "
                                          "only, e.g. 1500.";
        QTest::newRow("two points") << "1.2.3"
                                    << "KWD" << none << Refusal::NotANumber << qint64(0)
                                    << "\"1.2.3\" is not an amount in KWD: digits, optionally a "
                                       "point and up to 3 decimal places, e.g. 12.500.";
        QTest::newRow("zero") << "0.00"
                              << "USD" << none << Refusal::Zero << qint64(0)
                              << "The amount must be more than zero.";
        QTest::newRow("empty") << "  "
                               << "USD" << none << Refusal::Empty << qint64(0)
                               << "Type an amount in USD.";
        QTest::newRow("too large")
            << "99999999999999999999"
            << "USD" << none << Refusal::TooLarge << qint64(0) << "That amount is too large.";
        QTest::newRow("unknown currency") << "10"
                                          << "XYZ" << none << Refusal::UnknownCurrency << qint64(0)
                                          << "XYZ is not a currency Redrive knows the minor units "
                                             "of: no amount can be entered.";
    }
    void check()
    {
        QFETCH(QString, text);
        QFETCH(QString, currency);
        QFETCH(qint64, maximum);
        QFETCH(Refusal, refusal);
        QFETCH(qint64, minor);
        QFETCH(QString, message);
        const MoneyEntry e = MoneyEntry::check(
            text, currency, maximum < 0 ? std::nullopt : std::optional<qint64>(maximum));
        QCOMPARE(e.refusal(), refusal);
        QCOMPARE(e.isAcceptable(), refusal == Refusal::None);
        QCOMPARE(e.value(), refusal == Refusal::None ? std::optional<qint64>(minor) : std::nullopt);
        QCOMPARE(e.message(), message);
    }
};

QTEST_GUILESS_MAIN(TestMoneyEntry)
#include "tst_money_entry.moc"
