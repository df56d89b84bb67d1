// SPDX-License-Identifier: GPL-3.0-or-later
// Retention (docs/architecture.md#retention, docs/audit-chain.md#detached-months) against a real
// server, every login over TCP with a password: `redrive archive` exports exactly the resolved
// dead letters older than the period (with their jobs, attempts across month partitions and the
// audit entries naming them) and removes exactly those, in audited chunks, only for
// redrive_admin; a second run exports nothing; a row changed after its export is not removed.
// `redrive audit-detach` detaches an exported month only when the export is that month's, for
// redrive_admin; verification then starts from the recorded head and says so, and a rewritten
// recorded head or a changed entry after it is reported.
#include "models/audit_chain_verifier.h"
#include "models/audit_export.h"
#include "models/audit_filter.h"
#include "models/audit_month_detacher.h"
#include "models/db/query_params.h"
#include "models/db/sql_statement.h"
#include "models/dead_letter_archiver.h"
#include "tests/support/test_database.h"

#include <QCryptographicHash>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTemporaryDir>
#include <QTest>
#include <QTimeZone>
#include <QUuid>

using namespace redrive;
using namespace redrive::db;

namespace {

const QString kPassword = QStringLiteral("pw-retention");

QByteArray readAll(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

QString summaryOf(const DbError &e)
{
    return e.summary();
}

// Six audit entries chained by the owner as the trigger would, two in each of January, February
// and March 2026 (the trigger itself only writes the server's clock): ids 1 to 6.
const char kThreeMonthsOfAudit[] = R"SQL(
    SELECT redrive.ensure_month_partition('audit_log', 'at', m)
      FROM unnest(ARRAY['2026-01-10', '2026-02-10', '2026-03-10']::timestamptz[]) m;
    ALTER TABLE redrive.audit_log DISABLE TRIGGER audit_log_chain;
    DO $$
    DECLARE
        e redrive.audit_log;
        prev bytea := (SELECT hash FROM redrive.audit_log ORDER BY id DESC LIMIT 1);
    BEGIN
        FOR i IN 1 .. 6 LOOP
            e := ROW(nextval('redrive.audit_log_id_seq'),
                     timestamptz '2026-01-20 10:00:00+00'
                         + make_interval(months => (i - 1) / 2, days => i % 2),
                     'alice', NULL, 'alice', 'note', '[]', 'entry ' || i, NULL, NULL,
                     NULL, gen_random_uuid(), '{}', prev, NULL)::redrive.audit_log;
            e.hash := redrive.audit_entry_hash(prev, e);
            INSERT INTO redrive.audit_log SELECT (e).*;
            prev := e.hash;
        END LOOP;
    END
    $$;
    ALTER TABLE redrive.audit_log ENABLE TRIGGER audit_log_chain;
)SQL";

} // namespace

class TestRetention : public QObject
{
    Q_OBJECT

