// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/payload_text.h"

#include "models/db/utf8_text.h"
#include "models/display_format.h"

#include <QCoreApplication>
#include <QLocale>
#include <QSet>
#include <algorithm>
#include <functional>
#include <string_view>

namespace redrive {

namespace {

QString tr(const char *text)
{
    return QCoreApplication::translate("redrive::PayloadText", text);
}

bool inRange(unsigned char c, unsigned char lo, unsigned char hi)
{
    return c >= lo && c <= hi;
}

// Strict recursive-descent JSON parser that keeps literals as written (RFC 8259).
class JsonParser
{
public:
    /// With `build` false nothing is kept: the parser only checks (PayloadText::checkJson).
    explicit JsonParser(QByteArrayView text, bool build = true)
        : m_text(text)
        , m_build(build)
    { }

    /// The byte offset where the first problem was found.
    qsizetype errorPosition() const { return m_errorPos; }
    /// What the first problem was, without its position.
    QString errorWhat() const { return m_what; }

    std::optional<JsonNode> parseDocument(QString *error)
    {
        JsonNode root;
        skipSpace();
        if (!parseValue(root, 0)) {
            if (error)
                *error = m_error;
            return std::nullopt;
        }
        skipSpace();
        if (m_pos != m_text.size()) {
            m_errorPos = m_pos;
            m_what = tr("unexpected text after the document");
            if (error)
                *error = describe(tr("unexpected text after the document"));
            return std::nullopt;
        }
        return root;
    }

private:
    QString describe(const QString &what) const { return tr("%1 at byte %2").arg(what).arg(m_pos); }
    bool fail(const QString &what)
    {
        if (m_error.isEmpty()) {
            m_error = describe(what);
            m_what = what;
            m_errorPos = m_pos;
        }
        return false;
    }
    bool atEnd() const { return m_pos >= m_text.size(); }
    char peek() const { return atEnd() ? '\0' : m_text[m_pos]; }
    void skipSpace()
    {
        while (!atEnd()) {
            const char c = m_text[m_pos];
            if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
                return;
            ++m_pos;
        }
    }
    bool literal(QByteArrayView word)
    {
        if (m_text.sliced(m_pos).startsWith(word)) {
            m_pos += word.size();
            return true;
        }
        return false;
    }

    bool parseValue(JsonNode &node, int depth)
    {
        if (depth > PayloadText::kMaxJsonDepth)
            return fail(tr("nested too deeply"));
        switch (peek()) {
        case '{':
            return parseObject(node, depth);
        case '[':
            return parseArray(node, depth);
        case '"':
            node.type = JsonNode::Type::String;
            return m_build ? parseString(&node.value) : skipString();
        case 't':
        case 'f':
        case 'n': {
            const qsizetype start = m_pos;
            if (literal("true") || literal("false")) {
                node.type = JsonNode::Type::Bool;
            } else if (literal("null")) {
                node.type = JsonNode::Type::Null;
            } else {
                return fail(tr("unknown literal"));
            }
            if (m_build)
                node.value = QString::fromLatin1(m_text.sliced(start, m_pos - start));
            return true;
        }
        default:
            return parseNumber(node);
        }
    }

    bool parseObject(JsonNode &node, int depth)
    {
        node.type = JsonNode::Type::Object;
        ++m_pos; // '{'
        skipSpace();
        if (peek() == '}') {
            ++m_pos;
            return true;
        }
        while (true) {
            skipSpace();
            if (peek() != '"')
                return fail(tr("expected a member name"));
            JsonNode member;
            if (!(m_build ? parseString(&member.key) : skipString()))
                return false;
            skipSpace();
            if (peek() != ':')
                return fail(tr("expected ':'"));
            ++m_pos;
            skipSpace();
            if (!parseValue(member, depth + 1))
                return false;
            if (m_build)
                node.children.push_back(std::move(member));
            skipSpace();
            if (peek() == ',') {
                ++m_pos;
                continue;
            }
            if (peek() == '}') {
                ++m_pos;
                return true;
            }
            return fail(tr("expected ',' or '}'"));
        }
    }

    bool parseArray(JsonNode &node, int depth)
    {
        node.type = JsonNode::Type::Array;
        ++m_pos; // '['
        skipSpace();
        if (peek() == ']') {
            ++m_pos;
            return true;
        }
        while (true) {
            skipSpace();
            JsonNode element;
            if (!parseValue(element, depth + 1))
                return false;
            if (m_build)
                node.children.push_back(std::move(element));
            skipSpace();
            if (peek() == ',') {
                ++m_pos;
                continue;
            }
            if (peek() == ']') {
                ++m_pos;
                return true;
            }
            return fail(tr("expected ',' or ']'"));
        }
    }

