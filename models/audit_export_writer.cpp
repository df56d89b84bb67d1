// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/audit_export_writer.h"

#include "models/db/result_set.h"
#include "models/display_format.h"

#include <QIODevice>
#include <QJsonDocument>
#include <algorithm>
#include <array>

namespace redrive {

namespace {

enum class Kind { Number, Json, Text };

struct Column
{
    QByteArray name;
    Kind kind;
};

// The columns of resources/sql/audit_export_page.sql, as an export writes them.
const QList<Column> &columns()
{
    static const QList<Column> list = {
        { "id", Kind::Number },        { "at", Kind::Text },        { "db_user", Kind::Text },
        { "client_addr", Kind::Text }, { "os_user", Kind::Text },   { "action", Kind::Text },
        { "targets", Kind::Json },     { "reason", Kind::Text },    { "ticket", Kind::Text },
        { "before", Kind::Json },      { "after", Kind::Json },     { "action_id", Kind::Text },
        { "outcome", Kind::Json },     { "prev_hash", Kind::Text }, { "hash", Kind::Text },
    };
    return list;
}

} // namespace

AuditExportWriter::AuditExportWriter(AuditExportFormat format, QIODevice *out)
    : m_format(format)
    , m_out(out)
{ }

QList<QByteArray> AuditExportWriter::columnNames()
{
    QList<QByteArray> names;
    for (const Column &c : columns())
        names << c.name;
    return names;
}

namespace {

// What a byte asks of a CSV field: nothing, quoting (, CR LF), a doubled quote ("), its
// control picture (every control but TAB, LF and CR; DEL), or a look at the next byte (0xC2
// leads the C1 controls U+0080–U+009F, C2 80 to C2 9F in UTF-8, and also "£", "°", NBSP).
enum ByteClass : unsigned char { Plain, Quotes, Quote, Control, C1Lead };

constexpr std::array<unsigned char, 256> byteClasses()
{
    std::array<unsigned char, 256> table {};
    for (int c = 0; c < 0x20; ++c)
        table[c] = Control;
    table[0x7f] = Control;
    table['\t'] = Plain;
    table['\n'] = Quotes;
    table['\r'] = Quotes;
    table[','] = Quotes;
    table['"'] = Quote;
    table[0xc2] = C1Lead;
    return table;
}

constexpr std::array<unsigned char, 256> kByteClass = byteClasses();

// Whether a text cell would read as a formula in a spreadsheet (csvTextField()'s comment).
bool startsAFormula(QByteArrayView value)
{
    if (value.isEmpty())
        return false;
    const auto startsFormula = [](char32_t c) {
        return c == '=' || c == '+' || c == '-' || c == '@' || c == 0xFF1D || c == 0xFF0B
            || c == 0xFF0D || c == 0xFF20;
    };
    const auto lead = static_cast<unsigned char>(value.front());
    if (lead == '\t' || lead == '\r')
        return true;
    if (lead > 0x20 && lead < 0x80)
        return startsFormula(lead); // the common case: no decoding
    const auto unseen = [](char32_t c) {
        if (QChar::isSpace(c) || display::isHiddenCharacter(c))
            return true;
        const QChar::Category category = QChar::category(c);
        return category == QChar::Mark_NonSpacing || category == QChar::Mark_Enclosing;
    };
    // Decoded from the first kLook bytes only: a field may be megabytes long. A run of unseen
    // characters that fills them is taken as hiding a formula.
    constexpr qsizetype kLook = 1024;
    QByteArrayView look = value.first(std::min(kLook, value.size()));
    if (look.size() < value.size()) {
        // Cut at a character's start: a character cut in two decodes as U+FFFD, which would
        // count as seen and let "400 x U+200B, =1+1" through.
        qsizetype start = look.size();
        while (start > 0 && (static_cast<unsigned char>(value[start]) & 0xC0) == 0x80)
            --start;
        look = look.first(start);
    }
    const QString head = QString::fromUtf8(look);
    for (qsizetype k = 0; k < head.size();) {
        char32_t c = head.at(k).unicode();
        qsizetype next = k + 1;
        if (QChar::isHighSurrogate(c) && next < head.size() && head.at(next).isLowSurrogate())
            c = QChar::surrogateToUcs4(char16_t(c), head.at(next++).unicode());
        if (!unseen(c))
            return startsFormula(c);
        k = next;
    }
    return value.size() > kLook;
}

// Whether value[i] starts a C1 control (U+0080–U+009F): 0xC2 then 0x80–0x9F. 8-bit CSI (U+009B),
// OSC (U+009D) and DCS (U+0090) start escape sequences in terminals that read them.
bool isC1At(QByteArrayView value, qsizetype i)
{
    return static_cast<unsigned char>(value[i]) == 0xc2 && i + 1 < value.size()
        && (static_cast<unsigned char>(value[i + 1]) & 0xe0) == 0x80;
}

// Appends the JSON escape of the character `code` (below U+0100): "\u" and four lower-case hex
// digits, as PostgreSQL writes one.
void appendJsonEscape(QByteArray &out, unsigned char code)
{
    static constexpr char kHex[] = "0123456789abcdef";
    const char escaped[6] = { '\\', 'u', '0', '0', kHex[code >> 4], kHex[code & 0xf] };
    out.append(escaped, 6);
}

// Appends `value` to `out` as one CSV field, with a leading "'" when `formula`; when `pictures`,
// C0 control bytes and DEL become their pictures and C1 controls the marker "⟨U+009B⟩" the
// console shows them by (display::revealInvisible()). One pass to classify, one to copy
// when anything changes: most fields are appended as they are.
void appendCsv(QByteArray &out, QByteArrayView value, bool formula, bool pictures)
{
    unsigned char seen = 0; // the classes present, as bits
    for (char ch : value)
        seen |= static_cast<unsigned char>(1u << kByteClass[static_cast<unsigned char>(ch)]);
    const bool quoted = seen & ((1u << Quotes) | (1u << Quote));
    const bool controls = pictures && (seen & ((1u << Control) | (1u << C1Lead)));
    if (!quoted && !controls && !formula) {
        out.append(value);
        return;
    }
    if (quoted)
        out += '"';
    if (formula)
        out += '\'';
    if (!(seen & (1u << Quote)) && !controls) {
        out.append(value);
    } else {
        for (qsizetype i = 0; i < value.size(); ++i) {
            const auto c = static_cast<unsigned char>(value[i]);
            if (c == '"') {
                out += "\"\"";
            } else if (controls && kByteClass[c] == Control) {
                // The control picture naming it (U+2400 + c, U+2421 for DEL), in UTF-8:
                // E2 90 80+c.
                const unsigned picture = c == 0x7f ? 0x21 : c;
                const char bytes[3] = { char(0xe2), char(0x90), char(0x80 + picture) };
                out.append(bytes, 3);
            } else if (controls && isC1At(value, i)) {
                static constexpr char kHex[] = "0123456789ABCDEF";
                const auto code = static_cast<unsigned char>(value[++i]);
                out += "\u27E8U+00";
                out += kHex[code >> 4];
                out += kHex[code & 0xf];
                out += "\u27E9";
            } else {
                out += char(c);
            }
        }
    }
    if (quoted)
        out += '"';
}

} // namespace

void AuditExportWriter::appendCsvField(QByteArray &out, QByteArrayView value)
{
    appendCsv(out, value, false, false);
}

void AuditExportWriter::appendCsvTextField(QByteArray &out, QByteArrayView value)
{
    appendCsv(out, value, startsAFormula(value), true);
}

QByteArray AuditExportWriter::csvField(const QByteArray &value)
{
    QByteArray out;
    appendCsvField(out, value);
    return out;
}

QByteArray AuditExportWriter::csvTextField(const QByteArray &value)
{
    QByteArray out;
    appendCsvTextField(out, value);
    return out;
}

void AuditExportWriter::appendJsonString(QByteArray &out, QByteArrayView value)
{
    out += '"';
    qsizetype plainFrom = 0; // the start of the run of bytes not yet appended
    for (qsizetype i = 0; i < value.size(); ++i) {
        const auto c = static_cast<unsigned char>(value[i]);
        if (c >= 0x20 && c != 0x7f && c != '"' && c != '\\' && !isC1At(value, i))
            continue; // UTF-8 bytes pass through as they are
        out.append(value.sliced(plainFrom, i - plainFrom));
        plainFrom = i + 1;
        if (c == 0xc2) {
            // A C1 control, escaped as \u0080–\u009F: the same string to a JSON reader, and no
            // 8-bit escape sequence for a terminal the file is printed on.
            appendJsonEscape(out, static_cast<unsigned char>(value[++i]));
            plainFrom = i + 1;
            continue;
        }
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        case '\b':
            out += "\\b";
            break;
        case '\f':
            out += "\\f";
            break;
        default:
            appendJsonEscape(out, c);
        }
    }
    out.append(value.sliced(plainFrom));
    out += '"';
}

