// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/query_params.h"
#include "models/db/sql_statement.h"

#include <QString>
#include <functional>

class QWidget;

namespace redrive {

namespace db {
class DatabaseSession;
}

/// Runs one action function (`statement`, whose one column is the outcome JSON) through
/// `session` off the GUI thread, then shows its ActionResultDialog over `parent` titled `title`
/// with `reference` (the action id) for the audit log; errors go through ErrorPresenter.
/// `applied` runs after the database answered (the caller refreshes its views).
void runSingleAction(db::DatabaseSession *session, QWidget *parent, const QString &title,
                     db::Statement statement, const db::QueryParams &params,
                     const QString &reference, std::function<void()> applied);

} // namespace redrive
