// SPDX-License-Identifier: GPL-3.0-or-later
// Reads at scale (docs/architecture.md#reads-at-scale), on a small scale world made by the same
// code as `redrive-worker scale`: every case-view pane is an index lookup (no sequential scan of
// a big table), facets and counts never read the big tables, the rollups of migration 18 equal a
// full recount after random writes from concurrent sessions, the overview statements equal the
// raw buckets, and no Redrive login can write a rollup.
#include "models/db/pg_connection.h"
#include "models/db/sql_statement.h"
#include "models/worker/worker_commands.h"
#include "tests/support/test_database.h"

#include <QRandomGenerator>
#include <QTest>
#include <QtConcurrent/QtConcurrentRun>

using namespace redrive;
using namespace redrive::db;

// The named statements and migrations are compiled into the static core library; this test
// references nothing else of that object, so it pulls it in by name.
static void initSqlResources()
{
    Q_INIT_RESOURCE(redrive_sql);
}

namespace {

// The tables a world at scale makes big: a plan may never read them sequentially.
const QStringList kBigTables = { QStringLiteral("dead_letter"),
                                 QStringLiteral("job"),
                                 QStringLiteral("attempt"),
                                 QStringLiteral("idempotency_key"),
                                 QStringLiteral("audit_log"),
                                 QStringLiteral("outbox"),
                                 QStringLiteral("reconciliation_mismatch") };

// A full recount of every rollup from the base tables, in one canonical text.
constexpr char kRecount[] = R"(
SELECT coalesce(string_agg(format('%s|%s|%s|%s|%s', series, grain_s, bucket, key, n), ';'
                           ORDER BY series, grain_s, bucket, key), '')
  FROM (SELECT x.series, g.grain_s,
               date_bin(g.grain_s * interval '1 second', x.at, timestamptz 'epoch') AS bucket,
               x.key, count(*) AS n
          FROM (SELECT 'attempt' AS series, started_at AS at, outcome AS key FROM redrive.attempt
                UNION ALL
                SELECT 'dead', dead_at, coalesce(error_class, '') FROM redrive.dead_letter
                UNION ALL
                SELECT 'resolved', resolved_at, '' FROM redrive.dead_letter
                 WHERE resolved_at IS NOT NULL) x
         CROSS JOIN (VALUES (60), (3600)) g (grain_s)
         GROUP BY 1, 2, 3, 4) r
UNION ALL
SELECT coalesce(string_agg(format('%s|%s|%s', kind, n, open), ';' ORDER BY kind), '')
  FROM (SELECT kind, count(*) AS n, count(*) FILTER (WHERE status = 'open') AS open
          FROM redrive.reconciliation_mismatch GROUP BY kind) m
)";

} // namespace

class TestReadRollups : public QObject
{
    Q_OBJECT
private:
    std::unique_ptr<test::TestDatabase> m_db;
    std::optional<PgConnection> m_c;

    ResultSet q(const QByteArray &sql, const QueryParams &params = {})
    {
        auto r = m_c->exec(sql, params);
        if (!r)
            qFatal("%s: %s", sql.constData(), qPrintable(r.error().summary()));
        return r.value();
    }

    // The plan of `statement` with `params`, as the console reads the native source.
    QString plan(Statement statement, const QueryParams &params)
    {
        q("SET search_path = redrive");
        const auto guard = qScopeGuard([this] { q("RESET search_path"); });
        const ResultSet rows = q("EXPLAIN " + statementSql(statement), params);
        QStringList lines;
        for (int r = 0; r < rows.rowCount(); ++r)
            lines << rows.text(r, 0);
        return lines.join(QLatin1Char('\n'));
    }

    static QStringList seqScansOfBigTables(const QString &plan)
    {
        QStringList found;
        for (const QString &table : kBigTables) {
            if (plan.contains(QStringLiteral("Seq Scan on ") + table + QLatin1Char(' ')))
                found << table;
        }
        return found;
    }

