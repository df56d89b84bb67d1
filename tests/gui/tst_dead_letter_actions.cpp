// SPDX-License-Identifier: GPL-3.0-or-later
// Operator actions from the console, against a real PostgreSQL with real
// login roles: the auditor's actions are disabled and name the role they need; an on-call
// engineer requeues a selection through the confirmation dialog (one target changed after the
// preview: reported, not applied, and the audit entry agrees); a failure group is resolved in
// chunks, cancelled half-way from the progress dialog and resumed, each target exactly once;
// edit-and-requeue refuses invalid JSON and keeps before/after; a support agent requests a
// compensation capped at what was charged. Dialog screenshots are written as PNG.
#include "models/db/database_session.h"
#include "models/dead_letter_model.h"
#include "models/mismatch_model.h"
#include "models/stuck_key_model.h"
#include "tests/support/test_database.h"
#include "views/action_confirmation_dialog.h"
#include "views/action_result_dialog.h"
#include "views/case_view.h"
#include "views/compensation_request_dialog.h"
#include "views/dead_letter_actions.h"
#include "views/dead_letter_filter_bar.h"
#include "views/edit_payload_dialog.h"
#include "views/idempotency_keys_widget.h"
#include "views/main_window.h"
#include "views/money_edit.h"
#include "views/reason_dialog.h"
#include "views/reconciliation_widget.h"
#include "views/result_table_view.h"

#include <QAction>
#include <QDir>
#include <QDoubleSpinBox>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPointer>
#include <QProgressDialog>
#include <QPushButton>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTest>
#include <QToolBar>
#include <memory>

using namespace redrive;
using namespace redrive::db;

namespace {

QString outputPath(const QString &name)
{
    QDir().mkpath(QStringLiteral(REDRIVE_TEST_OUTPUT_DIR));
    return QStringLiteral(REDRIVE_TEST_OUTPUT_DIR) + QLatin1Char('/') + name;
}

template<typename T>
T *waitForDialog(QList<QPointer<QDialog>> &shown)
{
    for (int i = 0; i < 200; ++i) {
        for (qsizetype k = 0; k < shown.size(); ++k)
            if (auto *typed = qobject_cast<T *>(shown.at(k).data())) {
                shown.removeAt(k);
                return typed;
            }
        QTest::qWait(50);
    }
    return nullptr;
}

} // namespace

class TestDeadLetterActions : public QObject
{
    Q_OBJECT
private:
    std::unique_ptr<test::TestDatabase> m_db;
    PgConnection m_admin;
    QString m_oncall, m_support, m_auditor;

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

