// SPDX-License-Identifier: GPL-3.0-or-later
// Partitioned attempts (docs/architecture.md#partitions): the console's reads touch only the
// partitions they need, checked with EXPLAIN ANALYZE of the compiled-in statements: a case view
// reads the months of its job's attempts only, a first page and a filter change of the dead
// letter list read no attempt at all. The partitioned audit log keeps its guarantees: each
// partition refuses UPDATE, DELETE and TRUNCATE, a login that is not the owner can neither
// truncate, detach nor drop one, and the client verifier reports a forged partition attached by
// the owner and a month detached by a superuser (docs/audit-chain.md, "Partitions").
#include "models/audit_chain_verifier.h"
#include "models/db/query_params.h"
#include "models/db/sql_statement.h"
#include "tests/support/test_database.h"

#include <QRegularExpression>
#include <QSet>
#include <QTest>

using namespace redrive;
using namespace redrive::db;

namespace {

// The attempt partitions a plan reads: every scan "on attempt_..." that ran (pruned subplans
// are either absent or "(never executed)").
QSet<QString> attemptPartitionsRead(PgConnection &conn, const QByteArray &sql,
                                    const QueryParams &params, QString *plan)
{
    auto explained
        = conn.exec("EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF, SUMMARY OFF) " + sql, params);
    if (!explained) {
        *plan = explained.error().summary();
        return { QStringLiteral("<error>") };
    }
    static const QRegularExpression scan(QStringLiteral(R"( on (attempt(_[a-z0-9_]+)?)\b)"));
    QSet<QString> read;
    for (int row = 0; row < explained->rowCount(); ++row) {
        const QString line = explained->text(row, 0);
        plan->append(line + QLatin1Char('\n'));
        const auto m = scan.match(line);
        if (m.hasMatch() && !line.contains(QLatin1String("never executed")))
            read.insert(m.captured(1));
    }
    return read;
}

} // namespace

