// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QDialog>
#include <QList>
#include <QString>

class QAction;
class QLineEdit;
class QTableWidget;

namespace redrive {

/// One keyboard shortcut as the Help menu lists it.
struct ShortcutEntry
{
    QString action; ///< the action's text without its mnemonic ampersand or trailing ellipsis
    QString keys; ///< every key sequence of the action, in the platform's native text, ", "-joined
    QString where; ///< "Anywhere in the window", or the view the shortcut belongs to
};

/// Every shortcut reachable in `root`'s window: the QActions of `root` and of all its child
/// widgets that carry a key sequence, in menu order (the order they were created), each once.
/// A widget-scoped shortcut names its view by the view's accessible name (set on each table),
/// so "Enter" reads "Open case — in Dead letters list". Read from the live actions, so the list
/// cannot drift from what the keys do (docs/architecture.md "Keyboard").
QList<ShortcutEntry> collectShortcuts(const QWidget *root);

/// Help ▸ Keyboard shortcuts (F1): a filterable table of collectShortcuts() for the window, plus
/// the case view's own keys. Plain text only.
class KeyboardShortcutsDialog : public QDialog
{
    Q_OBJECT
public:
    /// Lists the shortcuts of `window` (usually the main window, also the dialog's parent).
    explicit KeyboardShortcutsDialog(QWidget *window);

    /// The table, one row per shortcut (tests read it).
    QTableWidget *table() const { return m_table; }
    /// Narrows the rows to those whose action, keys or place contain `text` (case-insensitive).
    void setFilterText(const QString &text);

private:
    QLineEdit *m_filter = nullptr;
    QTableWidget *m_table = nullptr;
};

} // namespace redrive
