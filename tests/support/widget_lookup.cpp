// SPDX-License-Identifier: GPL-3.0-or-later
#include "tests/support/widget_lookup.h"

#include <QAction>
#include <QMenu>
#include <QToolButton>

namespace redrive::test {

QAction *menuAction(QWidget &parent, const QString &buttonName, const QString &value)
{
    auto *button = parent.findChild<QToolButton *>(buttonName);
    if (!button || !button->menu())
        return nullptr;
    for (QAction *action : button->menu()->actions()) {
        if (action->data().toString() == value)
            return action;
    }
    return nullptr;
}

} // namespace redrive::test
