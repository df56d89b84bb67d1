// SPDX-License-Identifier: GPL-3.0-or-later
// The rules that protect targets, money and the audit trail, attacked as real logins over TCP
// with passwords (docs/security.md): another operator, the worker role, a login with no Redrive
// role, and the owner or a superuser rewriting rows. Each case tries what an attacker tried and
// asserts the exact refusal or the exact state afterwards.
#include "models/audit_chain_verifier.h"
#include "models/bulk_action_runner.h"
#include "models/db/database_session.h"
#include "models/db/sql_statement.h"
#include "tests/support/test_database.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTest>

using namespace redrive;
using namespace redrive::db;

namespace {

const QString kPassword = QStringLiteral("s3cret-pw");

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

} // namespace

class TestHostileInsider : public QObject
{
    Q_OBJECT
private:
    std::unique_ptr<test::TestDatabase> m_db;
    PgConnection m_admin;
    QString m_oncall, m_oncall2, m_support, m_approver, m_auditor, m_worker, m_nobody, m_admin2;

    // A login made with a role and the password, named sec_<name>_<pid>.
    QString login(const char *name, const QString &role)
    {
        return m_db->createLogin(QStringLiteral("sec_") + QLatin1String(name),
                                 role.isEmpty() ? QStringList() : QStringList { role }, kPassword);
    }

    // A login over TCP with its password, search_path as the console sets it.
    PgConnection as(const QString &login)
    {
        return test::TestDatabase::connectWith(m_db->consoleTcpSettingsAs(login, kPassword));
    }

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

    // n open dead letters with dead jobs in `queue`; (id, version) in id order.
    QList<std::pair<qint64, int>> deadLetters(int n, const QString &queue)
    {
        const ResultSet r
            = q("WITH j AS (INSERT INTO redrive.job (queue, kind, payload, state, entity_id)"
                "           SELECT $1, 'charge_card', jsonb_build_object('n', g), 'dead',"
                "                  'pay_' || $1 || g FROM generate_series(1, $2) g"
                "           RETURNING id, queue, kind)"
                "INSERT INTO redrive.dead_letter (job_id, queue, kind, error_class, error_code,"
                "                                 last_error)"
                "SELECT id, queue, kind, 'transient', 'provider_5xx', '502 Bad Gateway' FROM j"
                " RETURNING id, version",
                QueryParams().addText(queue).addInt(n));
        QList<std::pair<qint64, int>> out;
        for (int i = 0; i < r.rowCount(); ++i)
            out.append({ r.bigInt(i, 0).value_or(0), r.integer(i, 1).value_or(0) });
        std::sort(out.begin(), out.end());
        return out;
    }

    DbExpected<ResultSet> requeue(PgConnection &c, const QUuid &actionId, const QByteArray &t,
                                  const QUuid &bulk = {}, int chunk = -1)
    {
        QueryParams p;
        p.addUuid(actionId)
            .addJson(t)
            .addBool(true)
            .addText(QStringLiteral("provider recovered"))
            .addNull(ParamType::Text)
            .addText(QStringLiteral("tester"));
        if (bulk.isNull())
            p.addNull(ParamType::Uuid).addNull(ParamType::Int);
        else
            p.addUuid(bulk).addInt(chunk);
        return c.exec(statementSql(Statement::ActionRequeue), p);
    }

    DbExpected<ResultSet> note(PgConnection &c, const QUuid &actionId, qint64 deadLetter)
    {
        return c.exec("SELECT redrive.add_note($1, 'dead_letter', $2, 'looked at it', 'tester')",
                      QueryParams().addUuid(actionId).addText(QString::number(deadLetter)));
    }

    static QString stateOf(const DbExpected<ResultSet> &r)
    {
        return r ? QStringLiteral("ok") : r.error().sqlState();
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_db = std::make_unique<test::TestDatabase>(QStringLiteral("hostile"));
        QVERIFY2(m_db->isValid(), qPrintable(m_db->error()));
        m_admin = m_db->connect();
        m_oncall = login("alice", QStringLiteral("redrive_oncall"));
        m_oncall2 = login("mallory", QStringLiteral("redrive_oncall"));
        m_support = login("sue", QStringLiteral("redrive_support"));
        m_approver = login("ann", QStringLiteral("redrive_approver"));
        m_auditor = login("audrey", QStringLiteral("redrive_auditor"));
        m_worker = login("worker", QStringLiteral("redrive_worker"));
        m_nobody = login("nobody", QString());
        m_admin2 = login("owner_level", QStringLiteral("redrive_admin"));
    }

    void cleanupTestCase()
    {
        m_admin = PgConnection();
        m_db.reset(); // drops the database, then the logins
    }

    // Logins really need their password over TCP (the rest of this suite relies on it).
    void wrongPasswordIsRefused()
    {
        auto c = PgConnection::open(m_db->tcpSettingsAs(m_oncall, QStringLiteral("wrong")));
        QVERIFY(!c);
        QVERIFY2(c.error().message().contains(QStringLiteral("password authentication failed")),
                 qPrintable(c.error().summary()));
    }

    // 1. A login with no Redrive role holding every advisory lock it likes blocks no audited
    // action; nor can it, or a reader role, lock the chain's append row.
    void noRoleLoginCannotFreezeTheAuditChain()
    {
        const auto dl = deadLetters(1, QStringLiteral("freeze"));
        PgConnection nobody = as(m_nobody);
        QVERIFY(
            nobody.exec("SELECT pg_advisory_lock(hashtextextended('redrive.audit_log chain', 0))")
                .ok());
        QVERIFY(nobody.exec("SELECT pg_advisory_lock(k) FROM generate_series(1, 2000) k").ok());
        QVERIFY(nobody.exec("SELECT pg_advisory_lock(23157107830904389)").ok());
        QCOMPARE(stateOf(nobody.exec("BEGIN")), QStringLiteral("ok"));
        QCOMPARE(stateOf(nobody.exec("SELECT 1 FROM redrive.audit_chain_lock FOR UPDATE")),
                 QStringLiteral("42501"));
        nobody.exec("ROLLBACK");

        // A reader role: SELECT alone takes no row lock and no lock mode that blocks appends.
        PgConnection auditor = as(m_auditor);
        for (const QByteArray &sql :
             { QByteArray("SELECT 1 FROM redrive.audit_chain_lock FOR SHARE"),
               QByteArray("LOCK TABLE redrive.audit_chain_lock IN SHARE MODE"),
               QByteArray("LOCK TABLE redrive.audit_log IN SHARE MODE") }) {
            QVERIFY(auditor.exec("BEGIN").ok());
            QCOMPARE(stateOf(auditor.exec(sql)), QStringLiteral("42501"));
            QVERIFY(auditor.exec("ROLLBACK").ok());
        }
        PgConnection alice = as(m_oncall);
        QVERIFY(alice.exec("SET statement_timeout = '5s'").ok());
        QElapsedTimer timer;
        timer.start();
        auto noted = note(alice, QUuid::createUuid(), dl[0].first);
        QVERIFY2(noted, qPrintable(noted ? QString() : noted.error().summary()));
        auto requeued = requeue(alice, QUuid::createUuid(), targets(dl));
        QVERIFY2(requeued, qPrintable(requeued ? QString() : requeued.error().summary()));
        QCOMPARE(outcomeOf(requeued).value(QStringLiteral("applied")).toInt(), 1);
        QVERIFY(timer.elapsed() < 5000);
        QVERIFY(nobody.exec("SELECT pg_advisory_unlock_all()").ok());
    }

