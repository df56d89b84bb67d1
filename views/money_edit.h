// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/money_entry.h"

#include <QWidget>
#include <optional>

class QLabel;
class QLineEdit;

namespace redrive {

/// The one amount input of the console (docs/domain.md#money): a line edit that keeps exactly
/// what the operator typed, the currency code beside it, and under it why the text is refused
/// (MoneyEntry: not a number, too many decimals for the currency, above the maximum). It never
/// drops a keystroke, rounds, clamps or goes through a double: typing "200" above a maximum of
/// 150.00 shows "200" and says "at most 150.00 USD".
class MoneyEdit : public QWidget
{
    Q_OBJECT
public:
    explicit MoneyEdit(QWidget *parent = nullptr);

    /// The ISO 4217 code amounts are read in; the text is checked again.
    void setCurrency(const QString &currency);
    QString currency() const { return m_currency; }
    /// The largest amount accepted, in minor units (none: no limit).
    void setMaximum(std::optional<qint64> maximumMinor);
    /// Shows `minorUnits` as the currency writes it ("1,500", "150.25", "12.500").
    void setValue(qint64 minorUnits);
    /// The amount in minor units when the text is acceptable.
    std::optional<qint64> value() const { return m_entry.value(); }
    const MoneyEntry &entry() const { return m_entry; }
    bool isAcceptable() const { return m_entry.isAcceptable(); }
    /// The text as typed.
    QString text() const;
    /// Why the text is refused, as shown under it (empty when acceptable).
    QString refusalText() const;
    QLineEdit *lineEdit() const { return m_edit; }

Q_SIGNALS:
    /// The text or what it is checked against changed; value() and refusalText() are current.
    void changed();

private:
    void recheck();

    QLineEdit *m_edit = nullptr;
    QLabel *m_code = nullptr;
    QLabel *m_refusal = nullptr;
    QString m_currency;
    std::optional<qint64> m_maximum;
    MoneyEntry m_entry;
};

} // namespace redrive
