// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QFont>
#include <QString>

class QByteArray;
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

/// Makes `label` take the width its layout gives it instead of its text's width, so a label whose
/// text comes from the database never widens the window (a 10 KB word once made the case view
/// 80,000 px wide). What does not fit is clipped; word wrap still sets the height, so the caller
/// bounds the text too (display::boundedLines). The text stays selectable.
void ignoreTextWidth(QLabel *label);

/// Restores `geometry` (from QWidget::saveGeometry) on the top-level `window`, then shrinks it to
/// the available geometry of its screen (QScreen::availableGeometry: without panels and docks)
/// and moves it inside, so a size saved on a bigger screen, or a poisoned one, never opens a
/// window larger than the screen. An empty or unreadable `geometry` only clamps the current size.
void restoreGeometryOnScreen(QWidget *window, const QByteArray &geometry);
/// QWidget::saveGeometry() of `window`, or an empty array when the window is larger than its
/// screen's available geometry (such a size is never worth restoring).
QByteArray geometryWorthSaving(const QWidget *window);

} // namespace redrive::panes