    // 3. An action id is bound to its actor, its action and its parameters.
    void actionIdsCannotBeHijackedOrReplayedWithOtherParameters()
    {
        const auto dl = deadLetters(3, QStringLiteral("hijack"));
        PgConnection alice = as(m_oncall);
        PgConnection mallory = as(m_oncall2);
        const QUuid id = QUuid::createUuid();

        // Mallory pre-claims the id: Alice's own action with it is then refused (never
        // silently "replayed"), and her fresh id works.
        QVERIFY(note(mallory, id, dl[0].first).ok());
        auto stolen = requeue(alice, id, targets({ dl[0] }));
        QVERIFY(!stolen);
        QCOMPARE(stolen.error().sqlState(), QStringLiteral("42501"));
        QVERIFY(stolen.error().message().contains(QStringLiteral("another login")));

        const QUuid mine = QUuid::createUuid();
        QCOMPARE(outcomeOf(requeue(alice, mine, targets({ dl[0] })))
                     .value(QStringLiteral("applied"))
                     .toInt(),
                 1);
        // Mallory replays Alice's id with Alice's exact request: refused, not her outcome.
        auto replayByOther = requeue(mallory, mine, targets({ dl[0] }));
        QVERIFY(!replayByOther);
        QCOMPARE(replayByOther.error().sqlState(), QStringLiteral("42501"));
        // Alice repeats it exactly: the first outcome, nothing applied twice.
        const QJsonObject again = outcomeOf(requeue(alice, mine, targets({ dl[0] })));
        QCOMPARE(again.value(QStringLiteral("replayed")).toBool(), true);
        QCOMPARE(again.value(QStringLiteral("applied")).toInt(), 1);
        // Alice reuses it with other targets: an error naming the difference.
        auto other = requeue(alice, mine, targets({ dl[1] }));
        QVERIFY(!other);
        QCOMPARE(other.error().sqlState(), QStringLiteral("23505"));
        QVERIFY(other.error().message().contains(QStringLiteral("other targets or parameters")));
        QCOMPARE(count("SELECT status = 'open' FROM redrive.dead_letter WHERE id = $1",
                       QueryParams().addBigInt(dl[1].first))
                     ? 1
                     : 0,
                 1);
        // ... or for another action.
        auto otherAction = note(alice, mine, dl[2].first);
        QVERIFY(!otherAction);
        QVERIFY(otherAction.error().message().contains(QStringLiteral("already used for requeue")));
        QCOMPARE(count("SELECT count(*) FROM redrive.outbox WHERE action_id = $1",
                       QueryParams().addUuid(mine)),
                 1);
    }

    // 3 and 4. A bulk's chunks run only for its owner, only as that chunk of the frozen list,
    // at most once whatever action id they come with; an outcome that answers another request
    // is a failure for the runner.
    void bulkChunksAreBoundToTheirOwnerAndFrozenList()
    {
        const auto dl = deadLetters(6, QStringLiteral("bulkhole"));
        PgConnection alice = as(m_oncall);
        PgConnection mallory = as(m_oncall2);
        const QUuid bulk = QUuid::createUuid();
        QVERIFY(alice
                    .exec(statementSql(Statement::ActionFreezeBulk),
                          QueryParams()
                              .addUuid(bulk)
                              .addText(QStringLiteral("requeue"))
                              .addJson(targets(dl))
                              .addInt(3)
                              .addJson("{\"reset_attempts\": true}")
                              .addText(QStringLiteral("provider recovered"))
                              .addNull(ParamType::Text)
                              .addText(QStringLiteral("tester")))
                    .ok());
        // Another operator cannot run (or pre-empt) a chunk of Alice's bulk.
        auto foreign = requeue(mallory, QUuid::createUuid(), targets(dl.mid(0, 3)), bulk, 0);
        QVERIFY(!foreign);
        QCOMPARE(foreign.error().sqlState(), QStringLiteral("42501"));
        // Nor can Alice slip other targets into a chunk, run a chunk that does not exist, or
        // name a bulk that was never frozen.
        auto wrongSlice = requeue(alice, QUuid::createUuid(), targets(dl.mid(1, 3)), bulk, 0);
        QVERIFY(!wrongSlice);
        QCOMPARE(wrongSlice.error().sqlState(), QStringLiteral("23514"));
        QVERIFY(!requeue(alice, QUuid::createUuid(), targets(dl.mid(0, 3)), bulk, 2));
        auto unknown
            = requeue(alice, QUuid::createUuid(), targets(dl.mid(0, 3)), QUuid::createUuid(), 0);
        QVERIFY(!unknown);
        QCOMPARE(unknown.error().sqlState(), QStringLiteral("P0002"));
        // The chunk runs once; a resume with a new id gets its first outcome back.
        const QJsonObject first
            = outcomeOf(requeue(alice, QUuid::createUuid(), targets(dl.mid(0, 3)), bulk, 0));
        QCOMPARE(first.value(QStringLiteral("applied")).toInt(), 3);
        const QJsonObject resumed
            = outcomeOf(requeue(alice, QUuid::createUuid(), targets(dl.mid(0, 3)), bulk, 0));
        QCOMPARE(resumed.value(QStringLiteral("replayed")).toBool(), true);
        QCOMPARE(resumed.value(QStringLiteral("applied")).toInt(), 3);
        QCOMPARE(count("SELECT count(*) FROM redrive.outbox o JOIN redrive.operator_action a"
                       " ON a.action_id = o.action_id WHERE a.bulk_id = $1",
                       QueryParams().addUuid(bulk)),
                 3);

        // The runner refuses an outcome that is not the answer to its own request.
        QJsonObject forged { { QStringLiteral("bulk_id"), bulk.toString(QUuid::WithoutBraces) },
                             { QStringLiteral("chunk_no"), 0 },
                             { QStringLiteral("confirmed"), 3 } };
        QVERIFY(BulkActionRunner::outcomeMismatch(forged, bulk, 0, 3).isEmpty());
        QVERIFY(!BulkActionRunner::outcomeMismatch(forged, bulk, 1, 3).isEmpty());
        QVERIFY(!BulkActionRunner::outcomeMismatch(forged, QUuid::createUuid(), 0, 3).isEmpty());
        QVERIFY(!BulkActionRunner::outcomeMismatch(forged, bulk, 0, 1000).isEmpty());
    }