    // The rollups as the tables hold them, in kRecount's canonical text.
    QString rollups()
    {
        const ResultSet r = q(R"(
SELECT coalesce(string_agg(format('%s|%s|%s|%s|%s', series, grain_s, bucket, key, n), ';'
                           ORDER BY series, grain_s, bucket, key), '')
  FROM redrive.bucket_rollup WHERE n <> 0
UNION ALL
SELECT coalesce(string_agg(format('%s|%s|%s', kind, mismatches, open), ';' ORDER BY kind), '')
  FROM redrive.mismatch_kind_count WHERE mismatches <> 0)");
        return r.text(0, 0) + QLatin1Char('#') + r.text(1, 0);
    }
    QString recount()
    {
        const ResultSet r = q(kRecount);
        return r.text(0, 0) + QLatin1Char('#') + r.text(1, 0);
    }

private Q_SLOTS:
    void initTestCase()
    {
        initSqlResources();
        m_db = std::make_unique<test::TestDatabase>(QStringLiteral("rollups"));
        QVERIFY2(m_db->isValid(), qPrintable(m_db->error()));
        m_c.emplace(m_db->connect());
        // A few thousand rows: enough that the planner prefers an index wherever one serves.
        worker::ScaleOptions options;
        options.deadLetters = 3000;
        options.keys = 3000;
        options.mismatches = 1000;
        options.auditEntries = 500;
        QCOMPARE(worker::runScaleCommand(*m_c, options), 0);
        // The scale world has no outbox: give it one command per dead letter, done.
        q("INSERT INTO redrive.outbox (command, target_type, target_id, dedupe_key, status)"
          " SELECT 'requeue', 'dead_letter', id::text, 'test-' || id, 'done'"
          "   FROM redrive.dead_letter");
        q("ANALYZE");
    }
    void cleanupTestCase()
    {
        m_c.reset();
        m_db.reset();
    }

    // Every pane of the case view reads its rows by index, the idempotency key's included
    // (through a view that used to compute "stuck" with clock_timestamp() and scanned every key).
    void caseViewPanesAreIndexLookups_data()
    {
        QTest::addColumn<int>("statement");
        QTest::addColumn<bool>("withPreviewBytes");
        QTest::newRow("detail") << int(Statement::DeadLetterDetail) << true;
        QTest::newRow("payload") << int(Statement::DeadLetterPayload) << false;
        QTest::newRow("attempts") << int(Statement::AttemptHistory) << false;
        QTest::newRow("idempotency key") << int(Statement::DeadLetterIdempotencyKey) << false;
        QTest::newRow("mismatches") << int(Statement::DeadLetterMismatches) << false;
        QTest::newRow("outbox") << int(Statement::DeadLetterOutbox) << false;
        QTest::newRow("audit") << int(Statement::DeadLetterAudit) << false;
        QTest::newRow("verdict") << int(Statement::RetryVerdict) << false;
    }
    void caseViewPanesAreIndexLookups()
    {
        QFETCH(int, statement);
        QFETCH(bool, withPreviewBytes);
        // A dead letter whose key record exists, so every pane has something to find.
        const qint64 id
            = q("SELECT min(d.id) FROM redrive.dead_letter d JOIN redrive.idempotency_key k"
                "  ON k.scope = d.kind AND k.key = d.idempotency_key")
                  .bigInt(0, 0)
                  .value_or(0);
        QVERIFY(id > 0);
        QueryParams params;
        params.addBigInt(id);
        if (withPreviewBytes)
            params.addInt(65536);
        const QString p = plan(Statement(statement), params);
        QVERIFY2(seqScansOfBigTables(p).isEmpty(), qPrintable(p));
        if (Statement(statement) == Statement::DeadLetterIdempotencyKey)
            QVERIFY2(p.contains(QStringLiteral("Index Scan using idempotency_key_key_hash_idx")),
                     qPrintable(p));
        if (Statement(statement) == Statement::RetryVerdict) {
            // The verdict is a function: look at the plan of the statement inside it.
            QString body = q("SELECT prosrc FROM pg_proc WHERE oid = "
                             "'redrive.retry_verdict(bigint)'::regprocedure")
                               .text(0, 0);
            q("PREPARE verdict_body(bigint) AS "
              + body.replace(QStringLiteral("p_dead_letter"), QStringLiteral("$1")).toUtf8());
            const ResultSet inner
                = q("EXPLAIN EXECUTE verdict_body(" + QByteArray::number(id) + ")");
            q("DEALLOCATE verdict_body");
            QStringList lines;
            for (int r = 0; r < inner.rowCount(); ++r)
                lines << inner.text(r, 0);
            const QString innerPlan = lines.join(QLatin1Char('\n'));
            QVERIFY2(seqScansOfBigTables(innerPlan).isEmpty(), qPrintable(innerPlan));
        }
    }

