// SPDX-License-Identifier: GPL-3.0-or-later
// The money rules (docs/domain.md "Money"), attacked as real logins over TCP with passwords:
// four eyes per payment (split requests), one open compensation per payment, requests on one
// payment that take turns, per-currency thresholds changed only by an audited function, unknown
// currencies refused, refunds from a duplicate charge or an amount mismatch, and an executed
// refund counted exactly once before and after it reaches the provider's ledger.
#include "tests/support/test_database.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QJsonDocument>
#include <QJsonObject>
#include <QTest>
#include <QThread>
#include <thread>

using namespace redrive;
using namespace redrive::db;

namespace {

const QString kPassword = QStringLiteral("m0ney-pw");

QJsonObject outcomeOf(const DbExpected<ResultSet> &r)
{
    return r ? QJsonDocument::fromJson(r->raw(0, 0)).object() : QJsonObject();
}

QString stateOf(const DbExpected<ResultSet> &r)
{
    return r ? QStringLiteral("ok") : r.error().sqlState();
}

} // namespace

class TestMoneyRules : public QObject
{
    Q_OBJECT
private:
    std::unique_ptr<test::TestDatabase> m_db;
    PgConnection m_admin;
    QString m_support, m_support2, m_approver, m_adminRole, m_worker, m_nobody, m_both;

    QString role(const char *name) const
    {
        return QStringLiteral("money_%1_%2")
            .arg(QLatin1String(name))
            .arg(QCoreApplication::applicationPid());
    }

    PgConnection as(const QString &login)
    {
        ConnectionSettings s = m_db->tcpSettingsAs(login, kPassword);
        s.searchPath = QStringLiteral("redrive");
        auto c = PgConnection::open(s);
        if (!c)
            qFatal("connect as %s: %s", qPrintable(login), qPrintable(c.error().summary()));
        return std::move(c.value());
    }

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

    // A payment charged `charged` minor units of `currency` on charge ch_<payment>.
    void payment(const QString &ref, qint64 charged, const QString &currency)
    {
        q("INSERT INTO public.money_payment (payment_ref, charge_ref, charged, refunded, currency)"
          " VALUES ($1, 'ch_' || $1, $2, 0, $3)",
          QueryParams().addText(ref).addBigInt(charged).addText(currency));
    }

    // An open dead letter whose job charged `paymentRef` for order ord_<payment>; (id, version).
    std::pair<qint64, int> deadLetter(const QString &paymentRef)
    {
        const ResultSet r
            = q("WITH j AS (INSERT INTO redrive.job (queue, kind, payload, state, entity_id)"
                "           VALUES ('payments', 'charge_card',"
                "                   jsonb_build_object('order_id', 'ord_' || $1), 'dead', $1)"
                "           RETURNING id, queue, kind)"
                "INSERT INTO redrive.dead_letter (job_id, queue, kind, error_class, error_code,"
                "                                 last_error)"
                "SELECT id, queue, kind, 'ambiguous', 'timeout', 'read timeout' FROM j"
                " RETURNING id, version",
                QueryParams().addText(paymentRef));
        return { r.bigInt(0, 0).value_or(0), r.integer(0, 1).value_or(0) };
    }

    int deadLetterVersion(qint64 id)
    {
        return int(count("SELECT version FROM redrive.dead_letter WHERE id = $1",
                         QueryParams().addBigInt(id)));
    }

    // An open mismatch on `paymentRef`; (id, version). Without `externalCharge` it names no
    // provider charge (as a mismatch recorded before schema version 9).
    std::pair<qint64, int> mismatch(const QString &kind, const QString &paymentRef, qint64 internal,
                                    qint64 external, const QString &currency,
                                    const QString &externalCharge = QString())
    {
        if (externalCharge.isEmpty())
            return mismatchWithoutCharges(kind, paymentRef, internal, external, currency);
        const ResultSet r = q(
            "WITH run AS (INSERT INTO redrive.reconciliation_run (provider) VALUES ('test')"
            "             RETURNING id)"
            "INSERT INTO redrive.reconciliation_mismatch (run_id, kind, payment_ref, order_ref,"
            "       internal_amount_minor, external_amount_minor, internal_currency,"
            "       external_currency, external_record, internal_charge_ref, external_charge_ref)"
            "SELECT run.id, $1, $2, 'ord_' || $2, $3, $4, $5, $5,"
            "       jsonb_build_object('id', $6::text), 'ch_' || $2, $6 FROM run"
            " RETURNING id, version",
            QueryParams()
                .addText(kind)
                .addText(paymentRef)
                .addBigInt(internal)
                .addBigInt(external)
                .addText(currency)
                .addText(externalCharge));
        return { r.bigInt(0, 0).value_or(0), r.integer(0, 1).value_or(0) };
    }

    std::pair<qint64, int> mismatchWithoutCharges(const QString &kind, const QString &paymentRef,
                                                  qint64 internal, qint64 external,
                                                  const QString &currency)
    {
        const ResultSet r = q(
            "WITH run AS (INSERT INTO redrive.reconciliation_run (provider) VALUES ('test')"
            "             RETURNING id)"
            "INSERT INTO redrive.reconciliation_mismatch (run_id, kind, payment_ref, order_ref,"
            "       internal_amount_minor, external_amount_minor, internal_currency,"
            "       external_currency)"
            "SELECT run.id, $1, $2, 'ord_' || $2, $3, $4, $5, $5 FROM run RETURNING id, version",
            QueryParams()
                .addText(kind)
                .addText(paymentRef)
                .addBigInt(internal)
                .addBigInt(external)
                .addText(currency));
        return { r.bigInt(0, 0).value_or(0), r.integer(0, 1).value_or(0) };
    }

