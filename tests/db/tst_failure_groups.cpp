// SPDX-License-Identifier: GPL-3.0-or-later
// Failure groups (docs/domain.md#failure-groups): the rollup kept by statement-level triggers
// equals a full recount after random inserts, requeues, resolves, dead-again moves and concurrent
// sessions; the set-based safe-to-retry verdict equals the per-row one over the demo world; the
// list names groups, tells look-alikes apart, shows the trend, the verdicts, where a requeue's
// dead letters went and regressions, with exact values; and no login can write the rollup.
#include "models/db/schema_migrator.h"
#include "models/db/sql_statement.h"
#include "models/display_format.h"
#include "models/failure_group_model.h"
#include "models/worker/demo_world.h"
#include "tests/support/test_database.h"

#include <QAbstractItemModelTester>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRandomGenerator>
#include <QSignalSpy>
#include <QTest>
#include <QUuid>
#include <thread>

using namespace redrive;
using namespace redrive::db;

namespace {

const QString kPassword = QStringLiteral("fg-Pw-7731");

// Every per-group number the rollup keeps, recounted from redrive.dead_letter, and the same
// numbers as the rollup has them, one line per group (and per group and hour), sorted.
const QByteArray kRecount = R"(
SELECT coalesce(string_agg(format('%s %s/%s/%s/%s/%s/%s %s %s', fingerprint, o, rq, rs, cp, cg, cd,
                                  f, l), E'\n' ORDER BY fingerprint), '')
  FROM (SELECT d.fingerprint, count(*) FILTER (WHERE d.status = 'open') AS o,
               count(*) FILTER (WHERE d.status = 'requeued') AS rq,
               count(*) FILTER (WHERE d.status = 'resolved') AS rs,
               count(*) FILTER (WHERE d.status = 'compensation_pending') AS cp,
               count(*) FILTER (WHERE d.status = 'compensating') AS cg,
               count(*) FILTER (WHERE d.status = 'compensated') AS cd,
               min(d.dead_at) AS f, max(d.dead_at) AS l
          FROM redrive.dead_letter d GROUP BY d.fingerprint) x)";
const QByteArray kRollup = R"(
SELECT coalesce(string_agg(format('%s %s/%s/%s/%s/%s/%s %s %s', fingerprint, open_count,
                                  requeued_count, resolved_count, compensation_pending_count,
                                  compensating_count, compensated_count, first_dead_at,
                                  last_dead_at), E'\n' ORDER BY fingerprint), '')
  FROM redrive.failure_group_rollup
 WHERE open_count + requeued_count + resolved_count + compensation_pending_count
       + compensating_count + compensated_count > 0)";
const QByteArray kHourRecount = R"(
SELECT coalesce(string_agg(format('%s %s %s', fingerprint, h, n), E'\n'
                           ORDER BY fingerprint, h), '')
  FROM (SELECT d.fingerprint, date_trunc('hour', d.dead_at, 'UTC') AS h, count(*) AS n
          FROM redrive.dead_letter d GROUP BY 1, 2) x)";
const QByteArray kHourRollup = R"(
SELECT coalesce(string_agg(format('%s %s %s', fingerprint, hour, dead_letters), E'\n'
                           ORDER BY fingerprint, hour), '')
  FROM redrive.failure_group_hour)";

// The preview's verdict before the set-based one: retry_verdict() called once per target. $1
// and $2 as the preview's (explicit ids, or a group's fingerprint).
const QByteArray kPerRowPreview = R"(
SELECT d.id, coalesce(v.severity, 'ok') AS verdict, coalesce(v.reasons, '') AS verdict_reasons,
       d.version, d.status
  FROM redrive.dead_letter d
  LEFT JOIN LATERAL (
        SELECT CASE WHEN bool_or(r.severity = 'block') THEN 'block'
                    WHEN bool_or(r.severity = 'warn') THEN 'warn' END AS severity,
               string_agg(r.explanation, ' ' ORDER BY r.severity, r.code, r.explanation)
                   AS reasons
          FROM redrive.retry_verdict(d.id) r) v ON true
 WHERE d.id = ANY ($1::bigint[]) OR ($2::text IS NOT NULL AND d.fingerprint = $2 AND d.status = 'open')
 ORDER BY d.id)";

QByteArray targetsJson(const ResultSet &rows)
{
    QJsonArray a;
    for (int i = 0; i < rows.rowCount(); ++i)
        a.append(QJsonObject { { QStringLiteral("id"), rows.bigInt(i, 0).value_or(0) },
                               { QStringLiteral("version"), rows.integer(i, 1).value_or(0) } });
    return QJsonDocument(a).toJson(QJsonDocument::Compact);
}

} // namespace

class TestFailureGroups : public QObject
{
    Q_OBJECT
private:
    std::unique_ptr<test::TestDatabase> m_db;
    PgConnection m_admin;
    QString m_oncall, m_support, m_worker, m_nobody;

    PgConnection tcp(const QString &login)
    {
        return test::TestDatabase::connectWith(m_db->consoleTcpSettingsAs(login, kPassword));
    }
    ResultSet q(PgConnection &c, const QByteArray &sql, const QueryParams &params = {})
    {
        auto r = c.exec(sql, params);
        if (!r)
            qFatal("%s: %s", sql.constData(), qPrintable(r.error().summary()));
        return r.value();
    }
    ResultSet q(const QByteArray &sql, const QueryParams &params = {})
    {
        return q(m_admin, sql, params);
    }

    // The preview (`preview`, the console's statement) against the per-row one (`expected`,
    // kPerRowPreview): the same targets in the same order with the same verdicts and reasons.
    static void comparePreviews(const ResultSet &preview, const ResultSet &expected)
    {
        QCOMPARE(preview.rowCount(), expected.rowCount());
        for (int r = 0; r < expected.rowCount(); ++r) {
            QCOMPARE(preview.text(r, QStringLiteral("id")), expected.text(r, 0));
            QCOMPARE(preview.text(r, QStringLiteral("verdict")), expected.text(r, 1));
            QCOMPARE(preview.text(r, QStringLiteral("verdict_reasons")), expected.text(r, 2));
            QCOMPARE(preview.text(r, QStringLiteral("version")), expected.text(r, 3));
            QCOMPARE(preview.text(r, QStringLiteral("status")), expected.text(r, 4));
        }
    }

    // `n` dead letters of one failure group, dying at `deadAt` (SQL expression), their jobs dead.
    void insertDeadLetters(PgConnection &c, int n, const QString &kind, const QString &errorClass,
                           const QString &code, const QString &message, const QByteArray &deadAt,
                           const QString &key = {})
    {
        q(c,
          "WITH j AS (INSERT INTO redrive.job (queue, kind, state, idempotency_key)"
          "           SELECT 'payments', $1, 'dead', nullif($5, '') || g"
          "             FROM generate_series(1, $6) g RETURNING id, kind, idempotency_key)"
          "INSERT INTO redrive.dead_letter (job_id, queue, kind, error_class, error_code,"
          "                                 last_error, idempotency_key, dead_at, fingerprint)"
          "SELECT id, 'payments', kind, $2, $3, $4, idempotency_key, "
              + deadAt + ", '' FROM j",
          QueryParams()
              .addText(kind)
              .addText(errorClass)
              .addText(code)
              .addText(message)
              .addText(key)
              .addInt(n));
    }

    QJsonObject act(PgConnection &c, Statement statement, const QByteArray &targets,
                    const QString &option)
    {
        QueryParams p;
        p.addUuid(QUuid::createUuid()).addJson(targets);
        if (statement == Statement::ActionRequeue)
            p.addBool(true);
        else
            p.addText(option).addNull(ParamType::Text);
        p.addText(QStringLiteral("tested"))
            .addNull(ParamType::Text)
            .addText(QStringLiteral("tester"))
            .addNull(ParamType::Uuid)
            .addNull(ParamType::Int);
        auto r = c.exec(statementSql(statement), p);
        if (!r)
            qFatal("action: %s", qPrintable(r.error().summary()));
        return QJsonDocument::fromJson(r->raw(0, 0)).object();
    }

    void compareWithRecount()
    {
        QCOMPARE(q(kRollup).text(0, 0), q(kRecount).text(0, 0));
        QCOMPARE(q(kHourRollup).text(0, 0), q(kHourRecount).text(0, 0));
    }

    // What the first row's verdict cell said when the groups arrived (loadGroups()).
    bool m_pendingAtLoad = false;
    QString m_verdictAtLoad, m_verdictTipAtLoad;

