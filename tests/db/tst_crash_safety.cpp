// SPDX-License-Identifier: GPL-3.0-or-later
// What a crash leaves behind (docs/reliability.md): a bulk action killed at a random chunk is
// resumed from another console session with every target applied exactly once; two sessions
// resuming one bulk at once: one runs it, the other is refused; taking a bulk over needs the
// role its action needs (real logins over TCP with a password) and is audited; jobs whose lease
// expired are listed whatever their idempotency key; a poison job that kills every worker that
// claims it is bounded by its maximum attempts; a worker whose wall clock jumps keeps server time.
#include "models/bulk_action_list_model.h"
#include "models/bulk_action_runner.h"
#include "models/db/database_session.h"
#include "models/db/schema_migrator.h"
#include "models/db/sql_statement.h"
#include "models/expired_lease_model.h"
#include "models/worker/job_runner.h"
#include "tests/support/test_database.h"

#include <QAbstractItemModelTester>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QTest>
#include <atomic>
#include <map>
#include <memory>
#include <thread>

using namespace redrive;
using namespace redrive::db;
using namespace redrive::worker;

namespace {

const QString kPassword = QStringLiteral("crash-safety-pw");
constexpr int kTargets = 2300;
constexpr int kChunk = 100;
constexpr int kChunks = (kTargets + kChunk - 1) / kChunk;

QJsonObject outcomeOf(const DbExpected<ResultSet> &r)
{
    return r ? QJsonDocument::fromJson(r->raw(0, 0)).object() : QJsonObject();
}

} // namespace

class TestCrashSafety : public QObject
{
    Q_OBJECT
private:
    std::unique_ptr<test::TestDatabase> m_db;
    PgConnection m_admin;
    QString m_oncall, m_oncall2, m_support, m_auditor, m_worker, m_nobody;

    ResultSet q(const QByteArray &sql, const QueryParams &params = {})
    {
        auto r = m_admin.exec(sql, params);
        if (!r)
            qFatal("%s: %s", sql.constData(), qPrintable(r.error().summary()));
        return r.value();
    }
    qint64 count(const QByteArray &sql, const QueryParams &params = {})
    {
        return q(sql, params).bigInt(0, 0).value_or(-1);
    }

    PgConnection tcp(const QString &login)
    {
        return test::TestDatabase::connectWith(m_db->consoleTcpSettingsAs(login, kPassword));
    }

    // n open dead letters in `queue`, each with its job; the targets as the preview saw them.
    QList<BulkActionRunner::Target> deadLetters(int n, const QString &queue)
    {
        const ResultSet r
            = q("WITH j AS (INSERT INTO redrive.job (queue, kind, payload, state)"
                "           SELECT $1, 'send_receipt', jsonb_build_object('n', g), 'dead'"
                "             FROM generate_series(1, $2) g RETURNING id, queue, kind)"
                "INSERT INTO redrive.dead_letter (job_id, queue, kind, error_class, error_code,"
                "                                 last_error)"
                "SELECT id, queue, kind, 'transient', 'smtp_4xx', '421 try later' FROM j"
                " RETURNING id, version",
                QueryParams().addText(queue).addInt(n));
        QList<BulkActionRunner::Target> out;
        for (int i = 0; i < r.rowCount(); ++i)
            out.append({ r.bigInt(i, 0).value_or(0), int(r.bigInt(i, 1).value_or(0)) });
        std::sort(out.begin(), out.end(), [](const auto &a, const auto &b) { return a.id < b.id; });
        return out;
    }

    BulkActionRunner::Request requeueOf(const QList<BulkActionRunner::Target> &targets)
    {
        BulkActionRunner::Request request;
        request.action = BulkActionRunner::Action::Requeue;
        request.targets = targets;
        request.resetAttempts = false;
        request.reason = QStringLiteral("provider incident over");
        request.ticket = QStringLiteral("INC-15");
        request.osUser = QStringLiteral("alice");
        request.chunkSize = kChunk;
        return request;
    }

    // Every target of bulk `bulkId` in `queue` applied exactly once: requeued, one outbox command
    // each, named "applied" in exactly one audit entry of the bulk, and the bulk's chunks each
    // audited once.
    void verifyAppliedExactlyOnce(const QUuid &bulkId, const QString &queue, int targets)
    {
        const QueryParams byQueue = QueryParams().addText(queue);
        const QueryParams byBulk = QueryParams().addUuid(bulkId);
        QCOMPARE(count("SELECT count(*) FROM redrive.dead_letter WHERE queue = $1"
                       " AND status = 'requeued'",
                       byQueue),
                 qint64(targets));
        QCOMPARE(count("SELECT count(*) FROM redrive.outbox o JOIN redrive.job j"
                       " ON j.id::text = o.target_id WHERE j.queue = $1",
                       byQueue),
                 qint64(targets));
        QCOMPARE(count("SELECT count(DISTINCT o.target_id) FROM redrive.outbox o JOIN"
                       " redrive.job j ON j.id::text = o.target_id WHERE j.queue = $1",
                       byQueue),
                 qint64(targets));
        QCOMPARE(count("SELECT count(*) FROM redrive.audit_log a JOIN redrive.operator_action o"
                       " USING (action_id), jsonb_array_elements(a.targets) t"
                       " WHERE o.bulk_id = $1 AND t ->> 'result' = 'applied'",
                       byBulk),
                 qint64(targets));
        QCOMPARE(count("SELECT count(DISTINCT t ->> 'id') FROM redrive.audit_log a JOIN"
                       " redrive.operator_action o USING (action_id),"
                       " jsonb_array_elements(a.targets) t"
                       " WHERE o.bulk_id = $1 AND t ->> 'result' = 'applied'",
                       byBulk),
                 qint64(targets));
        QCOMPARE(count("SELECT count(*) FROM redrive.audit_log a JOIN redrive.operator_action o"
                       " USING (action_id) WHERE o.bulk_id = $1",
                       byBulk),
                 qint64(kChunks));
        QCOMPARE(count("SELECT count(DISTINCT chunk_no) FROM redrive.operator_action"
                       " WHERE bulk_id = $1",
                       byBulk),
                 qint64(kChunks));
    }