    DbExpected<ResultSet> request(PgConnection &c, qint64 deadLetterId, int version, qint64 amount,
                                  const QString &kind = QStringLiteral("refund"))
    {
        return c.exec(
            "SELECT redrive.request_compensation(gen_random_uuid(), 'dead_letter', $1,"
            " $2, $3, $4, 'customer asked for a refund')",
            QueryParams().addBigInt(deadLetterId).addInt(version).addText(kind).addBigInt(amount));
    }

    DbExpected<ResultSet> requestFromMismatch(PgConnection &c, qint64 mismatchId, int version,
                                              std::optional<qint64> amount)
    {
        QueryParams p;
        p.addBigInt(mismatchId).addInt(version);
        if (amount)
            p.addBigInt(*amount);
        else
            p.addNull(ParamType::BigInt);
        return c.exec("SELECT redrive.request_mismatch_compensation(gen_random_uuid(), $1, $2, $3,"
                      " 'refund what the mismatch owes', 'SUP-1')",
                      p);
    }

    // The worker claims every compensation command that is due and carries out those for
    // `paymentRef`: done, with a refund id. Returns how many it carried out.
    int workerCompletes(const QString &paymentRef)
    {
        PgConnection worker = as(m_worker);
        const ResultSet claimed = worker
                                      .exec("SELECT o.id, o.payload ->> 'compensation_id'"
                                            "  FROM redrive.claim_outbox($1, 1000, 60000) o"
                                            " WHERE o.command = 'compensate' ORDER BY o.id",
                                            QueryParams().addText(m_worker))
                                      .value();
        int done = 0;
        for (int i = 0; i < claimed.rowCount(); ++i) {
            const qint64 outbox = claimed.bigInt(i, 0).value_or(0);
            if (count("SELECT count(*) FROM redrive.compensation_request"
                      " WHERE id = $1::bigint AND payment_ref = $2",
                      QueryParams().addText(claimed.text(i, 1)).addText(paymentRef))
                != 1)
                continue;
            auto completed = worker.exec(
                "SELECT redrive.complete_compensation($1, $2, true, 're_' || $1::text, NULL)",
                QueryParams().addBigInt(outbox).addText(m_worker));
            if (!completed)
                qFatal("complete: %s", qPrintable(completed.error().summary()));
            ++done;
        }
        return done;
    }

    void setThreshold(const QString &currency, qint64 minor)
    {
        PgConnection admin = as(m_adminRole);
        auto r = admin.exec("SELECT redrive.change_approval_threshold(gen_random_uuid(), $1, $2,"
                            " 'threshold policy for the tests')",
                            QueryParams().addText(currency).addBigInt(minor));
        if (!r)
            qFatal("threshold: %s", qPrintable(r.error().summary()));
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_db = std::make_unique<test::TestDatabase>(QStringLiteral("money"));
        QVERIFY2(m_db->isValid(), qPrintable(m_db->error()));
        m_admin = m_db->connect();
        m_support = role("sue");
        m_support2 = role("sam");
        m_approver = role("ann");
        m_adminRole = role("owner_level");
        m_worker = role("worker");
        m_nobody = role("nobody");
        m_both = role("both");
        const QList<std::pair<QString, QString>> logins {
            { m_support, QStringLiteral("redrive_support") },
            { m_support2, QStringLiteral("redrive_support") },
            { m_approver, QStringLiteral("redrive_approver") },
            { m_adminRole, QStringLiteral("redrive_admin") },
            { m_worker, QStringLiteral("redrive_worker") },
            { m_nobody, QString() },
            { m_both, QStringLiteral("redrive_support") },
        };
        for (const auto &[login, granted] : logins) {
            q("DROP ROLE IF EXISTS " + m_admin.quoteIdentifier(login));
            // CREATE ROLE takes the password as a literal, not a parameter; it is a constant.
            q("CREATE ROLE " + m_admin.quoteIdentifier(login) + " LOGIN PASSWORD '"
              + kPassword.toUtf8() + "'");
            if (!granted.isEmpty())
                q("GRANT " + m_admin.quoteIdentifier(granted) + " TO "
                  + m_admin.quoteIdentifier(login));
        }
        // One person who both requests and approves (maker-checker compares logins).
        q("GRANT redrive_approver TO " + m_admin.quoteIdentifier(m_both));
        // A payments ledger of the test's own: payments, every provider charge, and the
        // provider's refunds, behind the payments contract views.
        q("CREATE TABLE public.money_payment (payment_ref text PRIMARY KEY, charge_ref text,"
          " charged bigint, refunded bigint, currency text)");
        q("CREATE TABLE public.money_extra_charge (payment_ref text, charge_ref text,"
          " charged bigint, refunded bigint, currency text, charged_at timestamptz)");
        q("CREATE TABLE public.money_refund (payment_ref text, charge_ref text, refund_ref text,"
          " amount bigint, refunded_at timestamptz)");
        q("CREATE OR REPLACE VIEW redrive.payment_list AS"
          " SELECT payment_ref, charge_ref, charged AS charged_cents, refunded AS refunded_cents,"
          "        currency FROM public.money_payment");
        q("CREATE OR REPLACE VIEW redrive.payment_charge_list AS"
          " SELECT payment_ref, charge_ref, charged AS charged_minor, refunded AS refunded_minor,"
          "        currency, '2026-01-01 10:00Z'::timestamptz AS charged_at, true AS is_primary"
          "   FROM public.money_payment"
          " UNION ALL SELECT payment_ref, charge_ref, charged, refunded, currency, charged_at,"
          "        false FROM public.money_extra_charge");
        q("CREATE OR REPLACE VIEW redrive.payment_refund_list AS"
          " SELECT payment_ref, charge_ref, refund_ref, amount AS amount_minor, refunded_at"
          "   FROM public.money_refund");
    }

