// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/single_action.h"

#include "models/db/database_session.h"
#include "views/action_result_dialog.h"
#include "views/error_presenter.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QPointer>
#include <QWidget>

namespace redrive {

void runSingleAction(db::DatabaseSession *session, QWidget *parent, const QString &title,
                     db::Statement statement, const db::QueryParams &params,
                     const QString &reference, std::function<void()> applied)
{
    session->execute(
        db::statementSql(statement), params, parent,
        [parent, title, reference, applied](const db::DbExpected<db::ResultSet> &r) {
            if (!r) {
                ErrorPresenter::report(parent, r.error(), title);
                return;
            }
            const QJsonObject outcome = QJsonDocument::fromJson(r->text(0, 0).toUtf8()).object();
            auto *dialog = new ActionResultDialog(
                ActionResultDialog::Outcome::fromJson(title, outcome, reference), parent);
            dialog->setAttribute(Qt::WA_DeleteOnClose);
            dialog->setWindowModality(Qt::WindowModal);
            dialog->show();
            if (applied)
                applied();
        });
}

} // namespace redrive
