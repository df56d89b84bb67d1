// SPDX-License-Identifier: GPL-3.0-or-later
// Not built: a view that runs a statement itself, which the layering check must refuse
// (tests/CMakeLists.txt: unit.layering_catches_a_view_running_a_statement).
#include "views/some_widget.h"

void SomeWidget::load()
{
    m_session->execute(db::statementSql(db::Statement::AuditActors), {}, this, [](auto &) {});
}