    // The groups for `filter`, then their verdicts: returns when both are in. Records in
    // m_*AtLoad what the verdict cell of the first row said when the groups had arrived.
    std::unique_ptr<FailureGroupModel> loadGroups(DatabaseSession *session,
                                                  const DeadLetterFilter &filter)
    {
        auto model = std::make_unique<FailureGroupModel>(session);
        QSignalSpy loaded(model.get(), &FailureGroupModel::loaded);
        QSignalSpy failed(model.get(), &FailureGroupModel::failed);
        QSignalSpy verdicts(model.get(), &FailureGroupModel::verdictsLoaded);
        QSignalSpy verdictsFailed(model.get(), &FailureGroupModel::verdictsFailed);
        FailureGroupModel *m = model.get();
        QObject::connect(m, &FailureGroupModel::loaded, m, [this, m] {
            m_pendingAtLoad = m->verdictsPending();
            m_verdictAtLoad = cell(*m, 0, FailureGroupModel::Verdicts);
            m_verdictTipAtLoad = cell(*m, 0, FailureGroupModel::Verdicts, Qt::ToolTipRole);
        });
        model->setFilter(filter);
        if (!loaded.wait(20000))
            qFatal("groups did not load: %s",
                   failed.isEmpty()
                       ? "timeout"
                       : qPrintable(failed.first().first().value<DbError>().summary()));
        if (verdicts.isEmpty() && !verdicts.wait(60000))
            qFatal("verdicts did not load: %s",
                   verdictsFailed.isEmpty()
                       ? "timeout"
                       : qPrintable(verdictsFailed.first().first().value<DbError>().summary()));
        return model;
    }

    // The verdicts of the `cap` newest open dead letters of group `fingerprint` (all of them for
    // a null cap) recounted with retry_verdicts(), as "safe/look first/blocked/reasons".
    QString recountVerdicts(PgConnection &c, const QString &fingerprint, std::optional<int> cap)
    {
        QueryParams p;
        p.addText(fingerprint);
        if (cap)
            p.addInt(*cap);
        else
            p.addNull(ParamType::Int);
        return q(c,
                 "WITH t AS (SELECT d.id FROM redrive.dead_letter d"
                 "            WHERE d.fingerprint = $1 AND d.status = 'open'"
                 "            ORDER BY d.dead_at DESC, d.id DESC LIMIT $2::int),"
                 " v AS (SELECT * FROM redrive.retry_verdicts((SELECT array_agg(id) FROM t))),"
                 " w AS (SELECT t.id, CASE WHEN bool_or(v.severity = 'block') THEN 'block'"
                 "                         WHEN bool_or(v.severity = 'warn') THEN 'warn'"
                 "                         ELSE 'ok' END AS s"
                 "         FROM t LEFT JOIN v ON v.dead_letter_id = t.id GROUP BY t.id),"
                 " c AS (SELECT v.severity, v.code, count(DISTINCT v.dead_letter_id) AS n FROM v"
                 "        WHERE v.severity IN ('block', 'warn') GROUP BY 1, 2)"
                 "SELECT format('%s/%s/%s/%s', (SELECT count(*) FROM w WHERE s = 'ok'),"
                 "              (SELECT count(*) FROM w WHERE s = 'warn'),"
                 "              (SELECT count(*) FROM w WHERE s = 'block'),"
                 "              (SELECT coalesce(string_agg(c.code || ' ' || c.n, ', '"
                 "                               ORDER BY c.severity = 'warn', c.n DESC, c.code),"
                 "                               '') FROM c))",
                 p)
            .text(0, 0);
    }
    static QString shownVerdicts(const FailureGroupModel &m, int row)
    {
        const auto v = m.verdictsAt(row);
        if (!v)
            return QStringLiteral("none");
        return QStringLiteral("%1/%2/%3/%4")
            .arg(v->safe)
            .arg(v->warn)
            .arg(v->blocked)
            .arg(v->reasons);
    }

    static QString cell(const FailureGroupModel &m, int row, int column, int role = Qt::DisplayRole)
    {
        return m.index(row, column).data(role).toString();
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_db = std::make_unique<test::TestDatabase>(QStringLiteral("failure_groups"));
        QVERIFY2(m_db->isValid(), qPrintable(m_db->error()));
        m_admin = m_db->connect();
        m_oncall = m_db->createLogin(QStringLiteral("fg_oncall"),
                                     { QStringLiteral("redrive_oncall") }, kPassword);
        m_support = m_db->createLogin(QStringLiteral("fg_support"),
                                      { QStringLiteral("redrive_support") }, kPassword);
        m_worker = m_db->createLogin(QStringLiteral("fg_worker"),
                                     { QStringLiteral("redrive_worker") }, kPassword);
        m_nobody = m_db->createLogin(QStringLiteral("fg_nobody"), {}, kPassword);
    }
    void cleanupTestCase()
    {
        m_admin = PgConnection();
        m_db.reset();
    }

    void displayHelpers()
    {
        QCOMPARE(display::sparkline({ 0, 1, 4 }), QStringLiteral("\u2581\u2583\u2588"));
        QCOMPARE(display::sparkline({ 0, 0 }), QStringLiteral("\u2581\u2581"));
        QCOMPARE(display::sparkline({}), QString());
        QCOMPARE(display::countList(QStringLiteral("0,3,1")), (QList<qint64> { 0, 3, 1 }));
        QCOMPARE(display::verdictSummary(4, 2, 1),
                 QStringLiteral("4 safe \u00b7 2 look first \u00b7 1 blocked"));
        QCOMPARE(display::verdictSummary(0, 0, 3), QStringLiteral("3 blocked"));
        QCOMPARE(display::verdictSummary(0, 0, 0), QStringLiteral("no open dead letters"));
    }

    // Random inserts, requeues and resolves through the action functions as real logins, worker
    // outcomes (succeeded after requeue, dead again with another error), then two sessions
    // changing overlapping dead letters at once: the rollup equals a full recount each time.
    void rollupEqualsRecountAfterRandomChanges()
    {
        QRandomGenerator rng(20261201);
        const QStringList codes { QStringLiteral("provider_5xx"), QStringLiteral("timeout"),
                                  QStringLiteral("invalid_request") };
        const QStringList kinds { QStringLiteral("charge_card"), QStringLiteral("send_receipt") };
        PgConnection oncall = tcp(m_oncall);
        PgConnection support = tcp(m_support);
        for (int round = 0; round < 40; ++round) {
            switch (rng.bounded(6)) {
            case 0:
            case 1:
                insertDeadLetters(m_admin, 1 + int(rng.bounded(40)), kinds[rng.bounded(2)],
                                  QStringLiteral("transient"), codes[rng.bounded(3)],
                                  QStringLiteral("upstream said %1").arg(rng.bounded(3)),
                                  "clock_timestamp() - (random() * interval '30 hours')");
                break;
            case 2: {
                const ResultSet t = q("SELECT id, version FROM redrive.dead_letter"
                                      " WHERE status = 'open' ORDER BY random() LIMIT $1",
                                      QueryParams().addInt(1 + int(rng.bounded(60))));
                if (t.rowCount() > 0)
                    QVERIFY(act(oncall, Statement::ActionRequeue, targetsJson(t), {})
                                .value(QStringLiteral("applied"))
                                .toInt()
                            > 0);
                break;
            }
            case 3: {
                const ResultSet t = q("SELECT id, version FROM redrive.dead_letter"
                                      " WHERE status IN ('open', 'requeued')"
                                      " ORDER BY random() LIMIT $1",
                                      QueryParams().addInt(1 + int(rng.bounded(30))));
                if (t.rowCount() > 0)
                    act(support, Statement::ActionResolve, targetsJson(t),
                        QStringLiteral("fixed_by_hand"));
                break;
            }
            case 4: // the worker: a requeued job succeeded
                q("UPDATE redrive.dead_letter SET status = 'resolved',"
                  "       resolution = 'succeeded_after_requeue', resolved_at = clock_timestamp()"
                  " WHERE id IN (SELECT id FROM redrive.dead_letter WHERE status = 'requeued'"
                  "               ORDER BY random() LIMIT 20)");
                break;
            case 5: // the worker: a requeued job died again, maybe with another error
                q("UPDATE redrive.dead_letter SET status = 'open', dead_at = clock_timestamp(),"
                  "       error_code = CASE WHEN random() < 0.5 THEN error_code ELSE 'timeout' END"
                  " WHERE id IN (SELECT id FROM redrive.dead_letter WHERE status = 'requeued'"
                  "               ORDER BY random() LIMIT 20)");
                break;
            }
            compareWithRecount();
        }

        // Two sessions at once over the same dead letters; a statement that loses a deadlock is
        // rolled back whole, which must leave the rollup exact too.
        auto hammer = [this](quint32 seed, int *failures) {
            PgConnection c = m_db->connect();
            QRandomGenerator r(seed);
            for (int i = 0; i < 60; ++i) {
                QByteArray sql;
                switch (r.bounded(4)) {
                case 0:
                    sql = "WITH j AS (INSERT INTO redrive.job (queue, kind, state)"
                          "  SELECT 'payments', 'charge_card', 'dead' FROM generate_series(1, 25)"
                          "  RETURNING id)"
                          "INSERT INTO redrive.dead_letter (job_id, queue, kind, error_class,"
                          "  error_code, last_error, dead_at, fingerprint)"
                          "SELECT id, 'payments', 'charge_card', 'transient', 'timeout',"
                          "  'upstream said 1', clock_timestamp() - random() * interval '5 hours',"
                          "  '' FROM j";
                    break;
                case 1:
                    sql = "UPDATE redrive.dead_letter SET status = 'requeued'"
                          " WHERE status = 'open' AND id % 7 = (random() * 6)::int";
                    break;
                case 2:
                    sql = "UPDATE redrive.dead_letter SET status = 'open',"
                          "  dead_at = clock_timestamp(), error_code = 'provider_5xx'"
                          " WHERE status = 'requeued' AND id % 5 = (random() * 4)::int";
                    break;
                default:
                    sql = "UPDATE redrive.dead_letter SET status = 'resolved'"
                          " WHERE status IN ('open', 'requeued') AND id % 11 = (random() * "
                          "10)::int";
                    break;
                }
                if (!c.exec(sql))
                    ++*failures;
            }
        };
        int failuresA = 0, failuresB = 0;
        std::thread a(hammer, 1u, &failuresA);
        std::thread b(hammer, 2u, &failuresB);
        a.join();
        b.join();
        qInfo("concurrent statements rolled back (deadlock victims): %d", failuresA + failuresB);
        compareWithRecount();
        QVERIFY(q("SELECT count(*) FROM redrive.dead_letter").bigInt(0, 0).value_or(0) > 500);
    }

