// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>

class QAction;
class QWidget;

namespace redrive::test {

/// The action whose data is `value` in the menu of the tool button named `buttonName` inside
/// `parent` (a filter menu, as the operator ticks it); null when there is no such button, menu
/// or value.
QAction *menuAction(QWidget &parent, const QString &buttonName, const QString &value);

} // namespace redrive::test