    static void appendUtf8(QByteArray &out, char32_t cp)
    {
        if (cp < 0x80) {
            out.append(char(cp));
        } else if (cp < 0x800) {
            out.append(char(0xC0 | (cp >> 6)));
            out.append(char(0x80 | (cp & 0x3F)));
        } else if (cp < 0x10000) {
            out.append(char(0xE0 | (cp >> 12)));
            out.append(char(0x80 | ((cp >> 6) & 0x3F)));
            out.append(char(0x80 | (cp & 0x3F)));
        } else {
            out.append(char(0xF0 | (cp >> 18)));
            out.append(char(0x80 | ((cp >> 12) & 0x3F)));
            out.append(char(0x80 | ((cp >> 6) & 0x3F)));
            out.append(char(0x80 | (cp & 0x3F)));
        }
    }

    bool hex4(char32_t *out)
    {
        if (m_pos + 4 > m_text.size())
            return fail(tr("cut \\u escape"));
        char32_t v = 0;
        for (int i = 0; i < 4; ++i) {
            const char c = m_text[m_pos + i];
            v <<= 4;
            if (c >= '0' && c <= '9')
                v |= char32_t(c - '0');
            else if (c >= 'a' && c <= 'f')
                v |= char32_t(c - 'a' + 10);
            else if (c >= 'A' && c <= 'F')
                v |= char32_t(c - 'A' + 10);
            else
                return fail(tr("bad \\u escape"));
        }
        m_pos += 4;
        *out = v;
        return true;
    }

    bool parseString(QString *out)
    {
        ++m_pos; // '"'
        QByteArray bytes;
        while (true) {
            if (atEnd())
                return fail(tr("unterminated string"));
            const char c = m_text[m_pos];
            if (c == '"') {
                ++m_pos;
                *out = db::textFromUtf8(bytes);
                return true;
            }
            if (static_cast<unsigned char>(c) < 0x20)
                return fail(tr("control character in a string"));
            if (c != '\\') {
                bytes.append(c);
                ++m_pos;
                continue;
            }
            ++m_pos;
            if (atEnd())
                return fail(tr("unterminated string"));
            const char e = m_text[m_pos++];
            switch (e) {
            case '"':
            case '\\':
            case '/':
                bytes.append(e);
                break;
            case 'b':
                bytes.append('\b');
                break;
            case 'f':
                bytes.append('\f');
                break;
            case 'n':
                bytes.append('\n');
                break;
            case 'r':
                bytes.append('\r');
                break;
            case 't':
                bytes.append('\t');
                break;
            case 'u': {
                char32_t cp = 0;
                if (!hex4(&cp))
                    return false;
                if (cp >= 0xD800 && cp <= 0xDBFF && m_text.sliced(m_pos).startsWith("\\u")) {
                    const qsizetype save = m_pos;
                    m_pos += 2;
                    char32_t low = 0;
                    if (!hex4(&low))
                        return false;
                    if (low >= 0xDC00 && low <= 0xDFFF)
                        cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
                    else
                        m_pos = save; // not a pair: the next escape stands alone
                }
                // A lone surrogate has no UTF-8 form; the display shows U+FFFD for it while the
                // raw text keeps the escape as written.
                if (cp >= 0xD800 && cp <= 0xDFFF)
                    cp = 0xFFFD;
                appendUtf8(bytes, cp);
                break;
            }
            default:
                return fail(tr("bad escape"));
            }
        }
    }

    bool digits()
    {
        const qsizetype start = m_pos;
        while (!atEnd() && m_text[m_pos] >= '0' && m_text[m_pos] <= '9')
            ++m_pos;
        return m_pos > start;
    }

    bool parseNumber(JsonNode &node)
    {
        const qsizetype start = m_pos;
        if (peek() == '-')
            ++m_pos;
        if (peek() == '0') {
            ++m_pos;
        } else if (peek() >= '1' && peek() <= '9') {
            digits();
        } else {
            return fail(tr("expected a value"));
        }
        if (peek() == '.') {
            ++m_pos;
            if (!digits())
                return fail(tr("expected digits after '.'"));
        }
        if (peek() == 'e' || peek() == 'E') {
            ++m_pos;
            if (peek() == '+' || peek() == '-')
                ++m_pos;
            if (!digits())
                return fail(tr("expected digits in the exponent"));
        }
        node.type = JsonNode::Type::Number;
        if (m_build)
            node.value = QString::fromLatin1(m_text.sliced(start, m_pos - start));
        return true;
    }