    void cleanupTestCase()
    {
        m_db.reset();
        for (const QString &login :
             { m_support, m_support2, m_approver, m_adminRole, m_worker, m_nobody, m_both }) {
            auto admin = PgConnection::open([] {
                ConnectionSettings s;
                s.connInfo = test::TestDatabase::adminConnInfo();
                return s;
            }());
            if (admin)
                admin->exec("DROP ROLE IF EXISTS " + admin->quoteIdentifier(login));
        }
    }

    // Four eyes per payment: requests on one payment, each under the threshold, need a second
    // person as soon as the payment's open and executed ones with the new one reach it. Exact
    // amounts in a zero-, a two- and a three-decimal currency.
    void splitRequestsSummingOverTheThresholdNeedApproval_data()
    {
        QTest::addColumn<QString>("currency");
        QTest::addColumn<qint64>("threshold");
        // ¥10,000; $100.00; 50.000 KWD.
        QTest::newRow("JPY") << QStringLiteral("JPY") << qint64(10000);
        QTest::newRow("USD") << QStringLiteral("USD") << qint64(10000);
        QTest::newRow("KWD") << QStringLiteral("KWD") << qint64(50000);
    }
    void splitRequestsSummingOverTheThresholdNeedApproval()
    {
        QFETCH(QString, currency);
        QFETCH(qint64, threshold);
        setThreshold(currency, threshold);
        const QString pay = QStringLiteral("pay_split_") + currency;
        payment(pay, threshold * 3, currency);
        const auto refund = deadLetter(pay);
        const auto voidDl = deadLetter(pay);
        const auto reversal = deadLetter(pay);
        PgConnection sue = as(m_support);

        // 60 % of the threshold: no second person; the worker refunds it.
        const qint64 first = threshold * 6 / 10;
        QJsonObject o = outcomeOf(request(sue, refund.first, refund.second, first));
        QCOMPARE(o.value(QStringLiteral("applied")).toInt(), 1);
        QCOMPARE(o.value(QStringLiteral("requires_approval")).toBool(), false);
        QCOMPARE(o.value(QStringLiteral("currency")).toString(), currency);
        QCOMPARE(workerCompletes(pay), 1);
        // Up to one minor unit under the threshold in total: still none.
        const qint64 second = threshold - first - 1;
        o = outcomeOf(request(sue, voidDl.first, voidDl.second, second, QStringLiteral("void")));
        QCOMPARE(o.value(QStringLiteral("applied")).toInt(), 1);
        QCOMPARE(o.value(QStringLiteral("requires_approval")).toBool(), false);
        QCOMPARE(workerCompletes(pay), 1);
        // One more minor unit reaches the threshold: this tiny request waits for a second person.
        o = outcomeOf(request(sue, reversal.first, reversal.second, 1, QStringLiteral("reversal")));
        QCOMPARE(o.value(QStringLiteral("applied")).toInt(), 1);
        QCOMPARE(o.value(QStringLiteral("requires_approval")).toBool(), true);
        QCOMPARE(count("SELECT count(*) FROM redrive.compensation_request WHERE payment_ref = $1"
                       " AND status = 'pending_approval' AND amount_minor = 1",
                       QueryParams().addText(pay)),
                 1);
        QCOMPARE(count("SELECT count(*) FROM redrive.outbox o JOIN redrive.compensation_request c"
                       " ON o.target_id = c.id::text WHERE c.payment_ref = $1",
                       QueryParams().addText(pay)),
                 2);
        // The audit entry says what the payment's total and its currency's threshold were.
        QCOMPARE(count("SELECT (after ->> 'payment_total_minor')::bigint FROM redrive.audit_log"
                       " WHERE action = 'compensate_request' AND after ->> 'payment_ref' = $1"
                       " ORDER BY id DESC LIMIT 1",
                       QueryParams().addText(pay)),
                 threshold);
    }