    // Starts the bulk in a session of its own and stops it after chunk `stopAfter` the way
    // `how` says: "backend" terminates the session's backend (the next chunk may be in flight),
    // "runner" destroys the runner and its session as a crashing console does. Returns the id.
    QUuid startAndCrash(const QList<BulkActionRunner::Target> &targets, int stopAfter,
                        const QString &how)
    {
        auto session = m_db->openSession(m_db->consoleSettingsAs(m_oncall));
        if (!session)
            qFatal("%s", qPrintable(m_db->error()));
        auto *runner = new BulkActionRunner(session.get());
        QSignalSpy failed(runner, &BulkActionRunner::failed);
        QSignalSpy finished(runner, &BulkActionRunner::finished);
        connect(runner, &BulkActionRunner::failed, runner,
                [](const DbError &e) { qWarning("runner: %s", qPrintable(e.summary())); });
        bool crashed = false;
        connect(runner, &BulkActionRunner::chunkFinished, runner, [&](int chunk) {
            if (chunk != stopAfter || crashed)
                return;
            crashed = true;
            if (how == QLatin1String("backend"))
                q("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1"
                  " AND datname = current_database()",
                  QueryParams().addText(m_oncall));
        });
        runner->start(requeueOf(targets));
        const QUuid bulkId = runner->bulkId();
        if (how == QLatin1String("backend")) {
            if (!failed.wait(60000))
                qFatal("the runner did not fail after its backend was killed (finished: %d)",
                       int(finished.size()));
            delete runner;
        } else {
            if (!QTest::qWaitFor([&] { return crashed; }, 60000))
                qFatal("the bulk never reached chunk %d", stopAfter);
            delete runner; // the console goes away mid-bulk: no cancel, no goodbye
            session.reset();
        }
        return bulkId;
    }

    // An order, its payment and the charge job for it, due now, with `maxAttempts`. Returns the
    // job id.
    qint64 payment(const QString &id, int maxAttempts)
    {
        q("INSERT INTO sim.ledger_order VALUES ('ord_' || $1, 'Test Customer', 't@example.com',"
          " 5000, 'USD', clock_timestamp())",
          QueryParams().addText(id));
        q("INSERT INTO sim.ledger_payment (id, order_id, amount_minor, currency, idempotency_key,"
          " created_at, updated_at) VALUES ($1, 'ord_' || $1, 5000, 'USD', 'charge:' || $1,"
          " clock_timestamp(), clock_timestamp())",
          QueryParams().addText(id));
        const qint64 job = q("SELECT redrive.enqueue_job('payments', 'charge_card',"
                             " jsonb_build_object('payment_id', $1::text, 'order_id', 'ord_' || $1,"
                             "                    'amount_minor', 5000, 'currency', 'USD'),"
                             " 'charge:' || $1, $1, NULL, NULL, $2)",
                             QueryParams().addText(id).addInt(maxAttempts))
                               .bigInt(0, 0)
                               .value_or(0);
        q("UPDATE redrive.job SET run_at = clock_timestamp() - interval '1 second' WHERE id = $1",
          QueryParams().addBigInt(job));
        return job;
    }

    // A reference worker process on the payments queue whose calls take 20 s, so it is inside
    // its attempt when it is killed.
    std::unique_ptr<QProcess> startWorker(const QString &id)
    {
        auto worker = std::make_unique<QProcess>();
        worker->setProcessChannelMode(QProcess::MergedChannels);
        worker->start(QStringLiteral(REDRIVE_WORKER_EXE),
                      { QStringLiteral("run"), QStringLiteral("--conninfo"),
                        m_db->settings().connInfo, QStringLiteral("--queues"),
                        QStringLiteral("payments"), QStringLiteral("--lease-ms"),
                        QStringLiteral("1500"), QStringLiteral("--latency-ms"),
                        QStringLiteral("20000"), QStringLiteral("--worker-id"), id });
        if (!worker->waitForStarted(10000))
            qFatal("the worker did not start: %s", qPrintable(worker->errorString()));
        return worker;
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_db = std::make_unique<test::TestDatabase>(QStringLiteral("crash"));
        QVERIFY2(m_db->isValid(), qPrintable(m_db->error()));
        m_admin = m_db->connect();
        auto sim = SchemaMigrator(m_admin, MigrationSet::simulatedWorld()).migrate();
        QVERIFY2(sim, sim ? "" : qPrintable(sim.error().summary()));
        m_oncall = m_db->createLogin(QStringLiteral("cs_oncall"),
                                     { QStringLiteral("redrive_oncall") }, kPassword);
        m_oncall2 = m_db->createLogin(QStringLiteral("cs_oncall2"),
                                      { QStringLiteral("redrive_oncall") }, kPassword);
        m_support = m_db->createLogin(QStringLiteral("cs_support"),
                                      { QStringLiteral("redrive_support") }, kPassword);
        m_auditor = m_db->createLogin(QStringLiteral("cs_auditor"),
                                      { QStringLiteral("redrive_auditor") }, kPassword);
        m_worker = m_db->createLogin(QStringLiteral("cs_worker"),
                                     { QStringLiteral("redrive_worker") }, kPassword);
        m_nobody = m_db->createLogin(QStringLiteral("cs_nobody"), {}, kPassword);
    }

    void bulkKilledAtARandomChunkIsResumedInANewSessionOnce_data()
    {
        QTest::addColumn<QString>("how");
        QTest::newRow("backend killed") << QStringLiteral("backend");
        QTest::newRow("console killed") << QStringLiteral("runner");
    }

