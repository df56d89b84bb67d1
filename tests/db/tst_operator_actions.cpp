// SPDX-License-Identifier: GPL-3.0-or-later
// Operator actions under audit with real login roles: one transaction with
// the audit entry, action ids, version conflicts, bulk chunks with resume, leases, compensation
// with maker-checker, what an auditor cannot do, and a tamper-evident audit chain.
#include "models/bulk_action_runner.h"
#include "models/db/database_session.h"
#include "models/db/schema_migrator.h"
#include "models/db/sql_statement.h"
#include "models/worker/job_runner.h"
#include "tests/support/test_database.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTest>
#include <thread>

using namespace redrive;
using namespace redrive::db;

namespace {

QJsonObject outcomeOf(const DbExpected<ResultSet> &r)
{
    return r ? QJsonDocument::fromJson(r->raw(0, 0)).object() : QJsonObject();
}

QByteArray targets(const QList<std::pair<qint64, int>> &list)
{
    QJsonArray a;
    for (const auto &[id, version] : list)
        a.append(
            QJsonObject { { QStringLiteral("id"), id }, { QStringLiteral("version"), version } });
    return QJsonDocument(a).toJson(QJsonDocument::Compact);
}

// Waits for `finished` as long as the runner keeps applying chunks: fails only when no chunk
// finished for two minutes, so a loaded machine makes the test slower, never wrong.
bool waitWhileProgressing(QSignalSpy &finished, BulkActionRunner &runner)
{
    int last = runner.chunksDone();
    QElapsedTimer stalled;
    stalled.start();
    while (finished.isEmpty()) {
        if (finished.wait(1000))
            break;
        if (runner.chunksDone() != last) {
            last = runner.chunksDone();
            stalled.restart();
        } else if (stalled.elapsed() > 120000) {
            return false;
        }
    }
    return true;
}

} // namespace

class TestOperatorActions : public QObject
{
    Q_OBJECT
private:
    std::unique_ptr<test::TestDatabase> m_db;
    PgConnection m_admin;
    QString m_oncall, m_oncall2, m_support, m_approver, m_auditor, m_supportApprover;

    PgConnection as(const QString &login) { return m_db->connectAs(login); }

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

    // n dead letters (jobs state dead) for payment entity pay_<id>; returns (id, version) pairs.
    QList<std::pair<qint64, int>> deadLetters(int n,
                                              const QString &queue = QStringLiteral("payments"))
    {
        const ResultSet r
            = q("WITH j AS (INSERT INTO redrive.job (queue, kind, payload, state, idempotency_key,"
                "                                    entity_id)"
                "           SELECT $1, 'charge_card', jsonb_build_object('n', g), 'dead',"
                "                  'charge:' || $1 || g, 'pay_' || $1 || g"
                "             FROM generate_series(1, $2) g RETURNING id, queue, kind,"
                "                  idempotency_key)"
                "INSERT INTO redrive.dead_letter (job_id, queue, kind, error_class, error_code,"
                "                                 last_error, idempotency_key)"
                "SELECT id, queue, kind, 'transient', 'provider_5xx', '502 Bad Gateway',"
                "       idempotency_key FROM j RETURNING id, version",
                QueryParams().addText(queue).addInt(n));
        QList<std::pair<qint64, int>> out;
        for (int i = 0; i < r.rowCount(); ++i)
            out.append({ r.bigInt(i, 0).value_or(0), r.integer(i, 1).value_or(0) });
        std::sort(out.begin(), out.end());
        return out;
    }

    DbExpected<ResultSet> requeue(PgConnection &c, const QUuid &actionId, const QByteArray &t)
    {
        return c.exec(statementSql(Statement::ActionRequeue),
                      QueryParams()
                          .addUuid(actionId)
                          .addJson(t)
                          .addBool(true)
                          .addText(QStringLiteral("provider recovered"))
                          .addNull(ParamType::Text)
                          .addText(QStringLiteral("tester"))
                          .addNull(ParamType::Uuid)
                          .addNull(ParamType::Int));
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_db = std::make_unique<test::TestDatabase>(QStringLiteral("actions"));
        QVERIFY2(m_db->isValid(), qPrintable(m_db->error()));
        m_admin = m_db->connect();
        const QString oncall = QStringLiteral("redrive_oncall");
        const QString support = QStringLiteral("redrive_support");
        const QString approver = QStringLiteral("redrive_approver");
        m_oncall = m_db->createLogin(QStringLiteral("alice"), { oncall });
        m_oncall2 = m_db->createLogin(QStringLiteral("adam"), { oncall });
        m_support = m_db->createLogin(QStringLiteral("bob"), { support });
        m_approver = m_db->createLogin(QStringLiteral("carol"), { approver });
        m_auditor
            = m_db->createLogin(QStringLiteral("dave"), { QStringLiteral("redrive_auditor") });
        m_supportApprover = m_db->createLogin(QStringLiteral("erin"), { support, approver });
        // A payments ledger for compensation: every pay_* entity was charged 5,000 minor units
        // of USD. The view names its amounts as a site wrote it before schema version 21.
        q("CREATE OR REPLACE VIEW redrive.payment_list AS"
          " SELECT j.entity_id AS payment_ref, 'ch_' || j.entity_id AS charge_ref,"
          "        5000::bigint AS charged_cents, 0::bigint AS refunded_cents, 'USD'::text AS "
          "currency"
          "   FROM redrive.job j WHERE j.entity_id IS NOT NULL");
    }
    void cleanupTestCase()
    {
        m_admin = PgConnection();
        m_db.reset(); // drops the database, then the logins
    }