    // At most one open compensation per payment: a second request on another dead letter of
    // the same payment is refused by the function, and a row written directly by the unique
    // index.
    void aSecondOpenRequestOnAPaymentIsRefused()
    {
        payment(QStringLiteral("pay_one_open"), 50000, QStringLiteral("USD"));
        const auto a = deadLetter(QStringLiteral("pay_one_open"));
        const auto b = deadLetter(QStringLiteral("pay_one_open"));
        PgConnection sue = as(m_support);
        PgConnection sam = as(m_support2);
        QJsonObject o = outcomeOf(request(sue, a.first, a.second, 20000)); // waits for approval
        QCOMPARE(o.value(QStringLiteral("requires_approval")).toBool(), true);
        auto second = request(sam, b.first, b.second, 100);
        QCOMPARE(stateOf(second), QStringLiteral("23505"));
        QVERIFY2(second.error().message().contains(
                     QStringLiteral("payment pay_one_open already has an open compensation")),
                 qPrintable(second.error().summary()));
        // Another kind on the same dead letter is refused too.
        QCOMPARE(
            stateOf(request(sue, a.first, deadLetterVersion(a.first), 100, QStringLiteral("void"))),
            QStringLiteral("23505"));
        // Not only a check in the function: the owner writing a row directly is refused.
        auto direct = m_admin.exec(
            "INSERT INTO redrive.compensation_request (target_type, target_id, kind, payment_ref,"
            " amount_minor, currency, status, requires_approval, requested_by, reason, action_id)"
            " VALUES ('dead_letter', $1, 'refund', 'pay_one_open', 100, 'USD', 'approved', false,"
            " 'owner', 'direct', gen_random_uuid())",
            QueryParams().addBigInt(b.first));
        QCOMPARE(stateOf(direct), QStringLiteral("23505"));
        QCOMPARE(count("SELECT count(*) FROM redrive.compensation_request"
                       " WHERE payment_ref = 'pay_one_open'"),
                 1);
        // Once the first is rejected, a new request may follow.
        PgConnection ann = as(m_approver);
        QVERIFY(ann.exec("SELECT redrive.decide_compensation(gen_random_uuid(), id, version, false,"
                         " 'duplicate ticket') FROM redrive.compensation_request"
                         " WHERE payment_ref = 'pay_one_open'")
                    .ok());
        o = outcomeOf(request(sam, b.first, b.second, 100));
        QCOMPARE(o.value(QStringLiteral("applied")).toInt(), 1);
    }

    // Two support operators on one payment at the same moment, one from a dead letter and one
    // from a mismatch: the second waits for the first to commit, then is refused; the open
    // total never exceeds what can be refunded.
    void concurrentRequestsOnOnePaymentTakeTurns()
    {
        const QString pay = QStringLiteral("pay_race");
        payment(pay, 5000, QStringLiteral("USD"));
        const auto dl = deadLetter(pay);
        const auto mm
            = mismatch(QStringLiteral("amount_mismatch"), pay, 4000, 5000, QStringLiteral("USD"));
        PgConnection sue = as(m_support);
        PgConnection sam = as(m_support2);
        const int samPid = sam.exec("SELECT pg_backend_pid()")->integer(0, 0).value_or(0);
        QVERIFY(sue.exec("BEGIN").ok());
        QJsonObject o = outcomeOf(request(sue, dl.first, dl.second, 4500));
        QCOMPARE(o.value(QStringLiteral("applied")).toInt(), 1);

        std::optional<DbExpected<ResultSet>> samResult;
        std::thread other([&] {
            samResult.emplace(
                sam.exec("SELECT redrive.request_compensation(gen_random_uuid(),"
                         " 'mismatch', $1, $2, 'refund', 1000, 'overcharged by 10.00')",
                         QueryParams().addBigInt(mm.first).addInt(mm.second)));
        });
        // Sam's request waits on the payment's lock while Sue's transaction is open.
        QElapsedTimer timer;
        timer.start();
        bool waited = false;
        while (timer.elapsed() < 5000 && !waited) {
            waited = q("SELECT wait_event_type IS NOT DISTINCT FROM 'Lock' FROM pg_stat_activity"
                       " WHERE pid = $1",
                       QueryParams().addInt(samPid))
                         .boolean(0, 0)
                         .value_or(false);
            if (!waited)
                QThread::msleep(20);
        }
        QVERIFY(sue.exec("COMMIT").ok());
        other.join();
        QVERIFY2(waited, "the second request did not wait for the first on the same payment");
        QVERIFY(samResult.has_value());
        QCOMPARE(stateOf(*samResult), QStringLiteral("23505"));
        QVERIFY(count("SELECT coalesce(sum(amount_minor), 0) FROM redrive.compensation_request"
                      " WHERE payment_ref = $1 AND status IN ('pending_approval', 'approved')",
                      QueryParams().addText(pay))
                <= 5000);
        QCOMPARE(count("SELECT count(*) FROM redrive.compensation_request WHERE payment_ref = $1",
                       QueryParams().addText(pay)),
                 1);
        QCOMPARE(count("SELECT redrive.refundable_cents($1)", QueryParams().addText(pay)), 500);
    }