    // A page of a frozen pass (docs/architecture.md#paging-a-frozen-pass) is one index lookup
    // per id or key, wherever in the list it is: no plan reads a big table.
    void frozenPassPagesAreIndexLookups()
    {
        const ResultSet ids
            = q("SELECT array_agg(id ORDER BY id)::text FROM"
                " (SELECT id FROM redrive.dead_letter ORDER BY id DESC LIMIT 200) s");
        const QString rows = plan(Statement::DeadLetterRows, QueryParams().addText(ids.text(0, 0)));
        QVERIFY2(seqScansOfBigTables(rows).isEmpty(), qPrintable(rows));
        QVERIFY2(rows.contains(QStringLiteral("dead_letter_pkey")), qPrintable(rows));
        const ResultSet keys = q("SELECT array_agg(scope)::text, array_agg(key)::text FROM"
                                 " (SELECT scope, key FROM redrive.idempotency_key"
                                 "   ORDER BY updated_at DESC LIMIT 200) s");
        const QString keyRows
            = plan(Statement::IdempotencyKeyRows,
                   QueryParams().addText(keys.text(0, 0)).addText(keys.text(0, 1)));
        QVERIFY2(seqScansOfBigTables(keyRows).isEmpty(), qPrintable(keyRows));
        QVERIFY2(keyRows.contains(QStringLiteral("idempotency_key_key_hash_idx")),
                 qPrintable(keyRows));
    }

    // The facets and the mismatch counts come from their small tables: no plan reads a big one.
    void facetsAndCountsNeverReadTheBigTables()
    {
        for (Statement s : { Statement::DeadLetterFacets, Statement::MismatchCounts }) {
            const QString p = plan(s, {});
            for (const QString &table : kBigTables)
                QVERIFY2(!p.contains(QStringLiteral(" on ") + table + QLatin1Char(' ')),
                         qPrintable(p));
        }
        // ... and say what a scan would: every queue and kind of the dead letters, every kind's
        // counts.
        q("SET search_path = redrive");
        const ResultSet facets = q(statementSql(Statement::DeadLetterFacets));
        q("RESET search_path");
        const qint64 distinct = q("SELECT (SELECT count(DISTINCT queue) FROM redrive.dead_letter)"
                                  "     + (SELECT count(DISTINCT kind) FROM redrive.dead_letter)")
                                    .bigInt(0, 0)
                                    .value_or(-1);
        QCOMPARE(qint64(facets.rowCount()), distinct);
        QVERIFY(distinct > 2);
    }