    // A world either side of the 90-day cutoff, dead letters in this order of id:
    //   A resolved 140 days ago, attempts 200 and 170 days ago (two months), a note names it
    //   B resolved 100 days ago, one attempt 120 days ago
    //   C open, dead 150 days ago                              (open: stays)
    //   D resolved 30 days ago                                 (younger: stays)
    //   E resolved 140 days ago, a compensation request names it (stays)
    //   F resolved 140 days ago, an idempotency key names its job (stays)
    // Returns the ids A..F, or an empty list (and a failure) when the world was not made.
    static QList<qint64> makeWorld(PgConnection &owner)
    {
        auto made = owner.execScript(R"SQL(
            SELECT redrive.ensure_month_partition('attempt', 'started_at', now() - d)
              FROM unnest(ARRAY[interval '200 days', interval '170 days',
                                interval '120 days', interval '40 days']) d;
            WITH spec (tag, status, dead_days, resolved_days) AS (
                VALUES ('A', 'resolved', 150, 140), ('B', 'resolved', 110, 100),
                       ('C', 'open', 150, NULL), ('D', 'resolved', 40, 30),
                       ('E', 'resolved', 150, 140), ('F', 'resolved', 150, 140)),
            j AS (INSERT INTO redrive.job (queue, kind, payload, state, entity_id, created_at,
                                           updated_at)
                  SELECT 'payments', 'charge', jsonb_build_object('order', tag), 'dead', tag,
                         now() - interval '210 days', now() - dead_days * interval '1 day'
                    FROM spec ORDER BY tag
                  RETURNING id, entity_id)
            INSERT INTO redrive.dead_letter (job_id, queue, kind, status, error_class,
                                             last_error, attempts, dead_at, resolution,
                                             resolved_by, resolved_at, updated_at)
            SELECT j.id, 'payments', 'charge', s.status, 'transient', 'card declined', 1,
                   now() - s.dead_days * interval '1 day',
                   CASE WHEN s.status = 'resolved' THEN 'not_needed' END,
                   CASE WHEN s.status = 'resolved' THEN 'ada' END,
                   now() - s.resolved_days * interval '1 day',
                   now() - coalesce(s.resolved_days, s.dead_days) * interval '1 day'
              FROM j JOIN spec s ON s.tag = j.entity_id ORDER BY j.entity_id;
            INSERT INTO redrive.attempt (job_id, attempt_no, started_at, finished_at, outcome,
                                         error_class)
            SELECT j.id, v.n, now() - v.days * interval '1 day',
                   now() - v.days * interval '1 day' + interval '2 seconds', 'failed',
                   'transient'
              FROM redrive.job j
              JOIN (VALUES ('A', 1, 200), ('A', 2, 170), ('B', 1, 120), ('D', 1, 40))
                   v (tag, n, days) ON v.tag = j.entity_id;
            INSERT INTO redrive.compensation_request (target_type, target_id, kind, payment_ref,
                                                      amount_minor, currency, status,
                                                      requires_approval, requested_by, reason,
                                                      action_id)
            SELECT 'dead_letter', d.id, 'refund', 'pay_E', 500, 'EUR', 'rejected', true, 'bob',
                   'refund asked', gen_random_uuid()
              FROM redrive.dead_letter d JOIN redrive.job j ON j.id = d.job_id
             WHERE j.entity_id = 'E';
            INSERT INTO redrive.idempotency_key (scope, key, request_hash, state, job_id, result)
            SELECT 'payments', 'order-F', repeat('a', 64), 'done', j.id, '{}'
              FROM redrive.job j WHERE j.entity_id = 'F';
            INSERT INTO redrive.audit_log (action, targets, reason, action_id)
            SELECT 'note', jsonb_build_array(jsonb_build_object('type', 'dead_letter',
                                                                'id', d.id)),
                   'customer called', gen_random_uuid()
              FROM redrive.dead_letter d JOIN redrive.job j ON j.id = d.job_id
             WHERE j.entity_id = 'A';
        )SQL");
        if (!made.ok()) {
            qWarning("%s", qPrintable(made.error().summary()));
            return {};
        }
        auto ids = owner.exec("SELECT d.id FROM redrive.dead_letter d JOIN redrive.job j"
                              "    ON j.id = d.job_id ORDER BY j.entity_id");
        QList<qint64> out;
        for (int row = 0; ids && row < ids->rowCount(); ++row)
            out << ids->bigInt(row, 0).value_or(0);
        return out;
    }

private Q_SLOTS:
    void archiveExportsAndRemovesExactlyTheOldResolved()
    {
        test::TestDatabase db(QStringLiteral("retention_archive"));
        QVERIFY2(db.isValid(), qPrintable(db.error()));
        PgConnection owner = db.connect();
        const QList<qint64> ids = makeWorld(owner);
        QCOMPARE(ids.size(), 6);
        const qint64 a = ids[0], b = ids[1];
        auto note = owner.exec("SELECT max(id) FROM redrive.audit_log");
        QVERIFY(note);
        const qint64 noteId = note->bigInt(0, 0).value_or(0);
        QVERIFY(noteId > 0);

        const QString ada
            = db.createLogin(QStringLiteral("ada"), { QStringLiteral("redrive_admin") }, kPassword);
        PgConnection admin = test::TestDatabase::connectWith(db.tcpSettingsAs(ada, kPassword));
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(QStringLiteral("archive.jsonl"));

        DeadLetterArchiver archiver(admin);
        archiver.setChunkSize(1); // two chunks: two audit entries, offsets 0 and line 1's length
        auto first = archiver.run(QStringLiteral("90 days"), path);
        QVERIFY2(first, first ? "" : qPrintable(summaryOf(first.error())));
        QCOMPARE(first->archived, qint64(2));
        QCOMPARE(first->attempts, qint64(3));
        QCOMPARE(first->chunks, qint64(2));
        QCOMPARE(first->firstId, a);
        QCOMPARE(first->lastId, b);
        const QByteArray content = readAll(path);
        QCOMPARE(first->bytesWritten, qint64(content.size()));
        QCOMPARE(first->fileSha256,
                 QCryptographicHash::hash(content, QCryptographicHash::Sha256).toHex());

        // Two lines: A with both attempts (two months) and the note's id, then B.
        const QList<QByteArray> lines = content.split('\n');
        QCOMPARE(lines.size(), 3);
        QCOMPARE(lines[2], QByteArray());
        const QJsonObject lineA = QJsonDocument::fromJson(lines[0]).object();
        const QJsonObject lineB = QJsonDocument::fromJson(lines[1]).object();
        QCOMPARE(lineA.value(QLatin1String("dead_letter"))
                     .toObject()
                     .value(QLatin1String("id"))
                     .toInteger(),
                 a);
        QCOMPARE(lineA.value(QLatin1String("dead_letter"))
                     .toObject()
                     .value(QLatin1String("status"))
                     .toString(),
                 QStringLiteral("resolved"));
        QCOMPARE(
            lineA.value(QLatin1String("job")).toObject().value(QLatin1String("payload")).toObject(),
            QJsonObject({ { QStringLiteral("order"), QStringLiteral("A") } }));
        const QJsonArray attemptsA = lineA.value(QLatin1String("attempts")).toArray();
        QCOMPARE(attemptsA.size(), 2);
        QCOMPARE(attemptsA[0].toObject().value(QLatin1String("attempt_no")).toInt(), 1);
        QCOMPARE(attemptsA[1].toObject().value(QLatin1String("attempt_no")).toInt(), 2);
        const QJsonArray auditA = lineA.value(QLatin1String("audit_ids")).toArray();
        QCOMPARE(auditA.size(), 1);
        QCOMPARE(auditA[0].toInteger(), noteId);
        QCOMPARE(lineB.value(QLatin1String("dead_letter"))
                     .toObject()
                     .value(QLatin1String("id"))
                     .toInteger(),
                 b);
        QCOMPARE(lineB.value(QLatin1String("attempts")).toArray().size(), 1);
        QCOMPARE(lineB.value(QLatin1String("audit_ids")).toArray().size(), 0);

        // What stays: C (open), D (younger), E (compensation), F (idempotency key), their jobs
        // and D's attempt; A's and B's jobs and attempts are gone.
        auto left = owner.exec(
            "SELECT (SELECT string_agg(j.entity_id, ',' ORDER BY j.entity_id)"
            "          FROM redrive.dead_letter d JOIN redrive.job j ON j.id = d.job_id),"
            "       (SELECT string_agg(entity_id, ',' ORDER BY entity_id) FROM redrive.job),"
            "       (SELECT count(*) FROM redrive.attempt)");
        QVERIFY(left);
        QCOMPARE(left->text(0, 0), QStringLiteral("C,D,E,F"));
        QCOMPARE(left->text(0, 1), QStringLiteral("C,D,E,F"));
        QCOMPARE(left->bigInt(0, 2).value_or(-1), qint64(1));

        // One audit entry per chunk, by ada, naming the dead letter, with its line's digest,
        // the file and where in it the line starts.
        auto audit = owner.exec(
            "SELECT db_user, targets::text, outcome ->> 'archived', outcome ->> 'attempts',"
            "       outcome ->> 'first_id', outcome ->> 'last_id', outcome ->> 'lines_sha256',"
            "       outcome ->> 'file', outcome ->> 'file_offset', reason"
            "  FROM redrive.audit_log WHERE action = 'archive_dead_letters' ORDER BY id");
        QVERIFY(audit);
        QCOMPARE(audit->rowCount(), 2);
        const qint64 lengthA = lines[0].size() + 1;
        for (int row = 0; row < 2; ++row) {
            const qint64 id = row == 0 ? a : b;
            const QByteArray line = lines[row] + '\n';
            QCOMPARE(audit->text(row, 0), ada);
            QCOMPARE(audit->text(row, 1),
                     QStringLiteral("[{\"id\": %1, \"type\": \"dead_letter\", \"result\": "
                                    "\"applied\"}]")
                         .arg(id));
            QCOMPARE(audit->text(row, 2), QStringLiteral("1"));
            QCOMPARE(audit->text(row, 3), row == 0 ? QStringLiteral("2") : QStringLiteral("1"));
            QCOMPARE(audit->text(row, 4), QString::number(id));
            QCOMPARE(audit->text(row, 5), QString::number(id));
            QCOMPARE(audit->text(row, 6),
                     QString::fromLatin1(
                         QCryptographicHash::hash(line, QCryptographicHash::Sha256).toHex()));
            QCOMPARE(audit->text(row, 7), QStringLiteral("archive.jsonl"));
            QCOMPARE(audit->text(row, 8),
                     row == 0 ? QStringLiteral("0") : QString::number(lengthA));
            QCOMPARE(audit->text(row, 9),
                     QStringLiteral("retention: resolved and older than 90 days"));
        }

        // A second run exports nothing and leaves the file as it was.
        DeadLetterArchiver again(admin);
        auto second = again.run(QStringLiteral("90 days"), path);
        QVERIFY2(second, second ? "" : qPrintable(summaryOf(second.error())));
        QCOMPARE(second->archived, qint64(0));
        QCOMPARE(second->bytesWritten, qint64(0));
        QCOMPARE(readAll(path), content);
        QCOMPARE(second->fileSha256, first->fileSha256);

        // A shorter period takes D too, appended after A and B.
        auto shorter = again.run(QStringLiteral("20 days"), path);
        QVERIFY2(shorter, shorter ? "" : qPrintable(summaryOf(shorter.error())));
        QCOMPARE(shorter->archived, qint64(1));
        QCOMPARE(shorter->firstId, ids[3]);
        QVERIFY(readAll(path).startsWith(content));

        // The audit chain still holds.
        AuditChainVerifier verifier;
        auto chain = verifier.verify(owner);
        QVERIFY(chain && chain->holds());
    }