    // A support login that opens a REPEATABLE READ transaction before another request on the
    // same payment is carried out must not request against that stale view: neither to stay
    // under the threshold (9000 + 9000 against 10000 USD) nor to refund past the charge.
    void aStaleSnapshotCannotSplitOrOverRefund()
    {
        const QString pay = QStringLiteral("pay_stale");
        payment(pay, 20000, QStringLiteral("USD"));
        setThreshold(QStringLiteral("USD"), 10000);
        const auto first = deadLetter(pay);
        const auto second = deadLetter(pay);
        PgConnection sue = as(m_support);
        PgConnection sam = as(m_support2);
        // The payment's lock row exists before the stale snapshot is taken.
        QJsonObject o = outcomeOf(request(sue, first.first, first.second, 20000));
        QCOMPARE(o.value(QStringLiteral("requires_approval")).toBool(), true);
        PgConnection approver = as(m_approver);
        QVERIFY(approver
                    .exec("SELECT redrive.decide_compensation(gen_random_uuid(), c.id, c.version,"
                          " false, 'too much at once') FROM redrive.compensation_list c"
                          " WHERE c.payment_ref = $1",
                          QueryParams().addText(pay))
                    .ok());

        QVERIFY(sam.exec("BEGIN ISOLATION LEVEL REPEATABLE READ").ok());
        QVERIFY(sam.exec("SELECT count(*) FROM redrive.compensation_list").ok()); // the snapshot
        o = outcomeOf(request(sue, first.first, deadLetterVersion(first.first), 9000));
        QCOMPARE(o.value(QStringLiteral("requires_approval")).toBool(), false);
        QCOMPARE(workerCompletes(pay), 1);

        const auto stale = request(sam, second.first, second.second, 9000);
        sam.exec("ROLLBACK");
        QVERIFY2(!stale.ok(), "a request from a stale snapshot was accepted");
        QCOMPARE(stateOf(stale), QStringLiteral("40001"));
        QCOMPARE(count("SELECT count(*) FROM redrive.compensation_request WHERE payment_ref = $1"
                       " AND status <> 'rejected'",
                       QueryParams().addText(pay)),
                 1);
        // Asked again with a fresh view, the same 9000 needs a second person.
        o = outcomeOf(request(sam, second.first, second.second, 9000));
        QCOMPARE(o.value(QStringLiteral("requires_approval")).toBool(), true);
    }

    // Per-currency thresholds: readable by the roles that request and approve, changed only by
    // redrive_admin through an audited function; a direct write by the owner is audited.
    void thresholdChangesAreAuditedAndOnlyForTheAdmin()
    {
        for (const QString &login : { m_support, m_approver, m_worker, m_nobody }) {
            PgConnection c = as(login);
            QCOMPARE(stateOf(c.exec("SELECT redrive.change_approval_threshold(gen_random_uuid(),"
                                    " 'USD', 1, 'cheaper refunds')")),
                     QStringLiteral("42501"));
            QCOMPARE(stateOf(c.exec("UPDATE redrive.approval_threshold SET threshold_minor = 1")),
                     QStringLiteral("42501"));
            QCOMPARE(stateOf(c.exec("INSERT INTO redrive.approval_threshold (currency,"
                                    " threshold_minor) VALUES ('GBP', 1)")),
                     QStringLiteral("42501"));
        }
        for (const QString &login : { m_support, m_approver }) {
            PgConnection c = as(login);
            auto shown
                = c.exec("SELECT threshold_minor, exponent FROM redrive.approval_threshold_list"
                         " WHERE currency = 'KWD'");
            QVERIFY2(shown, qPrintable(shown ? QString() : shown.error().summary()));
            QCOMPARE(shown->integer(0, 1), std::optional<int>(3));
        }
        PgConnection admin = as(m_adminRole);
        auto changed = admin.exec("SELECT redrive.change_approval_threshold(gen_random_uuid(),"
                                  " 'GBP', 25000, 'policy review Q4')");
        QVERIFY2(changed, qPrintable(changed ? QString() : changed.error().summary()));
        QCOMPARE(count("SELECT threshold_minor FROM redrive.approval_threshold_list"
                       " WHERE currency = 'GBP'"),
                 25000);
        QCOMPARE(count("SELECT count(*) FROM redrive.audit_log"
                       " WHERE action = 'change_approval_threshold' AND db_user = $1"
                       " AND after ->> 'currency' = 'GBP'"
                       " AND (after ->> 'threshold_minor')::bigint = 25000"
                       " AND before ->> 'threshold_minor' IS NULL",
                       QueryParams().addText(m_adminRole)),
                 1);
        // Unknown currencies and negative amounts are refused.
        QCOMPARE(stateOf(admin.exec("SELECT redrive.change_approval_threshold(gen_random_uuid(),"
                                    " 'XYZ', 100, 'made up currency')")),
                 QStringLiteral("22023"));
        QCOMPARE(stateOf(admin.exec("SELECT redrive.change_approval_threshold(gen_random_uuid(),"
                                    " 'GBP', -1, 'negative threshold')")),
                 QStringLiteral("22023"));
        // The default row is the old single threshold: changing one changes the other.
        QVERIFY(admin
                    .exec("SELECT redrive.change_approval_threshold(gen_random_uuid(),"
                          " 'default', 12345, 'new default')")
                    .ok());
        QCOMPARE(count("SELECT compensation_approval_minor FROM redrive.settings"), 12345);
        QVERIFY(admin
                    .exec("SELECT redrive.change_setting(gen_random_uuid(),"
                          " 'compensation_approval_cents', '10000', 'setting by its old name')")
                    .ok());
        QCOMPARE(count("SELECT threshold_minor FROM redrive.approval_threshold"
                       " WHERE currency = 'default'"),
                 10000);
        QCOMPARE(count("SELECT count(*) FROM redrive.audit_log WHERE action LIKE '%directly'"), 0);
        // The owner writing the table directly is audited.
        q("UPDATE redrive.approval_threshold SET threshold_minor = 1 WHERE currency = 'GBP'");
        QCOMPARE(count("SELECT count(*) FROM redrive.audit_log"
                       " WHERE action = 'approval_threshold_changed_directly'"
                       " AND (before ->> 'threshold_minor')::bigint = 25000"
                       " AND (after ->> 'threshold_minor')::bigint = 1"),
                 1);
        QVERIFY(!m_admin.exec("TRUNCATE redrive.approval_threshold").ok());
        q("DELETE FROM redrive.approval_threshold WHERE currency = 'GBP'");
    }

