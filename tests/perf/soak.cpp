// SPDX-License-Identifier: GPL-3.0-or-later
// The soak (docs/reliability.md#the-soak): several console sessions, through the console's own
// models (BulkActionRunner, OperatorAction; no widgets), and two reference workers
// (`redrive-worker run`) act for a while on 1,000 dead letters of charged payments: random
// requeues, resolves, compensation requests and decisions, claims, notes and bulk actions, while
// a killer terminates a random backend of the database every so often (pg_terminate_backend).
// A single action whose reply was lost is sent again with the same action id; a bulk whose
// session died is resumed. Afterwards it prints each invariant with its counts and exits 1 when
// one is broken:
//   soak [--seconds N] [--seed S] [--dead-letters N] [--worker PATH]
// It runs in a database of its own in the test cluster (tests/support/pg_test_cluster.sh).
#include "models/bulk_action_runner.h"
#include "models/db/database_session.h"
#include "models/db/query_params.h"
#include "models/db/schema_migrator.h"
#include "models/db/sql_statement.h"
#include "models/operator_action.h"
#include "tests/support/test_database.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QDateTime>
#include <QDir>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QRandomGenerator>
#include <QSet>
#include <QTest>
#include <QTimer>
#include <cstdio>
#include <map>
#include <memory>

using namespace redrive;
using namespace redrive::db;

namespace {

const QString kPassword = QStringLiteral("soak-pw");

/// What the sessions tried and what came back, per kind of action.
struct Tally
{
    int tried = 0; ///< actions started (a bulk counts once)
    int acknowledged = 0; ///< an outcome came back (a bulk: every chunk)
    int resent = 0; ///< sent again with the same action id after a lost reply
    int resumed = 0; ///< bulks resumed after their session died
    int refused = 0; ///< the server said no (permission, one open compensation, ...)
    int unanswered = 0; ///< never acknowledged (gave up)
    int notFrozen = 0; ///< a bulk whose freeze died with its session before it committed
};

struct Shared
{
    QRandomGenerator rng;
    std::map<QString, Tally> tally;
    /// Every action id whose outcome a session received, with the audit id it named.
    std::map<QUuid, qint64> acknowledged;
    /// Per bulk: the targets its runs reported applied (each must be applied once).
    std::map<QUuid, QList<qint64>> bulkApplied;
    QSet<QUuid> unfinishedBulks;
    /// Reads that failed other than by a lost connection, by error (none expected).
    std::map<QString, int> readErrors;
    /// Actions the server refused, by error.
    std::map<QString, int> refusals;
    /// Why resumed bulk runs failed before they finished, by error (each is tried again).
    std::map<QString, int> resumeErrors;
    /// The last error of each action given up on.
    std::map<QString, int> gaveUp;
    int killedConsole = 0;
    int killedWorker = 0;
    bool stopping = false;
};

void acknowledge(Shared &s, const QJsonObject &outcome)
{
    const QUuid id = QUuid::fromString(outcome.value(QStringLiteral("action_id")).toString());
    if (!id.isNull())
        s.acknowledged[id] = outcome.value(QStringLiteral("audit_id")).toInteger();
}

/// One console session as one operator: picks an action at random every 150 to 450 ms while
/// nothing of its own is in flight.
class Operator : public QObject
{
public:
    enum class Role { OnCall, Support, Approver };

    Operator(Shared &shared, Role role, std::unique_ptr<DatabaseSession> session)
        : m_s(shared)
        , m_role(role)
        , m_session(std::move(session))
    {
        m_timer.setSingleShot(true);
        connect(&m_timer, &QTimer::timeout, this, [this] { tick(); });
    }

    void start() { schedule(); }
    bool idle() const { return !m_busy; }
    DatabaseSession *session() const { return m_session.get(); }

private:
    // Runs `again` after `delayMs`, or once the session has connected again if it is
    // reconnecting now: a try made while it reconnects fails at once ("not connected;
    // reconnecting") and says nothing about the action, and the session's reconnect backoff
    // (up to 30 s after connects that failed in a row) can outlast any count of such tries.
    void retryLater(int delayMs, std::function<void()> again)
    {
        if (m_session->isConnected()) {
            QTimer::singleShot(delayMs, this, std::move(again));
            return;
        }
        auto once = std::make_shared<QMetaObject::Connection>();
        *once = connect(m_session.get(), &DatabaseSession::connected, this,
                        [once, again = std::move(again)] {
                            QObject::disconnect(*once);
                            again();
                        });
    }

    void schedule()
    {
        if (!m_s.stopping)
            m_timer.start(150 + int(m_s.rng.bounded(300)));
    }
    void done()
    {
        m_busy = false;
        schedule();
    }