    // Killed after a random chunk, the bulk is offered again in a new session of its owner with
    // its progress, resumed, and every target is applied exactly once.
    void bulkKilledAtARandomChunkIsResumedInANewSessionOnce()
    {
        QFETCH(QString, how);
        const QString queue = QStringLiteral("resume_") + how;
        const auto targets = deadLetters(kTargets, queue);
        const quint32 seed = QRandomGenerator::global()->generate();
        const int stopAfter = int(QRandomGenerator(seed).bounded(kChunks - 2));
        qInfo("%s: stopping after chunk %d of %d (seed %u)", qPrintable(how), stopAfter, kChunks,
              seed);
        const QUuid bulkId = startAndCrash(targets, stopAfter, how);

        // A console opened again: the unfinished bulk is offered with the server's progress.
        auto session = m_db->openSession(m_db->consoleSettingsAs(m_oncall));
        QVERIFY2(session, qPrintable(m_db->error()));
        BulkActionListModel list(session.get());
        connect(&list, &ResultTableModel::failed, &list,
                [](const DbError &e) { qWarning("list: %s", qPrintable(e.summary())); });
        QAbstractItemModelTester tester(&list);
        QSignalSpy loaded(&list, &ResultTableModel::loaded);
        list.reload();
        QVERIFY(loaded.wait(10000));
        QCOMPARE(list.rowCount(), 1);
        QCOMPARE(list.bulkId(0), bulkId);
        QVERIFY(list.isMine(0));
        QTRY_VERIFY_WITH_TIMEOUT(count("SELECT count(*) FROM redrive.bulk_action_list"
                                       " WHERE running")
                                     == 0,
                                 10000); // the dead session's run lock went with it
        const int doneBefore = list.text(0, QStringLiteral("chunks_done")).toInt();
        QVERIFY2(doneBefore == stopAfter + 1 || doneBefore == stopAfter + 2,
                 qPrintable(QString::number(doneBefore)));
        QCOMPARE(list.text(0, QStringLiteral("applied")).toInt(), doneBefore * kChunk);
        QCOMPARE(list.data(list.index(0, BulkActionListModel::Progress)).toString(),
                 QStringLiteral("%1 of %2 chunks").arg(doneBefore).arg(kChunks));

        BulkActionRunner runner(session.get());
        QSignalSpy finished(&runner, &BulkActionRunner::finished);
        QSignalSpy failed(&runner, &BulkActionRunner::failed);
        QList<int> sent;
        connect(&runner, &BulkActionRunner::chunkFinished, &runner,
                [&](int chunk) { sent.append(chunk); });
        runner.resumeFrozen(bulkId);
        QVERIFY2(finished.wait(120000),
                 failed.isEmpty() ? "no answer"
                                  : qPrintable(failed.first().first().value<DbError>().summary()));
        QCOMPARE(finished.first().first().toBool(), false);
        QCOMPARE(runner.chunksDone(), kChunks);
        QCOMPARE(runner.totals().applied, kTargets);
        QCOMPARE(runner.totals().conflicts, 0);
        QCOMPARE(sent.size(), kChunks - doneBefore); // only the chunks not done were sent
        QCOMPARE(sent.first(), doneBefore);
        verifyAppliedExactlyOnce(bulkId, queue, kTargets);

        list.reload();
        QVERIFY(loaded.wait(10000));
        QCOMPARE(list.rowOf(QStringLiteral("bulk_id"), bulkId.toString(QUuid::WithoutBraces)),
                 -1); // finished: no longer offered
    }

    // Two consoles of the owner resume the same bulk at the same moment: one runs it, the other
    // is refused with lock_not_available; every target is applied once.
    void twoSessionsResumingOneBulkAtOnceOneWins()
    {
        const QString queue = QStringLiteral("race");
        const auto targets = deadLetters(kTargets, queue);
        const QUuid bulkId = startAndCrash(targets, 3, QStringLiteral("runner"));

        auto s1 = m_db->openSession(m_db->consoleSettingsAs(m_oncall));
        auto s2 = m_db->openSession(m_db->consoleSettingsAs(m_oncall));
        QVERIFY(s1 && s2);
        BulkActionRunner r1(s1.get()), r2(s2.get());
        QSignalSpy done1(&r1, &BulkActionRunner::finished), done2(&r2, &BulkActionRunner::finished);
        QSignalSpy fail1(&r1, &BulkActionRunner::failed), fail2(&r2, &BulkActionRunner::failed);
        r1.resumeFrozen(bulkId);
        r2.resumeFrozen(bulkId);
        QTRY_COMPARE_WITH_TIMEOUT(done1.size() + fail1.size() + done2.size() + fail2.size(), 2,
                                  120000);
        QCOMPARE(done1.size() + done2.size(), 1);
        QCOMPARE(fail1.size() + fail2.size(), 1);
        const DbError lost = (fail1.isEmpty() ? fail2 : fail1).first().first().value<DbError>();
        QCOMPARE(lost.sqlState(), QStringLiteral("55P03"));
        QVERIFY2(lost.message().contains(QLatin1String("being run in another session")),
                 qPrintable(lost.message()));
        verifyAppliedExactlyOnce(bulkId, queue, kTargets);
    }

    // A login cannot keep a bulk from being resumed, taken over or given up by holding its run
    // lock (docs/security.md, version 23): over TCP with passwords, a login with no Redrive role
    // holds every run-lock key it saw in pg_locks while the bulk ran, an auditor holds the key
    // version 15 used (a hash of the bulk id); neither can begin a run or write the run's
    // holder. The bulk is not listed as running, and its owner resumes and finishes it.
    // The run's lock key does not follow random(): a session whose seed was set (setseed(), which
    // code planted in a confined call of the operator's session can call, and which neither a
    // setting nor RESET ALL shows) takes a key no other login could work out in advance. A login
    // with no role holds the 20 keys random() gives after setseed(0.42); the owner's session,
    // seeded the same, still begins its run (version 23 answered "no free run lock").
    void seededRandomDoesNotGiveAwayTheRunKey()
    {
        const QString queue = QStringLiteral("seeded");
        const auto targets = deadLetters(kTargets, queue);
        QUuid bulkId;
        {
            auto session = m_db->openSession(m_db->consoleTcpSettingsAs(m_oncall, kPassword));
            QVERIFY2(session, qPrintable(m_db->error()));
            BulkActionRunner runner(session.get());
            QSignalSpy finished(&runner, &BulkActionRunner::finished);
            connect(&runner, &BulkActionRunner::chunkFinished, &runner,
                    [&](int) { runner.cancel(); });
            runner.start(requeueOf(targets));
            bulkId = runner.bulkId();
            QVERIFY(finished.wait(120000));
        }
        PgConnection nobody = tcp(m_nobody);
        QVERIFY(nobody.exec("SELECT setseed(0.42)").ok());
        auto held
            = nobody.exec("SELECT count(*) FILTER (WHERE pg_try_advisory_lock(1380209218, k))"
                          "  FROM (SELECT (floor(random() * 4294967296) - 2147483648)::integer AS k"
                          "          FROM generate_series(1, 20)) keys");
        QVERIFY2(held, held ? "" : qPrintable(held.error().summary()));
        QCOMPARE(held->bigInt(0, 0), std::optional<qint64>(20));
        PgConnection owner = tcp(m_oncall);
        QVERIFY(owner.exec("SELECT setseed(0.42)").ok());
        auto begun = owner.exec("SELECT bulk_id FROM redrive.begin_bulk_run($1)",
                                QueryParams().addUuid(bulkId));
        QVERIFY2(begun, begun ? "" : qPrintable(begun.error().summary()));
        QCOMPARE(begun->rowCount(), 1);
        auto ended = owner.exec("SELECT redrive.end_bulk_run($1)", QueryParams().addUuid(bulkId));
        QVERIFY2(ended, ended ? "" : qPrintable(ended.error().summary()));
        QCOMPARE(ended->boolean(0, 0), std::optional<bool>(true));
        QVERIFY(nobody.exec("SELECT pg_advisory_unlock_all()").ok());
    }

