// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/operator_action.h"

#include <QString>
#include <functional>

class QDialog;
class QJsonObject;
class QLabel;
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

/// Runs `action` through `session` off the GUI thread (runOperatorAction) for a form `dialog`
/// whose confirm button the caller has just disabled. Refused (a conflict, a role, a rule), the
/// dialog stays open: the database's words go into `error` (ErrorPresenter::inlineText), which
/// is shown, and `refresh` runs to enable again what the form allows. Applied, `applied` gets
/// the outcome and the action's reference for the audit log, then the dialog is accepted.
void runFormAction(
    db::DatabaseSession *session, QDialog *dialog, const OperatorAction &action, QLabel *error,
    std::function<void()> refresh,
    std::function<void(const QJsonObject &outcome, const QString &reference)> applied);

} // namespace redrive
