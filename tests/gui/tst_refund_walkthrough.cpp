// SPDX-License-Identifier: GPL-3.0-or-later
// The README's "A refund, step by step", through the real console offscreen and the screenshot
// harness that makes its pictures (views/screenshot_harness.h): support finds a double charge
// from the order number (Ctrl+K), opens its mismatch, requests the refund of exactly the
// duplicate with the dialog's own button, and a second person approves it with theirs; each as
// its own login over TCP with a password.
#include "models/cli_commands.h"
#include "tests/support/test_database.h"
#include "views/main_window.h"
#include "views/reconciliation_widget.h"
#include "views/screenshot_harness.h"

#include <QApplication>
#include <QDir>
#include <QFileInfo>
#include <QTabWidget>
#include <QTest>

using namespace redrive;
using namespace redrive::db;

namespace {

const QString kPassword = QStringLiteral("w4lk-pw");

QString outputPath(const QString &name)
{
    QDir().mkpath(QStringLiteral(REDRIVE_TEST_OUTPUT_DIR));
    return QStringLiteral(REDRIVE_TEST_OUTPUT_DIR) + QLatin1Char('/') + name;
}

} // namespace

class TestRefundWalkthrough : public QObject
{
    Q_OBJECT
private:
    std::unique_ptr<test::TestDatabase> m_db;
    PgConnection m_admin;
    QString m_support, m_approver;
    qint64 m_mismatch = 0;

    ResultSet q(const QByteArray &sql, const QueryParams &params = {})
    {
        auto r = m_admin.exec(sql, params);
        if (!r)
            qFatal("%s: %s", sql.constData(), qPrintable(r.error().summary()));
        return r.value();
    }
    QString text(const QByteArray &sql, const QueryParams &params = {})
    {
        return q(sql, params).text(0, 0);
    }

    // A console window connected as `login` over TCP, as `redrive --screenshot` sets it up.
    std::unique_ptr<MainWindow> consoleAs(const QString &login)
    {
        auto window = std::make_unique<MainWindow>();
        window->resize(1400, 860);
        window->setPromptsAllowed(false);
        window->show();
        window->connectTo(m_db->consoleTcpSettingsAs(login, kPassword));
        return window;
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_db = std::make_unique<test::TestDatabase>(QStringLiteral("walkthrough"));
        QVERIFY2(m_db->isValid(), qPrintable(m_db->error()));
        m_admin = m_db->connect();
        m_support = m_db->createLogin(QStringLiteral("wanda_support"),
                                      { QStringLiteral("redrive_support") }, kPassword);
        m_approver = m_db->createLogin(QStringLiteral("walter_approver"),
                                       { QStringLiteral("redrive_approver") }, kPassword);
        // Payment pay_w1 for order ord_w1, charged twice 150.00 USD: ch_w1 (our ledger's) and
        // ch_w1_dup, 7 seconds later.
        q("CREATE TABLE public.walk_charge (payment_ref text, charge_ref text, charged bigint,"
          " currency text, charged_at timestamptz, is_primary boolean)");
        q("INSERT INTO public.walk_charge VALUES"
          " ('pay_w1', 'ch_w1', 15000, 'USD', '2026-11-30 09:00:00+00', true),"
          " ('pay_w1', 'ch_w1_dup', 15000, 'USD', '2026-11-30 09:00:07+00', false)");
        q("CREATE OR REPLACE VIEW redrive.payment_list AS"
          " SELECT payment_ref, charge_ref, charged AS charged_cents, 0::bigint AS refunded_cents,"
          "        currency FROM public.walk_charge WHERE is_primary");
        q("CREATE OR REPLACE VIEW redrive.payment_charge_list AS"
          " SELECT payment_ref, charge_ref, charged AS charged_minor, 0::bigint AS refunded_minor,"
          "        currency, charged_at, is_primary FROM public.walk_charge");
        const qint64 run = q("INSERT INTO redrive.reconciliation_run (provider, started_at,"
                             " finished_at, status, checked_count, mismatch_count)"
                             " VALUES ('stripe', now(), now(), 'succeeded', 1, 1) RETURNING id")
                               .bigInt(0, 0)
                               .value_or(0);
        m_mismatch = q("INSERT INTO redrive.reconciliation_mismatch (run_id, kind, payment_ref,"
                       " order_ref, internal_amount_minor, external_amount_minor,"
                       " internal_currency, external_currency, internal_status,"
                       " external_status, internal_record, internal_charge_ref,"
                       " external_charge_ref)"
                       " VALUES ($1, 'duplicate_external', 'pay_w1', 'ord_w1', 15000, 15000,"
                       " 'USD', 'USD', 'succeeded', 'succeeded',"
                       " '{\"id\": \"pay_w1\", \"customer\": \"Wim de Wit\"}', 'ch_w1',"
                       " 'ch_w1_dup') RETURNING id",
                       QueryParams().addBigInt(run))
                         .bigInt(0, 0)
                         .value_or(0);
        QVERIFY(m_mismatch > 0);
    }

    void cleanupTestCase()
    {
        m_admin = PgConnection();
        m_db.reset();
    }