    void tick()
    {
        m_busy = true;
        const int dice = int(m_s.rng.bounded(100));
        switch (m_role) {
        case Role::OnCall:
            if (dice < 8)
                return single(QStringLiteral("requeue"));
            if (dice < 13)
                return single(QStringLiteral("resolve"));
            if (dice < 38)
                return claimOrNote(true);
            if (dice < 63)
                return claimOrNote(false);
            if (dice < 65)
                return bulk(QStringLiteral("bulk requeue"));
            if (dice < 67)
                return bulk(QStringLiteral("bulk resolve"));
            return pause();
        case Role::Support:
            if (dice < 40)
                return compensate();
            if (dice < 50)
                return single(QStringLiteral("resolve"));
            if (dice < 65)
                return claimOrNote(false);
            if (dice < 80)
                return claimOrNote(true);
            if (dice < 83)
                return bulk(QStringLiteral("bulk resolve"));
            return pause();
        case Role::Approver:
            return decide();
        }
    }

    // Reads `sql` and hands the rows on; a failed read (backend killed) just waits a tick.
    void read(const QByteArray &sql, const QueryParams &params,
              std::function<void(const ResultSet &)> then)
    {
        m_session->execute(sql, params, this, [this, then](const DbExpected<ResultSet> &r) {
            if (!r) {
                if (r.error().kind() != ErrorKind::Connection)
                    m_s.readErrors[r.error().sqlState() + QLatin1Char(' ') + r.error().message()]++;
                done();
                return;
            }
            then(r.value());
        });
    }

    void pickOpen(int n, std::function<void(const QList<BulkActionRunner::Target> &)> then)
    {
        read("SELECT id, version FROM dead_letter_list WHERE status = 'open'"
             " ORDER BY random() LIMIT $1",
             QueryParams().addInt(n), [this, then](const ResultSet &r) {
                 QList<BulkActionRunner::Target> targets;
                 for (int i = 0; i < r.rowCount(); ++i)
                     targets.append({ r.bigInt(i, 0).value_or(0), r.integer(i, 1).value_or(0) });
                 std::sort(targets.begin(), targets.end(),
                           [](const auto &a, const auto &b) { return a.id < b.id; });
                 if (targets.isEmpty())
                     done();
                 else
                     then(targets);
             });
    }

    // Runs `action`; a lost reply sends the same action id again (at most 20 times).
    void run(const QString &kind, const OperatorAction &action, int tries = 0)
    {
        if (tries == 0)
            ++m_s.tally[kind].tried;
        // Only a try sent while connected counts.
        const int next = m_session->isConnected() ? tries + 1 : tries;
        runOperatorAction(
            m_session.get(), this, action,
            [this, kind, action, tries, next](const DbExpected<QJsonObject> &r) {
                if (r) {
                    ++m_s.tally[kind].acknowledged;
                    acknowledge(m_s, r.value());
                    done();
                    return;
                }
                const ErrorKind k = r.error().kind();
                if (k == ErrorKind::Connection || k == ErrorKind::Retryable
                    || k == ErrorKind::Canceled) {
                    if (tries >= 20) {
                        ++m_s.tally[kind].unanswered;
                        m_s.gaveUp[kind + QStringLiteral(": ") + r.error().message()]++;
                        done();
                        return;
                    }
                    ++m_s.tally[kind].resent;
                    retryLater(200, [this, kind, action, next] { run(kind, action, next); });
                    return;
                }
                ++m_s.tally[kind].refused;
                m_s.refusals[kind + QStringLiteral(": ") + r.error().sqlState()]++;
                done();
            });
    }

    BulkActionRunner::Request request(const QString &kind,
                                      const QList<BulkActionRunner::Target> &targets, int chunk)
    {
        BulkActionRunner::Request request;
        request.action = kind.endsWith(QLatin1String("requeue"))
            ? BulkActionRunner::Action::Requeue
            : BulkActionRunner::Action::Resolve;
        request.targets = targets;
        request.resetAttempts = m_s.rng.bounded(2) == 0;
        request.resolution = QStringLiteral("not_needed");
        request.note = QStringLiteral("soak");
        request.reason = QStringLiteral("soak: %1").arg(kind);
        request.osUser = QStringLiteral("soak");
        request.chunkSize = chunk;
        return request;
    }

