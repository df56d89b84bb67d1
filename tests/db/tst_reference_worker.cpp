// SPDX-License-Identifier: GPL-3.0-or-later
// The reference worker against a real PostgreSQL and its simulated world.
// Each case names the observable result it checks.
#include "models/db/schema_migrator.h"
#include "models/db/sql_statement.h"
#include "models/worker/job_runner.h"
#include "tests/support/test_database.h"

#include <QElapsedTimer>
#include <QProcess>
#include <QTest>
#include <QTimeZone>
#include <thread>

using namespace redrive;
using namespace redrive::db;
using namespace redrive::worker;

namespace {

// A freshly migrated database with the simulated world installed.
struct World
{
    explicit World(const QString &tag)
        : db(tag)
    {
        if (!db.isValid())
            qFatal("%s", qPrintable(db.error()));
        conn = db.connect();
        auto sim = SchemaMigrator(conn, MigrationSet::simulatedWorld()).migrate();
        if (!sim)
            qFatal("sim migration: %s", qPrintable(sim.error().summary()));
    }

    ResultSet q(const QByteArray &sql, const QueryParams &params = {})
    {
        auto r = conn.exec(sql, params);
        if (!r)
            qFatal("%s: %s", sql.constData(), qPrintable(r.error().summary()));
        return r.value();
    }
    qint64 count(const QByteArray &sql, const QueryParams &params = {})
    {
        return q(sql, params).bigInt(0, 0).value_or(-1);
    }

    // An order, its payment and the charge job for it, due at `at`. Returns the job id.
    qint64 payment(const QString &id, qint64 amount, const QDateTime &at)
    {
        q("INSERT INTO sim.ledger_order VALUES ('ord_' || $1, 'Test Customer', 't@example.com',"
          " $2, 'USD', coalesce($3, clock_timestamp()))",
          QueryParams().addText(id).addBigInt(amount).addTimestamp(at));
        q("INSERT INTO sim.ledger_payment (id, order_id, amount_minor, currency, idempotency_key,"
          " created_at, updated_at) VALUES ($1, 'ord_' || $1, $2, 'USD', 'charge:' || $1,"
          " coalesce($3, clock_timestamp()), coalesce($3, clock_timestamp()))",
          QueryParams().addText(id).addBigInt(amount).addTimestamp(at));
        return q("SELECT redrive.enqueue_job('payments', 'charge_card',"
                 " jsonb_build_object('payment_id', $1::text, 'order_id', 'ord_' || $1,"
                 "                    'amount_minor', $2::bigint, 'currency', 'USD'),"
                 " 'charge:' || $1, $1, NULL, $3, 8, $3)",
                 QueryParams().addText(id).addBigInt(amount).addTimestamp(at))
            .bigInt(0, 0)
            .value_or(0);
    }

    qint64 webhook(const QString &eventId, const QString &paymentId, const QDateTime &at)
    {
        return q("SELECT redrive.enqueue_job('webhooks', 'process_webhook',"
                 " jsonb_build_object('event_id', $1::text, 'type', 'payment.succeeded',"
                 "                    'payment_id', $2::text, 'seq', 2),"
                 " $1, $2, 2, $3, 8, $3)",
                 QueryParams().addText(eventId).addText(paymentId).addTimestamp(at))
            .bigInt(0, 0)
            .value_or(0);
    }

    test::TestDatabase db;
    PgConnection conn;
};

QDateTime t0()
{
    return QDateTime(QDate(2026, 11, 1), QTime(12, 0), QTimeZone::utc());
}

WorkerConfig config(const QString &id)
{
    WorkerConfig c = WorkerConfig::referenceDefaults(id);
    c.leaseMs = 30000;
    c.keyLeaseMs = 30000;
    return c;
}

FaultInjector quiet(quint64 seed = 1)
{
    FaultInjector f(seed);
    for (const char *d : { "provider", "mail", "webhook", "ledger" }) {
        FaultRates r;
        r.latencyMinMs = r.latencyMaxMs = 100;
        f.setRates(QString::fromLatin1(d), r);
    }
    return f;
}

// Runs everything due until `until` in virtual time; reclaims expired leases every minute.
void drain(JobRunner &runner, WorkerClock &clock, const QDateTime &until)
{
    QDateTime lastReclaim = clock.now();
    while (true) {
        auto next = runner.nextDueAt();
        QVERIFY(next.ok());
        if (!next->has_value() || **next > until)
            return;
        clock.advanceTo(**next);
        if (lastReclaim.secsTo(clock.now()) >= 60) {
            QVERIFY(runner.reclaimExpiredLeases().ok());
            lastReclaim = clock.now();
        }
        auto batch = runner.runDueBatch();
        QVERIFY2(batch.ok(), batch.ok() ? "" : qPrintable(batch.error().summary()));
    }
}

} // namespace