    // Times at the ends of timestamptz's range (docs/domain.md "Times at the ends of the
    // range"): the worker's finish_attempt records attempts at -infinity, 4713 BC, 1970, 2026,
    // 2300, 294276 and infinity (the rollup trigger refused 294276 with "interval out of range"),
    // the retry history lists each with no duration at an infinite end ("cannot subtract
    // infinite timestamps" blanked it), the timeline's buckets and the overview's rollup leave
    // out what has no bucket, a full recount agrees, and the dead-letter list shows a dead letter
    // dead at -infinity with no age. In a transaction rolled back: the other tests' world stays.
    void timesAtTheEndsOfTheRange()
    {
        q("BEGIN");
        auto rollback = qScopeGuard([this] { q("ROLLBACK"); });
        q("SET LOCAL TimeZone = 'UTC'");
        const qint64 job = q("INSERT INTO redrive.job (queue, kind, payload, state)"
                             " VALUES ('ends', 'ends_of_time', '{}', 'queued') RETURNING id")
                               .bigInt(0, 0)
                               .value_or(0);
        struct Run
        {
            const char *started;
            const char *finished;
        };
        // In the order the worker reports them; the last one makes the dead letter (its dead_at
        // is the attempt's finish: -infinity).
        const Run runs[] = {
            { "1970-01-01 00:00:00+00", "1970-01-01 00:00:01.5+00" },
            { "2026-11-30 12:00:00+00", "infinity" },
            { "2300-01-01 00:00:00+00", "2300-01-01 00:00:02+00" },
            { "294276-12-31 23:00:00+00", "294276-12-31 23:30:00+00" },
            { "infinity", "infinity" },
            { "4713-01-01 00:00:00+00 BC", "4713-01-01 00:00:00.25+00 BC" },
            { "-infinity", "-infinity" },
        };
        int no = 0;
        for (const Run &run : runs) {
            ++no;
            q("UPDATE redrive.job SET state = 'running', attempt = $2, locked_by = 'w-ends',"
              " locked_login = session_user, locked_until = clock_timestamp() + interval '1 min'"
              " WHERE id = $1",
              QueryParams().addBigInt(job).addInt(no));
            const bool last = no == int(std::size(runs));
            const ResultSet r
                = q("SELECT redrive.finish_attempt($1, 'w-ends', $2::timestamptz, $3::timestamptz, "
                    "'failed', 'transient',"
                    " 'e_ends', 'at the ends of time', NULL, $4, 1000)",
                    QueryParams()
                        .addBigInt(job)
                        .addText(QString::fromLatin1(run.started))
                        .addText(QString::fromLatin1(run.finished))
                        .addText(last ? QStringLiteral("dead") : QStringLiteral("retry")));
            QCOMPARE(r.rowCount(), 1);
        }
        const qint64 dead = q("SELECT id FROM redrive.dead_letter WHERE job_id = $1",
                              QueryParams().addBigInt(job))
                                .bigInt(0, 0)
                                .value_or(0);
        QVERIFY(dead > 0);

        // The retry history: every attempt, in order of start, no duration at an infinite end.
        QCOMPARE(q("SELECT string_agg(format('#%s %s..%s %s', attempt_no, started_at,"
                   " finished_at, coalesce(duration_ms::text, '-')), '; '"
                   " ORDER BY started_at, id)"
                   " FROM redrive.attempt_history WHERE dead_letter_id = $1",
                   QueryParams().addBigInt(dead))
                     .text(0, 0),
                 QStringLiteral("#7 -infinity..-infinity -; "
                                "#6 4713-01-01 00:00:00+00 BC..4713-01-01 00:00:00.25+00 BC 250; "
                                "#1 1970-01-01 00:00:00+00..1970-01-01 00:00:01.5+00 1500; "
                                "#2 2026-11-30 12:00:00+00..infinity -; "
                                "#3 2300-01-01 00:00:00+00..2300-01-01 00:00:02+00 2000; "
                                "#4 294276-12-31 23:00:00+00..294276-12-31 23:30:00+00 1800000; "
                                "#5 infinity..infinity -"));

        // The console's statements, as it runs them.
        q("SET LOCAL search_path = redrive");
        // The history page lists all 7 (newest first: infinity on top).
        const ResultSet page = q(statementSql(Statement::AttemptHistoryPage),
                                 QueryParams()
                                     .addBigInt(dead)
                                     .addNull(ParamType::TimestampTz)
                                     .addNull(ParamType::Int)
                                     .addNull(ParamType::BigInt)
                                     .addInt(50));
        QStringList listed;
        for (int r = 0; r < page.rowCount(); ++r)
            listed << page.text(r, QStringLiteral("attempt_no"));
        QCOMPARE(listed.join(QLatin1Char(',')), QStringLiteral("5,4,3,2,1,6,7"));
        // The timeline's 3 buckets span 4713 BC to 294276 and hold the 5 finite starts.
        const ResultSet buckets = q(statementSql(Statement::AttemptTimelineBuckets),
                                    QueryParams().addBigInt(dead).addInt(3));
        QStringList got;
        for (int r = 0; r < buckets.rowCount(); ++r) {
            got << QStringLiteral("%1 %2 %3..%4")
                       .arg(buckets.text(r, QStringLiteral("bucket")),
                            buckets.text(r, QStringLiteral("attempts")),
                            buckets.text(r, QStringLiteral("bucket_from")),
                            buckets.text(r, QStringLiteral("bucket_until")));
        }
        QCOMPARE(got.join(QStringLiteral("; ")),
                 QStringLiteral("1 4 4713-01-01 00:00:00+00 BC..94951-01-01 07:40:00+00; "
                                "3 1 194614-01-01 15:20:00+00..294276-12-31 23:00:00+00"));
        // The dead-letter list: dead at -infinity, no age; the row is there.
        const ResultSet row
            = q(statementSql(Statement::DeadLetterRows), QueryParams().addBigIntArray({ dead }));
        QCOMPARE(row.rowCount(), 1);
        QCOMPARE(row.text(0, QStringLiteral("dead_at")), QStringLiteral("-infinity"));
        QVERIFY(row.isNull(0, row.columnIndex(QStringLiteral("age_seconds"))));
        q("SET LOCAL search_path = pg_catalog");

        // The rollup counts what has an hour: 4713 BC, 1970 and 2300 (the world's attempts are
        // all in this century), nothing at ±infinity or in 294276; a full recount agrees.
        const QByteArray farBuckets
            = "SELECT string_agg(format('%s %s %s', series, bucket, n), '; ' ORDER BY series, "
              "bucket)"
              " FROM redrive.bucket_rollup"
              " WHERE grain_s = 3600 AND (bucket < '2000-01-01' OR bucket >= '2100-01-01')";
        const QString expected = QStringLiteral("attempt 4713-01-01 00:00:00+00 BC 1; "
                                                "attempt 1970-01-01 00:00:00+00 1; "
                                                "attempt 2300-01-01 00:00:00+00 1");
        QCOMPARE(q(farBuckets).text(0, 0), expected);
        const QString before = rollups();
        q("SELECT redrive.rebuild_read_rollups()");
        QCOMPARE(rollups(), before);
        QCOMPARE(q(farBuckets).text(0, 0), expected);
    }

