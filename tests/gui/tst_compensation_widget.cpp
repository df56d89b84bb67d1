// SPDX-License-Identifier: GPL-3.0-or-later
// The compensation view on a real PostgreSQL with real login roles
// (docs/domain.md#compensation-goes-through-the-outbox-with-four-eyes): the list holds every
// request, those pending approval first; without redrive_approver the decide buttons are disabled
// and say which role they need; the requester (even holding the approver role) finds Approve
// disabled with the reason, and the database refuses the decision when it is sent anyway; a second
// approver's approval applies (status, approval row, outbox command and audit entry under the
// dialog's action id); a rejection opens the target again; a request decided by someone else
// meanwhile comes back "not applied". Renders the view and the dialog to PNGs for a look.
#include "models/compensation_model.h"
#include "models/db/database_session.h"
#include "models/db/sql_statement.h"
#include "models/dead_letter_case.h"
#include "tests/support/test_database.h"
#include "views/compensation_decision_dialog.h"
#include "views/compensation_widget.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QDir>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QSignalSpy>
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

class TestCompensationWidget : public QObject
{
    Q_OBJECT
private:
    std::unique_ptr<test::TestDatabase> m_db;
    PgConnection m_admin;
    QString m_bob, m_erin, m_carol;
    std::unique_ptr<DatabaseSession> m_bobSession, m_erinSession, m_carolSession;
    QList<qint64> m_deadLetters;
    qint64 m_mismatch = 0;
    qint64 m_a = 0, m_b = 0, m_c = 0, m_d = 0, m_m = 0; // requests