    void requeueCommitsEffectAndAuditTogether()
    {
        const auto dl = deadLetters(1, QStringLiteral("q1"));
        PgConnection alice = as(m_oncall);
        const QUuid id = QUuid::createUuid();
        auto r = requeue(alice, id, targets(dl));
        QVERIFY2(r.ok(), r.ok() ? "" : qPrintable(r.error().summary()));
        const QJsonObject o = outcomeOf(r);
        QCOMPARE(o.value(QStringLiteral("applied")).toInt(), 1);
        QCOMPARE(q("SELECT status FROM redrive.dead_letter WHERE id = $1",
                   QueryParams().addBigInt(dl[0].first))
                     .text(0, 0),
                 QStringLiteral("requeued"));
        QCOMPARE(count("SELECT count(*) FROM redrive.outbox WHERE action_id = $1",
                       QueryParams().addUuid(id)),
                 1);
        const ResultSet audit = q("SELECT db_user, os_user, action, jsonb_array_length(targets),"
                                  " outcome ->> 'applied', hash IS NOT NULL"
                                  " FROM redrive.audit_log WHERE action_id = $1",
                                  QueryParams().addUuid(id));
        QCOMPARE(audit.rowCount(), 1);
        QCOMPARE(audit.text(0, 0), m_oncall);
        QCOMPARE(audit.text(0, 1), QStringLiteral("tester"));
        QCOMPARE(audit.text(0, 2), QStringLiteral("requeue"));
        QCOMPARE(audit.integer(0, 3), std::optional<int>(1));
        QCOMPARE(audit.text(0, 4), QStringLiteral("1"));
        QCOMPARE(audit.boolean(0, 5), std::optional<bool>(true));
    }

    void failureAfterTheEffectLeavesNeither()
    {
        const auto dl = deadLetters(1, QStringLiteral("q2"));
        // Make the audit append fail: the effect before it must roll back with it.
        q("CREATE FUNCTION public.fail_audit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
          " RAISE EXCEPTION 'audit store unavailable'; END $$");
        q("CREATE TRIGGER zz_fail BEFORE INSERT ON redrive.audit_log FOR EACH ROW"
          " EXECUTE FUNCTION public.fail_audit()");
        PgConnection alice = as(m_oncall);
        const QUuid id = QUuid::createUuid();
        auto r = requeue(alice, id, targets(dl));
        q("DROP TRIGGER zz_fail ON redrive.audit_log");
        q("DROP FUNCTION public.fail_audit()");
        QVERIFY(!r.ok());
        QCOMPARE(q("SELECT status FROM redrive.dead_letter WHERE id = $1",
                   QueryParams().addBigInt(dl[0].first))
                     .text(0, 0),
                 QStringLiteral("open"));
        QCOMPARE(count("SELECT count(*) FROM redrive.outbox WHERE action_id = $1",
                       QueryParams().addUuid(id)),
                 0);
        QCOMPARE(count("SELECT count(*) FROM redrive.operator_action WHERE action_id = $1",
                       QueryParams().addUuid(id)),
                 0);
        // And the same action id works afterwards: nothing half-done was recorded.
        auto again = requeue(alice, id, targets(dl));
        QVERIFY(again.ok());
        QCOMPARE(outcomeOf(again).value(QStringLiteral("applied")).toInt(), 1);
    }

