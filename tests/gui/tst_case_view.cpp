// SPDX-License-Identifier: GPL-3.0-or-later
// The case view of one dead letter on a real PostgreSQL: the retry history
// of a job with 8 attempts fills the table and the timeline, the stack trace is shown and copied
// in full, bytes that are not UTF-8 show as hex behind a marker, a payload over 1 MiB shows a
// preview and loads in full on request, a job that is still leased blocks the verdict, attempts
// that start in the future (clock skew) are drawn on the timeline, which says "Loading the
// attempts…" until they arrive, and the window renders to a PNG for a person to look at.
#include "models/db/database_session.h"
#include "models/dead_letter_case.h"
#include "models/display_format.h"
#include "models/operator_action.h"
#include "models/payload_text.h"
#include "tests/support/test_database.h"
#include "views/action_result_dialog.h"
#include "views/attempt_timeline_plot.h"
#include "views/case_view.h"
#include "views/reason_dialog.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QDir>
#include <QHeaderView>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QRegularExpression>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTableView>
#include <QTest>
#include <QTextDocument>
#include <QToolBar>
#include <QTreeView>

using namespace redrive;
using namespace redrive::db;

namespace {

// One attempt of the 8-attempt history: what happened and the backoff chosen after it.
struct AttemptRow
{
    const char *outcome;
    const char *errorClass; // nullptr for none
    const char *code;
    const char *message;
    qint64 durationMs;
    qint64 backoffMs; // -1 for none (the last attempt)
};

const AttemptRow kHistory[] = {
    {
        "failed",
        "transient",
        "provider_503",
        "Provider answered 503 Service Unavailable",
        350,
        1800,
    },
    { "failed", "transient", "timeout_before_send", "Connect timeout after 5000 ms", 5004, 4200 },
    { "conflict", "transient", "idempotency_conflict",
      "Idempotency key charge:pay_case_1 is held by another run", 120, 9000 },
    { "failed", "ambiguous", "provider_timeout",
      "Timed out after 30012 ms waiting for the provider\n(the request may have reached it)", 30012,
      21000 },
    { "abandoned", nullptr, "lease_expired", "Worker w-3 stopped heartbeating", 60000, 47000 },
    { "failed", "transient", "connection_reset", "Connection reset by peer", 80, 95000 },
    { "failed", "transient", "http_429", "Too Many Requests (retry after 240 s)", 140, 252000 },
    { "failed", "ambiguous", "provider_timeout",
      "Timed out after 30009 ms waiting for the provider", 30009, -1 },
};

QString stackTrace()
{
    QStringList frames { QStringLiteral("ProviderTimeout: timed out after 30009 ms waiting for the"
                                        " provider (request id req_8f2c)") };
    for (int i = 0; i < 180; ++i)
        frames << QStringLiteral("    at payments.charge.step%1 (charge_card.py:%2)")
                      .arg(i)
                      .arg(100 + i);
    frames << QStringLiteral("    at worker.main (worker.py:1) END-OF-TRACE");
    return frames.join(QLatin1Char('\n'));
}

QString outputDir()
{
    const QString dir = QStringLiteral(REDRIVE_TEST_OUTPUT_DIR);
    QDir().mkpath(dir);
    return dir;
}

// Runs what is queued (the plot's queued replot, layout requests) before a grab; not a sleep.
void settle()
{
    for (int i = 0; i < 3; ++i)
        QCoreApplication::processEvents();
}

template<class T>
T *child(QWidget *parent, const char *name)
{
    T *w = parent->findChild<T *>(QString::fromLatin1(name));
    if (!w)
        qFatal("no child %s", name);
    return w;
}

} // namespace

class TestCaseView : public QObject
{
    Q_OBJECT
private:
    std::unique_ptr<test::TestDatabase> m_db;
    PgConnection m_admin;
    std::unique_ptr<DatabaseSession> m_session;
    qint64 m_leased = 0; // 8 attempts, job still leased, key stuck, a mismatch, audit, outbox
    qint64 m_binary = 0; // payload bytes that are not UTF-8
    qint64 m_large = 0; // JSON payload over 1 MiB
    qint64 m_safe = 0; // nothing stands against a retry
    qint64 m_largeSize = 0;
    qint64 m_ends = 0; // attempts at -infinity, 1970, now, 2300, infinity; dead at -infinity
    qint64 m_future = 0; // attempts 2 h ago, in 35 minutes and in a year (a worker's clock ahead)
    qint64 m_futureMany = 0; // 1,500 attempts (more than the plot's buckets), 500 in the future

    ResultSet q(const QByteArray &sql, const QueryParams &params = {})
    {
        auto r = m_admin.exec(sql, params);
        if (!r)
            qFatal("%s: %s", sql.constData(), qPrintable(r.error().summary()));
        return r.value();
    }
    qint64 id(const QByteArray &sql, const QueryParams &params = {})
    {
        return q(sql, params).bigInt(0, 0).value_or(0);
    }

    qint64 deadLetter(qint64 job, const QString &errorClass, const QString &code,
                      const QString &message, const QString &stack, int attempts)
    {
        return id("INSERT INTO redrive.dead_letter (job_id, queue, kind, reason, error_class,"
                  " error_code, last_error, stack_trace, attempts, idempotency_key, dead_at)"
                  " SELECT id, queue, kind, 'exhausted', $2, $3, $4, $5, $6, idempotency_key,"
                  " clock_timestamp() - interval '1 hour 12 minutes'"
                  " FROM redrive.job WHERE id = $1 RETURNING id",
                  QueryParams()
                      .addBigInt(job)
                      .addText(errorClass)
                      .addText(code)
                      .addText(message)
                      .addText(stack)
                      .addInt(attempts));
    }

    // Every model the view made, under QAbstractItemModelTester for the rest of the test.
    static std::vector<std::unique_ptr<QAbstractItemModelTester>> testModels(CaseView &view)
    {
        std::vector<std::unique_ptr<QAbstractItemModelTester>> testers;
        DeadLetterCase *c = view.deadLetterCase();
        for (QAbstractItemModel *m : std::initializer_list<QAbstractItemModel *> {
                 c->attemptsModel(), c->mismatchesModel(), c->outboxModel(), c->auditModel(),
                 view.payloadTreeModel() })
            testers.push_back(std::make_unique<QAbstractItemModelTester>(
                m, QAbstractItemModelTester::FailureReportingMode::QtTest));
        return testers;
    }

