// SPDX-License-Identifier: GPL-3.0-or-later
// The right target and the right amount, from every entry point that asks for a compensation
// (docs/domain.md#the-right-target), as real logins over TCP with a password. With dead letter A
// selected on the Dead letters tab and mismatch C selected on the Reconciliation tab, each entry
// point acts only on what is in front of the operator: the toolbar, the Actions menu and the
// Ctrl+P shortcut do nothing for A while Reconciliation is in front; the Reconciliation tab's
// "Request refund…" refunds exactly C's duplicate charge; back on Dead letters, Compensate acts on
// A; a case view acts on its own dead letter B; the Compensations tab's approval acts on the
// request selected there. Each dialog's first line names the target (payment, order, customer,
// amount in its currency) and the row the database wrote is checked. Amounts per currency: JPY
// (0 decimals), USD (2), KWD (3). Other roles cannot request a refund from a mismatch.
#include "models/compensation_model.h"
#include "models/db/database_session.h"
#include "models/db/sql_statement.h"
#include "models/dead_letter_model.h"
#include "models/mismatch_model.h"
#include "tests/support/test_database.h"
#include "views/action_result_dialog.h"
#include "views/case_view.h"
#include "views/compensation_decision_dialog.h"
#include "views/compensation_request_dialog.h"
#include "views/compensation_widget.h"
#include "views/dead_letter_actions.h"
#include "views/dead_letter_tab.h"
#include "views/main_window.h"
#include "views/money_edit.h"
#include "views/reconciliation_widget.h"
#include "views/result_table_view.h"

#include <QAction>
#include <QApplication>
#include <QDir>
#include <QLineEdit>
#include <QPointer>
#include <QPushButton>
#include <QTabWidget>
#include <QTableView>
#include <QTest>
#include <QToolBar>
#include <QUuid>
#include <memory>

using namespace redrive;
using namespace redrive::db;

namespace {

const QString kPassword = QStringLiteral("targets-pw-7");

QString outputPath(const QString &name)
{
    QDir().mkpath(QStringLiteral(REDRIVE_TEST_OUTPUT_DIR));
    return QStringLiteral(REDRIVE_TEST_OUTPUT_DIR) + QLatin1Char('/') + name;
}

template<typename T>
T *waitForDialog(QList<QPointer<QDialog>> &shown, int ms = 10000)
{
    for (int waited = 0; waited < ms; waited += 50) {
        for (qsizetype k = 0; k < shown.size(); ++k)
            if (auto *typed = qobject_cast<T *>(shown.at(k).data())) {
                shown.removeAt(k);
                return typed;
            }
        QTest::qWait(50);
    }
    return nullptr;
}

// Every compensation request dialog open anywhere.
QList<CompensationRequestDialog *> openRequestDialogs()
{
    QList<CompensationRequestDialog *> out;
    for (QWidget *w : QApplication::topLevelWidgets())
        if (auto *d = qobject_cast<CompensationRequestDialog *>(w); d && d->isVisible())
            out << d;
    return out;
}

} // namespace

class TestCompensationTargets : public QObject
{
    Q_OBJECT
private:
    std::unique_ptr<test::TestDatabase> m_db;
    PgConnection m_admin;
    QString m_support, m_approver, m_oncall, m_worker, m_nobody, m_owner;
    qint64 m_dlAlice = 0, m_dlBob = 0, m_dlCarol = 0, m_dup = 0, m_diff = 0;