    // The line holds every time in one ISO 8601 form, at the ends of PostgreSQL's range too (a
    // year outside 0000..9999 with a sign and six digits, astronomical numbering; infinity as
    // PostgreSQL's word), and the payload as received byte for byte, duplicate keys and spacing
    // kept; the archive still removes the row, its digest agreeing with the server's.
    void archiveWritesTimesAtTheEndsAndThePayloadAsReceived()
    {
        test::TestDatabase db(QStringLiteral("retention_ends"));
        QVERIFY2(db.isValid(), qPrintable(db.error()));
        PgConnection owner = db.connect();
        auto made = owner.execScript(R"SQL(
            WITH j AS (INSERT INTO redrive.job (queue, kind, payload, payload_received, state,
                                               created_at, run_at, deadline_at, updated_at)
                       VALUES ('payments', 'charge', '{"a": 2}',
                               '{"a": 1,  "a": 2}', 'dead',
                               '4713-01-01 00:00:00+00 BC', 'infinity',
                               '294276-12-31 23:59:59.5+00', now() - interval '150 days')
                       RETURNING id)
            INSERT INTO redrive.dead_letter (job_id, queue, kind, status, error_class,
                                             last_error, attempts, dead_at, resolution,
                                             resolved_by, resolved_at, updated_at)
            SELECT j.id, 'payments', 'charge', 'resolved', 'transient',
                   '4713-01-01T00:00:00+00:00 BC', 1, '0001-01-01 00:00:00+00 BC', 'not_needed', 'ada',
                   '2026-03-01 10:00:00.25+00', now() - interval '140 days'
              FROM j;
            INSERT INTO redrive.attempt (job_id, attempt_no, started_at, finished_at, outcome,
                                         error_class)
            SELECT id, 1, '-infinity', '4000-06-15 12:30:00+00 BC', 'failed', 'transient'
              FROM redrive.job;
        )SQL");
        QVERIFY2(made.ok(), made.ok() ? "" : qPrintable(made.error().summary()));
        const QString ada
            = db.createLogin(QStringLiteral("ada"), { QStringLiteral("redrive_admin") }, kPassword);
        PgConnection admin = test::TestDatabase::connectWith(db.tcpSettingsAs(ada, kPassword));
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(QStringLiteral("archive.jsonl"));
        DeadLetterArchiver archiver(admin);
        auto run = archiver.run(QStringLiteral("90 days"), path);
        QVERIFY2(run, run ? "" : qPrintable(summaryOf(run.error())));
        QCOMPARE(run->archived, qint64(1));
        QCOMPARE(run->attempts, qint64(1));

        const QByteArray content = readAll(path);
        QVERIFY(content.endsWith('\n'));
        QJsonParseError parsed;
        const QJsonObject line = QJsonDocument::fromJson(content.chopped(1), &parsed).object();
        QCOMPARE(parsed.error, QJsonParseError::NoError);
        const QJsonObject job = line.value(QLatin1String("job")).toObject();
        const QJsonObject dead = line.value(QLatin1String("dead_letter")).toObject();
        const QJsonObject attempt
            = line.value(QLatin1String("attempts")).toArray().at(0).toObject();
        QCOMPARE(job.value(QLatin1String("created_at")).toString(),
                 QStringLiteral("-004712-01-01T00:00:00+00:00"));
        QCOMPARE(job.value(QLatin1String("run_at")).toString(), QStringLiteral("infinity"));
        QCOMPARE(job.value(QLatin1String("deadline_at")).toString(),
                 QStringLiteral("+294276-12-31T23:59:59.5+00:00"));
        QCOMPARE(dead.value(QLatin1String("dead_at")).toString(),
                 QStringLiteral("0000-01-01T00:00:00+00:00"));
        QCOMPARE(dead.value(QLatin1String("resolved_at")).toString(),
                 QStringLiteral("2026-03-01T10:00:00.25+00:00"));
        QCOMPARE(attempt.value(QLatin1String("started_at")).toString(),
                 QStringLiteral("-infinity"));
        QCOMPARE(attempt.value(QLatin1String("finished_at")).toString(),
                 QStringLiteral("-003999-06-15T12:30:00+00:00"));
        // Text that only looks like a time is not a time column: kept.
        QCOMPARE(dead.value(QLatin1String("last_error")).toString(),
                 QStringLiteral("4713-01-01T00:00:00+00:00 BC"));
        QCOMPARE(job.value(QLatin1String("payload_received")).toString(),
                 QStringLiteral("{\"a\": 1,  \"a\": 2}"));
        QCOMPARE(job.value(QLatin1String("payload")).toObject(),
                 QJsonObject({ { QStringLiteral("a"), 2 } }));
        auto left = owner.exec("SELECT count(*) FROM redrive.dead_letter");
        QVERIFY(left);
        QCOMPARE(left->bigInt(0, 0).value_or(-1), qint64(0));
    }