    // parseString's rules without decoding anything.
    bool skipString()
    {
        ++m_pos; // '"'
        while (true) {
            if (atEnd())
                return fail(tr("unterminated string"));
            const char c = m_text[m_pos];
            if (c == '"') {
                ++m_pos;
                return true;
            }
            if (static_cast<unsigned char>(c) < 0x20)
                return fail(tr("control character in a string"));
            ++m_pos;
            if (c != '\\')
                continue;
            if (atEnd())
                return fail(tr("unterminated string"));
            const char e = m_text[m_pos++];
            if (e == 'u') {
                char32_t cp = 0;
                if (!hex4(&cp))
                    return false;
            } else if (std::string_view("\"\\/bfnrt").find(e) == std::string_view::npos) {
                --m_pos;
                return fail(tr("bad escape"));
            }
        }
    }

    QByteArrayView m_text;
    bool m_build = true;
    qsizetype m_pos = 0;
    qsizetype m_errorPos = -1;
    QString m_what;
    QString m_error;
};

} // namespace

bool PayloadText::isValidUtf8(QByteArrayView bytes, bool allowCutTail, qsizetype *firstInvalid)
{
    const auto *p = reinterpret_cast<const unsigned char *>(bytes.data());
    const qsizetype n = bytes.size();
    qsizetype i = 0;
    auto invalid = [&](qsizetype at) {
        if (firstInvalid)
            *firstInvalid = at;
        return false;
    };
    while (i < n) {
        const unsigned char c = p[i];
        if (c < 0x80) {
            ++i;
            continue;
        }
        // Unicode 15, Table 3-7 "Well-Formed UTF-8 Byte Sequences": the allowed range of the
        // second byte depends on the first; the others are always 80..BF.
        int length = 0;
        unsigned char lo = 0x80, hi = 0xBF;
        if (inRange(c, 0xC2, 0xDF)) {
            length = 2;
        } else if (c == 0xE0) {
            length = 3;
            lo = 0xA0;
        } else if (inRange(c, 0xE1, 0xEC) || inRange(c, 0xEE, 0xEF)) {
            length = 3;
        } else if (c == 0xED) {
            length = 3;
            hi = 0x9F; // no surrogates
        } else if (c == 0xF0) {
            length = 4;
            lo = 0x90;
        } else if (inRange(c, 0xF1, 0xF3)) {
            length = 4;
        } else if (c == 0xF4) {
            length = 4;
            hi = 0x8F; // nothing above U+10FFFF
        } else {
            return invalid(i); // 80..C1 (stray continuation or overlong lead), F5..FF
        }
        for (int k = 1; k < length; ++k) {
            if (i + k >= n) {
                if (allowCutTail)
                    break; // cut off by the end of a preview, not malformed
                return invalid(i);
            }
            const unsigned char next = p[i + k];
            if (!(k == 1 ? inRange(next, lo, hi) : inRange(next, 0x80, 0xBF)))
                return invalid(i);
        }
        i += length;
    }
    if (firstInvalid)
        *firstInvalid = -1;
    return true;
}

QString PayloadText::hexDump(QByteArrayView bytes, qint64 baseOffset)
{
    static const char digits[] = "0123456789abcdef";
    const qsizetype n = bytes.size();
    const qsizetype lines = (n + kHexBytesPerLine - 1) / kHexBytesPerLine;
    // 8-digit offset, 2 spaces, 16 * 3 hex columns + 1 group gap, 2 spaces, |16 chars|, newline.
    constexpr int kLineWidth = 8 + 2 + kHexBytesPerLine * 3 + 1 + 1 + kHexBytesPerLine + 2 + 1;
    QByteArray out;
    out.reserve(lines * (kLineWidth + 4));
    for (qsizetype line = 0; line < lines; ++line) {
        const qsizetype start = line * kHexBytesPerLine;
        const qsizetype count = std::min<qsizetype>(kHexBytesPerLine, n - start);
        const qint64 offset = baseOffset + start;
        const int offsetDigits = offset > 0xFFFFFFFFLL ? 16 : 8;
        for (int d = offsetDigits - 1; d >= 0; --d)
            out.append(digits[(offset >> (4 * d)) & 0xF]);
        out.append("  ");
        for (int k = 0; k < kHexBytesPerLine; ++k) {
            if (k == kHexBytesPerLine / 2)
                out.append(' ');
            if (k < count) {
                const auto b = static_cast<unsigned char>(bytes[start + k]);
                out.append(digits[b >> 4]);
                out.append(digits[b & 0xF]);
                out.append(' ');
            } else {
                out.append("   ");
            }
        }
        out.append(" |");
        for (qsizetype k = 0; k < count; ++k) {
            const auto b = static_cast<unsigned char>(bytes[start + k]);
            out.append(b >= 0x20 && b < 0x7F ? char(b) : '.');
        }
        out.append('|');
        if (line + 1 < lines)
            out.append('\n');
    }
    return QString::fromLatin1(out);
}

QString PayloadText::binaryMarker(qint64 totalBytes)
{
    return tr("[binary payload: %1, not valid UTF-8 — shown as hex]")
        .arg(formatByteCount(totalBytes));
}

QString PayloadText::previewMarker(qint64 shownBytes, qint64 totalBytes)
{
    return tr("[preview: the first %1 of %2 (%3) — load the full payload to see the rest]")
        .arg(formatSize(shownBytes), formatSize(totalBytes), formatByteCount(totalBytes));
}

QString PayloadText::formatSize(qint64 bytes)
{
    if (bytes < 1024)
        return formatByteCount(bytes);
    static const char *const units[] = { "KiB", "MiB", "GiB", "TiB" };
    double value = double(bytes) / 1024.0;
    int unit = 0;
    while (value >= 1024.0 && unit < 3) {
        value /= 1024.0;
        ++unit;
    }
    return QStringLiteral("%1 %2").arg(QLocale().toString(value, 'f', 1),
                                       QLatin1String(units[unit]));
}

QString PayloadText::formatByteCount(qint64 bytes)
{
    if (bytes == 1)
        return tr("1 byte");
    return tr("%1 bytes").arg(QLocale().toString(bytes));
}

std::optional<JsonNode> PayloadText::parseJson(QByteArrayView utf8, QString *error)
{
    qsizetype bad = -1;
    if (!isValidUtf8(utf8, false, &bad)) {
        if (error)
            *error = tr("not valid UTF-8 at byte %1").arg(bad);
        return std::nullopt;
    }
    return JsonParser(utf8).parseDocument(error);
}

qsizetype PayloadText::checkJson(QByteArrayView utf8, QString *error)
{
    qsizetype bad = -1;
    if (!isValidUtf8(utf8, false, &bad)) {
        if (error)
            *error = tr("not valid UTF-8");
        return bad;
    }
    JsonParser parser(utf8, false);
    if (parser.parseDocument(nullptr))
        return -1;
    if (error)
        *error = parser.errorWhat();
    return std::max<qsizetype>(parser.errorPosition(), 0);
}

QByteArray PayloadText::indentJson(QByteArrayView utf8, bool *flattened)
{
    return display::prettyJson(utf8, flattened);
}

PayloadText::Rendered PayloadText::render(QByteArrayView bytes, bool isJson, qint64 totalBytes,
                                          bool indent)
{
    Rendered r;
    if (bytes.isEmpty() && totalBytes <= 0)
        return r; // Kind::Empty
    const bool preview = bytes.size() < totalBytes;
    const QString marker = preview ? previewMarker(bytes.size(), totalBytes) : QString();
    QString body;
    if (!isValidUtf8(bytes, preview)) {
        r.kind = Kind::Hex;
        body = binaryMarker(std::max<qint64>(totalBytes, bytes.size())) + QLatin1Char('\n')
            + hexDump(bytes);
    } else if (isJson) {
        r.kind = Kind::Json;
        body = indent ? db::textFromUtf8(indentJson(bytes, &r.flattened)) : db::textFromUtf8(bytes);
    } else {
        r.kind = Kind::Text;
        body = db::textFromUtf8(bytes);
    }
    if (preview)
        r.text = marker + QStringLiteral("\n\n") + body + QStringLiteral("\n\n") + marker;
    else
        r.text = std::move(body);
    return r;
}

QStringList PayloadText::duplicateKeys(const JsonNode &root)
{
    QStringList out;
    std::function<void(const JsonNode &, const QString &)> walk;
    walk = [&](const JsonNode &node, const QString &path) {
        if (node.type == JsonNode::Type::Object) {
            QSet<QString> seen;
            QSet<QString> reported;
            for (const JsonNode &child : node.children) {
                if (seen.contains(child.key) && !reported.contains(child.key)) {
                    out << (path.isEmpty() ? child.key : path + QLatin1Char('.') + child.key);
                    reported.insert(child.key);
                }
                seen.insert(child.key);
            }
        }
        for (std::size_t i = 0; i < node.children.size(); ++i) {
            const JsonNode &child = node.children[i];
            const QString childPath = node.type == JsonNode::Type::Array
                ? path + QStringLiteral("[%1]").arg(i)
                : (path.isEmpty() ? child.key : path + QLatin1Char('.') + child.key);
            walk(child, childPath);
        }
    };
    walk(root, QString());
    return out;
}

} // namespace redrive