    // A request in a currency Redrive does not know is refused, never guessed.
    void unknownCurrencyIsRefused()
    {
        payment(QStringLiteral("pay_xyz"), 5000, QStringLiteral("XYZ"));
        const auto dl = deadLetter(QStringLiteral("pay_xyz"));
        PgConnection sue = as(m_support);
        auto r = request(sue, dl.first, dl.second, 100);
        QCOMPARE(stateOf(r), QStringLiteral("22023"));
        QVERIFY2(r.error().message().contains(QStringLiteral("unknown currency XYZ")),
                 qPrintable(r.error().summary()));
        QCOMPARE(count("SELECT count(*) FROM redrive.compensation_request"
                       " WHERE payment_ref = 'pay_xyz'"),
                 0);
    }

    // A double charge: the compensation from the mismatch refunds the second charge, its
    // amount by default, and names mismatch, payment, order, amount and currency in the audit.
    void refundFromADuplicateChargeTargetsTheDuplicate()
    {
        const QString pay = QStringLiteral("pay_dup");
        payment(pay, 7000, QStringLiteral("JPY"));
        q("INSERT INTO public.money_extra_charge VALUES ('pay_dup', 'ch_pay_dup_2', 7000, 0,"
          " 'JPY', '2026-01-01 10:05Z')");
        const auto mm = mismatch(QStringLiteral("duplicate_external"), pay, 7000, 7000,
                                 QStringLiteral("JPY"), QStringLiteral("ch_pay_dup_2"));
        // Both charges side by side.
        const ResultSet side = q("SELECT original_charge_ref, other_charge_ref, suggested_minor,"
                                 " other_charged_at FROM redrive.mismatch_charge_list"
                                 " WHERE mismatch_id = $1",
                                 QueryParams().addBigInt(mm.first));
        QCOMPARE(side.text(0, 0), QStringLiteral("ch_pay_dup"));
        QCOMPARE(side.text(0, 1), QStringLiteral("ch_pay_dup_2"));
        QCOMPARE(side.bigInt(0, 2), std::optional<qint64>(7000));
        QVERIFY(!side.isNull(0, 3));

        PgConnection sue = as(m_support);
        QCOMPARE(stateOf(requestFromMismatch(sue, mm.first, mm.second, 7001)),
                 QStringLiteral("23514"));
        const QJsonObject o = outcomeOf(requestFromMismatch(sue, mm.first, mm.second, {}));
        QCOMPARE(o.value(QStringLiteral("applied")).toInt(), 1);
        QCOMPARE(o.value(QStringLiteral("amount_minor")).toInteger(), qint64(7000));
        QCOMPARE(o.value(QStringLiteral("charge_ref")).toString(), QStringLiteral("ch_pay_dup_2"));
        QCOMPARE(o.value(QStringLiteral("currency")).toString(), QStringLiteral("JPY"));
        const qint64 request = qint64(o.value(QStringLiteral("compensation_id")).toInteger());
        const ResultSet row = q("SELECT target_type, target_id, charge_ref, amount_minor, currency"
                                " FROM redrive.compensation_request WHERE id = $1",
                                QueryParams().addBigInt(request));
        QCOMPARE(row.text(0, 0), QStringLiteral("mismatch"));
        QCOMPARE(row.bigInt(0, 1), std::optional<qint64>(mm.first));
        QCOMPARE(row.text(0, 2), QStringLiteral("ch_pay_dup_2"));
        QCOMPARE(row.bigInt(0, 3), std::optional<qint64>(7000));
        const ResultSet audit
            = q("SELECT after ->> 'payment_ref', after ->> 'order_ref', after ->> 'amount_minor',"
                " after ->> 'currency', after ->> 'mismatch_kind'"
                "  FROM redrive.audit_log WHERE action = 'compensate_request'"
                "   AND targets @> jsonb_build_array(jsonb_build_object('type', 'mismatch',"
                "                                                       'id', $1::bigint))",
                QueryParams().addBigInt(mm.first));
        QCOMPARE(audit.rowCount(), 1);
        QCOMPARE(audit.text(0, 0), pay);
        QCOMPARE(audit.text(0, 1), QStringLiteral("ord_pay_dup"));
        QCOMPARE(audit.text(0, 2), QStringLiteral("7000"));
        QCOMPARE(audit.text(0, 3), QStringLiteral("JPY"));
        QCOMPARE(audit.text(0, 4), QStringLiteral("duplicate_external"));
        // ¥7,000 is under the default threshold: the worker is told to refund the duplicate.
        QCOMPARE(q("SELECT payload ->> 'charge_ref' FROM redrive.outbox"
                   " WHERE command = 'compensate' AND target_id = $1::text",
                   QueryParams().addBigInt(request))
                     .text(0, 0),
                 QStringLiteral("ch_pay_dup_2"));
    }