    void hostileLoginsCannotHoldABulkRunLock()
    {
        const QString queue = QStringLiteral("squat");
        const auto targets = deadLetters(kTargets, queue);
        PgConnection nobody = tcp(m_nobody);
        PgConnection auditor = tcp(m_auditor);
        QList<qint64> seenKeys;
        QUuid bulkId;
        {
            auto session = m_db->openSession(m_db->consoleTcpSettingsAs(m_oncall, kPassword));
            QVERIFY2(session, qPrintable(m_db->error()));
            BulkActionRunner runner(session.get());
            QSignalSpy finished(&runner, &BulkActionRunner::finished);
            connect(&runner, &BulkActionRunner::chunkFinished, &runner, [&](int chunk) {
                if (chunk != 1)
                    return;
                // What anyone sees of the running bulk: the run's lock in pg_locks.
                auto locks = nobody.exec("SELECT objid::bigint FROM pg_locks"
                                         " WHERE locktype = 'advisory' AND objsubid = 2"
                                         "   AND classid = 1380209218::oid AND granted");
                for (int i = 0; locks && i < locks->rowCount(); ++i)
                    seenKeys << locks->bigInt(i, 0).value_or(0);
                runner.cancel();
            });
            runner.start(requeueOf(targets));
            bulkId = runner.bulkId();
            QVERIFY(finished.wait(120000));
        }
        QVERIFY(!seenKeys.isEmpty());
        for (const qint64 key : std::as_const(seenKeys)) {
            const qint64 signedKey = key > 2147483647 ? key - 4294967296LL : key;
            QVERIFY(nobody
                        .exec("SELECT pg_advisory_lock(1380209218, $1)",
                              QueryParams().addInt(int(signedKey)))
                        .ok());
        }
        QVERIFY(auditor
                    .exec("SELECT pg_advisory_lock(1380209218, hashtext($1::text))",
                          QueryParams().addText(bulkId.toString(QUuid::WithoutBraces)))
                    .ok());
        auto running = auditor.exec("SELECT running, chunks_done FROM redrive.bulk_action_list"
                                    " WHERE bulk_id = $1",
                                    QueryParams().addUuid(bulkId));
        QVERIFY2(running, running ? "" : qPrintable(running.error().summary()));
        QCOMPARE(running->boolean(0, 0), std::optional<bool>(false));
        QCOMPARE(running->integer(0, 1).value_or(-1), 2);

        // Neither can begin a run nor name itself the holder.
        for (PgConnection *attacker : { &nobody, &auditor }) {
            auto begun = attacker->exec("SELECT * FROM redrive.begin_bulk_run($1)",
                                        QueryParams().addUuid(bulkId));
            QVERIFY(!begun);
            QCOMPARE(begun.error().sqlState(), QStringLiteral("42501"));
            auto written = attacker->exec(
                "UPDATE redrive.bulk_operation SET run_pid = pg_backend_pid() WHERE bulk_id = $1",
                QueryParams().addUuid(bulkId));
            QVERIFY(!written);
            QCOMPARE(written.error().sqlState(), QStringLiteral("42501"));
        }

        // The owner resumes it in a new session and finishes it, each target applied once.
        auto session = m_db->openSession(m_db->consoleTcpSettingsAs(m_oncall, kPassword));
        QVERIFY2(session, qPrintable(m_db->error()));
        BulkActionRunner runner(session.get());
        QSignalSpy finished(&runner, &BulkActionRunner::finished);
        QSignalSpy failed(&runner, &BulkActionRunner::failed);
        runner.resumeFrozen(bulkId);
        QTRY_COMPARE_WITH_TIMEOUT(finished.size() + failed.size(), 1, 120000);
        QVERIFY2(failed.isEmpty(),
                 failed.isEmpty() ? ""
                                  : qPrintable(failed.first().first().value<DbError>().summary()));
        QCOMPARE(finished.first().first().toBool(), false);
        QCOMPARE(runner.totals().applied, kTargets);
        verifyAppliedExactlyOnce(bulkId, queue, kTargets);
        QVERIFY(nobody.exec("SELECT pg_advisory_unlock_all()").ok());
        QVERIFY(auditor.exec("SELECT pg_advisory_unlock_all()").ok());
    }

