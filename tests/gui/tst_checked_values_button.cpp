// SPDX-License-Identifier: GPL-3.0-or-later
// The filter button over a fixed list of values (the key states, the mismatch statuses): it
// reads "any" while nothing is checked, the checked values in the menu's order otherwise, says
// when the operator changes it and not when code sets it. No server.
#include "views/checked_values_button.h"

#include <QAction>
#include <QMenu>
#include <QSignalSpy>
#include <QTest>

using namespace redrive;

namespace {

const QStringList kValues { QStringLiteral("open"), QStringLiteral("resolved"),
                            QStringLiteral("compensated") };

QAction *actionFor(CheckedValuesButton &button, const QString &value)
{
    for (QAction *action : button.menu()->actions()) {
        if (action->data().toString() == value)
            return action;
    }
    return nullptr;
}

} // namespace

class TestCheckedValuesButton : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void noneCheckedReadsAny()
    {
        CheckedValuesButton button(kValues);
        QCOMPARE(button.text(), QStringLiteral("any"));
        QVERIFY(button.checkedValues().isEmpty());
        QCOMPARE(button.menu()->actions().size(), kValues.size());
        QCOMPARE(button.popupMode(), QToolButton::InstantPopup);
    }

    void theOperatorsChecksAreSaidAndShownInMenuOrder()
    {
        CheckedValuesButton button(kValues);
        QSignalSpy changed(&button, &CheckedValuesButton::checkedValuesChanged);
        actionFor(button, QStringLiteral("compensated"))->trigger();
        actionFor(button, QStringLiteral("open"))->trigger();
        QCOMPARE(changed.count(), 2);
        const QStringList expected { QStringLiteral("open"), QStringLiteral("compensated") };
        QCOMPARE(button.checkedValues(), expected);
        QCOMPARE(button.text(), QStringLiteral("open, compensated"));
        actionFor(button, QStringLiteral("open"))->trigger();
        actionFor(button, QStringLiteral("compensated"))->trigger();
        QCOMPARE(changed.count(), 4);
        QCOMPARE(button.text(), QStringLiteral("any"));
    }

    void settingFromCodeIsSilentAndIgnoresUnknownValues()
    {
        CheckedValuesButton button(kValues);
        QSignalSpy changed(&button, &CheckedValuesButton::checkedValuesChanged);
        button.setCheckedValues({ QStringLiteral("resolved"), QStringLiteral("no such status") });
        QCOMPARE(changed.count(), 0);
        QCOMPARE(button.checkedValues(), QStringList { QStringLiteral("resolved") });
        QCOMPARE(button.text(), QStringLiteral("resolved"));
        button.setCheckedValues({});
        QCOMPARE(changed.count(), 0);
        QCOMPARE(button.text(), QStringLiteral("any"));
    }
};

QTEST_MAIN(TestCheckedValuesButton)
#include "tst_checked_values_button.moc"