    // 3. Mallory pre-claims every action id the old scheme derived from a bulk id (which every
    // role can read): Alice's whole bulk, run by the console's runner, still applies each
    // target exactly once.
    void predictedChunkIdsDoNotStopABulk()
    {
        const auto dl = deadLetters(5, QStringLiteral("predict"));
        PgConnection mallory = as(m_oncall2);
        const auto opened = m_db->openSession(m_db->consoleTcpSettingsAs(m_oncall, kPassword));
        QVERIFY2(opened, qPrintable(m_db->error()));
        DatabaseSession &session = *opened;
        BulkActionRunner runner(&session);
        QSignalSpy finished(&runner, &BulkActionRunner::finished);
        QSignalSpy failed(&runner, &BulkActionRunner::failed);
        QSignalSpy chunkDone(&runner, &BulkActionRunner::chunkFinished);
        BulkActionRunner::Request request;
        request.action = BulkActionRunner::Action::Requeue;
        for (const auto &[id, version] : dl)
            request.targets.append({ id, version });
        request.chunkSize = 2;
        request.resetAttempts = true;
        request.reason = QStringLiteral("provider recovered");
        request.osUser = QStringLiteral("alice");
        // The runner's bulk id is readable from bulk_operation as soon as it is frozen; claim
        // the v5-derived ids of all its chunks before its first chunk commits.
        connect(&runner, &BulkActionRunner::progress, this, [&](int done, int) {
            if (done != 0)
                return;
            for (int n = 0; n < 3; ++n)
                note(mallory,
                     QUuid::createUuidV5(runner.bulkId(), QStringLiteral("chunk-%1").arg(n)),
                     dl[0].first);
        });
        runner.start(request);
        QVERIFY(finished.wait(20000) || !failed.isEmpty());
        QVERIFY2(failed.isEmpty(),
                 qPrintable(failed.isEmpty() ? QString()
                                             : failed.first().first().value<DbError>().summary()));
        QCOMPARE(runner.totals().applied, 5);
        QCOMPARE(count("SELECT count(*) FROM redrive.dead_letter WHERE queue = 'predict'"
                       " AND status = 'requeued'"),
                 5);
    }

    // 5. A target without a version, or a NULL version argument, is refused, never taken as
    // "still what the operator saw".
    void missingVersionsAreRefused_data()
    {
        QTest::addColumn<QString>("login");
        QTest::addColumn<QByteArray>("sql");
        QTest::newRow("requeue, no version key")
            << QStringLiteral("oncall")
            << QByteArray("SELECT redrive.requeue_dead_letters(gen_random_uuid(),"
                          " jsonb_build_array(jsonb_build_object('id', $1::bigint)), true,"
                          " 'provider recovered')");
        QTest::newRow("requeue, version null")
            << QStringLiteral("oncall")
            << QByteArray("SELECT redrive.requeue_dead_letters(gen_random_uuid(),"
                          " jsonb_build_array(jsonb_build_object('id', $1::bigint, 'version',"
                          " null)), true, 'provider recovered')");
        QTest::newRow("resolve, version text")
            << QStringLiteral("oncall")
            << QByteArray("SELECT redrive.resolve_dead_letters(gen_random_uuid(),"
                          " jsonb_build_array(jsonb_build_object('id', $1::bigint, 'version',"
                          " 'x')), 'not_needed', NULL, 'not needed any more')");
        QTest::newRow("claim, no version")
            << QStringLiteral("oncall")
            << QByteArray("SELECT redrive.claim_dead_letters(gen_random_uuid(),"
                          " jsonb_build_array(jsonb_build_object('id', $1::bigint)), false,"
                          " 'looking at it')");
        QTest::newRow("edit and requeue, NULL version")
            << QStringLiteral("oncall")
            << QByteArray("SELECT redrive.edit_and_requeue(gen_random_uuid(), $1::bigint, NULL,"
                          " '{\"n\": 1}', true, 'fixed the payload')");
        QTest::newRow("release key, NULL version")
            << QStringLiteral("oncall")
            << QByteArray("SELECT redrive.release_idempotency_key(gen_random_uuid(), 's',"
                          " $1::text, NULL, 'worker is gone')");
        QTest::newRow("resolve mismatch, NULL version")
            << QStringLiteral("support")
            << QByteArray("SELECT redrive.resolve_mismatch(gen_random_uuid(), $1::bigint, NULL,"
                          " 'fixed', 'ledger corrected')");
        QTest::newRow("request compensation, NULL version")
            << QStringLiteral("support")
            << QByteArray("SELECT redrive.request_compensation(gen_random_uuid(), 'dead_letter',"
                          " $1::bigint, NULL, 'refund', 100, 'customer asked')");
        QTest::newRow("decide compensation, NULL version")
            << QStringLiteral("approver")
            << QByteArray("SELECT redrive.decide_compensation(gen_random_uuid(), $1::bigint,"
                          " NULL, true, 'looks right')");
    }
    void missingVersionsAreRefused()
    {
        QFETCH(QString, login);
        QFETCH(QByteArray, sql);
        const auto dl = deadLetters(1, QStringLiteral("noversion"));
        PgConnection c = as(login == QLatin1String("oncall")        ? m_oncall
                                : login == QLatin1String("support") ? m_support
                                                                    : m_approver);
        const qint64 before = count("SELECT count(*) FROM redrive.audit_log");
        auto r = c.exec(sql, QueryParams().addText(QString::number(dl[0].first)));
        QVERIFY(!r);
        QCOMPARE(r.error().sqlState(), QStringLiteral("22004")); // null_value_not_allowed
        QCOMPARE(count("SELECT count(*) FROM redrive.audit_log"), before);
        QCOMPARE(count("SELECT version FROM redrive.dead_letter WHERE id = $1",
                       QueryParams().addBigInt(dl[0].first)),
                 dl[0].second);
    }

    // 6. One call takes at most 1,000 targets, refused before any work or audit entry.
    void oversizedTargetListsAreRefusedAtOnce()
    {
        PgConnection alice = as(m_oncall);
        const qint64 before = count("SELECT count(*) FROM redrive.audit_log");
        QElapsedTimer timer;
        timer.start();
        auto r = alice.exec("SELECT redrive.requeue_dead_letters(gen_random_uuid(),"
                            " (SELECT jsonb_agg(jsonb_build_object('id', g, 'version', 1))"
                            "    FROM generate_series(1, 100000) g), true, 'provider recovered')");
        QVERIFY(!r);
        QCOMPARE(r.error().sqlState(), QStringLiteral("54000"));
        QVERIFY(r.error().message().contains(QStringLiteral("100000")));
        QVERIFY(timer.elapsed() < 5000);
        QCOMPARE(count("SELECT count(*) FROM redrive.audit_log"), before);
        auto limit = alice.exec("SELECT redrive.max_targets_per_call()");
        QCOMPARE(limit->integer(0, 0), std::optional<int>(1000));
    }