    // An amount mismatch: the refund is the difference, by default and at most.
    void amountMismatchRefundsTheDifferenceExactly()
    {
        payment(QStringLiteral("pay_amt"), 12750, QStringLiteral("KWD"));
        const auto mm = mismatch(QStringLiteral("amount_mismatch"), QStringLiteral("pay_amt"),
                                 12500, 12750, QStringLiteral("KWD"), QStringLiteral("ch_pay_amt"));
        PgConnection sue = as(m_support);
        QCOMPARE(stateOf(requestFromMismatch(sue, mm.first, mm.second, 251)),
                 QStringLiteral("23514"));
        QCOMPARE(stateOf(requestFromMismatch(sue, mm.first, mm.second, 12750)),
                 QStringLiteral("23514"));
        const QJsonObject o = outcomeOf(requestFromMismatch(sue, mm.first, mm.second, {}));
        QCOMPARE(o.value(QStringLiteral("applied")).toInt(), 1);
        QCOMPARE(o.value(QStringLiteral("amount_minor")).toInteger(), qint64(250));
        QCOMPARE(o.value(QStringLiteral("currency")).toString(), QStringLiteral("KWD"));

        // The provider charged less than our ledger: nothing to refund.
        payment(QStringLiteral("pay_under"), 9000, QStringLiteral("USD"));
        const auto under
            = mismatch(QStringLiteral("amount_mismatch"), QStringLiteral("pay_under"), 9250, 9000,
                       QStringLiteral("USD"), QStringLiteral("ch_pay_under"));
        QCOMPARE(stateOf(requestFromMismatch(sue, under.first, under.second, {})),
                 QStringLiteral("23514"));
        // Other kinds are not refunded from the mismatch.
        payment(QStringLiteral("pay_status"), 9000, QStringLiteral("USD"));
        const auto status
            = mismatch(QStringLiteral("status_mismatch"), QStringLiteral("pay_status"), 9000, 9000,
                       QStringLiteral("USD"), QStringLiteral("ch_pay_status"));
        QCOMPARE(stateOf(requestFromMismatch(sue, status.first, status.second, {})),
                 QStringLiteral("22023"));
    }

