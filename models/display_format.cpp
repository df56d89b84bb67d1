// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/display_format.h"

#include <QCoreApplication>
#include <QHash>
#include <QJsonArray>
#include <QJsonDocument>
#include <QLocale>
#include <QStringList>
#include <QTextBoundaryFinder>
#include <algorithm>
#include <array>
#include <limits>
#include <string_view>

namespace redrive::display {

namespace {

QString tr(const char *text)
{
    return QCoreApplication::translate("redrive::display", text);
}

const QString kTimeFormat = QStringLiteral("yyyy-MM-dd HH:mm:ss");

// ISO 4217 (list one, current codes) by minor-unit exponent. Codes not listed are unknown and
// shown raw, never guessed. Sorted, for binary search.
constexpr std::array<std::string_view, 17> kExponent0 = {
    "BIF", "CLP", "DJF", "GNF", "ISK", "JPY", "KMF", "KRW", "PYG",
    "RWF", "UGX", "UYI", "VND", "VUV", "XAF", "XOF", "XPF",
};
constexpr std::array<std::string_view, 7> kExponent3 = {
    "BHD", "IQD", "JOD", "KWD", "LYD", "OMR", "TND",
};
constexpr std::array<std::string_view, 2> kExponent4 = { "CLF", "UYW" };
constexpr std::array<std::string_view, 141> kExponent2 = {
    "AED", "AFN", "ALL", "AMD", "ANG", "AOA", "ARS", "AUD", "AWG", "AZN", "BAM", "BBD", "BDT",
    "BGN", "BMD", "BND", "BOB", "BOV", "BRL", "BSD", "BTN", "BWP", "BYN", "BZD", "CAD", "CDF",
    "CHE", "CHF", "CHW", "CNY", "COP", "COU", "CRC", "CUC", "CUP", "CVE", "CZK", "DKK", "DOP",
    "DZD", "EGP", "ERN", "ETB", "EUR", "FJD", "FKP", "GBP", "GEL", "GHS", "GIP", "GMD", "GTQ",
    "GYD", "HKD", "HNL", "HTG", "HUF", "IDR", "ILS", "INR", "IRR", "JMD", "KES", "KGS", "KHR",
    "KPW", "KYD", "KZT", "LAK", "LBP", "LKR", "LRD", "LSL", "MAD", "MDL", "MGA", "MKD", "MMK",
    "MNT", "MOP", "MRU", "MUR", "MVR", "MWK", "MXN", "MXV", "MYR", "MZN", "NAD", "NGN", "NIO",
    "NOK", "NPR", "NZD", "PAB", "PEN", "PGK", "PHP", "PKR", "PLN", "QAR", "RON", "RSD", "RUB",
    "SAR", "SBD", "SCR", "SDG", "SEK", "SGD", "SHP", "SLE", "SLL", "SOS", "SRD", "SSP", "STN",
    "SVC", "SYP", "SZL", "THB", "TJS", "TMT", "TOP", "TRY", "TTD", "TWD", "TZS", "UAH", "USD",
    "USN", "UYU", "UZS", "VED", "VES", "WST", "XCD", "YER", "ZAR", "ZMW", "ZWG",
};

static_assert(std::is_sorted(kExponent0.begin(), kExponent0.end())
              && std::is_sorted(kExponent2.begin(), kExponent2.end())
              && std::is_sorted(kExponent3.begin(), kExponent3.end())
              && std::is_sorted(kExponent4.begin(), kExponent4.end()));

template<std::size_t N>
bool listed(const std::array<std::string_view, N> &codes, std::string_view code)
{
    return std::binary_search(codes.begin(), codes.end(), code);
}

QString normalisedCode(const QString &currency)
{
    return currency.trimmed().toUpper();
}

quint64 powerOfTen(int exponent)
{
    quint64 scale = 1;
    for (int i = 0; i < exponent; ++i)
        scale *= 10;
    return scale;
}

// "1234567" -> "1,234,567".
QString grouped(quint64 value)
{
    const QString digits = QString::number(value);
    QString out;
    out.reserve(digits.size() + digits.size() / 3);
    for (qsizetype i = 0; i < digits.size(); ++i) {
        if (i > 0 && (digits.size() - i) % 3 == 0)
            out.append(QLatin1Char(','));
        out.append(digits.at(i));
    }
    return out;
}

QString amountText(qint64 minorUnits, int exponent)
{
    const quint64 magnitude
        = minorUnits < 0 ? quint64(0) - quint64(minorUnits) : quint64(minorUnits);
    const quint64 scale = powerOfTen(exponent);
    QString text = grouped(magnitude / scale);
    if (exponent > 0)
        text += QLatin1Char('.')
            + QStringLiteral("%1").arg(magnitude % scale, exponent, 10, QLatin1Char('0'));
    if (minorUnits < 0)
        text.prepend(QLatin1Char('-'));
    return text;
}

bool isDigit(QChar c)
{
    return c >= QLatin1Char('0') && c <= QLatin1Char('9');
}

bool isJsonSpace(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

// Copies the string token starting at utf8[i] (a '"') exactly, escapes included; returns the
// index after it (or the end of a cut text).
qsizetype copyString(QByteArrayView utf8, qsizetype i, QByteArray &out)
{
    const qsizetype n = utf8.size();
    const qsizetype start = i++;
    while (i < n && utf8[i] != '"')
        i += utf8[i] == '\\' ? 2 : 1;
    i = std::min(i + 1, n);
    out.append(utf8.sliced(start, i - start));
    return i;
}

} // namespace

// ---- Time ------------------------------------------------------------------------------------

QString offsetLabel(int offsetSeconds)
{
    const int minutes = std::abs(offsetSeconds) / 60;
    return QStringLiteral("%1%2:%3")
        .arg(offsetSeconds < 0 ? QLatin1Char('-') : QLatin1Char('+'))
        .arg(minutes / 60, 2, 10, QLatin1Char('0'))
        .arg(minutes % 60, 2, 10, QLatin1Char('0'));
}

QDateTime infiniteFuture()
{
    return QDateTime(QDate(1000000, 1, 1), QTime(0, 0), QTimeZone::utc());
}

QDateTime infinitePast()
{
    return QDateTime(QDate(-1000000, 1, 1), QTime(0, 0), QTimeZone::utc());
}

bool isInfinite(const QDateTime &instant)
{
    return instant.isValid() && (instant == infiniteFuture() || instant == infinitePast());
}

namespace {

// "yyyy-MM-dd HH:mm:ss", with a year before 1 as its number BC (Qt writes year -4713 as "-4713").
QString timeText(const QDateTime &at)
{
    if (at.date().year() > 0)
        return at.toString(kTimeFormat);
    const QDateTime ad(QDate(-at.date().year(), at.date().month(), at.date().day()), at.time(),
                       at.timeZone());
    return ad.toString(kTimeFormat) + QStringLiteral(" BC");
}

// "∞" / "−∞" (U+2212 MINUS SIGN) for PostgreSQL's infinities, else empty.
QString infinityText(const QDateTime &utc)
{
    if (utc == infiniteFuture())
        return QStringLiteral("\u221E");
    if (utc == infinitePast())
        return QStringLiteral("\u2212\u221E");
    return {};
}

} // namespace

QString time(const QDateTime &utc, bool showUtc, const QTimeZone &zone)
{
    if (!utc.isValid())
        return {};
    if (isInfinite(utc))
        return infinityText(utc);
    if (showUtc)
        return timeText(utc.toUTC()) + QStringLiteral(" UTC");
    const QDateTime local = utc.toTimeZone(zone);
    return timeText(local) + QLatin1Char(' ') + offsetLabel(local.offsetFromUtc());
}

QString time(const QDateTime &utc, bool showUtc)
{
    if (!utc.isValid())
        return {};
    if (isInfinite(utc))
        return infinityText(utc);
    if (showUtc)
        return time(utc, true, QTimeZone::utc());
    const QDateTime local = utc.toLocalTime();
    return timeText(local) + QLatin1Char(' ') + offsetLabel(local.offsetFromUtc());
}

QString age(qint64 seconds)
{
    if (seconds < 0)
        seconds = 0;
    if (seconds < 60)
        return tr("%1 s").arg(seconds);
    if (seconds < 3600)
        return tr("%1 min").arg(seconds / 60);
    if (seconds < 86400)
        return tr("%1 h %2 min").arg(seconds / 3600).arg((seconds % 3600) / 60);
    return tr("%1 d %2 h").arg(seconds / 86400).arg((seconds % 86400) / 3600);
}

QString duration(qint64 ms)
{
    if (ms < 0)
        ms = 0;
    if (ms < 1000)
        return tr("%1 ms").arg(ms);
    if (ms < 60000) {
        const qint64 tenths = ms / 100;
        return tr("%1 s").arg(QString::number(tenths / 10) + QLocale().decimalPoint()
                              + QString::number(tenths % 10));
    }
    const qint64 s = ms / 1000;
    if (s < 3600)
        return s % 60 ? tr("%1 min %2 s").arg(s / 60).arg(s % 60) : tr("%1 min").arg(s / 60);
    if (s < 86400) {
        const qint64 minutes = (s % 3600) / 60;
        return minutes ? tr("%1 h %2 min").arg(s / 3600).arg(minutes) : tr("%1 h").arg(s / 3600);
    }
    const qint64 hours = (s % 86400) / 3600;
    return hours ? tr("%1 d %2 h").arg(s / 86400).arg(hours) : tr("%1 d").arg(s / 86400);
}

// ---- Short text ------------------------------------------------------------------------------

QString shortHash(const QString &hash)
{
    return hash.size() > kShortHashChars ? hash.left(kShortHashChars) + QChar(0x2026) : hash;
}

QString firstLine(const QString &text, bool *shortened, qsizetype maxChars)
{
    // Only a window of the text is read: collapsing white space never shrinks it below maxChars
    // unless most of it is white space, and a megabyte-long line must not be scanned per paint.
    const qsizetype window = maxChars < 0 ? text.size() : maxChars * 4 + 64;
    const QStringView head = QStringView(text).left(window);
    // A lone CR ends a line as LF does: "\r=1+1" must not read as a whole "=1+1".
    qsizetype newline = -1;
    for (qsizetype i = 0; i < head.size() && newline < 0; ++i) {
        if (head.at(i) == QLatin1Char('\n') || head.at(i) == QLatin1Char('\r'))
            newline = i;
    }
    // Only U+0020 is trimmed: anything else at the ends is part of what the line says.
    const auto trimSpaces = [](QStringView s) {
        qsizetype from = 0;
        qsizetype to = s.size();
        while (from < to && s.at(from) == QLatin1Char(' '))
            ++from;
        while (to > from && s.at(to - 1) == QLatin1Char(' '))
            --to;
        return s.sliced(from, to - from).toString();
    };
    QString line;
    bool cut = false;
    if (newline >= 0) {
        line = trimSpaces(head.left(newline));
        cut = !QStringView(text).sliced(newline).trimmed().isEmpty();
    } else {
        line = trimSpaces(head);
        cut = text.size() > window;
    }
    if (maxChars >= 0 && line.size() > maxChars) {
        line.truncate(maxChars);
        cut = true;
    }
    if (shortened)
        *shortened = cut;
    return line;
}

// ---- Text from the database ------------------------------------------------------------------

namespace {

// Below U+0300 nothing joins the next character into the same cluster: Extend, SpacingMark, ZWJ,
// Prepend, Hangul jamo, regional indicators and emoji all lie above (UAX #29, table 2).
bool isSimple(QChar c)
{
    return c.unicode() < 0x300;
}

// Calls `visit(end)` with the end (in UTF-16 units) of each user-perceived character of `text`,
// in order, until it returns false. Between two characters below U+0300 there is always a
// boundary (except CR LF), so only the stretches around other characters go through
// QTextBoundaryFinder, which costs far more per unit.
template<typename Visit>
void forEachCharacter(QStringView text, Visit visit)
{
    const qsizetype n = text.size();
    auto safeBoundary = [&](qsizetype at) {
        return isSimple(text[at - 1]) && isSimple(text[at])
            && !(text[at - 1] == QLatin1Char('\r') && text[at] == QLatin1Char('\n'));
    };
    qsizetype i = 0;
    while (i < n) {
        if (isSimple(text[i]) && (i + 1 == n || isSimple(text[i + 1]))) {
            qsizetype end = i + 1;
            if (text[i] == QLatin1Char('\r') && end < n && text[end] == QLatin1Char('\n'))
                ++end;
            if (!visit(end))
                return;
            i = end;
            continue;
        }
        qsizetype j = i + 1;
        while (j < n && !safeBoundary(j))
            ++j;
        QTextBoundaryFinder finder(QTextBoundaryFinder::Grapheme, text.data() + i, j - i);
        for (qsizetype b = finder.toNextBoundary(); b > 0; b = finder.toNextBoundary()) {
            if (!visit(i + b))
                return;
        }
        i = j;
    }
}

} // namespace

qsizetype characterCount(QStringView text)
{
    const char16_t *p = text.utf16();
    const qsizetype n = text.size();
    qsizetype count = 0;
    qsizetype i = 0;
    while (i < n) {
        // A run below U+0300 without CR: every unit but the last is followed by one that cannot
        // join it, so each is a character of its own.
        qsizetype j = i;
        while (j < n && p[j] < 0x300 && p[j] != u'\r')
            ++j;
        if (j == n) {
            count += j - i;
            break;
        }
        if (j - i >= 2) {
            count += j - i - 1;
            i = j - 1;
        }
        // The rest, up to the next boundary that needs no rules, through QTextBoundaryFinder.
        qsizetype k = i + 1;
        while (k < n
               && !(p[k - 1] < 0x300 && p[k] < 0x300 && !(p[k - 1] == u'\r' && p[k] == u'\n')))
            ++k;
        QTextBoundaryFinder finder(QTextBoundaryFinder::Grapheme, text.data() + i, k - i);
        for (qsizetype b = finder.toNextBoundary(); b > 0; b = finder.toNextBoundary())
            ++count;
        i = k;
    }
    return count;
}

bool isHiddenCharacter(char32_t c)
{
    if (c >= 0x80 && c <= 0x9F)
        return true; // C1 controls (NEL U+0085 among them)
    if (c < 0xAD)
        return false;
    if (c <= 0xFFFF && isInvisibleControl(char16_t(c)))
        return true;
    if ((c >= 0xFE00 && c <= 0xFE0F) || (c >= 0xE0100 && c <= 0xE01EF))
        return true;
    switch (c) {
    case 0x034F:
    case 0x115F:
    case 0x1160:
    case 0x17B4:
    case 0x17B5:
    case 0x3164:
    case 0xFFA0:
        return true;
    default:
        return QChar::category(c) == QChar::Other_Format;
    }
}

namespace {

// What a shown text puts in place of one code point.
enum class Shown { Itself, Marker, Picture };

// `text` with each code point `shown(c, start, end)` says to replace (its UTF-16 units from
// `start` to `end`) as "⟨U+XXXX⟩" or its control picture; `text` itself when nothing is.
template<class ShownAs>
QString reveal(const QString &text, ShownAs shown)
{
    const qsizetype n = text.size();
    QString out;
    qsizetype copied = 0;
    for (qsizetype i = 0; i < n;) {
        const char16_t u = text.at(i).unicode();
        char32_t c = u;
        qsizetype end = i + 1;
        if (QChar::isHighSurrogate(u) && end < n && QChar::isLowSurrogate(text.at(end).unicode()))
            c = QChar::surrogateToUcs4(u, text.at(end++).unicode());
        const Shown how = shown(c, i, end);
        if (how != Shown::Itself) {
            if (out.isNull())
                out.reserve(n + 16);
            out.append(QStringView(text).sliced(copied, i - copied));
            if (how == Shown::Marker)
                out += QStringLiteral("\u27E8U+%1\u27E9")
                           .arg(QString::number(uint(c), 16).toUpper().rightJustified(4, u'0'));
            else
                out += QChar(c == 0x7f ? char16_t(0x2421) : char16_t(0x2400 + c));
            copied = end;
        }
        i = end;
    }
    if (out.isNull())
        return text;
    out.append(QStringView(text).sliced(copied));
    return out;
}

// C0 controls but TAB, LF and CR, and DEL: shown as their control pictures.
bool isPictured(char32_t c)
{
    return (c < 0x20 && c != u'\t' && c != u'\n' && c != u'\r') || c == 0x7f;
}

} // namespace

QString revealInvisibleInLine(const QString &text)
{
    QString shown = revealInvisible(text);
    shown.replace(QLatin1Char('\t'), QChar(0x2409));
    shown.replace(QLatin1Char('\n'), QChar(0x240A));
    shown.replace(QLatin1Char('\r'), QChar(0x240D));
    return shown;
}

QString revealInvisible(const QString &text)
{
    return reveal(text, [](char32_t c, qsizetype, qsizetype) {
        if (isPictured(c))
            return Shown::Picture;
        return isHiddenCharacter(c) ? Shown::Marker : Shown::Itself;
    });
}

QString revealLookAlikes(const QString &identifier)
{
    const qsizetype n = identifier.size();
    QString shown = reveal(identifier, [n](char32_t c, qsizetype start, qsizetype end) {
        // Markers rather than control pictures: every font draws "⟨U+0020⟩", few draw "␠".
        if (c < 0x20 || c == 0x7f)
            return Shown::Marker;
        if (c == u' ')
            return start == 0 || end == n ? Shown::Marker : Shown::Itself;
        if (c < 0xA0)
            return Shown::Itself;
        if (isHiddenCharacter(c) || QChar::isSpace(c))
            return Shown::Marker;
        const QChar::Category category = QChar::category(c);
        return category == QChar::Mark_NonSpacing || category == QChar::Mark_Enclosing
            ? Shown::Marker
            : Shown::Itself;
    });
    return shown;
}

QString moreCharacters(qsizetype count)
{
    return count == 1 ? tr(" \u2026 (1 more character)")
                      : tr(" \u2026 (%1 more characters)").arg(QLocale().toString(count));
}

BoundedText boundedParts(const QString &text, qsizetype maxChars)
{
    // A character is at least one UTF-16 unit: no longer text can hold more than maxChars.
    if (text.size() <= maxChars)
        return { revealInvisible(text), {}, text.size() };
    const qsizetype limit = std::max<qsizetype>(maxChars, 0);
    const qsizetype maxUnits = limit * 4 + 64;
    qsizetype shownCount = 0;
    qsizetype shownEnd = 0;
    // Boundaries before the window's last unit are the text's own (UAX #29 looks at most one
    // character ahead), so only the window is segmented for the prefix.
    if (limit > 0)
        forEachCharacter(QStringView(text).left(maxUnits + 1), [&](qsizetype end) {
            if (end > maxUnits)
                return false;
            shownEnd = end;
            return ++shownCount < limit;
        });
    const qsizetype more = characterCount(QStringView(text).sliced(shownEnd));
    if (more == 0)
        return { revealInvisible(text), {}, text.size() };
    return { revealInvisible(text.left(shownEnd)), moreCharacters(more), shownEnd };
}

QString boundedText(const QString &text, qsizetype maxChars)
{
    const BoundedText parts = boundedParts(text, maxChars);
    return parts.shown + parts.suffix;
}

QString headLines(const QString &text, qsizetype maxLines, qsizetype *left)
{
    *left = 0;
    if (maxLines <= 0) {
        if (!text.isEmpty())
            *left = text.count(QLatin1Char('\n')) + 1 - (text.endsWith(QLatin1Char('\n')) ? 1 : 0);
        return {};
    }
    qsizetype from = 0; // where the line after the last one shown starts
    for (qsizetype shown = 0; shown < maxLines; ++shown) {
        const qsizetype end = text.indexOf(QLatin1Char('\n'), from);
        if (end < 0)
            return text;
        from = end + 1;
    }
    if (from >= text.size())
        return text;
    *left
        = text.count(QLatin1Char('\n')) - maxLines + 1 - (text.endsWith(QLatin1Char('\n')) ? 1 : 0);
    return text.left(from - 1);
}

QString boundedLines(const QString &text, qsizetype maxLines, qsizetype maxChars)
{
    qsizetype left = 0;
    const QString head = headLines(text, std::max<qsizetype>(maxLines, 1), &left);
    if (left == 0)
        return boundedText(text, maxChars);
    return boundedText(head, maxChars) + QLatin1Char('\n')
        + (left == 1 ? tr("\u2026 (1 more line)")
                     : tr("\u2026 (%1 more lines)").arg(QLocale().toString(left)));
}

QString oneLine(const QString &value, qsizetype maxChars)
{
    // A CR LF pair is one character (characterCount), so one marker.
    return boundedText(value, maxChars)
        .replace(QLatin1String("\r\n"), QStringLiteral("\u23CE"))
        .replace(QLatin1Char('\r'), QChar(0x23CE))
        .replace(QLatin1Char('\n'), QChar(0x23CE));
}

QString plainToolTip(const QString &text, qsizetype maxChars, const QString &note)
{
    if (text.isEmpty())
        return {};
    QString html = boundedLines(text, kMaxToolTipLines, maxChars);
    if (!note.isEmpty())
        html += QLatin1Char('\n') + oneLine(note);
    html = html.toHtmlEscaped();
    html.replace(QLatin1Char('\n'), QLatin1String("<br>"));
    return QLatin1String("<qt><p style=\"white-space:pre-wrap\">") + html
        + QLatin1String("</p></qt>");
}

QString inPieces(const QString &text, qsizetype maxLineChars, bool *broken)
{
    if (broken)
        *broken = false;
    if (maxLineChars <= 1 || text.size() <= maxLineChars)
        return text;
    // Line by line, whole runs copied at once (a character at a time took 30 ms for 2.7 MB on
    // the GUI thread); a text with no line too long is returned as it is, shared.
    const QStringView view(text);
    const auto lineEnd = [&](qsizetype from) {
        const qsizetype end = text.indexOf(QLatin1Char('\n'), from);
        return end < 0 ? text.size() : end;
    };
    qsizetype from = 0;
    while (from < text.size() && lineEnd(from) - from <= maxLineChars)
        from = lineEnd(from) + 1;
    if (from >= text.size())
        return text;
    QString out;
    out.reserve(text.size() + text.size() / maxLineChars + 1);
    out.append(view.first(from));
    for (;;) {
        const qsizetype end = lineEnd(from);
        qsizetype pos = from;
        // Pieces of maxLineChars; a break never falls before the second half of a surrogate
        // pair (that piece is one longer).
        while (end - pos > maxLineChars) {
            qsizetype cut = pos + maxLineChars;
            if (text.at(cut).isLowSurrogate())
                ++cut;
            if (cut >= end)
                break;
            out.append(view.sliced(pos, cut - pos));
            out += QLatin1Char('\n');
            pos = cut;
            if (broken)
                *broken = true;
        }
        out.append(view.sliced(pos, end - pos));
        if (end >= text.size())
            break;
        out += QLatin1Char('\n');
        from = end + 1;
    }
    return out;
}

// ---- Money -----------------------------------------------------------------------------------

std::optional<int> currencyExponent(const QString &currency)
{
    const QString code = normalisedCode(currency);
    if (code.size() != 3)
        return std::nullopt;
    const QByteArray latin = code.toLatin1();
    const std::string_view key(latin.constData(), std::size_t(latin.size()));
    if (listed(kExponent2, key))
        return 2;
    if (listed(kExponent0, key))
        return 0;
    if (listed(kExponent3, key))
        return 3;
    if (listed(kExponent4, key))
        return 4;
    return std::nullopt;
}

std::optional<QString> moneyAmount(qint64 minorUnits, const QString &currency)
{
    const std::optional<int> exponent = currencyExponent(currency);
    if (!exponent)
        return std::nullopt;
    return amountText(minorUnits, *exponent);
}

QString money(qint64 minorUnits, const QString &currency)
{
    const QString code = normalisedCode(currency);
    if (const std::optional<QString> amount = moneyAmount(minorUnits, code))
        return *amount + QLatin1Char(' ') + code;
    if (code.isEmpty())
        return tr("%1 minor units").arg(minorUnits);
    return tr("%1 minor units %2").arg(minorUnits).arg(code);
}

std::optional<qint64> parseMoney(const QString &text, const QString &currency)
{
    const QString code = normalisedCode(currency);
    const std::optional<int> exponent = currencyExponent(code);
    if (!exponent)
        return std::nullopt;
    QString s = text.trimmed();
    if (s.size() > 3 && s.right(3).toUpper() == code) {
        s.chop(3);
        s = s.trimmed();
    }
    const qsizetype point = s.indexOf(QLatin1Char('.'));
    const QString whole = point < 0 ? s : s.left(point);
    const QString fraction = point < 0 ? QString() : s.mid(point + 1);
    if (whole.isEmpty())
        return std::nullopt;
    if (point >= 0 && (fraction.isEmpty() || fraction.size() > *exponent))
        return std::nullopt;
    for (QChar c : fraction) {
        if (!isDigit(c))
            return std::nullopt;
    }
    // Whole part: plain digits, or digit groups of three after a first group of one to three.
    const QStringList groups = whole.split(QLatin1Char(','));
    for (qsizetype g = 0; g < groups.size(); ++g) {
        const QString &group = groups.at(g);
        if (group.isEmpty())
            return std::nullopt;
        if (groups.size() > 1 && (g == 0 ? group.size() > 3 : group.size() != 3))
            return std::nullopt;
        for (QChar c : group) {
            if (!isDigit(c))
                return std::nullopt;
        }
    }
    constexpr quint64 kMax = quint64(std::numeric_limits<qint64>::max());
    quint64 value = 0;
    auto push = [&](QChar c) {
        const quint64 digit = quint64(c.unicode() - u'0');
        if (value > (kMax - digit) / 10)
            return false;
        value = value * 10 + digit;
        return true;
    };
    for (const QString &group : groups) {
        for (QChar c : group) {
            if (!push(c))
                return std::nullopt;
        }
    }
    for (int i = 0; i < *exponent; ++i) {
        if (!push(i < fraction.size() ? fraction.at(i) : QLatin1Char('0')))
            return std::nullopt;
    }
    return qint64(value);
}

// ---- JSON ------------------------------------------------------------------------------------

QByteArray prettyJson(QByteArrayView utf8, bool *flattened)
{
    const qsizetype n = utf8.size();
    QByteArray out;
    out.reserve(n + n / 3 + 16);
    int depth = 0;
    qsizetype lineStart = 0;
    if (flattened)
        *flattened = false;
    auto newline = [&] {
        out.append('\n');
        lineStart = out.size();
        out.append(QByteArray(4 * std::clamp(depth, 0, kMaxIndentDepth), ' '));
    };
    // Deeper than kMaxIndentDepth the tokens follow each other on the line, which is broken only
    // once it is long: thousands of levels never make megabytes of indentation.
    auto deep = [&] {
        return depth > kMaxIndentDepth;
    };
    auto breakIfLong = [&] {
        if (out.size() - lineStart > kMaxFlatLineBytes)
            newline();
    };
    qsizetype i = 0;
    while (i < n) {
        const char c = utf8[i];
        if (c == '"') {
            i = copyString(utf8, i, out);
            continue;
        }
        if (isJsonSpace(c)) {
            ++i;
            continue;
        }
        switch (c) {
        case '{':
        case '[': {
            const char close = c == '{' ? '}' : ']';
            qsizetype j = i + 1;
            while (j < n && isJsonSpace(utf8[j]))
                ++j;
            if (j < n && utf8[j] == close) {
                out.append(c);
                out.append(close);
                i = j + 1;
                continue;
            }
            out.append(c);
            ++depth;
            if (j < n && deep()) {
                if (flattened)
                    *flattened = true;
                breakIfLong();
            } else if (j < n) {
                newline();
            }
            break;
        }
        case '}':
        case ']': {
            const bool wasDeep = deep();
            --depth;
            if (wasDeep)
                breakIfLong();
            else
                newline();
            out.append(c);
            break;
        }
        case ',':
            out.append(',');
            if (deep())
                breakIfLong();
            else
                newline();
            break;
        case ':':
            out.append(": ");
            break;
        default:
            out.append(c);
            break;
        }
        ++i;
    }
    return out;
}

QByteArray compactJson(QByteArrayView utf8)
{
    const qsizetype n = utf8.size();
    QByteArray out;
    out.reserve(n);
    qsizetype i = 0;
    while (i < n) {
        const char c = utf8[i];
        if (c == '"') {
            i = copyString(utf8, i, out);
            continue;
        }
        if (!isJsonSpace(c))
            out.append(c);
        ++i;
    }
    return out;
}

QString jsonQuoted(const QString &text)
{
    // Qt's JSON writer escapes a string as RFC 8259 asks; an array of one is the smallest
    // document that holds it.
    const QByteArray document = QJsonDocument(QJsonArray { text }).toJson(QJsonDocument::Compact);
    return QString::fromUtf8(document.mid(1, document.size() - 2));
}

QString prettyJsonText(const QString &json)
{
    return QString::fromUtf8(prettyJson(json.toUtf8()));
}

// ---- Failure groups --------------------------------------------------------------------------

QString differingWords(const QString &text, const QStringList &lookAlikes)
{
    const QStringList words = text.split(QLatin1Char(' '));
    qsizetype prefix = words.size();
    qsizetype suffix = words.size();
    qsizetype compared = 0;
    for (const QString &other : lookAlikes) {
        if (other == text)
            continue;
        ++compared;
        const QStringList theirs = other.split(QLatin1Char(' '));
        qsizetype p = 0;
        while (p < prefix && p < theirs.size() && words[p] == theirs[p])
            ++p;
        prefix = p;
        qsizetype q = 0;
        while (q < suffix && q < theirs.size()
               && words[words.size() - 1 - q] == theirs[theirs.size() - 1 - q])
            ++q;
        suffix = q;
    }
    if (compared == 0)
        return text;
    // The shared runs may overlap when `text` is a look-alike's prefix or suffix plus words:
    // keep at least one word of `text` between them.
    if (prefix + suffix >= words.size())
        suffix = std::max<qsizetype>(0, words.size() - prefix - 1);
    if (prefix >= words.size())
        prefix = words.size() - 1;
    if (prefix == 0 && suffix == 0)
        return text;
    QString middle = words.mid(prefix, words.size() - prefix - suffix).join(QLatin1Char(' '));
    if (prefix > 0)
        middle.prepend(QChar(0x2026));
    if (suffix > 0)
        middle.append(QChar(0x2026));
    return middle;
}

QString sparkline(const QList<qint64> &values)
{
    static constexpr char16_t kBlocks[] = u"\u2581\u2582\u2583\u2584\u2585\u2586\u2587\u2588";
    constexpr qint64 kLevels = 8;
    qint64 max = 0;
    for (qint64 v : values)
        max = std::max(max, v);
    QString out;
    out.reserve(values.size());
    for (qint64 v : values) {
        const qint64 level
            = max <= 0 || v <= 0 ? 0 : std::max<qint64>(1, (v * (kLevels - 1) + max - 1) / max);
        out.append(QChar(kBlocks[level]));
    }
    return out;
}

QList<qint64> countList(const QString &commaSeparated)
{
    QList<qint64> out;
    if (commaSeparated.isEmpty())
        return out;
    for (const QStringView part : QStringView(commaSeparated).split(u','))
        out.append(part.trimmed().toLongLong());
    return out;
}

QString verdictSummary(qint64 safe, qint64 lookFirst, qint64 blocked)
{
    QStringList parts;
    if (safe > 0)
        parts << tr("%1 safe").arg(safe);
    if (lookFirst > 0)
        parts << tr("%1 look first").arg(lookFirst);
    if (blocked > 0)
        parts << tr("%1 blocked").arg(blocked);
    return parts.isEmpty() ? tr("no open dead letters") : parts.join(QStringLiteral(" \u00b7 "));
}

// ---- Actions ---------------------------------------------------------------------------------

QString auditReference(const QList<qint64> &auditIds, const QStringList &actionIds)
{
    constexpr qsizetype kListed = 5;
    if (auditIds.isEmpty())
        return {};
    if (auditIds.size() == 1)
        return tr("audit entry %1 \u00b7 action id %2")
            .arg(auditIds.first())
            .arg(actionIds.value(0));
    if (auditIds.size() <= kListed) {
        QStringList entries;
        for (qint64 id : auditIds)
            entries << QString::number(id);
        return tr("audit entries %1 \u00b7 action ids %2")
            .arg(entries.join(QStringLiteral(", ")), actionIds.join(QStringLiteral(", ")));
    }
    const auto [low, high] = std::minmax_element(auditIds.begin(), auditIds.end());
    return tr("audit entries %1 \u2026 %2 (%3 entries)").arg(*low).arg(*high).arg(auditIds.size());
}

QString lastChange(const QString &action, const QString &login, qint64 ageSeconds)
{
    static const QHash<QString, const char *> kDone {
        { QStringLiteral("requeue"), "requeued" },
        { QStringLiteral("resolve"), "resolved" },
        { QStringLiteral("claim"), "claimed" },
        { QStringLiteral("unclaim"), "unclaimed" },
        { QStringLiteral("edit_and_requeue"), "edited and requeued" },
        { QStringLiteral("note"), "noted" },
        { QStringLiteral("request_compensation"), "sent to compensation" },
        { QStringLiteral("decide_compensation"), "decided on" },
        { QStringLiteral("worker_requeue_applied"), "run again" },
        { QStringLiteral("worker_succeeded_after_requeue"), "resolved (succeeded after requeue)" },
        { QStringLiteral("worker_dead_again"), "failed again" },
    };
    const char *done = kDone.value(action, nullptr);
    return tr("%1 by %2 %3 ago")
        .arg(done ? tr(done) : tr("changed (%1)").arg(action), login, age(ageSeconds));
}

// ---- Colours ---------------------------------------------------------------------------------

QString colorName(Tone tone)
{
    return QStringLiteral("#%1").arg(rgb(tone), 6, 16, QLatin1Char('0'));
}

} // namespace redrive::display