QByteArray AuditExportWriter::escapeC1(const QByteArray &json)
{
    QByteArray out;
    out.reserve(json.size());
    for (qsizetype i = 0; i < json.size(); ++i) {
        if (!isC1At(json, i)) {
            out += json.at(i);
            continue;
        }
        appendJsonEscape(out, static_cast<unsigned char>(json.at(++i)));
    }
    return out;
}

QByteArray AuditExportWriter::jsonString(const QByteArray &value)
{
    QByteArray out;
    out.reserve(value.size() + 2);
    appendJsonString(out, value);
    return out;
}

bool AuditExportWriter::write(const QByteArray &bytes)
{
    if (m_out->write(bytes) == bytes.size())
        return true;
    m_error = m_out->errorString();
    return false;
}

bool AuditExportWriter::begin()
{
    if (m_format != AuditExportFormat::Csv)
        return true;
    return write(columnNames().join(',') + "\r\n");
}

bool AuditExportWriter::writePage(const db::ResultSet &page)
{
    const QList<Column> &cols = columns();
    QList<int> indexes;
    for (const Column &c : cols)
        indexes << page.columnIndex(QString::fromLatin1(c.name));
    const int idColumn = indexes.first();
    const int rows = page.rowCount();
    // Each field is read in place (a view over the result's bytes) and escaped straight into
    // the chunk, which is sized for the page up front: no allocation per field.
    qsizetype size = 0;
    for (int row = 0; row < rows; ++row)
        for (int c : indexes)
            if (c >= 0)
                size += page.byteLength(row, c) + 4;
    QByteArray chunk;
    chunk.reserve(size + rows * (m_format == AuditExportFormat::Csv ? 2 : 256));
    for (int row = 0; row < rows; ++row) {
        if (m_format == AuditExportFormat::Csv) {
            for (int i = 0; i < cols.size(); ++i) {
                if (i > 0)
                    chunk += ',';
                const int c = indexes.at(i);
                if (c < 0 || page.isNull(row, c))
                    continue;
                if (cols.at(i).kind == Kind::Number)
                    appendCsvField(chunk, page.view(row, c));
                else
                    appendCsvTextField(chunk, page.view(row, c));
            }
            chunk += "\r\n";
        } else {
            chunk += '{';
            for (int i = 0; i < cols.size(); ++i) {
                if (i > 0)
                    chunk += ',';
                appendJsonString(chunk, cols.at(i).name);
                chunk += ':';
                const int c = indexes.at(i);
                if (c < 0 || page.isNull(row, c))
                    chunk += "null";
                else if (cols.at(i).kind == Kind::Text)
                    appendJsonString(chunk, page.view(row, c));
                else
                    // A number, or jsonb text kept byte for byte: an independent verifier
                    // hashes these bytes as they are (docs/audit-chain.md).
                    chunk += page.view(row, c);
            }
            chunk += "}\n";
        }
    }
    if (rows > 0) {
        if (m_rows == 0)
            m_firstId = page.bigInt(0, idColumn).value_or(0);
        m_lastId = page.bigInt(rows - 1, idColumn).value_or(0);
        m_rows += rows;
    }
    return write(chunk);
}

bool AuditExportWriter::finish(const AuditExportSummary &summary)
{
    if (m_format != AuditExportFormat::JsonLines)
        return true;
    return write(escapeC1(QJsonDocument(summary.toJson()).toJson(QJsonDocument::Compact)) + '\n');
}

} // namespace redrive