    // A requeue or resolve of 1 to 3 dead letters (as the console runs every requeue and resolve:
    // through the bulk runner), or a bulk of 10 to 60 in chunks of 5 to 20.
    void single(const QString &kind) { runBulk(kind, 1 + int(m_s.rng.bounded(3)), 1); }
    void bulk(const QString &kind)
    {
        runBulk(kind, 10 + int(m_s.rng.bounded(51)), 5 + int(m_s.rng.bounded(16)));
    }
    // Reads the dead letter list as an operator looking does, and does nothing.
    void pause()
    {
        read("SELECT count(*) FROM dead_letter_list WHERE status = 'open'", {},
             [this](const ResultSet &) { done(); });
    }
    void runBulk(const QString &kind, int n, int chunk)
    {
        pickOpen(n, [this, kind, chunk](const QList<BulkActionRunner::Target> &targets) {
            ++m_s.tally[kind].tried;
            auto *runner = new BulkActionRunner(m_session.get(), this);
            connect(runner, &BulkActionRunner::chunkFinished, this,
                    [this, kind, runner](int, const QJsonObject &outcome) {
                        ++m_s.tally[kind].acknowledged;
                        acknowledge(m_s, outcome);
                        Q_UNUSED(runner);
                    });
            connect(runner, &BulkActionRunner::finished, this, [this, runner](bool) {
                m_s.bulkApplied[runner->bulkId()] += runner->totals().appliedIds;
                m_s.unfinishedBulks.remove(runner->bulkId());
                runner->deleteLater();
                done();
            });
            connect(
                runner, &BulkActionRunner::failed, this, [this, kind, runner](const DbError &e) {
                    m_s.bulkApplied[runner->bulkId()] += runner->totals().appliedIds;
                    if (runner->bulkId().isNull() || e.kind() == ErrorKind::Constraint
                        || e.kind() == ErrorKind::Permission) {
                        // Not frozen (the freeze itself failed) or refused: nothing to resume.
                        ++m_s.tally[kind].refused;
                        runner->deleteLater();
                        done();
                        return;
                    }
                    // The session died under it (or another run held its lock): resume the
                    // frozen list once the session is back, from the chunks not done.
                    m_s.unfinishedBulks.insert(runner->bulkId());
                    ++m_s.tally[kind].resumed;
                    const QUuid bulkId = runner->bulkId();
                    runner->deleteLater();
                    QTimer::singleShot(300, this, [this, kind, bulkId] { resume(kind, bulkId); });
                });
            runner->start(request(kind, targets, chunk));
            if (!runner->bulkId().isNull())
                m_s.unfinishedBulks.insert(runner->bulkId());
        });
    }

public:
    /// Resumes bulk `bulkId` in this session until it finishes (each failure: again later).
    void resume(const QString &kind, const QUuid &bulkId, int tries = 0)
    {
        m_busy = true;
        auto *runner = new BulkActionRunner(m_session.get(), this);
        connect(runner, &BulkActionRunner::chunkFinished, this,
                [this, kind](int, const QJsonObject &outcome) {
                    ++m_s.tally[kind].acknowledged;
                    acknowledge(m_s, outcome);
                });
        connect(runner, &BulkActionRunner::finished, this, [this, runner, bulkId](bool) {
            m_s.bulkApplied[bulkId] += runner->totals().appliedIds;
            m_s.unfinishedBulks.remove(bulkId);
            runner->deleteLater();
            done();
        });
        // Only a try sent while connected counts.
        const int next = m_session->isConnected() ? tries + 1 : tries;
        connect(runner, &BulkActionRunner::failed, this,
                [this, kind, runner, bulkId, tries, next](const DbError &e) {
                    m_s.bulkApplied[bulkId] += runner->totals().appliedIds;
                    runner->deleteLater();
                    if (e.sqlState().isEmpty()
                        && e.message().endsWith(QLatin1String("was not found"))) {
                        // The freeze itself was lost with its session, before it committed:
                        // nothing of it was ever acknowledged or applied.
                        ++m_s.tally[kind].notFrozen;
                        m_s.unfinishedBulks.remove(bulkId);
                        done();
                        return;
                    }
                    m_s.resumeErrors[e.sqlState() + QLatin1Char(' ') + e.message()]++;
                    if (tries >= 50) {
                        ++m_s.tally[kind].unanswered;
                        m_s.gaveUp[kind + QStringLiteral(": ") + e.message()]++;
                        done();
                        return;
                    }
                    retryLater(300, [this, kind, bulkId, next] { resume(kind, bulkId, next); });
                });
        runner->resumeFrozen(bulkId);
    }

private:
    void claimOrNote(bool claim)
    {
        pickOpen(1 + int(m_s.rng.bounded(claim ? 4 : 1)),
                 [this, claim](const QList<BulkActionRunner::Target> &targets) {
                     if (claim)
                         run(QStringLiteral("claim"),
                             OperatorAction::claim(BulkActionRunner::targetsJson(targets),
                                                   m_s.rng.bounded(3) == 0,
                                                   QStringLiteral("soak: looking into it")));
                     else
                         run(QStringLiteral("note"),
                             OperatorAction::note(
                                 targets.first().id,
                                 QStringLiteral("soak note %1").arg(m_s.rng.bounded(1000000))));
                 });
    }

    // A refund of part of the charge behind an open dead letter whose payment has no open
    // compensation; above the currency's threshold it waits for an approver.
    void compensate()
    {
        // As the console does: a dead letter in view, then what a refund of it would act on.
        pickOpen(1, [this](const QList<BulkActionRunner::Target> &targets) {
            read(statementSql(Statement::CompensationTarget),
                 QueryParams().addBigInt(targets.first().id), [this](const ResultSet &r) {
                     const qint64 left = r.rowCount() == 1
                         ? r.bigInt(0, QStringLiteral("refundable_minor")).value_or(0)
                         : 0;
                     if (left <= 0 || !r.text(0, QStringLiteral("open_request")).isEmpty()) {
                         done();
                         return;
                     }
                     const qint64 amount = 1 + qint64(m_s.rng.bounded(quint32(left)));
                     run(QStringLiteral("compensation request"),
                         OperatorAction::requestCompensation(
                             r.bigInt(0, QStringLiteral("id")).value_or(0),
                             r.integer(0, QStringLiteral("version")).value_or(0),
                             QStringLiteral("refund"), amount, QStringLiteral("soak: refund"),
                             QString()));
                 });
        });
    }

