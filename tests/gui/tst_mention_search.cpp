// SPDX-License-Identifier: GPL-3.0-or-later
// The customer search in the console (docs/domain.md#finding-a-customer): Ctrl+K opens it, a
// search lists the hits grouped by kind with their counts, and each hit opens where it lives (a
// dead letter in its case view, a mismatch selected on the Reconciliation tab even when it is not
// on the first page, a compensation selected on the Compensations tab, an audit entry selected on
// the Audit log tab). The dead-letter list shows the payment and the amount charged in its
// currency. Rendered to PNG for a person to look at.
#include "models/audit_entry_model.h"
#include "models/compensation_model.h"
#include "models/db/database_session.h"
#include "models/db/schema_migrator.h"
#include "models/db/sql_statement.h"
#include "models/dead_letter_model.h"
#include "models/mention_search_model.h"
#include "models/mismatch_model.h"
#include "tests/support/test_database.h"
#include "views/audit_log_widget.h"
#include "views/case_view.h"
#include "views/compensation_widget.h"
#include "views/main_window.h"
#include "views/mention_search_dialog.h"
#include "views/reconciliation_widget.h"
#include "views/result_table_view.h"

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QFontMetrics>
#include <QLabel>
#include <QLineEdit>
#include <QTabWidget>
#include <QTableView>
#include <QTest>
#include <QUuid>

using namespace redrive;
using namespace redrive::db;

namespace {

QString outputPath(const QString &name)
{
    QDir().mkpath(QStringLiteral(REDRIVE_TEST_OUTPUT_DIR));
    return QStringLiteral(REDRIVE_TEST_OUTPUT_DIR) + QLatin1Char('/') + name;
}

// The simulated ledger knows pay_7001 (1,500 yen, charge ch_7001); 260 mismatches of one run
// come after the customer's, so it is not on the list's first page (200 rows).
const char kSeed[] = R"sql(
INSERT INTO sim.ledger_order (id, customer, email, amount_minor, currency, created_at)
VALUES ('ord_7001', 'Ana O''Neil', 'ana.oneil@example.com', 1500, 'JPY', now());
INSERT INTO sim.ledger_payment (id, order_id, amount_minor, currency, idempotency_key,
                                provider_charge_id, status, created_at, updated_at)
VALUES ('pay_7001', 'ord_7001', 1500, 'JPY', 'charge:pay_7001', 'ch_7001', 'succeeded', now(),
        now());
INSERT INTO sim.provider_charge (id, idempotency_key, payment_ref, amount_minor, currency,
                                 created_at)
VALUES ('ch_7001', 'charge:pay_7001', 'pay_7001', 1500, 'JPY', now());
WITH j AS (INSERT INTO redrive.job (queue, kind, payload, state, entity_id, idempotency_key)
           VALUES ('payments', 'charge_card',
                   '{"order_id": "ord_7001", "payment_id": "pay_7001"}', 'dead', 'pay_7001',
                   'charge:pay_7001')
           RETURNING id, queue, kind, idempotency_key)
INSERT INTO redrive.dead_letter (job_id, queue, kind, error_class, error_code, last_error,
                                 idempotency_key, dead_at)
SELECT id, queue, kind, 'ambiguous', 'timeout', 'read timeout', idempotency_key,
       now() - interval '1 hour' FROM j;
INSERT INTO redrive.reconciliation_run (provider) VALUES ('test');
INSERT INTO redrive.reconciliation_mismatch (run_id, kind, payment_ref, order_ref,
       internal_amount_minor, external_amount_minor, internal_currency, external_currency,
       detected_at)
SELECT max(id), 'amount_mismatch', 'pay_7001', 'ord_7001', 1500, 1800, 'JPY', 'JPY',
       now() - interval '2 days'
  FROM redrive.reconciliation_run;
INSERT INTO redrive.reconciliation_mismatch (run_id, kind, payment_ref, order_ref,
       internal_amount_minor, external_amount_minor, internal_currency, external_currency,
       detected_at)
SELECT (SELECT max(id) FROM redrive.reconciliation_run), 'status_mismatch', 'pay_' || 500000 + g,
       'ord_' || 100000 + g, 100, 100, 'USD', 'USD', now() - g * interval '1 minute'
  FROM generate_series(1, 260) g;
INSERT INTO redrive.compensation_request (target_type, target_id, kind, payment_ref,
       amount_minor, currency, status, requires_approval, requested_by, reason, action_id,
       charge_ref)
SELECT 'mismatch', m.id, 'refund', 'pay_7001', 300, 'JPY', 'pending_approval', true,
       'someone', 'overcharged by 300 yen', gen_random_uuid(), 'ch_7001'
  FROM redrive.reconciliation_mismatch m WHERE m.kind = 'amount_mismatch';
)sql";

