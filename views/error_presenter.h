// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>

class QMessageBox;
class QWidget;

namespace redrive {

namespace db {
class DbError;
}

/// The one place that decides how a database error reaches a person (docs/architecture.md#errors):
///  - connection lost: the main window's banner (with its reconnect state) says it; here only a
///    status-bar note;
///  - canceled: a quiet status-bar note;
///  - constraint or permission: inline, beside the form that caused it (inlineText());
///  - anything else: a dialog with SQLSTATE, detail and hint.
/// Models and workers never open dialogs; views call report() with the error they received.
class ErrorPresenter
{
public:
    /// Shows `error` about `what` (e.g. "Loading dead letters") the way its kind asks for.
    /// `context` finds the window (for the status bar and as the dialog's parent).
    static void report(QWidget *context, const db::DbError &error, const QString &what);
    /// Shows `text` for a few seconds in the status bar of `context`'s main window (or of the
    /// application's main window when `context` is a dialog); nothing without one.
    static void note(QWidget *context, const QString &text);
    /// One or two lines for an inline message: the message, then detail or hint when present.
    static QString inlineText(const db::DbError &error);
    /// The full text with SQLSTATE, detail and hint, for copy-out ("Copy details").
    static QString fullText(const db::DbError &error, const QString &what);
    /// fullText() as the error dialog shows it: the server's message at most 6 lines of 1,000
    /// characters, detail and hint at most 3 lines of 300, invisible controls shown as markers
    /// (display::boundedLines; docs/security.md#text-from-the-database-is-plain-text).
    static QString shownText(const db::DbError &error, const QString &what);
    /// The error dialog report() runs: shownText() as plain text, an OK button and a "Copy
    /// details" button (named copyDetails) that copies fullText() and leaves the dialog open.
    /// The caller owns it.
    static QMessageBox *errorBox(QWidget *parent, const db::DbError &error, const QString &what);
};

} // namespace redrive