    void decide()
    {
        read("SELECT id, version FROM compensation_list WHERE status = 'pending_approval'"
             " ORDER BY random() LIMIT 1",
             {}, [this](const ResultSet &r) {
                 if (r.rowCount() == 0) {
                     done();
                     return;
                 }
                 const bool approve = m_s.rng.bounded(4) != 0;
                 run(approve ? QStringLiteral("approval") : QStringLiteral("rejection"),
                     OperatorAction::decideCompensation(
                         QUuid::createUuid(), r.bigInt(0, 0).value_or(0),
                         r.integer(0, 1).value_or(0), approve, QStringLiteral("soak: decided"),
                         QStringLiteral("soak")));
             });
    }

    Shared &m_s;
    Role m_role;
    std::unique_ptr<DatabaseSession> m_session;
    QTimer m_timer;
    bool m_busy = false;
};

struct Check
{
    QString name;
    qint64 broken = 0;
    QString figures;
};

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral("Redrive soak (docs/reliability.md)"));
    parser.addHelpOption();
    const QCommandLineOption secondsOption(QStringLiteral("seconds"),
                                           QStringLiteral("How long the sessions act."),
                                           QStringLiteral("n"), QStringLiteral("60"));
    const QCommandLineOption seedOption(QStringLiteral("seed"), QStringLiteral("Random seed."),
                                        QStringLiteral("n"));
    const QCommandLineOption deadLettersOption(QStringLiteral("dead-letters"),
                                               QStringLiteral("Dead letters to act on."),
                                               QStringLiteral("n"), QStringLiteral("1000"));
    const QCommandLineOption workerOption(QStringLiteral("worker"),
                                          QStringLiteral("The redrive-worker executable."),
                                          QStringLiteral("path"));
    parser.addOptions({ secondsOption, seedOption, deadLettersOption, workerOption });
    parser.process(app);
    const int seconds = parser.value(secondsOption).toInt();
    const int deadLetters = parser.value(deadLettersOption).toInt();
    const quint32 seed = parser.isSet(seedOption) ? parser.value(seedOption).toUInt()
                                                  : QRandomGenerator::global()->generate();
    QString workerExe = parser.value(workerOption);
    if (workerExe.isEmpty())
        workerExe
            = QCoreApplication::applicationDirPath() + QStringLiteral("/../app/redrive-worker");
    std::printf("soak: seed %u, %d s, %d dead letters\n", seed, seconds, deadLetters);
    std::fflush(stdout);

    test::TestDatabase db(QStringLiteral("soak"));
    if (!db.isValid())
        qFatal("soak: %s", qPrintable(db.error()));
    PgConnection admin = db.connect();
    auto q = [&admin](const QByteArray &sql, const QueryParams &params = {}) {
        auto r = admin.exec(sql, params);
        if (!r)
            qFatal("soak: %s: %s", sql.constData(), qPrintable(r.error().summary()));
        return r.value();
    };
    auto count = [&q](const QByteArray &sql, const QueryParams &params = {}) {
        return q(sql, params).bigInt(0, 0).value_or(-1);
    };
    auto sim = SchemaMigrator(admin, MigrationSet::simulatedWorld()).migrate();
    if (!sim)
        qFatal("soak: %s", qPrintable(sim.error().summary()));

    // 1,000 charged payments whose charge job died ambiguous (the card was charged, the reply
    // was lost): the hard case, which can be requeued (the provider answers by idempotency key),
    // resolved or refunded.
    q("INSERT INTO sim.ledger_order"
      " SELECT 'ord_soak_' || g, 'Soak Customer ' || g, 'soak' || g || '@example.com',"
      "        1000 + (g * 7919) % 200000, 'USD', clock_timestamp() - interval '1 hour'"
      "   FROM generate_series(1, $1) g",
      QueryParams().addInt(deadLetters));
    q("INSERT INTO sim.ledger_payment (id, order_id, amount_minor, currency, status,"
      "                                idempotency_key, created_at, updated_at)"
      " SELECT substr(o.id, 5), o.id, o.amount_minor, 'USD', 'processing',"
      "        'charge:' || substr(o.id, 5), o.created_at, o.created_at"
      "   FROM sim.ledger_order o WHERE o.id LIKE 'ord_soak_%'");
    q("INSERT INTO sim.provider_charge (id, idempotency_key, payment_ref, amount_minor, currency,"
      "                                 created_at)"
      " SELECT 'ch_' || p.id, p.idempotency_key, p.id, p.amount_minor, 'USD', p.created_at"
      "   FROM sim.ledger_payment p WHERE p.id LIKE 'soak_%'");
    q("WITH j AS (INSERT INTO redrive.job (queue, kind, payload, idempotency_key, entity_id, state,"
      "                                    attempt, max_attempts)"
      "           SELECT 'payments', 'charge_card',"
      "                  jsonb_build_object('payment_id', p.id, 'order_id', p.order_id,"
      "                                     'amount_minor', p.amount_minor, 'currency', 'USD'),"
      "                  p.idempotency_key, p.id, 'dead', 3, 3"
      "             FROM sim.ledger_payment p WHERE p.id LIKE 'soak_%' ORDER BY p.id"
      "           RETURNING id, queue, kind, idempotency_key)"
      "INSERT INTO redrive.dead_letter (job_id, queue, kind, reason, error_class, error_code,"
      "                                 last_error, attempts, idempotency_key)"
      "SELECT id, queue, kind, 'ambiguous', 'ambiguous', 'ETIMEDOUT',"
      "       'provider did not respond within 10s', 3, idempotency_key FROM j");
    const qint64 seeded = count("SELECT count(*) FROM redrive.dead_letter");
    if (seeded != deadLetters)
        qFatal("soak: seeded %lld dead letters, not %d", static_cast<long long>(seeded),
               deadLetters);

    QStringList oncall, support, approver;
    for (int i = 1; i <= 2; ++i) {
        oncall << db.createLogin(QStringLiteral("soak_oncall%1").arg(i),
                                 { QStringLiteral("redrive_oncall") }, kPassword);
        approver << db.createLogin(QStringLiteral("soak_approver%1").arg(i),
                                   { QStringLiteral("redrive_approver") }, kPassword);
    }
    support << db.createLogin(QStringLiteral("soak_support1"),
                              { QStringLiteral("redrive_support") }, kPassword);
    const QStringList consoleLogins = oncall + support + approver;

    Shared shared;
    shared.rng.seed(seed);
    std::vector<std::unique_ptr<Operator>> operators;
    auto addOperator = [&](const QString &login, Operator::Role role) {
        auto session = db.openSession(db.consoleTcpSettingsAs(login, kPassword));
        if (!session)
            qFatal("soak: %s", qPrintable(db.error()));
        operators.push_back(std::make_unique<Operator>(shared, role, std::move(session)));
    };
    for (const QString &login : oncall)
        addOperator(login, Operator::Role::OnCall);
    addOperator(support.first(), Operator::Role::Support);
    for (const QString &login : approver)
        addOperator(login, Operator::Role::Approver);

    // Two reference workers, with the demo's fault rates, over the whole run.
    std::vector<std::unique_ptr<QProcess>> workers;
    for (int i = 1; i <= 2; ++i) {
        auto worker = std::make_unique<QProcess>();
        // Its log next to the soak's, for a look when something is off.
        worker->setStandardOutputFile(QProcess::nullDevice());
        worker->setStandardErrorFile(
            QDir::temp().filePath(QStringLiteral("redrive-soak-worker-%1-%2.log")
                                      .arg(QCoreApplication::applicationPid())
                                      .arg(i)));
        worker->start(workerExe,
                      { QStringLiteral("run"), QStringLiteral("--conninfo"), db.settings().connInfo,
                        QStringLiteral("--queues"), QStringLiteral("payments"),
                        QStringLiteral("--lease-ms"), QStringLiteral("3000"),
                        QStringLiteral("--faults"), QStringLiteral("reference"),
                        QStringLiteral("--time-compression"), QStringLiteral("20"),
                        QStringLiteral("--seed"), QString::number(seed + i),
                        QStringLiteral("--worker-id"), QStringLiteral("soak-worker-%1").arg(i) });
        if (!worker->waitForStarted(10000))
            qFatal("soak: %s did not start: %s", qPrintable(workerExe),
                   qPrintable(worker->errorString()));
        workers.push_back(std::move(worker));
    }

    // The killer: every 0.3 to 1.5 s, one random client backend of this database.
    PgConnection killerConnection = db.connect();
    const qint64 adminPid = count("SELECT pg_backend_pid()"); // the checks' own connection
    QTimer killer;
    killer.setSingleShot(true);
    QObject::connect(&killer, &QTimer::timeout, [&] {
        auto victim = killerConnection.exec(
            "SELECT usename, pg_terminate_backend(pid) FROM pg_stat_activity"
            " WHERE datname = current_database() AND pid <> pg_backend_pid() AND pid <> $1"
            "   AND backend_type = 'client backend' ORDER BY random() LIMIT 1",
            QueryParams().addInt(int(adminPid)));
        if (victim && victim->rowCount() == 1 && victim->boolean(0, 1).value_or(false)) {
            if (consoleLogins.contains(victim->text(0, 0)))
                ++shared.killedConsole;
            else
                ++shared.killedWorker;
        }
        killer.start(300 + int(shared.rng.bounded(1200)));
    });

    QElapsedTimer clock;
    clock.start();
    for (auto &op : operators)
        op->start();
    killer.start(500);
    static_cast<void>(QTest::qWaitFor([&] { return clock.elapsed() >= qint64(seconds) * 1000; },
                                      seconds * 1000 + 1000));
    killer.stop();
    shared.stopping = true;
    // Let what is in flight finish (a bulk runs to its end, resumed if its session died).
    if (!QTest::qWaitFor(
            [&] {
                for (auto &op : operators)
                    if (!op->idle())
                        return false;
                return true;
            },
            300000))
        qFatal("soak: sessions still busy five minutes after the end");
    // Bulks left unfinished by a session that gave up: resumed by their owner now.
    const int unfinished = int(count("SELECT count(*) FROM redrive.bulk_action_list"
                                     " WHERE NOT finished AND abandoned_at IS NULL"));
    std::printf("soak: %d bulk(s) unfinished at the end\n", unfinished);
    int workersGone = 0;
    for (auto &worker : workers) {
        if (worker->state() != QProcess::Running)
            ++workersGone; // exited before the end: not what was asked
        worker->terminate();
        worker->waitForFinished(30000);
    }

    // The invariants.
    std::vector<Check> checks;
    auto check = [&checks](const QString &name, qint64 broken, const QString &figures) {
        checks.push_back({ name, broken, figures });
    };
    const QueryParams logins = QueryParams().addTextArray(consoleLogins);

    {
        const ResultSet byStatus = q("SELECT status, count(*) FROM redrive.dead_letter"
                                     " GROUP BY 1 ORDER BY 1");
        QStringList figures;
        for (int i = 0; i < byStatus.rowCount(); ++i)
            figures << QStringLiteral("%1 %2").arg(byStatus.text(i, 0), byStatus.text(i, 1));
        const qint64 total = count("SELECT count(*) FROM redrive.dead_letter");
        const qint64 inconsistent = count(
            "SELECT count(*) FROM redrive.dead_letter d JOIN redrive.job j ON j.id = d.job_id"
            " WHERE NOT CASE d.status"
            "   WHEN 'open' THEN j.state = 'dead' AND d.resolution IS NULL"
            "   WHEN 'requeued' THEN d.resolution IS NULL AND (j.state IN ('queued', 'running')"
            "        OR EXISTS (SELECT 1 FROM redrive.outbox o WHERE o.command = 'requeue'"
            "                    AND o.target_id = j.id::text AND o.status <> 'done'))"
            "   WHEN 'resolved' THEN d.resolution IS NOT NULL AND d.resolved_at IS NOT NULL"
            "   ELSE EXISTS (SELECT 1 FROM redrive.compensation_request c"
            "                 WHERE c.target_type = 'dead_letter' AND c.target_id = d.id)"
            " END");
        check(QStringLiteral("every dead letter in exactly one valid state"),
              inconsistent + std::abs(total - deadLetters),
              QStringLiteral("%1 dead letters (%2); %3 whose state disagrees with its job,"
                             " outbox or compensation")
                  .arg(total)
                  .arg(figures.join(QStringLiteral(", ")))
                  .arg(inconsistent));
    }
    {
        QList<QUuid> acked;
        for (const auto &[id, audit] : shared.acknowledged)
            acked << id;
        const QueryParams ids = QueryParams().addUuidArray(acked);
        const qint64 lost = count(
            "SELECT count(*) FROM unnest($1::uuid[]) a(id) WHERE NOT EXISTS"
            " (SELECT 1 FROM redrive.operator_action o JOIN redrive.audit_log l"
            "    ON l.action_id = o.action_id AND l.id = o.audit_id WHERE o.action_id = a.id)",
            ids);
        // Operator actions only: a worker's entries (a requeued job that then succeeded) name
        // the requeue's action id too.
        const qint64 doubled = count("SELECT count(*) FROM (SELECT action_id FROM redrive.audit_log"
                                     " WHERE db_user = ANY ($1) GROUP BY 1 HAVING count(*) > 1) x",
                                     logins);
        const qint64 actions = count("SELECT count(*) FROM redrive.operator_action");
        check(QStringLiteral("every action id once"), lost + doubled,
              QStringLiteral("%1 actions acknowledged to the sessions, %2 recorded; lost %3,"
                             " doubled %4")
                  .arg(acked.size())
                  .arg(actions)
                  .arg(lost)
                  .arg(doubled));
    }
    {
        const qint64 actionWithoutEntry
            = count("SELECT count(*) FROM redrive.operator_action o WHERE NOT EXISTS"
                    " (SELECT 1 FROM redrive.audit_log l WHERE l.action_id = o.action_id)");
        const qint64 entryWithoutAction
            = count("SELECT count(*) FROM redrive.audit_log l WHERE l.db_user = ANY ($1)"
                    "   AND NOT EXISTS (SELECT 1 FROM redrive.operator_action o"
                    "                    WHERE o.action_id = l.action_id)",
                    logins);
        // Requeues: one outbox command per target named applied, and no command without one.
        const qint64 requeueWithoutCommand
            = count("SELECT count(*) FROM redrive.audit_log l, jsonb_array_elements(l.targets) t,"
                    "      redrive.dead_letter d"
                    " WHERE l.action = 'requeue' AND t ->> 'result' = 'applied'"
                    "   AND d.id = (t ->> 'id')::bigint AND NOT EXISTS"
                    "   (SELECT 1 FROM redrive.outbox o WHERE o.command = 'requeue'"
                    "     AND o.action_id = l.action_id AND o.target_id = d.job_id::text)");
        const qint64 commandWithoutRequeue = count(
            "SELECT count(*) FROM redrive.outbox o WHERE o.command = 'requeue' AND NOT EXISTS"
            " (SELECT 1 FROM redrive.audit_log l, jsonb_array_elements(l.targets) t,"
            "         redrive.dead_letter d"
            "   WHERE l.action_id = o.action_id AND t ->> 'result' = 'applied'"
            "     AND d.id = (t ->> 'id')::bigint AND o.target_id = d.job_id::text)");
        const qint64 requeues
            = count("SELECT count(*) FROM redrive.outbox WHERE command = 'requeue'");
        // Resolves by a console login: each with an audit entry naming it applied.
        const qint64 resolvedWithoutEntry
            = count("SELECT count(*) FROM redrive.dead_letter d WHERE d.status = 'resolved' AND "
                    "d.resolved_by = ANY ($1)"
                    "   AND NOT EXISTS (SELECT 1 FROM redrive.audit_log l, "
                    "jsonb_array_elements(l.targets) t"
                    "                    WHERE l.action = 'resolve' AND t ->> 'result' = 'applied'"
                    "                      AND (t ->> 'id')::bigint = d.id)",
                    logins);
        const qint64 resolved = count("SELECT count(*) FROM redrive.dead_letter"
                                      " WHERE status = 'resolved' AND resolved_by = ANY ($1)",
                                      logins);
        // Compensations: each request with its request entry, each decision with its entry.
        const qint64 requestWithoutEntry
            = count("SELECT count(*) FROM redrive.compensation_request c WHERE NOT EXISTS"
                    " (SELECT 1 FROM redrive.audit_log l WHERE l.action_id = c.action_id)");
        const qint64 requests = count("SELECT count(*) FROM redrive.compensation_request");
        check(QStringLiteral("every applied change with its audit entry, every entry with its"
                             " change"),
              actionWithoutEntry + entryWithoutAction + requeueWithoutCommand
                  + commandWithoutRequeue + resolvedWithoutEntry + requestWithoutEntry,
              QStringLiteral("%1 requeue commands (%2 without an entry, %3 entries without one);"
                             " %4 resolved by a console (%5 without an entry); %6 compensation"
                             " requests (%7 without an entry); actions without an entry %8,"
                             " entries without an action %9")
                  .arg(requeues)
                  .arg(commandWithoutRequeue)
                  .arg(requeueWithoutCommand)
                  .arg(resolved)
                  .arg(resolvedWithoutEntry)
                  .arg(requests)
                  .arg(requestWithoutEntry)
                  .arg(actionWithoutEntry)
                  .arg(entryWithoutAction));
    }
    {
        qint64 bulkDoubled = 0;
        qint64 bulkTargets = 0;
        for (const auto &[bulk, applied] : shared.bulkApplied) {
            const QSet<qint64> once(applied.begin(), applied.end());
            bulkDoubled += applied.size() - once.size();
            bulkTargets += applied.size();
        }
        const qint64 serverDoubled = count(
            "SELECT count(*) FROM (SELECT o.bulk_id, t ->> 'id' FROM redrive.operator_action o"
            "  JOIN redrive.audit_log l ON l.id = o.audit_id,"
            "       jsonb_array_elements(l.targets) t"
            " WHERE o.bulk_id IS NOT NULL AND t ->> 'result' = 'applied'"
            " GROUP BY 1, 2 HAVING count(*) > 1) x");
        const qint64 chunksTwice
            = count("SELECT count(*) FROM (SELECT bulk_id, chunk_no FROM redrive.operator_action"
                    " WHERE bulk_id IS NOT NULL GROUP BY 1, 2 HAVING count(*) > 1) x");
        check(QStringLiteral("every bulk target applied at most once"),
              bulkDoubled + serverDoubled + chunksTwice,
              QStringLiteral("%1 bulk(s), %2 targets applied as the runners saw them; doubled:"
                             " %3 in the runners, %4 in the audit log, %5 chunks twice")
                  .arg(shared.bulkApplied.size())
                  .arg(bulkTargets)
                  .arg(bulkDoubled)
                  .arg(serverDoubled)
                  .arg(chunksTwice));
    }
    {
        const qint64 refundedTwice
            = count("SELECT count(*) FROM (SELECT idempotency_key FROM sim.provider_refund"
                    " GROUP BY 1 HAVING count(*) > 1) x");
        const qint64 doneWithoutOne
            = count("SELECT count(*) FROM redrive.compensation_request c WHERE c.status = 'done'"
                    "   AND (SELECT count(*) FROM sim.provider_refund r"
                    "         WHERE r.idempotency_key = 'refund:' || c.id) <> 1");
        const qint64 overRefunded = count("SELECT count(*) FROM sim.provider_charge"
                                          " WHERE refunded_minor > amount_minor");
        const qint64 openTwice
            = count("SELECT count(*) FROM (SELECT payment_ref FROM redrive.compensation_request"
                    " WHERE status IN ('pending_approval', 'approved', 'executing')"
                    " GROUP BY 1 HAVING count(*) > 1) x");
        const ResultSet byStatus = q("SELECT status, count(*) FROM redrive.compensation_request"
                                     " GROUP BY 1 ORDER BY 1");
        QStringList figures;
        for (int i = 0; i < byStatus.rowCount(); ++i)
            figures << QStringLiteral("%1 %2").arg(byStatus.text(i, 0), byStatus.text(i, 1));
        check(QStringLiteral("no compensation executed twice"),
              refundedTwice + doneWithoutOne + overRefunded + openTwice,
              QStringLiteral("%1 refunds at the provider (%2); refunded twice %3, done without"
                             " exactly one refund %4, charges refunded beyond their amount %5,"
                             " payments with two open compensations %6")
                  .arg(count("SELECT count(*) FROM sim.provider_refund"))
                  .arg(figures.join(QStringLiteral(", ")))
                  .arg(refundedTwice)
                  .arg(doneWithoutOne)
                  .arg(overRefunded)
                  .arg(openTwice));
    }
    {
        const ResultSet verified
            = q(statementSql(Statement::VerifyAuditChain),
                QueryParams().addNull(ParamType::BigInt).addNull(ParamType::Text));
        const qint64 entries = count("SELECT count(*) FROM redrive.audit_log");
        check(QStringLiteral("the audit chain verifies"), verified.rowCount(),
              verified.rowCount() == 0 ? QStringLiteral("%1 entries, chain holds").arg(entries)
                                       : QStringLiteral("%1 entries, broken at %2: %3")
                                             .arg(entries)
                                             .arg(verified.text(0, 0), verified.text(0, 1)));
    }
    {
        const qint64 overlapping
            = count("SELECT count(*) FROM redrive.attempt a JOIN redrive.attempt b"
                    "  ON b.job_id = a.job_id AND b.id > a.id"
                    " WHERE tstzrange(a.started_at, coalesce(a.finished_at, 'infinity'), '[)')"
                    "    && tstzrange(b.started_at, coalesce(b.finished_at, 'infinity'), '[)')");
        const qint64 chargedTwice
            = count("SELECT count(*) FROM (SELECT idempotency_key FROM sim.provider_charge"
                    " GROUP BY 1 HAVING count(*) > 1) x");
        const qint64 attempts = count("SELECT count(*) FROM redrive.attempt");
        check(QStringLiteral("no job ran twice at the same time"), overlapping + chargedTwice,
              QStringLiteral("%1 attempts; overlapping attempts of one job %2, payments charged"
                             " twice %3")
                  .arg(attempts)
                  .arg(overlapping)
                  .arg(chargedTwice));
    }

    std::printf("\nsoak: what was tried (seed %u, %d s, 5 console sessions, 2 workers)\n", seed,
                seconds);
    std::printf("  %-22s %7s %7s %7s %7s %7s %7s %7s\n", "action", "tried", "acked", "resent",
                "resumed", "unfroze", "refused", "gave up");
    Tally sum;
    for (const auto &[kind, t] : shared.tally) {
        std::printf("  %-22s %7d %7d %7d %7d %7d %7d %7d\n", qPrintable(kind), t.tried,
                    t.acknowledged, t.resent, t.resumed, t.notFrozen, t.refused, t.unanswered);
        sum.notFrozen += t.notFrozen;
        sum.tried += t.tried;
        sum.acknowledged += t.acknowledged;
        sum.resent += t.resent;
        sum.resumed += t.resumed;
        sum.refused += t.refused;
        sum.unanswered += t.unanswered;
    }
    std::printf("  %-22s %7d %7d %7d %7d %7d %7d %7d\n", "all", sum.tried, sum.acknowledged,
                sum.resent, sum.resumed, sum.notFrozen, sum.refused, sum.unanswered);
    std::printf("soak: faults injected: %d backends killed (%d console, %d worker)\n",
                shared.killedConsole + shared.killedWorker, shared.killedConsole,
                shared.killedWorker);
    for (const auto &[why, n] : shared.refusals)
        std::printf("soak: refused %dx: %s\n", n, qPrintable(why));
    for (const auto &[why, n] : shared.resumeErrors)
        std::printf("soak: a resumed bulk failed %dx: %s\n", n, qPrintable(why));
    for (const auto &[why, n] : shared.gaveUp)
        std::printf("soak: gave up %dx after: %s\n", n, qPrintable(why));
    for (const auto &[why, n] : shared.readErrors)
        std::printf("soak: read failed %dx: %s\n", n, qPrintable(why));
    if (workersGone > 0)
        std::printf("soak: %d worker(s) exited before the end\n", workersGone);
    std::printf("\nsoak: invariants\n");
    qint64 broken = 0;
    for (const Check &c : checks) {
        std::printf("  [%s] %s: %s\n", c.broken == 0 ? "ok" : "BROKEN", qPrintable(c.name),
                    qPrintable(c.figures));
        broken += c.broken;
    }
    const bool faultsInjected = shared.killedConsole > 0 && shared.killedWorker > 0
        && workersGone == 0 && shared.readErrors.empty();
    if (!faultsInjected)
        std::printf("soak: no fault reached both a console and a worker, a worker exited or a"
                    " read failed: not a soak\n");
    std::printf("soak: %s\n",
                broken == 0 && faultsInjected && sum.unanswered == 0 ? "ok" : "FAILED");
    std::fflush(stdout);
    return broken == 0 && faultsInjected && sum.unanswered == 0 ? 0 : 1;
}
