// SPDX-License-Identifier: GPL-3.0-or-later
// Partitioned attempts (docs/architecture.md#partitions): the console's reads touch only the
// partitions they need, checked with EXPLAIN ANALYZE of the compiled-in statements: a case view
// reads the months of its job's attempts only, a first page and a filter change of the dead
// letter list read no attempt at all.
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
            ANALYZE redrive.attempt;
        )SQL");
        QVERIFY2(made.ok(), qPrintable(made.ok() ? QString() : made.error().summary()));
        auto ids = owner.exec("SELECT d.id FROM redrive.dead_letter d JOIN redrive.job j"
                              "    ON j.id = d.job_id ORDER BY j.entity_id");
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
};

QTEST_GUILESS_MAIN(TestPartitions)
#include "tst_partitions.moc"
