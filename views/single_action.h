// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/operator_action.h"

#include <QString>
#include <functional>

class QWidget;

namespace redrive {

namespace db {
class DatabaseSession;
}

/// Runs `action` through `session` off the GUI thread (runOperatorAction), then shows its
/// ActionResultDialog over `parent` titled `title` with the action's reference for the audit
/// log; errors go through ErrorPresenter. `applied` runs after the database answered (the caller
/// refreshes its views).
void runSingleAction(db::DatabaseSession *session, QWidget *parent, const QString &title,
                     const OperatorAction &action, std::function<void()> applied);

} // namespace redrive
