// SPDX-License-Identifier: GPL-3.0-or-later
// The console's one amount input, typed into key by key (docs/domain.md#money): the text stays
// exactly as typed (200 above a maximum of 150.00 stays "200", never "20"), the value is exact
// minor units of the currency (JPY 0, USD 2, KWD 3 decimals), and a refused text says why beside
// the field. No server.
#include "views/money_edit.h"

#include <QApplication>
#include <QLabel>
#include <QLineEdit>
#include <QSignalSpy>
#include <QTest>

using namespace redrive;

class TestMoneyEdit : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void typing_data()
    {
        QTest::addColumn<QString>("currency");
        QTest::addColumn<qint64>("maximum");
        QTest::addColumn<QString>("keys");
        QTest::addColumn<qint64>("value"); // -1: refused
        QTest::addColumn<QString>("refusal");

        QTest::newRow("200 above 150.00 USD stays 200")
            << "USD" << qint64(15000) << "200" << qint64(-1)
            << "Above what can still be refunded: at most 150.00 USD.";
        QTest::newRow("USD within")
            << "USD" << qint64(15000) << "149.99" << qint64(14999) << QString();
        QTest::newRow("JPY 1500") << "JPY" << qint64(1500) << "1500" << qint64(1500) << QString();
        QTest::newRow("JPY with decimals")
            << "JPY" << qint64(1500) << "15.00" << qint64(-1)
            << "JPY has no minor unit: type whole JPY, without a decimal point.";
        QTest::newRow("KWD 1.250") << "KWD" << qint64(5000) << "1.250" << qint64(1250) << QString();
        QTest::newRow("KWD four decimals") << "KWD" << qint64(5000) << "1.2505" << qint64(-1)
                                           << "KWD has 3 decimal places: \"1.2505\" has more.";
        QTest::newRow("letters") << "USD" << qint64(15000) << "12x" << qint64(-1)
                                 << "\"12x\" is not an amount in USD: digits, optionally a point "
                                    "and up to 2 decimal places, e.g. 150.25.";
    }
    void typing()
    {
        QFETCH(QString, currency);
        QFETCH(qint64, maximum);
        QFETCH(QString, keys);
        QFETCH(qint64, value);
        QFETCH(QString, refusal);
        MoneyEdit edit;
        edit.setCurrency(currency);
        edit.setMaximum(maximum);
        edit.show();
        QVERIFY(QTest::qWaitForWindowExposed(&edit));
        edit.lineEdit()->setFocus();
        QSignalSpy changed(&edit, &MoneyEdit::changed);
        QTest::keyClicks(edit.lineEdit(), keys);
        QCOMPARE(changed.count(), keys.size()); // every keystroke arrived
        QCOMPARE(edit.text(), keys); // as typed, nothing dropped
        QCOMPARE(edit.value(), value < 0 ? std::nullopt : std::optional<qint64>(value));
        QCOMPARE(edit.refusalText(), refusal);
        auto *label = edit.findChild<QLabel *>(QStringLiteral("refusal"));
        QVERIFY(label);
        QCOMPARE(label->isVisible(), !refusal.isEmpty());
        QCOMPARE(label->text(), refusal);
    }

    void backspaceMakesItAcceptableAgain()
    {
        MoneyEdit edit;
        edit.setCurrency(QStringLiteral("USD"));
        edit.setMaximum(15000);
        edit.show();
        QVERIFY(QTest::qWaitForWindowExposed(&edit));
        QTest::keyClicks(edit.lineEdit(), QStringLiteral("200"));
        QVERIFY(!edit.isAcceptable());
        QTest::keyClick(edit.lineEdit(), Qt::Key_Backspace);
        QCOMPARE(edit.text(), QStringLiteral("20"));
        QCOMPARE(edit.value(), std::optional<qint64>(2000));
        QVERIFY(edit.refusalText().isEmpty());
    }

    void setValueWritesTheCurrencysDecimals_data()
    {
        QTest::addColumn<QString>("currency");
        QTest::addColumn<qint64>("minor");
        QTest::addColumn<QString>("text");
        QTest::newRow("JPY") << "JPY" << qint64(1500) << "1,500";
        QTest::newRow("USD") << "USD" << qint64(15042) << "150.42";
        QTest::newRow("KWD") << "KWD" << qint64(1250) << "1.250";
    }
    void setValueWritesTheCurrencysDecimals()
    {
        QFETCH(QString, currency);
        QFETCH(qint64, minor);
        QFETCH(QString, text);
        MoneyEdit edit;
        edit.setCurrency(currency);
        edit.setValue(minor);
        QCOMPARE(edit.text(), text);
        QCOMPARE(edit.value(), std::optional<qint64>(minor)); // reads back exactly
    }

    void changingTheMaximumRechecksTheTypedText()
    {
        MoneyEdit edit;
        edit.setCurrency(QStringLiteral("USD"));
        edit.lineEdit()->setText(QStringLiteral("200"));
        QCOMPARE(edit.value(), std::optional<qint64>(20000));
        edit.setMaximum(15000);
        QCOMPARE(edit.value(), std::nullopt);
        QCOMPARE(edit.text(), QStringLiteral("200"));
    }
};

QTEST_MAIN(TestMoneyEdit)
#include "tst_money_edit.moc"