    // 7. The worker role carries out only commands it claimed, never reopens what an operator
    // resolved, never completes a compensation it did not claim, and audits what it changes.
    void workerCannotActWithoutAnOperatorsCommand()
    {
        const auto dl = deadLetters(2, QStringLiteral("workerhole"));
        PgConnection worker = as(m_worker);
        const qint64 job = count("SELECT job_id FROM redrive.dead_letter WHERE id = $1",
                                 QueryParams().addBigInt(dl[0].first));
        // The old free-form signatures are gone; direct writes are refused.
        QCOMPARE(stateOf(worker.exec("SELECT redrive.apply_requeue($1, true, '{\"x\": 1}', NULL)",
                                     QueryParams().addBigInt(job))),
                 QStringLiteral("42883"));
        QCOMPARE(stateOf(worker.exec("UPDATE redrive.dead_letter SET status = 'open'")),
                 QStringLiteral("42501"));
        QCOMPARE(stateOf(worker.exec("UPDATE redrive.job SET payload = '{}' WHERE id = $1",
                                     QueryParams().addBigInt(job))),
                 QStringLiteral("42501"));
        // An outbox row it did not claim: refused.
        PgConnection alice = as(m_oncall);
        const QUuid action = QUuid::createUuid();
        QVERIFY(requeue(alice, action, targets({ dl[0] })).ok());
        const qint64 outbox = count("SELECT id FROM redrive.outbox WHERE action_id = $1",
                                    QueryParams().addUuid(action));
        QCOMPARE(stateOf(worker.exec("SELECT redrive.apply_requeue($1, $2)",
                                     QueryParams().addBigInt(outbox).addText(m_worker))),
                 QStringLiteral("42501"));
        // Claimed, but the operator resolved the dead letter meanwhile: nothing happens.
        QVERIFY(worker
                    .exec("SELECT count(*) FROM redrive.claim_outbox($1, 1000, 60000)",
                          QueryParams().addText(m_worker))
                    .ok());
        QVERIFY(alice
                    .exec("SELECT redrive.resolve_dead_letters(gen_random_uuid(),"
                          " jsonb_build_array(jsonb_build_object('id', id, 'version', version)),"
                          " 'not_needed', NULL, 'customer cancelled') FROM redrive.dead_letter"
                          " WHERE id = $1",
                          QueryParams().addBigInt(dl[0].first))
                    .ok());
        auto applied = worker.exec("SELECT redrive.apply_requeue($1, $2)",
                                   QueryParams().addBigInt(outbox).addText(m_worker));
        QVERIFY2(applied, qPrintable(applied ? QString() : applied.error().summary()));
        QCOMPARE(applied->boolean(0, 0), std::optional<bool>(false));
        QCOMPARE(q("SELECT status FROM redrive.dead_letter WHERE id = $1",
                   QueryParams().addBigInt(dl[0].first))
                     .text(0, 0),
                 QStringLiteral("resolved"));
        QCOMPARE(q("SELECT state FROM redrive.job WHERE id = $1", QueryParams().addBigInt(job))
                     .text(0, 0),
                 QStringLiteral("dead"));

        // A requeue it claimed and carried out is audited with the worker as actor.
        const QUuid second = QUuid::createUuid();
        QVERIFY(requeue(alice, second, targets({ dl[1] })).ok());
        const qint64 outbox2 = count("SELECT id FROM redrive.outbox WHERE action_id = $1",
                                     QueryParams().addUuid(second));
        QVERIFY(worker
                    .exec("SELECT count(*) FROM redrive.claim_outbox($1, 1000, 60000)",
                          QueryParams().addText(m_worker))
                    .ok());
        auto ok = worker.exec("SELECT redrive.apply_requeue($1, $2)",
                              QueryParams().addBigInt(outbox2).addText(m_worker));
        QCOMPARE(ok->boolean(0, 0), std::optional<bool>(true));
        QCOMPARE(count("SELECT count(*) FROM redrive.audit_log WHERE action = "
                       "'worker_requeue_applied' AND db_user = $1 AND action_id = $2"
                       " AND targets @> jsonb_build_array(jsonb_build_object('type',"
                       " 'dead_letter', 'id', $3::bigint))",
                       QueryParams().addText(m_worker).addUuid(second).addBigInt(dl[1].first)),
                 1);
        // Another worker login cannot carry out what this one claimed, even naming its worker id,
        // nor take the live claim over by naming a later "now".
        const QString worker2 = login("worker2", QStringLiteral("redrive_worker"));
        {
            PgConnection other = as(worker2);
            QCOMPARE(stateOf(other.exec("SELECT redrive.finish_outbox($1, $2, true, NULL)",
                                        QueryParams().addBigInt(outbox2).addText(m_worker))),
                     QStringLiteral("42501"));
            const QUuid third = QUuid::createUuid();
            const auto more = deadLetters(1, QStringLiteral("workerhole2"));
            QVERIFY(requeue(alice, third, targets(more)).ok());
            QVERIFY(worker
                        .exec("SELECT count(*) FROM redrive.claim_outbox($1, 1000, 600000)",
                              QueryParams().addText(m_worker))
                        .ok());
            auto stolen = other.exec("SELECT count(*) FROM redrive.claim_outbox('thief', 1000,"
                                     " 600000, clock_timestamp() + interval '1 day')");
            QCOMPARE(stolen->bigInt(0, 0), std::optional<qint64>(0));
        }
        q("DROP ROLE " + m_admin.quoteIdentifier(worker2));
        QCOMPARE(stateOf(worker.exec("SELECT redrive.finish_outbox($1, 'someone-else', true,"
                                     " NULL)",
                                     QueryParams().addBigInt(outbox2))),
                 QStringLiteral("42501"));
        QCOMPARE(stateOf(worker.exec("SELECT redrive.complete_compensation($1, $2, true, 're_1',"
                                     " NULL)",
                                     QueryParams().addBigInt(outbox2).addText(m_worker))),
                 QStringLiteral("42501"));
    }

