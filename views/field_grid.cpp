// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/field_grid.h"

#include "models/display_format.h"

#include <QFontMetrics>
#include <QGridLayout>
#include <QLabel>
#include <algorithm>

namespace redrive {

namespace {

const char *const kNone = "—";

} // namespace

QLabel *FieldGrid::add(QGridLayout *grid, int row, int column, const QString &label,
                       const QString &key)
{
    auto *name = new QLabel(label, grid->parentWidget());
    name->setStyleSheet(QStringLiteral("color: #555555;"));
    name->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    auto *value = new QLabel(QString::fromUtf8(kNone), grid->parentWidget());
    value->setObjectName(QStringLiteral("field_") + key);
    value->setTextInteractionFlags(Qt::TextSelectableByMouse);
    value->setTextFormat(Qt::PlainText);
    grid->addWidget(name, row, 2 * column);
    grid->addWidget(value, row, 2 * column + 1);
    m_fields.insert(key, value);
    return value;
}

void FieldGrid::set(const QString &key, const QString &text, const QString &toolTip, int maxPixels)
{
    QLabel *label = m_fields.value(key);
    if (!label)
        return;
    // A field is one line: the first line, at most kMaxCellChars characters of it (eliding shapes
    // all of the text it gets; invisible controls shown as markers). What is left out, the lines
    // after the first included, is counted in a suffix that is never elided, so "(9,240 more
    // characters)" stays readable; the prefix before it is elided in the middle.
    const QString shown = text.isEmpty() ? QString::fromUtf8(kNone) : text;
    const qsizetype lineEnd = shown.indexOf(QLatin1Char('\n'));
    display::BoundedText parts
        = display::boundedParts(lineEnd < 0 ? shown : shown.left(lineEnd), display::kMaxCellChars);
    if (lineEnd >= 0) // the lines after the first are left out too
        parts.suffix = display::moreCharacters(
            display::characterCount(QStringView(shown).sliced(parts.sourceUnits)));
    const QFontMetrics metrics = label->fontMetrics();
    QString elided;
    if (parts.suffix.isEmpty()) {
        elided = metrics.elidedText(parts.shown, Qt::ElideMiddle, maxPixels);
    } else {
        const int room = std::max(maxPixels - metrics.horizontalAdvance(parts.suffix), 0);
        elided = metrics.elidedText(parts.shown, Qt::ElideMiddle, room) + parts.suffix;
    }
    label->setText(elided);
    label->setToolTip(display::plainToolTip(
        !toolTip.isEmpty() ? toolTip : (elided != shown ? shown : QString())));
}

} // namespace redrive