    ResultSet q(PgConnection &c, const QByteArray &sql, const QueryParams &params = {})
    {
        auto r = c.exec(sql, params);
        if (!r)
            qFatal("%s: %s", sql.constData(), qPrintable(r.error().summary()));
        return r.value();
    }
    PgConnection as(const QString &login) { return m_db->connectAs(login); }
    // Requests a compensation as `c`; returns the request id.
    qint64 request(PgConnection &c, const QString &type, qint64 target, qint64 cents,
                   const QString &reason)
    {
        const int version
            = q(m_admin,
                type == QLatin1String("dead_letter")
                    ? "SELECT version FROM redrive.dead_letter WHERE id = $1"
                    : "SELECT version FROM redrive.reconciliation_mismatch WHERE id = $1",
                QueryParams().addBigInt(target))
                  .integer(0, 0)
                  .value_or(0);
        const ResultSet r = q(c, statementSql(Statement::ActionRequestCompensation),
                              QueryParams()
                                  .addUuid(QUuid::createUuid())
                                  .addText(type)
                                  .addBigInt(target)
                                  .addInt(version)
                                  .addText(QStringLiteral("refund"))
                                  .addBigInt(cents)
                                  .addText(reason)
                                  .addText(QStringLiteral("SUP-%1").arg(target))
                                  .addText(QStringLiteral("tester")));
        return QJsonDocument::fromJson(r.raw(0, 0))
            .object()
            .value(QStringLiteral("compensation_id"))
            .toInteger();
    }
    QString statusOf(qint64 request)
    {
        return q(m_admin, "SELECT status FROM redrive.compensation_request WHERE id = $1",
                 QueryParams().addBigInt(request))
            .text(0, 0);
    }
    static int rowOf(const CompensationWidget &widget, qint64 id)
    {
        return widget.model()->rowOfRequest(id);
    }
    static bool loaded(CompensationWidget &widget)
    {
        widget.reload();
        return QTest::qWaitFor(
            [&] { return !widget.isLoading() && widget.model()->rowCount() > 0; }, 10000);
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_db = std::make_unique<test::TestDatabase>(QStringLiteral("compensation_widget"));
        QVERIFY2(m_db->isValid(), qPrintable(m_db->error()));
        m_admin = m_db->connect();
        const QString support = QStringLiteral("redrive_support");
        const QString approver = QStringLiteral("redrive_approver");
        m_bob = m_db->createLogin(QStringLiteral("bob_comp"), { support });
        m_erin = m_db->createLogin(QStringLiteral("erin_comp"), { support, approver });
        m_carol = m_db->createLogin(QStringLiteral("carol_comp"), { approver });
        // A payments ledger (every pay_* entity charged 50.00 USD) and a low approval threshold.
        q(m_admin,
          "CREATE OR REPLACE VIEW redrive.payment_list AS"
          " SELECT j.entity_id AS payment_ref, 'ch_' || j.entity_id AS charge_ref,"
          "        5000::bigint AS charged_cents, 0::bigint AS refunded_cents,"
          "        'USD'::text AS currency"
          "   FROM redrive.job j WHERE j.entity_id IS NOT NULL");
        // pay_cw5 was charged twice: a refund from its duplicate_external mismatch acts on the
        // second charge (docs/domain.md "Compensation from a mismatch").
        q(m_admin,
          "CREATE OR REPLACE VIEW redrive.payment_charge_list AS"
          " SELECT payment_ref, charge_ref, charged_cents AS charged_minor,"
          "        refunded_cents AS refunded_minor, currency, NULL::timestamptz AS charged_at,"
          "        true AS is_primary FROM redrive.payment_list"
          " UNION ALL SELECT 'pay_cw5', 'ch_pay_cw5_dup', 5000, 0, 'USD', NULL, false");
        q(m_admin, "UPDATE redrive.settings SET compensation_approval_minor = 1000");
        const ResultSet dl = q(m_admin, R"sql(
            WITH j AS (INSERT INTO redrive.job (queue, kind, payload, state, entity_id, attempt)
                       SELECT 'payments', 'charge_card', jsonb_build_object('n', g), 'dead',
                              'pay_cw' || g, 3 FROM generate_series(1, 5) g RETURNING id, queue, kind),
                 a AS (INSERT INTO redrive.attempt (job_id, attempt_no, started_at, finished_at,
                                                    outcome, error_class, error_code, message,
                                                    worker_id, backoff_ms)
                       SELECT j.id, n, now() - (4 - n) * interval '10 minutes',
                              now() - (4 - n) * interval '10 minutes' + interval '30 seconds',
                              'failed', CASE WHEN n = 3 THEN 'ambiguous' ELSE 'transient' END,
                              CASE WHEN n = 3 THEN 'timeout_after_send' ELSE 'provider_5xx' END,
                              CASE WHEN n = 3 THEN 'read timeout after the charge request was sent'
                                   ELSE '502 Bad Gateway' END,
                              'worker-1', CASE WHEN n < 3 THEN 60000 * n END
                         FROM j, generate_series(1, 3) n RETURNING 1)
            INSERT INTO redrive.dead_letter (job_id, queue, kind, error_class, error_code,
                                             last_error, attempts)
            SELECT id, queue, kind, 'ambiguous', 'timeout_after_send',
                   'read timeout after the charge request was sent', 3 FROM j ORDER BY id
            RETURNING id)sql");
        for (int i = 0; i < dl.rowCount(); ++i)
            m_deadLetters << dl.bigInt(i, 0).value_or(0);
        std::sort(m_deadLetters.begin(), m_deadLetters.end());
        const qint64 run = q(m_admin,
                             "INSERT INTO redrive.reconciliation_run (provider, started_at,"
                             " finished_at, status, checked_count, mismatch_count)"
                             " VALUES ('stripe', now(), now(), 'succeeded', 10, 1)"
                             " RETURNING id")
                               .bigInt(0, 0)
                               .value_or(0);
        m_mismatch = q(m_admin,
                       "INSERT INTO redrive.reconciliation_mismatch (run_id, kind,"
                       " payment_ref, order_ref, internal_amount_minor, external_amount_minor,"
                       " internal_currency, external_currency, internal_status, external_status,"
                       " internal_charge_ref, external_charge_ref)"
                       " VALUES ($1, 'duplicate_external', 'pay_cw5', 'ord_5', 5000, 10000,"
                       " 'USD', 'USD', 'succeeded', 'succeeded', 'ch_pay_cw5', 'ch_pay_cw5_dup')"
                       " RETURNING id",
                       QueryParams().addBigInt(run))
                         .bigInt(0, 0)
                         .value_or(0);

        PgConnection bob = as(m_bob);
        PgConnection erin = as(m_erin);
        m_a = request(bob, QStringLiteral("dead_letter"), m_deadLetters[0], 2500,
                      QStringLiteral("Charged although the order failed; refund it"));
        m_b = request(erin, QStringLiteral("dead_letter"), m_deadLetters[1], 3000,
                      QStringLiteral("Customer cancelled within the hour"));
        m_c = request(bob, QStringLiteral("dead_letter"), m_deadLetters[2], 500,
                      QStringLiteral("Shipping fee refunded as a goodwill gesture"));
        m_d = request(bob, QStringLiteral("dead_letter"), m_deadLetters[3], 2000,
                      QStringLiteral("Partial refund agreed on the phone"));
        m_m = request(bob, QStringLiteral("mismatch"), m_mismatch, 5000,
                      QStringLiteral("Provider charged twice: refund the duplicate"));
        QVERIFY(m_a > 0 && m_b > 0 && m_c > 0 && m_d > 0 && m_m > 0);
        QCOMPARE(statusOf(m_a), QStringLiteral("pending_approval"));
        QCOMPARE(statusOf(m_c), QStringLiteral("approved")); // below the threshold

        m_bobSession = m_db->openSession(m_db->consoleSettingsAs(m_bob));
        QVERIFY2(m_bobSession, qPrintable(m_db->error()));
        m_erinSession = m_db->openSession(m_db->consoleSettingsAs(m_erin));
        QVERIFY2(m_erinSession, qPrintable(m_db->error()));
        m_carolSession = m_db->openSession(m_db->consoleSettingsAs(m_carol));
        QVERIFY2(m_carolSession, qPrintable(m_db->error()));
    }
    void cleanupTestCase()
    {
        m_bobSession.reset();
        m_erinSession.reset();
        m_carolSession.reset();
        m_admin = PgConnection();
        m_db.reset(); // drops the database, then the logins
    }

