// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/error_presenter.h"

#include "models/db/db_error.h"
#include "models/display_format.h"
#include "models/logging.h"

#include <QApplication>
#include <QClipboard>
#include <QGuiApplication>
#include <QMainWindow>
#include <QMessageBox>
#include <QPushButton>
#include <QStatusBar>
#include <QWidget>
#include <memory>

namespace redrive {

namespace {

/// How many characters of the server's message, and of its detail and hint, an error dialog
/// shows (the whole text is copied by "Copy details").
constexpr qsizetype kMaxMessageChars = 1000;
constexpr qsizetype kMaxDetailChars = 300;
/// How many characters of the server's message a status-bar note shows.
constexpr qsizetype kMaxNoteChars = 300;

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

void ErrorPresenter::note(QWidget *context, const QString &text)
{
    statusNote(context, text);
}

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
    case db::ErrorKind::Permission: {
        // A note on one line: the message's first line, bounded, invisible controls shown.
        bool shortened = false;
        const QString line = display::firstLine(error.message(), &shortened, kMaxNoteChars);
        statusNote(
            context,
            QObject::tr("%1: %2").arg(what,
                                      display::revealInvisible(line)
                                          + (shortened ? QStringLiteral(" \u2026") : QString())));
        return;
    }
    case db::ErrorKind::Retryable:
    case db::ErrorKind::Other:
        break;
    }
    std::unique_ptr<QMessageBox> box(errorBox(context ? context->window() : nullptr, error, what));
    box->exec();
}

QString ErrorPresenter::shownText(const db::DbError &error, const QString &what)
{
    QString text = QObject::tr("%1 failed.\n\n%2")
                       .arg(what,
                            display::boundedLines(error.message(), display::kMaxLabelLines,
                                                  kMaxMessageChars));
    if (!error.sqlState().isEmpty())
        text += QObject::tr("\n\nSQLSTATE: %1 (%2)")
                    .arg(display::boundedText(error.sqlState(), 16),
                         db::DbError::kindName(error.kind()));
    if (!error.detail().isEmpty())
        text += QObject::tr("\nDetail: %1")
                    .arg(display::boundedLines(error.detail(), 3, kMaxDetailChars));
    if (!error.hint().isEmpty())
        text += QObject::tr("\nHint: %1")
                    .arg(display::boundedLines(error.hint(), 3, kMaxDetailChars));
    return text;
}

QMessageBox *ErrorPresenter::errorBox(QWidget *parent, const db::DbError &error,
                                      const QString &what)
{
    auto *box = new QMessageBox(QMessageBox::Warning, what, shownText(error, what), QMessageBox::Ok,
                                parent);
    box->setObjectName(QStringLiteral("errorBox"));
    box->setTextFormat(Qt::PlainText); // the server's message, never markup
    box->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // The whole text one click away, never laid out: a 1.2 MB message took 18 s in a label.
    QPushButton *copy = box->addButton(QObject::tr("Copy details"), QMessageBox::ActionRole);
    copy->setObjectName(QStringLiteral("copyDetails"));
    const QString full = fullText(error, what);
    // An action button closes the box: take the click before it does, and keep the box open.
    QObject::disconnect(copy, &QAbstractButton::clicked, nullptr, nullptr);
    QObject::connect(copy, &QPushButton::clicked, box,
                     [full] { QGuiApplication::clipboard()->setText(full); });
    return box;
}

} // namespace redrive