    // An executed refund counts against what is refundable exactly once: before the provider's
    // ledger shows it (the compensation is done, the ledger not yet) and after.
    void executedRefundCountsOnceBeforeAndAfterTheProviderLedger()
    {
        const QString pay = QStringLiteral("pay_edge");
        payment(pay, 10000, QStringLiteral("USD"));
        const auto first = deadLetter(pay);
        const auto second = deadLetter(pay);
        PgConnection sue = as(m_support);
        QCOMPARE(outcomeOf(request(sue, first.first, first.second, 3000))
                     .value(QStringLiteral("applied"))
                     .toInt(),
                 1);
        QCOMPARE(count("SELECT redrive.refundable_minor($1)", QueryParams().addText(pay)), 7000);
        QCOMPARE(workerCompletes(pay), 1);
        const QString refundRef
            = q("SELECT provider_ref FROM redrive.compensation_request WHERE payment_ref = $1",
                QueryParams().addText(pay))
                  .text(0, 0);
        // Done, not yet in the provider's ledger: still counted (the old name is the same
        // function).
        QCOMPARE(count("SELECT redrive.refundable_minor($1)", QueryParams().addText(pay)), 7000);
        QCOMPARE(count("SELECT redrive.refundable_minor($1)", QueryParams().addText(pay)), 7000);
        // The ledger catches up: counted once, through what the provider refunded.
        q("UPDATE public.money_payment SET refunded = 3000 WHERE payment_ref = $1",
          QueryParams().addText(pay));
        q("INSERT INTO public.money_refund VALUES ($1, 'ch_' || $1, $2, 3000, now())",
          QueryParams().addText(pay).addText(refundRef));
        QCOMPARE(count("SELECT redrive.refundable_minor($1)", QueryParams().addText(pay)), 7000);
        QCOMPARE(
            count("SELECT redrive.refundable_minor($1, 'ch_' || $1)", QueryParams().addText(pay)),
            7000);
        // So exactly the rest can still be requested.
        QCOMPARE(stateOf(request(sue, second.first, second.second, 7001)), QStringLiteral("23514"));
        QCOMPARE(outcomeOf(request(sue, second.first, second.second, 7000))
                     .value(QStringLiteral("applied"))
                     .toInt(),
                 1);
    }
    // Migration 21 renamed request_compensation's p_amount_cents to p_amount_minor (dropped and
    // created again). Called by its parameters' names, as every login over TCP: only support may
    // request, only another person with the approver role may approve, one open compensation per
    // payment, never more than is refundable, and the threshold of the payment's own currency
    // decides whether a second person must approve. The old parameter name no longer resolves.
    void renamedParameterKeepsEveryMoneyRule()
    {
        setThreshold(QStringLiteral("JPY"), 10000);
        setThreshold(QStringLiteral("KWD"), 50000);
        const QString yen = QStringLiteral("pay_renamed_jpy");
        const QString dinar = QStringLiteral("pay_renamed_kwd");
        payment(yen, 30000, QStringLiteral("JPY")); // ¥30,000
        payment(dinar, 90000, QStringLiteral("KWD")); // 90.000 KWD
        const auto yenDl = deadLetter(yen);
        const auto yenDl2 = deadLetter(yen);
        const auto dinarDl = deadLetter(dinar);
        auto named = [](PgConnection &c, std::pair<qint64, int> dl, qint64 amount,
                        const char *amountParameter = "p_amount_minor") {
            return c.exec(QByteArray("SELECT redrive.request_compensation(p_action_id =>"
                                     " gen_random_uuid(), p_target_type => 'dead_letter',"
                                     " p_target_id => $1, p_version => $2, p_kind => 'refund', ")
                              + amountParameter
                              + " => $3, p_reason => 'customer was charged twice')",
                          QueryParams().addBigInt(dl.first).addInt(dl.second).addBigInt(amount));
        };
        PgConnection sue = as(m_support);
        PgConnection sam = as(m_support2);
        PgConnection ann = as(m_approver);
        PgConnection worker = as(m_worker);
        PgConnection nobody = as(m_nobody);
        PgConnection both = as(m_both);

        // Other roles: refused before anything is read (EXECUTE is support's alone).
        QCOMPARE(stateOf(named(ann, yenDl, 100)), QStringLiteral("42501"));
        QCOMPARE(stateOf(named(worker, yenDl, 100)), QStringLiteral("42501"));
        QCOMPARE(stateOf(named(nobody, yenDl, 100)), QStringLiteral("42501"));
        // The old name is no parameter of the function any more.
        QCOMPARE(stateOf(named(sue, yenDl, 100, "p_amount_cents")), QStringLiteral("42883"));
        // More than the payment's ¥30,000: refused, nothing written.
        QCOMPARE(stateOf(named(sue, yenDl, 30001)), QStringLiteral("23514"));
        QCOMPARE(count("SELECT count(*) FROM redrive.compensation_request WHERE payment_ref = $1",
                       QueryParams().addText(yen)),
                 0);

        // ¥9,999 is under JPY's ¥10,000: no second person; the audit entry and the outbox
        // command say amount_minor, and no longer amount_cents.
        QJsonObject o = outcomeOf(named(sue, yenDl, 9999));
        QCOMPARE(o.value(QStringLiteral("applied")).toInt(), 1);
        QCOMPARE(o.value(QStringLiteral("requires_approval")).toBool(), false);
        QCOMPARE(o.value(QStringLiteral("amount_minor")).toInteger(), 9999);
        const qint64 yenRequest = o.value(QStringLiteral("compensation_id")).toInteger();
        QCOMPARE(count("SELECT count(*) FROM redrive.audit_log WHERE action = 'compensate_request'"
                       " AND after ->> 'payment_ref' = $1"
                       " AND (after ->> 'amount_minor')::bigint = 9999"
                       " AND (after ->> 'threshold_minor')::bigint = 10000"
                       " AND NOT after ? 'amount_cents'",
                       QueryParams().addText(yen)),
                 1);
        QCOMPARE(
            count("SELECT (payload ->> 'amount_minor')::bigint + (payload ? 'amount_cents')::int"
                  "  FROM redrive.outbox WHERE command = 'compensate' AND target_id = $1",
                  QueryParams().addText(QString::number(yenRequest))),
            9999);
        // One open compensation per payment: a second person's request on the same payment waits
        // for the first.
        QCOMPARE(stateOf(named(sam, yenDl2, 1)), QStringLiteral("23505"));
        QCOMPARE(workerCompletes(yen), 1);
        // ¥9,999 done plus ¥1 reaches JPY's threshold: this one needs a second person.
        o = outcomeOf(named(sam, yenDl2, 1));
        QCOMPARE(o.value(QStringLiteral("requires_approval")).toBool(), true);

        // 50.000 KWD is KWD's threshold: waits for a second person.
        o = outcomeOf(named(both, dinarDl, 50000));
        QCOMPARE(o.value(QStringLiteral("applied")).toInt(), 1);
        QCOMPARE(o.value(QStringLiteral("requires_approval")).toBool(), true);
        QCOMPARE(o.value(QStringLiteral("currency")).toString(), QStringLiteral("KWD"));
        const qint64 dinarRequest = o.value(QStringLiteral("compensation_id")).toInteger();
        auto decide = [&](PgConnection &c, bool approve) {
            const int version = int(count("SELECT version FROM redrive.compensation_request"
                                          " WHERE id = $1",
                                          QueryParams().addBigInt(dinarRequest)));
            return c.exec("SELECT redrive.decide_compensation(p_action_id => gen_random_uuid(),"
                          " p_request => $1, p_version => $2, p_approve => $3,"
                          " p_reason => 'checked with the customer')",
                          QueryParams().addBigInt(dinarRequest).addInt(version).addBool(approve));
        };
        // Not by the person who asked, though they hold the approver role; not by support, the
        // worker or a login with no role.
        QCOMPARE(stateOf(decide(both, true)), QStringLiteral("42501"));
        QCOMPARE(stateOf(decide(sue, true)), QStringLiteral("42501"));
        QCOMPARE(stateOf(decide(worker, true)), QStringLiteral("42501"));
        QCOMPARE(stateOf(decide(nobody, true)), QStringLiteral("42501"));
        QCOMPARE(count("SELECT count(*) FROM redrive.outbox o JOIN redrive.compensation_request c"
                       " ON o.target_id = c.id::text WHERE c.payment_ref = $1",
                       QueryParams().addText(dinar)),
                 0);
        // A second person approves: the command carries exactly 50.000 KWD in minor units.
        QCOMPARE(outcomeOf(decide(ann, true)).value(QStringLiteral("amount_minor")).toInteger(),
                 50000);
        QCOMPARE(
            count("SELECT (payload ->> 'amount_minor')::bigint + (payload ? 'amount_cents')::int"
                  "  FROM redrive.outbox WHERE command = 'compensate' AND target_id = $1",
                  QueryParams().addText(QString::number(dinarRequest))),
            50000);
        QCOMPARE(count("SELECT amount_minor FROM redrive.compensation_list WHERE id = $1",
                       QueryParams().addBigInt(dinarRequest)),
                 50000);
    }
};

QTEST_GUILESS_MAIN(TestMoneyRules)
#include "tst_money_rules.moc"
