// SPDX-License-Identifier: GPL-3.0-or-later
// The filter button over a fixed list of values (the key states, the mismatch statuses): it
// reads "any" while nothing is checked, the checked values in the menu's order otherwise, says
// when the operator changes it and not when code sets it. No server.
#include "tests/support/widget_lookup.h"
#include "views/checked_values_button.h"

#include <QAction>
#include <QMenu>
#include <QSignalSpy>
#include <QTest>

using namespace redrive;

namespace {

const QStringList kValues { QStringLiteral("open"), QStringLiteral("resolved"),
                            QStringLiteral("compensated") };

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
        QWidget parent;
        auto *button = new CheckedValuesButton(kValues, &parent);
        button->setObjectName(QStringLiteral("filter"));
        QSignalSpy changed(button, &CheckedValuesButton::checkedValuesChanged);
        QAction *open = test::menuAction(parent, QStringLiteral("filter"), QStringLiteral("open"));
        QAction *compensated
            = test::menuAction(parent, QStringLiteral("filter"), QStringLiteral("compensated"));
        QVERIFY(open && compensated);
        compensated->trigger();
        open->trigger();
        QCOMPARE(changed.count(), 2);
        const QStringList expected { QStringLiteral("open"), QStringLiteral("compensated") };
        QCOMPARE(button->checkedValues(), expected);
        QCOMPARE(button->text(), QStringLiteral("open, compensated"));
        open->trigger();
        compensated->trigger();
        QCOMPARE(changed.count(), 4);
        QCOMPARE(button->text(), QStringLiteral("any"));
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
