// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QByteArrayView>
#include <QString>
#include <QStringList>
#include <optional>
#include <vector>

namespace redrive {

/// One value of a JSON document as the payload holds it: member order, number spelling and
/// string contents kept exactly (a QJsonDocument would round big integers and sort keys).
struct JsonNode
{
    enum class Type { Object, Array, String, Number, Bool, Null };
    Type type = Type::Null;
    /// The member name in the parent object; empty for array elements and the root.
    QString key;
    /// Decoded text of a string; the literal as written for numbers, true, false and null.
    QString value;
    std::vector<JsonNode> children;
};

/// How a payload's bytes are shown to a person (docs/domain.md#payloads-are-shown-as-they-are:
/// bytes that are not valid UTF-8 as hex with a marker, nothing silently truncated). Pure
/// functions: no database, no widgets, safe to call from any thread.
class PayloadText
{
public:
    /// What rendered text holds.
    enum class Kind {
        Empty, ///< no payload at all
        Json, ///< JSON text, indented
        Text, ///< UTF-8 text that is not JSON, as is
        Hex, ///< bytes that are not valid UTF-8, as a hex dump after the binary marker
    };
    struct Rendered
    {
        Kind kind = Kind::Empty;
        QString text;
        /// JSON nested deeper than display::kMaxIndentDepth was shown flat from there on.
        bool flattened = false;
    };

    /// Bytes per hex dump line.
    static constexpr int kHexBytesPerLine = 16;

    /// True when `bytes` is well-formed UTF-8 (RFC 3629): no overlong forms, no surrogates, nothing
    /// above U+10FFFF, no stray continuation bytes, no sequence cut short. With `allowCutTail`, a
    /// sequence that is merely cut off by the end (a preview cut mid-character) is accepted.
    /// `firstInvalid` receives the offset of the first offending byte, or -1.
    static bool isValidUtf8(QByteArrayView bytes, bool allowCutTail = false,
                            qsizetype *firstInvalid = nullptr);

    /// `hexdump -C` style: "00000010  7b 22 61 22 3a 20 c3 28  ff 80 0a 00 01 02 03 04  |{"a":
    /// .(........|", one line per 16 bytes, offsets counted from `baseOffset`, printable ASCII in
    /// the right column and '.' for everything else. No marker line (see binaryMarker()).
    static QString hexDump(QByteArrayView bytes, qint64 baseOffset = 0);
    /// "[binary payload: 1,234 bytes, not valid UTF-8 — shown as hex]" (`totalBytes` is the whole
    /// payload's size, also when only a preview is dumped).
    static QString binaryMarker(qint64 totalBytes);
    /// "[preview: the first 1.0 MiB of 3.2 MiB — load the full payload to see the rest]".
    static QString previewMarker(qint64 shownBytes, qint64 totalBytes);

    /// "0 bytes", "512 bytes", "1.5 KiB", "3.2 MiB", "1.1 GiB" (binary units, one decimal, the
    /// default QLocale's decimal point).
    static QString formatSize(qint64 bytes);
    /// "1,234 bytes" with the default QLocale's digit grouping; "1 byte" for one.
    static QString formatByteCount(qint64 bytes);

    /// Parses a whole JSON document (RFC 8259, strict; at most kMaxJsonDepth levels deep).
    /// Returns nothing and sets `error` when it is not one.
    static std::optional<JsonNode> parseJson(QByteArrayView utf8, QString *error = nullptr);
    /// Checks that `utf8` is one whole JSON document by the same rules as parseJson, without
    /// building it: memory stays constant, strings are checked but not decoded, and a number of
    /// any size or precision is accepted as written (RFC 8259 sets no limit; 1e400 and a
    /// 401-digit integer are JSON, and PostgreSQL's jsonb keeps them as numeric). Returns -1
    /// when it is a document; otherwise the byte offset of the first problem, with `error`
    /// (optional) saying what it is ("expected ',' or '}"). Safe on any thread.
    static qsizetype checkJson(QByteArrayView utf8, QString *error = nullptr);
    /// Re-indents JSON text with four spaces per level and "key": value spacing, copying every
    /// string and number token byte for byte (escapes and digits stay as stored). Works on a
    /// prefix too, so a cut preview is indented as far as it goes; it does not validate. The same
    /// as display::prettyJson (models/display_format.h), which callers outside payloads use.
    static QByteArray indentJson(QByteArrayView utf8, bool *flattened = nullptr);

    /// The text for a payload: indented JSON when `isJson` and it is text, UTF-8 text as is, and
    /// otherwise the binary marker then a hex dump. When `bytes` is shorter than `totalBytes`
    /// (bytes; the payload's full size) it is a preview: the preview marker goes first and last,
    /// and a character cut by the preview's end does not make the text "binary". With `indent`
    /// false, JSON is shown exactly as stored.
    static Rendered render(QByteArrayView bytes, bool isJson, qint64 totalBytes,
                           bool indent = true);

    /// The members of `root` (any depth) whose name appears more than once in their object, as
    /// paths ("b", "customer.tags[0].id"), each once, in document order. jsonb keeps only the
    /// last of them; the text as received keeps all.
    static QStringList duplicateKeys(const JsonNode &root);

    static constexpr int kMaxJsonDepth = 512;
};

} // namespace redrive