    // The overview statements equal the raw buckets over the base tables, per hour and per
    // 10 minutes, over the whole world.
    void overviewEqualsTheRawBuckets_data()
    {
        QTest::addColumn<qint64>("widthMs");
        QTest::newRow("4 h") << qint64(4 * 3600000);
        QTest::newRow("10 min") << qint64(600000);
    }
    void overviewEqualsTheRawBuckets()
    {
        QFETCH(qint64, widthMs);
        const QByteArray raw[] = {
            // dead letters by class
            "SELECT coalesce(string_agg(format('%s|%s|%s', b, c, n), ';' ORDER BY b, c), '') FROM ("
            " SELECT date_bin($1::bigint * interval '1 ms', dead_at, $2::timestamptz) b, "
            "error_class c, count(*) n"
            "   FROM redrive.dead_letter WHERE dead_at >= $2::timestamptz AND dead_at < "
            "$3::timestamptz GROUP BY 1, 2) x",
            // attempts by outcome
            "SELECT coalesce(string_agg(format('%s|%s|%s', b, c, n), ';' ORDER BY b, c), '') FROM ("
            " SELECT date_bin($1::bigint * interval '1 ms', started_at, $2::timestamptz) b, "
            "outcome c, count(*) n"
            "   FROM redrive.attempt WHERE started_at >= $2::timestamptz AND started_at < "
            "$3::timestamptz GROUP BY 1, 2) x",
            // arrived and resolved
            "SELECT coalesce(string_agg(format('%s|%s|%s', b, a, r), ';' ORDER BY b), '') FROM ("
            " SELECT b, sum(a) a, sum(r) r"
            "  FROM (SELECT date_bin($1::bigint * interval '1 ms', dead_at, $2::timestamptz) b, 1 "
            "a, 0 r"
            "          FROM redrive.dead_letter WHERE dead_at >= $2::timestamptz AND dead_at < "
            "$3::timestamptz"
            "        UNION ALL"
            "        SELECT date_bin($1::bigint * interval '1 ms', resolved_at, $2::timestamptz), "
            "0, 1"
            "          FROM redrive.dead_letter WHERE resolved_at >= $2::timestamptz AND "
            "resolved_at < $3::timestamptz) x"
            " GROUP BY b) y",
        };
        const Statement statements[]
            = { Statement::OverviewDeadLettersByClass, Statement::OverviewAttemptOutcomes,
                Statement::OverviewOpenResolved };
        // Whole buckets from the epoch around the whole world, as the console asks.
        const ResultSet range = q("SELECT to_timestamp(floor(extract(epoch FROM min(started_at)) * "
                                  "1000 / $1) * $1 / 1000),"
                                  "       to_timestamp(ceil(extract(epoch FROM now() + interval '1 "
                                  "day') * 1000 / $1) * $1"
                                  "                    / 1000)"
                                  "  FROM redrive.attempt",
                                  QueryParams().addBigInt(widthMs));
        QueryParams params;
        params.addBigInt(widthMs).addText(range.text(0, 0)).addText(range.text(0, 1));
        const QueryParams rawParams = params;
        // In UTC, whole hours (no daylight saving): the same edges as the epoch's.
        params.addText(QStringLiteral("UTC")).addBool(true);
        for (int i = 0; i < 3; ++i) {
            q("SET search_path = redrive");
            const ResultSet rows = q(statementSql(statements[i]), params);
            q("RESET search_path");
            QStringList got;
            for (int r = 0; r < rows.rowCount(); ++r) {
                got << QStringLiteral("%1|%2|%3")
                           .arg(rows.text(r, 0), rows.text(r, 1), rows.text(r, 2));
            }
            const QString expected = q(raw[i], rawParams).text(0, 0);
            QVERIFY(!expected.isEmpty());
            QCOMPARE(got.join(QLatin1Char(';')), expected);
            // ... and never from the big tables.
            const QString p = plan(statements[i], params);
            QVERIFY2(!p.contains(QStringLiteral(" on attempt ")), qPrintable(p));
            QVERIFY2(!p.contains(QStringLiteral(" on dead_letter ")), qPrintable(p));
        }
    }