    void archiveRefusesAChangedOrOpenRow()
    {
        test::TestDatabase db(QStringLiteral("retention_changed"));
        QVERIFY2(db.isValid(), qPrintable(db.error()));
        PgConnection owner = db.connect();
        const QList<qint64> ids = makeWorld(owner);
        QCOMPARE(ids.size(), 6);
        const QString ada
            = db.createLogin(QStringLiteral("ada"), { QStringLiteral("redrive_admin") }, kPassword);
        PgConnection admin = test::TestDatabase::connectWith(db.tcpSettingsAs(ada, kPassword));
        auto candidates
            = admin.exec(statementSql(Statement::ArchiveCandidates),
                         QueryParams().addText(QStringLiteral("90 days")).addBigInt(0).addInt(10));
        QVERIFY2(candidates, candidates ? "" : qPrintable(candidates.error().summary()));
        QCOMPARE(candidates->rowCount(), 2);
        QByteArray lines;
        QList<qint64> exported;
        for (int row = 0; row < 2; ++row) {
            exported << candidates->bigInt(row, 0).value_or(0);
            lines += candidates->raw(row, 1) + '\n';
        }
        const QString digest = QString::fromLatin1(
            QCryptographicHash::hash(lines, QCryptographicHash::Sha256).toHex());
        auto archive = [&](const QList<qint64> &which, const QString &sha) {
            return admin.exec(statementSql(Statement::ArchiveDeadLetters),
                              QueryParams()
                                  .addUuid(QUuid::createUuid())
                                  .addBigIntArray(which)
                                  .addText(sha)
                                  .addText(QStringLiteral("90 days"))
                                  .addText(QStringLiteral("a.jsonl"))
                                  .addBigInt(0)
                                  .addText(QStringLiteral("retention test"))
                                  .addText(QStringLiteral("ada")));
        };

        // After the export, a note names B: its line is not what was exported.
        QVERIFY(owner
                    .exec("INSERT INTO redrive.audit_log (action, targets, reason, action_id)"
                          " VALUES ('note', jsonb_build_array(jsonb_build_object("
                          "'type', 'dead_letter', 'id', $1::bigint)), 'late note',"
                          " gen_random_uuid())",
                          QueryParams().addBigInt(exported[1]))
                    .ok());
        auto changed = archive(exported, digest);
        QVERIFY(!changed);
        QCOMPARE(changed.error().sqlState(), QStringLiteral("23514"));
        QCOMPARE(changed.error().message(),
                 QStringLiteral("the exported lines are not these dead letters as they are now: "
                                "nothing was archived"));
        // The open dead letter C can never be archived, whatever digest comes with it.
        auto open = archive({ ids[2] }, digest);
        QVERIFY(!open);
        QCOMPARE(open.error().message(),
                 QStringLiteral("1 of the 1 dead letters are gone or no longer resolved and "
                                "older than 90 days: nothing was archived"));
        // ... nor the younger D.
        auto young = archive({ exported[0], ids[3] }, digest);
        QVERIFY(!young);
        QCOMPARE(young.error().message(),
                 QStringLiteral("1 of the 2 dead letters are gone or no longer resolved and "
                                "older than 90 days: nothing was archived"));
        // Through the archiver: a chunk the server refuses (here for its too short reason) is
        // cut off the file again, which keeps what an earlier run wrote.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(QStringLiteral("kept.jsonl"));
        {
            QFile earlier(path);
            QVERIFY(earlier.open(QIODevice::WriteOnly));
            earlier.write("{\"earlier\": true}\n");
        }
        DeadLetterArchiver archiver(admin);
        archiver.setReason(QStringLiteral("no"));
        auto refused = archiver.run(QStringLiteral("90 days"), path);
        QVERIFY(!refused);
        QCOMPARE(refused.error().message(), QStringLiteral("a reason is required"));
        QCOMPARE(readAll(path), QByteArray("{\"earlier\": true}\n"));
        // A file that ends in a partial line (a run killed while writing) is not appended to.
        const QString partial = dir.filePath(QStringLiteral("partial.jsonl"));
        {
            QFile cut(partial);
            QVERIFY(cut.open(QIODevice::WriteOnly));
            cut.write("{\"dead_letter\": {\"id\"");
        }
        auto glued = DeadLetterArchiver(admin).run(QStringLiteral("90 days"), partial);
        QVERIFY(!glued);
        QCOMPARE(glued.error().message(),
                 QStringLiteral("%1 ends in a partial line: it is not an archive this command "
                                "finished writing; use another file")
                     .arg(partial));
        auto count = owner.exec("SELECT count(*) FROM redrive.dead_letter");
        QVERIFY(count);
        QCOMPARE(count->bigInt(0, 0).value_or(-1), qint64(6));
    }