    // The console's logins read the rollup through its view; none can write it or feed it
    // changes, and a login without a role cannot read it.
    void rollupCannotBeWrittenByLogins()
    {
        for (const QString &login : { m_oncall, m_worker, m_nobody }) {
            PgConnection c = tcp(login);
            for (const QByteArray &sql :
                 { QByteArray("UPDATE redrive.failure_group_rollup SET open_count = 0"),
                   QByteArray("DELETE FROM redrive.failure_group_hour"),
                   QByteArray("INSERT INTO redrive.failure_group_rollup (fingerprint)"
                              " SELECT fingerprint FROM redrive.failure_group LIMIT 1"),
                   QByteArray("SELECT redrive.apply_failure_group_changes(ARRAY[ROW((SELECT"
                              " fingerprint FROM redrive.failure_group LIMIT 1), 'open', now(),"
                              " 1000)::redrive.failure_group_change])") }) {
                auto r = c.exec(sql);
                QVERIFY2(!r, qPrintable(login + QStringLiteral(": ") + QString::fromUtf8(sql)));
                QCOMPARE(r.error().kind(), ErrorKind::Permission);
            }
            const bool reads
                = bool(c.exec("SELECT count(*) FROM redrive.failure_group_rollup_list"));
            QCOMPARE(reads, login != m_nobody);
        }
        compareWithRecount();
    }