    void sameActionIdTwiceHasOneEffect()
    {
        const auto dl = deadLetters(2, QStringLiteral("q3"));
        PgConnection alice = as(m_oncall);
        const QUuid id = QUuid::createUuid();
        const QJsonObject first = outcomeOf(requeue(alice, id, targets(dl)));
        const QJsonObject second = outcomeOf(requeue(alice, id, targets(dl)));
        QCOMPARE(first.value(QStringLiteral("applied")).toInt(), 2);
        QCOMPARE(second.value(QStringLiteral("applied")).toInt(), 2); // the first outcome
        QCOMPARE(second.value(QStringLiteral("replayed")).toBool(), true);
        QCOMPARE(count("SELECT count(*) FROM redrive.outbox WHERE action_id = $1",
                       QueryParams().addUuid(id)),
                 2);
        QCOMPARE(count("SELECT count(*) FROM redrive.audit_log WHERE action_id = $1",
                       QueryParams().addUuid(id)),
                 1);
    }

    void twoSessionsRequeueTheSameDeadLetter()
    {
        const auto dl = deadLetters(1, QStringLiteral("q4"));
        PgConnection a = as(m_oncall);
        PgConnection b = as(m_oncall2);
        QVERIFY(a.exec("BEGIN").ok());
        const QJsonObject fromA = outcomeOf(requeue(a, QUuid::createUuid(), targets(dl)));
        std::optional<QJsonObject> fromB;
        std::thread other([&] { fromB = outcomeOf(requeue(b, QUuid::createUuid(), targets(dl))); });
        QTest::qWait(300); // b now waits for a's row lock
        QVERIFY(a.exec("COMMIT").ok());
        other.join();
        QCOMPARE(fromA.value(QStringLiteral("applied")).toInt(), 1);
        QCOMPARE(fromB->value(QStringLiteral("applied")).toInt(), 0);
        QCOMPARE(fromB->value(QStringLiteral("conflicts")).toInt(), 1);
        QCOMPARE(count("SELECT count(*) FROM redrive.outbox WHERE target_id = ("
                       " SELECT job_id::text FROM redrive.dead_letter WHERE id = $1)",
                       QueryParams().addBigInt(dl[0].first)),
                 1);
    }

    void bulkOf500WithThreeChangedAfterPreview()
    {
        const auto dl = deadLetters(500, QStringLiteral("q5"));
        // Three change between preview and confirmation.
        q("UPDATE redrive.dead_letter SET claimed_by = 'someone' WHERE id = ANY ($1)",
          QueryParams().addBigIntArray({ dl[10].first, dl[200].first, dl[499].first }));
        PgConnection alice = as(m_oncall);
        const QUuid id = QUuid::createUuid();
        const QJsonObject o = outcomeOf(requeue(alice, id, targets(dl)));
        QCOMPARE(o.value(QStringLiteral("confirmed")).toInt(), 500);
        QCOMPARE(o.value(QStringLiteral("applied")).toInt(), 497);
        QCOMPARE(o.value(QStringLiteral("conflicts")).toInt(), 3);
        QCOMPARE(o.value(QStringLiteral("results")).toArray().size(), 3); // named, not silent
        // The entry names all 500 targets, each with its result, so the three conflicts are
        // found by target too.
        const ResultSet audit
            = q("SELECT jsonb_array_length(targets), (outcome ->> 'applied')::int,"
                "       (SELECT count(*) FROM jsonb_array_elements(targets) t"
                "         WHERE t ->> 'result' = 'applied'),"
                "       (SELECT count(*) FROM jsonb_array_elements(targets) t"
                "         WHERE t ->> 'result' = 'conflict')"
                "  FROM redrive.audit_log WHERE action_id = $1",
                QueryParams().addUuid(id));
        QCOMPARE(audit.integer(0, 0), std::optional<int>(500));
        QCOMPARE(audit.integer(0, 1), std::optional<int>(497));
        QCOMPARE(audit.integer(0, 2), std::optional<int>(497));
        QCOMPARE(audit.integer(0, 3), std::optional<int>(3));
        QCOMPARE(count("SELECT count(*) FROM redrive.dead_letter WHERE queue = 'q5'"
                       " AND status = 'requeued'"),
                 497);
    }

