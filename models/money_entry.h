// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QCoreApplication>
#include <QString>
#include <optional>

namespace redrive {

/// What an amount typed by a person is worth, in integer minor units of one currency, or why it
/// is refused (docs/domain.md#money). The non-UI half of MoneyEdit: the text is read exactly as
/// typed through display::parseMoney (the currency's ISO 4217 exponent, never a double), then
/// checked against the largest amount allowed. Nothing is rounded, clamped or dropped: a refused
/// text stays what it is and the refusal says why.
class MoneyEntry
{
    Q_DECLARE_TR_FUNCTIONS(redrive::MoneyEntry)
public:
    enum class Refusal {
        None, ///< accepted: value() holds the minor units
        Empty, ///< nothing typed
        UnknownCurrency, ///< the currency is not one whose exponent Redrive knows
        NotANumber, ///< not digits (a sign, letters, a misplaced comma or a second point)
        TooManyDecimals, ///< more digits after the point than the currency has (JPY: none)
        Zero, ///< zero is nothing to compensate
        AboveMaximum, ///< more than the maximum (what is still refundable)
        TooLarge, ///< beyond what 64-bit minor units hold
    };

    /// Checks `text` for `currency` (e.g. "USD"); `maximumMinor` is the largest amount accepted
    /// (minor units), none for no limit.
    static MoneyEntry check(const QString &text, const QString &currency,
                            std::optional<qint64> maximumMinor);

    bool isAcceptable() const { return m_refusal == Refusal::None; }
    Refusal refusal() const { return m_refusal; }
    /// The minor units, when acceptable.
    std::optional<qint64> value() const { return m_value; }
    /// Why it is refused, in a sentence naming the limit in the currency ("Above what can still
    /// be refunded: at most 1,500 JPY."); empty when accepted.
    QString message() const { return m_message; }

private:
    Refusal m_refusal = Refusal::Empty;
    std::optional<qint64> m_value;
    QString m_message;
};

} // namespace redrive