    // Buckets of whole hours follow the operator's wall clock: Berlin's 2020-03-29 is a local
    // day of 23 hours, and a Kolkata hour starts at :30 UTC (read from the minute rollup).
    void overviewBucketsFollowTheOperatorsClock_data()
    {
        QTest::addColumn<qint64>("widthMs");
        QTest::addColumn<QString>("zone");
        QTest::addColumn<bool>("wholeHours");
        QTest::addColumn<QString>("from");
        QTest::addColumn<QString>("to");
        QTest::addColumn<QString>("expected");
        QTest::newRow("Berlin days across spring forward")
            << qint64(24 * 3600000) << "Europe/Berlin" << true << "2020-03-27T23:00:00Z"
            << "2020-03-30T22:00:00Z"
            << "2020-03-28T23:00:00Z transient 2;2020-03-29T22:00:00Z transient 1";
        QTest::newRow("the same days in UTC")
            << qint64(24 * 3600000) << "UTC" << true << "2020-03-28T00:00:00Z"
            << "2020-03-31T00:00:00Z"
            << "2020-03-28T00:00:00Z transient 1;2020-03-29T00:00:00Z transient 2";
        QTest::newRow("Kolkata hours")
            << qint64(3600000) << "Asia/Kolkata" << false << "2020-06-01T09:30:00Z"
            << "2020-06-01T11:30:00Z"
            << "2020-06-01T10:30:00Z transient 1";
    }
    void overviewBucketsFollowTheOperatorsClock()
    {
        QFETCH(qint64, widthMs);
        QFETCH(QString, zone);
        QFETCH(bool, wholeHours);
        QFETCH(QString, from);
        QFETCH(QString, to);
        QFETCH(QString, expected);
        q("DELETE FROM redrive.dead_letter WHERE dead_at < '2021-01-01'");
        q("INSERT INTO redrive.job (queue, kind, payload, state)"
          " SELECT 'clock', 'charge_card', jsonb_build_object('n', g), 'dead'"
          "   FROM generate_series(1, 4) g");
        q("INSERT INTO redrive.dead_letter (job_id, queue, kind, error_class, error_code,"
          "                                 last_error, attempts, dead_at)"
          " SELECT j.id, j.queue, j.kind, 'transient', 'e', 'e', 1, t.at"
          "   FROM (SELECT id, queue, kind, row_number() OVER (ORDER BY id) AS n FROM redrive.job"
          "          WHERE queue = 'clock' AND id NOT IN (SELECT job_id FROM redrive.dead_letter))"
          "        j"
          "   JOIN (VALUES (1, timestamptz '2020-03-28 23:30+00'), (2, '2020-03-29 21:30+00'),"
          "                (3, '2020-03-29 22:30+00'), (4, '2020-06-01 10:45+00')) t (n, at)"
          "     USING (n)");
        QueryParams params;
        params.addBigInt(widthMs).addText(from).addText(to).addText(zone).addBool(wholeHours);
        q("SET search_path = redrive");
        const ResultSet rows = q(statementSql(Statement::OverviewDeadLettersByClass), params);
        q("RESET search_path");
        QStringList got;
        for (int r = 0; r < rows.rowCount(); ++r)
            got << rows.timestamp(r, 0).toUTC().toString(Qt::ISODate) + QLatin1Char(' ')
                    + rows.text(r, 1) + QLatin1Char(' ') + rows.text(r, 2);
        QStringList want = expected.split(QLatin1Char(';'));
        want.sort();
        QCOMPARE(got, want);
    }