class TestReferenceWorker : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void timeoutAfterSideEffectDoesNotChargeTwice()
    {
        World w(QStringLiteral("timeout_after"));
        const qint64 job = w.payment(QStringLiteral("pay_1"), 2500, t0());
        FaultInjector faults = quiet();
        faults.force(QStringLiteral("provider"), job, 1, FaultKind::TimeoutAfterEffect);
        WorkerClock clock = WorkerClock::simulated(t0());
        JobRunner runner(w.conn, config(QStringLiteral("w1")), &faults, &clock);
        drain(runner, clock, t0().addSecs(3600));

        QCOMPARE(w.count("SELECT count(*) FROM sim.provider_charge WHERE payment_ref = 'pay_1'"),
                 1);
        QCOMPARE(w.q("SELECT string_agg(outcome || ':' || coalesce(error_class, '-'), ','"
                     " ORDER BY id) FROM redrive.attempt WHERE job_id = $1",
                     QueryParams().addBigInt(job))
                     .text(0, 0),
                 QStringLiteral("failed:ambiguous,succeeded:-"));
        QCOMPARE(w.q("SELECT status FROM sim.ledger_payment WHERE id = 'pay_1'").text(0, 0),
                 QStringLiteral("succeeded"));
        QCOMPARE(
            w.q("SELECT state FROM redrive.idempotency_key WHERE key = 'charge:pay_1'").text(0, 0),
            QStringLiteral("done"));
    }

    void timeoutAfterSideEffectWithoutProviderKeysShowsAsDuplicate()
    {
        World w(QStringLiteral("timeout_nokeys"));
        w.q("UPDATE sim.settings SET provider_honours_keys = false");
        const qint64 job = w.payment(QStringLiteral("pay_2"), 4200, t0());
        w.payment(QStringLiteral("pay_3"), 1800, t0()); // an innocent bystander
        FaultInjector faults = quiet();
        faults.force(QStringLiteral("provider"), job, 1, FaultKind::TimeoutAfterEffect);
        WorkerClock clock = WorkerClock::simulated(t0());
        JobRunner runner(w.conn, config(QStringLiteral("w1")), &faults, &clock);
        drain(runner, clock, t0().addSecs(3600));

        QCOMPARE(w.count("SELECT count(*) FROM sim.provider_charge WHERE payment_ref = 'pay_2'"),
                 2);
        w.q("SELECT sim.run_reconciliation($1)", QueryParams().addTimestamp(t0().addSecs(3600)));
        const ResultSet m = w.q("SELECT kind, payment_ref FROM redrive.reconciliation_mismatch");
        QCOMPARE(m.rowCount(), 1);
        QCOMPARE(m.text(0, 0), QStringLiteral("duplicate_external"));
        QCOMPARE(m.text(0, 1), QStringLiteral("pay_2"));
    }

    void crashBetweenEffectAndRecordIsMissingInternal()
    {
        World w(QStringLiteral("crash"));
        const qint64 job = w.payment(QStringLiteral("pay_4"), 9900, t0());
        w.payment(QStringLiteral("pay_5"), 1200, t0());
        FaultInjector faults = quiet();
        faults.force(QStringLiteral("provider"), job, 1, FaultKind::CrashAfterEffect);
        WorkerClock clock = WorkerClock::simulated(t0());
        JobRunner runner(w.conn, config(QStringLiteral("w1")), &faults, &clock);
        auto batch = runner.runDueBatch();
        QVERIFY(batch.ok());
        QCOMPARE(batch->size(), 2);

        // The charge exists at the provider, nothing is recorded on our side.
        QCOMPARE(w.q("SELECT state FROM redrive.job WHERE id = $1", QueryParams().addBigInt(job))
                     .text(0, 0),
                 QStringLiteral("running"));
        w.q("SELECT sim.run_reconciliation($1)", QueryParams().addTimestamp(clock.now()));
        const ResultSet m = w.q("SELECT kind, payment_ref FROM redrive.reconciliation_mismatch");
        QCOMPARE(m.rowCount(), 1);
        QCOMPARE(m.text(0, 0), QStringLiteral("missing_internal"));
        QCOMPARE(m.text(0, 1), QStringLiteral("pay_4"));

        // After the lease expires the job is reclaimed and retried; the provider replays the
        // charge for the same key, so there is still exactly one.
        drain(runner, clock, t0().addSecs(3600));
        clock.advanceTo(t0().addSecs(3600));
        QVERIFY(runner.reclaimExpiredLeases().ok());
        drain(runner, clock, t0().addSecs(7200));
        QCOMPARE(w.count("SELECT count(*) FROM sim.provider_charge WHERE payment_ref = 'pay_4'"),
                 1);
        QCOMPARE(w.q("SELECT string_agg(outcome, ',' ORDER BY id) FROM redrive.attempt"
                     " WHERE job_id = $1",
                     QueryParams().addBigInt(job))
                     .text(0, 0),
                 QStringLiteral("abandoned,succeeded"));
        QCOMPARE(w.q("SELECT status FROM sim.ledger_payment WHERE id = 'pay_4'").text(0, 0),
                 QStringLiteral("succeeded"));
    }

    void duplicateWebhookDeliveryHasOneEffect()
    {
        World w(QStringLiteral("webhook_dup"));
        w.payment(QStringLiteral("pay_6"), 3000, t0().addSecs(-600));
        w.q("UPDATE redrive.job SET state = 'succeeded'"); // not under test here
        const qint64 a = w.webhook(QStringLiteral("evt_1"), QStringLiteral("pay_6"), t0());
        const qint64 b
            = w.webhook(QStringLiteral("evt_1"), QStringLiteral("pay_6"), t0().addSecs(5));
        FaultInjector faults = quiet();
        WorkerClock clock = WorkerClock::simulated(t0());
        JobRunner runner(w.conn, config(QStringLiteral("w1")), &faults, &clock);
        drain(runner, clock, t0().addSecs(600));
        QCOMPARE(w.count("SELECT count(*) FROM sim.webhook_effect WHERE event_id = 'evt_1'"), 1);
        QCOMPARE(w.count("SELECT count(*) FROM redrive.job WHERE id IN ($1, $2)"
                         " AND state = 'succeeded'",
                         QueryParams().addBigInt(a).addBigInt(b)),
                 2);
    }

    void concurrentDeliveriesWithOneKeyGiveOneEffectAndAConflict()
    {
        World w(QStringLiteral("webhook_race"));
        w.payment(QStringLiteral("pay_7"), 3000, t0().addSecs(-600));
        w.q("UPDATE redrive.job SET state = 'succeeded'");
        w.webhook(QStringLiteral("evt_2"), QStringLiteral("pay_7"), QDateTime());
        w.webhook(QStringLiteral("evt_2"), QStringLiteral("pay_7"), QDateTime());
        w.q("UPDATE redrive.job SET run_at = clock_timestamp() - interval '1 second'"
            " WHERE kind = 'process_webhook'");

        // Two workers, real time, a slow handler: both claim at once, only one holds the key.
        PgConnection c1 = w.db.connect();
        PgConnection c2 = w.db.connect();
        FaultInjector slow(1);
        FaultRates r;
        r.latencyMinMs = r.latencyMaxMs = 4000; // the webhook handler takes a quarter: 1 s
        slow.setRates(QStringLiteral("webhook"), r);
        WorkerClock k1 = WorkerClock::real();
        WorkerClock k2 = WorkerClock::real();
        WorkerConfig cfg1 = config(QStringLiteral("w1"));
        WorkerConfig cfg2 = config(QStringLiteral("w2"));
        cfg1.batchSize = cfg2.batchSize = 1;
        JobRunner r1(c1, cfg1, &slow, &k1);
        JobRunner r2(c2, cfg2, &slow, &k2);
        std::optional<DbExpected<QList<AttemptReport>>> out1, out2;
        std::thread t1([&] { out1.emplace(r1.runDueBatch()); });
        std::thread t2([&] { out2.emplace(r2.runDueBatch()); });
        t1.join();
        t2.join();
        QVERIFY(out1->ok() && out2->ok());
        QCOMPARE((*out1)->size() + (*out2)->size(), 2);
        QStringList outcomes { (*out1)->first().outcome, (*out2)->first().outcome };
        outcomes.sort();
        QCOMPARE(outcomes, (QStringList { QStringLiteral("failed"), QStringLiteral("succeeded") }));
        QCOMPARE(w.count("SELECT count(*) FROM redrive.attempt WHERE outcome = 'conflict'"
                         " AND error_code = 'idempotency_conflict'"),
                 1);
        QCOMPARE(w.count("SELECT count(*) FROM sim.webhook_effect WHERE event_id = 'evt_2'"), 1);
    }

    void twoWorkersRacingRunEachJobOnce()
    {
        World w(QStringLiteral("race"));
        for (int i = 0; i < 40; ++i)
            w.payment(QStringLiteral("pay_r%1").arg(i), 1000 + i, QDateTime());
        w.q("UPDATE redrive.job SET run_at = clock_timestamp() - interval '1 second'");
        PgConnection c1 = w.db.connect();
        PgConnection c2 = w.db.connect();
        FaultInjector f1(1), f2(1);
        for (FaultInjector *f : { &f1, &f2 }) {
            FaultRates r;
            r.latencyMinMs = r.latencyMaxMs = 0;
            f->setRates(QStringLiteral("provider"), r);
        }
        WorkerClock k1 = WorkerClock::real(), k2 = WorkerClock::real();
        WorkerConfig cfg1 = config(QStringLiteral("w1")), cfg2 = config(QStringLiteral("w2"));
        cfg1.batchSize = cfg2.batchSize = 3;
        cfg1.queues = cfg2.queues = { QStringLiteral("payments") };
        JobRunner r1(c1, cfg1, &f1, &k1);
        JobRunner r2(c2, cfg2, &f2, &k2);
        auto loop = [](JobRunner &r, int *ran) {
            for (int idle = 0; idle < 3;) {
                auto b = r.runDueBatch();
                if (!b.ok())
                    return;
                *ran += int(b->size());
                idle = b->isEmpty() ? idle + 1 : 0;
            }
        };
        int ran1 = 0, ran2 = 0;
        std::thread t1(loop, std::ref(r1), &ran1);
        std::thread t2(loop, std::ref(r2), &ran2);
        t1.join();
        t2.join();
        QCOMPARE(ran1 + ran2, 40);
        QVERIFY2(ran1 > 0 && ran2 > 0, "both workers took part");
        QCOMPARE(w.count("SELECT count(*) FROM redrive.attempt"), 40);
        QCOMPARE(w.count("SELECT max(n) FROM (SELECT count(*) n FROM redrive.attempt"
                         " GROUP BY job_id) x"),
                 1);
        QCOMPARE(w.count("SELECT count(*) FROM sim.provider_charge"), 40);
        QCOMPARE(w.count("SELECT count(DISTINCT worker_id) FROM redrive.attempt"), 2);
    }

    void killedWorkerLeavesAStuckJobThatIsRetriedOnce()
    {
        World w(QStringLiteral("killed"));
        const qint64 job = w.payment(QStringLiteral("pay_k"), 5000, QDateTime());
        w.q("UPDATE redrive.job SET run_at = clock_timestamp() - interval '1 second'");

        QProcess worker;
        worker.setProcessChannelMode(QProcess::MergedChannels);
        worker.start(
            QStringLiteral(REDRIVE_WORKER_EXE),
            { QStringLiteral("run"), QStringLiteral("--conninfo"), w.db.settings().connInfo,
              QStringLiteral("--lease-ms"), QStringLiteral("1500"), QStringLiteral("--latency-ms"),
              QStringLiteral("20000"), QStringLiteral("--worker-id"), QStringLiteral("doomed") });
        QVERIFY(worker.waitForStarted(10000));
        // Wait until it is inside the attempt (the charge went out, the reply is slow).
        QTRY_VERIFY_WITH_TIMEOUT(
            w.count("SELECT count(*) FROM sim.provider_charge WHERE payment_ref = 'pay_k'") == 1,
            15000);
        QTest::qWait(800); // at least one heartbeat renewed the lease
        worker.kill(); // SIGKILL: no chance to clean up
        QVERIFY(worker.waitForFinished(5000));

        // Stuck: still running, the lease not yet expired, so nobody may take it.
        const ResultSet stuck = w.q("SELECT state, locked_by, locked_until > clock_timestamp()"
                                    " FROM redrive.job WHERE id = $1",
                                    QueryParams().addBigInt(job));
        QCOMPARE(stuck.text(0, 0), QStringLiteral("running"));
        QCOMPARE(stuck.text(0, 1), QStringLiteral("doomed"));
        QCOMPARE(stuck.boolean(0, 2), std::optional<bool>(true));
        FaultInjector faults = quiet();
        WorkerClock clock = WorkerClock::real();
        JobRunner rescuer(w.conn, config(QStringLiteral("rescuer")), &faults, &clock);
        QCOMPARE(rescuer.reclaimExpiredLeases().value(), 0);

        // Once the lease expired: reclaimed, retried exactly once, charged exactly once. The
        // worker's clock reaches the server in whole milliseconds: wait until the lease is
        // past by more than one, or a "now" cut to the millisecond can still be before it.
        QTRY_VERIFY_WITH_TIMEOUT(
            w.count("SELECT count(*) FROM redrive.job WHERE id = $1 AND locked_until <"
                    " clock_timestamp() - interval '10 milliseconds'",
                    QueryParams().addBigInt(job))
                == 1,
            10000);
        QCOMPARE(rescuer.reclaimExpiredLeases().value(), 1);
        auto batch = rescuer.runDueBatch();
        QVERIFY(batch.ok());
        QCOMPARE(batch->size(), 1);
        QCOMPARE(batch->first().outcome, QStringLiteral("succeeded"));
        QCOMPARE(w.q("SELECT string_agg(outcome || '@' || worker_id, ',' ORDER BY id)"
                     " FROM redrive.attempt WHERE job_id = $1",
                     QueryParams().addBigInt(job))
                     .text(0, 0),
                 QStringLiteral("abandoned@doomed,succeeded@rescuer"));
        QCOMPARE(w.count("SELECT count(*) FROM sim.provider_charge WHERE payment_ref = 'pay_k'"),
                 1);
    }

    void partialBatchFailureKeepsTheRestCommitted()
    {
        World w(QStringLiteral("batch"));
        w.q("INSERT INTO sim.ledger_order VALUES ('ord_b', 'B', 'b@example.com', 100, 'USD', $1)",
            QueryParams().addTimestamp(t0()));
        const qint64 job
            = w.q("SELECT redrive.enqueue_job('ledger', 'sync_ledger', jsonb_build_object("
                  " 'batch_id', 'batch_1', 'items', (SELECT jsonb_agg(jsonb_build_object("
                  "   'payment_id', 'pay_b' || i)) FROM generate_series(0, 9) i)),"
                  " 'sync:batch_1', NULL, NULL, $1, 2, $1)",
                  QueryParams().addTimestamp(t0()))
                  .bigInt(0, 0)
                  .value_or(0);
        FaultInjector faults = quiet();
        for (int attempt = 1; attempt <= 2; ++attempt) {
            faults.force(QStringLiteral("ledger"), job, attempt, FaultKind::ServerError, 3);
            faults.force(QStringLiteral("ledger"), job, attempt, FaultKind::ServerError, 7);
        }
        WorkerClock clock = WorkerClock::simulated(t0());
        JobRunner runner(w.conn, config(QStringLiteral("w1")), &faults, &clock);
        auto first = runner.runDueBatch();
        QVERIFY(first.ok());
        QCOMPARE(first->first().next, QStringLiteral("retry"));
        QCOMPARE(w.q("SELECT string_agg(item_no::text, ',' ORDER BY item_no)"
                     " FROM sim.ledger_sync_item")
                     .text(0, 0),
                 QStringLiteral("0,1,2,4,5,6,8,9"));
        drain(runner, clock, t0().addSecs(3600));
        // Out of attempts (2 for this job): dead-lettered with the failed items named; the
        // eight good items stayed committed exactly once.
        const ResultSet dl = w.q("SELECT error_code, last_error, attempts FROM"
                                 " redrive.dead_letter WHERE job_id = $1",
                                 QueryParams().addBigInt(job));
        QCOMPARE(dl.rowCount(), 1);
        QCOMPARE(dl.text(0, 0), QStringLiteral("partial_batch"));
        QVERIFY2(dl.text(0, 1).contains(QStringLiteral("(items 3, 7)")), qPrintable(dl.text(0, 1)));
        QCOMPARE(dl.integer(0, 2), std::optional<int>(2));
        QCOMPARE(w.count("SELECT count(*) FROM sim.ledger_sync_item"), 8);
    }

    void retryStormStaysWithinTheBudget_data()
    {
        QTest::addColumn<bool>("budget");
        QTest::newRow("budget on") << true;
        QTest::newRow("budget off") << false;
    }
    void retryStormStaysWithinTheBudget()
    {
        QFETCH(bool, budget);
        World w(QStringLiteral("storm"));
        // 300 charges over 5 minutes; the provider is down for the first 10.
        for (int i = 0; i < 300; ++i)
            w.payment(QStringLiteral("pay_s%1").arg(i), 1000, t0().addMSecs(i * 1000));
        FaultInjector faults = quiet();
        w.q("UPDATE redrive.job SET max_attempts = 20");
        faults.addOutage(QStringLiteral("provider"), t0(), t0().addSecs(600));
        WorkerClock clock = WorkerClock::simulated(t0());
        WorkerConfig cfg = config(QStringLiteral("w1"));
        cfg.retryBudget = budget;
        cfg.policies.insert(QStringLiteral("charge_card"),
                            RetryPolicy { 1000, 60000, 20, 7200000, true });
        JobRunner runner(w.conn, cfg, &faults, &clock);
        drain(runner, clock, t0().addSecs(7200));

        // Retries started per 10-second window against what the budget allows there:
        // 1 per second plus 10 % of the first attempts in the window.
        const ResultSet peak = w.q(R"sql(
            WITH a AS (SELECT started_at, attempt_no > 1 AS retry FROM redrive.attempt),
                 w AS (SELECT x.started_at AS at,
                              (SELECT count(*) FROM a WHERE a.retry AND a.started_at > x.started_at - interval '10 s' AND a.started_at <= x.started_at) AS retries,
                              (SELECT count(*) FROM a WHERE NOT a.retry AND a.started_at > x.started_at - interval '10 s' AND a.started_at <= x.started_at) AS firsts
                         FROM a x)
            SELECT max(retries), max(retries - (10 + 0.1 * firsts)),
                   (SELECT max(n) FROM (SELECT count(*) n FROM a WHERE retry GROUP BY date_trunc('second', started_at)) s)
              FROM w)sql");
        const qint64 peakPerWindow = peak.bigInt(0, 0).value_or(0);
        const double overBudget = peak.text(0, 1).toDouble();
        const qint64 peakPerSecond = peak.bigInt(0, 2).value_or(0);
        qInfo("retry storm, budget %s: peak %lld retries per 10 s window, %lld per second,"
              " worst excess over budget %.1f",
              budget ? "on" : "off", peakPerWindow, peakPerSecond, overBudget);
        if (budget) {
            // The budget delays retries, it never loses work.
            QCOMPARE(w.count("SELECT count(*) FROM redrive.job WHERE kind = 'charge_card'"
                             " AND state = 'succeeded'"),
                     300);
            QVERIFY2(overBudget <= 0.0, qPrintable(QString::number(overBudget)));
        } else {
            QVERIFY2(overBudget > 0.0, "without the budget the storm exceeds it");
        }
    }

    void backoffDelaysFallInsideFullJitterBoundsAndTheDeadlineHolds()
    {
        World w(QStringLiteral("backoff"));
        const qint64 job = w.payment(QStringLiteral("pay_b"), 1000, t0());
        FaultInjector faults = quiet();
        for (int attempt = 1; attempt <= 30; ++attempt)
            faults.force(QStringLiteral("provider"), job, attempt, FaultKind::ServerError);
        WorkerClock clock = WorkerClock::simulated(t0());
        WorkerConfig cfg = config(QStringLiteral("w1"));
        cfg.retryBudget = false;
        cfg.policies.insert(QStringLiteral("charge_card"),
                            RetryPolicy { 1000, 300000, 8, 3600000, true });
        JobRunner runner(w.conn, cfg, &faults, &clock);
        drain(runner, clock, t0().addSecs(7200));

        const ResultSet a = w.q("SELECT attempt_no, backoff_ms, started_at, finished_at,"
                                "  lead(started_at) OVER (ORDER BY id) FROM redrive.attempt"
                                " WHERE job_id = $1 ORDER BY id",
                                QueryParams().addBigInt(job));
        QCOMPARE(a.rowCount(), 8);
        for (int i = 0; i < a.rowCount(); ++i) {
            const int n = a.integer(i, 0).value_or(0);
            QCOMPARE(n, i + 1);
            if (i == a.rowCount() - 1) {
                QVERIFY(a.isNull(i, 1)); // the last attempt has no next delay
                break;
            }
            const qint64 backoff = a.bigInt(i, 1).value_or(-1);
            QVERIFY(backoff >= 0);
            QVERIFY2(backoff <= backoffCeilingMs(n, 1000, 300000),
                     qPrintable(QStringLiteral("attempt %1: %2 ms").arg(n).arg(backoff)));
            // The gap in the history is exactly the delay chosen.
            QCOMPARE(a.timestamp(i, 3).msecsTo(a.timestamp(i, 4)), backoff);
        }
        QCOMPARE(w.q("SELECT reason FROM redrive.dead_letter WHERE job_id = $1",
                     QueryParams().addBigInt(job))
                     .text(0, 0),
                 QStringLiteral("exhausted"));

        // A 20-second deadline with the same failures: dead-lettered by the deadline, and no
        // attempt starts after it.
        const qint64 tight
            = w.q("SELECT redrive.enqueue_job('payments', 'charge_card',"
                  " '{\"payment_id\": \"pay_t\", \"amount_minor\": 1, \"currency\": \"USD\"}',"
                  " 'charge:pay_t', 'pay_t', NULL, $1, 50, $1, 20000)",
                  QueryParams().addTimestamp(t0().addSecs(7200)))
                  .bigInt(0, 0)
                  .value_or(0);
        for (int attempt = 1; attempt <= 50; ++attempt)
            faults.force(QStringLiteral("provider"), tight, attempt, FaultKind::ServerError);
        cfg.policies.insert(QStringLiteral("charge_card"),
                            RetryPolicy { 1000, 300000, 50, 20000, true });
        JobRunner tightRunner(w.conn, cfg, &faults, &clock);
        drain(tightRunner, clock, t0().addSecs(10800));
        QCOMPARE(w.q("SELECT reason FROM redrive.dead_letter WHERE job_id = $1",
                     QueryParams().addBigInt(tight))
                     .text(0, 0),
                 QStringLiteral("deadline"));
        QCOMPARE(w.count("SELECT count(*) FROM redrive.attempt a JOIN redrive.job j"
                         " ON j.id = a.job_id WHERE j.id = $1 AND a.started_at > j.deadline_at",
                         QueryParams().addBigInt(tight)),
                 0);
    }

    void requeueKeepsHistoryAndResolvesOnSuccess()
    {
        World w(QStringLiteral("requeue"));
        const qint64 job = w.payment(QStringLiteral("pay_q"), 1000, t0());
        FaultInjector faults = quiet();
        faults.force(QStringLiteral("provider"), job, 1, FaultKind::Declined);
        WorkerClock clock = WorkerClock::simulated(t0());
        JobRunner runner(w.conn, config(QStringLiteral("w1")), &faults, &clock);
        drain(runner, clock, t0().addSecs(600));
        QCOMPARE(w.q("SELECT status FROM redrive.dead_letter WHERE job_id = $1",
                     QueryParams().addBigInt(job))
                     .text(0, 0),
                 QStringLiteral("open"));
        // The requeue command as the console's action writes it.
        w.q("UPDATE redrive.dead_letter SET status = 'requeued' WHERE job_id = $1",
            QueryParams().addBigInt(job));
        w.q("INSERT INTO redrive.outbox (command, target_type, target_id, payload, dedupe_key,"
            " available_at) VALUES ('requeue', 'job', $1::text, jsonb_build_object('job_id',"
            " $1::bigint, 'dead_letter_id', (SELECT id FROM redrive.dead_letter"
            " WHERE job_id = $1), 'reset_attempts', false), 'requeue:' || $1::text, $2)",
            QueryParams().addBigInt(job).addTimestamp(t0().addSecs(800)));
        clock.advanceTo(t0().addSecs(900));
        QCOMPARE(runner.relayOutbox().value(), 1);
        drain(runner, clock, t0().addSecs(1800));
        QCOMPARE(w.q("SELECT status, resolution FROM redrive.dead_letter WHERE job_id = $1",
                     QueryParams().addBigInt(job))
                     .text(0, 1),
                 QStringLiteral("succeeded_after_requeue"));
        QCOMPARE(w.q("SELECT string_agg(attempt_no || ':' || outcome, ',' ORDER BY id)"
                     " FROM redrive.attempt WHERE job_id = $1",
                     QueryParams().addBigInt(job))
                     .text(0, 0),
                 QStringLiteral("1:failed,2:succeeded")); // counter kept, history kept
        QCOMPARE(w.count("SELECT count(*) FROM redrive.outbox WHERE status = 'done'"), 1);
    }

    // A client chooses its idempotency key and may send any length (docs/domain.md,
    // "Idempotency key record"): a key is unique by the SHA-256 of its bytes and found
    // through a hash index (migration 37), so no btree entry holds it. Until then a key over
    // about 2,700 bytes failed the primary key's btree ("index row size ... exceeds btree
    // version 4 maximum").
    void longIdempotencyKeysAreKeptWholeAndUnique()
    {
        World w(QStringLiteral("long_keys"));
        const QString tenK = QString(9999, QLatin1Char('k')) + QLatin1Char('A');
        const QString tenKOther = QString(9999, QLatin1Char('k')) + QLatin1Char('B');
        const QString oneMb = QString((1 << 20) - 1, QLatin1Char('m')) + QLatin1Char('Z');
        const QString hash(64, QLatin1Char('a'));
        const auto begin = [&](const QString &key, const QString &worker) {
            return w.q("SELECT verdict, result::text FROM redrive.begin_idempotent("
                       "'charge_card', $1, $2, NULL, $3, 30000)",
                       QueryParams().addText(key).addText(hash).addText(worker));
        };
        const auto done = [&](const QString &key, const QString &worker, const QByteArray &result) {
            return w
                .q("SELECT redrive.complete_idempotent('charge_card', $1, $2, 'done', $3,"
                   " NULL)",
                   QueryParams().addText(key).addText(worker).addJson(result))
                .text(0, 0);
        };

        for (const auto &[key, charge] : { std::pair { tenK, QByteArray("ch_10k") },
                                           std::pair { oneMb, QByteArray("ch_1mb") } }) {
            QCOMPARE(begin(key, QStringLiteral("w1")).text(0, 0), QStringLiteral("proceed"));
            QCOMPARE(done(key, QStringLiteral("w1"), "{\"charge\": \"" + charge + "\"}"),
                     QStringLiteral("t"));
            // The same request again with the same long key: the first result, replayed.
            const ResultSet again = begin(key, QStringLiteral("w2"));
            QCOMPARE(again.text(0, 0), QStringLiteral("replay"));
            QCOMPARE(again.text(0, 1), "{\"charge\": \"" + QString::fromLatin1(charge) + "\"}");
        }
        // A key that differs only in its last byte is another key.
        QCOMPARE(begin(tenKOther, QStringLiteral("w1")).text(0, 0), QStringLiteral("proceed"));
        QCOMPARE(w.q("SELECT string_agg(octet_length(key) || ' ' || right(key, 1) || ' ' || state,"
                     "                  ',' ORDER BY octet_length(key), right(key, 1))"
                     "  FROM redrive.idempotency_key WHERE scope = 'charge_card'")
                     .text(0, 0),
                 QStringLiteral("10000 A done,10000 B processing,1048576 Z done"));
        QCOMPARE(w.count("SELECT count(*) FROM redrive.idempotency_key WHERE key = $1",
                         QueryParams().addText(tenK)),
                 1);
        // A job carries the 1 MB key whole too.
        const qint64 job = w.q("SELECT redrive.enqueue_job('payments', 'charge_card', '{}', $1)",
                               QueryParams().addText(oneMb))
                               .bigInt(0, 0)
                               .value_or(0);
        QCOMPARE(w.count("SELECT octet_length(idempotency_key) FROM redrive.job WHERE id = $1",
                         QueryParams().addBigInt(job)),
                 1048576);

        // Every lookup by key is an index lookup, also among 20,000 keys.
        w.q("INSERT INTO redrive.idempotency_key (scope, key, request_hash, state, result,"
            "                                     updated_at)"
            " SELECT 'charge_card', 'charge:pay_' || g, repeat('b', 64), 'done', '{}',"
            "        clock_timestamp() - g * interval '1 second'"
            "   FROM generate_series(1, 20000) g");
        w.q("ANALYZE redrive.idempotency_key");
        const auto plan = [&](const QByteArray &sql, const QueryParams &params) {
            w.q("SET search_path = redrive");
            const ResultSet rows = w.q("EXPLAIN " + sql, params);
            w.q("RESET search_path");
            QStringList lines;
            for (int r = 0; r < rows.rowCount(); ++r)
                lines << rows.text(r, 0);
            return lines.join(QLatin1Char('\n'));
        };
        // The console's keys list, a page of its frozen pass.
        const QString rows = plan(
            statementSql(Statement::IdempotencyKeyRows),
            QueryParams()
                .addText(QStringLiteral("{charge_card,charge_card}"))
                .addText(QLatin1Char('{') + tenK + QLatin1Char(',') + oneMb + QLatin1Char('}')));
        QVERIFY2(!rows.contains(QStringLiteral("Seq Scan on idempotency_key")), qPrintable(rows));
        QVERIFY2(rows.contains(QStringLiteral("idempotency_key_key_hash_idx")), qPrintable(rows));
        // The worker's and the release action's lookup, and the worker's insert.
        const QString lookup
            = plan("SELECT * FROM redrive.idempotency_key WHERE scope = $1 AND key = $2",
                   QueryParams().addText(QStringLiteral("charge_card")).addText(tenK));
        QVERIFY2(!lookup.contains(QStringLiteral("Seq Scan")), qPrintable(lookup));
        QVERIFY2(lookup.contains(QStringLiteral("idempotency_key_key_hash_idx")),
                 qPrintable(lookup));
        const QString insert
            = plan("INSERT INTO redrive.idempotency_key (scope, key, request_hash, state,"
                   "                                     locked_until)"
                   " VALUES ($1, $2, repeat('c', 64), 'processing', now())"
                   " ON CONFLICT (scope, redrive.idempotency_key_digest(key)) DO NOTHING",
                   QueryParams().addText(QStringLiteral("charge_card")).addText(tenK));
        QVERIFY2(insert.contains(QStringLiteral("Conflict Arbiter Indexes: "
                                                "idempotency_key_digest_key")),
                 qPrintable(insert));
        // A page of the keys list read from scratch, after the long key.
        const QString page = plan(statementSql(Statement::IdempotencyKeyPage),
                                  QueryParams()
                                      .addNull(ParamType::Text)
                                      .addNull(ParamType::Text)
                                      .addNull(ParamType::Text)
                                      .addTimestamp(QDateTime::currentDateTimeUtc().addSecs(-100))
                                      .addText(QStringLiteral("charge_card"))
                                      .addText(tenK)
                                      .addInt(100));
        QVERIFY2(!page.contains(QStringLiteral("Seq Scan on idempotency_key")), qPrintable(page));
    }

    void keyReusedForAnotherRequestIsNeverReplayed()
    {
        World w(QStringLiteral("key_reuse"));
        w.payment(QStringLiteral("pay_m"), 1000, t0());
        const qint64 second
            = w.q("SELECT redrive.enqueue_job('payments', 'charge_card', jsonb_build_object("
                  " 'payment_id', 'pay_m', 'order_id', 'ord_pay_m', 'amount_minor', 9999,"
                  " 'currency', 'USD'), 'charge:pay_m', 'pay_m', NULL, $1, 8, $1)",
                  QueryParams().addTimestamp(t0().addSecs(60)))
                  .bigInt(0, 0)
                  .value_or(0);
        FaultInjector faults = quiet();
        WorkerClock clock = WorkerClock::simulated(t0());
        JobRunner runner(w.conn, config(QStringLiteral("w1")), &faults, &clock);
        drain(runner, clock, t0().addSecs(600));
        QCOMPARE(w.q("SELECT error_code, reason FROM redrive.dead_letter WHERE job_id = $1",
                     QueryParams().addBigInt(second))
                     .text(0, 0),
                 QStringLiteral("idempotency_key_reuse"));
        QCOMPARE(w.count("SELECT count(*) FROM sim.provider_charge WHERE payment_ref = 'pay_m'"),
                 1);
        QCOMPARE(w.count("SELECT conflict_count FROM redrive.idempotency_key"
                         " WHERE key = 'charge:pay_m'"),
                 1);
    }
};

QTEST_GUILESS_MAIN(TestReferenceWorker)
#include "tst_reference_worker.moc"