    // What the list says about each group, with exact values, read as an on-call login.
    void listNamesTellsApartAndFollowsARequeue()
    {
        test::TestDatabase db(QStringLiteral("fg_list"));
        QVERIFY2(db.isValid(), qPrintable(db.error()));
        PgConnection admin = db.connect();
        const QString oncallLogin = db.createLogin(QStringLiteral("fgl_oncall"),
                                                   { QStringLiteral("redrive_oncall") }, kPassword);
        const QString supportLogin = db.createLogin(
            QStringLiteral("fgl_support"), { QStringLiteral("redrive_support") }, kPassword);
        const QByteArray thisHour = "date_trunc('hour', now()) + interval '1 second'";
        const QByteArray threeHoursAgo = "date_trunc('hour', now()) - interval '3 hours'";
        // Three "invalid_request" groups: two kinds with one message, and a permanent one with
        // another message; one timeout group that will be resolved and then fail again.
        insertDeadLetters(admin, 2, QStringLiteral("charge_card"), QStringLiteral("transient"),
                          QStringLiteral("invalid_request"),
                          QStringLiteral("amount 150 must be at least 200"), thisHour);
        insertDeadLetters(admin, 1, QStringLiteral("charge_card"), QStringLiteral("transient"),
                          QStringLiteral("invalid_request"),
                          QStringLiteral("amount 99 must be at least 200"), threeHoursAgo,
                          QStringLiteral("charge:"));
        insertDeadLetters(admin, 2, QStringLiteral("refund"), QStringLiteral("transient"),
                          QStringLiteral("invalid_request"),
                          QStringLiteral("amount 150 must be at least 200"), thisHour);
        insertDeadLetters(admin, 1, QStringLiteral("charge_card"), QStringLiteral("permanent"),
                          QStringLiteral("invalid_request"),
                          QStringLiteral("currency \"XXX\" is not supported"), thisHour);
        insertDeadLetters(admin, 2, QStringLiteral("send_receipt"), QStringLiteral("transient"),
                          QStringLiteral("timeout"), QStringLiteral("mail server timed out"),
                          thisHour);
        // The charge with a key: the key is done, so its verdict is "look first".
        q(admin,
          "INSERT INTO redrive.idempotency_key (scope, key, request_hash, state, result)"
          " VALUES ('charge_card', 'charge:1', repeat('a', 64), 'done', '{}')");

        auto session = db.openSession(db.consoleTcpSettingsAs(oncallLogin, kPassword));
        QVERIFY2(session, qPrintable(db.error()));
        DeadLetterFilter open;
        open.statuses = { QStringLiteral("open") };
        auto model = loadGroups(session.get(), open);
        QAbstractItemModelTester tester(model.get(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QCOMPARE(model->rowCount(), 4);
        // The groups came first, their verdicts after: when the rows were in, the verdict cells
        // said they were being counted.
        QVERIFY(m_pendingAtLoad);
        QCOMPARE(m_verdictAtLoad, QStringLiteral("\u2026"));
        QCOMPARE(
            m_verdictTipAtLoad,
            display::plainToolTip(QStringLiteral("Counting the safe-to-retry verdicts\u2026")));
        QVERIFY(!model->verdictsPending());

        auto rowNamed = [&](const QString &name, const QString &kind) {
            for (int r = 0; r < model->rowCount(); ++r)
                if (model->nameAt(r) == name && cell(*model, r, FailureGroupModel::Kind) == kind)
                    return r;
            return -1;
        };
        const QString amountName
            = QStringLiteral("invalid_request: amount <n> must be at least <n>");
        const int charge = rowNamed(amountName, QStringLiteral("charge_card"));
        const int refund = rowNamed(amountName, QStringLiteral("refund"));
        const int currency
            = rowNamed(QStringLiteral("invalid_request: currency <value> is not supported"),
                       QStringLiteral("charge_card"));
        const int timeout = rowNamed(QStringLiteral("timeout: mail server timed out"),
                                     QStringLiteral("send_receipt"));
        QVERIFY(charge >= 0 && refund >= 0 && currency >= 0 && timeout >= 0);
        // Largest first; ties by fingerprint.
        QCOMPARE(cell(*model, 0, FailureGroupModel::Count), QStringLiteral("3"));
        QCOMPARE(charge, 0);

        // Never a hash: the name is code plus normalized message.
        QCOMPARE(cell(*model, charge, FailureGroupModel::Name), amountName);
        // Look-alikes say what tells them apart.
        QCOMPARE(cell(*model, charge, FailureGroupModel::Differs),
                 QStringLiteral("kind charge_card \u00b7 class transient \u00b7 message \"amount "
                                "<n> must be at least <n>\""));
        QCOMPARE(cell(*model, refund, FailureGroupModel::Differs),
                 QStringLiteral("kind refund \u00b7 class transient \u00b7 message \"amount <n> "
                                "must be at least <n>\""));
        QCOMPARE(cell(*model, currency, FailureGroupModel::Differs),
                 QStringLiteral("kind charge_card \u00b7 class permanent \u00b7 message "
                                "\"currency <value> is not supported\""));
        QCOMPARE(cell(*model, timeout, FailureGroupModel::Differs), QString());

        // Counts, the trend per hour and the verdicts.
        QCOMPARE(cell(*model, charge, FailureGroupModel::Open), QStringLiteral("3"));
        QCOMPARE(cell(*model, charge, FailureGroupModel::InFlight), QStringLiteral("0"));
        QCOMPARE(cell(*model, charge, FailureGroupModel::Resolved), QStringLiteral("0"));
        QCOMPARE(model->text(charge, QStringLiteral("hourly")),
                 QStringLiteral("0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,0,1,0,0,2"));
        QCOMPARE(cell(*model, charge, FailureGroupModel::Trend),
                 QString(20, QChar(0x2581)) + QStringLiteral("\u2585\u2581\u2581\u2588"));
        QCOMPARE(cell(*model, charge, FailureGroupModel::Verdicts),
                 QStringLiteral("2 safe \u00b7 1 look first"));
        // Tooltips carry database text, shown literally (display::plainToolTip).
        QCOMPARE(
            cell(*model, charge, FailureGroupModel::Verdicts, Qt::ToolTipRole),
            display::plainToolTip(QStringLiteral("Why (open dead letters per rule): key_done 1")));
        QCOMPARE(cell(*model, currency, FailureGroupModel::Verdicts), QStringLiteral("1 blocked"));
        QCOMPARE(
            cell(*model, currency, FailureGroupModel::Verdicts, Qt::ToolTipRole),
            display::plainToolTip(QStringLiteral("Why (open dead letters per rule): permanent 1")));
        QCOMPARE(cell(*model, refund, FailureGroupModel::Verdicts), QStringLiteral("2 safe"));
        QCOMPARE(cell(*model, timeout, FailureGroupModel::Verdicts), QStringLiteral("2 safe"));
        // Every group is within the cap: exact, the same as a recount over the whole group.
        QCOMPARE(shownVerdicts(*model, charge), QStringLiteral("2/1/0/key_done 1"));
        QCOMPARE(shownVerdicts(*model, currency), QStringLiteral("0/0/1/permanent 1"));
        for (int r = 0; r < model->rowCount(); ++r) {
            QCOMPARE(shownVerdicts(*model, r),
                     recountVerdicts(admin, model->fingerprintAt(r), std::nullopt));
            QCOMPARE(model->verdictsAt(r)->sampled, false);
            QCOMPARE(model->verdictsAt(r)->sample,
                     cell(*model, r, FailureGroupModel::Open).toLongLong());
        }
        // Copy-out carries the verdicts.
        const QJsonObject chargeJson
            = model->index(charge, FailureGroupModel::Name).data(kRowJsonRole).toJsonObject();
        QCOMPARE(chargeJson.value(QStringLiteral("verdict_safe")), QJsonValue(2));
        QCOMPARE(chargeJson.value(QStringLiteral("verdict_warn")), QJsonValue(1));
        QCOMPARE(chargeJson.value(QStringLiteral("verdict_blocked")), QJsonValue(0));
        QCOMPARE(chargeJson.value(QStringLiteral("verdict_reasons")),
                 QJsonValue(QStringLiteral("key_done 1")));
        QCOMPARE(chargeJson.value(QStringLiteral("verdict_sampled")), QJsonValue(false));

        // The same numbers when a filter other than statuses forces a recount from the
        // dead letters instead of the rollup.
        DeadLetterFilter queue = open;
        queue.queues = { QStringLiteral("payments") };
        auto recounted = loadGroups(session.get(), queue);
        QCOMPARE(recounted->rowCount(), model->rowCount());
        for (int r = 0; r < model->rowCount(); ++r)
            for (int c = 0; c < model->columnCount(); ++c)
                QCOMPARE(cell(*recounted, r, c), cell(*model, r, c));

        // A requeue of the two safe charges: the group stays listed and says where they went.
        PgConnection oncall
            = test::TestDatabase::connectWith(db.consoleTcpSettingsAs(oncallLogin, kPassword));
        const QString chargeFp = model->fingerprintAt(charge);
        const ResultSet safe = q(admin,
                                 "SELECT id, version FROM redrive.dead_letter"
                                 " WHERE fingerprint = $1 AND idempotency_key IS NULL ORDER BY id",
                                 QueryParams().addText(chargeFp));
        QCOMPARE(safe.rowCount(), 2);
        QCOMPARE(act(oncall, Statement::ActionRequeue, targetsJson(safe), {})
                     .value(QStringLiteral("applied"))
                     .toInt(),
                 2);
        model = loadGroups(session.get(), open);
        int row = model->rowOf(chargeFp);
        QVERIFY(row >= 0);
        QCOMPARE(cell(*model, row, FailureGroupModel::Count), QStringLiteral("1"));
        QCOMPARE(cell(*model, row, FailureGroupModel::Open), QStringLiteral("1"));
        QCOMPARE(cell(*model, row, FailureGroupModel::InFlight), QStringLiteral("2"));
        QCOMPARE(cell(*model, row, FailureGroupModel::Resolved), QStringLiteral("0"));
        // The worker: one succeeded after its requeue, one died again.
        q(admin,
          "UPDATE redrive.dead_letter SET status = 'resolved',"
          " resolution = 'succeeded_after_requeue', resolved_at = clock_timestamp()"
          " WHERE id = $1",
          QueryParams().addBigInt(safe.bigInt(0, 0).value_or(0)));
        q(admin, "UPDATE redrive.dead_letter SET status = 'open' WHERE id = $1",
          QueryParams().addBigInt(safe.bigInt(1, 0).value_or(0)));
        model = loadGroups(session.get(), open);
        row = model->rowOf(chargeFp);
        QCOMPARE(cell(*model, row, FailureGroupModel::Open), QStringLiteral("2"));
        QCOMPARE(cell(*model, row, FailureGroupModel::InFlight), QStringLiteral("0"));
        QCOMPARE(cell(*model, row, FailureGroupModel::Resolved), QStringLiteral("1"));

        // Regression: the timeout group is resolved (it leaves the open list), then fails again.
        const QString timeoutFp = recounted->fingerprintAt(timeout);
        PgConnection support
            = test::TestDatabase::connectWith(db.consoleTcpSettingsAs(supportLogin, kPassword));
        act(support, Statement::ActionResolve,
            targetsJson(q(admin,
                          "SELECT id, version FROM redrive.dead_letter"
                          " WHERE fingerprint = $1 ORDER BY id",
                          QueryParams().addText(timeoutFp))),
            QStringLiteral("fixed_by_hand"));
        model = loadGroups(session.get(), open);
        QCOMPARE(model->rowOf(timeoutFp), -1);
        QVERIFY(q(admin,
                  "SELECT regressed_at IS NULL AND resolved_at IS NOT NULL"
                  "  FROM redrive.failure_group_rollup WHERE fingerprint = $1",
                  QueryParams().addText(timeoutFp))
                    .boolean(0, 0)
                    .value_or(false));
        insertDeadLetters(admin, 1, QStringLiteral("send_receipt"), QStringLiteral("transient"),
                          QStringLiteral("timeout"), QStringLiteral("mail server timed out"),
                          "timestamptz '2026-11-30 22:15:00+00'");
        model = loadGroups(session.get(), open);
        row = model->rowOf(timeoutFp);
        QVERIFY(row >= 0);
        QCOMPARE(cell(*model, row, FailureGroupModel::Name),
                 QStringLiteral("Regression \u00b7 timeout: mail server timed out"));
        QCOMPARE(model->index(row, FailureGroupModel::Name)
                     .data(kRowJsonRole)
                     .toJsonObject()
                     .value(QStringLiteral("regressed_at")),
                 QJsonValue(QStringLiteral("2026-11-30T22:15:00.000Z")));
        QCOMPARE(cell(*model, row, FailureGroupModel::Open), QStringLiteral("1"));
        QCOMPARE(cell(*model, row, FailureGroupModel::Resolved), QStringLiteral("2"));
        // Resolved again: no longer a regression.
        act(support, Statement::ActionResolve,
            targetsJson(q(admin,
                          "SELECT id, version FROM redrive.dead_letter"
                          " WHERE fingerprint = $1 AND status = 'open'",
                          QueryParams().addText(timeoutFp))),
            QStringLiteral("fixed_by_hand"));
        QVERIFY(q(admin,
                  "SELECT regressed_at IS NULL FROM redrive.failure_group_rollup"
                  " WHERE fingerprint = $1",
                  QueryParams().addText(timeoutFp))
                    .boolean(0, 0)
                    .value_or(false));
    }

    // A group with more open dead letters than the cap: its verdicts are those of exactly its
    // cap newest, marked as a sample; a group within the cap is exact. The statement with a
    // small cap, then the model with its own (FailureGroupModel::kVerdictSample).
    void verdictsOfALargeGroupAreASampleOfItsNewest()
    {
        test::TestDatabase db(QStringLiteral("fg_sample"));
        QVERIFY2(db.isValid(), qPrintable(db.error()));
        PgConnection admin = db.connect();
        const QString oncallLogin = db.createLogin(QStringLiteral("fgs_oncall"),
                                                   { QStringLiteral("redrive_oncall") }, kPassword);
        constexpr int kCap = FailureGroupModel::kVerdictSample;
        // kCap + 5 charges, the n-th dead n minutes ago (key "s:<n>"); every third key is done,
        // so its verdict is "look first".
        insertDeadLetters(
            admin, kCap + 5, QStringLiteral("charge_card"), QStringLiteral("transient"),
            QStringLiteral("invalid_request"), QStringLiteral("batch rejected"),
            "now() - substr(idempotency_key, 3)::int * interval '1 minute'", QStringLiteral("s:"));
        q(admin,
          "INSERT INTO redrive.idempotency_key (scope, key, request_hash, state, result)"
          " SELECT 'charge_card', 's:' || g, repeat('a', 64), 'done', '{}'"
          "   FROM generate_series(3, $1, 3) g",
          QueryParams().addInt(kCap + 5));
        insertDeadLetters(admin, 2, QStringLiteral("refund"), QStringLiteral("permanent"),
                          QStringLiteral("invalid_request"), QStringLiteral("refund rejected"),
                          "now()");

        auto session = db.openSession(db.consoleTcpSettingsAs(oncallLogin, kPassword));
        QVERIFY2(session, qPrintable(db.error()));
        DeadLetterFilter open;
        open.statuses = { QStringLiteral("open") };
        auto model = loadGroups(session.get(), open);
        QCOMPARE(model->rowCount(), 2);
        QVERIFY(m_pendingAtLoad);
        QCOMPARE(m_verdictAtLoad, QStringLiteral("\u2026"));
        const QString bigFp = model->fingerprintAt(0);
        const QString smallFp = model->fingerprintAt(1);
        QCOMPARE(cell(*model, 0, FailureGroupModel::Open), QString::number(kCap + 5));
        // The newest 200 are keys s:1..s:200, of which 66 are done.
        static_assert(kCap == 200, "the counts below are for a cap of 200");
        const QString sampleCounts = QStringLiteral("134/66/0/key_done 66");
        const auto big = model->verdictsAt(0);
        QVERIFY(big);
        QCOMPARE(big->sampled, true);
        QCOMPARE(big->sample, qint64(kCap));
        QCOMPARE(shownVerdicts(*model, 0), sampleCounts);
        QCOMPARE(shownVerdicts(*model, 0), recountVerdicts(admin, bigFp, kCap));
        // ... while the whole group (s:1..s:205, 68 done) would say 137/68: the sample is not
        // the whole.
        QCOMPARE(recountVerdicts(admin, bigFp, std::nullopt),
                 QStringLiteral("137/68/0/key_done 68"));
        QCOMPARE(cell(*model, 0, FailureGroupModel::Verdicts),
                 QStringLiteral("134 safe \u00b7 66 look first (newest 200)"));
        QCOMPARE(cell(*model, 0, FailureGroupModel::Verdicts, Qt::ToolTipRole),
                 display::plainToolTip(
                     QStringLiteral("A sample: the %L1 newest open dead letters of this group (it "
                                    "has more) were judged.\nWhy (open dead letters per rule): "
                                    "key_done 66")
                         .arg(kCap)));
        QCOMPARE(model->index(0, FailureGroupModel::Name)
                     .data(kRowJsonRole)
                     .toJsonObject()
                     .value(QStringLiteral("verdict_sampled")),
                 QJsonValue(true));
        // The small group is exact.
        QCOMPARE(model->verdictsAt(1)->sampled, false);
        QCOMPARE(shownVerdicts(*model, 1), QStringLiteral("0/0/2/permanent 2"));
        QCOMPARE(shownVerdicts(*model, 1), recountVerdicts(admin, smallFp, std::nullopt));
        QCOMPARE(cell(*model, 1, FailureGroupModel::Verdicts), QStringLiteral("2 blocked"));

        // The statement itself, as the on-call login, with caps of 2 and 1: exactly the cap
        // newest are judged; a group of exactly the cap is not a sample.
        PgConnection oncall
            = test::TestDatabase::connectWith(db.consoleTcpSettingsAs(oncallLogin, kPassword));
        for (const int cap : { 2, 1 }) {
            QueryParams p;
            DeadLetterFilter().appendParams(p);
            p.addTextArray({ bigFp, smallFp, QStringLiteral("no such group") }).addInt(cap);
            const ResultSet rows = q(oncall, statementSql(Statement::FailureGroupVerdicts), p);
            QCOMPARE(rows.rowCount(), 2); // no row for a group without open dead letters
            for (int r = 0; r < rows.rowCount(); ++r) {
                const QString fp = rows.text(r, QStringLiteral("fingerprint"));
                QCOMPARE(rows.text(r, QStringLiteral("verdict_sample")), QString::number(cap));
                QCOMPARE(rows.boolean(r, rows.columnIndex(QStringLiteral("verdict_sampled"))),
                         std::optional<bool>(fp == bigFp || cap < 2));
                QCOMPARE(QStringLiteral("%1/%2/%3/%4")
                             .arg(rows.text(r, QStringLiteral("verdict_safe")),
                                  rows.text(r, QStringLiteral("verdict_warn")),
                                  rows.text(r, QStringLiteral("verdict_blocked")),
                                  rows.text(r, QStringLiteral("verdict_reasons"))),
                         recountVerdicts(admin, fp, cap));
            }
        }
        // Keys s:1 and s:2 are not done, s:3 is: the 2 newest are safe, the 3 newest not all.
        QCOMPARE(recountVerdicts(admin, bigFp, 2), QStringLiteral("2/0/0/"));
        QCOMPARE(recountVerdicts(admin, bigFp, 3), QStringLiteral("2/1/0/key_done 1"));

        // A reload while the verdicts are on their way: the obsolete request never lands, the
        // new one does, and the rows are there before it. A reload with the same filter (a live
        // re-read) keeps the verdicts shown meanwhile, and says it counts them again.
        QSignalSpy verdicts(model.get(), &FailureGroupModel::verdictsLoaded);
        QSignalSpy loaded(model.get(), &FailureGroupModel::loaded);
        FailureGroupModel *m = model.get();
        QString keptCell, keptTip;
        // Reloaded again the moment the groups are in, i.e. with their verdicts on their way.
        QMetaObject::Connection again = connect(m, &FailureGroupModel::loaded, m, [&] {
            disconnect(again);
            m->reload();
            keptCell = cell(*m, 1, FailureGroupModel::Verdicts);
            keptTip = cell(*m, 1, FailureGroupModel::Verdicts, Qt::ToolTipRole);
        });
        model->reload();
        QVERIFY(model->verdictsPending());
        QTRY_COMPARE_WITH_TIMEOUT(loaded.size(), 2, 20000);
        QCOMPARE(keptCell, QStringLiteral("2 blocked"));
        QCOMPARE(keptTip,
                 display::plainToolTip(QStringLiteral("Why (open dead letters per rule): "
                                                      "permanent 2\nCounting them again\u2026")));
        QTRY_COMPARE_WITH_TIMEOUT(verdicts.size(), 1, 60000);
        QCOMPARE(shownVerdicts(*model, 0), sampleCounts);
        QTest::qWait(200);
        QCOMPARE(verdicts.size(), 1);
        // Another filter: its groups' verdicts are counted afresh, nothing of the old is shown.
        DeadLetterFilter refunds = open;
        refunds.kinds = { QStringLiteral("refund") };
        bool refundsLoaded = false;
        bool pendingAtLoad = false;
        bool noneAtLoad = false;
        QString cellAtLoad;
        const QMetaObject::Connection c = connect(m, &FailureGroupModel::loaded, m, [&] {
            refundsLoaded = true;
            pendingAtLoad = m->verdictsPending();
            noneAtLoad = !m->verdictsAt(0);
            cellAtLoad = cell(*m, 0, FailureGroupModel::Verdicts);
        });
        model->setFilter(refunds);
        QTRY_VERIFY_WITH_TIMEOUT(refundsLoaded, 20000);
        disconnect(c);
        QCOMPARE(model->rowCount(), 1);
        QVERIFY(pendingAtLoad);
        QVERIFY(noneAtLoad);
        QCOMPARE(cellAtLoad, QStringLiteral("\u2026"));
        QTRY_COMPARE_WITH_TIMEOUT(verdicts.size(), 2, 60000);
        QCOMPARE(shownVerdicts(*model, 0), QStringLiteral("0/0/2/permanent 2"));
    }

    // A search that matches more dead letters than FailureGroupModel::kSearchSample counts its
    // groups over that many, and says so: every row's sampled_matches is the cap, the counts add
    // up to it, the count cells say "≥ n" with a tooltip that names the sample. Up to the cap,
    // the counts are exact and nothing says sample. The statement is tried with small caps as
    // the on-call login; the model with its own cap over cap + 5 matches.
    void searchGroupsAreCountedOverASampleBeyondTheCap()
    {
        test::TestDatabase db(QStringLiteral("fg_search_sample"));
        QVERIFY2(db.isValid(), qPrintable(db.error()));
        PgConnection admin = db.connect();
        const QString oncallLogin = db.createLogin(QStringLiteral("fgss_oncall"),
                                                   { QStringLiteral("redrive_oncall") }, kPassword);
        // 2 refunds, then 4 charges that match the search; 3 that do not.
        insertDeadLetters(admin, 2, QStringLiteral("refund"), QStringLiteral("transient"),
                          QStringLiteral("network"),
                          QStringLiteral("connect ECONNREFUSED 10.0.0.2"), "now()");
        insertDeadLetters(admin, 4, QStringLiteral("charge_card"), QStringLiteral("transient"),
                          QStringLiteral("network"),
                          QStringLiteral("connect ECONNREFUSED 10.0.0.1"), "now()");
        insertDeadLetters(admin, 3, QStringLiteral("charge_card"), QStringLiteral("transient"),
                          QStringLiteral("timeout"), QStringLiteral("read timed out"), "now()");
        PgConnection oncall
            = test::TestDatabase::connectWith(db.consoleTcpSettingsAs(oncallLogin, kPassword));
        auto groups = [&](const DeadLetterFilter &filter, int cap) {
            QueryParams p;
            filter.appendParams(p);
            p.addInt(FailureGroupModel::kMaxGroups).addInt(cap);
            return q(oncall, statementSql(Statement::FailureGroups), p);
        };
        DeadLetterFilter search;
        search.search = QStringLiteral("econnrefused");
        auto total = [](const ResultSet &rows, const char *column) {
            qint64 sum = 0;
            for (int r = 0; r < rows.rowCount(); ++r)
                sum += rows.bigInt(r, QString::fromLatin1(column)).value_or(0);
            return sum;
        };
        for (const int cap : { 6, 7, 100 }) {
            const ResultSet rows = groups(search, cap);
            QCOMPARE(rows.rowCount(), 2);
            for (int r = 0; r < rows.rowCount(); ++r)
                QVERIFY(rows.isNull(r, QStringLiteral("sampled_matches")));
            QCOMPARE(rows.text(0, QStringLiteral("dead_letters")), QStringLiteral("4"));
            QCOMPARE(rows.text(1, QStringLiteral("dead_letters")), QStringLiteral("2"));
        }
        for (const int cap : { 5, 3, 1 }) {
            const ResultSet rows = groups(search, cap);
            QVERIFY(rows.rowCount() >= 1);
            for (int r = 0; r < rows.rowCount(); ++r)
                QCOMPARE(rows.text(r, QStringLiteral("sampled_matches")), QString::number(cap));
            QCOMPARE(total(rows, "dead_letters"), qint64(cap));
            QCOMPARE(total(rows, "open_dead_letters"), qint64(cap));
        }
        // Without a text filter nothing is a sample, whatever the cap.
        const ResultSet all = groups(DeadLetterFilter(), 1);
        QCOMPARE(all.rowCount(), 3);
        QCOMPARE(total(all, "dead_letters"), qint64(9));
        for (int r = 0; r < all.rowCount(); ++r)
            QVERIFY(all.isNull(r, QStringLiteral("sampled_matches")));
        DeadLetterFilter kinds;
        kinds.kinds = { QStringLiteral("charge_card") };
        const ResultSet charges = groups(kinds, 1);
        QCOMPARE(total(charges, "dead_letters"), qint64(7));
        QVERIFY(charges.isNull(0, QStringLiteral("sampled_matches")));

        // The model, with its own cap: cap + 5 more charges match.
        constexpr int kCap = FailureGroupModel::kSearchSample;
        insertDeadLetters(admin, kCap + 5 - 6, QStringLiteral("charge_card"),
                          QStringLiteral("transient"), QStringLiteral("network"),
                          QStringLiteral("connect ECONNREFUSED 10.0.0.1"), "now()");
        auto session = db.openSession(db.consoleTcpSettingsAs(oncallLogin, kPassword));
        QVERIFY2(session, qPrintable(db.error()));
        auto model = loadGroups(session.get(), search);
        QVERIFY(model->rowCount() >= 1);
        QCOMPARE(model->sampledMatches(), std::optional<qint64>(kCap));
        qint64 counted = 0;
        for (int r = 0; r < model->rowCount(); ++r) {
            const QString shown = cell(*model, r, FailureGroupModel::Count);
            QVERIFY2(shown.startsWith(QStringLiteral("\u2265 ")), qPrintable(shown));
            counted += model->result().bigInt(r, QStringLiteral("dead_letters")).value_or(0);
        }
        QCOMPARE(counted, qint64(kCap));
        QCOMPARE(cell(*model, 0, FailureGroupModel::Open, Qt::ToolTipRole),
                 display::plainToolTip(
                     QStringLiteral("Counted over a sample: the first %L1 dead letters found that "
                                    "match the filter and the search (more match). The group has "
                                    "at least this many.")
                         .arg(kCap)));
        // Another search that matches fewer: exact again.
        DeadLetterFilter fewer;
        fewer.search = QStringLiteral("10.0.0.2");
        model->setFilter(fewer);
        QTRY_COMPARE_WITH_TIMEOUT(model->rowCount(), 1, 20000);
        QVERIFY(!model->sampledMatches());
        QCOMPARE(cell(*model, 0, FailureGroupModel::Count), QStringLiteral("2"));
    }

    // A search's sample is taken over the dead letters that match the whole filter, statuses
    // included: matches the status filter drops (resolved ones, found first) never use up the cap,
    // nor say "more match" when fewer match. The statuses the filter leaves out are not counted
    // for a search (NULL, shown "—").
    void searchSampleSpendsTheCapOnlyOnWhatTheFilterKeeps()
    {
        test::TestDatabase db(QStringLiteral("fg_search_status"));
        QVERIFY2(db.isValid(), qPrintable(db.error()));
        PgConnection admin = db.connect();
        const QString oncallLogin = db.createLogin(QStringLiteral("fgst_oncall"),
                                                   { QStringLiteral("redrive_oncall") }, kPassword);
        // 5 resolved matches first, then 2 open ones of another group.
        insertDeadLetters(admin, 5, QStringLiteral("charge_card"), QStringLiteral("transient"),
                          QStringLiteral("network"),
                          QStringLiteral("connect ECONNREFUSED 10.0.0.1"), "now()");
        q(admin, "UPDATE redrive.dead_letter SET status = 'resolved'");
        insertDeadLetters(admin, 2, QStringLiteral("charge_card"), QStringLiteral("transient"),
                          QStringLiteral("dns"), QStringLiteral("getaddrinfo ECONNREFUSED db"),
                          "now()");
        PgConnection oncall
            = test::TestDatabase::connectWith(db.consoleTcpSettingsAs(oncallLogin, kPassword));
        DeadLetterFilter open;
        open.statuses = { QStringLiteral("open") };
        open.search = QStringLiteral("econnrefused");
        auto groups = [&](const DeadLetterFilter &filter, int cap) {
            QueryParams p;
            filter.appendParams(p);
            p.addInt(FailureGroupModel::kMaxGroups).addInt(cap);
            return q(oncall, statementSql(Statement::FailureGroups), p);
        };
        for (const int cap : { 2, 3, 6, 100 }) {
            const ResultSet rows = groups(open, cap);
            QCOMPARE(rows.rowCount(), 1);
            QCOMPARE(rows.text(0, QStringLiteral("error_code")), QStringLiteral("dns"));
            QCOMPARE(rows.text(0, QStringLiteral("dead_letters")), QStringLiteral("2"));
            QCOMPARE(rows.text(0, QStringLiteral("open_dead_letters")), QStringLiteral("2"));
            QVERIFY(rows.isNull(0, QStringLiteral("in_flight_dead_letters")));
            QVERIFY(rows.isNull(0, QStringLiteral("resolved_dead_letters")));
            QVERIFY(rows.isNull(0, QStringLiteral("sampled_matches")));
        }
        const ResultSet one = groups(open, 1);
        QCOMPARE(one.rowCount(), 1);
        QCOMPARE(one.text(0, QStringLiteral("dead_letters")), QStringLiteral("1"));
        QCOMPARE(one.text(0, QStringLiteral("sampled_matches")), QStringLiteral("1"));
        // Open and resolved: both counted, and the resolved group listed.
        DeadLetterFilter both = open;
        both.statuses << QStringLiteral("resolved");
        const ResultSet all = groups(both, 100);
        QCOMPARE(all.rowCount(), 2);
        QCOMPARE(all.text(0, QStringLiteral("resolved_dead_letters")), QStringLiteral("5"));
        QCOMPARE(all.text(1, QStringLiteral("open_dead_letters")), QStringLiteral("2"));
        QVERIFY(all.isNull(0, QStringLiteral("in_flight_dead_letters")));
        // The model shows what was not counted as "—", with a tooltip that says why.
        auto session = db.openSession(db.consoleTcpSettingsAs(oncallLogin, kPassword));
        QVERIFY2(session, qPrintable(db.error()));
        auto model = loadGroups(session.get(), open);
        QCOMPARE(model->rowCount(), 1);
        QVERIFY(!model->sampledMatches());
        QCOMPARE(cell(*model, 0, FailureGroupModel::Count), QStringLiteral("2"));
        QCOMPARE(cell(*model, 0, FailureGroupModel::InFlight), QStringLiteral("\u2014"));
        QCOMPARE(cell(*model, 0, FailureGroupModel::Resolved, Qt::ToolTipRole),
                 display::plainToolTip(QStringLiteral("Not counted: a search counts only the dead "
                                                      "letters of the statuses filtered.")));
    }

    // The set-based verdict gives exactly the per-row function's rows over the demo world, and
    // the preview (now set-based) the same verdict per target as the per-row preview did.
    // Look-alikes whose messages differ only in their last word (the demo world's four
    // "invalid_request ... in USD/EUR/KWD/GBP" groups, normalized to lower case) say that word, not
    // the whole message the list cuts before it; the tooltip keeps the whole text.
    void lookAlikesShowTheWordsThatDiffer()
    {
        test::TestDatabase db(QStringLiteral("fg_words"));
        QVERIFY2(db.isValid(), qPrintable(db.error()));
        PgConnection admin = db.connect();
        const QString oncallLogin = db.createLogin(QStringLiteral("fgw_oncall"),
                                                   { QStringLiteral("redrive_oncall") }, kPassword);
        const QByteArray now = "now()";
        const QStringList currencies
            = { QStringLiteral("USD"), QStringLiteral("EUR"), QStringLiteral("KWD") };
        for (int i = 0; i < currencies.size(); ++i)
            insertDeadLetters(
                admin, 3 - i, QStringLiteral("charge_card"), QStringLiteral("permanent"),
                QStringLiteral("invalid_request"),
                QStringLiteral("400 invalid_request: amount 8434 must be at least 50 in ")
                    + currencies[i],
                now);
        insertDeadLetters(admin, 1, QStringLiteral("charge_card"), QStringLiteral("permanent"),
                          QStringLiteral("card_declined"), QStringLiteral("insufficient funds"),
                          now);

        auto session = db.openSession(db.consoleTcpSettingsAs(oncallLogin, kPassword));
        QVERIFY2(session, qPrintable(db.error()));
        auto model = loadGroups(session.get(), DeadLetterFilter());
        QCOMPARE(model->rowCount(), 4);
        QCOMPARE(cell(*model, 0, FailureGroupModel::Count), QStringLiteral("3"));
        QCOMPARE(cell(*model, 0, FailureGroupModel::Differs),
                 QStringLiteral("message \"\u2026usd\""));
        QCOMPARE(cell(*model, 1, FailureGroupModel::Differs),
                 QStringLiteral("message \"\u2026eur\""));
        QCOMPARE(cell(*model, 0, FailureGroupModel::Differs, Qt::ToolTipRole),
                 display::plainToolTip(QStringLiteral(
                     "message \"<n> invalid_request: amount <n> must be at least <n> in usd\"")));
        int declined = -1;
        for (int r = 0; r < model->rowCount(); ++r)
            if (model->nameAt(r) == QStringLiteral("card_declined: insufficient funds"))
                declined = r;
        QVERIFY(declined >= 2);
        QCOMPARE(cell(*model, declined, FailureGroupModel::Differs), QString());
    }

    // A running job's lease is judged against one instant per call: "still leased" or "expired",
    // never both. 5,000 leases run out over the next second while the verdicts are asked again
    // and again; with the time read by each lease rule, a lease that ran out between the two
    // rules' passes got both (19 in one call here). The per-row retry_verdict() reads the time
    // once too, but judges one row a call: no test could catch its microseconds.
    void leaseRulesJudgeOneInstant()
    {
        test::TestDatabase db(QStringLiteral("fg_lease"));
        QVERIFY2(db.isValid(), qPrintable(db.error()));
        PgConnection admin = db.connect();
        QVERIFY(SchemaMigrator(admin, MigrationSet::simulatedWorld()).migrate());
        q(admin,
          "WITH j AS (INSERT INTO redrive.job (queue, kind, entity_id, event_seq, state,"
          "                                   locked_until, locked_by, attempt)"
          "           SELECT 'q', 'charge_card', 'pay_' || g, 1, 'running',"
          "                  clock_timestamp() + interval '1 hour', 'w1', 3"
          "             FROM generate_series(1, 5000) g RETURNING id)"
          " INSERT INTO redrive.dead_letter (job_id, queue, kind, status, error_class,"
          "                                  last_error)"
          " SELECT j.id, 'q', 'charge_card', 'open', 'transient', 'lease' FROM j");
        const QByteArray ids = "(SELECT array_agg(d.id) FROM redrive.dead_letter d)";
        // The preview judges the leases as retry_verdict() does: held for an hour, blocked.
        // (The console's search_path finds the native source's functions and views.)
        q(admin, "SET search_path = redrive, pg_catalog");
        const ResultSet all = q(admin, "SELECT id FROM redrive.dead_letter ORDER BY id");
        QList<qint64> allIds;
        for (int r = 0; r < all.rowCount(); ++r)
            allIds.append(all.bigInt(r, 0).value_or(0));
        const QueryParams previewOfAll
            = QueryParams().addBigIntArray(allIds).addNull(ParamType::Text);
        {
            const ResultSet preview
                = q(admin, statementSql(Statement::ActionPreview), previewOfAll);
            comparePreviews(preview, q(admin, kPerRowPreview, previewOfAll));
            if (QTest::currentTestFailed())
                return;
            QCOMPARE(preview.text(0, QStringLiteral("verdict")), QStringLiteral("block"));
        }
        q(admin,
          "UPDATE redrive.job j SET locked_until = clock_timestamp() + interval '100 ms'"
          "                                        + (j.id % 5000) * interval '0.2 ms'");
        QElapsedTimer clock;
        clock.start();
        int calls = 0;
        qint64 expired = 0;
        while (clock.elapsed() < 1500) {
            const ResultSet r = q(admin,
                                  "SELECT count(*) FILTER (WHERE n > 1),"
                                  "       count(*) FILTER (WHERE expired)"
                                  "  FROM (SELECT v.dead_letter_id, count(*) AS n,"
                                  "               bool_or(v.code = 'lease_expired') AS expired"
                                  "          FROM redrive.retry_verdicts("
                                      + ids
                                      + ") v"
                                        "         WHERE v.code IN ('job_leased', 'lease_expired')"
                                        "         GROUP BY 1) x");
            QCOMPARE(r.text(0, 0), QStringLiteral("0"));
            expired = std::max(expired, r.bigInt(0, 1).value_or(0));
            // The preview reads the time once too: never "still leased" and "expired" at once.
            const ResultSet preview
                = q(admin, statementSql(Statement::ActionPreview), previewOfAll);
            for (int row = 0; row < preview.rowCount(); ++row) {
                const QString why = preview.text(row, QStringLiteral("verdict_reasons"));
                QVERIFY2(!(why.contains(QStringLiteral("still leased"))
                           && why.contains(QStringLiteral("expired at"))),
                         qPrintable(why));
            }
            ++calls;
        }
        // Every lease has run out: the preview and retry_verdict() agree again, row by row.
        comparePreviews(q(admin, statementSql(Statement::ActionPreview), previewOfAll),
                        q(admin, kPerRowPreview, previewOfAll));
        if (QTest::currentTestFailed())
            return;
        // The leases did run out while it was asked (else the test proves nothing).
        QVERIFY2(expired == 5000, qPrintable(QString::number(expired)));
        QVERIFY(calls >= 5);
    }

    void setBasedVerdictEqualsPerRowOverTheDemoWorld()
    {
        test::TestDatabase db(QStringLiteral("fg_demo"));
        QVERIFY2(db.isValid(), qPrintable(db.error()));
        PgConnection admin = db.connect();
        QVERIFY(SchemaMigrator(admin, MigrationSet::simulatedWorld()).migrate());
        worker::DemoOptions options;
        options.seed = 7;
        options.orders = 500;
        auto generated = worker::DemoWorldGenerator(admin, options).generate();
        QVERIFY2(generated, generated ? "" : qPrintable(generated.error().summary()));
        // Mismatches about the payments of four dead letters: the two kinds the rule names, open
        // (found; the first payment has both, stored in the order their reasons do not sort
        // in), and one resolved and one of another kind (not found).
        q(admin,
          "INSERT INTO redrive.reconciliation_run (provider, started_at, finished_at,"
          " status, checked_count, mismatch_count)"
          " VALUES ('stripe', now(), now(), 'succeeded', 4, 4)");
        q(admin,
          "INSERT INTO redrive.reconciliation_mismatch (run_id, kind, payment_ref, status)"
          " SELECT (SELECT max(id) FROM redrive.reconciliation_run), k.kind, p.entity_id,"
          "        k.status"
          "   FROM (SELECT j.entity_id, row_number() OVER (ORDER BY d.id) AS n"
          "           FROM redrive.dead_letter d JOIN redrive.job j ON j.id = d.job_id"
          "          WHERE j.entity_id IS NOT NULL ORDER BY d.id LIMIT 4) p"
          "   JOIN (VALUES (1, 'missing_internal', 'open'),"
          "                (1, 'duplicate_external', 'open'),"
          "                (2, 'duplicate_external', 'open'),"
          "                (3, 'missing_internal', 'resolved'),"
          "                (4, 'amount_mismatch', 'open')) k(n, kind, status)"
          "     ON k.n = p.n");
        // Two later events of one dead letter's entity that succeeded (the newest is named), so
        // the ordering-key rule is judged whatever the generated world holds.
        q(admin,
          "INSERT INTO redrive.job (queue, kind, entity_id, event_seq, state)"
          " SELECT j.queue, j.kind, j.entity_id, j.event_seq + g, 'succeeded'"
          "   FROM (SELECT j.* FROM redrive.dead_letter d JOIN redrive.job j ON j.id = d.job_id"
          "          WHERE j.entity_id IS NOT NULL AND j.event_seq IS NOT NULL"
          "          ORDER BY d.id DESC LIMIT 1) j"
          "  CROSS JOIN generate_series(1, 2) g");
        const QString login = db.createLogin(QStringLiteral("fgd_oncall"),
                                             { QStringLiteral("redrive_oncall") }, kPassword);
        PgConnection oncall
            = test::TestDatabase::connectWith(db.consoleTcpSettingsAs(login, kPassword));

        const ResultSet perRow = q(oncall,
                                   "SELECT d.id, v.severity, v.code, v.explanation"
                                   "  FROM dead_letter_list d"
                                   "  CROSS JOIN LATERAL retry_verdict(d.id) v"
                                   " ORDER BY 1, 2, 3, 4");
        const ResultSet setBased = q(oncall,
                                     "SELECT v.dead_letter_id, v.severity, v.code, v.explanation"
                                     "  FROM retry_verdicts((SELECT array_agg(id)"
                                     "                         FROM dead_letter_list)) v"
                                     " ORDER BY 1, 2, 3, 4");
        QCOMPARE(setBased.rowCount(), perRow.rowCount());
        QSet<QString> codes;
        for (int r = 0; r < perRow.rowCount(); ++r) {
            for (int c = 0; c < 4; ++c)
                QCOMPARE(setBased.text(r, c), perRow.text(r, c));
            codes.insert(perRow.text(r, 2));
        }
        // The comparison means something only if the world exercises the rules.
        qInfo("%d verdict rows, codes: %s", int(perRow.rowCount()),
              qPrintable(QStringList(codes.values()).join(u' ')));
        // Every rule but the two lease rules (leaseRulesJudgeOneInstant has those) occurs.
        QVERIFY2(codes.size() >= 8, qPrintable(QStringList(codes.values()).join(u' ')));

        // Past 10,000 targets the mismatch rule reads the unresolved mismatches once and hashes
        // them instead of probing per target: the same rows. The ids are padded past the
        // threshold with ids no dead letter has, every id twice and a NULL, none of which may
        // add or change a row.
        QVERIFY2(codes.contains(QStringLiteral("provider_has_charge")),
                 "the world has no mismatch the rule finds");
        const ResultSet padded
            = q(oncall,
                "SELECT v.dead_letter_id, v.severity, v.code, v.explanation"
                "  FROM retry_verdicts((SELECT array_agg(id) FROM dead_letter_list)"
                "                      || ARRAY[NULL::bigint]"
                "                      || (SELECT array_agg(-g)"
                "                            FROM generate_series(1, 10001) g)"
                "                      || (SELECT array_agg(id) FROM dead_letter_list)) v"
                " ORDER BY 1, 2, 3, 4");
        QCOMPARE(padded.rowCount(), perRow.rowCount());
        for (int r = 0; r < perRow.rowCount(); ++r)
            for (int c = 0; c < 4; ++c)
                QCOMPARE(padded.text(r, c), perRow.text(r, c));

        // Every group's preview: the same targets and verdicts as the per-row preview.
        const ResultSet groups = q(oncall,
                                   "SELECT DISTINCT fingerprint FROM dead_letter_list"
                                   " WHERE status = 'open' ORDER BY 1");
        QVERIFY(groups.rowCount() >= 4);
        for (int g = 0; g < groups.rowCount(); ++g) {
            const QString fp = groups.text(g, 0);
            const QueryParams params = QueryParams().addNull(ParamType::BigIntArray).addText(fp);
            const ResultSet expected = q(admin, kPerRowPreview, params);
            const ResultSet preview = q(oncall, statementSql(Statement::ActionPreview), params);
            comparePreviews(preview, expected);
            if (QTest::currentTestFailed())
                return;
        }
        // Every dead letter by id, whatever its status (a requeued one is judged "already
        // requeued" only here): the preview's one read of the inputs against retry_verdict().
        const ResultSet all = q(admin, "SELECT id FROM redrive.dead_letter ORDER BY id");
        QList<qint64> allIds;
        for (int r = 0; r < all.rowCount(); ++r)
            allIds.append(all.bigInt(r, 0).value_or(0));
        // Every id twice: each target still once.
        const QueryParams ids
            = QueryParams().addBigIntArray(allIds + allIds).addNull(ParamType::Text);
        const ResultSet expected = q(admin, kPerRowPreview, ids);
        const ResultSet preview = q(oncall, statementSql(Statement::ActionPreview), ids);
        QVERIFY(expected.rowCount() >= 20);
        comparePreviews(preview, expected);
        if (QTest::currentTestFailed())
            return;
        // Past 10,000 ids the preview reads the unresolved mismatches once and hashes them, as
        // for a group: padded with ids no dead letter has, the same rows.
        QList<qint64> paddedIds = allIds;
        for (qint64 g = 1; g <= 10001; ++g)
            paddedIds.append(-g);
        comparePreviews(q(oncall, statementSql(Statement::ActionPreview),
                          QueryParams().addBigIntArray(paddedIds).addNull(ParamType::Text)),
                        expected);
        if (QTest::currentTestFailed())
            return;
        QSet<QString> judged;
        for (int r = 0; r < expected.rowCount(); ++r)
            judged.insert(expected.text(r, 1));
        // The comparison means something only if both kinds of verdict occur.
        QVERIFY2(judged.contains(QStringLiteral("block"))
                     && judged.contains(QStringLiteral("warn")),
                 qPrintable(QStringList(judged.values()).join(u' ')));
    }

    // Live re-reads that come faster than the groups statement answers (a busy queue notifies
    // every few hundred ms; under load the statement took longer) once cancelled each other and
    // left the Failure groups panel empty for a minute. Asked again while the same question is
    // on its way, the model lets it finish, shows it and asks once more: with the statement held
    // behind a lock while it is asked ten times, exactly two results arrive and none fails.
    void reReadsFasterThanTheAnswerDoNotStarveTheGroups()
    {
        test::TestDatabase &db = *m_db;
        PgConnection admin = db.connect();
        auto session = db.openSession(db.consoleTcpSettingsAs(m_oncall, kPassword));
        QVERIFY2(session, qPrintable(db.error()));
        DeadLetterFilter open;
        open.statuses = { QStringLiteral("open") };
        auto model = loadGroups(session.get(), open);
        const int rows = model->rowCount();

        PgConnection locker = db.connect();
        QVERIFY(locker.exec("BEGIN").ok());
        QVERIFY(locker.exec("LOCK TABLE redrive.dead_letter IN ACCESS EXCLUSIVE MODE").ok());
        QSignalSpy loaded(model.get(), &FailureGroupModel::loaded);
        QSignalSpy failed(model.get(), &FailureGroupModel::failed);
        for (int i = 0; i < 10; ++i) {
            model->reload();
            QTest::qWait(50);
        }
        QCOMPARE(loaded.size(), 0); // held behind the lock
        QVERIFY(model->isLoading());
        QVERIFY(locker.exec("COMMIT").ok());
        QTRY_COMPARE_WITH_TIMEOUT(loaded.size(), 2, 20000);
        QTest::qWait(300);
        QCOMPARE(loaded.size(), 2);
        QCOMPARE(failed.size(), 0);
        QVERIFY(!model->isLoading());
        QCOMPARE(model->rowCount(), rows);

        // Another question (a new filter) still replaces the one on its way at once.
        QVERIFY(locker.exec("BEGIN").ok());
        QVERIFY(locker.exec("LOCK TABLE redrive.dead_letter IN ACCESS EXCLUSIVE MODE").ok());
        loaded.clear();
        model->reload();
        QTest::qWait(50);
        QCOMPARE(model->rowCount(), rows); // a re-read of the same question keeps the groups
        DeadLetterFilter none = open;
        none.queues = { QStringLiteral("no such queue") };
        model->setFilter(none);
        // Another question's groups are not shown while its own are read (the panel showed the
        // previous search's groups for ten seconds under the new search's header).
        QCOMPARE(model->rowCount(), 0);
        QVERIFY(model->isLoading());
        QVERIFY(locker.exec("COMMIT").ok());
        QTRY_COMPARE_WITH_TIMEOUT(loaded.size(), 1, 20000);
        QTest::qWait(300);
        QCOMPARE(loaded.size(), 1);
        QCOMPARE(model->rowCount(), 0);
        QCOMPARE(failed.size(), 0);
    }
};

QTEST_GUILESS_MAIN(TestFailureGroups)
#include "tst_failure_groups.moc"