    void bulkInChunksCancelledAndResumed()
    {
        const auto dl = deadLetters(100000, QStringLiteral("q6"));
        DatabaseSession session(m_db->consoleSettingsAs(m_oncall));
        session.open();
        BulkActionRunner runner(&session);
        BulkActionRunner::Request request;
        for (const auto &[id, version] : dl)
            request.targets.append({ id, version });
        request.reason = QStringLiteral("provider incident over");
        request.osUser = QStringLiteral("tester");
        request.chunkSize = 1000;
        QSignalSpy finished(&runner, &BulkActionRunner::finished);
        bool cancelledOnce = false;
        connect(&runner, &BulkActionRunner::progress, &runner, [&](int done, int) {
            if (done == 50 && !cancelledOnce) {
                cancelledOnce = true;
                runner.cancel();
            }
        });
        runner.start(request);
        QVERIFY(waitWhileProgressing(finished, runner));
        QCOMPARE(finished.first().first().toBool(), true); // cancelled
        QCOMPARE(runner.chunksDone(), 50);
        QCOMPARE(count("SELECT count(*) FROM redrive.dead_letter WHERE queue = 'q6'"
                       " AND status = 'requeued'"),
                 50000);

        finished.clear();
        runner.resume();
        QVERIFY(waitWhileProgressing(finished, runner));
        QCOMPARE(finished.first().first().toBool(), false);
        QCOMPARE(runner.totals().applied, 100000); // replayed chunks report their first outcome
        QCOMPARE(count("SELECT count(*) FROM redrive.dead_letter WHERE queue = 'q6'"
                       " AND status = 'requeued'"),
                 100000);
        // Statistics for the 100,000 new rows first: planned on a never-analyzed table, the
        // join below ran as a nested loop past the test's 5-minute limit.
        QVERIFY(m_admin.exec("ANALYZE redrive.outbox, redrive.job, redrive.dead_letter").ok());
        QCOMPARE(count("SELECT count(*) FROM redrive.outbox o JOIN redrive.job j"
                       " ON o.target_type = 'job' AND o.target_id = j.id::text"
                       " WHERE j.queue = 'q6'"),
                 100000); // each applied exactly once
        QCOMPARE(count("SELECT count(*) FROM redrive.audit_log a JOIN redrive.operator_action o"
                       " USING (action_id) WHERE o.bulk_id = $1",
                       QueryParams().addUuid(runner.bulkId())),
                 100);
        QCOMPARE(count("SELECT sum((a.outcome ->> 'applied')::int) FROM redrive.audit_log a JOIN"
                       " redrive.operator_action o USING (action_id) WHERE o.bulk_id = $1",
                       QueryParams().addUuid(runner.bulkId())),
                 100000);
        QCOMPARE(count("SELECT target_count FROM redrive.bulk_operation WHERE bulk_id = $1",
                       QueryParams().addUuid(runner.bulkId())),
                 100000);
    }

    void requeueOfALeasedJobIsRefused()
    {
        const auto dl = deadLetters(2, QStringLiteral("q7"));
        q("UPDATE redrive.job SET state = 'running', locked_by = 'w9',"
          " locked_until = clock_timestamp() + interval '5 minutes'"
          " WHERE id = (SELECT job_id FROM redrive.dead_letter WHERE id = $1)",
          QueryParams().addBigInt(dl[0].first));
        q("UPDATE redrive.job SET state = 'running', locked_by = 'w9',"
          " locked_until = clock_timestamp() - interval '5 minutes'"
          " WHERE id = (SELECT job_id FROM redrive.dead_letter WHERE id = $1)",
          QueryParams().addBigInt(dl[1].first));
        PgConnection alice = as(m_oncall);
        const QJsonObject o = outcomeOf(requeue(alice, QUuid::createUuid(), targets(dl)));
        QCOMPARE(o.value(QStringLiteral("applied")).toInt(), 0);
        QCOMPARE(o.value(QStringLiteral("refused")).toInt(), 2); // live lease, and expired one
        QCOMPARE(count("SELECT count(*) FROM redrive.dead_letter WHERE queue = 'q7'"
                       " AND status = 'open'"),
                 2);
    }