    // Taking over another operator's bulk needs the role its action needs: a requeue bulk is
    // refused to support, the auditor, a worker and a login with no role, over TCP with a
    // password; another on-call operator takes it over under audit, and the first owner can no
    // longer run it.
    void takeOverNeedsTheRoleAndIsAudited()
    {
        const QString queue = QStringLiteral("takeover");
        const auto targets = deadLetters(kTargets, queue);
        const QUuid bulkId = startAndCrash(targets, 5, QStringLiteral("runner"));
        const QByteArray sql = statementSql(Statement::ActionTakeOverBulk);
        auto takeOver = [&](PgConnection &c, const QString &expected) {
            return c.exec(sql,
                          QueryParams()
                              .addUuid(QUuid::createUuid())
                              .addUuid(bulkId)
                              .addText(expected)
                              .addText(QStringLiteral("alice went home"))
                              .addText(QString())
                              .addText(QStringLiteral("bob")));
        };
        const qint64 auditBefore = count("SELECT count(*) FROM redrive.audit_log");
        for (const QString &login : { m_support, m_auditor, m_worker, m_nobody }) {
            PgConnection c = tcp(login);
            const auto refused = takeOver(c, m_oncall);
            QVERIFY2(!refused, qPrintable(login));
            // A login with no Redrive role cannot even see the schema's functions.
            QCOMPARE(refused.error().sqlState(),
                     login == m_nobody ? QStringLiteral("42883") : QStringLiteral("42501"));
        }
        QCOMPARE(count("SELECT count(*) FROM redrive.audit_log"), auditBefore);
        QCOMPARE(q("SELECT actor FROM redrive.bulk_operation WHERE bulk_id = $1",
                   QueryParams().addUuid(bulkId))
                     .text(0, 0),
                 m_oncall);

        // While the owner's console runs it, nobody takes it over.
        {
            PgConnection owner = tcp(m_oncall);
            QVERIFY(owner.exec(statementSql(Statement::BulkBeginRun),
                               QueryParams().addUuid(bulkId).addBool(false)));
            PgConnection other = tcp(m_oncall2);
            const auto busy = takeOver(other, m_oncall);
            QVERIFY(!busy);
            QCOMPARE(busy.error().sqlState(), QStringLiteral("55P03"));
        }

        // The owner seen is no longer the owner: a conflict, nothing changes.
        PgConnection bob = tcp(m_oncall2);
        const QJsonObject stale = outcomeOf(takeOver(bob, m_support));
        QCOMPARE(stale.value(QStringLiteral("applied")).toInt(), 0);
        QCOMPARE(stale.value(QStringLiteral("conflicts")).toInt(), 1);

        const auto taken = takeOver(bob, m_oncall);
        QVERIFY2(taken, taken ? "" : qPrintable(taken.error().summary()));
        QCOMPARE(outcomeOf(taken).value(QStringLiteral("applied")).toInt(), 1);
        const ResultSet audit
            = q("SELECT db_user, before ->> 'actor', after ->> 'actor', targets -> 0 ->> 'id',"
                " os_user FROM redrive.audit_log WHERE action = 'take_over_bulk'"
                " AND outcome ->> 'applied' = '1' AND targets -> 0 ->> 'id' = $1",
                QueryParams().addText(bulkId.toString(QUuid::WithoutBraces)));
        QCOMPARE(audit.rowCount(), 1);
        QCOMPARE(audit.text(0, 0), m_oncall2);
        QCOMPARE(audit.text(0, 1), m_oncall);
        QCOMPARE(audit.text(0, 2), m_oncall2);
        QCOMPARE(audit.text(0, 3), bulkId.toString(QUuid::WithoutBraces));
        QCOMPARE(audit.text(0, 4), QStringLiteral("bob"));

        // The first owner can neither resume it nor run one of its chunks any more.
        PgConnection alice = tcp(m_oncall);
        const auto resume = alice.exec(statementSql(Statement::BulkBeginRun),
                                       QueryParams().addUuid(bulkId).addBool(false));
        QVERIFY(!resume);
        QCOMPARE(resume.error().sqlState(), QStringLiteral("42501"));
        const QList<BulkActionRunner::Target> lastChunk = targets.mid((kChunks - 1) * kChunk);
        const auto chunk = alice.exec(statementSql(Statement::ActionRequeue),
                                      QueryParams()
                                          .addUuid(QUuid::createUuid())
                                          .addJson(BulkActionRunner::targetsJson(lastChunk))
                                          .addBool(false)
                                          .addText(QStringLiteral("provider incident over"))
                                          .addText(QStringLiteral("INC-15"))
                                          .addText(QStringLiteral("alice"))
                                          .addUuid(bulkId)
                                          .addInt(kChunks - 1));
        QVERIFY(!chunk);
        QCOMPARE(chunk.error().sqlState(), QStringLiteral("42501"));

        // The new owner sees it as theirs and finishes it: each target applied once.
        auto session = m_db->openSession(m_db->consoleTcpSettingsAs(m_oncall2, kPassword));
        QVERIFY2(session, qPrintable(m_db->error()));
        BulkActionRunner runner(session.get());
        QSignalSpy finished(&runner, &BulkActionRunner::finished);
        runner.resumeFrozen(bulkId);
        QVERIFY(finished.wait(120000));
        QCOMPARE(runner.totals().applied, kTargets);
        verifyAppliedExactlyOnce(bulkId, queue, kTargets);
        QCOMPARE(count("SELECT count(DISTINCT a.db_user) FROM redrive.audit_log a JOIN"
                       " redrive.operator_action o USING (action_id) WHERE o.bulk_id = $1",
                       QueryParams().addUuid(bulkId)),
                 2); // chunks before the take-over by alice, after it by bob
    }

    // An abandoned bulk leaves the list and none of its remaining chunks is ever applied.
    void abandonedBulkIsNeverApplied()
    {
        const QString queue = QStringLiteral("abandon");
        const auto targets = deadLetters(kTargets, queue);
        const QUuid bulkId = startAndCrash(targets, 2, QStringLiteral("runner"));
        const int done = int(count("SELECT chunks_done FROM redrive.bulk_action_list"
                                   " WHERE bulk_id = $1",
                                   QueryParams().addUuid(bulkId)));
        PgConnection alice = tcp(m_oncall);
        const auto abandoned = alice.exec(statementSql(Statement::ActionAbandonBulk),
                                          QueryParams()
                                              .addUuid(QUuid::createUuid())
                                              .addUuid(bulkId)
                                              .addText(QStringLiteral("wrong group"))
                                              .addText(QString())
                                              .addText(QStringLiteral("alice")));
        QVERIFY2(abandoned, abandoned ? "" : qPrintable(abandoned.error().summary()));
        QCOMPARE(count("SELECT count(*) FROM redrive.audit_log WHERE action = 'abandon_bulk'"
                       " AND (after ->> 'chunks_done')::int = $1",
                       QueryParams().addInt(done)),
                 1);

        auto session = m_db->openSession(m_db->consoleSettingsAs(m_oncall));
        QVERIFY(session);
        BulkActionListModel list(session.get());
        QSignalSpy loaded(&list, &ResultTableModel::loaded);
        list.reload();
        QVERIFY(loaded.wait(10000));
        QCOMPARE(list.rowOf(QStringLiteral("bulk_id"), bulkId.toString(QUuid::WithoutBraces)), -1);
        BulkActionRunner runner(session.get());
        QSignalSpy failed(&runner, &BulkActionRunner::failed);
        runner.resumeFrozen(bulkId);
        QVERIFY(failed.wait(10000));
        QCOMPARE(failed.first().first().value<DbError>().sqlState(), QStringLiteral("55000"));
        QCOMPARE(count("SELECT count(*) FROM redrive.dead_letter WHERE queue = $1"
                       " AND status = 'requeued'",
                       QueryParams().addText(queue)),
                 qint64(done * kChunk));
    }

