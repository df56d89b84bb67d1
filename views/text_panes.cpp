// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/text_panes.h"

#include <QFontDatabase>
#include <QLabel>
#include <QPlainTextEdit>

namespace redrive::panes {

QFont monospace()
{
    return QFontDatabase::systemFont(QFontDatabase::FixedFont);
}

QPlainTextEdit *readOnlyText(QWidget *parent, const QString &name)
{
    auto *edit = new QPlainTextEdit(parent);
    edit->setObjectName(name);
    edit->setReadOnly(true);
    edit->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    edit->setFont(monospace());
    edit->setLineWrapMode(QPlainTextEdit::NoWrap);
    return edit;
}

QLabel *note(QWidget *parent, const QString &name)
{
    auto *label = new QLabel(parent);
    label->setObjectName(name);
    label->setWordWrap(true);
    label->setTextFormat(Qt::PlainText);
    label->setStyleSheet(QStringLiteral("color: #555555;"));
    return label;
}

} // namespace redrive::panes