    ResultSet q(const QByteArray &sql, const QueryParams &params = {})
    {
        auto r = m_admin.exec(sql, params);
        if (!r)
            qFatal("%s: %s", sql.constData(), qPrintable(r.error().summary()));
        return r.value();
    }
    PgConnection tcp(const QString &login)
    {
        return test::TestDatabase::connectWith(m_db->tcpSettingsAs(login, kPassword));
    }
    qint64 deadLetter(const QString &payment, const QString &order, const QString &customer)
    {
        return q("WITH j AS (INSERT INTO redrive.job (queue, kind, payload, state, entity_id)"
                 "           VALUES ('payments', 'charge_card',"
                 "                   jsonb_build_object('payment_id', $1::text, 'order_id', "
                 "$2::text,"
                 "                                      'customer', $3::text),"
                 "                   'dead', $1) RETURNING id, queue, kind)"
                 " INSERT INTO redrive.dead_letter (job_id, queue, kind, error_class, error_code,"
                 "                                  last_error, attempts)"
                 " SELECT id, queue, kind, 'ambiguous', 'timeout_after_send',"
                 "        'read timeout after the charge request was sent', 3 FROM j RETURNING id",
                 QueryParams().addText(payment).addText(order).addText(customer))
            .bigInt(0, 0)
            .value_or(0);
    }
    // The request a target got: target type and id, payment, charge, amount, currency, status.
    QStringList requestFor(const QString &type, qint64 id)
    {
        const ResultSet r = q("SELECT target_type, target_id::text, payment_ref,"
                              "       coalesce(charge_ref, ''), amount_minor::text, currency,"
                              "       status, requested_by"
                              "  FROM redrive.compensation_request"
                              " WHERE target_type = $1 AND target_id = $2",
                              QueryParams().addText(type).addBigInt(id));
        if (r.rowCount() != 1)
            return { QStringLiteral("%1 rows").arg(r.rowCount()) };
        QStringList out;
        for (int c = 0; c < 8; ++c)
            out << r.text(0, c);
        return out;
    }
    qint64 requestCount()
    {
        return q("SELECT count(*) FROM redrive.compensation_request").bigInt(0, 0).value_or(-1);
    }

