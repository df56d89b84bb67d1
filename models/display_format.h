// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QDateTime>
#include <QList>
#include <QString>
#include <QStringList>
#include <QStringView>
#include <QTimeZone>
#include <QtGlobal>
#include <optional>

/// The one place that turns values into the text a person reads (docs/architecture.md#layers:
/// "value formatting"): times, offsets, ages, durations, hashes, first lines, money, JSON and the
/// three status colours. Models (DisplayRole, ToolTipRole, ForegroundRole) and views call these;
/// nothing else formats such values. Depends on QtCore only; every function is pure and safe to
/// call from any thread.
namespace redrive::display {

// ---- Time ------------------------------------------------------------------------------------

/// PostgreSQL's timestamptz 'infinity' and '-infinity' as instants (docs/domain.md "Times at the
/// ends of the range"): the first UTC instant of year 1,000,000 and of year -1,000,000, far
/// outside timestamptz's range (4713 BC to 294276), so that they still sort after and before
/// every time the server sends. Nothing computes with them: isInfinite() tells them apart, time()
/// shows "∞" and "−∞", and charts leave them out.
QDateTime infiniteFuture();
QDateTime infinitePast();
/// True for infiniteFuture() and infinitePast().
bool isInfinite(const QDateTime &instant);
/// `utc` as "2026-03-14 09:26:53 UTC" when `showUtc`, otherwise in `zone` with its offset at that
/// instant: "2026-03-14 10:26:53 +01:00"; a year before 1 as "4713-01-01 00:00:00 BC …" (year 4713
/// BC is -4713 in QDate). infiniteFuture() gives "∞", infinitePast() "−∞" (U+2212), whatever the
/// zone. An invalid time gives an empty string.
QString time(const QDateTime &utc, bool showUtc, const QTimeZone &zone);
/// As above in the system's local time zone (what tables and the case view show).
QString time(const QDateTime &utc, bool showUtc);
/// A UTC offset in seconds as "+01:00", "-03:30", "+00:00" (sign, hours, minutes; seconds of an
/// offset are dropped, as no zone in use has them).
QString offsetLabel(int offsetSeconds);
/// An age in whole seconds, coarsest two units: "42 s", "7 min", "3 h 12 min", "2 d 5 h".
/// Negative ages (clock skew) show as "0 s".
QString age(qint64 seconds);
/// A duration in milliseconds: "350 ms", "1.8 s" (tenths cut, not rounded, with the default
/// QLocale's decimal point), "4 min 12 s", "4 min", "2 h 5 min", "2 h", "3 d 4 h", "3 d".
/// Negative durations show as "0 ms".
QString duration(qint64 ms);

// ---- Short text ------------------------------------------------------------------------------

/// How many characters of a hash (fingerprint, audit hash, key hash) a cell shows.
inline constexpr int kShortHashChars = 12;
/// The first kShortHashChars characters of `hash` followed by "…" when it is longer, else the
/// hash itself. Callers put the full value in the tooltip.
QString shortHash(const QString &hash);
/// The first line of `text` (ended by LF or by CR) with the spaces (U+0020) at its ends left
/// out and every other character kept (a TAB is shown as "␉" by the cell, two spaces stay two:
/// collapsing white space hid a TAB or an ideographic space before "=1+1"), cut to `maxChars`
/// characters. `shortened` (optional) is set when anything
/// after that line that is not white space, or anything beyond `maxChars`, was left out. Reads at
/// most about four times `maxChars` characters of `text`, so a megabyte-long line costs no more
/// than a short one.
QString firstLine(const QString &text, bool *shortened = nullptr, qsizetype maxChars = 300);

// ---- Text from the database ------------------------------------------------------------------
// Everything the database sends is plain text (docs/security.md#text-from-the-database-is-plain-
// text): a label shows it with Qt::PlainText, a tooltip through plainToolTip(), and neither ever
// lays out more than a bounded prefix (the whole text stays one click away).

// Characters are counted as a person sees them (user-perceived characters: grapheme clusters as
// Unicode UAX #29 and QTextBoundaryFinder define them): "e" followed by a combining accent is one
// character, an emoji made of a surrogate pair is one, and "comb" followed by 5,000 combining
// accents is four. Every "N more characters" the console shows counts this unit.

/// How many user-perceived characters `text` holds (see above). Linear in the text's length;
/// fast for text below U+0300, about 0.2 µs per UTF-16 unit beyond.
qsizetype characterCount(QStringView text);

/// Whether `c` changes the direction of the text around it or takes no space at all: the BiDi
/// embeddings, overrides and isolates (U+202A–U+202E, U+2066–U+2069), the Arabic letter mark
/// (U+061C), the zero-width space, non-joiner, joiner and direction marks (U+200B–U+200F), the
/// word joiner (U+2060) and the zero-width no-break space (U+FEFF). Text from the database never
/// gets to apply them (docs/security.md#text-from-the-database-is-plain-text).
constexpr bool isInvisibleControl(char16_t c)
{
    return (c >= 0x202A && c <= 0x202E) || (c >= 0x2066 && c <= 0x2069)
        || (c >= 0x200B && c <= 0x200F) || c == 0x2060 || c == 0xFEFF || c == 0x061C;
}
/// Whether code point `c` draws nothing or changes what is around it unseen: an
/// isInvisibleControl() character, a C1 control (U+0080–U+009F), any other format character
/// (Unicode category Cf: the soft hyphen U+00AD, U+2061–U+2064, U+180E, the tags U+E0000–U+E007F,
/// …), a variation selector (U+FE00–U+FE0F, U+E0100–U+E01EF), the combining grapheme joiner U+034F,
/// or a filler that draws nothing (Hangul U+115F, U+1160, U+3164, U+FFA0; Khmer U+17B4, U+17B5).
bool isHiddenCharacter(char32_t c);
/// `text` with every isHiddenCharacter() replaced by a visible marker naming it:
/// "\u202Eevil" shows as "⟨U+202E⟩evil", "a\u200Bb" as "a⟨U+200B⟩b"; and every C0 control but
/// TAB, LF and CR, and DEL, by the Unicode control picture naming it (ESC as U+241B "␛", NUL as
/// U+2400 "␀", DEL as U+2421 "␡"), which a font draws where the control itself showed as an
/// empty box. Right-to-left letters (Arabic, Hebrew) are left alone and still lay out right to
/// left. Only for showing: copy the original. Returns `text` itself (no copy) when there is
/// nothing to replace.
QString revealInvisible(const QString &text);
/// revealInvisible(), and TAB, LF and CR too by their control pictures ("␉", "␊", "␍"): a value
/// quoted inside a line (a message on a terminal) that can neither break nor overwrite it.
QString revealInvisibleInLine(const QString &text);
/// An identifier (an idempotency key, a payment or order reference) as shown: revealInvisible(),
/// and also every space but U+0020 (no-break, ideographic, …; `QChar::isSpace`), a U+0020 at
/// either end, every C0 control (TAB, LF and CR too) and DEL, and every combining mark
/// (categories Mn and Me) as markers ("⟨U+0020⟩": every font draws them, few the control
/// pictures), so two identifiers that differ only there never look
/// alike: "charge:7\u00A0" shows as "charge:7⟨U+00A0⟩", "cafe\u0301" (decomposed) as
/// "cafe⟨U+0301⟩" while a composed "café" stays as it is. Only for showing: act on the original.
QString revealLookAlikes(const QString &identifier);

/// How many characters of one value a table cell or a header field shows at most.
inline constexpr qsizetype kMaxCellChars = 1000;
/// How many characters of one value a tooltip shows at most.
inline constexpr qsizetype kMaxToolTipChars = 2000;
/// `text` when it has at most `maxChars` user-perceived characters (characterCount()); otherwise
/// its first `maxChars` characters (never half of one) and " … (1,234,567 more characters)" (the
/// default QLocale's digit grouping; " … (1 more character)" for one). The characters shown also
/// stop before the one that would take the prefix beyond 4 × `maxChars` + 64 UTF-16 units, so a
/// character made of thousands of combining marks is counted as one more, not laid out. Shown
/// through revealInvisible().
QString boundedText(const QString &text, qsizetype maxChars);
/// What boundedText() shows, in its two parts: for a label that elides the shown prefix to its
/// width and must keep the count of what was left out whole.
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
/// How many lines of one value a label shows at most.
inline constexpr qsizetype kMaxLabelLines = 6;
/// The first `maxLines` lines of `text` (LF-separated, without the line end after the last);
/// `left` gets how many lines were left out (0 when none; a final line end starts no line).
/// Reads the text once to count the lines left out.
QString headLines(const QString &text, qsizetype maxLines, qsizetype *left);
/// `text` when it has at most `maxLines` lines and `maxChars` characters; otherwise its first
/// `maxLines` lines cut by boundedText() to `maxChars` characters, then a line "… (1,234 more
/// lines)", "… (1 more line)" for one, when lines were left out (the default QLocale's digit
/// grouping). For a label that must not grow as tall as a 100,000-line reason
/// (docs/security.md#text-from-the-database-is-plain-text). Reads the whole text once to count
/// its lines.
QString boundedLines(const QString &text, qsizetype maxLines, qsizetype maxChars = kMaxCellChars);
/// A value from the database as part of a sentence: boundedText() to `maxChars` (invisible
/// controls shown as markers), each line break shown as "⏎" (a CR LF pair as one) so the sentence
/// stays on one line (docs/security.md#text-from-the-database-is-plain-text).
QString oneLine(const QString &value, qsizetype maxChars = 300);
/// How many lines of one value a tooltip shows at most.
inline constexpr qsizetype kMaxToolTipLines = 30;
/// `text` as a tooltip Qt shows literally: boundedLines() to kMaxToolTipLines lines and
/// `maxChars` characters (so invisible controls are shown as markers; 143 short lines once made a
/// tooltip taller than the screen), HTML-escaped, line breaks
/// kept, inside "<qt><p style=\"white-space:pre-wrap\">…</p></qt>" (a tooltip that merely looks
/// like markup would otherwise be rendered as HTML, images included). `note`, when given, is one
/// more line after it, escaped the same way (e.g. that the value was not loaded whole). Empty
/// for empty text (no tooltip).
QString plainToolTip(const QString &text, qsizetype maxChars = kMaxToolTipChars,
                     const QString &note = {});
/// How long a line of database text a text view lays out in one piece.
inline constexpr qsizetype kMaxLineChars = 2000;
/// `text` with every line longer than `maxLineChars` characters broken after each `maxLineChars`
/// characters (never inside a surrogate pair), so a megabyte-long single line is laid out in
/// pieces a text view can shape one at a time. Only for showing: copy the original. Sets
/// `broken` (optional) when a line was broken.
QString inPieces(const QString &text, qsizetype maxLineChars = kMaxLineChars,
                 bool *broken = nullptr);

// ---- Money -----------------------------------------------------------------------------------
// Amounts are integers in the currency's minor unit (cents for USD, yen for JPY, fils for KWD);
// the number of decimals is the currency's ISO 4217 exponent (0, 2, 3 or 4) from a fixed table in
// display_format.cpp. Text is always "<amount> <CODE>": the amount with ',' between groups of
// three digits and '.' before the decimals, independent of the locale, a leading '-' when
// negative; e.g. "1,500 JPY", "150.42 USD", "-0.05 EUR", "1.250 KWD". Only integer arithmetic is
// used, never a double.

/// The ISO 4217 exponent of `currency` (three letters, any case, surrounding spaces ignored), or
/// nothing when the code is not in the table.
std::optional<int> currencyExponent(const QString &currency);
/// `minorUnits` of `currency` as "1,500 JPY" / "150.42 USD" / "1.250 KWD". An unknown or empty
/// code is never guessed: "150042 minor units XYZ" ("150042 minor units" without a code).
QString money(qint64 minorUnits, const QString &currency);
/// The amount alone, without the code ("150.42"); nothing for an unknown code.
std::optional<QString> moneyAmount(qint64 minorUnits, const QString &currency);
/// Reads an amount a person typed for `currency` back into minor units, exactly: "150.42",
/// "150.4", "150", "1,500.00" (commas only between groups of three), optionally followed by the
/// code ("150.42 USD"), white space around ignored. Refuses (returns nothing) an unknown code,
/// more decimals than the exponent, any sign, anything else, and values beyond qint64.
std::optional<qint64> parseMoney(const QString &text, const QString &currency);

// ---- JSON ------------------------------------------------------------------------------------
// Both printers work on the JSON text's tokens: every string and number is copied byte for byte
// (12345678901234567890 and 0.1000 stay as written, escapes stay escapes) and members keep their
// order; only the white space between tokens changes. Neither validates (see
// PayloadText::parseJson), so a cut preview prints as far as it goes.

/// Levels indented at most; deeper ones are shown flat (prettyJson).
inline constexpr int kMaxIndentDepth = 32;
/// A flat stretch of deeper levels is broken into lines of about this many bytes.
inline constexpr qsizetype kMaxFlatLineBytes = 2000;
/// Indented with four spaces per level, "key": value, empty containers as {} and []. Levels
/// deeper than kMaxIndentDepth are not indented further: their tokens follow each other on lines
/// of about kMaxFlatLineBytes, so JSON nested thousands of levels deep prints in about its own
/// size (indenting every level would take gigabytes). `flattened` (optional) is set when that
/// happened, for a note beside the text.
QByteArray prettyJson(QByteArrayView utf8, bool *flattened = nullptr);
/// All white space between tokens removed: {"a":1,"b":[true,null]}.
QByteArray compactJson(QByteArrayView utf8);
/// `text` as a JSON string literal: in double quotes, with '"', '\\' and control characters
/// escaped (\n, \t, ..., \u001f) and everything else as is. For printing a parsed string again.
QString jsonQuoted(const QString &text);
/// prettyJson() for JSON held as a QString (jsonb text from a result), UTF-8 in and out.
QString prettyJsonText(const QString &json);

// ---- Failure groups --------------------------------------------------------------------------

/// A trend as a line of block characters, one per value, scaled so the largest is a full block
/// (U+2581..U+2588), a value above 0 never the lowest: {0, 1, 4} gives "▁▃█". Every value 0 gives
/// the lowest block throughout; negative values count as 0; no values give an empty string.
QString sparkline(const QList<qint64> &values);
/// Comma-separated whole numbers ("0,3,1") as a list; anything that is not a number reads as 0.
QList<qint64> countList(const QString &commaSeparated);
/// What tells `text` apart from its look-alikes, word by word: the words after the longest
/// run of leading words it shares with every look-alike and before the longest run of trailing
/// words it shares with every look-alike, with "…" where words were left out at either end.
/// "amount <n> must be at least <n> in USD" against the same text ending "in EUR" and "in GBP"
/// gives "…USD". Look-alikes equal to `text` are left out (something else tells them apart);
/// `text` itself when no look-alike is left or nothing is shared. Words are split on spaces.
QString differingWords(const QString &text, const QStringList &lookAlikes);
/// The safe-to-retry verdicts of a group's open dead letters in a few words, zeros left out:
/// "4 safe · 2 look first · 1 blocked"; "no open dead letters" when all three are 0.
QString verdictSummary(qint64 safe, qint64 lookFirst, qint64 blocked);

// ---- Actions ---------------------------------------------------------------------------------

/// What an operator action's result calls its audit trail, in the words the Audit log uses (its
/// "Entry" column and "action id"): one entry gives "audit entry 42 · action id <uuid>"; several
/// (the chunks of a bulk action) give "audit entries 42, 43, 45 · action ids <uuid>, …" up to five,
/// and "audit entries 42 … 97 (12 entries)" beyond. Empty when `auditIds` is empty.
QString auditReference(const QList<qint64> &auditIds, const QStringList &actionIds);
/// Who last changed a dead letter, from its newest audit entry: "resolved by demo_support 2 min
/// ago" (`action` as the audit entry names it, `login` the database login, `ageSeconds` by the
/// server's clock, shown as display::age()).
QString lastChange(const QString &action, const QString &login, qint64 ageSeconds);

// ---- Colours ---------------------------------------------------------------------------------

/// The status colours of the console, for text on a light background.
enum class Tone {
    Error, ///< failed, blocked, refused
    Warning, ///< check first, cancelled, pending
    Ok, ///< applied, safe, verified
};
/// The tone as 0xRRGGBB, for `QColor(display::rgb(tone))` in ForegroundRole and plots.
constexpr quint32 rgb(Tone tone)
{
    switch (tone) {
    case Tone::Error:
        return 0xb01c14;
    case Tone::Warning:
        return 0x9a5b00;
    case Tone::Ok:
        return 0x1e6b2f;
    }
    return 0x000000;
}
/// The tone as "#b01c14", for style sheets and rich text.
QString colorName(Tone tone);

} // namespace redrive::display
