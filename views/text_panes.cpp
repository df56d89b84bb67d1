// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/text_panes.h"

#include <QFontDatabase>
#include <QLabel>
#include <QPlainTextEdit>
#include <QScreen>
#include <algorithm>

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

void ignoreTextWidth(QLabel *label)
{
    QSizePolicy policy = label->sizePolicy();
    policy.setHorizontalPolicy(QSizePolicy::Ignored);
    label->setSizePolicy(policy);
}

void restoreGeometryOnScreen(QWidget *window, const QByteArray &geometry)
{
    if (!geometry.isEmpty())
        window->restoreGeometry(geometry);
    const QScreen *screen = window->screen();
    if (!screen)
        return;
    const QRect available = screen->availableGeometry();
    const QSize size = window->size().boundedTo(available.size());
    if (size != window->size())
        window->resize(size);
    // The frame counts when moving: keep the title bar reachable.
    const QRect frame = window->frameGeometry();
    QPoint topLeft = frame.topLeft();
    topLeft.setX(std::clamp(topLeft.x(), available.left(),
                            std::max(available.left(), available.right() - frame.width() + 1)));
    topLeft.setY(std::clamp(topLeft.y(), available.top(),
                            std::max(available.top(), available.bottom() - frame.height() + 1)));
    if (topLeft != frame.topLeft())
        window->move(topLeft);
}

QByteArray geometryWorthSaving(const QWidget *window)
{
    const QScreen *screen = window->screen();
    if (screen) {
        const QSize available = screen->availableGeometry().size();
        if (window->width() > available.width() || window->height() > available.height())
            return {};
    }
    return window->saveGeometry();
}

} // namespace redrive::panes