    void compensationWithMakerChecker()
    {
        const auto dl = deadLetters(2, QStringLiteral("q8"));
        PgConnection bob = as(m_support);
        auto request = [&](PgConnection &c, qint64 id, int version, qint64 minor) {
            return c.exec(statementSql(Statement::ActionRequestCompensation),
                          QueryParams()
                              .addUuid(QUuid::createUuid())
                              .addText(QStringLiteral("dead_letter"))
                              .addBigInt(id)
                              .addInt(version)
                              .addText(QStringLiteral("refund"))
                              .addBigInt(minor)
                              .addText(QStringLiteral("customer charged, order cancelled"))
                              .addText(QStringLiteral("SUP-123"))
                              .addText(QStringLiteral("tester")));
        };
        // Below the threshold: approved at once, an outbox command for the worker.
        auto small = request(bob, dl[0].first, dl[0].second, 1500);
        QVERIFY2(small.ok(), small.ok() ? "" : qPrintable(small.error().summary()));
        QCOMPARE(outcomeOf(small).value(QStringLiteral("requires_approval")).toBool(), false);
        QCOMPARE(count("SELECT count(*) FROM redrive.outbox WHERE command = 'compensate'"), 1);
        // A second open refund for the same target is refused by the unique index.
        const int v = q("SELECT version FROM redrive.dead_letter WHERE id = $1",
                        QueryParams().addBigInt(dl[0].first))
                          .integer(0, 0)
                          .value_or(0);
        auto second = request(bob, dl[0].first, v, 1000);
        QVERIFY(!second.ok());
        QCOMPARE(second.error().sqlState(), QStringLiteral("23505"));
        QCOMPARE(second.error().kind(), ErrorKind::Constraint);
        // More than was charged: refused.
        auto tooMuch = request(bob, dl[1].first, dl[1].second, 999999);
        QVERIFY(!tooMuch.ok());
        QCOMPARE(tooMuch.error().kind(), ErrorKind::Constraint);

        // At the threshold: waits for a second person, never the requester.
        q("UPDATE redrive.settings SET compensation_approval_minor = 2000");
        PgConnection erin = as(m_supportApprover);
        auto big = request(erin, dl[1].first, dl[1].second, 2500);
        QVERIFY(big.ok());
        const qint64 requestId
            = qint64(outcomeOf(big).value(QStringLiteral("compensation_id")).toDouble());
        QCOMPARE(outcomeOf(big).value(QStringLiteral("requires_approval")).toBool(), true);
        auto decide = [&](PgConnection &c, bool approve) {
            const int version = q("SELECT version FROM redrive.compensation_request WHERE id = $1",
                                  QueryParams().addBigInt(requestId))
                                    .integer(0, 0)
                                    .value_or(0);
            return c.exec(statementSql(Statement::ActionDecideCompensation),
                          QueryParams()
                              .addUuid(QUuid::createUuid())
                              .addBigInt(requestId)
                              .addInt(version)
                              .addBool(approve)
                              .addText(QStringLiteral("checked the order"))
                              .addText(QStringLiteral("tester")));
        };
        auto own = decide(erin, true); // holds the approver role, still refused
        QVERIFY(!own.ok());
        QCOMPARE(own.error().kind(), ErrorKind::Permission);
        PgConnection bobAgain = as(m_support);
        auto notApprover = decide(bobAgain, true);
        QVERIFY(!notApprover.ok());
        QCOMPARE(notApprover.error().kind(), ErrorKind::Permission);
        PgConnection carol = as(m_approver);
        auto approved = decide(carol, true);
        QVERIFY2(approved.ok(), approved.ok() ? "" : qPrintable(approved.error().summary()));
        QCOMPARE(q("SELECT status, decided_by FROM redrive.compensation_list WHERE id = $1",
                   QueryParams().addBigInt(requestId))
                     .text(0, 0),
                 QStringLiteral("approved"));
        QCOMPARE(count("SELECT count(*) FROM redrive.outbox WHERE command = 'compensate'"), 2);
        // The table itself refuses a self-approval written by anyone, even the owner.
        auto direct = m_admin.exec(
            "INSERT INTO redrive.compensation_approval (request_id, requested_by, decided_by,"
            " decision, reason, action_id) VALUES ($1, 'x', 'x', 'approved', 'r', "
            "gen_random_uuid())",
            QueryParams().addBigInt(requestId));
        QVERIFY(!direct.ok());
        QCOMPARE(direct.error().kind(), ErrorKind::Constraint);
    }

    void releaseKeyOnlyAfterItsLeaseExpired()
    {
        q("INSERT INTO redrive.idempotency_key (scope, key, request_hash, state, locked_by,"
          " locked_until) VALUES ('charge_card', 'k-live', repeat('a', 64), 'processing', 'w1',"
          " clock_timestamp() + interval '1 hour'), ('charge_card', 'k-stuck', repeat('b', 64),"
          " 'processing', 'w1', clock_timestamp() - interval '1 hour')");
        PgConnection bob = as(m_support);
        auto release = [&](const QString &key) {
            return outcomeOf(bob.exec(statementSql(Statement::ActionReleaseKey),
                                      QueryParams()
                                          .addUuid(QUuid::createUuid())
                                          .addText(QStringLiteral("charge_card"))
                                          .addText(key)
                                          .addInt(1)
                                          .addText(QStringLiteral("worker w1 is gone"))
                                          .addNull(ParamType::Text)
                                          .addText(QStringLiteral("tester"))));
        };
        QCOMPARE(release(QStringLiteral("k-live")).value(QStringLiteral("refused")).toInt(), 1);
        QCOMPARE(release(QStringLiteral("k-stuck")).value(QStringLiteral("applied")).toInt(), 1);
        QCOMPARE(q("SELECT state FROM redrive.idempotency_key WHERE key = 'k-stuck'").text(0, 0),
                 QStringLiteral("failed"));
        QCOMPARE(q("SELECT state FROM redrive.idempotency_key WHERE key = 'k-live'").text(0, 0),
                 QStringLiteral("processing"));
    }