    void onlyTheAdminMayArchiveOrDetach_data()
    {
        // EXECUTE is granted to redrive_admin alone, so another Redrive role is refused before
        // the function's own role check; a login with no role cannot even use the schema.
        QTest::addColumn<QStringList>("roles");
        QTest::addColumn<QString>("message");
        const QString function = QStringLiteral("permission denied for function %1");
        QTest::newRow("on-call") << QStringList { QStringLiteral("redrive_oncall") } << function;
        QTest::newRow("auditor") << QStringList { QStringLiteral("redrive_auditor") } << function;
        QTest::newRow("support and approver")
            << QStringList { QStringLiteral("redrive_support"), QStringLiteral("redrive_approver") }
            << function;
        QTest::newRow("worker") << QStringList { QStringLiteral("redrive_worker") } << function;
        QTest::newRow("no role") << QStringList {}
                                 << QStringLiteral("permission denied for schema redrive");
    }

    void onlyTheAdminMayArchiveOrDetach()
    {
        QFETCH(QStringList, roles);
        QFETCH(QString, message);
        test::TestDatabase db(QStringLiteral("retention_roles"));
        QVERIFY2(db.isValid(), qPrintable(db.error()));
        PgConnection owner = db.connect();
        QCOMPARE(makeWorld(owner).size(), 6);
        QVERIFY(owner.execScript(kThreeMonthsOfAudit).ok());
        const QString login = db.createLogin(QStringLiteral("eve"), roles, kPassword);
        PgConnection eve = test::TestDatabase::connectWith(db.tcpSettingsAs(login, kPassword));
        const QString zeros(64, QLatin1Char('0'));
        struct Call
        {
            Statement statement;
            const char *function;
            QueryParams params;
        };
        const Call calls[] = {
            { Statement::ArchiveCandidates, "archive_candidates",
              QueryParams().addText(QStringLiteral("90 days")).addBigInt(0).addInt(10) },
            { Statement::ArchiveDeadLetters, "archive_dead_letters",
              QueryParams()
                  .addUuid(QUuid::createUuid())
                  .addBigIntArray({ 1 })
                  .addText(zeros)
                  .addText(QStringLiteral("90 days"))
                  .addText(QStringLiteral("a.jsonl"))
                  .addBigInt(0)
                  .addText(QStringLiteral("retention test"))
                  .addText(QStringLiteral("eve")) },
            { Statement::AuditDetachMonth, "detach_audit_month",
              QueryParams()
                  .addUuid(QUuid::createUuid())
                  .addText(QStringLiteral("2026-01-01"))
                  .addBigInt(2)
                  .addText(zeros)
                  .addBigInt(2)
                  .addText(zeros)
                  .addText(QStringLiteral("retention test"))
                  .addText(QStringLiteral("eve")) },
        };
        for (const Call &call : calls) {
            auto refused = eve.exec(statementSql(call.statement), call.params);
            QVERIFY2(!refused, call.function);
            QCOMPARE(refused.error().sqlState(), QStringLiteral("42501"));
            QCOMPARE(refused.error().message(),
                     message.contains(QLatin1String("%1"))
                         ? message.arg(QLatin1String(call.function))
                         : message);
        }
        // Even with EXECUTE granted by mistake, each function checks the role itself.
        if (!roles.isEmpty()) {
            QVERIFY(owner
                        .execScript("GRANT EXECUTE ON FUNCTION redrive.archive_dead_letters("
                                    "uuid, bigint[], text, interval, text, bigint, text, text),"
                                    " redrive.detach_audit_month(uuid, date, bigint, text, bigint,"
                                    " text, text, text) TO PUBLIC")
                        .ok());
            for (const Call &call : calls) {
                if (call.statement == Statement::ArchiveCandidates)
                    continue;
                auto refused = eve.exec(statementSql(call.statement), call.params);
                QVERIFY2(!refused, call.function);
                QCOMPARE(refused.error().sqlState(), QStringLiteral("42501"));
                QCOMPARE(refused.error().message(),
                         QStringLiteral("permission denied: this action needs one of the roles "
                                        "redrive_admin"));
            }
        }
        // Nothing moved: six dead letters, no partition detached, no entry but the world's.
        auto after
            = owner.exec("SELECT (SELECT count(*) FROM redrive.dead_letter),"
                         "       (SELECT count(*) FROM redrive.audit_detached_month),"
                         "       (SELECT count(*) FROM redrive.audit_log WHERE action <> 'note')");
        QVERIFY(after);
        QCOMPARE(after->bigInt(0, 0).value_or(-1), qint64(6));
        QCOMPARE(after->bigInt(0, 1).value_or(-1), qint64(0));
        QCOMPARE(after->bigInt(0, 2).value_or(-1), qint64(0));
    }