    // 3 and 4, found by a second attacker: a chunk re-run with other options is an error, not a
    // replay; a bulk must freeze every option; a re-freeze must match in every field; a target
    // named twice is refused.
    void bulkOptionsAndDuplicatesAreBound()
    {
        const auto dl = deadLetters(4, QStringLiteral("bulkopts"));
        PgConnection alice = as(m_oncall);
        auto freeze = [&](const QUuid &bulk, const QByteArray &params, const QString &reason) {
            return alice.exec(statementSql(Statement::ActionFreezeBulk),
                              QueryParams()
                                  .addUuid(bulk)
                                  .addText(QStringLiteral("requeue"))
                                  .addJson(targets(dl))
                                  .addInt(2)
                                  .addJson(params)
                                  .addText(reason)
                                  .addNull(ParamType::Text)
                                  .addText(QStringLiteral("tester")));
        };
        const QUuid bulk = QUuid::createUuid();
        QCOMPARE(stateOf(freeze(bulk, "{}", QStringLiteral("provider recovered"))),
                 QStringLiteral("22023"));
        QCOMPARE(stateOf(freeze(bulk, "{\"reset_attempts\": true}",
                                QStringLiteral("provider recovered"))),
                 QStringLiteral("ok"));
        QCOMPARE(
            stateOf(freeze(bulk, "{\"reset_attempts\": true}", QStringLiteral("another reason"))),
            QStringLiteral("23505"));
        QVERIFY(requeue(alice, QUuid::createUuid(), targets(dl.mid(0, 2)), bulk, 0).ok());
        // The same chunk again with reset_attempts false: refused, not "replayed".
        auto other = alice.exec(statementSql(Statement::ActionRequeue),
                                QueryParams()
                                    .addUuid(QUuid::createUuid())
                                    .addJson(targets(dl.mid(0, 2)))
                                    .addBool(false)
                                    .addText(QStringLiteral("provider recovered"))
                                    .addNull(ParamType::Text)
                                    .addText(QStringLiteral("tester"))
                                    .addUuid(bulk)
                                    .addInt(0));
        QVERIFY(!other);
        QVERIFY(other.error().sqlState() == QLatin1String("23514")
                || other.error().sqlState() == QLatin1String("23505"));
        // One target twice, with two versions: refused, whichever comes first.
        auto twice = requeue(alice, QUuid::createUuid(),
                             targets({ dl[2], { dl[2].first, dl[2].second + 5 } }));
        QVERIFY(!twice);
        QCOMPARE(twice.error().sqlState(), QStringLiteral("22023"));
        QVERIFY(twice.error().message().contains(QStringLiteral("more than once")));
        // ... also spelled differently ("05" is 5).
        auto spelled = alice.exec(
            "SELECT redrive.requeue_dead_letters(gen_random_uuid(), jsonb_build_array("
            " jsonb_build_object('id', $1::bigint, 'version', 1),"
            " jsonb_build_object('id', ' 0' || $1::text, 'version', 99)), true, 'dup test')",
            QueryParams().addBigInt(dl[3].first));
        QVERIFY(!spelled);
        QCOMPARE(spelled.error().sqlState(), QStringLiteral("22023"));
        // A bulk resolve freezes its note too; a chunk from another client-reported OS user is
        // not the frozen request; an action id replayed with another OS user is an error.
        auto noNote = alice.exec(statementSql(Statement::ActionFreezeBulk),
                                 QueryParams()
                                     .addUuid(QUuid::createUuid())
                                     .addText(QStringLiteral("resolve"))
                                     .addJson(targets(dl))
                                     .addInt(2)
                                     .addJson("{\"resolution\": \"not_needed\"}")
                                     .addText(QStringLiteral("not needed"))
                                     .addNull(ParamType::Text)
                                     .addText(QStringLiteral("tester")));
        QCOMPARE(stateOf(noNote), QStringLiteral("22023"));
        auto otherUser = alice.exec(statementSql(Statement::ActionRequeue),
                                    QueryParams()
                                        .addUuid(QUuid::createUuid())
                                        .addJson(targets(dl.mid(2, 2)))
                                        .addBool(true)
                                        .addText(QStringLiteral("provider recovered"))
                                        .addNull(ParamType::Text)
                                        .addText(QStringLiteral("mallory"))
                                        .addUuid(bulk)
                                        .addInt(1));
        QCOMPARE(stateOf(otherUser), QStringLiteral("23514"));
        const QUuid noteId = QUuid::createUuid();
        QVERIFY(alice
                    .exec("SELECT redrive.add_note($1, 'dead_letter', $2, 'one note', 'alice')",
                          QueryParams().addUuid(noteId).addText(QString::number(dl[0].first)))
                    .ok());
        QCOMPARE(stateOf(alice.exec(
                     "SELECT redrive.add_note($1, 'dead_letter', $2, 'one note',"
                     " 'mallory')",
                     QueryParams().addUuid(noteId).addText(QString::number(dl[0].first)))),
                 QStringLiteral("23505"));
    }