    void auditorCannotWriteAnything()
    {
        PgConnection dave = as(m_auditor);
        // Reading works.
        QVERIFY(dave.exec("SELECT count(*) FROM redrive.dead_letter").ok());
        QVERIFY(dave.exec("SELECT * FROM redrive.verify_audit_chain()").ok());
        // Every table: no INSERT, UPDATE or DELETE, even with read-only switched off.
        QVERIFY(dave.exec("SET default_transaction_read_only = off").ok());
        auto tables = m_admin.exec(
            "SELECT c.relname, (SELECT a.attname FROM pg_attribute a WHERE a.attrelid = c.oid"
            "   AND a.attnum > 0 AND NOT a.attisdropped AND a.attidentity = '' AND a.attgenerated "
            "= ''"
            "   ORDER BY a.attnum DESC LIMIT 1) FROM pg_class c WHERE c.relnamespace ="
            " 'redrive'::regnamespace AND c.relkind = 'r' ORDER BY 1");
        QVERIFY(tables->rowCount() >= 15);
        for (int i = 0; i < tables->rowCount(); ++i) {
            const QByteArray t = "redrive." + dave.quoteIdentifier(tables->text(i, 0));
            const QByteArray col = dave.quoteIdentifier(tables->text(i, 1));
            for (const QByteArray &sql : { "INSERT INTO " + t + " DEFAULT VALUES",
                                           "UPDATE " + t + " SET " + col + " = " + col,
                                           "DELETE FROM " + t, "TRUNCATE " + t }) {
                auto r = dave.exec(sql);
                QVERIFY2(!r.ok(), sql.constData());
                QVERIFY2(r.error().kind() == ErrorKind::Permission
                             || r.error().sqlState() == QLatin1String("42703"),
                         qPrintable(QString::fromUtf8(sql) + QStringLiteral(": ")
                                    + r.error().summary()));
            }
        }
        // Every action function.
        for (Statement s :
             { Statement::ActionRequeue, Statement::ActionEditAndRequeue, Statement::ActionResolve,
               Statement::ActionClaim, Statement::ActionNote, Statement::ActionReleaseKey,
               Statement::ActionResolveMismatch, Statement::ActionRequestCompensation,
               Statement::ActionDecideCompensation, Statement::ActionFreezeBulk }) {
            const QByteArray sql = statementSql(s);
            const int params = sql.count('$') ? [&] {
                int maxN = 0;
                for (qsizetype i = sql.indexOf('$'); i >= 0; i = sql.indexOf('$', i + 1))
                    maxN = std::max(maxN, sql.mid(i + 1, 2).toInt());
                return maxN;
            }()
                                              : 0;
            QueryParams p;
            for (int n = 0; n < params; ++n)
                p.addNull(ParamType::Text);
            auto called = dave.prepare("try_" + statementName(s).toUtf8(), sql);
            QVERIFY(called.ok());
            auto exec = dave.execPrepared("try_" + statementName(s).toUtf8(), p);
            QVERIFY2(!exec.ok(), qPrintable(statementName(s)));
            QCOMPARE(exec.error().kind(), ErrorKind::Permission);
        }
        // No way into another group.
        auto setRole = dave.exec("SET ROLE redrive_oncall");
        QVERIFY(!setRole.ok());
        QCOMPARE(setRole.error().kind(), ErrorKind::Permission);
        auto worker = dave.exec("SET ROLE redrive_worker");
        QVERIFY(!worker.ok());
    }

