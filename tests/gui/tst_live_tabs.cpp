// SPDX-License-Identifier: GPL-3.0-or-later
// Every tab and the case view follow changes made by another session without F5, through
// LISTEN/NOTIFY and a re-read, and keep the operator's selection
// (docs/architecture.md#live-updates).
#include "models/audit_entry_model.h"
#include "models/compensation_model.h"
#include "models/db/database_session.h"
#include "models/dead_letter_case.h"
#include "models/dead_letter_model.h"
#include "models/failure_group_model.h"
#include "models/live_updates.h"
#include "models/result_table_model.h"
#include "models/stuck_key_model.h"
#include "tests/support/test_database.h"
#include "views/audit_log_widget.h"
#include "views/case_view.h"
#include "views/compensation_widget.h"
#include "views/idempotency_keys_widget.h"
#include "views/main_window.h"

#include <QDir>
#include <QElapsedTimer>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPointer>
#include <QPushButton>
#include <QScopeGuard>
#include <QScrollBar>
#include <QTableView>
#include <QTest>
#include <QUuid>

using namespace redrive;
using namespace redrive::db;

namespace {

const char kSeed[] = R"sql(
INSERT INTO redrive.job (queue, kind, payload, state)
SELECT 'payments', 'charge_card', jsonb_build_object('n', g), 'dead'
  FROM generate_series(1, 120) g;
INSERT INTO redrive.dead_letter (job_id, queue, kind, error_class, error_code, last_error,
                                 attempts, dead_at)
SELECT j.id, j.queue, j.kind, 'permanent', 'card_declined', '402 card_declined', 3,
       now() - j.id * interval '1 minute'
  FROM redrive.job j;
INSERT INTO redrive.idempotency_key (scope, key, request_hash, state, locked_by, locked_until)
VALUES ('charge_card', 'charge:stuck-1', repeat('c', 64), 'processing', 'w-dead',
        clock_timestamp() - interval '2 hours');
)sql";

QString outputPath(const QString &name)
{
    QDir().mkpath(QStringLiteral(REDRIVE_TEST_OUTPUT_DIR));
    return QStringLiteral(REDRIVE_TEST_OUTPUT_DIR) + QLatin1Char('/') + name;
}

QJsonObject outcomeOf(const DbExpected<ResultSet> &r)
{
    return r ? QJsonDocument::fromJson(r->text(0, 0).toUtf8()).object() : QJsonObject();
}

} // namespace

