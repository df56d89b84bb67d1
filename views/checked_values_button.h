// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QStringList>
#include <QToolButton>

namespace redrive {

/// A filter button over a fixed list of values (the key states, the mismatch statuses): its
/// menu lists them to check, and it reads "any" while none is checked (no narrowing), else the
/// checked values joined with ", ". Clicking opens the menu at once.
class CheckedValuesButton : public QToolButton
{
    Q_OBJECT
public:
    /// `values` in the order the menu lists them; none checked at first.
    explicit CheckedValuesButton(const QStringList &values, QWidget *parent = nullptr);

    /// The checked values in the menu's order; empty when none is (meaning any).
    QStringList checkedValues() const;
    /// Checks exactly the values in `values` that the menu lists (others are ignored) without
    /// emitting checkedValuesChanged().
    void setCheckedValues(const QStringList &values);

Q_SIGNALS:
    /// The operator checked or unchecked a value.
    void checkedValuesChanged();

private:
    void updateText();
};

} // namespace redrive