QTableView *viewOf(QWidget *parent, const QAbstractItemModel *model)
{
    for (QTableView *view : parent->findChildren<QTableView *>())
        if (view->model() == model)
            return view;
    return nullptr;
}

} // namespace

class TestMentionSearch : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void findsAndOpensEveryKind()
    {
        test::TestDatabase db(QStringLiteral("mention_search"));
        QVERIFY(db.isValid());
        PgConnection admin = db.connect();
        QVERIFY(SchemaMigrator(admin, MigrationSet::simulatedWorld()).migrate());
        auto seeded = admin.execScript(kSeed);
        QVERIFY2(seeded, qPrintable(seeded ? QString() : seeded.error().summary()));
        const QString support
            = db.createLogin(QStringLiteral("ms_support"), { QStringLiteral("redrive_support") });
        // An audit entry that mentions the order: a note support wrote on the dead letter.
        PgConnection supportConn = db.connectAs(support);
        const qint64 deadLetter
            = admin.exec("SELECT id FROM redrive.dead_letter").value().bigInt(0, 0).value_or(0);
        auto note
            = supportConn.exec(statementSql(Statement::ActionNote),
                               QueryParams()
                                   .addText(QUuid::createUuid().toString(QUuid::WithoutBraces))
                                   .addText(QStringLiteral("dead_letter"))
                                   .addText(QString::number(deadLetter))
                                   .addText(QStringLiteral("Customer asked about ord_7001"))
                                   .addText(QStringLiteral("tester")));
        QVERIFY(note);
        const qint64 entry
            = admin.exec("SELECT max(id) FROM redrive.audit_log").value().bigInt(0, 0).value_or(0);
        const qint64 mismatch = admin
                                    .exec("SELECT id FROM redrive.reconciliation_mismatch"
                                          " WHERE order_ref = 'ord_7001'")
                                    .value()
                                    .bigInt(0, 0)
                                    .value_or(0);
        const qint64 compensation = admin.exec("SELECT id FROM redrive.compensation_request")
                                        .value()
                                        .bigInt(0, 0)
                                        .value_or(0);

        MainWindow window;
        window.setPromptsAllowed(false);
        window.resize(1400, 860);
        window.show();
        window.connectTo(db.consoleSettingsAs(support));
        QTRY_VERIFY_WITH_TIMEOUT(window.schemaReady(), 10000);
        QTRY_VERIFY_WITH_TIMEOUT(window.deadLetterModel()->rowCount() == 1, 10000);

        // The dead-letter list names the payment and what it charged, in yen (no decimals).
        DeadLetterModel *list = window.deadLetterModel();
        QCOMPARE(
            list->headerData(DeadLetterModel::column(QStringLiteral("payment_ref")), Qt::Horizontal)
                .toString(),
            QStringLiteral("Payment"));
        QCOMPARE(list->index(0, DeadLetterModel::column(QStringLiteral("payment_ref")))
                     .data()
                     .toString(),
                 QStringLiteral("pay_7001"));
        QCOMPARE(list->index(0, DeadLetterModel::column(QStringLiteral("amount_minor")))
                     .data()
                     .toString(),
                 QStringLiteral("1,500 JPY"));
        window.grab().save(outputPath(QStringLiteral("dead_letters_with_payment.png")));

        // Ctrl+K opens the search, focused on its box.
        auto *find = window.findChild<QAction *>(QStringLiteral("findCustomerAction"));
        QVERIFY(find);
        QCOMPARE(find->shortcut(), QKeySequence(Qt::CTRL | Qt::Key_K));
        find->trigger();
        auto *dialog = window.findChild<MentionSearchDialog *>();
        QVERIFY(dialog);
        QVERIFY(dialog->isVisible());

        // Too short: nothing is sent, and the dialog says why.
        dialog->search(QStringLiteral("or"));
        QVERIFY(dialog->statusText().contains(QStringLiteral("at least 3")));

        // A pasted 32,767-character term: the status line shows 80 characters of it and the
        // dialog keeps its width (it once grew 32,767 px wide); the server refuses the term.
        const int width = dialog->width();
        dialog->search(QString(32767, QLatin1Char('O')));
        QTRY_VERIFY_WITH_TIMEOUT(!dialog->model()->isLoading(), 10000);
        QTest::qWait(50);
        QCOMPARE(dialog->width(), width);
        for (const QLabel *label : dialog->findChildren<QLabel *>())
            QVERIFY2(label->text().count(QLatin1Char('O')) <= 80,
                     qPrintable(QString::number(label->text().size())));

        dialog->search(QStringLiteral("ORD_7001"));
        QTRY_VERIFY_WITH_TIMEOUT(!dialog->model()->isLoading() && dialog->model()->rowCount() > 0,
                                 10000);
        MentionSearchModel *hits = dialog->model();
        QCOMPARE(hits->rowCount(), 3);
        QCOMPARE(hits->kindAt(0), MentionSearchModel::Kind::DeadLetter);
        QCOMPARE(hits->idAt(0), deadLetter);
        QCOMPARE(hits->kindAt(1), MentionSearchModel::Kind::Mismatch);
        QCOMPARE(hits->idAt(1), mismatch);
        QCOMPARE(hits->kindAt(2), MentionSearchModel::Kind::AuditEntry);
        QCOMPARE(hits->idAt(2), entry);
        QCOMPARE(dialog->statusText(),
                 QStringLiteral("“ORD_7001”: 1 dead letter · 1 mismatch · 0 compensations · 1 "
                                "audit entry"));
        QCOMPARE(hits->index(0, 0).data().toString(), QStringLiteral("Dead letter"));
        QCOMPARE(hits->index(1, 6).data().toString(), QStringLiteral("1,500 JPY"));
        dialog->grab().save(outputPath(QStringLiteral("mention_search.png")));

        // A mismatch opens selected on the Reconciliation tab, although 260 newer mismatches
        // put it past the first page.
        dialog->openRow(1);
        QCOMPARE(window.tabs()->currentWidget(), window.reconciliationTab());
        auto *mismatches
            = window.reconciliationTab()->findChild<QTableView *>(QStringLiteral("mismatches"));
        QVERIFY(mismatches);
        MismatchModel *mm = window.reconciliationTab()->mismatchModel();
        QTRY_VERIFY_WITH_TIMEOUT(
            mismatches->selectionModel()->selectedRows().size() == 1
                && mm->idAt(mismatches->selectionModel()->selectedRows().first().row()) == mismatch,
            15000);
        QVERIFY(mm->rowCount() > MismatchModel::kPageSize);
        // Whole order and payment references are readable (the demo world's are this long).
        const QFontMetrics metrics(mismatches->font());
        QVERIFY(mismatches->columnWidth(MismatchModel::Order)
                > metrics.horizontalAdvance(QStringLiteral("ord_100254")) + 8);
        QVERIFY(mismatches->columnWidth(MismatchModel::Payment)
                > metrics.horizontalAdvance(QStringLiteral("pay_500254")) + 8);
        window.grab().save(outputPath(QStringLiteral("mention_search_reconciliation.png")));

        // An audit entry opens selected on the Audit log tab.
        dialog->openRow(2);
        QCOMPARE(window.tabs()->currentWidget(), window.auditTab());
        AuditEntryModel *entries = window.auditTab()->entryModel();
        QTableView *entryView = viewOf(window.auditTab(), entries);
        QVERIFY(entryView);
        QTRY_VERIFY_WITH_TIMEOUT(
            entryView->selectionModel()->selectedRows().size() == 1
                && entries->idAt(entryView->selectionModel()->selectedRows().first().row()) == entry
                && window.auditTab()->shownEntryId() == entry,
            10000);

        // A dead letter opens in its case view.
        dialog->openRow(0);
        CaseView *caseView = nullptr;
        for (CaseView *view : window.findChildren<CaseView *>())
            caseView = view;
        QVERIFY(caseView);
        QVERIFY(
            caseView->windowTitle().startsWith(QStringLiteral("Dead letter #%1").arg(deadLetter)));
        caseView->close();

        // A compensation (found by its payment) opens selected on the Compensations tab.
        dialog->search(QStringLiteral("pay_7001"));
        QTRY_VERIFY_WITH_TIMEOUT(!hits->isLoading()
                                     && hits->totalOf(MentionSearchModel::Kind::Compensation) == 1,
                                 10000);
        int row = -1;
        for (int r = 0; r < hits->rowCount(); ++r)
            if (hits->kindAt(r) == MentionSearchModel::Kind::Compensation)
                row = r;
        QVERIFY(row >= 0);
        QCOMPARE(hits->idAt(row), compensation);
        window.compensationsTab()->setPendingOnly(true);
        dialog->openRow(row);
        QCOMPARE(window.tabs()->currentWidget(), window.compensationsTab());
        QTRY_COMPARE_WITH_TIMEOUT(window.compensationsTab()->currentRequest().id, compensation,
                                  10000);
    }
};

QTEST_MAIN(TestMentionSearch)
#include "tst_mention_search.moc"