    // The list of every operator's unfinished bulks shows another operator's too; only the
    // caller's own are offered on start.
    void everyOperatorSeesUnfinishedBulks()
    {
        const auto targets = deadLetters(kTargets, QStringLiteral("seen"));
        const QUuid bulkId = startAndCrash(targets, 1, QStringLiteral("runner"));
        auto session = m_db->openSession(m_db->consoleTcpSettingsAs(m_support, kPassword));
        QVERIFY2(session, qPrintable(m_db->error()));
        BulkActionListModel list(session.get());
        QSignalSpy loaded(&list, &ResultTableModel::loaded);
        list.reload();
        QVERIFY(loaded.wait(10000));
        QCOMPARE(list.rowOf(QStringLiteral("bulk_id"), bulkId.toString(QUuid::WithoutBraces)),
                 -1); // not support's own
        list.setMineOnly(false);
        list.reload();
        QVERIFY(loaded.wait(10000));
        const int row
            = list.rowOf(QStringLiteral("bulk_id"), bulkId.toString(QUuid::WithoutBraces));
        QVERIFY(row >= 0);
        QVERIFY(!list.isMine(row));
        QCOMPARE(list.text(row, QStringLiteral("actor")), m_oncall);
    }

    // A poison job that kills every worker claiming it (SIGKILL, as the OOM killer does) with
    // two workers running: each abandoned attempt is recorded as ambiguous, lease_expired, with
    // the killed worker's id; after its maximum of 3 the job is an ambiguous dead letter and no
    // worker claims it again.
    void poisonJobThatKillsItsWorkerIsBoundedByItsMaximumAttempts()
    {
        constexpr int kMaxAttempts = 3;
        const qint64 job = payment(QStringLiteral("pay_poison"), kMaxAttempts);
        std::map<QString, std::unique_ptr<QProcess>> workers;
        int started = 0;
        auto spawn = [&] {
            const QString id = QStringLiteral("poison-%1").arg(++started);
            workers[id] = startWorker(id);
        };
        spawn();
        spawn();
        QStringList killed;
        QElapsedTimer clock;
        clock.start();
        while (killed.size() < kMaxAttempts && clock.elapsed() < 120000) {
            const ResultSet r = q("SELECT locked_by FROM redrive.job WHERE id = $1"
                                  " AND state = 'running' AND locked_until > clock_timestamp()",
                                  QueryParams().addBigInt(job));
            const QString holder = r.rowCount() == 1 ? r.text(0, 0) : QString();
            if (!holder.isEmpty() && workers.count(holder)) {
                workers[holder]->kill(); // whichever worker claimed it
                QVERIFY(workers[holder]->waitForFinished(5000));
                workers.erase(holder);
                killed << holder;
                spawn();
            }
            QTest::qWait(50);
        }
        QCOMPARE(killed.size(), kMaxAttempts);
        // The workers left alive reclaim the last expired lease: a dead letter, never retried.
        QTRY_COMPARE_WITH_TIMEOUT(
            q("SELECT state FROM redrive.job WHERE id = $1", QueryParams().addBigInt(job))
                .text(0, 0),
            QStringLiteral("dead"), 30000);
        QTest::qWait(3000); // the live workers keep polling: nothing claims it again
        const ResultSet attempts
            = q("SELECT attempt_no, outcome, error_class, error_code, worker_id,"
                " finished_at >= started_at FROM redrive.attempt WHERE job_id = $1 ORDER BY id",
                QueryParams().addBigInt(job));
        QCOMPARE(attempts.rowCount(), kMaxAttempts);
        for (int i = 0; i < kMaxAttempts; ++i) {
            QCOMPARE(attempts.text(i, 0).toInt(), i + 1);
            QCOMPARE(attempts.text(i, 1), QStringLiteral("abandoned"));
            QCOMPARE(attempts.text(i, 2), QStringLiteral("ambiguous"));
            QCOMPARE(attempts.text(i, 3), QStringLiteral("lease_expired"));
            QCOMPARE(attempts.text(i, 4), killed.at(i));
            QCOMPARE(attempts.text(i, 5), QStringLiteral("t"));
        }
        const ResultSet dead = q("SELECT j.state, j.attempt, d.status, d.error_class, d.reason,"
                                 " d.attempts FROM redrive.job j JOIN redrive.dead_letter d"
                                 " ON d.job_id = j.id WHERE j.id = $1",
                                 QueryParams().addBigInt(job));
        QCOMPARE(dead.rowCount(), 1);
        QCOMPARE(dead.text(0, 0), QStringLiteral("dead"));
        QCOMPARE(dead.text(0, 1).toInt(), kMaxAttempts);
        QCOMPARE(dead.text(0, 2), QStringLiteral("open"));
        QCOMPARE(dead.text(0, 3), QStringLiteral("ambiguous"));
        QCOMPARE(dead.text(0, 4), QStringLiteral("ambiguous"));
        QCOMPARE(dead.text(0, 5).toInt(), kMaxAttempts);
        for (auto &[id, worker] : workers) {
            worker->kill();
            worker->waitForFinished(5000);
        }
    }