    void detachedMonthVerifiesFromTheRecordedHead()
    {
        test::TestDatabase db(QStringLiteral("retention_detach"));
        QVERIFY2(db.isValid(), qPrintable(db.error()));
        PgConnection owner = db.connect();
        auto empty = owner.exec("SELECT count(*) FROM redrive.audit_log");
        QVERIFY(empty);
        QCOMPARE(empty->bigInt(0, 0).value_or(-1), qint64(0)); // ids 1..6 below
        auto chained = owner.execScript(kThreeMonthsOfAudit);
        QVERIFY2(chained.ok(), qPrintable(chained.ok() ? QString() : chained.error().summary()));
        auto januaryHead = owner.exec("SELECT encode(hash, 'hex') FROM redrive.audit_log"
                                      " WHERE id = 2");
        QVERIFY(januaryHead);
        const QByteArray headHash = januaryHead->text(0, 0).toLatin1();

        const QString ada = db.createLogin(
            QStringLiteral("ada"),
            { QStringLiteral("redrive_admin"), QStringLiteral("redrive_auditor") }, kPassword);
        PgConnection admin
            = test::TestDatabase::connectWith(db.consoleTcpSettingsAs(ada, kPassword));

        // January exported as `redrive export-audit --format jsonl --from … --until …` does.
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString exportPath = dir.filePath(QStringLiteral("audit-2026-01.jsonl"));
        {
            QFile out(exportPath);
            QVERIFY(out.open(QIODevice::WriteOnly));
            AuditFilter january;
            january.from = QDateTime(QDate(2026, 1, 1), QTime(0, 0), QTimeZone::utc());
            january.until = QDateTime(QDate(2026, 2, 1), QTime(0, 0), QTimeZone::utc());
            auto exported = exportAudit(admin, january, AuditExportFormat::JsonLines, &out);
            QVERIFY(exported);
            QCOMPARE(exported->rows, qint64(2));
        }
        const QByteArray exportBytes = readAll(exportPath);

        // An export whose entry was edited is refused, and nothing is detached.
        const QString forgedPath = dir.filePath(QStringLiteral("forged.jsonl"));
        {
            QFile forged(forgedPath);
            QVERIFY(forged.open(QIODevice::WriteOnly));
            QByteArray bytes = exportBytes;
            bytes.replace("\"entry 2\"", "\"entry X\"");
            QVERIFY(bytes != exportBytes);
            forged.write(bytes);
        }
        AuditMonthDetacher detacher(admin);
        auto refused = detacher.run(QDate(2026, 1, 1), forgedPath);
        QVERIFY(!refused);
        QCOMPARE(refused.error().message(),
                 QStringLiteral("%1 is not the export of audit month 2026-01: entry line 2 (id 2) "
                                "differs from the chain; export the month with `redrive "
                                "export-audit --format jsonl --from 2026-01-01T00:00:00Z --until "
                                "…` and try again")
                     .arg(forgedPath));
        // February's export cannot detach January, nor can February go before January.
        auto february = detacher.run(QDate(2026, 2, 1), exportPath);
        QVERIFY(!february);

        auto detached = detacher.run(QDate(2026, 1, 1), exportPath);
        QVERIFY2(detached, detached ? "" : qPrintable(detached.error().summary()));
        QCOMPARE(detached->firstId, qint64(1));
        QCOMPARE(detached->lastId, qint64(2));
        QCOMPARE(detached->entries, qint64(2));
        QCOMPARE(detached->headHash, headHash);
        QCOMPARE(detached->exportSha256,
                 QCryptographicHash::hash(exportBytes, QCryptographicHash::Sha256).toHex());

        // Recorded by ada, audited in the same transaction, the table stays outside the log.
        auto recorded = owner.exec(
            "SELECT m.month::text, m.first_id, m.last_id, m.entries, encode(m.head_hash, 'hex'),"
            "       m.export_sha256, m.recorded_by, e.action, e.db_user, e.after ->> 'head_hash',"
            "       to_char(m.recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS \"UTC\"'),"
            "       (SELECT c.relispartition FROM pg_class c"
            "         WHERE c.oid = 'redrive.audit_log_2026_01'::regclass)"
            "  FROM redrive.audit_detached_month m JOIN redrive.audit_log e ON e.id = m.audit_id");
        QVERIFY2(recorded, recorded ? "" : qPrintable(recorded.error().summary()));
        QCOMPARE(recorded->rowCount(), 1);
        QCOMPARE(recorded->text(0, 0), QStringLiteral("2026-01-01"));
        QCOMPARE(recorded->bigInt(0, 1).value_or(0), qint64(1));
        QCOMPARE(recorded->bigInt(0, 2).value_or(0), qint64(2));
        QCOMPARE(recorded->bigInt(0, 3).value_or(0), qint64(2));
        QCOMPARE(recorded->text(0, 4).toLatin1(), headHash);
        QCOMPARE(recorded->text(0, 5).toLatin1(), detached->exportSha256);
        QCOMPARE(recorded->text(0, 6), ada);
        QCOMPARE(recorded->text(0, 7), QStringLiteral("detach_audit_month"));
        QCOMPARE(recorded->text(0, 8), ada);
        QCOMPARE(recorded->text(0, 9).toLatin1(), headHash);
        const QString recordedAt = recorded->text(0, 10);
        QCOMPARE(recorded->text(0, 11), QStringLiteral("f"));

        // Verification (by the admin-auditor, in the client) starts at the recorded head and
        // says so: entries 3..6 and the detach's own entry 7.
        AuditChainVerifier verifier;
        auto fromHead = verifier.verify(admin);
        QVERIFY2(fromHead, fromHead ? "" : qPrintable(fromHead.error().summary()));
        QVERIFY2(fromHead->holds(),
                 qPrintable(fromHead->holds() ? QString() : fromHead->first().message()));
        QCOMPARE(fromHead->checked, qint64(5));
        QCOMPARE(fromHead->headId, qint64(7));
        QCOMPARE(fromHead->recordedHeadId, qint64(2));
        QCOMPARE(fromHead->startText(),
                 QStringLiteral("verified from the head recorded on %1 at entry 2 (audit months "
                                "up to 2026-01 detached)")
                     .arg(recordedAt));

        // January's partition is gone: detaching it again is refused.
        auto twice = detacher.run(QDate(2026, 1, 1), exportPath);
        QVERIFY(!twice);

        // A superuser rewrites the recorded head: the first entry kept no longer follows it.
        QVERIFY(owner
                    .execScript("ALTER TABLE redrive.audit_detached_month"
                                " DISABLE TRIGGER audit_detached_month_no_update_delete;"
                                " UPDATE redrive.audit_detached_month"
                                "    SET head_hash = sha256('forged'::bytea);"
                                " ALTER TABLE redrive.audit_detached_month"
                                " ENABLE TRIGGER audit_detached_month_no_update_delete")
                    .ok());
        auto forgedHead = verifier.verify(admin);
        QVERIFY(forgedHead);
        QVERIFY(!forgedHead->holds());
        QCOMPARE(forgedHead->first().kind, AuditChainProblem::Kind::RecordedHeadDiffers);
        QCOMPARE(forgedHead->first().message(),
                 QStringLiteral("entry 3 is the first entry kept but its prev_hash is not the head "
                                "recorded when the entries up to 2 were detached: the recorded "
                                "head or the entries after it were changed"));
        QCOMPARE(forgedHead->recordedHeadId, qint64(0));
        QVERIFY(owner
                    .exec("ALTER TABLE redrive.audit_detached_month"
                          " DISABLE TRIGGER audit_detached_month_no_update_delete")
                    .ok());
        QVERIFY(owner
                    .exec("UPDATE redrive.audit_detached_month SET head_hash = decode($1, 'hex')",
                          QueryParams().addText(QString::fromLatin1(headHash)))
                    .ok());
        QVERIFY(owner
                    .exec("ALTER TABLE redrive.audit_detached_month"
                          " ENABLE TRIGGER audit_detached_month_no_update_delete")
                    .ok());
        auto restored = verifier.verify(admin);
        QVERIFY(restored && restored->holds());

        // ... or an entry after it: that entry is named.
        QVERIFY(owner
                    .execScript("ALTER TABLE redrive.audit_log"
                                " DISABLE TRIGGER audit_log_no_update_delete;"
                                " UPDATE redrive.audit_log SET reason = 'rewritten' WHERE id = 4;"
                                " ALTER TABLE redrive.audit_log"
                                " ENABLE TRIGGER audit_log_no_update_delete")
                    .ok());
        auto changed = verifier.verify(admin);
        QVERIFY(changed);
        QVERIFY(!changed->holds());
        QCOMPARE(changed->first().message(),
                 QStringLiteral("entry 4 was changed: its hash does not match its contents"));

        // ... or (entry 4 put back) deletes the first entry kept: the next one does not follow
        // the recorded head.
        QVERIFY(owner
                    .execScript("ALTER TABLE redrive.audit_log"
                                " DISABLE TRIGGER audit_log_no_update_delete;"
                                " UPDATE redrive.audit_log SET reason = 'entry 4' WHERE id = 4;"
                                " DELETE FROM redrive.audit_log WHERE id = 3;"
                                " ALTER TABLE redrive.audit_log"
                                " ENABLE TRIGGER audit_log_no_update_delete")
                    .ok());
        auto cut = verifier.verify(admin);
        QVERIFY(cut);
        QVERIFY(!cut->holds());
        QCOMPARE(cut->first().kind, AuditChainProblem::Kind::RecordedHeadDiffers);
        QCOMPARE(cut->first().id, qint64(4));
    }
};

QTEST_GUILESS_MAIN(TestRetention)
#include "tst_retention.moc"