    void findRequestApprove()
    {
        // 1. Ctrl+K with the order number: one hit, the mismatch.
        {
            auto window = consoleAs(m_support);
            const QString file = outputPath(QStringLiteral("walkthrough-find.png"));
            QCOMPARE(takeFindScreenshot(*window, QStringLiteral("ord_w1"), file), cli::kExitOk);
            QVERIFY(QFileInfo(file).size() > 0);
        }
        // 2. Opened where it lives: the Reconciliation tab.
        {
            auto window = consoleAs(m_support);
            QCOMPARE(takeFindScreenshot(*window, QStringLiteral("ord_w1"),
                                        outputPath(QStringLiteral("walkthrough-mismatch.png")),
                                        QStringLiteral("mismatch")),
                     cli::kExitOk);
            QCOMPARE(window->tabs()->currentWidget(),
                     static_cast<QWidget *>(window->reconciliationTab()));
            // No audit entry names it, so there is nothing of that kind to open.
            auto other = consoleAs(m_support);
            QCOMPARE(takeFindScreenshot(*other, QStringLiteral("ord_w1"),
                                        outputPath(QStringLiteral("walkthrough-none.png")),
                                        QStringLiteral("audit")),
                     cli::kExitFailed);
        }
        // 3. The request, with the dialog's own button: exactly the duplicate, 150.00 USD, at
        // the default threshold of 100.00 USD, so it waits for a second person.
        {
            auto window = consoleAs(m_support);
            QCOMPARE(takeCompensationRequestScreenshot(
                         *window, QStringLiteral("mismatch:%1").arg(m_mismatch),
                         outputPath(QStringLiteral("walkthrough-request.png")),
                         QStringLiteral("Customer was charged twice for ord_w1"),
                         QStringLiteral("SUP-77")),
                     cli::kExitOk);
        }
        const ResultSet request
            = q("SELECT id, charge_ref, amount_minor, currency, status,"
                " requested_by, ticket, reason"
                "  FROM redrive.compensation_request WHERE payment_ref = 'pay_w1'");
        QCOMPARE(request.rowCount(), 1);
        QCOMPARE(request.text(0, 1), QStringLiteral("ch_w1_dup"));
        QCOMPARE(request.bigInt(0, 2).value_or(0), 15000);
        QCOMPARE(request.text(0, 3), QStringLiteral("USD"));
        QCOMPARE(request.text(0, 4), QStringLiteral("pending_approval"));
        QCOMPARE(request.text(0, 5), m_support);
        QCOMPARE(request.text(0, 6), QStringLiteral("SUP-77"));
        QCOMPARE(request.text(0, 7), QStringLiteral("Customer was charged twice for ord_w1"));
        const qint64 requestId = request.bigInt(0, 0).value_or(0);

        // The one who asked may not approve (the support login lacks the role altogether).
        {
            auto window = consoleAs(m_support);
            QCOMPARE(takeCompensationApprovalScreenshot(
                         *window, requestId, outputPath(QStringLiteral("walkthrough-refused.png")),
                         QStringLiteral("approving my own request")),
                     cli::kExitFailed);
            QCOMPARE(text("SELECT status FROM redrive.compensation_request WHERE id = $1",
                          QueryParams().addBigInt(requestId)),
                     QStringLiteral("pending_approval"));
        }
        // 4. A second person approves with the dialog's Approve button.
        {
            auto window = consoleAs(m_approver);
            QCOMPARE(
                takeCompensationApprovalScreenshot(
                    *window, requestId, outputPath(QStringLiteral("walkthrough-approval.png")),
                    QStringLiteral("Two charges 7 seconds apart; the second is the duplicate")),
                cli::kExitOk);
        }
        QCOMPARE(text("SELECT status FROM redrive.compensation_request WHERE id = $1",
                      QueryParams().addBigInt(requestId)),
                 QStringLiteral("approved"));
        QCOMPARE(text("SELECT decided_by || ' ' || decision FROM redrive.compensation_approval"
                      " WHERE request_id = $1",
                      QueryParams().addBigInt(requestId)),
                 m_approver + QStringLiteral(" approved"));
        QCOMPARE(text("SELECT (payload ->> 'amount_minor') || ' ' || (payload ->> 'charge_ref')"
                      "  FROM redrive.outbox WHERE command = 'compensate' AND target_id = $1",
                      QueryParams().addText(QString::number(requestId))),
                 QStringLiteral("15000 ch_w1_dup"));
        // 5. The audit log, newest entry first: the approval.
        {
            auto window = consoleAs(m_approver);
            QCOMPARE(
                takeAuditScreenshot(*window, outputPath(QStringLiteral("walkthrough-audit.png"))),
                cli::kExitOk);
        }
        QCOMPARE(text("SELECT string_agg(action || ' ' || db_user, ', ' ORDER BY id)"
                      "  FROM redrive.audit_log WHERE action LIKE 'compensate%'"),
                 QStringLiteral("compensate_request ") + m_support
                     + QStringLiteral(", compensate_approve ") + m_approver);
    }
};

QTEST_MAIN(TestRefundWalkthrough)
#include "tst_refund_walkthrough.moc"