    // Random inserts, requeues, resolves, class changes and deletes from four concurrent
    // sessions, each in many small transactions (some rolled back): the rollups equal a full
    // recount afterwards, and a rebuild changes nothing.
    void rollupsEqualAFullRecountAfterConcurrentWrites()
    {
        QCOMPARE(rollups(), recount());
        auto writer = [this](int seed) -> QString {
            auto c = PgConnection::open(m_db->settings());
            if (!c)
                return c.error().summary();
            QRandomGenerator random { quint32(seed) };
            for (int i = 0; i < 60; ++i) {
                const qint64 a = random.bounded(1, 3000);
                const qint64 b = a + random.bounded(1, 40);
                const QByteArray statements[] = {
                    "UPDATE redrive.dead_letter SET status = 'resolved', resolution = "
                    "'fixed_by_hand', resolved_by = 'test', resolved_at = clock_timestamp() - "
                    "random() * interval '3 days' WHERE id BETWEEN $1 AND $2 AND status = 'open'",
                    "UPDATE redrive.dead_letter SET status = 'requeued' WHERE id BETWEEN $1 AND $2"
                    " AND status = 'open'",
                    "UPDATE redrive.dead_letter SET status = 'open', resolution = NULL,"
                    " resolved_by = NULL, resolved_at = NULL WHERE id BETWEEN $1 AND $2"
                    " AND status <> 'open'",
                    "UPDATE redrive.dead_letter SET error_class = 'ambiguous' WHERE id BETWEEN $1"
                    " AND $2",
                    "INSERT INTO redrive.attempt (job_id, attempt_no, started_at, finished_at,"
                    " outcome, error_class) SELECT job_id, 99, clock_timestamp() - random() *"
                    " interval '30 days', NULL, 'failed', 'transient' FROM redrive.dead_letter"
                    " WHERE id BETWEEN $1 AND $2",
                    "DELETE FROM redrive.attempt WHERE attempt_no = 99 AND job_id IN (SELECT"
                    " job_id FROM redrive.dead_letter WHERE id BETWEEN $1 AND $2)",
                    "INSERT INTO redrive.reconciliation_mismatch (run_id, kind, payment_ref, "
                    "status)"
                    " SELECT run_id, kind, payment_ref, status FROM redrive.reconciliation_mismatch"
                    " WHERE id BETWEEN $1 AND $2",
                    "UPDATE redrive.reconciliation_mismatch SET status = CASE status WHEN 'open'"
                    " THEN 'resolved' ELSE 'open' END WHERE id BETWEEN $1 AND $2",
                    "DELETE FROM redrive.reconciliation_mismatch WHERE id BETWEEN $1 AND $2 AND"
                    " id > 1000",
                };
                const bool rollback = random.bounded(5) == 0;
                if (!c->exec("BEGIN"))
                    return QStringLiteral("begin failed");
                for (int n = random.bounded(1, 4); n > 0; --n) {
                    const auto done = c->exec(statements[random.bounded(9)],
                                              QueryParams().addBigInt(a).addBigInt(b));
                    if (!done) {
                        // Concurrent sessions may deadlock on shared rows: the server picks a
                        // victim, which rolls back whole; anything else is a failure.
                        c->exec("ROLLBACK");
                        if (done.error().sqlState() == QLatin1String("40P01"))
                            goto next;
                        return done.error().summary();
                    }
                }
                if (!c->exec(rollback ? "ROLLBACK" : "COMMIT"))
                    return QStringLiteral("commit failed");
            next:;
            }
            return {};
        };
        QList<QFuture<QString>> sessions;
        for (int s = 1; s <= 4; ++s)
            sessions << QtConcurrent::run(writer, s);
        for (QFuture<QString> &session : sessions)
            QCOMPARE(session.result(), QString());
        const QString afterWrites = rollups();
        QCOMPARE(afterWrites, recount());
        q("SELECT redrive.rebuild_read_rollups()");
        QCOMPARE(rollups(), afterWrites);
    }

