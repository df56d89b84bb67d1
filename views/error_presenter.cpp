// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/error_presenter.h"

#include "models/db/db_error.h"
#include "models/logging.h"

#include <QApplication>
#include <QMainWindow>
#include <QMessageBox>
#include <QStatusBar>
#include <QWidget>

namespace redrive {

namespace {

void statusNote(QWidget *context, const QString &text)
{
    QWidget *window = context ? context->window() : nullptr;
    if (auto *main = qobject_cast<QMainWindow *>(window)) {
        main->statusBar()->showMessage(text, 8000);
        return;
    }
    // Not inside a main window (a dialog): find the application's main window, if any.
    for (QWidget *w : QApplication::topLevelWidgets()) {
        if (auto *m = qobject_cast<QMainWindow *>(w)) {
            m->statusBar()->showMessage(text, 8000);
            return;
        }
    }
}

} // namespace

QString ErrorPresenter::inlineText(const db::DbError &error)
{
    QString text = error.message();
    if (!error.detail().isEmpty())
        text += QLatin1Char('\n') + error.detail();
    else if (!error.hint().isEmpty())
        text += QLatin1Char('\n') + error.hint();
    return text;
}

QString ErrorPresenter::fullText(const db::DbError &error, const QString &what)
{
    QString text = QObject::tr("%1 failed.\n\n%2").arg(what, error.message());
    if (!error.sqlState().isEmpty())
        text += QObject::tr("\n\nSQLSTATE: %1 (%2)")
                    .arg(error.sqlState(), db::DbError::kindName(error.kind()));
    if (!error.detail().isEmpty())
        text += QObject::tr("\nDetail: %1").arg(error.detail());
    if (!error.hint().isEmpty())
        text += QObject::tr("\nHint: %1").arg(error.hint());
    return text;
}

void ErrorPresenter::report(QWidget *context, const db::DbError &error, const QString &what)
{
    qCInfo(lcUi) << what << "failed:" << error.summary();
    switch (error.kind()) {
    case db::ErrorKind::Connection:
        statusNote(context, QObject::tr("%1: connection lost, reconnecting…").arg(what));
        return;
    case db::ErrorKind::Canceled:
        statusNote(context, QObject::tr("%1: canceled").arg(what));
        return;
    case db::ErrorKind::Authentication:
        statusNote(context, QObject::tr("%1: the server refused the login").arg(what));
        return;
    case db::ErrorKind::Constraint:
    case db::ErrorKind::Permission:
        statusNote(context, QObject::tr("%1: %2").arg(what, error.message()));
        return;
    case db::ErrorKind::Retryable:
    case db::ErrorKind::Other:
        break;
    }
    QMessageBox box(QMessageBox::Warning, what, fullText(error, what), QMessageBox::Ok,
                    context ? context->window() : nullptr);
    box.setTextFormat(Qt::PlainText); // the server's message, never markup
    box.setTextInteractionFlags(Qt::TextSelectableByMouse);
    box.exec();
}

} // namespace redrive