    void auditChainDetectsTampering()
    {
        PgConnection alice = as(m_oncall);
        const auto dl = deadLetters(3, QStringLiteral("q9"));
        for (const auto &t : dl)
            QVERIFY(requeue(alice, QUuid::createUuid(), targets({ t })).ok());
        // Operators cannot change or delete entries.
        QVERIFY(!alice.exec("UPDATE redrive.audit_log SET reason = 'x'").ok());
        QVERIFY(!alice.exec("DELETE FROM redrive.audit_log").ok());
        QCOMPARE(q("SELECT count(*) FROM redrive.verify_audit_chain()").bigInt(0, 0),
                 std::optional<qint64>(0));
        const ResultSet head = q(statementSql(Statement::AuditChainHead));
        const qint64 headId = head.bigInt(0, 0).value_or(0);
        const QString headHash = head.text(0, 1);

        // The owner, with the trigger off, rewrites an entry in the middle: named.
        const qint64 victim
            = q("SELECT id FROM redrive.audit_log ORDER BY id DESC OFFSET 1 LIMIT 1")
                  .bigInt(0, 0)
                  .value_or(0);
        q("ALTER TABLE redrive.audit_log DISABLE TRIGGER audit_log_no_update_delete");
        q("UPDATE redrive.audit_log SET reason = 'nothing to see' WHERE id = $1",
          QueryParams().addBigInt(victim));
        const ResultSet broken
            = q(statementSql(Statement::VerifyAuditChain),
                QueryParams().addNull(ParamType::BigInt).addNull(ParamType::Text));
        QCOMPARE(broken.rowCount(), 1);
        QCOMPARE(broken.bigInt(0, 0), std::optional<qint64>(victim));
        // Put it back as it was? It cannot be un-noticed: restore and then cut the tail instead.
        q("UPDATE redrive.audit_log SET reason = 'provider recovered' WHERE id = $1",
          QueryParams().addBigInt(victim));
        QCOMPARE(q(statementSql(Statement::VerifyAuditChain),
                   QueryParams().addNull(ParamType::BigInt).addNull(ParamType::Text))
                     .rowCount(),
                 0);
        q("DELETE FROM redrive.audit_log WHERE id >= $1", QueryParams().addBigInt(victim));
        q("ALTER TABLE redrive.audit_log ENABLE TRIGGER audit_log_no_update_delete");
        // The chain that is left is consistent, but the exported head tells the truth.
        QCOMPARE(q(statementSql(Statement::VerifyAuditChain),
                   QueryParams().addNull(ParamType::BigInt).addNull(ParamType::Text))
                     .rowCount(),
                 0);
        const ResultSet cut = q(statementSql(Statement::VerifyAuditChain),
                                QueryParams().addBigInt(headId).addText(headHash));
        QCOMPARE(cut.rowCount(), 1);
        QVERIFY(cut.text(0, 1).contains(QStringLiteral("deleted")));
    }

    void workerRelaysACompensationOnce()
    {
        test::TestDatabase db(QStringLiteral("actions_relay"));
        PgConnection admin = db.connect();
        QVERIFY(SchemaMigrator(admin, MigrationSet::simulatedWorld()).migrate().ok());
        QVERIFY(admin
                    .execScript(R"sql(
            INSERT INTO sim.ledger_order VALUES ('ord_1', 'C', 'c@example.com', 4200, 'USD', now());
            INSERT INTO sim.provider_charge (id, idempotency_key, payment_ref, amount_minor,
                                             currency, created_at)
                 VALUES ('ch_1', 'charge:pay_1', 'pay_1', 4200, 'USD', now());
            INSERT INTO sim.ledger_payment (id, order_id, amount_minor, currency, idempotency_key,
                                            provider_charge_id, status, created_at, updated_at)
                 VALUES ('pay_1', 'ord_1', 4200, 'USD', 'charge:pay_1', 'ch_1', 'succeeded',
                         now(), now());
            INSERT INTO redrive.job (queue, kind, payload, state, entity_id)
                 VALUES ('emails', 'send_receipt', '{}', 'dead', 'pay_1');
            INSERT INTO redrive.dead_letter (job_id, queue, kind, error_class, last_error)
                 SELECT id, queue, kind, 'ambiguous', 'timeout' FROM redrive.job;)sql")
                    .ok());
        PgConnection bob = db.connectAs(m_support);
        auto requested = bob.exec(statementSql(Statement::ActionRequestCompensation),
                                  QueryParams()
                                      .addUuid(QUuid::createUuid())
                                      .addText(QStringLiteral("dead_letter"))
                                      .addBigInt(1)
                                      .addInt(1)
                                      .addText(QStringLiteral("refund"))
                                      .addBigInt(4200)
                                      .addText(QStringLiteral("order cancelled"))
                                      .addNull(ParamType::Text)
                                      .addText(QStringLiteral("tester")));
        QVERIFY2(requested.ok(), requested.ok() ? "" : qPrintable(requested.error().summary()));
        worker::FaultInjector faults(1);
        worker::WorkerClock clock = worker::WorkerClock::real();
        worker::JobRunner runner(
            admin, worker::WorkerConfig::referenceDefaults(QStringLiteral("w")), &faults, &clock);
        QCOMPARE(runner.relayOutbox().value(), 1);
        QCOMPARE(runner.relayOutbox().value(), 0);
        QCOMPARE(admin.exec("SELECT count(*) FROM sim.provider_refund")->integer(0, 0),
                 std::optional<int>(1));
        QCOMPARE(admin.exec("SELECT status FROM redrive.dead_letter")->text(0, 0),
                 QStringLiteral("compensated"));
        QCOMPARE(admin.exec("SELECT status FROM redrive.compensation_request")->text(0, 0),
                 QStringLiteral("done"));
        QCOMPARE(admin.exec("SELECT status FROM sim.provider_charge")->text(0, 0),
                 QStringLiteral("refunded"));
    }

