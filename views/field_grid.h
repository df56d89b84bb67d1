// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QHash>
#include <QString>

class QGridLayout;
class QLabel;

namespace redrive {

/// Labelled one-line value fields in grids, found by a key: the case view's header and its
/// Headers and Idempotency key tabs. A value label is named "field_" + key (what tests and
/// screenshots look for), selectable, plain text, and shows "—" while empty.
class FieldGrid
{
public:
    /// Adds a field at grid `row`, field `column` (two grid columns each: label, value).
    /// Returns the value label (to set a font on, for example).
    QLabel *add(QGridLayout *grid, int row, int column, const QString &label, const QString &key);
    /// Shows `text` in the field `key`: its first line, bounded (display::kMaxCellChars), with
    /// what is left out counted in a suffix that is never elided, the rest elided in the middle
    /// to `maxPixels`. The tooltip is `toolTip`, or the whole text when any was left out.
    void set(const QString &key, const QString &text, const QString &toolTip = {},
             int maxPixels = 300);

private:
    QHash<QString, QLabel *> m_fields;
};

} // namespace redrive