    // n open dead letters in queue `queue` with one error (so one failure group); their ids.
    QList<qint64> seed(int n, const QString &queue, const QString &code)
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
                "SELECT id, queue, kind, 'transient', $3, '502 Bad Gateway', idempotency_key FROM j"
                " RETURNING id",
                QueryParams().addText(queue).addInt(n).addText(code));
        QList<qint64> ids;
        for (int i = 0; i < r.rowCount(); ++i)
            ids << r.bigInt(i, 0).value_or(0);
        return ids;
    }

    // A main window logged in as `login`, with its roles known and `total` rows loaded.
    // The edit-and-requeue dialog on `window`'s first row, its payload loaded; every dialog the
    // window's actions show is appended to `shown`. Null when none came.
    EditPayloadDialog *openEditor(MainWindow &window, QList<QPointer<QDialog>> &shown)
    {
        selectRows(window, 0, 0);
        connect(window.actions(), &DeadLetterActions::dialogShown, this,
                [&shown](QDialog *d) { shown << d; });
        window.actions()->editAndRequeueAction()->trigger();
        auto *editor = waitForDialog<EditPayloadDialog>(shown);
        if (editor && !QTest::qWaitFor([editor] { return editor->editor()->isEnabled(); }, 10000))
            return nullptr;
        return editor;
    }

    std::unique_ptr<MainWindow> open(const QString &login, qint64 total, const QString &roleName)
    {
        auto window = std::make_unique<MainWindow>();
        window->resize(1300, 800);
        window->show();
        window->connectTo(m_db->settingsAs(login));
        if (!QTest::qWaitFor([&] { return window->schemaReady(); }, 10000))
            return nullptr;
        if (!QTest::qWaitFor([&] { return window->deadLetterModel()->total() == total; }, 10000))
            return nullptr;
        if (!QTest::qWaitFor([&] { return window->redriveRoles().contains(roleName); }, 10000))
            return nullptr;
        // The total comes from its own count request and can arrive before the page: wait for
        // the rows themselves (every seeded dead letter fits on the first page), so a selection
        // made next has rows to select.
        if (!QTest::qWaitFor(
                [&] {
                    return !window->deadLetterModel()->isLoading()
                        && window->deadLetterModel()->rowCount() == total;
                },
                10000))
            return nullptr;
        return window;
    }

    void selectRows(MainWindow &window, int from, int to)
    {
        QTableView *view = window.deadLetterView();
        view->clearSelection();
        view->selectionModel()->select(QItemSelection(window.deadLetterModel()->index(from, 0),
                                                      window.deadLetterModel()->index(to, 0)),
                                       QItemSelectionModel::Select | QItemSelectionModel::Rows);
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_db = std::make_unique<test::TestDatabase>(QStringLiteral("gui_actions"));
        QVERIFY2(m_db->isValid(), qPrintable(m_db->error()));
        m_admin = m_db->connect();
        m_oncall
            = m_db->createLogin(QStringLiteral("olivia"), { QStringLiteral("redrive_oncall") });
        m_support = m_db->createLogin(QStringLiteral("sam"), { QStringLiteral("redrive_support") });
        m_auditor
            = m_db->createLogin(QStringLiteral("audrey"), { QStringLiteral("redrive_auditor") });
        // A payments ledger: every pay_* entity was charged 5,000 cents, 1,000 refunded.
        q("CREATE OR REPLACE VIEW redrive.payment_list AS"
          " SELECT j.entity_id AS payment_ref, 'ch_' || j.entity_id AS charge_ref,"
          "        5000::bigint AS charged_cents, 1000::bigint AS refunded_cents,"
          "        'USD'::text AS currency"
          "   FROM redrive.job j WHERE j.entity_id IS NOT NULL");
    }

    void cleanupTestCase()
    {
        m_admin = PgConnection();
        m_db.reset(); // drops the database, then the logins
    }

    void init()
    {
        QVERIFY(m_admin
                    .execScript("TRUNCATE redrive.outbox, redrive.compensation_request,"
                                " redrive.dead_letter, redrive.job CASCADE")
                    .ok());
    }

    void auditorSeesWhichRoleEachActionNeeds()
    {
        seed(5, QStringLiteral("payments"), QStringLiteral("provider_5xx"));
        auto window = open(m_auditor, 5, QStringLiteral("redrive_auditor"));
        QVERIFY(window);
        selectRows(*window, 0, 1);
        DeadLetterActions *actions = window->actions();
        for (QAction *a : actions->actions()) {
            if (!a)
                continue;
            QVERIFY2(!a->isEnabled(), qPrintable(a->text()));
            QVERIFY2(a->text().contains(QStringLiteral("needs role redrive_")),
                     qPrintable(a->text()));
        }
        QVERIFY(actions->requeueAction()->text().contains(QStringLiteral("redrive_oncall")));
        QVERIFY(actions->compensateAction()->text().contains(QStringLiteral("redrive_support")));
        window->grab().save(outputPath(QStringLiteral("actions_auditor.png")));
    }

    void oncallRequeuesTheSelectionAndSeesTheConflict()
    {
        seed(12, QStringLiteral("payments"), QStringLiteral("provider_5xx"));
        auto window = open(m_oncall, 12, QStringLiteral("redrive_oncall"));
        QVERIFY(window);
        DeadLetterActions *actions = window->actions();
        QVERIFY(!actions->requeueAction()->isEnabled()); // nothing selected yet
        selectRows(*window, 0, 4);
        QVERIFY(actions->requeueAction()->isEnabled());
        QList<qint64> chosen;
        for (int r = 0; r <= 4; ++r)
            chosen << window->deadLetterModel()->idAt(r);

        QList<QPointer<QDialog>> shown;
        connect(actions, &DeadLetterActions::dialogShown, this, [&](QDialog *d) { shown << d; });
        actions->requeueAction()->trigger();
        auto *confirm = waitForDialog<ActionConfirmationDialog>(shown);
        QVERIFY(confirm);
        QTRY_COMPARE_WITH_TIMEOUT(confirm->confirmButton()->text(), QStringLiteral("Requeue 5"),
                                  10000);
        QVERIFY(confirm->summaryText().contains(QStringLiteral("payments (5)")));
        QVERIFY(!confirm->confirmButton()->isEnabled()); // a reason is required
        confirm->reasonEdit()->setText(QStringLiteral("provider recovered, INC-7"));
        QVERIFY(confirm->confirmButton()->isEnabled());
        confirm->grab().save(outputPath(QStringLiteral("actions_confirm_requeue.png")));

        // Someone else changes one target after the preview: it must be reported, not applied.
        q("UPDATE redrive.dead_letter SET version = version + 1 WHERE id = $1",
          QueryParams().addBigInt(chosen.at(2)));
        QTest::mouseClick(confirm->confirmButton(), Qt::LeftButton);
        auto *result = waitForDialog<ActionResultDialog>(shown);
        QVERIFY(result);
        QVERIFY2(
            result->reportText().contains(QStringLiteral("confirmed 5, applied 4, conflicts 1")),
            qPrintable(result->reportText()));
        QVERIFY(result->reportText().contains(QString::number(chosen.at(2))));
        result->grab().save(outputPath(QStringLiteral("actions_result_requeue.png")));
        QCOMPARE(count("SELECT count(*) FROM redrive.dead_letter WHERE status = 'requeued'"), 4);
        QCOMPARE(count("SELECT count(*) FROM redrive.outbox WHERE command = 'requeue'"), 4);
        const ResultSet audit
            = q("SELECT db_user, (outcome ->> 'applied')::int, jsonb_array_length(targets), reason,"
                "       (SELECT count(*) FROM jsonb_array_elements(targets) t"
                "         WHERE t ->> 'result' = 'conflict')"
                "  FROM redrive.audit_log WHERE action = 'requeue' AND reason = $1",
                QueryParams().addText(QStringLiteral("provider recovered, INC-7")));
        QCOMPARE(audit.rowCount(), 1);
        QCOMPARE(audit.text(0, 0), m_oncall);
        QCOMPARE(audit.integer(0, 1).value_or(-1), 4);
        // All five confirmed targets are named, the one that changed as a conflict.
        QCOMPARE(audit.integer(0, 2).value_or(-1), 5);
        QCOMPARE(audit.integer(0, 4).value_or(-1), 1);
        // The list refreshed by itself: the requeued ones left the open list.
        QTRY_COMPARE_WITH_TIMEOUT(window->deadLetterModel()->total(), qint64(8), 10000);
        // ... and the rows shown were read again in place, not listed anew: the 12 rows keep
        // their order, the 4 requeued show "requeued" where they were, the conflict "open".
        DeadLetterModel *model = window->deadLetterModel();
        QTRY_COMPARE_WITH_TIMEOUT(model->text(0, QStringLiteral("status")),
                                  QStringLiteral("requeued"), 10000);
        QCOMPARE(model->rowCount(), 12);
        for (int r = 0; r <= 4; ++r) {
            QCOMPARE(model->idAt(r), chosen.at(r));
            QCOMPARE(model->text(r, QStringLiteral("status")),
                     r == 2 ? QStringLiteral("open") : QStringLiteral("requeued"));
        }
        QCOMPARE(model->text(5, QStringLiteral("status")), QStringLiteral("open"));
    }

    void failureGroupResolvedInChunksCancelledAndResumed()
    {
        seed(30, QStringLiteral("webhooks"), QStringLiteral("schema_validation"));
        seed(4, QStringLiteral("emails"), QStringLiteral("provider_5xx"));
        auto window = open(m_oncall, 34, QStringLiteral("redrive_oncall"));
        QVERIFY(window);
        const QString fingerprint = q("SELECT fingerprint FROM redrive.dead_letter"
                                      " WHERE error_code = 'schema_validation' LIMIT 1")
                                        .text(0, 0);
        window->filterBar()->setFailureGroup(fingerprint, QStringLiteral("schema_validation"));
        QTRY_COMPARE_WITH_TIMEOUT(window->deadLetterModel()->total(), qint64(30), 10000);
        DeadLetterActions *actions = window->actions();
        QVERIFY(actions->resolveGroupAction()->isEnabled());
        actions->setChunkSize(5);

        QList<QPointer<QDialog>> shown;
        connect(actions, &DeadLetterActions::dialogShown, this, [&](QDialog *d) { shown << d; });
        bool cancelled = false;
        connect(actions, &DeadLetterActions::bulkStarted, this, [&](BulkActionRunner *runner) {
            connect(runner, &BulkActionRunner::progress, this, [&](int done, int) {
                if (done == 2 && !std::exchange(cancelled, true)) // Cancel, once, half-way
                    if (auto *p = window->findChild<QProgressDialog *>())
                        if (auto *button = p->findChild<QPushButton *>())
                            button->click();
            });
        });
        actions->resolveGroupAction()->trigger();
        auto *confirm = waitForDialog<ActionConfirmationDialog>(shown);
        QVERIFY(confirm);
        QTRY_COMPARE_WITH_TIMEOUT(confirm->confirmButton()->text(),
                                  QStringLiteral("Mark resolved 30"), 10000);
        confirm->reasonEdit()->setText(QStringLiteral("schema fixed upstream; events replayed"));
        QTest::mouseClick(confirm->confirmButton(), Qt::LeftButton);
        auto *result = waitForDialog<ActionResultDialog>(shown);
        QVERIFY(result);
        QVERIFY(result->resumeButton()); // cancelled: resume is offered
        QVERIFY2(result->reportText().contains(QStringLiteral("confirmed 30, applied 10")),
                 qPrintable(result->reportText()));
        const qint64 resolvedAtCancel
            = count("SELECT count(*) FROM redrive.dead_letter WHERE status = 'resolved'");
        QVERIFY2(resolvedAtCancel > 0 && resolvedAtCancel < 30,
                 qPrintable(QString::number(resolvedAtCancel)));
        result->grab().save(outputPath(QStringLiteral("actions_result_cancelled.png")));
        QTest::mouseClick(result->resumeButton(), Qt::LeftButton);
        auto *finished = waitForDialog<ActionResultDialog>(shown);
        QVERIFY(finished);
        QVERIFY(!finished->resumeButton());
        QCOMPARE(count("SELECT count(*) FROM redrive.dead_letter WHERE status = 'resolved'"), 30);
        QCOMPARE(count("SELECT count(*) FROM redrive.dead_letter WHERE status = 'open'"), 4);
        // Six chunks, each audited exactly once, 30 targets in all.
        QCOMPARE(count("SELECT count(*) FROM redrive.audit_log WHERE action = 'resolve'"
                       " AND reason = 'schema fixed upstream; events replayed'"),
                 6);
        QCOMPARE(
            count(
                "SELECT sum((outcome ->> 'applied')::int) FROM redrive.audit_log"
                " WHERE action = 'resolve' AND reason = 'schema fixed upstream; events replayed'"),
            30);
    }

    void editAndRequeueRefusesInvalidJsonAndKeepsBeforeAndAfter()
    {
        const QList<qint64> ids
            = seed(1, QStringLiteral("payments"), QStringLiteral("invalid_request"));
        auto window = open(m_oncall, 1, QStringLiteral("redrive_oncall"));
        QVERIFY(window);
        QList<QPointer<QDialog>> shown;
        auto *editor = openEditor(*window, shown);
        QVERIFY(editor);
        QVERIFY(editor->editor()->toPlainText().contains(QStringLiteral("\"n\": 1")));
        editor->reasonEdit()->setText(QStringLiteral("amount field fixed by hand"));
        editor->editor()->setPlainText(QStringLiteral("{\"n\": 1,\n \"amount\": }"));
        QVERIFY(!editor->confirmButton()->isEnabled()); // not checked yet
        // Checked off the GUI thread, after a pause in typing.
        QTRY_VERIFY_WITH_TIMEOUT(!editor->isChecking(), 10000);
        QCOMPARE(editor->validationMessage(),
                 QStringLiteral("Not valid JSON at line 2, column 12: expected a value"));
        QVERIFY(!editor->confirmButton()->isEnabled());
        editor->grab().save(outputPath(QStringLiteral("actions_edit_invalid.png")));
        editor->editor()->setPlainText(QStringLiteral("{\"n\": 1, \"amount\": 4200}"));
        QVERIFY(!editor->confirmButton()->isEnabled());
        QTRY_VERIFY_WITH_TIMEOUT(editor->confirmButton()->isEnabled(), 10000);
        QTest::mouseClick(editor->confirmButton(), Qt::LeftButton);
        auto *result = waitForDialog<ActionResultDialog>(shown);
        QVERIFY(result);
        QVERIFY2(result->reportText().contains(QStringLiteral("applied 1")),
                 qPrintable(result->reportText()));
        // The edited payload travels with the requeue command the worker relays.
        QCOMPARE(q("SELECT payload -> 'payload' ->> 'amount' FROM redrive.outbox"
                   " WHERE command = 'requeue' AND (payload ->> 'dead_letter_id')::bigint = $1",
                   QueryParams().addBigInt(ids.first()))
                     .text(0, 0),
                 QStringLiteral("4200"));
        const ResultSet audit = q("SELECT before::text, after::text FROM redrive.audit_log"
                                  " WHERE action = 'edit_and_requeue'");
        QCOMPARE(audit.rowCount(), 1);
        QVERIFY(!audit.text(0, 0).contains(QStringLiteral("4200")));
        QVERIFY(audit.text(0, 1).contains(QStringLiteral("4200")));
    }

    // Refused by the database (the login lost its role while the dialog was open), the edit
    // stays open: why, beside the form, confirm enabled again, nothing applied.
    // (A dead letter changed meanwhile is no refusal: it is an outcome, shown as a conflict.)
    void editAndRequeueRefusedKeepsTheDialogOpen()
    {
        seed(1, QStringLiteral("payments"), QStringLiteral("invalid_request"));
        auto window = open(m_oncall, 1, QStringLiteral("redrive_oncall"));
        QVERIFY(window);
        QList<QPointer<QDialog>> shown;
        auto *editor = openEditor(*window, shown);
        QVERIFY(editor);
        editor->reasonEdit()->setText(QStringLiteral("amount field fixed by hand"));
        editor->editor()->setPlainText(QStringLiteral("{\"n\": 1, \"amount\": 4200}"));
        QTRY_VERIFY_WITH_TIMEOUT(editor->confirmButton()->isEnabled(), 10000);
        const QByteArray edits
            = "SELECT count(*) FROM redrive.audit_log WHERE action = 'edit_and_requeue'";
        const qint64 editsBefore = count(edits);
        const QByteArray login = ("\"" + m_oncall + "\"").toUtf8();
        q("REVOKE redrive_oncall FROM " + login);
        // Given back however the test ends: the later tests log in as this operator too.
        auto regrant = qScopeGuard([&] { q("GRANT redrive_oncall TO " + login); });
        QPointer<EditPayloadDialog> alive(editor);
        QTest::mouseClick(editor->confirmButton(), Qt::LeftButton);
        auto *error = editor->findChild<QLabel *>(QStringLiteral("actionError"));
        QVERIFY(error);
        QTRY_VERIFY_WITH_TIMEOUT(!alive || error->isVisible(), 10000);
        regrant.dismiss();
        q("GRANT redrive_oncall TO " + login);
        QVERIFY(alive);
        qInfo("refused: %s", qPrintable(error->text()));
        // In words an operator can act on, not "function … does not exist … add type casts".
        QVERIFY2(error->text().startsWith(
                     QStringLiteral("This login may not take this action: the database offers it "
                                    "no such function (function edit_and_requeue(")),
                 qPrintable(error->text()));
        QVERIFY2(!error->text().contains(QStringLiteral("type casts")), qPrintable(error->text()));
        editor->grab().save(outputPath(QStringLiteral("actions_edit_refused.png")));
        QVERIFY(editor->isVisible());
        QCOMPARE(editor->result(), int(QDialog::Rejected)); // not accepted
        QVERIFY(editor->confirmButton()->isEnabled());
        QCOMPARE(count(edits), editsBefore);
        editor->reject();
    }

    void caseViewOffersTheActionsOnItsDeadLetter()
    {
        seed(3, QStringLiteral("payments"), QStringLiteral("provider_5xx"));
        auto window = open(m_oncall, 3, QStringLiteral("redrive_oncall"));
        QVERIFY(window);
        selectRows(*window, 1, 1);
        window->deadLetterView()->setCurrentIndex(window->deadLetterModel()->index(1, 0));
        const qint64 id = window->deadLetterModel()->idAt(1);
        for (QAction *a : window->deadLetterView()->actions())
            if (a->text() == QStringLiteral("Open case"))
                a->trigger(); // what Enter does
        CaseView *caseView = nullptr;
        QTRY_VERIFY_WITH_TIMEOUT((caseView = window->findChild<CaseView *>()) != nullptr, 5000);
        QCOMPARE(caseView->deadLetterCase()->id(), id);
        QToolBar *toolBar = caseView->actionsToolBar();
        QTRY_VERIFY_WITH_TIMEOUT(toolBar->isVisible(), 5000);
        QAction *requeue = nullptr;
        for (QAction *a : toolBar->actions())
            if (a->text().startsWith(QStringLiteral("&Requeue")))
                requeue = a;
        QVERIFY(requeue);
        QVERIFY(requeue->isEnabled()); // on-call may requeue this one dead letter
        caseView->resize(1200, 800);
        QTest::qWait(500);
        caseView->grab().save(outputPath(QStringLiteral("actions_case_view.png")));
        caseView->close();
    }

    void supportReleasesAStuckKeyAndResolvesAMismatch()
    {
        q("TRUNCATE redrive.idempotency_key, redrive.reconciliation_mismatch,"
          " redrive.reconciliation_run CASCADE");
        q("INSERT INTO redrive.idempotency_key (scope, key, request_hash, state, locked_by,"
          " locked_until) VALUES ('charge_card', 'k-stuck', repeat('b', 64), 'processing', 'w9',"
          " clock_timestamp() - interval '1 hour')");
        q("INSERT INTO redrive.reconciliation_run (provider, started_at, finished_at, status,"
          " checked_count, mismatch_count) VALUES ('stripe', now(), now(), 'succeeded', 10, 1)");
        q("INSERT INTO redrive.reconciliation_mismatch (run_id, kind, payment_ref,"
          " internal_amount_minor, external_amount_minor, internal_currency, external_currency,"
          " status, detected_at) SELECT id, 'amount_mismatch', 'pay_x', 1234, 1243, 'USD', 'USD',"
          " 'open', now() FROM redrive.reconciliation_run");
        DatabaseSession session(m_db->consoleSettingsAs(m_support));
        session.open();
        const QStringList roles { QStringLiteral("redrive_support") };

        // The keys tab: select the stuck key, release it with a reason.
        IdempotencyKeysWidget keys(&session);
        keys.resize(1200, 700);
        keys.show();
        QVERIFY(!keys.releaseKeyAction()->isEnabled());
        keys.setRoles(roles);
        keys.refresh();
        QTRY_COMPARE_WITH_TIMEOUT(keys.stuckKeyModel()->rowCount(), 1, 10000);
        auto *stuckView = keys.findChild<ResultTableView *>(QStringLiteral("stuckKeys"));
        QVERIFY(stuckView);
        stuckView->selectRow(0);
        QVERIFY(keys.releaseKeyAction()->isEnabled());
        keys.releaseKeyAction()->trigger();
        ReasonDialog *reason = nullptr;
        QTRY_VERIFY_WITH_TIMEOUT((reason = keys.findChild<ReasonDialog *>()) != nullptr, 5000);
        QVERIFY(!reason->confirmButton()->isEnabled());
        reason->reasonEdit()->setText(QStringLiteral("worker w9 died; provider shows no charge"));
        reason->grab().save(outputPath(QStringLiteral("actions_release_key.png")));
        QTest::mouseClick(reason->confirmButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(keys.findChild<ActionResultDialog *>() != nullptr, 10000);
        QCOMPARE(q("SELECT state FROM redrive.idempotency_key WHERE key = 'k-stuck'").text(0, 0),
                 QStringLiteral("failed"));
        QCOMPARE(count("SELECT count(*) FROM redrive.audit_log WHERE action = 'release_key'"
                       " AND reason = 'worker w9 died; provider shows no charge'"),
                 1);
        QTRY_COMPARE_WITH_TIMEOUT(keys.stuckKeyModel()->rowCount(), 0, 10000); // refreshed

        // The reconciliation tab: resolve the open mismatch with a resolution.
        ReconciliationWidget reconciliation(&session);
        reconciliation.resize(1200, 700);
        reconciliation.show();
        reconciliation.setRoles(roles);
        reconciliation.refresh();
        QTRY_VERIFY_WITH_TIMEOUT(!reconciliation.isLoading(), 10000);
        QTRY_COMPARE_WITH_TIMEOUT(reconciliation.mismatchModel()->rowCount(), 1, 10000);
        reconciliation.selectMismatch(0);
        QVERIFY(reconciliation.resolveMismatchAction()->isEnabled());
        reconciliation.resolveMismatchAction()->trigger();
        QTRY_VERIFY_WITH_TIMEOUT((reason = reconciliation.findChild<ReasonDialog *>()) != nullptr,
                                 5000);
        reason->reasonEdit()->setText(QStringLiteral("provider fee, booked by finance"));
        QTest::mouseClick(reason->confirmButton(), Qt::LeftButton);
        QTRY_VERIFY_WITH_TIMEOUT(reconciliation.findChild<ActionResultDialog *>() != nullptr,
                                 10000);
        const ResultSet m = q("SELECT status, resolution, resolved_by FROM"
                              " redrive.reconciliation_mismatch");
        QCOMPARE(m.text(0, 0), QStringLiteral("resolved"));
        QCOMPARE(m.text(0, 1), QStringLiteral("corrected_internal"));
        QCOMPARE(m.text(0, 2), m_support);
    }

    // An action acts only on the focused view: a dead letter still selected on the Dead letters
    // tab is no target while another tab is in front (a Compensate from the Reconciliation tab
    // once opened a refund for another customer's dead letter).
    void actionsNeverTargetASelectionOnAHiddenTab()
    {
        seed(2, QStringLiteral("payments"), QStringLiteral("ambiguous_timeout"));
        auto window = open(m_support, 2, QStringLiteral("redrive_support"));
        QVERIFY(window);
        DeadLetterActions *actions = window->actions();
        selectRows(*window, 0, 0);
        QVERIFY(actions->compensateAction()->isEnabled());
        QVERIFY(actions->resolveAction()->isEnabled());
        auto *tabs = window->findChild<QTabWidget *>();
        QVERIFY(tabs);
        QList<QPointer<QDialog>> shown;
        connect(actions, &DeadLetterActions::dialogShown, this, [&](QDialog *d) { shown << d; });
        for (int i = 1; i < tabs->count(); ++i) {
            tabs->setCurrentIndex(i);
            for (QAction *action : actions->actions()) {
                if (!action)
                    continue;
                QVERIFY2(!action->isEnabled(),
                         qPrintable(tabs->tabText(i) + QLatin1String(": ") + action->text()));
                action->trigger();
            }
            QCOMPARE(actions->compensateAction()->toolTip(),
                     tabs->widget(i)->inherits("redrive::ReconciliationWidget")
                         ? QStringLiteral("Request compensation… — acts on the Dead letters "
                                          "tab; for a mismatch use Request refund… on this tab")
                         : QStringLiteral("Request compensation… — acts on the Dead letters "
                                          "tab: switch to it first"));
        }
        QCoreApplication::processEvents();
        QCOMPARE(shown.size(), 0);
        tabs->setCurrentIndex(0);
        QVERIFY(actions->compensateAction()->isEnabled());
    }

    void supportRequestsACompensationCappedAtWhatWasCharged()
    {
        const QList<qint64> ids
            = seed(1, QStringLiteral("payments"), QStringLiteral("ambiguous_timeout"));
        auto window = open(m_support, 1, QStringLiteral("redrive_support"));
        QVERIFY(window);
        DeadLetterActions *actions = window->actions();
        selectRows(*window, 0, 0);
        QVERIFY(!actions->requeueAction()->isEnabled()); // support may not requeue
        QVERIFY(actions->requeueAction()->text().contains(QStringLiteral("redrive_oncall")));
        QVERIFY(actions->compensateAction()->isEnabled());
        QList<QPointer<QDialog>> shown;
        connect(actions, &DeadLetterActions::dialogShown, this, [&](QDialog *d) { shown << d; });
        actions->compensateAction()->trigger();
        auto *dialog = waitForDialog<CompensationRequestDialog>(shown);
        QVERIFY(dialog);
        QTRY_VERIFY_WITH_TIMEOUT(dialog->amountEdit()->isEnabled(), 10000);
        // 5,000 charged − 1,000 refunded: the default, and the most it may be.
        QCOMPARE(dialog->amountEdit()->text(), QStringLiteral("40.00"));
        dialog->amountEdit()->lineEdit()->setText(QStringLiteral("99"));
        QCOMPARE(dialog->amountEdit()->text(), QStringLiteral("99")); // as typed, refused
        QCOMPARE(dialog->amountEdit()->value(), std::nullopt);
        QCOMPARE(dialog->amountEdit()->refusalText(),
                 QStringLiteral("Above what can still be refunded: at most 40.00 USD."));
        dialog->amountEdit()->lineEdit()->setText(QStringLiteral("25.5"));
        QCOMPARE(dialog->amountEdit()->value(), std::optional<qint64>(2550));
        QVERIFY(!dialog->confirmButton()->isEnabled());
        dialog->reasonEdit()->setText(QStringLiteral("customer charged twice, SUP-12"));
        QVERIFY(dialog->confirmButton()->isEnabled());
        dialog->grab().save(outputPath(QStringLiteral("actions_compensation_request.png")));
        QTest::mouseClick(dialog->confirmButton(), Qt::LeftButton);
        auto *result = waitForDialog<ActionResultDialog>(shown);
        QVERIFY(result);
        const ResultSet c = q("SELECT amount_minor, kind, requested_by, target_id::bigint"
                              "  FROM redrive.compensation_request");
        QCOMPARE(c.rowCount(), 1);
        QCOMPARE(c.bigInt(0, 0).value_or(0), 2550);
        QCOMPARE(c.text(0, 1), QStringLiteral("refund"));
        QCOMPARE(c.text(0, 2), m_support);
        QCOMPARE(c.bigInt(0, 3).value_or(0), ids.first());
    }
};

QTEST_MAIN(TestDeadLetterActions)
#include "tst_dead_letter_actions.moc"
