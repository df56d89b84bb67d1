// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/money_entry.h"

#include "models/display_format.h"

#include <algorithm>

namespace redrive {

namespace {

bool isAsciiDigit(QChar c)
{
    return c >= QLatin1Char('0') && c <= QLatin1Char('9');
}

// The typed text without surrounding space and an optional trailing currency code, as
// display::parseMoney reads it.
QString amountPart(const QString &text, const QString &code)
{
    QString s = text.trimmed();
    if (s.size() > 3 && s.right(3).toUpper() == code)
        s = s.chopped(3).trimmed();
    return s;
}

} // namespace

MoneyEntry MoneyEntry::check(const QString &text, const QString &currency,
                             std::optional<qint64> maximumMinor)
{
    MoneyEntry e;
    const QString code = currency.trimmed().toUpper();
    const std::optional<int> exponent = display::currencyExponent(code);
    const QString s = amountPart(text, code);
    auto refuse = [&e](Refusal why, const QString &message) {
        e.m_refusal = why;
        e.m_value.reset();
        e.m_message = message;
        return e;
    };
    if (!exponent)
        return refuse(Refusal::UnknownCurrency,
                      code.isEmpty()
                          ? tr("No currency is known for this payment: no amount can be entered.")
                          : tr("%1 is not a currency Redrive knows the minor units of: no amount "
                               "can be entered.")
                                .arg(code));
    if (s.isEmpty())
        return refuse(Refusal::Empty, tr("Type an amount in %1.").arg(code));
    const std::optional<qint64> parsed = display::parseMoney(s, code);
    if (!parsed) {
        // Why: digits with a fraction longer than the currency has, more digits than 64-bit
        // minor units hold, or not a number at all.
        const qsizetype point = s.indexOf(QLatin1Char('.'));
        const QString whole = point < 0 ? s : s.left(point);
        const QString fraction = point < 0 ? QString() : s.mid(point + 1);
        const bool fractionDigits
            = !fraction.isEmpty() && std::all_of(fraction.cbegin(), fraction.cend(), isAsciiDigit);
        const bool wholeReadable = display::parseMoney(whole, code).has_value();
        if (wholeReadable && fractionDigits && fraction.size() > *exponent) {
            if (*exponent == 0)
                return refuse(
                    Refusal::TooManyDecimals,
                    tr("%1 has no minor unit: type whole %1, without a decimal point.").arg(code));
            return refuse(Refusal::TooManyDecimals,
                          tr("%1 has %2 decimal places: \"%3\" has more.")
                              .arg(code, QString::number(*exponent), s));
        }
        QString digits = whole;
        digits.remove(QLatin1Char(','));
        if (!digits.isEmpty() && std::all_of(digits.cbegin(), digits.cend(), isAsciiDigit)
            && (point < 0 || fractionDigits) && digits.size() + *exponent > 18)
            return refuse(Refusal::TooLarge, tr("That amount is too large."));
        if (*exponent == 0)
            return refuse(Refusal::NotANumber,
                          tr("\"%1\" is not an amount in %2: whole %2, digits only, e.g. 1500.")
                              .arg(s, code));
        return refuse(Refusal::NotANumber,
                      tr("\"%1\" is not an amount in %2: digits, optionally a point and up to %3 "
                         "decimal places, e.g. %4.")
                          .arg(s, code, QString::number(*exponent),
                               QLatin1String(*exponent == 2 ? "150.25" : "12.500")));
    }
    if (*parsed == 0)
        return refuse(Refusal::Zero, tr("The amount must be more than zero."));
    if (maximumMinor && *parsed > *maximumMinor)
        return refuse(Refusal::AboveMaximum,
                      tr("Above what can still be refunded: at most %1.")
                          .arg(display::money(*maximumMinor, code)));
    e.m_refusal = Refusal::None;
    e.m_value = parsed;
    e.m_message.clear();
    return e;
}

} // namespace redrive