    // 2, found by a second attacker: renaming the real audit table and putting a decoy in its
    // place does not fool the client-side verifier.
    void verifierNoticesAReplacedAuditTable()
    {
        test::TestDatabase db(QStringLiteral("decoy"));
        QVERIFY(db.isValid());
        PgConnection owner = db.connect();
        QVERIFY(owner
                    .execScript("INSERT INTO redrive.audit_log (action, reason, action_id)"
                                " SELECT 'note', 'entry ' || g, gen_random_uuid()"
                                "   FROM generate_series(1, 5) g")
                    .ok());
        AuditChainVerifier verifier;
        auto good = verifier.verify(owner);
        QVERIFY(good);
        QVERIFY(good->holds());
        QVERIFY(owner
                    .execScript(
                        "CREATE TABLE redrive.audit_log_copy AS SELECT * FROM redrive.audit_log;"
                        "ALTER TABLE redrive.audit_log RENAME TO audit_log_real;"
                        "CREATE VIEW redrive.audit_log AS SELECT * FROM redrive.audit_log_copy;"
                        "ALTER TABLE redrive.audit_log_real DISABLE TRIGGER ALL;"
                        "UPDATE redrive.audit_log_real SET reason = 'tampered' WHERE id = 3;")
                    .ok());
        auto decoy = verifier.verify(owner);
        QVERIFY(decoy);
        QVERIFY(!decoy->holds());
        QCOMPARE(decoy->first().kind, AuditChainProblem::Kind::TableReplaced);
        // A plain table in its place (CREATE TABLE ... AS) is caught the same way.
        QVERIFY(owner
                    .execScript(
                        "DROP VIEW redrive.audit_log;"
                        "CREATE TABLE redrive.audit_log AS SELECT * FROM redrive.audit_log_copy;")
                    .ok());
        auto table = verifier.verify(owner);
        QVERIFY(table);
        QCOMPARE(table->first().kind, AuditChainProblem::Kind::TableReplaced);

        // On a fresh log, each decoy a third attacker tried: an extra trigger that drops or
        // launders entries, a rule that diverts them, row-level security that hides rows from a
        // reader, and a view that hides entries from the console and the exports.
        test::TestDatabase fresh(QStringLiteral("decoy2"));
        QVERIFY(fresh.isValid());
        owner = fresh.connect();
        QVERIFY(owner
                    .execScript("INSERT INTO redrive.audit_log (action, reason, action_id)"
                                " SELECT 'note', 'entry ' || g, gen_random_uuid()"
                                "   FROM generate_series(1, 5) g")
                    .ok());
        auto clean = verifier.verify(owner);
        QVERIFY(clean && clean->holds());
        const QList<QByteArray> decoys {
            "CREATE FUNCTION public.launder() RETURNS trigger LANGUAGE plpgsql AS"
            " 'BEGIN RETURN NEW; END'; CREATE TRIGGER a_launder BEFORE INSERT ON"
            " redrive.audit_log FOR EACH ROW EXECUTE FUNCTION public.launder()",
            "CREATE TABLE public.shadow (LIKE redrive.audit_log); CREATE RULE divert AS ON INSERT"
            " TO redrive.audit_log DO INSTEAD INSERT INTO public.shadow VALUES (NEW.*)",
            "ALTER TABLE redrive.audit_log ENABLE ROW LEVEL SECURITY",
        };
        const QList<QByteArray> undo {
            "DROP TRIGGER a_launder ON redrive.audit_log; DROP FUNCTION public.launder()",
            "DROP RULE divert ON redrive.audit_log; DROP TABLE public.shadow",
            "ALTER TABLE redrive.audit_log DISABLE ROW LEVEL SECURITY",
        };
        for (int i = 0; i < decoys.size(); ++i) {
            QVERIFY2(owner.execScript(decoys[i]).ok(), decoys[i].constData());
            auto r = verifier.verify(owner);
            QVERIFY(r);
            QVERIFY2(!r->holds(), decoys[i].constData());
            QCOMPARE(r->first().kind, AuditChainProblem::Kind::TableReplaced);
            QVERIFY(owner.execScript(undo[i]).ok());
        }
        QVERIFY(owner
                    .execScript("CREATE OR REPLACE VIEW redrive.audit_entry_list AS"
                                " SELECT e.id, e.at, e.db_user, host(e.client_addr) AS client_addr,"
                                " e.os_user, e.action, e.targets::text AS targets_text, e.targets,"
                                " e.reason, e.ticket, e.before::text AS before_text,"
                                " e.after::text AS after_text, e.action_id,"
                                " e.outcome::text AS outcome_text,"
                                " encode(e.prev_hash, 'hex') AS prev_hash,"
                                " encode(e.hash, 'hex') AS hash"
                                " FROM redrive.audit_log e WHERE e.id <> 2")
                    .ok());
        auto hidden = verifier.verify(owner);
        QVERIFY(hidden);
        QVERIFY(!hidden->holds());
        QCOMPARE(hidden->first().kind, AuditChainProblem::Kind::ViewAltered);
        QCOMPARE(hidden->problems.at(1).kind, AuditChainProblem::Kind::ViewHidesEntries);
        // A view that shows every entry but rewrites a column's text is reported too.
        QVERIFY(owner
                    .execScript("CREATE OR REPLACE VIEW redrive.audit_entry_list AS"
                                " SELECT e.id, e.at, e.db_user, host(e.client_addr) AS client_addr,"
                                " e.os_user, e.action, e.targets::text AS targets_text, e.targets,"
                                " CASE WHEN e.id = 3 THEN 'routine' ELSE e.reason END AS reason,"
                                " e.ticket, e.before::text AS before_text,"
                                " e.after::text AS after_text, e.action_id,"
                                " e.outcome::text AS outcome_text,"
                                " encode(e.prev_hash, 'hex') AS prev_hash,"
                                " encode(e.hash, 'hex') AS hash FROM redrive.audit_log e")
                    .ok());
        auto rewritten = verifier.verify(owner);
        QVERIFY(rewritten);
        QVERIFY(!rewritten->holds());
        QCOMPARE(rewritten->first().kind, AuditChainProblem::Kind::ViewAltered);
    }

    // 7, found by a third attacker: job and key leases are bound to the login that took them,
    // and a later "now" does not make a live lease look expired.
    void workerLeasesAreBoundToTheirLogin()
    {
        const QString worker2 = login("worker3", QStringLiteral("redrive_worker"));
        {
            PgConnection w1 = as(m_worker);
            PgConnection w2 = as(worker2);
            const qint64 job
                = w1.exec("SELECT redrive.enqueue_job('leaseq', 'probe', '{}', 'lease-key-1')")
                      ->bigInt(0, 0)
                      .value_or(0);
            QCOMPARE(w1.exec("SELECT count(*) FROM redrive.claim_jobs('wA', ARRAY['leaseq'], 1,"
                             " 3600000)")
                         ->bigInt(0, 0),
                     std::optional<qint64>(1));
            QCOMPARE(w2.exec("SELECT count(*) FROM redrive.reclaim_expired_leases('wB',"
                             " clock_timestamp() + interval '2 hours')")
                         ->bigInt(0, 0),
                     std::optional<qint64>(0));
            QCOMPARE(
                w2.exec("SELECT redrive.heartbeat_job($1, 'wA', 1)", QueryParams().addBigInt(job))
                    ->boolean(0, 0),
                std::optional<bool>(false));
            QCOMPARE(w2.exec("SELECT redrive.finish_attempt($1, 'wA', now(), now(), 'failed',"
                             " 'permanent', 'X', 'forged', NULL, 'dead', 0)",
                             QueryParams().addBigInt(job))
                         ->text(0, 0),
                     QStringLiteral("lost_lease"));
            QCOMPARE(q("SELECT state, locked_by FROM redrive.job WHERE id = $1",
                       QueryParams().addBigInt(job))
                         .text(0, 0),
                     QStringLiteral("running"));
            const QString hash(64, QLatin1Char('c'));
            QCOMPARE(w1.exec("SELECT verdict FROM redrive.begin_idempotent('sc', 'lease-k', $1,"
                             " NULL, 'wA', 3600000)",
                             QueryParams().addText(hash))
                         ->text(0, 0),
                     QStringLiteral("proceed"));
            QCOMPARE(w2.exec("SELECT verdict FROM redrive.begin_idempotent('sc', 'lease-k', $1,"
                             " NULL, 'wB', 3600000, clock_timestamp() + interval '2 hours')",
                             QueryParams().addText(hash))
                         ->text(0, 0),
                     QStringLiteral("conflict"));
            QCOMPARE(w2.exec("SELECT redrive.complete_idempotent('sc', 'lease-k', 'wA', 'done',"
                             " '{\"forged\": true}', NULL)")
                         ->boolean(0, 0),
                     std::optional<bool>(false));
            QCOMPARE(w1.exec("SELECT redrive.complete_idempotent('sc', 'lease-k', 'wA', 'done',"
                             " '{\"ok\": true}', NULL)")
                         ->boolean(0, 0),
                     std::optional<bool>(true));
            // A "now" ten years ahead takes no lease that outlives the worker, and claims no job
            // long before it is due.
            QVERIFY(w2.exec("SELECT redrive.enqueue_job('leaseq2', 'probe', '{}', 'lease-key-2',"
                            " NULL, NULL, NULL, 8, clock_timestamp() + interval '1 hour')")
                        .ok());
            QCOMPARE(w2.exec("SELECT count(*) FROM redrive.claim_jobs('wB', ARRAY['leaseq2'], 5,"
                             " 60000, clock_timestamp() + interval '10 years')")
                         ->bigInt(0, 0),
                     std::optional<qint64>(0));
            QVERIFY(w2.exec("SELECT redrive.enqueue_job('leaseq3', 'probe', '{}', 'lease-key-3')")
                        .ok());
            QCOMPARE(w2.exec("SELECT count(*) FROM redrive.claim_jobs('wB', ARRAY['leaseq3'], 5,"
                             " 60000, clock_timestamp() + interval '10 years')"
                             " WHERE locked_until < clock_timestamp() + interval '1 hour'")
                         ->bigInt(0, 0),
                     std::optional<qint64>(1));
        }
        q("DROP ROLE " + m_admin.quoteIdentifier(worker2));
    }