    void listsPendingFirstLikeSql()
    {
        CompensationWidget widget(m_carolSession.get());
        QAbstractItemModelTester tester(widget.model(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QVERIFY(loaded(widget));
        QCOMPARE(qint64(widget.model()->rowCount()),
                 q(m_admin, "SELECT count(*) FROM redrive.compensation_request")
                     .bigInt(0, 0)
                     .value_or(-1));
        const qint64 pending = q(m_admin,
                                 "SELECT count(*) FROM redrive.compensation_request"
                                 " WHERE status = 'pending_approval'")
                                   .bigInt(0, 0)
                                   .value_or(-1);
        for (int row = 0; row < widget.model()->rowCount(); ++row)
            QCOMPARE(widget.model()->requestAt(row).isPendingApproval(), row < pending);
        const int a = rowOf(widget, m_a);
        QCOMPARE(widget.model()->index(a, CompensationModel::Amount).data().toString(),
                 QStringLiteral("25.00 USD"));
        QCOMPARE(widget.model()->index(a, CompensationModel::RequestedBy).data().toString(), m_bob);
        QCOMPARE(widget.model()->index(a, CompensationModel::Target).data().toString(),
                 QStringLiteral("dead letter %1").arg(m_deadLetters[0]));
        widget.setPendingOnly(true);
        QTRY_VERIFY_WITH_TIMEOUT(!widget.isLoading(), 10000);
        QCOMPARE(qint64(widget.model()->rowCount()), pending);
    }

    // The policy in force is shown from the server, not assumed.
    void theApprovalPolicyIsShown()
    {
        CompensationWidget widget(m_bobSession.get());
        widget.setRoles(m_bob, { QStringLiteral("redrive_support") });
        QVERIFY(loaded(widget));
        auto *policy = widget.findChild<QLabel *>(QStringLiteral("approvalPolicy"));
        QVERIFY(policy);
        // initTestCase set the threshold to 1000 minor units (10.00 USD).
        QTRY_VERIFY_WITH_TIMEOUT(policy->text().contains(QStringLiteral("1000 or more")), 10000);
        QVERIFY2(policy->text().contains(QStringLiteral("(10.00 in")), qPrintable(policy->text()));
    }

    void withoutTheApproverRoleDecidingIsDisabled()
    {
        CompensationWidget widget(m_bobSession.get());
        widget.setRoles(m_bob, { QStringLiteral("redrive_support") });
        QVERIFY(loaded(widget));
        widget.selectRequest(rowOf(widget, m_b)); // someone else's request
        auto *approve = widget.findChild<QPushButton *>(QStringLiteral("approve"));
        auto *reject = widget.findChild<QPushButton *>(QStringLiteral("reject"));
        QVERIFY(approve && reject);
        QVERIFY(!approve->isEnabled());
        QVERIFY(!reject->isEnabled());
        QCOMPARE(approve->toolTip(), QStringLiteral("needs role redrive_approver"));
        QCOMPARE(reject->toolTip(), QStringLiteral("needs role redrive_approver"));
        QCOMPARE(widget.openDecisionDialog(true), nullptr);
    }

    void theRequesterCannotApproveTheirOwnRequest()
    {
        CompensationWidget widget(m_erinSession.get());
        widget.setRoles(m_erin,
                        { QStringLiteral("redrive_approver"), QStringLiteral("redrive_support") });
        QVERIFY(loaded(widget));
        auto *approve = widget.findChild<QPushButton *>(QStringLiteral("approve"));
        widget.selectRequest(rowOf(widget, m_b)); // erin's own
        QCOMPARE(widget.currentRequest().id, m_b);
        QVERIFY(!widget.canApprove());
        QVERIFY(!widget.canReject());
        QCOMPARE(approve->toolTip(),
                 QStringLiteral("you requested this; a different approver must decide"));
        QVERIFY(widget.detailText().contains(QStringLiteral("a different approver must decide")));
        QCOMPARE(widget.openDecisionDialog(true), nullptr);
        widget.selectRequest(rowOf(widget, m_a)); // bob's: erin may decide it
        QVERIFY(widget.canApprove());

        // Sent anyway (an older console, psql): the database refuses, and the dialog says so.
        CompensationRequest own;
        own.id = m_b;
        own.targetType = QStringLiteral("dead_letter");
        own.targetId = m_deadLetters[1];
        own.version = 1;
        own.status = QStringLiteral("pending_approval");
        CompensationDecisionDialog dialog(m_erinSession.get(), own,
                                          CompensationDecisionDialog::Decision::Approve,
                                          QStringLiteral("erin"));
        QTRY_VERIFY_WITH_TIMEOUT(!dialog.isBusy(), 10000);
        QCOMPARE(dialog.request().requestedBy, m_erin);
        dialog.setReason(QStringLiteral("looks fine to me"));
        dialog.decide();
        QVERIFY(dialog.isBusy());
        QTRY_VERIFY_WITH_TIMEOUT(!dialog.isBusy(), 10000);
        QVERIFY(!dialog.isFinished());
        QVERIFY2(dialog.messageText().contains(QStringLiteral("a different person must decide")),
                 qPrintable(dialog.messageText()));
        QCOMPARE(statusOf(m_b), QStringLiteral("pending_approval"));
        QCOMPARE(q(m_admin,
                   "SELECT count(*) FROM redrive.compensation_approval WHERE request_id = $1",
                   QueryParams().addBigInt(m_b))
                     .bigInt(0, 0),
                 std::optional<qint64>(0));
    }

    void aSecondApproverApproves()
    {
        CompensationWidget widget(m_carolSession.get());
        widget.resize(1400, 700);
        widget.setRoles(m_carol, { QStringLiteral("redrive_approver") });
        widget.setOsUser(QStringLiteral("carol-laptop"));
        widget.show();
        QVERIFY(QTest::qWaitForWindowExposed(&widget));
        QVERIFY(loaded(widget));
        widget.selectRequest(rowOf(widget, m_a));
        QVERIFY(widget.canApprove());
        QSignalSpy decided(&widget, &CompensationWidget::compensationDecided);
        CompensationDecisionDialog *dialog = widget.openDecisionDialog(true);
        QVERIFY(dialog);
        QVERIFY(!widget.canApprove()); // one dialog at a time
        QAbstractItemModelTester t1(dialog->attemptsModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester t2(dialog->mismatchesModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
        dialog->show();
        QTRY_VERIFY_WITH_TIMEOUT(!dialog->isBusy(), 10000);
        QVERIFY2(
            dialog->summaryText().contains(QStringLiteral("25.00 USD refund of payment pay_cw1")),
            qPrintable(dialog->summaryText()));
        QVERIFY(dialog->summaryText().contains(QStringLiteral("Requested by %1").arg(m_bob)));
        QVERIFY(
            dialog->summaryText().contains(QStringLiteral("Charged although the order failed")));
        QVERIFY(dialog->summaryText().contains(
            QStringLiteral("Still refundable for pay_cw1 beyond this request: 25.00 USD")));
        QCOMPARE(dialog->attemptsModel()->rowCount(), 3);
        auto *decide = dialog->findChild<QPushButton *>(QStringLiteral("decide"));
        QVERIFY(decide);
        QVERIFY(!decide->isEnabled()); // no reason yet
        dialog->setReason(QStringLiteral("Provider dashboard shows the charge; the order failed"));
        QVERIFY(decide->isEnabled());
        settle();
        QVERIFY(
            dialog->grab().save(outputDir() + QStringLiteral("/compensation_decision_dialog.png")));
        QTest::mouseClick(decide, Qt::LeftButton);
        QVERIFY(decided.wait(10000));
        QCOMPARE(decided.first().at(0).toLongLong(), m_a);
        QCOMPARE(decided.first().at(1).toBool(), true);
        const QJsonObject outcome = decided.first().at(2).toJsonObject();
        QCOMPARE(outcome.value(QStringLiteral("applied")).toInt(), 1);
        QVERIFY(dialog->isFinished());
        QVERIFY(dialog->messageText().startsWith(QStringLiteral("Approved")));

        QCOMPARE(statusOf(m_a), QStringLiteral("approved"));
        const ResultSet approval = q(m_admin,
                                     "SELECT decided_by, decision, reason, action_id"
                                     " FROM redrive.compensation_approval WHERE request_id = $1",
                                     QueryParams().addBigInt(m_a));
        QCOMPARE(approval.rowCount(), 1);
        QCOMPARE(approval.text(0, 0), m_carol);
        QCOMPARE(approval.text(0, 1), QStringLiteral("approved"));
        QCOMPARE(approval.uuid(0, 3), dialog->actionId());
        QCOMPARE(q(m_admin,
                   "SELECT count(*) FROM redrive.outbox WHERE command = 'compensate'"
                   " AND target_id = $1::text AND action_id = $2",
                   QueryParams().addBigInt(m_a).addUuid(dialog->actionId()))
                     .bigInt(0, 0),
                 std::optional<qint64>(1));
        const ResultSet audit = q(m_admin,
                                  "SELECT action, db_user, os_user FROM redrive.audit_log"
                                  " WHERE action_id = $1",
                                  QueryParams().addUuid(dialog->actionId()));
        QCOMPARE(audit.rowCount(), 1);
        QCOMPARE(audit.text(0, 0), QStringLiteral("compensate_approve"));
        QCOMPARE(audit.text(0, 1), m_carol);
        QCOMPARE(audit.text(0, 2), QStringLiteral("carol-laptop"));

        // The list reloads and keeps the request selected, now approved.
        dialog->accept();
        QTRY_VERIFY_WITH_TIMEOUT(!widget.isLoading() && widget.currentRequest().id == m_a
                                     && widget.currentRequest().status == QLatin1String("approved"),
                                 10000);
        QVERIFY(!widget.canApprove());
        QVERIFY(widget.detailText().contains(QStringLiteral("Approved by %1").arg(m_carol)));
        // The detail scrolls, whatever its length: nothing in it is out of reach.
        auto *detail = widget.findChild<QLabel *>(QStringLiteral("requestDetail"));
        auto *scroll = widget.findChild<QScrollArea *>(QStringLiteral("requestDetailScroll"));
        QVERIFY(detail && scroll && scroll->widget() == detail);
        settle();
        QVERIFY(widget.grab().save(outputDir() + QStringLiteral("/compensation_widget.png")));
    }

    void aRejectionOpensTheTargetAgain()
    {
        CompensationWidget widget(m_carolSession.get());
        widget.setRoles(m_carol, { QStringLiteral("redrive_approver") });
        QVERIFY(loaded(widget));
        widget.selectRequest(rowOf(widget, m_b));
        QSignalSpy decided(&widget, &CompensationWidget::compensationDecided);
        CompensationDecisionDialog *dialog = widget.openDecisionDialog(false);
        QVERIFY(dialog);
        QTRY_VERIFY_WITH_TIMEOUT(!dialog->isBusy(), 10000);
        dialog->decide(); // no reason: refused here, nothing sent
        QVERIFY(!dialog->isBusy());
        QVERIFY(dialog->messageText().contains(QStringLiteral("Give a reason")));
        dialog->setReason(QStringLiteral("Outside the cancellation window"));
        dialog->decide();
        QVERIFY(decided.wait(10000));
        QCOMPARE(decided.first().at(1).toBool(), false);
        QCOMPARE(statusOf(m_b), QStringLiteral("rejected"));
        QCOMPARE(q(m_admin, "SELECT status FROM redrive.dead_letter WHERE id = $1",
                   QueryParams().addBigInt(m_deadLetters[1]))
                     .text(0, 0),
                 QStringLiteral("open"));
        dialog->accept();
    }

    void aRequestDecidedMeanwhileIsNotApplied()
    {
        CompensationRequest d;
        {
            CompensationWidget widget(m_carolSession.get());
            QVERIFY(loaded(widget));
            d = widget.model()->requestAt(rowOf(widget, m_d));
        }
        CompensationDecisionDialog dialog(m_carolSession.get(), d,
                                          CompensationDecisionDialog::Decision::Approve,
                                          QStringLiteral("carol"));
        QTRY_VERIFY_WITH_TIMEOUT(!dialog.isBusy(), 10000);
        // Erin approves it first, from another console.
        PgConnection erin = as(m_erin);
        QVERIFY(erin.exec(statementSql(Statement::ActionDecideCompensation),
                          QueryParams()
                              .addUuid(QUuid::createUuid())
                              .addBigInt(m_d)
                              .addInt(d.version)
                              .addBool(true)
                              .addText(QStringLiteral("approved on the phone"))
                              .addNull(ParamType::Text))
                    .ok());
        QSignalSpy decided(&dialog, &CompensationDecisionDialog::decided);
        dialog.setReason(QStringLiteral("agreed with the customer"));
        dialog.decide();
        QVERIFY(decided.wait(10000));
        QCOMPARE(dialog.outcome().value(QStringLiteral("applied")).toInt(), 0);
        QCOMPARE(dialog.outcome().value(QStringLiteral("conflicts")).toInt(), 1);
        QVERIFY2(dialog.messageText().startsWith(QStringLiteral("Not applied")),
                 qPrintable(dialog.messageText()));
        QCOMPARE(q(m_admin,
                   "SELECT decided_by FROM redrive.compensation_approval WHERE request_id = $1",
                   QueryParams().addBigInt(m_d))
                     .text(0, 0),
                 m_erin);
    }

    void aMismatchTargetShowsTheMismatch()
    {
        CompensationWidget widget(m_carolSession.get());
        widget.setRoles(m_carol, { QStringLiteral("redrive_approver") });
        QVERIFY(loaded(widget));
        widget.selectRequest(rowOf(widget, m_m));
        CompensationDecisionDialog *dialog = widget.openDecisionDialog(true);
        QVERIFY(dialog);
        QAbstractItemModelTester tester(dialog->mismatchesModel(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QTRY_VERIFY_WITH_TIMEOUT(!dialog->isBusy(), 10000);
        QCOMPARE(dialog->mismatchesModel()->rowCount(), 1);
        QCOMPARE(dialog->mismatchesModel()->index(0, 0).data().toString(),
                 QStringLiteral("duplicate_external"));
        QVERIFY2(dialog->summaryText().contains(
                     QStringLiteral("mismatch %1 — duplicate_external").arg(m_mismatch)),
                 qPrintable(dialog->summaryText()));
        dialog->reject();
    }
};

QTEST_MAIN(TestCompensationWidget)
#include "tst_compensation_widget.moc"
