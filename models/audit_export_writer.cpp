// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/audit_export_writer.h"

#include "models/db/result_set.h"
#include "models/display_format.h"

#include <QIODevice>
#include <QJsonDocument>
#include <algorithm>

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

QByteArray AuditExportWriter::csvField(const QByteArray &value)
{
    // One pass over the bytes: a field of plain text (most of them) is returned as it is.
    const bool plain = std::none_of(value.cbegin(), value.cend(), [](char c) {
        return c == ',' || c == '"' || c == '\r' || c == '\n';
    });
    if (plain)
        return value;
    QByteArray quoted = value;
    quoted.replace("\"", "\"\"");
    return '"' + quoted + '"';
}

QByteArray AuditExportWriter::csvTextField(const QByteArray &value)
{
    auto isControl = [](unsigned char c) {
        return (c < 0x20 && c != '\t' && c != '\n' && c != '\r') || c == 0x7f;
    };
    // A formula may hide behind white space or an invisible character: some spreadsheets drop
    // leading spaces and line breaks before they read a cell, and a no-break or ideographic
    // space, a byte order mark, a BiDi control, a zero-width or tag character, a combining mark
    // before "=" is not seen. All of them are skipped before the first character is looked at
    // (any Unicode space, line or paragraph separator or NEL: QChar::isSpace; whatever draws
    // nothing: display::isHiddenCharacter; categories Mn and Me), and the full-width signs
    // "＝＋－＠" start a formula as their ASCII forms do: " =1+1", "\n@x", "\u3000=1+1",
    // "\u202E=1+1", "＝1+1".
    bool formula = !value.isEmpty() && (value.front() == '\t' || value.front() == '\r');
    const auto startsFormula = [](char32_t c) {
        return c == '=' || c == '+' || c == '-' || c == '@' || c == 0xFF1D || c == 0xFF0B
            || c == 0xFF0D || c == 0xFF20;
    };
    const auto unseen = [](char32_t c) {
        if (QChar::isSpace(c) || display::isHiddenCharacter(c))
            return true;
        const QChar::Category category = QChar::category(c);
        return category == QChar::Mark_NonSpacing || category == QChar::Mark_Enclosing;
    };
    if (!value.isEmpty()) {
        const auto lead = static_cast<unsigned char>(value.front());
        if (lead > 0x20 && lead < 0x80) {
            formula = formula || startsFormula(lead); // the common case: no decoding
        } else {
            // Decoded from the first kLook bytes only: a field may be megabytes long. A run of
            // unseen characters that fills them is taken as hiding a formula.
            constexpr qsizetype kLook = 1024;
            const QString head = QString::fromUtf8(value.left(kLook));
            bool decided = false;
            for (qsizetype k = 0; k < head.size();) {
                char32_t c = head.at(k).unicode();
                qsizetype next = k + 1;
                if (QChar::isHighSurrogate(c) && next < head.size()
                    && head.at(next).isLowSurrogate())
                    c = QChar::surrogateToUcs4(char16_t(c), head.at(next++).unicode());
                if (!unseen(c)) {
                    formula = formula || startsFormula(c);
                    decided = true;
                    break;
                }
                k = next;
            }
            if (!decided && value.size() > kLook)
                formula = true;
        }
    }
    bool controls = false;
    for (char ch : value) {
        if (isControl(static_cast<unsigned char>(ch))) {
            controls = true;
            break;
        }
    }
    if (!formula && !controls)
        return csvField(value);
    QByteArray out;
    out.reserve(value.size() + 8);
    if (formula)
        out += '\'';
    for (char ch : value) {
        const auto c = static_cast<unsigned char>(ch);
        if (!isControl(c)) {
            out += ch;
            continue;
        }
        // The control picture naming it (U+2400 + c, U+2421 for DEL), in UTF-8: E2 90 80+c.
        const unsigned picture = c == 0x7f ? 0x21 : c;
        out += char(0xe2);
        out += char(0x90);
        out += char(0x80 + picture);
    }
    return csvField(out);
}

QByteArray AuditExportWriter::jsonString(const QByteArray &value)
{
    QByteArray out;
    out.reserve(value.size() + 2);
    out += '"';
    for (char ch : value) {
        const auto c = static_cast<unsigned char>(ch);
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
            if (c < 0x20)
                out += QByteArray("\\u00") + QByteArray::number(c, 16).rightJustified(2, '0');
            else
                out += ch; // UTF-8 bytes pass through as they are
        }
    }
    out += '"';
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
    // A field is read in place (QByteArray::fromRawData over the result's bytes): the escaping
    // copies it once, into the chunk, which is sized for the page up front.
    const auto field = [&page](int row, int column) {
        const QByteArrayView bytes = page.view(row, column);
        return QByteArray::fromRawData(bytes.data(), bytes.size());
    };
    qsizetype size = 0;
    for (int row = 0; row < page.rowCount(); ++row)
        for (int c : indexes)
            if (c >= 0)
                size += page.byteLength(row, c) + 4;
    QByteArray chunk;
    chunk.reserve(size + page.rowCount() * (m_format == AuditExportFormat::Csv ? 2 : 256));
    for (int row = 0; row < page.rowCount(); ++row) {
        if (m_format == AuditExportFormat::Csv) {
            for (int i = 0; i < cols.size(); ++i) {
                if (i > 0)
                    chunk += ',';
                if (indexes.at(i) >= 0 && !page.isNull(row, indexes.at(i)))
                    chunk += cols.at(i).kind == Kind::Number
                        ? csvField(field(row, indexes.at(i)))
                        : csvTextField(field(row, indexes.at(i)));
            }
            chunk += "\r\n";
        } else {
            chunk += '{';
            for (int i = 0; i < cols.size(); ++i) {
                if (i > 0)
                    chunk += ',';
                chunk += jsonString(cols.at(i).name) + ':';
                const int c = indexes.at(i);
                if (c < 0 || page.isNull(row, c))
                    chunk += "null";
                else if (cols.at(i).kind == Kind::Text)
                    chunk += jsonString(field(row, c));
                else
                    chunk += page.view(row, c); // a number or jsonb text: already JSON
            }
            chunk += "}\n";
        }
        const qint64 id = page.bigInt(row, idColumn).value_or(0);
        if (m_rows == 0)
            m_firstId = id;
        m_lastId = id;
        ++m_rows;
    }
    return write(chunk);
}

bool AuditExportWriter::finish(const AuditExportSummary &summary)
{
    if (m_format != AuditExportFormat::JsonLines)
        return true;
    return write(QJsonDocument(summary.toJson()).toJson(QJsonDocument::Compact) + '\n');
}

} // namespace redrive