    // 8. Settings change only through an audited function for an owner-level role; a direct
    // change by the owner is audited all the same.
    void settingsChangesLeaveAnAuditEntry()
    {
        PgConnection support = as(m_support);
        QCOMPARE(
            stateOf(support.exec("UPDATE redrive.settings SET compensation_approval_minor = 1")),
            QStringLiteral("42501"));
        QCOMPARE(stateOf(support.exec("SELECT redrive.change_setting(gen_random_uuid(),"
                                      " 'compensation_approval_minor', '1', 'cheaper')")),
                 QStringLiteral("42501"));
        PgConnection owner = as(m_admin2);
        auto changed = owner.exec("SELECT redrive.change_setting(gen_random_uuid(),"
                                  " 'compensation_approval_minor', '25000', 'policy review Q4')");
        QVERIFY2(changed, qPrintable(changed ? QString() : changed.error().summary()));
        QCOMPARE(count("SELECT compensation_approval_minor FROM redrive.settings"), 25000);
        QCOMPARE(count("SELECT count(*) FROM redrive.audit_log WHERE action = 'change_setting'"
                       " AND db_user = $1 AND (before ->> 'compensation_approval_minor')::bigint"
                       " = 10000 AND (after ->> 'compensation_approval_minor')::bigint = 25000",
                       QueryParams().addText(m_admin2)),
                 1);
        q("UPDATE redrive.settings SET compensation_approval_minor = 10000");
        // A session setting does not make a direct change look like an audited one.
        q("SET redrive.audited_setting_change = 'pretend'");
        q("UPDATE redrive.settings SET compensation_approval_minor = 10000");
        q("RESET redrive.audited_setting_change");
        QCOMPARE(count("SELECT count(*) FROM redrive.audit_log"
                       " WHERE action = 'settings_changed_directly'"),
                 2);
        QCOMPARE(count("SELECT count(*) FROM redrive.audit_log"
                       " WHERE action = 'settings_changed_directly'"
                       " AND (after ->> 'compensation_approval_minor')::bigint = 10000"),
                 2);
        // Deleting the row is audited too (request_compensation then asks a second person for
        // every amount), and the table cannot be truncated.
        QVERIFY(m_admin.exec("DELETE FROM redrive.settings").ok());
        QCOMPARE(count("SELECT count(*) FROM redrive.audit_log"
                       " WHERE action = 'settings_changed_directly' AND reason LIKE 'delete%'"),
                 1);
        QVERIFY(!m_admin.exec("TRUNCATE redrive.settings").ok());
        q("INSERT INTO redrive.settings DEFAULT VALUES");
    }

    // 7, found by a second attacker: rejecting one request never reopens a dead letter that
    // another request on it already compensated. Since version 8 a payment has at most one open
    // compensation (docs/domain.md "Money"), so the second request that could race the first
    // is refused outright; a rejection or a failed refund then reopens the dead letter, and a
    // compensated one stays compensated.
    void rejectingARequestDoesNotReopenACompensatedDeadLetter()
    {
        q("CREATE OR REPLACE VIEW redrive.payment_list AS"
          " SELECT j.entity_id AS payment_ref, 'ch_' || j.entity_id AS charge_ref,"
          "        5000::bigint AS charged_cents, 0::bigint AS refunded_cents,"
          "        'USD'::text AS currency"
          "   FROM redrive.job j WHERE j.entity_id IS NOT NULL");
        q("UPDATE redrive.settings SET compensation_approval_minor = 2000");
        const auto dl = deadLetters(1, QStringLiteral("comp"));
        PgConnection sue = as(m_support);
        auto request = [&](const QString &kind, qint64 cents) {
            const int v = int(count("SELECT version FROM redrive.dead_letter WHERE id = $1",
                                    QueryParams().addBigInt(dl[0].first)));
            return sue.exec(
                "SELECT redrive.request_compensation(gen_random_uuid(), 'dead_letter',"
                " $1, $2, $3, $4, 'customer asked')",
                QueryParams().addBigInt(dl[0].first).addInt(v).addText(kind).addBigInt(cents));
        };
        QVERIFY(request(QStringLiteral("refund"), 3000).ok()); // waits
        auto second = request(QStringLiteral("void"), 50);
        QVERIFY(!second);
        QCOMPARE(second.error().sqlState(), QStringLiteral("23505"));
        PgConnection ann = as(m_approver);
        QVERIFY(ann.exec("SELECT redrive.decide_compensation(gen_random_uuid(), id, version, false,"
                         " 'not needed any more') FROM redrive.compensation_request"
                         " WHERE status = 'pending_approval' AND target_id = $1",
                         QueryParams().addBigInt(dl[0].first))
                    .ok());
        QCOMPARE(q("SELECT status FROM redrive.dead_letter WHERE id = $1",
                   QueryParams().addBigInt(dl[0].first))
                     .text(0, 0),
                 QStringLiteral("open"));
        // Now the void (3000 rejected: the payment's total is 50) goes ahead and is refunded.
        QVERIFY(request(QStringLiteral("void"), 50).ok());
        PgConnection worker = as(m_worker);
        const ResultSet claimed = worker
                                      .exec("SELECT id FROM redrive.claim_outbox($1, 1000, 60000)"
                                            " WHERE command = 'compensate'",
                                            QueryParams().addText(m_worker))
                                      .value();
        QCOMPARE(claimed.rowCount(), 1);
        QVERIFY(
            worker
                .exec("SELECT redrive.complete_compensation($1, $2, true, 're_void_1', NULL)",
                      QueryParams().addBigInt(claimed.bigInt(0, 0).value_or(0)).addText(m_worker))
                .ok());
        QCOMPARE(q("SELECT status FROM redrive.dead_letter WHERE id = $1",
                   QueryParams().addBigInt(dl[0].first))
                     .text(0, 0),
                 QStringLiteral("compensated"));
        // A compensated dead letter takes no further request.
        QCOMPARE(outcomeOf(request(QStringLiteral("refund"), 100))
                     .value(QStringLiteral("conflicts"))
                     .toInt(),
                 1);
        q("UPDATE redrive.settings SET compensation_approval_minor = 10000");
    }