    static bool waitLoaded(CaseView &view)
    {
        return QTest::qWaitFor(
            [&] { return view.deadLetterCase()->isComplete() && !view.isTextBusy(); }, 15000);
    }

private Q_SLOTS:
    void initTestCase()
    {
        QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates));
        m_db = std::make_unique<test::TestDatabase>(QStringLiteral("case_view"));
        QVERIFY2(m_db->isValid(), qPrintable(m_db->error()));
        m_admin = m_db->connect();

        // 1. A charge with 8 attempts whose job is still leased (a worker may be running it).
        const qint64 job = id(
            "INSERT INTO redrive.job (queue, kind, payload, headers, idempotency_key, entity_id,"
            " event_seq, event_at, state, attempt, max_attempts, locked_by, locked_until, run_at,"
            " created_at, deadline_at)"
            " VALUES ('payments', 'charge_card', jsonb_build_object('payment_id', 'pay_case_1',"
            " 'order_id', 'ord_77', 'amount_minor', 12345678901234567890::numeric, 'currency',"
            " 'EUR', 'customer', jsonb_build_object('name', 'Zoë Ångström', 'tags',"
            " jsonb_build_array('vip', 'eu')), 'note', 'naïve café'),"
            " jsonb_build_object('traceparent', '00-4bf92f3577b34da6-00f067aa0ba902b7-01',"
            " 'source', 'checkout'), 'charge:pay_case_1', 'pay_case_1', 3,"
            " clock_timestamp() - interval '3 hours', 'running', 8, 8, 'worker-7',"
            " clock_timestamp() + interval '10 minutes', clock_timestamp(),"
            " clock_timestamp() - interval '3 hours', clock_timestamp() + interval '1 day')"
            " RETURNING id");
        QDateTime start = QDateTime::currentDateTimeUtc().addSecs(-3 * 3600);
        int no = 1;
        for (const AttemptRow &a : kHistory) {
            const QDateTime finished = start.addMSecs(a.durationMs);
            QueryParams p;
            p.addBigInt(job).addInt(no).addTimestamp(start).addTimestamp(finished);
            p.addText(QString::fromLatin1(a.outcome));
            if (a.errorClass)
                p.addText(QString::fromLatin1(a.errorClass));
            else
                p.addNull(ParamType::Text);
            p.addText(QString::fromLatin1(a.code)).addText(QString::fromUtf8(a.message));
            p.addText(QStringLiteral("Traceback of attempt %1\n  at charge_card.py:42").arg(no));
            p.addText(QStringLiteral("worker-%1").arg(1 + no % 3));
            if (a.backoffMs >= 0)
                p.addBigInt(a.backoffMs);
            else
                p.addNull(ParamType::BigInt);
            q("INSERT INTO redrive.attempt (job_id, attempt_no, started_at, finished_at, outcome,"
              " error_class, error_code, message, stack_trace, worker_id, backoff_ms)"
              " VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)",
              p);
            start = finished.addMSecs(std::max<qint64>(a.backoffMs, 0));
            ++no;
        }
        m_leased = deadLetter(job, QStringLiteral("ambiguous"), QStringLiteral("provider_timeout"),
                              QStringLiteral("Timed out after 30009 ms waiting for the provider"),
                              stackTrace(), 8);
        q("UPDATE redrive.dead_letter SET claimed_by = 'alice', claimed_at = clock_timestamp()"
          " WHERE id = $1",
          QueryParams().addBigInt(m_leased));
        q("INSERT INTO redrive.idempotency_key (scope, key, request_hash, state, job_id,"
          " locked_by, locked_until, updated_at)"
          " VALUES ('charge_card', 'charge:pay_case_1', repeat('ab', 32), 'processing', $1,"
          " 'worker-3', clock_timestamp() - interval '20 minutes',"
          " clock_timestamp() - interval '25 minutes')",
          QueryParams().addBigInt(job));
        const qint64 run = id("INSERT INTO redrive.reconciliation_run (provider, status)"
                              " VALUES ('stripe-sim', 'succeeded') RETURNING id");
        q("INSERT INTO redrive.reconciliation_mismatch (run_id, kind, payment_ref,"
          " external_amount_minor, external_currency, external_status)"
          " VALUES ($1, 'missing_internal', 'pay_case_1', 4200, 'EUR', 'succeeded')",
          QueryParams().addBigInt(run));
        q("INSERT INTO redrive.outbox (command, target_type, target_id, payload, dedupe_key)"
          " VALUES ('notify', 'dead_letter', $1::text, '{\"channel\": \"oncall\"}',"
          " 'notify:' || $1::text)",
          QueryParams().addBigInt(m_leased));
        q("INSERT INTO redrive.audit_log (os_user, action, targets, reason, action_id)"
          " VALUES ('alice', 'claim', jsonb_build_array(jsonb_build_object('type',"
          " 'dead_letter', 'id', $1::bigint)), 'looking into the provider timeout',"
          " gen_random_uuid())",
          QueryParams().addBigInt(m_leased));

        // 2. A payload that is bytes and not valid UTF-8.
        const qint64 binaryJob
            = id("INSERT INTO redrive.job (queue, kind, payload_bytes, state)"
                 " VALUES ('webhooks', 'process_webhook', $1, 'dead') RETURNING id",
                 QueryParams().addBytes(QByteArray("\xC3\x28\xFF\x80 signed-blob ")
                                        + QByteArray(40, 'x') + QByteArray("\x00\x01\x02", 3)));
        m_binary
            = deadLetter(binaryJob, QStringLiteral("permanent"), QStringLiteral("bad_signature"),
                         QStringLiteral("Webhook signature does not verify"), QString(), 1);

        // 3. A JSON payload over 1 MiB; its last member lies beyond the preview.
        const qint64 largeJob = id(
            "INSERT INTO redrive.job (queue, kind, payload, state) SELECT 'ledger', 'sync_ledger',"
            " jsonb_build_object('items', jsonb_agg(jsonb_build_object('n', g, 'text',"
            " repeat('x', 100))), 'zzzz_end_marker', 'END-OF-PAYLOAD'), 'dead'"
            " FROM generate_series(1, 12000) g RETURNING id");
        m_large = deadLetter(largeJob, QStringLiteral("transient"), QStringLiteral("ledger_503"),
                             QStringLiteral("Ledger unavailable"), QString(), 8);
        m_largeSize = id("SELECT octet_length(payload::text) FROM redrive.job WHERE id = $1",
                         QueryParams().addBigInt(largeJob));
        QVERIFY(m_largeSize > DeadLetterCase::kPreviewBytes);

        // 4. Nothing against a retry.
        const qint64 safeJob
            = id("INSERT INTO redrive.job (queue, kind, payload, state)"
                 " VALUES ('emails', 'send_receipt', '{\"to\": \"a@example.com\"}',"
                 " 'dead') RETURNING id");
        m_safe = deadLetter(safeJob, QStringLiteral("transient"), QStringLiteral("smtp_421"),
                            QStringLiteral("421 try again later"), QString(), 8);

        // 5. Times at the ends of timestamptz's range (docs/domain.md "Times at the ends of the
        //    range"): attempts at -infinity, 1970, now, 2300 and infinity; dead at -infinity.
        const qint64 endsJob = id("INSERT INTO redrive.job (queue, kind, payload, state)"
                                  " VALUES ('ends', 'ends_of_time', '{}', 'dead') RETURNING id");
        q("INSERT INTO redrive.attempt (job_id, attempt_no, started_at, finished_at, outcome,"
          " error_class, error_code, message)"
          " SELECT $1, n, s, f, 'failed', 'transient', 'e_ends', 'attempt ' || n"
          " FROM (VALUES (1, timestamptz '-infinity', timestamptz '-infinity'),"
          " (2, '1970-01-01 00:00:00+00', '1970-01-01 00:00:01.5+00'),"
          " (3, now(), 'infinity'),"
          " (4, '2300-01-01 00:00:00+00', '2300-01-01 00:00:02+00'),"
          " (5, 'infinity', 'infinity')) v (n, s, f)",
          QueryParams().addBigInt(endsJob));
        m_ends = id("INSERT INTO redrive.dead_letter (job_id, queue, kind, reason, error_class,"
                    " error_code, last_error, attempts, dead_at)"
                    " VALUES ($1, 'ends', 'ends_of_time', 'exhausted', 'transient', 'e_ends',"
                    " 'attempt 5', 5, '-infinity') RETURNING id",
                    QueryParams().addBigInt(endsJob));

        // 6. Clock skew (docs/architecture.md "The retry timeline"): a worker whose clock is
        //    ahead recorded attempts that start in the future of the server and the console.
        const qint64 futureJob = id("INSERT INTO redrive.job (queue, kind, payload, state)"
                                    " VALUES ('skew', 'clock_ahead', '{}', 'dead') RETURNING id");
        q("INSERT INTO redrive.attempt (job_id, attempt_no, started_at, finished_at, outcome,"
          " error_class, error_code, message, backoff_ms)"
          " SELECT $1, n, clock_timestamp() + o, clock_timestamp() + o + interval '2 seconds',"
          " outcome, cls, 'e_skew', 'attempt ' || n, b"
          " FROM (VALUES (1, interval '-2 hours', 'failed', 'transient', 60000::bigint),"
          " (2, interval '35 minutes', 'failed', 'permanent', NULL),"
          " (3, interval '1 year', 'succeeded', NULL, NULL)) v (n, o, outcome, cls, b)",
          QueryParams().addBigInt(futureJob));
        m_future = id("INSERT INTO redrive.dead_letter (job_id, queue, kind, reason, error_class,"
                      " error_code, last_error, attempts, dead_at)"
                      " VALUES ($1, 'skew', 'clock_ahead', 'exhausted', 'permanent', 'e_skew',"
                      " 'attempt 2', 3, clock_timestamp()) RETURNING id",
                      QueryParams().addBigInt(futureJob));
        //    And the same with more attempts than the plot has buckets: 1,000 in the last 1,000
        //    minutes (failed, transient), 499 in the next 499 minutes and one in a year
        //    (failed, permanent).
        const qint64 manyJob = id("INSERT INTO redrive.job (queue, kind, payload, state)"
                                  " VALUES ('skew', 'clock_ahead', '{}', 'dead') RETURNING id");
        q("INSERT INTO redrive.attempt (job_id, attempt_no, started_at, finished_at, outcome,"
          " error_class, error_code, message)"
          " SELECT $1, g, t, t + interval '1 second', 'failed',"
          " CASE WHEN g <= 1000 THEN 'transient' ELSE 'permanent' END, 'e_skew', 'attempt ' || g"
          " FROM generate_series(1, 1500) g,"
          " LATERAL (SELECT CASE WHEN g = 1500 THEN clock_timestamp() + interval '1 year'"
          " ELSE clock_timestamp() + (g - 1000) * interval '1 minute' END AS t) s",
          QueryParams().addBigInt(manyJob));
        m_futureMany = id("INSERT INTO redrive.dead_letter (job_id, queue, kind, reason,"
                          " error_class, error_code, last_error, attempts, dead_at)"
                          " VALUES ($1, 'skew', 'clock_ahead', 'exhausted', 'permanent', 'e_skew',"
                          " 'attempt 1500', 1500, clock_timestamp()) RETURNING id",
                          QueryParams().addBigInt(manyJob));

        m_session = m_db->openSession(m_db->consoleSettings());
        QVERIFY2(m_session, qPrintable(m_db->error()));
    }

    void cleanupTestCase()
    {
        m_session.reset();
        m_admin = PgConnection();
        m_db.reset();
    }

    void eightAttemptsInTableAndTimeline()
    {
        CaseView view(m_session.get(), m_leased, false);
        const auto testers = testModels(view);
        view.show();
        QVERIFY(waitLoaded(view));
        QCOMPARE(view.windowTitle(), QStringLiteral("Dead letter #%1 — charge_card").arg(m_leased));
        // The header names the failure group as the groups list does, not by its hash.
        QCOMPARE(
            child<QLabel>(&view, "field_failureGroup")->text(),
            QStringLiteral("provider_timeout: timed out after <n> ms waiting for the provider"));
        QVERIFY(child<QLabel>(&view, "field_failureGroup")
                    ->toolTip()
                    .contains(view.deadLetterCase()->detail()->fingerprint));
        QVERIFY(view.windowFlags() & Qt::Window);

        auto *table = child<QTableView>(&view, "attemptsTable");
        QCOMPARE(table->model()->rowCount(), 8);
        QCOMPARE(view.timeline()->pointCount(), 8);
        QCOMPARE(view.deadLetterCase()->attempts().size(), 8);
        QCOMPARE(table->verticalHeader()->sectionResizeMode(0), QHeaderView::Fixed);
        // Newest first (row 0 is attempt 8). Backoff after attempt 1 and 7, the message cell one
        // line with its tooltip in full (escaped).
        using H = AttemptHistoryModel;
        QCOMPARE(table->model()->index(0, H::JobAttempt).data().toLongLong(), 8);
        QCOMPARE(table->model()->index(7, H::Attempt).data().toLongLong(), 1);
        QCOMPARE(table->model()->index(7, H::Backoff).data().toString(), QStringLiteral("1.8 s"));
        QCOMPARE(table->model()->index(1, H::Backoff).data().toString(),
                 QStringLiteral("4 min 12 s"));
        QVERIFY(!table->model()->index(0, H::Backoff).data().isValid()); // none after the last
        QCOMPARE(table->model()->index(4, H::Message).data().toString(),
                 QStringLiteral("Timed out after 30012 ms waiting for the provider …"));
        QCOMPARE(table->model()->index(4, H::Message).data(Qt::ToolTipRole).toString(),
                 display::plainToolTip(QString::fromUtf8(kHistory[3].message)));
        // Started: local time with its UTC offset.
        QVERIFY(
            QRegularExpression(QStringLiteral(R"(^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d [+-]\d\d:\d\d$)"))
                .match(table->model()->index(0, H::Started).data().toString())
                .hasMatch());
        QCOMPARE(child<QTabWidget>(&view, "tabs")->tabText(3), QStringLiteral("Retry history (8)"));

        // Header: dead at in local time with offset, the claim, the failure group.
        QVERIFY(child<QLabel>(&view, "field_deadAt")->text().contains(QLatin1Char(':')));
        QVERIFY(child<QLabel>(&view, "field_age")->text().startsWith(QStringLiteral("1 h 1")));
        QVERIFY(
            child<QLabel>(&view, "field_claimedBy")->text().startsWith(QStringLiteral("alice")));
        QCOMPARE(child<QLabel>(&view, "field_attempts")->text(), QStringLiteral("8 of 8"));

        // The other parts: the stuck key, the mismatch, the outbox command and the audit entry.
        QVERIFY(child<QLabel>(&view, "field_key.state")->text().contains(QStringLiteral("stuck")));
        QCOMPARE(view.deadLetterCase()->mismatchesModel()->rowCount(), 1);
        QCOMPARE(view.deadLetterCase()->outboxModel()->rowCount(), 1);
        QCOMPARE(view.deadLetterCase()->auditModel()->rowCount(), 1);

        // The payload tree keeps the big integer exactly (a double would round it).
        QStandardItemModel *tree = view.payloadTreeModel();
        QVERIFY(tree->rowCount() > 0);
        const auto amount = tree->findItems(QStringLiteral("amount_minor"));
        QCOMPARE(amount.size(), 1);
        QCOMPARE(tree->item(amount.first()->row(), 1)->text(),
                 QStringLiteral("12345678901234567890"));
        QVERIFY(child<QPlainTextEdit>(&view, "rawPayload")
                    ->toPlainText()
                    .contains(QStringLiteral("\"name\": \"Zoë Ångström\"")));
    }

    // UTC reaches every tab: the Last error tab's summary once kept its local time after the
    // switch.
    void lastErrorFollowsUtc()
    {
        CaseView view(m_session.get(), m_leased, false);
        view.show();
        QVERIFY(waitLoaded(view));
        auto *summary = child<QLabel>(&view, "errorSummary");
        QVERIFY2(!summary->text().endsWith(QStringLiteral(" UTC")), qPrintable(summary->text()));
        view.setShowUtc(true);
        QVERIFY2(summary->text().endsWith(QStringLiteral(" UTC")), qPrintable(summary->text()));
        QGuiApplication::clipboard()->clear();
        QTest::mouseClick(child<QPushButton>(&view, "copyLastError"), Qt::LeftButton);
        QVERIFY(QGuiApplication::clipboard()
                    ->text()
                    .section(u'\n', 0, 0)
                    .endsWith(QStringLiteral(" UTC")));
    }

    void stackTraceShownAndCopiedInFull()
    {
        CaseView view(m_session.get(), m_leased, false);
        view.show();
        QVERIFY(waitLoaded(view));
        const QString shown = child<QPlainTextEdit>(&view, "stackTrace")->toPlainText();
        QVERIFY(shown.contains(stackTrace()));
        QVERIFY(shown.startsWith(QStringLiteral("Timed out after 30009 ms")));
        QVERIFY(child<QPlainTextEdit>(&view, "stackTrace")->isReadOnly());
        QGuiApplication::clipboard()->clear();
        QTest::mouseClick(child<QPushButton>(&view, "copyLastError"), Qt::LeftButton);
        const QString copied = QGuiApplication::clipboard()->text();
        QVERIFY(copied.contains(stackTrace()));
        QVERIFY(copied.contains(QStringLiteral("provider_timeout")));
    }

    void leasedJobBlocksTheVerdict()
    {
        CaseView view(m_session.get(), m_leased, false);
        view.show();
        QVERIFY(waitLoaded(view));
        const auto verdict = view.deadLetterCase()->verdict();
        QVERIFY(!verdict.isEmpty());
        QCOMPARE(verdict.first().severity, DeadLetterCase::Severity::Block); // worst first
        QCOMPARE(verdict.first().code, QStringLiteral("job_leased"));
        QCOMPARE(view.deadLetterCase()->worstSeverity(), DeadLetterCase::Severity::Block);
        QVERIFY(child<QLabel>(&view, "verdictLine")
                    ->text()
                    .contains(QStringLiteral("Not safe to retry as is")));
        const QString reasons = child<QLabel>(&view, "verdictReasons")->text();
        QVERIFY(reasons.contains(QStringLiteral("BLOCK")));
        QVERIFY(reasons.contains(QStringLiteral("job_leased")));
        QVERIFY(reasons.contains(QStringLiteral("key_stuck")));
        QVERIFY(reasons.contains(QStringLiteral("provider_has_charge")));
        QVERIFY(reasons.indexOf(QStringLiteral("BLOCK")) < reasons.indexOf(QStringLiteral("WARN")));
    }

    // A requeued dead letter whose job is queued again for its next attempt is not "safe to
    // retry": it is already being retried (the requeue action would refuse it as a conflict).
    void requeuedAndQueuedAgainIsAlreadyRequeued()
    {
        const qint64 job = id("INSERT INTO redrive.job (queue, kind, payload, state, attempt,"
                              " max_attempts, run_at)"
                              " VALUES ('emails', 'send_receipt', '{}', 'queued', 1, 8,"
                              " '2030-01-02 03:04:05+00') RETURNING id");
        const qint64 deadLetter
            = this->deadLetter(job, QStringLiteral("transient"), QStringLiteral("smtp_421"),
                               QStringLiteral("421 try again later"), QString(), 8);
        q("UPDATE redrive.dead_letter SET status = 'requeued' WHERE id = $1",
          QueryParams().addBigInt(deadLetter));
        CaseView view(m_session.get(), deadLetter, false);
        view.show();
        QVERIFY(waitLoaded(view));
        const auto verdict = view.deadLetterCase()->verdict();
        QCOMPARE(verdict.size(), 1);
        QCOMPARE(verdict.first().severity, DeadLetterCase::Severity::Block);
        QCOMPARE(verdict.first().code, QStringLiteral("already_requeued"));
        QCOMPARE(verdict.first().explanation,
                 QStringLiteral("Already requeued: the job is queued again for attempt 2 of 8, "
                                "due 2030-01-02 03:04:05+00. Its outcome closes this dead letter "
                                "or opens it again; another requeue now would be refused."));
        QVERIFY(child<QLabel>(&view, "verdictLine")
                    ->text()
                    .contains(QStringLiteral("Not safe to retry as is")));
    }

    void safeVerdict()
    {
        CaseView view(m_session.get(), m_safe, true);
        view.show();
        QVERIFY(waitLoaded(view));
        QVERIFY(view.deadLetterCase()->verdict().isEmpty());
        QVERIFY(
            child<QLabel>(&view, "verdictLine")->text().contains(QStringLiteral("Safe to retry")));
        QVERIFY(child<QLabel>(&view, "field_deadAt")->text().endsWith(QStringLiteral(" UTC")));
    }

    void nonUtf8PayloadShowsHex()
    {
        CaseView view(m_session.get(), m_binary, false);
        const auto testers = testModels(view);
        view.show();
        QVERIFY(waitLoaded(view));
        const qint64 size = 4 + 13 + 40 + 3;
        QCOMPARE(view.deadLetterCase()->detail()->payloadSize, size);
        const QString raw = child<QPlainTextEdit>(&view, "rawPayload")->toPlainText();
        QVERIFY2(raw.startsWith(PayloadText::binaryMarker(size)), qPrintable(raw.left(200)));
        QVERIFY(raw.contains(QStringLiteral("00000000  c3 28 ff 80 20 73 69 67")));
        auto *views = child<QTabWidget>(&view, "payloadViews");
        QVERIFY(!views->isTabEnabled(0)); // no tree for bytes
        QCOMPARE(views->currentIndex(), 1);
        QVERIFY(child<QLabel>(&view, "verdictLine")->text().contains(QStringLiteral("Not safe")));
    }

    void largePayloadPreviewThenFull()
    {
        CaseView view(m_session.get(), m_large, false);
        const auto testers = testModels(view);
        view.show();
        QVERIFY(waitLoaded(view));
        const auto detail = view.deadLetterCase()->detail();
        QVERIFY(!detail->payloadComplete);
        QCOMPARE(detail->payloadSize, m_largeSize);
        QCOMPARE(detail->payload.size(), qsizetype(DeadLetterCase::kPreviewBytes));
        auto *raw = child<QPlainTextEdit>(&view, "rawPayload");
        QVERIFY(raw->toPlainText().startsWith(
            PayloadText::previewMarker(DeadLetterCase::kPreviewBytes, m_largeSize)));
        QVERIFY(!raw->toPlainText().contains(QStringLiteral("END-OF-PAYLOAD")));
        QVERIFY(child<QLabel>(&view, "payloadSize")
                    ->text()
                    .contains(PayloadText::formatByteCount(m_largeSize)));
        auto *load = child<QPushButton>(&view, "loadFullPayload");
        QVERIFY(load->isVisible());
        QCOMPARE(
            load->text(),
            QStringLiteral("Load full payload (%1)").arg(PayloadText::formatSize(m_largeSize)));

        QSignalSpy full(view.deadLetterCase(), &DeadLetterCase::fullPayloadLoaded);
        QTest::mouseClick(load, Qt::LeftButton);
        QVERIFY(view.isPayloadBusy()); // the progress shows while it loads off the GUI thread
        QVERIFY(child<QWidget>(&view, "payloadProgress")->isVisible());
        QVERIFY(full.wait(15000));
        QCOMPARE(full.first().at(0).toByteArray().size(), m_largeSize);
        QCOMPARE(full.first().at(1).toBool(), true);
        QTRY_VERIFY_WITH_TIMEOUT(!view.isPayloadBusy(), 15000);
        QVERIFY(!load->isVisible());
        QVERIFY(
            raw->toPlainText().contains(QStringLiteral("\"zzzz_end_marker\": \"END-OF-PAYLOAD\"")));
        QVERIFY(!raw->toPlainText().contains(QStringLiteral("[preview")));
        // The tree has the whole document, capped with a visible note.
        QVERIFY(view.payloadTreeModel()->rowCount() > 0);
        QVERIFY(child<QTabWidget>(&view, "payloadViews")->isTabEnabled(0));
        QVERIFY(!child<QLabel>(&view, "treeNote")->isHidden());
        const auto marker = view.payloadTreeModel()->findItems(QStringLiteral("zzzz_end_marker"));
        QCOMPARE(marker.size(), 1);
        QCOMPARE(view.payloadTreeModel()->item(marker.first()->row(), 1)->text(),
                 QStringLiteral("END-OF-PAYLOAD"));
        view.resize(1200, 860);
        settle();
        QVERIFY(view.grab().save(outputDir() + QStringLiteral("/case_view_large_full.png")));
        // Without indenting, the text is the payload exactly as stored: the same size.
        child<QCheckBox>(&view, "indentJson")->setChecked(false);
        QTRY_COMPARE_WITH_TIMEOUT(raw->toPlainText().toUtf8().size(), m_largeSize, 15000);
        QCOMPARE(raw->toPlainText().toUtf8(), view.deadLetterCase()->fullPayload());
    }

    // A re-read of the case (live update, F5) after another session changed the dead letter but
    // not its payload keeps the payload pane as it was: the full payload the operator loaded, the
    // same text document and the same scroll position. A changed payload is shown again.
    void reReadKeepsAnUnchangedPayload()
    {
        CaseView view(m_session.get(), m_large, false);
        view.resize(1200, 860);
        view.show();
        QVERIFY(waitLoaded(view));
        QSignalSpy full(view.deadLetterCase(), &DeadLetterCase::fullPayloadLoaded);
        QTest::mouseClick(child<QPushButton>(&view, "loadFullPayload"), Qt::LeftButton);
        QVERIFY(full.wait(15000));
        QTRY_VERIFY_WITH_TIMEOUT(!view.isPayloadBusy(), 15000);
        child<QTabWidget>(&view, "payloadViews")->setCurrentIndex(1); // Raw
        auto *raw = child<QPlainTextEdit>(&view, "rawPayload");
        settle();
        QScrollBar *bar = raw->verticalScrollBar();
        QVERIFY(bar->maximum() > 1000);
        bar->setValue(bar->maximum() / 2);
        const int scrolled = bar->value();
        QVERIFY(scrolled > 0);
        const QTextDocument *document = raw->document();
        const int treeRows = view.payloadTreeModel()->rowCount();
        QVERIFY(treeRows > 0);

        q("UPDATE redrive.dead_letter SET claimed_by = 'dana', claimed_at = clock_timestamp(),"
          " version = version + 1 WHERE id = $1",
          QueryParams().addBigInt(m_large));
        view.reload();
        QTRY_VERIFY_WITH_TIMEOUT(child<QLabel>(&view, "field_claimedBy")
                                     ->text()
                                     .startsWith(QStringLiteral("dana since")),
                                 15000);
        QVERIFY(waitLoaded(view));
        QCOMPARE(raw->document(), document);
        QCOMPARE(bar->value(), scrolled);
        QCOMPARE(view.payloadTreeModel()->rowCount(), treeRows);
        QCOMPARE(child<QTabWidget>(&view, "payloadViews")->currentIndex(), 1);
        QVERIFY(!child<QPushButton>(&view, "loadFullPayload")->isVisible());
        QVERIFY(
            raw->toPlainText().contains(QStringLiteral("\"zzzz_end_marker\": \"END-OF-PAYLOAD\"")));

        // The payload itself changed: shown again, from the preview.
        q("UPDATE redrive.job SET payload = payload || '{\"edited\": true}'"
          " WHERE id = (SELECT job_id FROM redrive.dead_letter WHERE id = $1)",
          QueryParams().addBigInt(m_large));
        view.reload();
        QTRY_VERIFY_WITH_TIMEOUT(raw->document() != document, 15000);
        QVERIFY(waitLoaded(view));
        QVERIFY(raw->toPlainText().startsWith(PayloadText::previewMarker(
            DeadLetterCase::kPreviewBytes, view.deadLetterCase()->detail()->payloadSize)));
        QVERIFY(child<QPushButton>(&view, "loadFullPayload")->isVisible());
        q("UPDATE redrive.job SET payload = payload - 'edited'"
          " WHERE id = (SELECT job_id FROM redrive.dead_letter WHERE id = $1)",
          QueryParams().addBigInt(m_large));
        q("UPDATE redrive.dead_letter SET claimed_by = NULL, claimed_at = NULL WHERE id = $1",
          QueryParams().addBigInt(m_large));
    }

    // A stuck idempotency key is released from the case view of its dead letter through the
    // audited, role-checked function. Logins over TCP with a password: support releases it (the
    // key becomes failed, one audit entry); a worker and a login with no Redrive role run the
    // very statement the button runs and are refused by the database, nothing changes: the
    // worker with 42501 (no EXECUTE), the login with no role with 42883 (without USAGE on the
    // schema it cannot even see the function).
    // The button shows only while the key is stuck and is disabled without the role.
    void releaseStuckKeyFromTheCaseView_data()
    {
        QTest::addColumn<QString>("name");
        QTest::addColumn<QStringList>("roles");
        QTest::addColumn<bool>("permitted");
        QTest::addColumn<QString>("sqlState");
        QTest::newRow("support") << QStringLiteral("case_support")
                                 << QStringList { QStringLiteral("redrive_support") } << true
                                 << QString();
        QTest::newRow("worker") << QStringLiteral("case_worker")
                                << QStringList { QStringLiteral("redrive_worker") } << false
                                << QStringLiteral("42501");
        QTest::newRow("no role") << QStringLiteral("case_norole") << QStringList() << false
                                 << QStringLiteral("42883");
    }
    void releaseStuckKeyFromTheCaseView()
    {
        QFETCH(QString, name);
        QFETCH(QStringList, roles);
        QFETCH(bool, permitted);
        QFETCH(QString, sqlState);
        const QString password = QStringLiteral("pw-") + name;
        const QString login = m_db->createLogin(name, roles, password);
        const auto keyState = [&] {
            return q("SELECT state FROM redrive.idempotency_key"
                     " WHERE scope = 'charge_card' AND key = 'charge:pay_case_1'")
                .text(0, 0);
        };
        const auto audits = [&] {
            return q("SELECT count(*) FROM redrive.audit_log WHERE action = 'release_key'"
                     " AND reason = 'worker-3 is gone; provider shows no charge'"
                     " AND db_user = $1",
                     QueryParams().addText(login))
                .bigInt(0, 0)
                .value_or(-1);
        };
        QCOMPARE(keyState(), QStringLiteral("processing"));

        if (!permitted) {
            // What the UI offers: nothing. What the database does when asked anyway: refuses.
            CaseView view(m_session.get(), m_leased, false);
            view.setRoles(roles);
            view.show();
            QVERIFY(waitLoaded(view));
            QVERIFY(!view.releaseKeyButton()->isHidden());
            QVERIFY(!view.releaseKeyButton()->isEnabled());
            PgConnection c
                = test::TestDatabase::connectWith(m_db->consoleTcpSettingsAs(login, password));
            QVERIFY(c.isHealthy());
            const OperatorAction action = OperatorAction::releaseKey(
                QStringLiteral("charge_card"), QStringLiteral("charge:pay_case_1"),
                view.deadLetterCase()->keyRecord()->version,
                QStringLiteral("worker-3 is gone; provider shows no charge"), QString());
            auto r = c.exec(statementSql(action.statement), action.params);
            QVERIFY(!r);
            QCOMPARE(r.error().sqlState(), sqlState);
            QCOMPARE(keyState(), QStringLiteral("processing"));
            QCOMPARE(audits(), 0);
            return;
        }

        DatabaseSession session(m_db->consoleTcpSettingsAs(login, password));
        session.open();
        CaseView view(&session, m_leased, false);
        view.setRoles(roles);
        view.resize(1200, 860);
        view.show();
        QVERIFY(waitLoaded(view));
        QPushButton *release = view.releaseKeyButton();
        QVERIFY(!release->isHidden());
        QVERIFY(release->isEnabled());
        QTest::mouseClick(release, Qt::LeftButton);
        ReasonDialog *reason = nullptr;
        QTRY_VERIFY_WITH_TIMEOUT((reason = view.findChild<ReasonDialog *>()) != nullptr, 5000);
        reason->reasonEdit()->setText(QStringLiteral("worker-3 is gone; provider shows no charge"));
        QTest::mouseClick(reason->confirmButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(view.findChild<ActionResultDialog *>() != nullptr, 10000);
        QCOMPARE(keyState(), QStringLiteral("failed"));
        QCOMPARE(audits(), 1);
        QCOMPARE(q("SELECT db_user FROM redrive.audit_log WHERE action = 'release_key'"
                   " ORDER BY id DESC LIMIT 1")
                     .text(0, 0),
                 login);
        // The case view re-read: the key is no longer stuck, so there is nothing to release.
        QTRY_VERIFY_WITH_TIMEOUT(release->isHidden(), 10000);
        QTRY_COMPARE_WITH_TIMEOUT(child<QLabel>(&view, "field_key.state")->text(),
                                  QStringLiteral("failed"), 10000);
        for (auto *dialog : view.findChildren<ActionResultDialog *>())
            dialog->close();
        // Stuck again for the other tests.
        q("UPDATE redrive.idempotency_key SET state = 'processing', locked_by = 'worker-3', "
          "error_message = NULL,"
          " locked_until = clock_timestamp() - interval '20 minutes'"
          " WHERE scope = 'charge_card' AND key = 'charge:pay_case_1'");
    }

    void ctrlCCopiesSelectedRowsAsJson()
    {
        CaseView view(m_session.get(), m_leased, false);
        view.show();
        QVERIFY(waitLoaded(view));
        child<QTabWidget>(&view, "tabs")->setCurrentIndex(3);
        auto *table = child<QTableView>(&view, "attemptsTable");
        table->setFocus();
        table->clearSelection();
        table->selectionModel()->select(
            QItemSelection(table->model()->index(5, 0), table->model()->index(6, 0)),
            QItemSelectionModel::Select | QItemSelectionModel::Rows);
        QGuiApplication::clipboard()->clear();
        QTest::keyClick(table, Qt::Key_C, Qt::ControlModifier);
        const QJsonArray rows
            = QJsonDocument::fromJson(QGuiApplication::clipboard()->text().toUtf8()).array();
        // Newest first: rows 5 and 6 are attempts 3 and 2.
        QCOMPARE(rows.size(), 2);
        QCOMPARE(rows.at(0).toObject().value(QStringLiteral("attempt_no")).toInt(), 3);
        QCOMPARE(rows.at(0).toObject().value(QStringLiteral("outcome")).toString(),
                 QStringLiteral("conflict"));
        QCOMPARE(rows.at(1).toObject().value(QStringLiteral("attempt_no")).toInt(), 2);
        QCOMPARE(rows.at(1).toObject().value(QStringLiteral("backoff_ms")).toInt(), 4200);
    }

    void columnWidthsAndOrderAreRemembered()
    {
        QSettings().remove(QStringLiteral("case")); // start from the default layout
        {
            CaseView view(m_session.get(), m_safe, false);
            view.show();
            QVERIFY(waitLoaded(view));
            auto *table = child<QTableView>(&view, "attemptsTable");
            table->setColumnWidth(2, 333);
            table->horizontalHeader()->moveSection(1, 3);
        } // closing the window saves its layout
        CaseView again(m_session.get(), m_safe, false);
        again.show();
        auto *table = child<QTableView>(&again, "attemptsTable");
        QCOMPARE(table->columnWidth(2), 333);
        QCOMPARE(table->horizontalHeader()->visualIndex(1), 3);
    }

    void escapeCloses()
    {
        CaseView view(m_session.get(), m_safe, false);
        view.show();
        QApplication::setActiveWindow(&view);
        QVERIFY(QTest::qWaitForWindowActive(&view));
        // While the case is loading, Esc cancels (docs/architecture.md#threading); once nothing
        // runs, it closes.
        QTRY_COMPARE(m_session->pendingCount(), 0);
        QTest::keyClick(&view, Qt::Key_Escape);
        QTRY_VERIFY(!view.isVisible());
    }

    void reloadDropsStaleAnswers()
    {
        DeadLetterCase c(m_session.get(), m_leased);
        QSignalSpy loaded(&c, &DeadLetterCase::partLoaded);
        c.load();
        c.load(); // the first load's answers arrive after this and must be dropped
        QTRY_VERIFY_WITH_TIMEOUT(c.isComplete(), 15000);
        int details = 0;
        for (const auto &args : loaded)
            details += args.at(0).value<DeadLetterCase::Part>() == DeadLetterCase::Part::Detail;
        QCOMPARE(details, 1);
        QCOMPARE(loaded.size(), 8); // seven parts, and the timeline asked after the rounds
    }

    void missingDeadLetterIsReported()
    {
        CaseView view(m_session.get(), 987654321, false);
        QSignalSpy failed(view.deadLetterCase(), &DeadLetterCase::failed);
        QVERIFY(failed.wait(10000));
        QTRY_VERIFY(!child<QLabel>(&view, "errorBanner")->isHidden());
        QVERIFY(child<QLabel>(&view, "errorBanner")->text().contains(QStringLiteral("987654321")));
    }

    // Attempts at -infinity, 1970, now, 2300 and infinity (docs/domain.md "Times at the ends of
    // the range"): the retry history lists all five with "−∞" / "∞" and no duration at an
    // infinite end, the timeline draws the three finite ones and names the other two in a note,
    // its axis shows years across the three centuries with a handful of ticks, and the header
    // shows dead at "−∞" and age "∞". The timeline is rendered to a PNG.
    void timesAtTheEndsOfTheRange()
    {
        CaseView view(m_session.get(), m_ends, true);
        const auto testers = testModels(view);
        view.resize(1200, 860);
        view.show();
        QVERIFY(waitLoaded(view));
        auto *table = child<QTableView>(&view, "attemptsTable");
        using H = AttemptHistoryModel;
        QCOMPARE(table->model()->rowCount(), 5);
        // Newest first: attempt 5 (infinity) on top, attempt 1 (-infinity) last.
        QCOMPARE(table->model()->index(0, H::Started).data().toString(), QStringLiteral("\u221E"));
        QCOMPARE(table->model()->index(1, H::Started).data().toString(),
                 QStringLiteral("2300-01-01 00:00:00 UTC"));
        QCOMPARE(table->model()->index(3, H::Started).data().toString(),
                 QStringLiteral("1970-01-01 00:00:00 UTC"));
        QCOMPARE(table->model()->index(4, H::Started).data().toString(),
                 QStringLiteral("\u2212\u221E"));
        QCOMPARE(table->model()->index(0, H::Duration).data().toString(), QString());
        QCOMPARE(table->model()->index(1, H::Duration).data().toString(), QStringLiteral("2000"));
        QCOMPARE(table->model()->index(2, H::Duration).data().toString(), QString());
        QCOMPARE(table->model()->index(3, H::Duration).data().toString(), QStringLiteral("1500"));
        QCOMPARE(table->model()->index(4, H::Duration).data().toString(), QString());

        QCOMPARE(child<QLabel>(&view, "field_deadAt")->text(), QStringLiteral("\u2212\u221E"));
        QCOMPARE(child<QLabel>(&view, "field_age")->text(), QStringLiteral("\u221E"));

        AttemptTimelinePlot *timeline = view.timeline();
        QTRY_COMPARE(timeline->pointCount(), 3);
        QCOMPARE(timeline->offAxisNote(),
                 QStringLiteral("Not on the time axis: #1 at \u2212\u221E, #5 at \u221E"));
        settle();
        timeline->replot();
        const QVector<QString> labels = timeline->xAxis->tickVectorLabels();
        QCOMPARE(QStringList(labels.cbegin(), labels.cend()).join(QLatin1Char(',')),
                 QStringLiteral("1970,2020,2070,2120,2170,2220,2270,2320,2370"));
        QVERIFY(view.timeline()->grab().save(outputDir()
                                             + QStringLiteral("/case_view_ends_of_time.png")));
        auto *tabs = child<QTabWidget>(&view, "tabs");
        tabs->setCurrentIndex(3);
        settle();
        QVERIFY(view.grab().save(outputDir() + QStringLiteral("/case_view_ends_of_time_all.png")));
    }

    // Attempts that start in the future (a worker's clock ahead of the server's, or the
    // server's ahead of this computer's): the table lists them, so the timeline draws them, each
    // with its marker, inside the visible range; "No attempts recorded" only when there are none.
    void attemptsInTheFutureAreDrawn()
    {
        CaseView view(m_session.get(), m_future, true);
        const auto testers = testModels(view);
        view.resize(1200, 860);
        view.show();
        // Until the attempts arrive the plot says they are on their way: the attacker's picture,
        // taken before they arrived, said "No attempts recorded" beside a table listing one.
        QCOMPARE(view.timeline()->itemTexts(),
                 QStringList { QStringLiteral("Loading the attempts…") });
        child<QTabWidget>(&view, "tabs")->setCurrentIndex(3);
        QVERIFY(waitLoaded(view));
        auto *table = child<QTableView>(&view, "attemptsTable");
        QCOMPARE(table->model()->rowCount(), 3);
        AttemptTimelinePlot *timeline = view.timeline();
        QTRY_COMPARE(timeline->pointCount(), 3);
        QVERIFY(!timeline->isBucketed());
        using K = AttemptTimelinePlot::MarkerKind;
        QCOMPARE(timeline->pointCount(K::Transient), 1);
        QCOMPARE(timeline->pointCount(K::Permanent), 1);
        QCOMPARE(timeline->pointCount(K::Succeeded), 1);
        QCOMPARE(timeline->pointCount(K::Failed), 0);
        QCOMPARE(timeline->itemTexts().count(QStringLiteral("No attempts recorded")), 0);
        // Every marker inside the visible range, the one a year ahead included.
        const QList<DeadLetterCase::Attempt> attempts = view.deadLetterCase()->attempts();
        QCOMPARE(attempts.size(), 3);
        QVERIFY(attempts.at(2).startedAt > QDateTime::currentDateTimeUtc().addDays(364));
        for (const DeadLetterCase::Attempt &a : attempts) {
            QVERIFY2(a.startedAt >= timeline->visibleFrom() && a.startedAt <= timeline->visibleTo(),
                     qPrintable(a.startedAt.toString(Qt::ISODate)));
        }
        settle();
        QVERIFY(timeline->grab().save(outputDir() + QStringLiteral("/case_view_future.png")));

        // More attempts than the plot has buckets: the buckets count every attempt, the 500 in
        // the future too, and the plot draws them all.
        CaseView many(m_session.get(), m_futureMany, true);
        many.resize(1200, 860);
        many.show();
        child<QTabWidget>(&many, "tabs")->setCurrentIndex(3);
        QVERIFY(waitLoaded(many));
        AttemptTimelinePlot *bucketed = many.timeline();
        QTRY_VERIFY(bucketed->isBucketed());
        QCOMPARE(many.deadLetterCase()->attemptCount(), qint64(1500));
        qint64 sum = 0;
        for (const DeadLetterCase::AttemptBucket &b : many.deadLetterCase()->attemptBuckets())
            sum += b.attempts;
        QCOMPARE(sum, qint64(1500));
        // The 500 permanent failures are the ones in the future.
        QCOMPARE(bucketed->plottedAttempts(K::Transient), qint64(1000));
        QCOMPARE(bucketed->plottedAttempts(K::Permanent), qint64(500));
        QCOMPARE(bucketed->plottedAttempts(), qint64(1500));
        QCOMPARE(bucketed->itemTexts().count(QStringLiteral("No attempts recorded")), 0);
        const QList<DeadLetterCase::AttemptBucket> buckets
            = many.deadLetterCase()->attemptBuckets();
        const auto last
            = std::max_element(buckets.cbegin(), buckets.cend(),
                               [](const auto &a, const auto &b) { return a.until < b.until; });
        QVERIFY(last->until > QDateTime::currentDateTimeUtc().addDays(364));
        QVERIFY(last->until <= bucketed->visibleTo());
        settle();
        QVERIFY(
            bucketed->grab().save(outputDir() + QStringLiteral("/case_view_future_bucketed.png")));

        // "No attempts recorded" only for a history read and found empty.
        AttemptTimelinePlot plot;
        QCOMPARE(plot.itemTexts(), QStringList { QStringLiteral("Loading the attempts…") });
        plot.setFailed();
        QCOMPARE(plot.itemTexts(),
                 QStringList { QStringLiteral("The attempts could not be loaded") });
        plot.setAttempts({});
        QCOMPARE(plot.itemTexts(), QStringList { QStringLiteral("No attempts recorded") });
        QCOMPARE(plot.pointCount(), 0);
    }

    // The time axis' tick format by visible span: years from ten years on, month and year from
    // one (docs/architecture.md).
    void tickFormatBySpan_data()
    {
        QTest::addColumn<double>("span");
        QTest::addColumn<QString>("format");
        QTest::newRow("20 min") << 1200.0 << QStringLiteral("HH:mm:ss");
        QTest::newRow("2 days") << 2 * 86400.0 << QStringLiteral("HH:mm");
        QTest::newRow("3 months") << 91 * 86400.0 << QStringLiteral("d MMM");
        QTest::newRow("2 years") << 730 * 86400.0 << QStringLiteral("MMM yyyy");
        QTest::newRow("3 centuries") << 300 * 365.25 * 86400.0 << QStringLiteral("yyyy");
    }
    void tickFormatBySpan()
    {
        QFETCH(double, span);
        QFETCH(QString, format);
        QCOMPARE(TimeAxisPlot::tickFormat(span), format);
    }

    void actionsSlotIsThereAndEmpty()
    {
        CaseView view(m_session.get(), m_safe, false);
        QToolBar *actions = child<QToolBar>(&view, "actions");
        QCOMPARE(actions, view.actionsToolBar());
        QVERIFY(actions->actions().isEmpty());
    }

    void renderToPng()
    {
        const QString dir = outputDir();
        CaseView view(m_session.get(), m_leased, false);
        view.resize(1200, 860);
        view.show();
        QVERIFY(waitLoaded(view));
        QTRY_COMPARE(view.timeline()->pointCount(), 8);
        settle();
        QVERIFY(view.grab().save(dir + QStringLiteral("/case_view.png")));
        auto *tabs = child<QTabWidget>(&view, "tabs");
        const char *const names[] = { "payload", "headers",        "last_error",  "history",
                                      "key",     "reconciliation", "outbox_audit" };
        for (int i = 0; i < tabs->count(); ++i) {
            tabs->setCurrentIndex(i);
            settle();
            QVERIFY(view.grab().save(
                dir + QStringLiteral("/case_view_%1.png").arg(QLatin1String(names[i]))));
        }
        CaseView binary(m_session.get(), m_binary, false);
        binary.resize(1200, 860);
        binary.show();
        QVERIFY(waitLoaded(binary));
        settle();
        QVERIFY(binary.grab().save(dir + QStringLiteral("/case_view_binary.png")));
        CaseView large(m_session.get(), m_large, false);
        large.resize(1200, 860);
        large.show();
        QVERIFY(waitLoaded(large));
        settle();
        QVERIFY(large.grab().save(dir + QStringLiteral("/case_view_large.png")));
        CaseView safe(m_session.get(), m_safe, true);
        safe.resize(1200, 860);
        safe.show();
        QVERIFY(waitLoaded(safe));
        settle();
        QVERIFY(safe.grab().save(dir + QStringLiteral("/case_view_safe.png")));
    }
};

QTEST_MAIN(TestCaseView)
#include "tst_case_view.moc"
