// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QFont>
#include <QList>
#include <QString>
#include <functional>
#include <utility>

class QByteArray;
class QLabel;
class QPlainTextEdit;
class QSettings;
class QTableView;
class QWidget;

namespace redrive::panes {

/// The system's fixed-width font (payloads, hashes, stack traces).
QFont monospace();
/// A read-only, selectable, unwrapped plain-text pane in the fixed-width font, named `name`.
QPlainTextEdit *readOnlyText(QWidget *parent, const QString &name);
/// Most GUI-thread time, in ms, one turn of the event loop spends feeding panes: every running
/// setPlainTextInSlices() feed of the thread shares it.
inline constexpr int kFeedSliceMs = 12;
/// Texts up to this many UTF-16 units go into a pane at once: laying them out takes a few ms.
inline constexpr qsizetype kFeedAtOnceChars = 64 * 1024;

/// Shows `text` in `edit` in place of what it shows, without blocking the GUI thread
/// (docs/architecture.md#long-text-in-panes). A text of up to kFeedAtOnceChars goes in at once;
/// a longer one is appended to the edit's own document in pieces of about 4 K UTF-16 units, cut
/// after a line end where there is one and never inside a CRLF, from one zero-interval timer
/// that serves every pane being fed, in turn, for at most kFeedSliceMs an event-loop turn (two
/// panes fed at once share a slice), with undo off while it runs (handing a pane
/// a finished document of 100,000 lines cost the GUI thread one layout pass of ~800 ms); the
/// first slice runs from the event loop too, after the caller's own work. When
/// the feed ends the pane holds `text` exactly, as setPlainText() would; a read-only pane holds
/// it with every hidden character as a marker (display::revealInvisible: a BiDi override in a
/// stack trace or a record must not turn "1234-5678" into "8765-4321";
/// docs/security.md#text-from-the-database-is-plain-text). A later call (or the
/// edit's deletion) stops a feed still running. `onProgress` gets the percent fed (0–99) after
/// each turn that fed it, `onDone` runs once the whole text is in; both run on the GUI thread
/// and may be empty. `onDone` runs before this returns when the text went in at once.
void setPlainTextInSlices(QPlainTextEdit *edit, QString text,
                          std::function<void(int percent)> onProgress = {},
                          std::function<void()> onDone = {});
/// True while a setPlainTextInSlices() feed into `edit` has not ended.
bool isFeeding(const QPlainTextEdit *edit);

/// A grey, word-wrapped note that shows its text literally (never as markup), named `name`.
QLabel *note(QWidget *parent, const QString &name);
/// A bold title line (of a table, a section, a dialog) that shows its text literally.
QLabel *title(QWidget *parent);
/// `title` over `body` in a box of their own, `body` taking the height: a titled section.
QWidget *titled(QLabel *title, QWidget *body, QWidget *parent);

/// Makes a table view named `name` under `parent` the way its window keeps its tables (the case
/// view: column layout saved, Ctrl+C copies rows as JSON).
using TableMaker = std::function<QTableView *(QWidget *parent, const QString &name)>;
/// Sizes `table`'s columns to what they show, each at most `maxWidth` px (12 px of air added);
/// nothing when the table is empty.
void fitColumns(QTableView *table, int maxWidth);

/// Saves `table`'s column layout (order, widths, hidden) under `key`, with the names of the
/// columns it was saved for (kColumnNameRole).
void saveColumns(QSettings &settings, const QString &key, const QTableView *table);
/// Restores what saveColumns() saved under `key`, only when the model has exactly the columns
/// it was saved for: a layout saved before a column was added would put widths and order on
/// the wrong columns (QHeaderView's state is by position). Returns false when nothing fits.
bool restoreColumns(const QSettings &settings, const QString &key, QTableView *table);
/// Sets the widths in px of the columns named (kColumnNameRole); columns not named keep theirs.
void setColumnWidthsByName(QTableView *table, const QList<std::pair<QString, int>> &widths);

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
