// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/audit_export_writer.h"

#include "models/db/result_set.h"

#include <QIODevice>
#include <QJsonDocument>

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
    if (!value.contains(',') && !value.contains('"') && !value.contains('\r')
        && !value.contains('\n'))
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
    // leading spaces and line breaks before they read a cell, and NBSP, a byte order mark, a
    // BiDi control or a zero-width character before "=" is not seen. All of them are skipped
    // before the first character is looked at: " =1+1", "\n@x", "\u00A0=1+1", "\u202E=1+1".
    const auto invisibleAt = [&value](qsizetype at) -> qsizetype {
        const auto byte = [&](qsizetype i) {
            return i < value.size() ? static_cast<unsigned char>(value.at(i)) : 0u;
        };
        const unsigned c = byte(at);
        if (c == ' ' || c == '\n' || c == '\t' || c == '\r')
            return 1;
        if (c == 0xC2 && byte(at + 1) == 0xA0) // U+00A0
            return 2;
        if (c == 0xEF && byte(at + 1) == 0xBB && byte(at + 2) == 0xBF) // U+FEFF
            return 3;
        if (c == 0xE2 && byte(at + 1) == 0x80) { // U+2000..U+203F
            const unsigned low = byte(at + 2);
            if ((low >= 0x80 && low <= 0x8F)
                || (low >= 0xAA && low <= 0xAF)) // spaces, ZW*, LRM, RLM, LRE..RLO, NNBSP
                return 3;
        }
        if (c == 0xE2 && byte(at + 1) == 0x81) { // U+2040..U+207F
            const unsigned low = byte(at + 2);
            if ((low >= 0xA0 && low <= 0xA4) || (low >= 0xA6 && low <= 0xAF)) // WJ, isolates
                return 3;
        }
        return 0;
    };
    qsizetype first = 0;
    while (first < value.size()) {
        const qsizetype skip = invisibleAt(first);
        if (skip == 0)
            break;
        first += skip;
    }
    bool formula = !value.isEmpty() && (value.front() == '\t' || value.front() == '\r');
    if (first < value.size()) {
        switch (value.at(first)) {
        case '=':
        case '+':
        case '-':
        case '@':
            formula = true;
            break;
        default:
            break;
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
    QByteArray chunk;
    for (int row = 0; row < page.rowCount(); ++row) {
        if (m_format == AuditExportFormat::Csv) {
            for (int i = 0; i < cols.size(); ++i) {
                if (i > 0)
                    chunk += ',';
                if (indexes.at(i) >= 0 && !page.isNull(row, indexes.at(i)))
                    chunk += cols.at(i).kind == Kind::Number
                        ? csvField(page.raw(row, indexes.at(i)))
                        : csvTextField(page.raw(row, indexes.at(i)));
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
                    chunk += jsonString(page.raw(row, c));
                else
                    chunk += page.raw(row, c); // a number or jsonb text: already JSON
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