    std::unique_ptr<MainWindow> open(const QString &login, const QString &role)
    {
        auto window = std::make_unique<MainWindow>();
        window->setPromptsAllowed(false);
        window->resize(1400, 850);
        window->show();
        window->connectTo(m_db->consoleTcpSettingsAs(login, kPassword));
        if (!QTest::qWaitFor([&] { return window->schemaReady(); }, 15000))
            return nullptr;
        if (!QTest::qWaitFor([&] { return window->deadLetterModel()->total() >= 1; }, 15000))
            return nullptr;
        if (!QTest::qWaitFor([&] { return window->redriveRoles().contains(role); }, 15000))
            return nullptr;
        return window;
    }
    // Selects dead letter `id` on the Dead letters tab once it is listed; false if it is not.
    static bool selectDeadLetter(MainWindow &window, qint64 id)
    {
        DeadLetterModel *model = window.deadLetterModel();
        const auto rowOf = [&] {
            for (int row = 0; row < model->rowCount(); ++row)
                if (model->idAt(row) == id)
                    return row;
            return -1;
        };
        if (!QTest::qWaitFor([&] { return !model->isLoading() && rowOf() >= 0; }, 15000))
            return false;
        window.deadLetterView()->selectRow(rowOf());
        return window.deadLetterTab()->selection().ids == QList<qint64>({ id });
    }
    static bool selectMismatch(ReconciliationWidget &recon, qint64 id)
    {
        if (!QTest::qWaitFor(
                [&] { return !recon.isLoading() && recon.mismatchModel()->rowCount() >= 2; },
                15000))
            return false;
        for (int row = 0; row < recon.mismatchModel()->rowCount(); ++row)
            if (recon.mismatchModel()->idAt(row) == id) {
                recon.selectMismatch(row);
                return true;
            }
        return false;
    }
    static bool loaded(CompensationRequestDialog *dialog)
    {
        return dialog
            && QTest::qWaitFor(
                   [&] {
                       return dialog->isLoaded()
                           && !dialog->otherCompensationsText().startsWith(
                               QStringLiteral("Loading"));
                   },
                   15000);
    }
    static void retype(MoneyEdit *edit, const QString &text)
    {
        edit->lineEdit()->selectAll();
        QTest::keyClick(edit->lineEdit(), Qt::Key_Delete);
        QTest::keyClicks(edit->lineEdit(), text);
    }
    void setThreshold(const QString &currency, qint64 minor)
    {
        PgConnection owner = tcp(m_owner);
        auto r = owner.exec(
            "SELECT redrive.change_approval_threshold($1, $2, $3,"
            " 'thresholds for the target tests')",
            QueryParams().addUuid(QUuid::createUuid()).addText(currency).addBigInt(minor));
        if (!r)
            qFatal("threshold: %s", qPrintable(r.error().summary()));
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_db = std::make_unique<test::TestDatabase>(QStringLiteral("compensation_targets"));
        QVERIFY2(m_db->isValid(), qPrintable(m_db->error()));
        m_admin = m_db->connect();
        m_support = m_db->createLogin(QStringLiteral("tina_support"),
                                      { QStringLiteral("redrive_support") }, kPassword);
        m_approver = m_db->createLogin(QStringLiteral("abe_approver"),
                                       { QStringLiteral("redrive_approver") }, kPassword);
        m_oncall = m_db->createLogin(QStringLiteral("oscar_oncall"),
                                     { QStringLiteral("redrive_oncall") }, kPassword);
        m_worker = m_db->createLogin(QStringLiteral("wes_worker"),
                                     { QStringLiteral("redrive_worker") }, kPassword);
        m_nobody = m_db->createLogin(QStringLiteral("nora_nobody"), {}, kPassword);
        m_owner = m_db->createLogin(QStringLiteral("olga_owner"),
                                    { QStringLiteral("redrive_admin") }, kPassword);
        // Four payments in three currencies; pay_carol was charged twice (ch_carol_dup).
        q("CREATE TABLE public.test_charge (payment_ref text, charge_ref text, charged bigint,"
          " currency text, charged_at timestamptz, is_primary boolean)");
        q("INSERT INTO public.test_charge VALUES"
          " ('pay_alice', 'ch_alice', 5000, 'USD', '2026-11-30 09:00:00+00', true),"
          " ('pay_bob', 'ch_bob', 1500, 'JPY', '2026-11-30 09:05:00+00', true),"
          " ('pay_carol', 'ch_carol', 12500, 'KWD', '2026-11-30 10:00:00+00', true),"
          " ('pay_carol', 'ch_carol_dup', 12500, 'KWD', '2026-11-30 10:00:07+00', false),"
          " ('pay_dave', 'ch_dave', 1250, 'USD', '2026-11-30 11:00:00+00', true)");
        q("CREATE OR REPLACE VIEW redrive.payment_list AS"
          " SELECT payment_ref, charge_ref, charged AS charged_cents, 0::bigint AS refunded_cents,"
          "        currency FROM public.test_charge WHERE is_primary");
        q("CREATE OR REPLACE VIEW redrive.payment_charge_list AS"
          " SELECT payment_ref, charge_ref, charged AS charged_minor, 0::bigint AS refunded_minor,"
          "        currency, charged_at, is_primary FROM public.test_charge");
        m_dlAlice = deadLetter(QStringLiteral("pay_alice"), QStringLiteral("ord_alice"),
                               QStringLiteral("Alice Adams"));
        m_dlBob = deadLetter(QStringLiteral("pay_bob"), QStringLiteral("ord_bob"),
                             QStringLiteral("Bob Brown"));
        m_dlCarol = deadLetter(QStringLiteral("pay_carol"), QStringLiteral("ord_carol"),
                               QStringLiteral("Carol Chen"));
        const qint64 run = q("INSERT INTO redrive.reconciliation_run (provider, started_at,"
                             " finished_at, status, checked_count, mismatch_count)"
                             " VALUES ('stripe', now(), now(), 'succeeded', 4, 2) RETURNING id")
                               .bigInt(0, 0)
                               .value_or(0);
        m_dup = q("INSERT INTO redrive.reconciliation_mismatch (run_id, kind, payment_ref,"
                  " order_ref, internal_amount_minor, external_amount_minor, internal_currency,"
                  " external_currency, internal_status, external_status, internal_charge_ref,"
                  " external_charge_ref, detected_at)"
                  " VALUES ($1, 'duplicate_external', 'pay_carol', 'ord_carol', 12500, 12500,"
                  " 'KWD', 'KWD', 'succeeded', 'succeeded', 'ch_carol', 'ch_carol_dup',"
                  " now() - interval '1 minute') RETURNING id",
                  QueryParams().addBigInt(run))
                    .bigInt(0, 0)
                    .value_or(0);
        m_diff = q("INSERT INTO redrive.reconciliation_mismatch (run_id, kind, payment_ref,"
                   " order_ref, internal_amount_minor, external_amount_minor, internal_currency,"
                   " external_currency, internal_status, external_status, internal_charge_ref,"
                   " external_charge_ref)"
                   " VALUES ($1, 'amount_mismatch', 'pay_dave', 'ord_dave', 1000, 1250, 'USD',"
                   " 'USD', 'succeeded', 'succeeded', 'ch_dave', 'ch_dave') RETURNING id",
                   QueryParams().addBigInt(run))
                     .bigInt(0, 0)
                     .value_or(0);
        setThreshold(QStringLiteral("USD"), 20000); // 200.00 USD
        setThreshold(QStringLiteral("JPY"), 10000); // 10,000 JPY
        setThreshold(QStringLiteral("KWD"), 10000); // 10.000 KWD
    }
    void cleanupTestCase()
    {
        m_admin = PgConnection();
        m_db.reset();
    }

