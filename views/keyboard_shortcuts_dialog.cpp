// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/keyboard_shortcuts_dialog.h"

#include <QAction>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QSet>
#include <QTableWidget>
#include <QVBoxLayout>

namespace redrive {

namespace {

QString plainText(const QAction *action)
{
    QString text = action->text();
    text.remove(QLatin1Char('&'));
    // A role gate appends "(needs role …)" to a disabled action: list the action itself.
    if (const qsizetype paren = text.indexOf(QStringLiteral(" (needs role")); paren > 0)
        text.truncate(paren);
    if (text.endsWith(QStringLiteral("…")))
        text.chop(1);
    return text.trimmed();
}

QString placeOf(const QAction *action)
{
    if (action->shortcutContext() == Qt::WindowShortcut
        || action->shortcutContext() == Qt::ApplicationShortcut)
        return QObject::tr("Anywhere in the window");
    for (const QObject *o = action->parent(); o; o = o->parent()) {
        const auto *widget = qobject_cast<const QWidget *>(o);
        if (widget && !widget->accessibleName().isEmpty())
            return QObject::tr("In %1").arg(widget->accessibleName());
    }
    return QObject::tr("In its view");
}

} // namespace

QList<ShortcutEntry> collectShortcuts(const QWidget *root)
{
    QList<ShortcutEntry> entries;
    QSet<const QAction *> seen;
    QList<QAction *> actions = root->findChildren<QAction *>();
    for (const QWidget *w : root->findChildren<QWidget *>())
        actions += w->actions();
    for (const QAction *action : std::as_const(actions)) {
        if (seen.contains(action) || action->shortcuts().isEmpty() || action->isSeparator())
            continue;
        seen.insert(action);
        QStringList keys;
        for (const QKeySequence &key : action->shortcuts())
            keys << key.toString(QKeySequence::NativeText);
        entries.append({ plainText(action), keys.join(QStringLiteral(", ")), placeOf(action) });
    }
    return entries;
}

KeyboardShortcutsDialog::KeyboardShortcutsDialog(QWidget *window)
    : QDialog(window)
{
    setWindowTitle(tr("Keyboard shortcuts"));
    auto *layout = new QVBoxLayout(this);
    m_filter = new QLineEdit(this);
    m_filter->setPlaceholderText(tr("Filter shortcuts"));
    m_filter->setClearButtonEnabled(true);
    layout->addWidget(m_filter);

    QList<ShortcutEntry> entries = collectShortcuts(window);
    // The case view is its own window, made when a case opens: its keys are listed here too.
    entries.append({ tr("Close the case view (cancels a running read first)"),
                     QKeySequence(Qt::Key_Escape).toString(QKeySequence::NativeText),
                     tr("In a case view") });
    entries.append({ tr("Re-read the case"),
                     QKeySequence(Qt::Key_F5).toString(QKeySequence::NativeText),
                     tr("In a case view") });

    m_table = new QTableWidget(int(entries.size()), 3, this);
    m_table->setObjectName(QStringLiteral("shortcutTable"));
    m_table->setHorizontalHeaderLabels({ tr("Action"), tr("Keys"), tr("Where") });
    m_table->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_table->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_table->setTabKeyNavigation(false);
    m_table->verticalHeader()->hide();
    m_table->setWordWrap(false);
    for (int row = 0; row < entries.size(); ++row) {
        m_table->setItem(row, 0, new QTableWidgetItem(entries[row].action));
        m_table->setItem(row, 1, new QTableWidgetItem(entries[row].keys));
        m_table->setItem(row, 2, new QTableWidgetItem(entries[row].where));
    }
    m_table->resizeColumnsToContents();
    m_table->horizontalHeader()->setStretchLastSection(true);
    layout->addWidget(m_table, 1);

    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
    connect(m_filter, &QLineEdit::textChanged, this, &KeyboardShortcutsDialog::setFilterText);
    resize(720, 560);
}

void KeyboardShortcutsDialog::setFilterText(const QString &text)
{
    for (int row = 0; row < m_table->rowCount(); ++row) {
        bool match = text.isEmpty();
        for (int c = 0; c < m_table->columnCount() && !match; ++c)
            match = m_table->item(row, c)->text().contains(text, Qt::CaseInsensitive);
        m_table->setRowHidden(row, !match);
    }
}

} // namespace redrive
