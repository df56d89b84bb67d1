// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/checked_values_button.h"

#include <QAction>
#include <QMenu>
#include <QSignalBlocker>

namespace redrive {

CheckedValuesButton::CheckedValuesButton(const QStringList &values, QWidget *parent)
    : QToolButton(parent)
{
    auto *menu = new QMenu(this);
    for (const QString &value : values) {
        QAction *action = menu->addAction(value);
        action->setCheckable(true);
        action->setData(value);
        connect(action, &QAction::toggled, this, [this] {
            updateText();
            Q_EMIT checkedValuesChanged();
        });
    }
    setMenu(menu);
    setPopupMode(QToolButton::InstantPopup);
    updateText();
}

QStringList CheckedValuesButton::checkedValues() const
{
    QStringList values;
    for (const QAction *action : menu()->actions()) {
        if (action->isChecked())
            values << action->data().toString();
    }
    return values;
}

void CheckedValuesButton::setCheckedValues(const QStringList &values)
{
    for (QAction *action : menu()->actions()) {
        const QSignalBlocker block(action);
        action->setChecked(values.contains(action->data().toString()));
    }
    updateText();
}

void CheckedValuesButton::updateText()
{
    const QStringList values = checkedValues();
    setText(values.isEmpty() ? tr("any") : values.join(QStringLiteral(", ")));
}

} // namespace redrive