    // One walk through every entry point, in order: each request changes what the next sees.
    void everyEntryPointActsOnTheFocusedViewOnly()
    {
        auto window = open(m_support, QStringLiteral("redrive_support"));
        QVERIFY(window);
        auto *tabs = window->findChild<QTabWidget *>();
        auto *recon = window->findChild<ReconciliationWidget *>();
        QVERIFY(tabs && recon);
        DeadLetterActions *actions = window->actions();
        QList<QPointer<QDialog>> shown;
        connect(actions, &DeadLetterActions::dialogShown, this, [&](QDialog *d) { shown << d; });
        connect(recon, &ReconciliationWidget::dialogShown, this, [&](QDialog *d) { shown << d; });

        // A on Dead letters, C on Reconciliation, Reconciliation in front.
        QVERIFY(selectDeadLetter(*window, m_dlAlice));
        QVERIFY(actions->compensateAction()->isEnabled());
        tabs->setCurrentWidget(recon);
        QVERIFY(selectMismatch(*recon, m_dup));

        // 1. Toolbar, Actions menu and Ctrl+P: nothing for A while Reconciliation is in front.
        QVERIFY(!actions->compensateAction()->isEnabled());
        QCOMPARE(actions->compensateAction()->toolTip(),
                 QStringLiteral("Request compensation… — acts on the Dead letters tab; for a "
                                "mismatch use Request refund… on this tab"));
        actions->compensateAction()->setEnabled(true); // as if its state were stale
        actions->compensateAction()->trigger();
        auto *toolBar = window->findChild<QToolBar *>(QStringLiteral("actionsToolBar"));
        QVERIFY(toolBar && toolBar->actions().contains(actions->compensateAction()));
        QTest::keyClick(window.get(), Qt::Key_P, Qt::ControlModifier);
        QTest::qWait(300);
        QCOMPARE(shown.size(), 0);
        QCOMPARE(openRequestDialogs().size(), 0);
        actions->updateEnabled();

        // 2. Reconciliation's Request refund…: exactly C's duplicate charge.
        QVERIFY(recon->refundMismatchAction()->isEnabled());
        QVERIFY(recon->findChild<ResultTableView *>(QStringLiteral("mismatches"))
                    ->actions()
                    .contains(recon->refundMismatchAction())); // its context menu
        recon->refundMismatchAction()->trigger();
        auto *dup = waitForDialog<CompensationRequestDialog>(shown);
        QVERIFY(loaded(dup));
        QCOMPARE(dup->target(), CompensationTarget::mismatch(m_dup));
        QCOMPARE(dup->targetText(),
                 QStringLiteral("Mismatch %1 (duplicate_external) · payment pay_carol · order "
                                "ord_carol · customer Carol Chen · duplicate charge 12.500 KWD")
                     .arg(m_dup));
        const QStringList charges = dup->chargesText().split(QLatin1Char('\n'));
        QCOMPARE(charges.value(0),
                 QStringLiteral("\tCharge our ledger recorded\tDuplicate charge (refunded)"));
        QCOMPARE(charges.value(1), QStringLiteral("Provider charge id\tch_carol\tch_carol_dup"));
        QVERIFY2(charges.value(2).startsWith(QStringLiteral("Charged at\t2026-11-30 ")),
                 qPrintable(charges.value(2)));
        QCOMPARE(charges.value(3), QStringLiteral("Amount\t12.500 KWD\t12.500 KWD"));
        QCOMPARE(dup->amountEdit()->text(), QStringLiteral("12.500")); // the duplicate, not more
        QCOMPARE(dup->currency(), QStringLiteral("KWD"));
        QCOMPARE(dup->approvalText(),
                 QStringLiteral("Approval threshold for KWD: 10.000 KWD. Open and executed "
                                "compensations on this payment: 0.000 KWD; with this one 12.500 "
                                "KWD, at or above the threshold: it waits for approval by a "
                                "different person (an approver who is not you)."));
        QCOMPARE(dup->otherCompensationsText(), QStringLiteral("no other compensation"));
        dup->grab().save(outputPath(QStringLiteral("targets_duplicate_request.png")));
        retype(dup->amountEdit(), QStringLiteral("12.5001"));
        QCOMPARE(dup->amountEdit()->refusalText(),
                 QStringLiteral("KWD has 3 decimal places: \"12.5001\" has more."));
        retype(dup->amountEdit(), QStringLiteral("25"));
        QCOMPARE(dup->amountEdit()->text(), QStringLiteral("25"));
        QCOMPARE(dup->amountEdit()->refusalText(),
                 QStringLiteral("Above what can still be refunded: at most 12.500 KWD."));
        dup->reasonEdit()->setText(QStringLiteral("customer charged twice, SUP-31"));
        QVERIFY(!dup->confirmButton()->isEnabled());
        retype(dup->amountEdit(), QStringLiteral("12.500"));
        QVERIFY(dup->confirmButton()->isEnabled());
        QTest::mouseClick(dup->confirmButton(), Qt::LeftButton);
        QVERIFY(waitForDialog<ActionResultDialog>(shown));
        QCOMPARE(requestFor(QStringLiteral("mismatch"), m_dup),
                 QStringList({ QStringLiteral("mismatch"), QString::number(m_dup),
                               QStringLiteral("pay_carol"), QStringLiteral("ch_carol_dup"),
                               QStringLiteral("12500"), QStringLiteral("KWD"),
                               QStringLiteral("pending_approval"), m_support }));
        QCOMPARE(requestCount(), 1); // nothing for A

        // 3. The amount mismatch: the difference, never the full charge.
        QVERIFY(selectMismatch(*recon, m_diff));
        recon->refundMismatchAction()->trigger();
        auto *diff = waitForDialog<CompensationRequestDialog>(shown);
        QVERIFY(loaded(diff));
        QCOMPARE(diff->targetText(),
                 QStringLiteral("Mismatch %1 (amount_mismatch) · payment pay_dave · order "
                                "ord_dave · customer unknown · difference 2.50 USD")
                     .arg(m_diff));
        QCOMPARE(diff->amountEdit()->text(), QStringLiteral("2.50"));
        diff->reasonEdit()->setText(QStringLiteral("provider charged 2.50 too much"));
        QTest::mouseClick(diff->confirmButton(), Qt::LeftButton);
        QVERIFY(waitForDialog<ActionResultDialog>(shown));
        QCOMPARE(requestFor(QStringLiteral("mismatch"), m_diff),
                 QStringList({ QStringLiteral("mismatch"), QString::number(m_diff),
                               QStringLiteral("pay_dave"), QStringLiteral("ch_dave"),
                               QStringLiteral("250"), QStringLiteral("USD"),
                               QStringLiteral("approved"), m_support }));

        // 4. Back on Dead letters, with C selected on Reconciliation: A.
        QVERIFY(selectMismatch(*recon, m_dup)); // the list was refreshed after the request
        tabs->setCurrentIndex(0);
        QVERIFY(QTest::qWaitFor([&] { return !window->deadLetterModel()->isLoading(); }, 15000));
        QVERIFY(selectDeadLetter(*window, m_dlAlice)); // the list was refreshed after a request
        QVERIFY(actions->compensateAction()->isEnabled());
        actions->compensateAction()->trigger();
        auto *alice = waitForDialog<CompensationRequestDialog>(shown);
        QVERIFY(loaded(alice));
        QCOMPARE(alice->target(), CompensationTarget::deadLetter(m_dlAlice));
        QCOMPARE(alice->targetText(),
                 QStringLiteral("Dead letter %1 · payment pay_alice · order ord_alice · customer "
                                "Alice Adams · charged 50.00 USD")
                     .arg(m_dlAlice));
        QCOMPARE(alice->amountEdit()->text(), QStringLiteral("50.00"));
        retype(alice->amountEdit(), QStringLiteral("200"));
        QCOMPARE(alice->amountEdit()->text(), QStringLiteral("200")); // never "20"
        QCOMPARE(alice->amountEdit()->refusalText(),
                 QStringLiteral("Above what can still be refunded: at most 50.00 USD."));
        retype(alice->amountEdit(), QStringLiteral("12.34"));
        QCOMPARE(alice->approvalText(),
                 QStringLiteral("Approval threshold for USD: 200.00 USD. Open and executed "
                                "compensations on this payment: 0.00 USD; with this one 12.34 "
                                "USD, below the threshold: the worker executes it without "
                                "approval."));
        alice->reasonEdit()->setText(QStringLiteral("order failed after the charge"));
        alice->grab().save(outputPath(QStringLiteral("targets_usd_request.png")));
        QTest::mouseClick(alice->confirmButton(), Qt::LeftButton);
        QVERIFY(waitForDialog<ActionResultDialog>(shown));
        QCOMPARE(requestFor(QStringLiteral("dead_letter"), m_dlAlice),
                 QStringList({ QStringLiteral("dead_letter"), QString::number(m_dlAlice),
                               QStringLiteral("pay_alice"), QStringLiteral("ch_alice"),
                               QStringLiteral("1234"), QStringLiteral("USD"),
                               QStringLiteral("approved"), m_support }));

        // 5. A case view acts on its own dead letter (B), whatever the main window selects
        //    (Carol's: Alice's is no longer open, so no longer listed).
        QVERIFY(selectDeadLetter(*window, m_dlCarol));
        CaseView *caseView = window->openCase(m_dlBob);
        QVERIFY(caseView);
        auto *caseActions = caseView->findChild<DeadLetterActions *>();
        QVERIFY(caseActions);
        QVERIFY(caseView->actionsToolBar()->actions().contains(caseActions->compensateAction()));
        connect(caseActions, &DeadLetterActions::dialogShown, this,
                [&](QDialog *d) { shown << d; });
        caseActions->compensateAction()->trigger();
        auto *bob = waitForDialog<CompensationRequestDialog>(shown);
        QVERIFY(loaded(bob));
        QCOMPARE(bob->target(), CompensationTarget::deadLetter(m_dlBob));
        QCOMPARE(bob->targetText(),
                 QStringLiteral("Dead letter %1 · payment pay_bob · order ord_bob · customer Bob "
                                "Brown · charged 1,500 JPY")
                     .arg(m_dlBob));
        QCOMPARE(bob->amountEdit()->text(), QStringLiteral("1,500"));
        retype(bob->amountEdit(), QStringLiteral("15.00"));
        QCOMPARE(bob->amountEdit()->refusalText(),
                 QStringLiteral("JPY has no minor unit: type whole JPY, without a decimal "
                                "point."));
        retype(bob->amountEdit(), QStringLiteral("1500"));
        bob->reasonEdit()->setText(QStringLiteral("customer cancelled"));
        bob->grab().save(outputPath(QStringLiteral("targets_jpy_request.png")));
        QTest::mouseClick(bob->confirmButton(), Qt::LeftButton);
        QVERIFY(waitForDialog<ActionResultDialog>(shown));
        QCOMPARE(requestFor(QStringLiteral("dead_letter"), m_dlBob),
                 QStringList({ QStringLiteral("dead_letter"), QString::number(m_dlBob),
                               QStringLiteral("pay_bob"), QStringLiteral("ch_bob"),
                               QStringLiteral("1500"), QStringLiteral("JPY"),
                               QStringLiteral("approved"), m_support }));
        caseView->close();
        QCOMPARE(requestCount(), 4);
    }

