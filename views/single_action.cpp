// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/single_action.h"

#include "views/action_result_dialog.h"
#include "views/error_presenter.h"

#include <QDialog>
#include <QJsonObject>
#include <QLabel>
#include <QPointer>
#include <QWidget>

namespace redrive {

void runSingleAction(db::DatabaseSession *session, QWidget *parent, const QString &title,
                     const OperatorAction &action, std::function<void()> applied)
{
    runOperatorAction(session, parent, action,
                      [session, parent, title, reference = action.reference(),
                       applied](const db::DbExpected<QJsonObject> &outcome) {
                          if (!outcome) {
                              ErrorPresenter::report(parent, outcome.error(), title);
                              return;
                          }
                          auto *dialog = new ActionResultDialog(
                              ActionResultDialog::Outcome::fromJson(title, *outcome, reference),
                              parent);
                          dialog->setAttribute(Qt::WA_DeleteOnClose);
                          dialog->setWindowModality(Qt::WindowModal);
                          dialog->show();
                          dialog->explainConflicts(session);
                          if (applied)
                              applied();
                      });
}

void runFormAction(db::DatabaseSession *session, QDialog *dialog, const OperatorAction &action,
                   QLabel *error, std::function<void()> refresh,
                   std::function<void(const QJsonObject &, const QString &)> applied)
{
    runOperatorAction(session, dialog, action,
                      [dialog, error, refresh = std::move(refresh), applied = std::move(applied),
                       reference = action.reference()](const db::DbExpected<QJsonObject> &outcome) {
                          if (!outcome) {
                              error->setText(ErrorPresenter::inlineText(outcome.error()));
                              error->show();
                              if (refresh)
                                  refresh();
                              return;
                          }
                          if (applied)
                              applied(*outcome, reference);
                          dialog->accept();
                      });
}

} // namespace redrive
