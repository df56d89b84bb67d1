// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/audit_export.h"

#include <QByteArray>
#include <QByteArrayView>
#include <QString>

class QIODevice;

namespace redrive {

namespace db {
class ResultSet;
}

/// Turns pages of Statement::AuditExportPage into CSV or JSON Lines on a QIODevice, one page at
/// a time (the caller drops each page after writing it, so an export of a million entries never
/// sits in memory). Values are written from the server's text as they are: JSON columns (targets,
/// before, after, outcome) stay byte for byte what jsonb printed, NULL is an empty CSV field or
/// JSON null. Counts rows and remembers the first and last entry id.
class AuditExportWriter
{
public:
    /// `out` must be open for writing and outlive the writer.
    AuditExportWriter(AuditExportFormat format, QIODevice *out);

    /// Writes what comes before the rows (CSV: the header line). False on a write error.
    bool begin();
    /// Writes every row of `page`. False on a write error.
    bool writePage(const db::ResultSet &page);
    /// Writes what comes after the rows (JSON Lines: `summary.toJson()` as the last line).
    bool finish(const AuditExportSummary &summary);

    qint64 rows() const { return m_rows; }
    qint64 firstId() const { return m_firstId; }
    qint64 lastId() const { return m_lastId; }
    /// The device's error after a failed write.
    QString errorString() const { return m_error; }

    /// One CSV field per RFC 4180: quoted (with quotes doubled) when it holds , " CR or LF.
    static QByteArray csvField(const QByteArray &value);
    /// csvField() of a text or JSON cell, made safe for a spreadsheet (docs/security.md#audit-
    /// exports-are-safe-to-open): a value beginning with = + - @ TAB or CR, or with = + - @ after
    /// leading spaces, TABs, line breaks, NBSP, U+FEFF, zero-width, BiDi and other invisible
    /// format characters (U+2000–U+200F, U+202A–U+202F, U+2060–U+2064, U+2066–U+206F), gets a
    /// leading "'" (OWASP "CSV Injection": a
    /// spreadsheet would run it as a formula), and every control
    /// character other than TAB, LF and CR is replaced by the Unicode control picture naming it
    /// (ESC 0x1B by U+241B "␛", DEL by U+2421) and every C1 control (U+0080–U+009F) by the
    /// marker the console shows it as ("⟨U+009B⟩" for the 8-bit CSI), so no terminal or viewer
    /// applies an escape sequence. Both change the value: JSON Lines is the export that keeps
    /// every character.
    static QByteArray csvTextField(const QByteArray &value);
    /// A JSON string literal of UTF-8 `value`, with quotes, C0 and C1 control characters
    /// escaped (C1 as \u0080–\u009F: the same string to a reader, no escape sequence for a
    /// terminal).
    static QByteArray jsonString(const QByteArray &value);
    /// csvField(), csvTextField() and jsonString() appended to `out` in place, as a page is
    /// written: no allocation per field.
    static void appendCsvField(QByteArray &out, QByteArrayView value);
    static void appendCsvTextField(QByteArray &out, QByteArrayView value);
    static void appendJsonString(QByteArray &out, QByteArrayView value);
    /// `json` (as QJsonDocument writes it, which leaves C1 controls raw) with every C1 control
    /// (U+0080–U+009F) escaped as \u0080–\u009F: the same document, no escape sequence for a
    /// terminal. For the chain-head record and FILE.head.json, whose filter is anyone's text.
    static QByteArray escapeC1(const QByteArray &json);
    /// The export's columns, in order (the CSV header; the keys of a JSON Lines entry).
    static QList<QByteArray> columnNames();

private:
    bool write(const QByteArray &bytes);

    AuditExportFormat m_format;
    QIODevice *m_out;
    qint64 m_rows = 0;
    qint64 m_firstId = 0;
    qint64 m_lastId = 0;
    QString m_error;
};

} // namespace redrive
