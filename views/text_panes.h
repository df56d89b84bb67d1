// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QFont>
#include <QString>

class QLabel;
class QPlainTextEdit;
class QWidget;

namespace redrive::panes {

/// The system's fixed-width font (payloads, hashes, stack traces).
QFont monospace();
/// A read-only, selectable, unwrapped plain-text pane in the fixed-width font, named `name`.
QPlainTextEdit *readOnlyText(QWidget *parent, const QString &name);
/// A grey, word-wrapped note that shows its text literally (never as markup), named `name`.
QLabel *note(QWidget *parent, const QString &name);

} // namespace redrive::panes