class TestLiveTabs : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void tabsFollowAnotherSessionWithoutRefresh()
    {
        test::TestDatabase db(QStringLiteral("live_tabs"));
        QVERIFY(db.isValid());
        PgConnection admin = db.connect();
        QVERIFY(admin.execScript(kSeed).ok());
        const QString oncallName
            = db.createLogin(QStringLiteral("live_oncall"), { QStringLiteral("redrive_oncall") },
                             QStringLiteral("pw-oncall"));
        PgConnection oncall = test::TestDatabase::connectWith(
            db.tcpSettingsAs(oncallName, QStringLiteral("pw-oncall")));
        QVERIFY(oncall.isHealthy());
        auto requeue = [&](qint64 id, const QString &reason) {
            auto version = admin.exec("SELECT version FROM redrive.dead_letter WHERE id = $1",
                                      QueryParams().addBigInt(id));
            const QJsonArray targets { QJsonObject {
                { QStringLiteral("id"), id },
                { QStringLiteral("version"), version->integer(0, 0).value_or(0) } } };
            return oncall.exec(
                "SELECT redrive.requeue_dead_letters($1::uuid, $2::jsonb, false, $3, NULL,"
                " 'tester', NULL, NULL)::text",
                QueryParams()
                    .addUuid(QUuid::createUuid())
                    .addText(QString::fromUtf8(QJsonDocument(targets).toJson()))
                    .addText(reason));
        };

        MainWindow window;
        window.resize(1400, 860);
        window.show();
        window.connectTo(db.settings());
        QTRY_VERIFY_WITH_TIMEOUT(window.schemaReady(), 10000);
        QTRY_VERIFY_WITH_TIMEOUT(window.liveUpdates() && window.liveUpdates()->isLive(), 10000);
        QTRY_COMPARE_WITH_TIMEOUT(window.liveStatusText(), QStringLiteral("● Live"), 5000);

        auto *audit = window.findChild<AuditLogWidget *>();
        auto *compensations = window.findChild<CompensationWidget *>();
        auto *keys = window.findChild<IdempotencyKeysWidget *>();
        QVERIFY(audit && compensations && keys);
        QTRY_COMPARE_WITH_TIMEOUT(keys->stuckKeyModel()->rowCount(), 1, 10000);
        QTRY_COMPARE_WITH_TIMEOUT(window.deadLetterModel()->rowCount(), 120, 10000);
        QTRY_COMPARE_WITH_TIMEOUT(window.failureGroupModel()->rowCount(), 1, 10000);

        // Two audit entries; the operator selects the older one (second row).
        QVERIFY(outcomeOf(requeue(5, QStringLiteral("first"))).value("applied").toInt() == 1);
        QVERIFY(outcomeOf(requeue(6, QStringLiteral("second"))).value("applied").toInt() == 1);
        QTRY_COMPARE_WITH_TIMEOUT(audit->entryModel()->rowCount(), 2, 10000);
        auto *auditView = audit->findChild<QTableView *>(QString(), Qt::FindDirectChildrenOnly);
        QTableView *entries = nullptr;
        for (QTableView *v : audit->findChildren<QTableView *>())
            if (v->model() == audit->entryModel())
                entries = v;
        Q_UNUSED(auditView);
        QVERIFY(entries);
        entries->selectRow(1);
        const qint64 selectedEntry = audit->entryModel()->bigInt(1, QStringLiteral("id"));
        QVERIFY(selectedEntry > 0);

        // Another session acts: the audit log shows the new entry on top, and the selected
        // entry stays selected (now the third row); no F5.
        QVERIFY(outcomeOf(requeue(7, QStringLiteral("third"))).value("applied").toInt() == 1);
        QTRY_COMPARE_WITH_TIMEOUT(audit->entryModel()->rowCount(), 3, 10000);
        QTRY_COMPARE_WITH_TIMEOUT(entries->currentIndex().row(), 2, 5000);
        QCOMPARE(audit->entryModel()->bigInt(entries->currentIndex().row(), QStringLiteral("id")),
                 selectedEntry);
        QCOMPARE(entries->selectionModel()->selectedRows().size(), 1);
        QCOMPARE(entries->selectionModel()->selectedRows().first().row(), 2);

        // The dead-letter list's own rows follow as well, in place: the three requeued by the
        // other session read "requeued" where they were, the list keeps its 120 rows, and the
        // operator's current row stays on the same dead letter.
        auto *deadLetters = window.deadLetterModel();
        const int currentBefore = 30;
        window.deadLetterView()->setCurrentIndex(deadLetters->index(currentBefore, 0));
        const qint64 currentId = deadLetters->idAt(currentBefore);
        for (qint64 id : { 5, 6, 7 }) {
            const int row = deadLetters->rowOf(QStringLiteral("id"), id);
            QVERIFY(row >= 0);
            QTRY_COMPARE_WITH_TIMEOUT(deadLetters->text(row, QStringLiteral("status")),
                                      QStringLiteral("requeued"), 10000);
            QCOMPARE(deadLetters->text(row, QStringLiteral("version")), QStringLiteral("2"));
        }
        QCOMPARE(deadLetters->rowCount(), 120);
        QCOMPARE(window.deadLetterView()->currentIndex().row(), currentBefore);
        QCOMPARE(deadLetters->idAt(currentBefore), currentId);

        // A compensation request by someone else appears for the approver without a refresh.
        const int before = compensations->model()->rowCount();
        auto requested = admin.exec(
            "INSERT INTO redrive.compensation_request (target_type, target_id, kind, payment_ref,"
            " amount_minor, currency, status, requires_approval, requested_by, reason, action_id)"
            " VALUES ('dead_letter', 9, 'refund', 'pay_9', 500, 'USD', 'pending_approval', true,"
            " 'someone_else', 'duplicate charge', gen_random_uuid())");
        QVERIFY2(requested.ok(), requested.ok() ? "" : qPrintable(requested.error().summary()));
        QTRY_COMPARE_WITH_TIMEOUT(compensations->model()->rowCount(), before + 1, 10000);

        // A new stuck key shows on the keys tab.
        QVERIFY(admin
                    .exec("INSERT INTO redrive.idempotency_key (scope, key, request_hash, state,"
                          " locked_by, locked_until) VALUES ('charge_card', 'charge:stuck-2',"
                          " repeat('d', 64), 'processing', 'w-dead',"
                          " clock_timestamp() - interval '3 hours')")
                    .ok());
        QTRY_COMPARE_WITH_TIMEOUT(keys->stuckKeyModel()->rowCount(), 2, 10000);

        // New dead letters in a new group: the groups re-read, the list does not move, and the
        // badge counts exactly 4.
        const int topBefore = window.deadLetterView()->rowAt(0);
        QVERIFY(admin
                    .exec("WITH j AS (INSERT INTO redrive.job (queue, kind, payload, state)"
                          " SELECT 'emails', 'send_receipt', '{}', 'dead'"
                          " FROM generate_series(1, 4) RETURNING id)"
                          " INSERT INTO redrive.dead_letter (job_id, queue, kind, error_class,"
                          " error_code, last_error) SELECT id, 'emails', 'send_receipt',"
                          " 'transient', 'smtp_timeout', 'timeout' FROM j")
                    .ok());
        QTRY_COMPARE_WITH_TIMEOUT(window.failureGroupModel()->rowCount(), 2, 10000);
        auto *badge = window.findChild<QPushButton *>();
        QPushButton *newBadge = nullptr;
        for (QPushButton *b : window.findChildren<QPushButton *>())
            if (b->text().endsWith(QStringLiteral("new ▲")))
                newBadge = b;
        Q_UNUSED(badge);
        QTRY_VERIFY_WITH_TIMEOUT(
            newBadge = [&]() -> QPushButton * {
                for (QPushButton *b : window.findChildren<QPushButton *>())
                    if (b->text() == QStringLiteral("4 new ▲") && b->isVisible())
                        return b;
                return nullptr;
            }(),
            10000);
        QCOMPARE(window.deadLetterModel()->rowCount(), 120);
        QCOMPARE(window.deadLetterView()->rowAt(0), topBefore);

        // The case view follows its dead letter: the worker's side of a requeue (an outbox row)
        // appears in "Outbox & audit" without F5.
        CaseView *caseView = window.openCase(20);
        QTRY_VERIFY_WITH_TIMEOUT(caseView->deadLetterCase()->auditModel()->rowCount() == 0
                                     && !caseView->deadLetterCase()->auditModel()->isLoading(),
                                 10000);
        QCOMPARE(caseView->deadLetterCase()->outboxModel()->rowCount(), 0);
        QVERIFY(outcomeOf(requeue(20, QStringLiteral("case"))).value("applied").toInt() == 1);
        QTRY_COMPARE_WITH_TIMEOUT(caseView->deadLetterCase()->outboxModel()->rowCount(), 1, 10000);
        QTRY_COMPARE_WITH_TIMEOUT(caseView->deadLetterCase()->auditModel()->rowCount(), 1, 10000);
        QVERIFY(window.grab().save(outputPath(QStringLiteral("live_tabs_main.png"))));
        caseView->close();
    }

    // Esc in a case view whose reads wait behind another session's lock cancels them within
    // DatabaseSession::kCancelTimeoutMs, leaves nothing waiting on the server and keeps the
    // window open; a second Esc, with nothing running, closes it.
    void escInTheCaseViewCancelsBeforeItCloses()
    {
        test::TestDatabase db(QStringLiteral("live_tabs_esc"));
        QVERIFY(db.isValid());
        PgConnection admin = db.connect();
        QVERIFY(admin.execScript(kSeed).ok());
        MainWindow window;
        window.show();
        window.connectTo(db.settings());
        QTRY_VERIFY_WITH_TIMEOUT(window.liveUpdates() && window.liveUpdates()->isLive(), 10000);
        QTRY_COMPARE_WITH_TIMEOUT(window.deadLetterModel()->rowCount(), 120, 10000);
        PgConnection holder = db.connect();
        QVERIFY(holder.exec("BEGIN").ok());
        QVERIFY(holder.exec("LOCK TABLE redrive.outbox IN ACCESS EXCLUSIVE MODE").ok());
        auto unlock = qScopeGuard([&] { holder.exec("ROLLBACK"); });
        PgConnection probe = db.connect();
        auto waiting = [&] {
            auto rows = probe.exec(
                "SELECT count(*) FROM pg_stat_activity WHERE datname = $1"
                " AND wait_event_type = 'Lock' AND pid <> $2",
                QueryParams().addText(db.name()).addInt(holder.serverInfo().backendPid));
            return rows ? rows->bigInt(0, 0).value_or(-1) : -1;
        };
        QPointer<CaseView> caseView = window.openCase(10);
        QVERIFY(QTest::qWaitForWindowExposed(caseView));
        QTRY_VERIFY_WITH_TIMEOUT(waiting() >= 1, 5000);
        QElapsedTimer clock;
        clock.start();
        QTest::keyClick(caseView, Qt::Key_Escape);
        QTRY_COMPARE_WITH_TIMEOUT(waiting(), qint64(0), 2000);
        QVERIFY2(clock.elapsed() <= 2000, qPrintable(QString::number(clock.elapsed())));
        QVERIFY(caseView && caseView->isVisible());
        unlock.dismiss();
        QVERIFY(holder.exec("ROLLBACK").ok());
        QTest::qWait(1500); // let live re-reads settle
        QTRY_VERIFY_WITH_TIMEOUT(
            !caseView || !caseView->isVisible() ||
                [&] {
                    QTest::keyClick(caseView, Qt::Key_Escape);
                    return !caseView || !caseView->isVisible();
                }(),
            5000);
    }

    // Bursts are re-read at most once a second, however many statements the server runs.
    void reReadsAreRateLimited()
    {
        test::TestDatabase db(QStringLiteral("live_tabs_rate"));
        QVERIFY(db.isValid());
        PgConnection admin = db.connect();
        QVERIFY(admin.execScript(kSeed).ok());
        MainWindow window;
        window.show();
        window.connectTo(db.settings());
        QTRY_VERIFY_WITH_TIMEOUT(window.liveUpdates() && window.liveUpdates()->isLive(), 10000);
        QTest::qWait(1500);
        const int before = window.liveUpdates()->changeCount();
        QElapsedTimer clock;
        clock.start();
        while (clock.elapsed() < 3000) {
            QVERIFY(
                admin.exec("UPDATE redrive.dead_letter SET claimed_by = NULL WHERE id = 1").ok());
            QTest::qWait(10);
        }
        QTest::qWait(1200);
        const int reReads = window.liveUpdates()->changeCount() - before;
        QVERIFY2(reReads >= 2 && reReads <= 5, qPrintable(QString::number(reReads)));
    }
};

QTEST_MAIN(TestLiveTabs)
#include "tst_live_tabs.moc"
