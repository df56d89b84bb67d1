// SPDX-License-Identifier: GPL-3.0-or-later
// The audit view on a real PostgreSQL, as an auditor:
// each filter (actor, action, target, time, and combined) lists exactly the entries SQL finds,
// newest first across several keyset pages, with the count SQL gives; a bulk requeue's details
// show a per-target before/after diff; "Verify chain" reports OK with the head, names an entry the
// schema owner rewrote with the triggers off, and can be canceled while the server works;
// "Export…" writes the current filter with the chain head. Renders the view to
// audit_log_widget.png (and audit_log_widget_broken.png) for a look.
#include "models/audit_diff_model.h"
#include "models/audit_entry_model.h"
#include "models/audit_export_job.h"
#include "models/audit_verify_job.h"
#include "models/db/database_session.h"
#include "models/db/sql_statement.h"
#include "tests/support/test_database.h"
#include "views/audit_log_widget.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QDir>
#include <QFile>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTemporaryDir>
#include <QTest>

using namespace redrive;
using namespace redrive::db;

namespace {

QString outputDir()
{
    const QString dir = QStringLiteral(REDRIVE_TEST_OUTPUT_DIR);
    QDir().mkpath(dir);
    return dir;
}

void settle()
{
    for (int i = 0; i < 5; ++i)
        QCoreApplication::processEvents();
}

} // namespace

class TestAuditLogWidget : public QObject
{
    Q_OBJECT
private:
    std::unique_ptr<test::TestDatabase> m_db;
    PgConnection m_admin;
    std::unique_ptr<DatabaseSession> m_session;
    QString m_alice, m_bob, m_dave;
    QDateTime m_between;
    QList<qint64> m_requeued;

    ResultSet q(PgConnection &c, const QByteArray &sql, const QueryParams &params = {})
    {
        auto r = c.exec(sql, params);
        if (!r)
            qFatal("%s: %s", sql.constData(), qPrintable(r.error().summary()));
        return r.value();
    }
    PgConnection as(const QString &login) { return m_db->connectAs(login); }
    QList<qint64> sqlIdsNewestFirst(const QByteArray &where, const QueryParams &params)
    {
        const ResultSet r
            = q(m_admin, "SELECT id FROM redrive.audit_log WHERE " + where + " ORDER BY id DESC",
                params);
        QList<qint64> ids;
        for (int i = 0; i < r.rowCount(); ++i)
            ids << r.bigInt(i, 0).value_or(0);
        return ids;
    }
    static bool loadAll(AuditEntryModel &model)
    {
        if (!QTest::qWaitFor([&] { return !model.isLoading(); }, 10000))
            return false;
        while (model.canFetchMore({})) {
            model.fetchMore({});
            if (!QTest::qWaitFor([&] { return !model.isLoading(); }, 10000))
                return false;
        }
        return QTest::qWaitFor([&] { return model.total() >= 0; }, 10000);
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_db = std::make_unique<test::TestDatabase>(QStringLiteral("audit_widget"));
        QVERIFY2(m_db->isValid(), qPrintable(m_db->error()));
        m_admin = m_db->connect();
        m_alice
            = m_db->createLogin(QStringLiteral("alice_aud"), { QStringLiteral("redrive_oncall") });
        m_bob = m_db->createLogin(QStringLiteral("bob_aud"), { QStringLiteral("redrive_support") });
        m_dave
            = m_db->createLogin(QStringLiteral("dave_aud"), { QStringLiteral("redrive_auditor") });
        // Dead letters to requeue and resolve.
        const ResultSet dl = q(m_admin, R"sql(
            WITH j AS (INSERT INTO redrive.job (queue, kind, payload, state, entity_id)
                       SELECT 'payments', 'charge_card', jsonb_build_object('n', g), 'dead',
                              'pay_' || g FROM generate_series(1, 6) g RETURNING id, queue, kind)
            INSERT INTO redrive.dead_letter (job_id, queue, kind, error_class, error_code, last_error)
            SELECT id, queue, kind, 'transient', 'provider_5xx', '502 Bad Gateway' FROM j
            RETURNING id, version)sql");
        PgConnection alice = as(m_alice);
        PgConnection bob = as(m_bob);
        const QByteArray notes = "SELECT count(redrive.add_note(gen_random_uuid(), 'dead_letter',"
                                 " (g % 6 + 1)::text, 'note ' || g, 'tester'))"
                                 " FROM generate_series(1, $1) g";
        q(alice, notes, QueryParams().addInt(260));
        q(bob, notes, QueryParams().addInt(130));
        m_between = q(m_admin, "SELECT clock_timestamp()").timestamp(0, 0);
        QJsonArray targets;
        for (int i = 0; i < 3; ++i) {
            m_requeued << dl.bigInt(i, 0).value_or(0);
            targets.append(
                QJsonObject { { QStringLiteral("id"), m_requeued.last() },
                              { QStringLiteral("version"), dl.integer(i, 1).value_or(0) } });
        }
        q(alice, statementSql(Statement::ActionRequeue),
          QueryParams()
              .addUuid(QUuid::createUuid())
              .addJson(QJsonDocument(targets).toJson(QJsonDocument::Compact))
              .addBool(true)
              .addText(QStringLiteral("provider recovered, INC-7"))
              .addText(QStringLiteral("INC-7"))
              .addText(QStringLiteral("alice"))
              .addNull(ParamType::Uuid)
              .addNull(ParamType::Int));
        q(bob, notes, QueryParams().addInt(40));

        m_session = m_db->openSession(m_db->consoleSettingsAs(m_dave)); // an auditor
        QVERIFY2(m_session, qPrintable(m_db->error()));
    }
    void cleanupTestCase()
    {
        m_session.reset();
        m_admin = PgConnection();
        m_db.reset(); // drops the database, then the logins
    }