    // The rollups are the console's word for the overview and the counts: no Redrive login, the
    // worker's included, may change them or rebuild them (tried over TCP with a password).
    void noLoginMayWriteTheRollups_data()
    {
        QTest::addColumn<QStringList>("roles");
        QTest::newRow("oncall") << QStringList { QStringLiteral("redrive_oncall") };
        QTest::newRow("support") << QStringList { QStringLiteral("redrive_support") };
        QTest::newRow("approver") << QStringList { QStringLiteral("redrive_approver") };
        QTest::newRow("auditor") << QStringList { QStringLiteral("redrive_auditor") };
        QTest::newRow("worker") << QStringList { QStringLiteral("redrive_worker") };
        QTest::newRow("no role") << QStringList {};
    }
    void noLoginMayWriteTheRollups()
    {
        QFETCH(QStringList, roles);
        const QString tag = QString::fromLatin1(QTest::currentDataTag())
                                .replace(QLatin1Char(' '), QLatin1Char('_'));
        const QString login
            = m_db->createLogin(QStringLiteral("rollup_") + tag, roles, QStringLiteral("pw"));
        auto c = PgConnection::open(m_db->tcpSettingsAs(login, QStringLiteral("pw")));
        QVERIFY2(c, c ? "" : qPrintable(c.error().summary()));
        const QByteArray attacks[] = {
            "UPDATE redrive.bucket_rollup SET n = n + 1000",
            "INSERT INTO redrive.bucket_rollup VALUES ('dead', 60, now(), '', 5)",
            "DELETE FROM redrive.mismatch_kind_count",
            "INSERT INTO redrive.dead_letter_facet VALUES ('queue', 'fake')",
            "SELECT redrive.rebuild_read_rollups()",
            "SELECT redrive.bucket_rollup_add('{dead}', ARRAY[now()], '{x}', '{5}')",
        };
        for (const QByteArray &sql : attacks) {
            const auto r = c->exec(sql);
            QVERIFY2(!r, sql.constData());
            QCOMPARE(r.error().sqlState(), QStringLiteral("42501"));
        }
        QCOMPARE(rollups(), recount());
    }
};

QTEST_MAIN(TestReadRollups)
#include "tst_read_rollups.moc"
