// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

// Part of the display module (models/display_format.*, which implements it): boundedText() in
// its parts, for a label that elides the shown prefix to its width and must keep the count of
// what was left out whole (docs/security.md#text-from-the-database-is-plain-text).

#include <QString>

namespace redrive::display {

/// What boundedText() shows, in its two parts.
struct BoundedText
{
    QString shown; ///< the prefix, invisible controls shown as markers (revealInvisible())
    QString suffix; ///< " … (N more characters)", empty when nothing was left out
    qsizetype sourceUnits = 0; ///< how many UTF-16 units of the text `shown` stands for
};

/// boundedText(`text`, `maxChars`) in its parts (the same prefix and count).
BoundedText boundedParts(const QString &text, qsizetype maxChars);
/// " … (N more characters)" (" … (1 more character)"), N with the default QLocale's grouping.
QString moreCharacters(qsizetype count);

} // namespace redrive::display