    // The approval dialog acts on the request selected on the Compensations tab, names it in its
    // first line with its payment's order and customer, shows the KWD threshold and the payment's
    // other compensations, and the approval the database writes is for that request.
    void approvalActsOnTheSelectedRequest()
    {
        auto window = open(m_approver, QStringLiteral("redrive_approver"));
        QVERIFY(window);
        auto *tabs = window->findChild<QTabWidget *>();
        auto *comp = window->findChild<CompensationWidget *>();
        QVERIFY(tabs && comp);
        QVERIFY(selectDeadLetter(*window, m_dlCarol));
        tabs->setCurrentWidget(comp);
        comp->reload();
        QVERIFY(QTest::qWaitFor(
            [&] { return !comp->isLoading() && comp->model()->rowCount() == 4; }, 15000));
        const qint64 carolRequest
            = q("SELECT id FROM redrive.compensation_request WHERE payment_ref = 'pay_carol'")
                  .bigInt(0, 0)
                  .value_or(0);
        comp->selectRequest(comp->model()->rowOfRequest(carolRequest));
        CompensationDecisionDialog *dialog = comp->openDecisionDialog(true);
        QVERIFY(dialog);
        QVERIFY(QTest::qWaitFor([&] { return !dialog->isBusy(); }, 15000));
        QCOMPARE(dialog->request().id, carolRequest);
        QCOMPARE(dialog->targetText(),
                 QStringLiteral("Request %1 for mismatch %2 (duplicate_external) · payment "
                                "pay_carol · order ord_carol · customer Carol Chen · refund "
                                "12.500 KWD")
                     .arg(carolRequest)
                     .arg(m_dup));
        QCOMPARE(dialog->approvalText(),
                 QStringLiteral("Approval threshold for KWD: 10.000 KWD. Open and executed "
                                "compensations on this payment, this one included: 12.500 KWD. "
                                "Refunds provider charge ch_carol_dup."));
        QCOMPARE(dialog->otherCompensationsText(),
                 QStringLiteral("Other compensations on payment pay_carol: none"));
        dialog->setReason(QStringLiteral("two charges seven seconds apart at the provider"));
        dialog->grab().save(outputPath(QStringLiteral("targets_kwd_approval.png")));
        dialog->decide();
        QVERIFY(QTest::qWaitFor([&] { return dialog->isFinished(); }, 15000));
        const ResultSet a = q("SELECT request_id, decided_by, decision FROM"
                              " redrive.compensation_approval");
        QCOMPARE(a.rowCount(), 1);
        QCOMPARE(a.bigInt(0, 0).value_or(0), carolRequest);
        QCOMPARE(a.text(0, 1), m_approver);
        QCOMPARE(a.text(0, 2), QStringLiteral("approved"));
        dialog->close();
    }