    void filterResultsEqualSql_data()
    {
        // actor: a = alice, b = bob; time: f = from the boundary, u = until it.
        QTest::addColumn<QString>("actor");
        QTest::addColumn<QString>("action");
        QTest::addColumn<QString>("target");
        QTest::addColumn<QString>("time");
        QTest::addColumn<QByteArray>("where"); // $1 actor, $2 the boundary
        QTest::newRow("all") << ""
                             << ""
                             << ""
                             << "" << QByteArray("$1::text IS NULL OR true");
        QTest::newRow("actor") << "a"
                               << ""
                               << ""
                               << "" << QByteArray("db_user = $1");
        QTest::newRow("action") << ""
                                << "requeue"
                                << ""
                                << "" << QByteArray("action = 'requeue' AND $1::text IS NULL");
        QTest::newRow("typed target")
            << ""
            << ""
            << "dead_letter:2"
            << ""
            << QByteArray(
                   "targets @> '[{\"type\": \"dead_letter\", \"id\": 2}]' AND $1::text IS NULL");
        QTest::newRow("target id")
            << ""
            << ""
            << "3"
            << "" << QByteArray("targets @> '[{\"id\": 3}]' AND $1::text IS NULL");
        QTest::newRow("from") << ""
                              << ""
                              << ""
                              << "f" << QByteArray("at >= $2 AND $1::text IS NULL");
        QTest::newRow("until") << ""
                               << ""
                               << ""
                               << "u" << QByteArray("at < $2 AND $1::text IS NULL");
        QTest::newRow("actor, action, target, from")
            << "b"
            << "note"
            << "dead_letter 4"
            << "f"
            << QByteArray("db_user = $1 AND action = 'note' AND at >= $2"
                          " AND targets @> '[{\"type\": \"dead_letter\", \"id\": 4}]'");
        QTest::newRow("nothing") << "a"
                                 << "resolve"
                                 << ""
                                 << "" << QByteArray("db_user = $1 AND false");
    }
    void filterResultsEqualSql()
    {
        QFETCH(QString, actor);
        QFETCH(QString, action);
        QFETCH(QString, target);
        QFETCH(QString, time);
        QFETCH(QByteArray, where);
        AuditLogWidget widget(m_session.get());
        QAbstractItemModelTester tester(widget.entryModel(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        AuditFilter filter;
        filter.actor = actor == QLatin1String("a") ? m_alice
            : actor == QLatin1String("b")          ? m_bob
                                                   : QString();
        filter.action = action;
        filter.setTargetText(target);
        if (time == QLatin1String("f"))
            filter.from = m_between;
        if (time == QLatin1String("u"))
            filter.until = m_between;
        widget.setFilter(filter);
        QCOMPARE(widget.entryModel()->filter(), filter);
        QVERIFY(loadAll(*widget.entryModel()));
        QueryParams params;
        if (filter.actor.isEmpty())
            params.addNull(ParamType::Text);
        else
            params.addText(filter.actor);
        params.addTimestamp(m_between);
        const QList<qint64> expected
            = sqlIdsNewestFirst("(" + where + ") AND $2::timestamptz IS NOT NULL", params);
        QList<qint64> got;
        for (int row = 0; row < widget.entryModel()->rowCount(); ++row)
            got << widget.entryModel()->idAt(row);
        QCOMPARE(got, expected);
        QCOMPARE(widget.entryModel()->total(), qint64(expected.size()));
        if (QTest::currentDataTag() == QLatin1String("all"))
            QVERIFY(widget.entryModel()->pageCount() >= 3);
    }

    void detailsShowABulkDiffPerTarget()
    {
        AuditLogWidget widget(m_session.get());
        QAbstractItemModelTester tester(widget.diffModel(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        AuditFilter filter;
        filter.action = QStringLiteral("requeue");
        widget.setFilter(filter);
        QVERIFY(loadAll(*widget.entryModel()));
        QCOMPARE(widget.entryModel()->rowCount(), 1);
        widget.selectEntry(0);
        QTRY_VERIFY_WITH_TIMEOUT(widget.shownEntryId() == widget.entryModel()->idAt(0), 10000);
        QVERIFY(widget.detailText().contains(m_alice));
        QVERIFY(widget.detailText().contains(QStringLiteral("provider recovered, INC-7")));
        QVERIFY(widget.detailText().contains(QStringLiteral("3 of 3 applied")));
        const AuditDiffModel *diff = widget.diffModel();
        QCOMPARE(diff->rowCount(), 6); // per target: status changed, reset_attempts added
        QCOMPARE(diff->diff().count(AuditDiffLine::Change::Changed), 3);
        QCOMPARE(diff->diff().count(AuditDiffLine::Change::Added), 3);
        for (int row = 0; row < diff->rowCount(); ++row) {
            const QString field = diff->index(row, AuditDiffModel::Field).data().toString();
            if (!field.endsWith(QStringLiteral("status")))
                continue;
            QVERIFY(field.startsWith(QStringLiteral("id ")));
            QCOMPARE(diff->index(row, AuditDiffModel::Before).data().toString(),
                     QStringLiteral("\"open\""));
            QCOMPARE(diff->index(row, AuditDiffModel::After).data().toString(),
                     QStringLiteral("\"requeued\""));
            QCOMPARE(diff->index(row, AuditDiffModel::Change).data().toString(),
                     QStringLiteral("changed"));
        }
    }

    void verifyReportsOkThenNamesATamperedEntry()
    {
        AuditLogWidget widget(m_session.get());
        widget.resize(1400, 900);
        widget.show();
        QVERIFY(QTest::qWaitForWindowExposed(&widget));
        widget.reload();
        QVERIFY(loadAll(*widget.entryModel()));
        auto *verify = widget.findChild<QPushButton *>(QStringLiteral("verifyChain"));
        QVERIFY(verify);
        QSignalSpy finished(&widget, &AuditLogWidget::verifyFinished);
        QTest::mouseClick(verify, Qt::LeftButton);
        QVERIFY(widget.isVerifying());
        QVERIFY(!verify->isEnabled());
        QVERIFY(finished.wait(30000));
        QCOMPARE(widget.verifyResult().state, AuditLogWidget::VerifyResult::State::Ok);
        const ResultSet head = q(m_admin,
                                 "SELECT id, encode(hash, 'hex'), count(*) OVER ()"
                                 " FROM redrive.audit_log ORDER BY id DESC LIMIT 1");
        QCOMPARE(widget.verifyResult().head.id, head.bigInt(0, 0).value_or(0));
        QCOMPARE(widget.verifyResult().head.hash, head.text(0, 1));
        QCOMPARE(widget.verifyResult().checked, head.bigInt(0, 2).value_or(0));
        QVERIFY2(widget.verifyText().startsWith(QStringLiteral("Chain OK")),
                 qPrintable(widget.verifyText()));
        QVERIFY(verify->isEnabled());
        // A good-looking render with an entry selected and the verification's result.
        const int row = widget.entryModel()->rowOfId(
            q(m_admin, "SELECT id FROM redrive.audit_log WHERE action = 'requeue'")
                .bigInt(0, 0)
                .value_or(0));
        QVERIFY(row >= 0);
        widget.selectEntry(row);
        QTRY_VERIFY_WITH_TIMEOUT(widget.shownEntryId() > 0 && !widget.isLoading(), 10000);
        settle();
        QVERIFY(widget.grab().save(outputDir() + QStringLiteral("/audit_log_widget.png")));

        // The schema owner rewrites an entry in the middle with the triggers off.
        const qint64 victim
            = q(m_admin, "SELECT id FROM redrive.audit_log ORDER BY id OFFSET 100 LIMIT 1")
                  .bigInt(0, 0)
                  .value_or(0);
        const QString original = q(m_admin, "SELECT reason FROM redrive.audit_log WHERE id = $1",
                                   QueryParams().addBigInt(victim))
                                     .text(0, 0);
        q(m_admin, "ALTER TABLE redrive.audit_log DISABLE TRIGGER audit_log_no_update_delete");
        q(m_admin, "UPDATE redrive.audit_log SET reason = 'nothing to see here' WHERE id = $1",
          QueryParams().addBigInt(victim));
        finished.clear();
        QTest::mouseClick(verify, Qt::LeftButton);
        QVERIFY(finished.wait(30000));
        QCOMPARE(widget.verifyResult().state, AuditLogWidget::VerifyResult::State::Broken);
        QCOMPARE(widget.verifyResult().brokenId, victim);
        QVERIFY2(widget.verifyText().contains(QStringLiteral("BROKEN at entry %1").arg(victim)),
                 qPrintable(widget.verifyText()));
        QVERIFY(widget.verifyText().contains(QStringLiteral("hash does not match")));
        for (QPushButton *b : widget.findChildren<QPushButton *>()) {
            if (b->text() == QStringLiteral("Show entry %1").arg(victim)) {
                QVERIFY(b->isVisible());
                QTest::mouseClick(b, Qt::LeftButton);
            }
        }
        QTRY_COMPARE_WITH_TIMEOUT(widget.shownEntryId(), victim, 10000);
        QVERIFY(widget.detailText().contains(QStringLiteral("nothing to see here")));
        settle();
        QVERIFY(widget.grab().save(outputDir() + QStringLiteral("/audit_log_widget_broken.png")));

        // Put it back: the chain holds again.
        q(m_admin, "UPDATE redrive.audit_log SET reason = $2 WHERE id = $1",
          QueryParams().addBigInt(victim).addText(original));
        q(m_admin, "ALTER TABLE redrive.audit_log ENABLE TRIGGER audit_log_no_update_delete");
        finished.clear();
        widget.verifyChain();
        QVERIFY(finished.wait(30000));
        QCOMPARE(widget.verifyResult().state, AuditLogWidget::VerifyResult::State::Ok);

        // A deleted entry in the middle, with the server's own check replaced by one that finds
        // nothing: the console still names the ids on either side of the gap.
        const ResultSet around
            = q(m_admin, "SELECT id FROM redrive.audit_log ORDER BY id OFFSET 49 LIMIT 3");
        const qint64 beforeGap = around.bigInt(0, 0).value_or(0);
        const qint64 gone = around.bigInt(1, 0).value_or(0);
        const qint64 afterGap = around.bigInt(2, 0).value_or(0);
        const QByteArray serverCheck
            = q(m_admin, "SELECT pg_get_functiondef('redrive.verify_audit_chain'::regproc)")
                  .raw(0, 0);
        q(m_admin,
          "CREATE OR REPLACE FUNCTION redrive.verify_audit_chain(p_from_id bigint DEFAULT NULL,"
          " p_expected_id bigint DEFAULT NULL, p_expected_hash bytea DEFAULT NULL)"
          " RETURNS TABLE (broken_id bigint, problem text, checked bigint) LANGUAGE sql"
          " AS $$ SELECT NULL::bigint, NULL::text, NULL::bigint WHERE false $$");
        q(m_admin, "ALTER TABLE redrive.audit_log DISABLE TRIGGER audit_log_no_update_delete");
        q(m_admin,
          "CREATE TABLE public.saved_entry AS SELECT * FROM redrive.audit_log WHERE id = $1",
          QueryParams().addBigInt(gone));
        q(m_admin, "DELETE FROM redrive.audit_log WHERE id = $1", QueryParams().addBigInt(gone));
        q(m_admin, "ALTER TABLE redrive.audit_log ENABLE TRIGGER audit_log_no_update_delete");
        finished.clear();
        QSignalSpy progress(widget.verifyJob(), &AuditVerifyJob::progress);
        widget.verifyChain();
        QVERIFY(finished.wait(30000));
        QCOMPARE(widget.verifyResult().state, AuditLogWidget::VerifyResult::State::Broken);
        QCOMPARE(widget.verifyResult().brokenId, afterGap);
        QVERIFY2(
            widget.verifyText().contains(QStringLiteral("missing entries between id %1 and id %2")
                                             .arg(beforeGap)
                                             .arg(afterGap)),
            qPrintable(widget.verifyText()));
        QVERIFY(!progress.isEmpty());
        QVERIFY(progress.last().at(1).toLongLong() > 0); // the total was counted
        settle();
        QVERIFY(widget.grab().save(outputDir() + QStringLiteral("/audit_log_widget_missing.png")));

        // Put the entry and the server's check back.
        q(m_admin, "ALTER TABLE redrive.audit_log DISABLE TRIGGER audit_log_chain");
        q(m_admin, "INSERT INTO redrive.audit_log SELECT * FROM public.saved_entry");
        q(m_admin, "ALTER TABLE redrive.audit_log ENABLE TRIGGER audit_log_chain");
        q(m_admin, "DROP TABLE public.saved_entry");
        QVERIFY(m_admin.execScript(serverCheck).ok());
        QCOMPARE(q(m_admin, "SELECT count(*) FROM redrive.verify_audit_chain()").bigInt(0, 0), 0);
    }

    void verifySaysItStartedFromTheRecordedHead()
    {
        // January 2026 exported and detached (docs/audit-chain.md, "Detached months"): the
        // console's verification starts at the head recorded at its end and says so.
        test::TestDatabase db(QStringLiteral("audit_widget_detached"));
        QVERIFY2(db.isValid(), qPrintable(db.error()));
        PgConnection owner = db.connect();
        q(owner, R"sql(SELECT redrive.ensure_month_partition('audit_log', 'at', m)
                         FROM unnest(ARRAY['2026-01-10', '2026-02-10']::timestamptz[]) m)sql");
        auto chained = owner.execScript(R"sql(
            ALTER TABLE redrive.audit_log DISABLE TRIGGER audit_log_chain;
            DO $$
            DECLARE
                e redrive.audit_log;
                prev bytea;
            BEGIN
                FOR i IN 1 .. 4 LOOP
                    e := ROW(nextval('redrive.audit_log_id_seq'),
                             timestamptz '2026-01-20 10:00:00+00' + make_interval(days => 5 * i),
                             'alice', NULL, 'alice', 'note', '[]', 'entry ' || i, NULL, NULL,
                             NULL, gen_random_uuid(), '{}', prev, NULL)::redrive.audit_log;
                    e.hash := redrive.audit_entry_hash(prev, e);
                    INSERT INTO redrive.audit_log SELECT (e).*;
                    prev := e.hash;
                END LOOP;
            END
            $$;
            ALTER TABLE redrive.audit_log ENABLE TRIGGER audit_log_chain;
            SELECT redrive.detach_audit_month(gen_random_uuid(), '2026-01-01', 2,
                       (SELECT encode(hash, 'hex') FROM redrive.audit_log WHERE id = 2), 2,
                       repeat('a', 64), 'retention test', 'tester');)sql");
        QVERIFY2(chained.ok(), qPrintable(chained.ok() ? QString() : chained.error().summary()));
        const ResultSet recorded
            = q(owner,
                "SELECT to_char(recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS'),"
                " (SELECT encode(hash, 'hex') FROM redrive.audit_log WHERE id = 5)"
                " FROM redrive.audit_detached_month");
        const QString auditor
            = db.createLogin(QStringLiteral("erin_aud"), { QStringLiteral("redrive_auditor") });
        auto session = db.openSession(db.consoleSettingsAs(auditor));
        QVERIFY2(session, qPrintable(db.error()));
        AuditLogWidget widget(session.get());
        widget.resize(1400, 900);
        widget.show();
        QVERIFY(QTest::qWaitForWindowExposed(&widget));
        widget.reload();
        QVERIFY(loadAll(*widget.entryModel()));
        QSignalSpy finished(&widget, &AuditLogWidget::verifyFinished);
        QTest::mouseClick(widget.findChild<QPushButton *>(QStringLiteral("verifyChain")),
                          Qt::LeftButton);
        QVERIFY(finished.wait(30000));
        QCOMPARE(widget.verifyResult().state, AuditLogWidget::VerifyResult::State::Ok);
        QCOMPARE(widget.verifyText(),
                 QStringLiteral("Chain OK: 3 entries verified in this console; head: entry 5, "
                                "hash %1;\nverified from the head recorded on %2 UTC at entry 2 "
                                "(audit months up to 2026-01 detached)")
                     .arg(recorded.text(0, 1), recorded.text(0, 0)));
        settle(); // the layout gives the second line its room
        QVERIFY(widget.grab().save(outputDir() + QStringLiteral("/audit_log_widget_detached.png")));
    }

    void verifyCanBeCanceledWhileTheServerWorks()
    {
        AuditLogWidget widget(m_session.get());
        // Hold the audit log locked, so the verification waits on the server until canceled.
        PgConnection locker = m_db->connect();
        q(locker, "BEGIN");
        q(locker, "LOCK TABLE redrive.audit_log IN ACCESS EXCLUSIVE MODE");
        QSignalSpy finished(&widget, &AuditLogWidget::verifyFinished);
        widget.verifyChain();
        QVERIFY(widget.isVerifying());
        PgConnection watcher = m_db->connect();
        QTRY_VERIFY_WITH_TIMEOUT(
            q(watcher,
              "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database()"
              " AND wait_event_type = 'Lock' AND query LIKE '%FROM redrive.audit_log%'")
                    .bigInt(0, 0)
                    .value_or(0)
                == 1,
            10000);
        // The verification has a connection of its own: the console's session stays free.
        bool answered = false;
        m_session->execute(statementSql(Statement::SessionRoles), {}, &widget,
                           [&answered](const DbExpected<ResultSet> &r) { answered = r.ok(); });
        QTRY_VERIFY_WITH_TIMEOUT(answered, 10000);
        QVERIFY(widget.isVerifying());
        widget.cancelVerify();
        QVERIFY(finished.wait(10000));
        QCOMPARE(widget.verifyResult().state, AuditLogWidget::VerifyResult::State::Canceled);
        QVERIFY(widget.verifyText().contains(QStringLiteral("canceled")));
        q(locker, "ROLLBACK");
    }

    void exportWritesTheCurrentFilterWithTheHead()
    {
        AuditLogWidget widget(m_session.get());
        AuditFilter filter;
        filter.actor = m_bob;
        widget.setFilter(filter);
        QVERIFY(loadAll(*widget.entryModel()));
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const QString path = dir.filePath(QStringLiteral("bob.csv"));
        QSignalSpy finished(&widget, &AuditLogWidget::exportFinished);
        QVERIFY(widget.exportTo(path, AuditExportFormat::Csv));
        QVERIFY(finished.wait(30000));
        QCOMPARE(finished.first().first().toBool(), true);
        QFile file(path);
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QList<QByteArray> lines = file.readAll().split('\n');
        QCOMPARE(lines.size() - 2, int(widget.entryModel()->total())); // header, final newline
        QCOMPARE(widget.exportJob()->summary().rows, widget.entryModel()->total());
        QVERIFY(QFile::exists(path + QStringLiteral(".head.json")));
        const AuditChainHead &head = widget.exportJob()->summary().head;
        QVERIFY2(widget.exportText().contains(
                     QStringLiteral("redrive verify-audit --head-id %1 --head-hash %2")
                         .arg(head.id)
                         .arg(head.hash)),
                 qPrintable(widget.exportText()));
        QCOMPARE(q(m_admin, statementSql(Statement::VerifyAuditChain),
                   QueryParams().addBigInt(head.id).addText(head.hash))
                     .rowCount(),
                 0);
    }

    // A reason of 100,000 lines made the details pane 32,767 px tall (1.1 GB of pixels, ~25 s a
    // click). The pane shows its first six lines and how many more, the widget keeps its size,
    // and the "Entry (raw)" tab has the reason whole. Runs last: its note is the newest entry.
    void hugeReasonIsBoundedInTheDetails()
    {
        QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates));
        QStringList lines;
        for (int i = 1; i <= 100000; ++i)
            lines << QStringLiteral("line %1").arg(i);
        const QString reason = lines.join(QLatin1Char('\n'));
        PgConnection alice = as(m_alice);
        q(alice,
          "SELECT redrive.add_note(gen_random_uuid(), 'dead_letter', $1, $2, 'tester')::text",
          QueryParams().addText(QString::number(m_requeued.first())).addText(reason));
        const qint64 entry
            = q(m_admin, "SELECT max(id) FROM redrive.audit_log").bigInt(0, 0).value_or(0);
        AuditLogWidget widget(m_session.get());
        widget.resize(1400, 900);
        widget.show();
        QVERIFY(QTest::qWaitForWindowExposed(&widget));
        widget.reload();
        QVERIFY(loadAll(*widget.entryModel()));
        const int row = widget.entryModel()->rowOfId(entry);
        QVERIFY(row >= 0);
        widget.selectEntry(row);
        QTRY_VERIFY_WITH_TIMEOUT(widget.shownEntryId() == entry && !widget.isLoading(), 10000);
        settle();
        auto *fields = widget.findChild<QLabel *>(QStringLiteral("entryFields"));
        QVERIFY(fields);
        const QString shown = QStringLiteral("\nReason: line 1\nline 2\nline 3\nline 4\nline 5\n"
                                             "line 6\n\u2026 (99,994 more lines)\nTicket: ");
        QVERIFY2(fields->text().contains(shown), qPrintable(fields->text().left(400)));
        QVERIFY2(widget.minimumSizeHint().height() < 900,
                 qPrintable(QString::number(widget.minimumSizeHint().height())));
        QCOMPARE(widget.size(), QSize(1400, 900));
        auto *raw = widget.findChild<QPlainTextEdit *>(QStringLiteral("entryRaw"));
        QVERIFY(raw);
        QVERIFY(raw->toPlainText().contains(QStringLiteral("\nReason: ") + reason
                                            + QStringLiteral("\nTicket: ")));
        QVERIFY(widget.grab().save(outputDir() + QStringLiteral("/audit_huge_reason.png")));
    }
};

QTEST_MAIN(TestAuditLogWidget)
#include "tst_audit_log_widget.moc"