class TestPartitions : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void consoleReadsPrune()
    {
        test::TestDatabase db(QStringLiteral("partitions"));
        QVERIFY2(db.isValid(), qPrintable(db.error()));
        PgConnection owner = db.connect();
        // Job A failed in February and March 2026, job B in June 2026 and job C in December
        // 2025; each has a dead letter. The months exist (maintain would have made them).
        auto made = owner.execScript(R"SQL(
            SELECT redrive.ensure_month_partition('attempt', 'started_at', m)
              FROM unnest(ARRAY['2025-12-10', '2026-02-10', '2026-03-10', '2026-04-10',
                                '2026-05-10', '2026-06-10']::timestamptz[]) m;
            WITH j AS (INSERT INTO redrive.job (queue, kind, payload, state, entity_id)
                       SELECT 'emails', 'send', '{}', 'dead', 'p' || g
                         FROM generate_series(1, 3) g RETURNING id, queue, kind, entity_id)
            INSERT INTO redrive.dead_letter (job_id, queue, kind, error_class, error_code,
                                             last_error)
            SELECT id, queue, kind, 'transient', 'smtp_421', 'try later ' || entity_id FROM j;
            INSERT INTO redrive.attempt (job_id, attempt_no, started_at, outcome, error_class)
            SELECT j.id, g, t, 'failed', 'transient'
              FROM redrive.job j
              JOIN (VALUES ('p1', 1, timestamptz '2026-02-27 10:00+00'),
                           ('p1', 2, timestamptz '2026-03-02 10:00+00'),
                           ('p2', 1, timestamptz '2026-06-01 00:00+00'),
                           ('p3', 1, timestamptz '2025-12-31 23:59:59+00')) v(e, g, t)
                ON v.e = j.entity_id;
            -- Other jobs' attempts in every month, so the planner sees tables worth an index.
            WITH j AS (INSERT INTO redrive.job (queue, kind, payload, state, entity_id)
                       SELECT 'emails', 'send', '{}', 'succeeded', 'other' || g
                         FROM generate_series(1, 400) g RETURNING id)
            INSERT INTO redrive.attempt (job_id, attempt_no, started_at, outcome, error_class)
            SELECT j.id, g, timestamptz '2025-12-01 00:00+00'
                            + (j.id * 7 + g * 13) % 210 * interval '1 day', 'failed', 'transient'
              FROM j, generate_series(1, 10) g;
            ANALYZE redrive.job;
            ANALYZE redrive.dead_letter;
            ANALYZE redrive.attempt;
        )SQL");
        QVERIFY2(made.ok(), qPrintable(made.ok() ? QString() : made.error().summary()));
        auto ids = owner.exec("SELECT d.id FROM redrive.dead_letter d JOIN redrive.job j"
                              "    ON j.id = d.job_id ORDER BY j.entity_id");
        // (the other jobs have no dead letter)
        QVERIFY(ids.ok());
        QCOMPARE(ids->rowCount(), 3);
        const qint64 deadLetterA = ids->bigInt(0, 0).value_or(0);
        const qint64 deadLetterB = ids->bigInt(1, 0).value_or(0);

        PgConnection conn = test::TestDatabase::connectWith(db.consoleSettings());
        const QSet<QString> monthsOfA { QStringLiteral("attempt_2026_02"),
                                        QStringLiteral("attempt_2026_03") };
        const QSet<QString> monthsOfB { QStringLiteral("attempt_2026_06") };
        struct Case
        {
            Statement statement;
            QueryParams (*params)(qint64);
        };
        const Case cases[] = {
            { Statement::AttemptHistory,
              [](qint64 id) {
                  return QueryParams().addBigInt(id);
              } },
            { Statement::AttemptHistoryCount,
              [](qint64 id) {
                  return QueryParams().addBigInt(id).addBigInt(1000);
              } },
            { Statement::AttemptRounds,
              [](qint64 id) {
                  return QueryParams().addBigInt(id);
              } },
            { Statement::AttemptHistoryPage,
              [](qint64 id) {
                  return QueryParams()
                      .addBigInt(id)
                      .addNull(ParamType::TimestampTz)
                      .addNull(ParamType::Int)
                      .addNull(ParamType::BigInt)
                      .addInt(200);
              } },
        };
        for (const Case &c : cases) {
            QString plan;
            QVERIFY2(
                attemptPartitionsRead(conn, statementSql(c.statement), c.params(deadLetterA), &plan)
                    == monthsOfA,
                qPrintable(statementName(c.statement) + QLatin1Char('\n') + plan));
            plan.clear();
            QVERIFY2(
                attemptPartitionsRead(conn, statementSql(c.statement), c.params(deadLetterB), &plan)
                    == monthsOfB,
                qPrintable(statementName(c.statement) + QLatin1Char('\n') + plan));
        }
        // The case view still shows every attempt: A's two, across the month boundary.
        auto history = conn.exec(statementSql(Statement::AttemptHistory),
                                 QueryParams().addBigInt(deadLetterA));
        QVERIFY(history.ok());
        QCOMPARE(history->rowCount(), 2);
        QCOMPARE(history->text(0, QStringLiteral("started_at")).left(10),
                 QStringLiteral("2026-02-27"));
        QCOMPARE(history->text(1, QStringLiteral("started_at")).left(10),
                 QStringLiteral("2026-03-02"));

        // The list's first page and a filter change (search text) read no attempt.
        for (const auto &search : { QString(), QStringLiteral("%p2%") }) {
            QueryParams params;
            for (int i = 0; i < 4; ++i)
                params.addNull(ParamType::TextArray);
            params.addNull(ParamType::TimestampTz).addNull(ParamType::TimestampTz);
            if (search.isEmpty())
                params.addNull(ParamType::Text);
            else
                params.addText(search);
            params.addNull(ParamType::Text)
                .addNull(ParamType::TimestampTz)
                .addNull(ParamType::BigInt)
                .addInt(100);
            QString plan;
            QVERIFY2(attemptPartitionsRead(conn, statementSql(Statement::DeadLetterPageNewest),
                                           params, &plan)
                         .isEmpty(),
                     qPrintable(plan));
            QVERIFY2(plan.contains(QLatin1String("dead_letter")), qPrintable(plan));
        }
    }

    // `redrive maintain` with attempts at the ends of timestamptz's range waiting in the default
    // partition (docs/domain.md "Times at the ends of the range"): it failed with "timestamp out
    // of range" on December 294276 (the month would end after the last instant), and a year BC
    // would have taken the name of the same year AD. Now 1970 and 2300 get their months, the
    // others stay in the default partition, and a second run creates nothing.
    void maintainLeavesTheEndsOfTimeInTheDefault()
    {
        test::TestDatabase db(QStringLiteral("partitions_ends"));
        QVERIFY2(db.isValid(), qPrintable(db.error()));
        PgConnection owner = db.connect();
        auto made = owner.execScript(R"SQL(
            INSERT INTO redrive.job (id, queue, kind, payload, state)
                 OVERRIDING SYSTEM VALUE VALUES (9001, 'ends', 'ends_of_time', '{}', 'dead');
            INSERT INTO redrive.attempt (job_id, attempt_no, started_at, outcome)
            SELECT 9001, n, s, 'succeeded'
              FROM (VALUES (1, timestamptz '-infinity'), (2, '4713-01-01 00:00:00+00 BC'),
                           (3, '1970-01-01 00:00:00+00'), (4, '2300-01-01 00:00:00+00'),
                           (5, '294276-12-31 23:00:00+00'), (6, 'infinity')) v (n, s);
        )SQL");
        QVERIFY2(made.ok(), made.ok() ? "" : qPrintable(made.error().summary()));
        auto created = owner.exec(
            "SELECT string_agg(p, ',' ORDER BY p) FROM redrive.maintain_partitions(0) p"
            " WHERE p IN ('attempt_1970_01', 'attempt_2300_01', 'attempt_4713_01')"
            "    OR p LIKE 'attempt\\_2942%'");
        QVERIFY2(created, created ? "" : qPrintable(created.error().summary()));
        QCOMPARE(created->text(0, 0), QStringLiteral("attempt_1970_01,attempt_2300_01"));
        auto where
            = owner.exec("SELECT string_agg(format('%s:%s', attempt_no, tableoid::regclass),"
                         " ',' ORDER BY attempt_no) FROM redrive.attempt WHERE job_id = 9001");
        QVERIFY(where);
        QCOMPARE(where->text(0, 0),
                 QStringLiteral("1:redrive.attempt_default,2:redrive.attempt_default,"
                                "3:redrive.attempt_1970_01,4:redrive.attempt_2300_01,"
                                "5:redrive.attempt_default,6:redrive.attempt_default"));
        auto again = owner.exec("SELECT count(*) FROM redrive.maintain_partitions(0)");
        QVERIFY2(again, again ? "" : qPrintable(again.error().summary()));
        QCOMPARE(again->text(0, 0), QStringLiteral("0"));
    }

    void auditPartitionsAreGuardedAndVerified()
    {
        test::TestDatabase db(QStringLiteral("audit_partitions"));
        QVERIFY2(db.isValid(), qPrintable(db.error()));
        PgConnection owner = db.connect();
        // Six entries chained by the owner as the trigger would, two in each of January,
        // February and March 2026 (the trigger itself only writes the server's time).
        auto chained = owner.execScript(R"SQL(
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
        )SQL");
        QVERIFY2(chained.ok(), qPrintable(chained.ok() ? QString() : chained.error().summary()));
        auto ids = owner.exec("SELECT string_agg(e.id || ':' || e.tableoid::regclass::text, ' '"
                              "                  ORDER BY e.id) FROM redrive.audit_log e");
        QVERIFY(ids.ok());
        QCOMPARE(ids->text(0, 0),
                 QStringLiteral("1:redrive.audit_log_2026_01 2:redrive.audit_log_2026_01 "
                                "3:redrive.audit_log_2026_02 4:redrive.audit_log_2026_02 "
                                "5:redrive.audit_log_2026_03 6:redrive.audit_log_2026_03"));
        AuditChainVerifier verifier;
        auto clean = verifier.verify(owner);
        QVERIFY(clean);
        QVERIFY(clean->holds());
        QCOMPARE(clean->checked, qint64(6));
        QCOMPARE(clean->headId, qint64(6));

        // Each partition refuses changes, even to the owner, as the table does.
        for (const char *change :
             { "UPDATE redrive.audit_log_2026_02 SET reason = 'x'",
               "DELETE FROM redrive.audit_log_2026_02", "TRUNCATE redrive.audit_log_2026_02",
               "TRUNCATE redrive.audit_log_default" }) {
            auto refused = owner.execScript(change);
            QVERIFY2(!refused.ok(), change);
            QVERIFY2(refused.error().summary().contains(QLatin1String("append-only")), change);
        }
        // A login with a Redrive role (over TCP, with a password) cannot truncate, detach or
        // drop a month: 42501, permission denied / must be owner.
        const QString password = QStringLiteral("pw-partitions");
        const QString mallory = db.createLogin(QStringLiteral("mallory"),
                                               { QStringLiteral("redrive_oncall") }, password);
        PgConnection oncall
            = test::TestDatabase::connectWith(db.consoleTcpSettingsAs(mallory, password));
        for (const char *attack :
             { "TRUNCATE redrive.audit_log_2026_02",
               "ALTER TABLE redrive.audit_log DETACH PARTITION redrive.audit_log_2026_02",
               "DROP TABLE redrive.audit_log_2026_02", "SELECT redrive.maintain_partitions(3)" }) {
            auto refused = oncall.execScript(attack);
            QVERIFY2(!refused.ok(), attack);
            QCOMPARE(refused.error().sqlState(), QStringLiteral("42501"));
        }
        auto still = verifier.verify(owner);
        QVERIFY(still && still->holds());
        QCOMPARE(still->checked, qint64(6));

        // The owner attaches a partition that is not Redrive's: under another name, with a bound
        // that is not its month, without the TRUNCATE refusal. Each is reported first.
        const QList<QByteArray> forged {
            "CREATE TABLE redrive.audit_log_forged (LIKE redrive.audit_log);"
            " ALTER TABLE redrive.audit_log ATTACH PARTITION redrive.audit_log_forged"
            " FOR VALUES FROM ('2030-01-01 00:00+00') TO ('2030-02-01 00:00+00');"
            " CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON redrive.audit_log_forged"
            " FOR EACH STATEMENT EXECUTE FUNCTION redrive.audit_log_refuse_change()",
            "CREATE TABLE redrive.audit_log_2030_01 PARTITION OF redrive.audit_log"
            " FOR VALUES FROM ('2030-01-01 00:00+00') TO ('2030-03-01 00:00+00');"
            " CREATE TRIGGER audit_log_no_truncate BEFORE TRUNCATE ON redrive.audit_log_2030_01"
            " FOR EACH STATEMENT EXECUTE FUNCTION redrive.audit_log_refuse_change()",
            "CREATE TABLE redrive.audit_log_2030_01 PARTITION OF redrive.audit_log"
            " FOR VALUES FROM ('2030-01-01 00:00+00') TO ('2030-02-01 00:00+00')",
        };
        const QList<QByteArray> undo {
            "ALTER TABLE redrive.audit_log DETACH PARTITION redrive.audit_log_forged;"
            " DROP TABLE redrive.audit_log_forged",
            "ALTER TABLE redrive.audit_log DETACH PARTITION redrive.audit_log_2030_01;"
            " DROP TABLE redrive.audit_log_2030_01",
            "ALTER TABLE redrive.audit_log DETACH PARTITION redrive.audit_log_2030_01;"
            " DROP TABLE redrive.audit_log_2030_01",
        };
        for (int i = 0; i < forged.size(); ++i) {
            auto attached = owner.execScript(forged[i]);
            QVERIFY2(attached.ok(),
                     attached.ok() ? forged[i].constData()
                                   : qPrintable(attached.error().summary()));
            auto r = verifier.verify(owner);
            QVERIFY(r);
            QVERIFY2(!r->holds(), forged[i].constData());
            QCOMPARE(r->first().kind, AuditChainProblem::Kind::TableReplaced);
            QVERIFY(owner.execScript(undo[i]).ok());
        }
        // ... while Redrive's own month, made by maintain, passes.
        QVERIFY(owner
                    .execScript("SELECT redrive.ensure_month_partition('audit_log', 'at',"
                                " '2030-01-10 00:00+00')")
                    .ok());
        auto withMonth = verifier.verify(owner);
        QVERIFY(withMonth && withMonth->holds());
        QCOMPARE(withMonth->checked, qint64(6));

        // A superuser detaches February: entries 3 and 4 are gone from the chain.
        QVERIFY(owner
                    .execScript("ALTER TABLE redrive.audit_log DETACH PARTITION"
                                " redrive.audit_log_2026_02")
                    .ok());
        auto gap = verifier.verify(owner);
        QVERIFY(gap);
        QVERIFY(!gap->holds());
        QCOMPARE(gap->first().kind, AuditChainProblem::Kind::MissingBetween);
        QCOMPARE(gap->first().id, qint64(5));
        QCOMPARE(gap->first().previousId, qint64(2));
        QCOMPARE(gap->checked, qint64(4));
        // ... and then January: the chain starts cut at entry 5.
        QVERIFY(owner
                    .execScript("ALTER TABLE redrive.audit_log DETACH PARTITION"
                                " redrive.audit_log_2026_01")
                    .ok());
        auto cut = verifier.verify(owner);
        QVERIFY(cut);
        QVERIFY(!cut->holds());
        QCOMPARE(cut->first().kind, AuditChainProblem::Kind::StartCut);
        QCOMPARE(cut->first().id, qint64(5));
        QCOMPARE(cut->checked, qint64(2));
    }
};

QTEST_GUILESS_MAIN(TestPartitions)
#include "tst_partitions.moc"