    // Requesting a refund from a mismatch is support's alone: the console's statement, sent by
    // on-call, the worker, an approver and a login with no Redrive role over TCP, is refused and
    // writes nothing.
    void otherRolesCannotRefundFromAMismatch()
    {
        const qint64 before = requestCount();
        const int version = q("SELECT version FROM redrive.reconciliation_mismatch WHERE id = $1",
                              QueryParams().addBigInt(m_diff))
                                .integer(0, 0)
                                .value_or(0);
        for (const QString &login : { m_oncall, m_worker, m_approver, m_nobody }) {
            PgConnection c = test::TestDatabase::connectWith(
                m_db->consoleTcpSettingsAs(login, kPassword)); // as the console connects
            QVERIFY2(c.isOpen(), qPrintable(login));
            // The console's statement, and the function called by its full name (a login with
            // no Redrive role cannot even see the unqualified name: no USAGE on the schema).
            for (const QByteArray &sql :
                 { statementSql(Statement::ActionRequestMismatchCompensation),
                   QByteArray("SELECT redrive.request_mismatch_compensation($1::uuid, $2::bigint,"
                              " $3::integer, $4::bigint, $5::text, $6::text, $7::text)") }) {
                if (login == m_nobody && !sql.contains("redrive."))
                    continue;
                auto r = c.exec(sql,
                                QueryParams()
                                    .addUuid(QUuid::createUuid())
                                    .addBigInt(m_diff)
                                    .addInt(version)
                                    .addBigInt(1)
                                    .addText(QStringLiteral("refund it to myself"))
                                    .addText(QString())
                                    .addText(QStringLiteral("tester")));
                QVERIFY2(!r, qPrintable(login));
                QVERIFY2(r.error().sqlState() == QLatin1String("42501"),
                         qPrintable(login + QLatin1String(": ") + r.error().sqlState()
                                    + QLatin1Char(' ') + r.error().message()));
            }
        }
        QCOMPARE(requestCount(), before);
    }
};

QTEST_MAIN(TestCompensationTargets)
#include "tst_compensation_targets.moc"