    void workerClockJumpsKeepServerTime_data()
    {
        QTest::addColumn<qint64>("jumpMs");
        QTest::newRow("steps back 2 h") << qint64(-2 * 3600 * 1000);
        QTest::newRow("jumps forward 2 h") << qint64(2 * 3600 * 1000);
    }

    // The worker's wall clock jumps while an attempt runs (its heartbeats renew the lease
    // meanwhile): leases stay in server time, the attempt is recorded within the server's
    // interval, with a positive duration close to the call's latency.
    void workerClockJumpsKeepServerTime()
    {
        QFETCH(qint64, jumpMs);
        const qint64 job = payment(QStringLiteral("pay_clock_%1").arg(jumpMs > 0 ? 1 : 2), 8);
        std::atomic<qint64> skewMs { 0 };
        const WorkerClock::WallClock wall = [&skewMs] {
            return QDateTime::currentDateTimeUtc().addMSecs(skewMs.load());
        };
        const QDateTime serverBefore = q("SELECT clock_timestamp()").timestamp(0, 0);
        WorkerClock clock = WorkerClock::real(wall().msecsTo(serverBefore), wall);
        FaultInjector faults(1);
        FaultRates slow;
        slow.latencyMinMs = slow.latencyMaxMs = 2400;
        faults.setRates(QStringLiteral("provider"), slow);
        WorkerConfig config = WorkerConfig::referenceDefaults(QStringLiteral("w-clock"));
        config.queues = { QStringLiteral("payments") };
        config.leaseMs = 900;
        config.keyLeaseMs = 900;
        PgConnection conn = m_db->connect();
        JobRunner runner(conn, config, &faults, &clock);

        // While the attempt runs: the wall clock jumps, and another connection watches the lease.
        std::atomic<bool> done { false };
        qint64 worstLeaseMs = 0; // the lease's end, minus the server's now, at its worst
        std::thread watcher([&] {
            PgConnection c = m_db->connect();
            std::this_thread::sleep_for(std::chrono::milliseconds(600));
            skewMs = jumpMs;
            while (!done.load()) {
                auto r = c.exec("SELECT (extract(epoch FROM locked_until - clock_timestamp())"
                                " * 1000)::bigint FROM redrive.job WHERE id = $1"
                                " AND state = 'running'",
                                QueryParams().addBigInt(job));
                if (r && r->rowCount() == 1) {
                    const qint64 left = r->bigInt(0, 0).value_or(0);
                    if (std::abs(left) > std::abs(worstLeaseMs))
                        worstLeaseMs = left;
                }
                std::this_thread::sleep_for(std::chrono::milliseconds(50));
            }
        });
        auto batch = runner.runDueBatch();
        done = true;
        watcher.join();
        QVERIFY2(batch, batch ? "" : qPrintable(batch.error().summary()));
        QCOMPARE(batch->size(), 1);
        QCOMPARE(batch->first().outcome, QStringLiteral("succeeded"));
        const QDateTime serverAfter = q("SELECT clock_timestamp()").timestamp(0, 0);
        // The lease never left [server now - a heartbeat's lateness, server now + lease].
        QVERIFY2(worstLeaseMs > -1500 && worstLeaseMs <= config.leaseMs + 100,
                 qPrintable(QString::number(worstLeaseMs)));
        const ResultSet a = q("SELECT started_at, finished_at FROM redrive.attempt"
                              " WHERE job_id = $1",
                              QueryParams().addBigInt(job));
        QCOMPARE(a.rowCount(), 1);
        const QDateTime started = a.timestamp(0, 0), finished = a.timestamp(0, 1);
        QVERIFY2(started >= serverBefore.addMSecs(-50) && finished <= serverAfter.addMSecs(50),
                 qPrintable(started.toString(Qt::ISODateWithMs) + QLatin1Char(' ')
                            + finished.toString(Qt::ISODateWithMs)));
        const qint64 durationMs = started.msecsTo(finished);
        QVERIFY2(durationMs >= 2300 && durationMs < 60000, qPrintable(QString::number(durationMs)));
        QCOMPARE(count("SELECT count(*) FROM redrive.attempt WHERE finished_at < started_at"), 0);
    }

    // A commit the console or a worker was told about survives a server crash: where the server
    // (the test cluster runs with synchronous_commit = off), the database or the login would give
    // "off", the session asks for "on"; a stronger setting of the login is kept
    // (docs/reliability.md#acknowledged-means-durable).
    void acknowledgedCommitsAreDurable()
    {
        const QString serverDefault = q("SELECT reset_val FROM pg_settings"
                                        " WHERE name = 'synchronous_commit'")
                                          .text(0, 0);
        QCOMPARE(serverDefault, QStringLiteral("off")); // the fixture server's own, before any SET
        q("ALTER ROLE " + m_oncall2.toUtf8() + " SET synchronous_commit = off");
        q("ALTER ROLE " + m_auditor.toUtf8() + " SET synchronous_commit = remote_apply");
        auto show = [](DatabaseSession *session) {
            QString value;
            session->execute("SHOW synchronous_commit", {}, session,
                             [&value](const DbExpected<ResultSet> &r) {
                                 value = r ? r->text(0, 0) : r.error().summary();
                             });
            static_cast<void>(QTest::qWaitFor([&] { return !value.isEmpty(); }, 10000));
            return value;
        };
        for (const QString &login : { m_oncall, m_oncall2 }) {
            auto session = m_db->openSession(m_db->consoleTcpSettingsAs(login, kPassword));
            QVERIFY2(session, qPrintable(m_db->error()));
            QCOMPARE(show(session.get()), QStringLiteral("on"));
        }
        auto auditor = m_db->openSession(m_db->consoleTcpSettingsAs(m_auditor, kPassword));
        QVERIFY2(auditor, qPrintable(m_db->error()));
        QCOMPARE(show(auditor.get()), QStringLiteral("remote_apply"));
        // The reference worker connects the same way.
        auto worker = PgConnection::open(m_db->tcpSettingsAs(m_worker, kPassword));
        QVERIFY2(worker, worker ? "" : qPrintable(worker.error().summary()));
        auto shown = worker->exec("SHOW synchronous_commit");
        QVERIFY(shown);
        QCOMPARE(shown->text(0, 0), QStringLiteral("on"));
        q("ALTER ROLE " + m_oncall2.toUtf8() + " RESET synchronous_commit");
        q("ALTER ROLE " + m_auditor.toUtf8() + " RESET synchronous_commit");
    }