    // 11. A login with no Redrive role hears that something changed, never what.
    void notificationsCarryNothing()
    {
        const auto dl = deadLetters(1, QStringLiteral("listen"));
        PgConnection nobody = as(m_nobody);
        QVERIFY(nobody.exec("LISTEN redrive_dead_letter").ok());
        PgConnection alice = as(m_oncall);
        QVERIFY(requeue(alice, QUuid::createUuid(), targets(dl)).ok());
        QList<Notification> got;
        QTRY_VERIFY_WITH_TIMEOUT(
            [&] {
                auto n = nobody.takeNotifications();
                if (n)
                    got += n.value();
                return !got.isEmpty();
            }(),
            5000);
        for (const Notification &n : got)
            QCOMPARE(n.payload, QString());
    }

    // 13. A conflicting or refused action is audited with each target and its result.
    void refusedAndConflictingActionsNameTheirTargets()
    {
        const auto dl = deadLetters(2, QStringLiteral("conflict"));
        PgConnection alice = as(m_oncall);
        const QUuid id = QUuid::createUuid();
        const QJsonObject o
            = outcomeOf(requeue(alice, id, targets({ { dl[0].first, 99 }, dl[1] })));
        QCOMPARE(o.value(QStringLiteral("conflicts")).toInt(), 1);
        QCOMPARE(count("SELECT count(*) FROM redrive.audit_log WHERE action_id = $1"
                       " AND targets @> jsonb_build_array(jsonb_build_object('type',"
                       " 'dead_letter', 'id', $2::bigint, 'result', 'conflict'))"
                       " AND targets @> jsonb_build_array(jsonb_build_object('type',"
                       " 'dead_letter', 'id', $3::bigint, 'result', 'applied'))",
                       QueryParams().addUuid(id).addBigInt(dl[0].first).addBigInt(dl[1].first)),
                 1);
        const QUuid edit = QUuid::createUuid();
        QVERIFY(alice
                    .exec("SELECT redrive.edit_and_requeue($1, $2, 99, '{\"n\": 2}', true,"
                          " 'fixed the payload')",
                          QueryParams().addUuid(edit).addBigInt(dl[0].first))
                    .ok());
        QCOMPARE(count("SELECT count(*) FROM redrive.audit_log WHERE action_id = $1"
                       " AND targets @> jsonb_build_array(jsonb_build_object('id', $2::bigint,"
                       " 'result', 'conflict'))",
                       QueryParams().addUuid(edit).addBigInt(dl[0].first)),
                 1);
    }

    // What already held, kept held: no role writes a table directly, an auditor changes
    // nothing, the requester never approves their own request, and a pg_temp function named
    // like a helper does not bypass the role check.
    void everyDirectWriteIsRefused_data()
    {
        QTest::addColumn<QString>("login");
        for (const char *l : { "oncall", "support", "approver", "auditor", "worker", "nobody" })
            QTest::newRow(l) << QString::fromLatin1(l);
    }
    void everyDirectWriteIsRefused()
    {
        QFETCH(QString, login);
        const QHash<QString, QString> logins {
            { QStringLiteral("oncall"), m_oncall },     { QStringLiteral("support"), m_support },
            { QStringLiteral("approver"), m_approver }, { QStringLiteral("auditor"), m_auditor },
            { QStringLiteral("worker"), m_worker },     { QStringLiteral("nobody"), m_nobody },
        };
        PgConnection c = as(logins.value(login));
        const ResultSet tables
            = q("SELECT format('%I.%I', t.schemaname, t.tablename), quote_ident(a.attname)"
                "  FROM pg_tables t JOIN pg_attribute a"
                "    ON a.attrelid = format('%I.%I', t.schemaname, t.tablename)::regclass"
                "   AND a.attnum = (SELECT min(b.attnum) FROM pg_attribute b"
                "                    WHERE b.attrelid = a.attrelid AND b.attnum > 0"
                "                      AND NOT b.attisdropped AND b.attidentity = '')"
                " WHERE t.schemaname = 'redrive' ORDER BY 1");
        QVERIFY(tables.rowCount() > 15);
        for (int i = 0; i < tables.rowCount(); ++i) {
            const QByteArray t = tables.text(i, 0).toUtf8();
            const QByteArray column = tables.text(i, 1).toUtf8();
            for (const QByteArray &sql :
                 { "DELETE FROM " + t, "UPDATE " + t + " SET " + column + " = " + column,
                   "TRUNCATE " + t, "INSERT INTO " + t + " DEFAULT VALUES" }) {
                auto r = c.exec(sql);
                QVERIFY2(!r, qPrintable(login + QLatin1String(": ") + QString::fromUtf8(sql)));
                QVERIFY2(r.error().sqlState() == QLatin1String("42501"),
                         qPrintable(login + QLatin1String(": ") + QString::fromUtf8(sql)
                                    + QLatin1String(" -> ") + r.error().summary()));
            }
        }
    }

    void selfApprovalAndShadowingStayRefused()
    {
        PgConnection support = as(m_support);
        // pg_temp shadowing: the action functions pin search_path with pg_temp last.
        QVERIFY(support
                    .exec("CREATE FUNCTION pg_temp.require_role(text[]) RETURNS void"
                          " LANGUAGE sql AS 'SELECT NULL'")
                    .ok());
        QVERIFY(support.exec("SET search_path = pg_temp, redrive").ok());
        auto r = support.exec("SELECT redrive.requeue_dead_letters(gen_random_uuid(),"
                              " '[{\"id\": 1, \"version\": 1}]', true, 'sneaky requeue')");
        QVERIFY(!r);
        QCOMPARE(r.error().sqlState(), QStringLiteral("42501"));
        PgConnection auditor = as(m_auditor);
        auto noted = note(auditor, QUuid::createUuid(), 1);
        QVERIFY(!noted);
        QCOMPARE(noted.error().sqlState(), QStringLiteral("42501"));
    }
};

QTEST_GUILESS_MAIN(TestHostileInsider)
#include "tst_hostile_insider.moc"