    // The site's payment_list (docs/domain.md, "The payments contract") may name its amount
    // columns as before migration 21 (charged_cents, refunded_cents) or as after it
    // (charged_minor, refunded_minor): the request dialog's statement reads the same amounts
    // either way, and a request is capped by them. Last: it renames the view's columns.
    void sitePaymentListWithEitherAmountNames()
    {
        const auto dl = deadLetters(1, QStringLiteral("qsite"));
        PgConnection bob = as(m_support);
        auto target = [&] {
            return bob.exec(statementSql(Statement::CompensationTarget),
                            QueryParams().addBigInt(dl[0].first));
        };
        auto request = [&](qint64 minor) {
            const int version = int(count("SELECT version FROM redrive.dead_letter WHERE id = $1",
                                          QueryParams().addBigInt(dl[0].first)));
            return bob.exec(statementSql(Statement::ActionRequestCompensation),
                            QueryParams()
                                .addUuid(QUuid::createUuid())
                                .addText(QStringLiteral("dead_letter"))
                                .addBigInt(dl[0].first)
                                .addInt(version)
                                .addText(QStringLiteral("refund"))
                                .addBigInt(minor)
                                .addText(QStringLiteral("order cancelled after the charge"))
                                .addNull(ParamType::Text)
                                .addText(QStringLiteral("tester")));
        };
        // The old names (initTestCase's view): 5,000 charged, nothing refunded.
        auto old = target();
        QVERIFY2(old.ok(), old.ok() ? "" : qPrintable(old.error().summary()));
        QCOMPARE(old->bigInt(0, QStringLiteral("charged_minor")).value_or(-1), 5000);
        QCOMPARE(old->bigInt(0, QStringLiteral("refunded_minor")).value_or(-1), 0);
        QCOMPARE(old->bigInt(0, QStringLiteral("refundable_minor")).value_or(-1), 5000);
        QCOMPARE(old->text(0, old->columnIndex(QStringLiteral("currency"))), QStringLiteral("USD"));
        // The site takes the new names in place, then writes its view with them.
        q("ALTER VIEW redrive.payment_list RENAME COLUMN charged_cents TO charged_minor");
        q("ALTER VIEW redrive.payment_list RENAME COLUMN refunded_cents TO refunded_minor");
        q("CREATE OR REPLACE VIEW redrive.payment_list AS"
          " SELECT j.entity_id AS payment_ref, 'ch_' || j.entity_id AS charge_ref,"
          "        7000::bigint AS charged_minor, 500::bigint AS refunded_minor,"
          "        'USD'::text AS currency"
          "   FROM redrive.job j WHERE j.entity_id IS NOT NULL");
        auto renamed = target();
        QVERIFY2(renamed.ok(), renamed.ok() ? "" : qPrintable(renamed.error().summary()));
        QCOMPARE(renamed->bigInt(0, QStringLiteral("charged_minor")).value_or(-1), 7000);
        QCOMPARE(renamed->bigInt(0, QStringLiteral("refunded_minor")).value_or(-1), 500);
        QCOMPARE(renamed->bigInt(0, QStringLiteral("refundable_minor")).value_or(-1), 6500);
        // A request is capped by what the view now says.
        auto tooMuch = request(6501);
        QVERIFY(!tooMuch.ok());
        QCOMPARE(tooMuch.error().sqlState(), QStringLiteral("23514"));
        auto exact = request(6500);
        QVERIFY2(exact.ok(), exact.ok() ? "" : qPrintable(exact.error().summary()));
        QCOMPARE(qint64(outcomeOf(exact).value(QStringLiteral("amount_minor")).toDouble()), 6500);
    }
};

QTEST_GUILESS_MAIN(TestOperatorActions)
#include "tst_operator_actions.moc"