    // A job whose worker died is listed with its worker and how long its lease has been expired,
    // with or without an idempotency key; live leases and finished jobs are not.
    void expiredLeasesAreListedWhateverTheirKey()
    {
        q("INSERT INTO redrive.job (queue, kind, payload, state, attempt, locked_by,"
          " locked_until, heartbeat_at, idempotency_key) VALUES"
          " ('lease', 'send_receipt', '{}', 'running', 2, 'w-dead-nokey',"
          "  clock_timestamp() - interval '90 minutes', clock_timestamp() - interval '91 minutes',"
          "  NULL),"
          " ('lease', 'charge_card', '{}', 'running', 1, 'w-dead-key',"
          "  clock_timestamp() - interval '5 minutes', clock_timestamp() - interval '6 minutes',"
          "  'charge:lease1'),"
          " ('lease', 'send_receipt', '{}', 'running', 1, 'w-alive',"
          "  clock_timestamp() + interval '5 minutes', clock_timestamp(), NULL)");
        auto session = m_db->openSession(m_db->consoleTcpSettingsAs(m_auditor, kPassword));
        QVERIFY2(session, qPrintable(m_db->error()));
        ExpiredLeaseModel model(session.get());
        QAbstractItemModelTester tester(&model);
        QSignalSpy loaded(&model, &ResultTableModel::loaded);
        model.reload();
        QVERIFY(loaded.wait(10000));
        QCOMPARE(model.rowCount(), 2);
        QCOMPARE(model.text(0, QStringLiteral("worker_id")), QStringLiteral("w-dead-nokey"));
        QVERIFY(model.text(0, QStringLiteral("idempotency_key")).isNull());
        QCOMPARE(model.data(model.index(0, ExpiredLeaseModel::ExpiredFor)).toString(),
                 QStringLiteral("1 h 30 min"));
        QCOMPARE(model.data(model.index(0, ExpiredLeaseModel::Attempt)).toString(),
                 QStringLiteral("2 of 8"));
        QCOMPARE(model.text(1, QStringLiteral("worker_id")), QStringLiteral("w-dead-key"));
        QCOMPARE(model.data(model.index(1, ExpiredLeaseModel::ExpiredFor)).toString(),
                 QStringLiteral("5 min"));
        // A lease that ran out at -infinity has no number of seconds: listed first, expired
        // for "∞" (the cell was blank).
        q("INSERT INTO redrive.job (queue, kind, payload, state, attempt, locked_by, locked_until,"
          " heartbeat_at) VALUES ('lease', 'charge_card', '{}', 'running', 1, 'w-neg-inf',"
          " '-infinity', '-infinity')");
        model.reload();
        QVERIFY(loaded.wait(10000));
        QCOMPARE(model.rowCount(), 3);
        QCOMPARE(model.text(0, QStringLiteral("worker_id")), QStringLiteral("w-neg-inf"));
        QCOMPARE(model.data(model.index(0, ExpiredLeaseModel::ExpiredFor)).toString(),
                 QStringLiteral("\u221e"));
        q("DELETE FROM redrive.job WHERE queue = 'lease'");
    }

    // The run's pid and key are public while it runs (pg_locks), and pids come round again
    // after the owner's console crashed: a login with no Redrive role whose session got the
    // pid holds the key it saw. Reusing a pid takes tens of thousands of connections, so the
    // superuser writes the row as begin_bulk_run left it, naming that session's pid and key.
    // That session is not the run holder (it is not the owner's login): the bulk is not
    // running, and another on-call operator takes it over (migration 24).
    void reusedPidOfAnotherLoginIsNotTheRunHolder()
    {
        const QString queue = QStringLiteral("pidreuse");
        const auto targets = deadLetters(kTargets, queue);
        const QUuid bulkId = startAndCrash(targets, 2, QStringLiteral("runner"));
        PgConnection nobody = tcp(m_nobody);
        const auto pid = nobody.exec("SELECT pg_backend_pid(), pg_advisory_lock(1380209218, 77)");
        QVERIFY2(pid, pid ? "" : qPrintable(pid.error().summary()));
        q("UPDATE redrive.bulk_operation SET run_pid = $2, run_key = 77 WHERE bulk_id = $1",
          QueryParams().addUuid(bulkId).addInt(pid->integer(0, 0).value_or(0)));
        QCOMPARE(q("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND granted"
                   "   AND classid = 1380209218::oid AND objid = 77 AND pid = $1",
                   QueryParams().addInt(pid->integer(0, 0).value_or(0)))
                     .bigInt(0, 0),
                 std::optional<qint64>(1));

        PgConnection bob = tcp(m_oncall2);
        auto running = bob.exec("SELECT running FROM redrive.bulk_action_list WHERE bulk_id = $1",
                                QueryParams().addUuid(bulkId));
        QVERIFY2(running, running ? "" : qPrintable(running.error().summary()));
        QCOMPARE(running->boolean(0, 0), std::optional<bool>(false));
        const auto taken = bob.exec(statementSql(Statement::ActionTakeOverBulk),
                                    QueryParams()
                                        .addUuid(QUuid::createUuid())
                                        .addUuid(bulkId)
                                        .addText(m_oncall)
                                        .addText(QStringLiteral("alice's console crashed"))
                                        .addText(QString())
                                        .addText(QStringLiteral("bob")));
        QVERIFY2(taken, taken ? "" : qPrintable(taken.error().summary()));
        QCOMPARE(outcomeOf(taken).value(QStringLiteral("applied")).toInt(), 1);
        QCOMPARE(q("SELECT actor FROM redrive.bulk_operation WHERE bulk_id = $1",
                   QueryParams().addUuid(bulkId))
                     .text(0, 0),
                 m_oncall2);
        QVERIFY(nobody.exec("SELECT pg_advisory_unlock_all()").ok());
    }
};

QTEST_GUILESS_MAIN(TestCrashSafety)
#include "tst_crash_safety.moc"
