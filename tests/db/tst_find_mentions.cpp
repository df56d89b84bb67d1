// SPDX-License-Identifier: GPL-3.0-or-later
// The customer search (docs/domain.md#finding-a-customer): redrive.find_mentions through the
// console's named statement, as real logins over TCP with passwords. Exact hits per kind on a
// hand-made world (an order number, a payment reference, an e-mail address, a provider charge
// id; every character literal, case-insensitive, never inside a longer number), what each role
// gets (a role that cannot read a kind gets none of it, a login with no role nothing), and on the
// demo world an order number that appears in a dead letter, a mismatch and (after support's note)
// an audit entry gives exactly the hits an independent scan of every row finds.
#include "models/db/schema_migrator.h"
#include "models/db/sql_statement.h"
#include "models/worker/demo_world.h"
#include "tests/support/test_database.h"

#include <QCoreApplication>
#include <QRegularExpression>
#include <QTest>
#include <QUuid>

using namespace redrive;
using namespace redrive::db;

namespace {

const QString kPassword = QStringLiteral("f1nd-pw");

using Hits = QMap<QString, QList<qint64>>; // kind -> ids, ascending

Hits hitsOf(const ResultSet &rows)
{
    Hits hits;
    for (int r = 0; r < rows.rowCount(); ++r)
        hits[rows.text(r, QStringLiteral("kind"))].append(
            rows.bigInt(r, rows.columnIndex(QStringLiteral("id"))).value_or(0));
    for (auto &ids : hits)
        std::sort(ids.begin(), ids.end());
    return hits;
}

QString describe(const Hits &hits)
{
    QStringList parts;
    for (auto it = hits.begin(); it != hits.end(); ++it) {
        QStringList ids;
        for (qint64 id : it.value())
            ids << QString::number(id);
        parts << it.key() + QLatin1Char('=') + ids.join(QLatin1Char(','));
    }
    return parts.join(QLatin1Char(' '));
}

bool isWordChar(QChar c)
{
    return c.isLetterOrNumber();
}

// The rule, written independently of the SQL: `term` occurs in `text` ignoring case, and where
// it begins (ends) with a letter or digit the character before (after) it is not one.
bool mentions(const QString &text, const QString &term)
{
    if (text.isEmpty())
        return false;
    for (qsizetype at = text.indexOf(term, 0, Qt::CaseInsensitive); at >= 0;
         at = text.indexOf(term, at + 1, Qt::CaseInsensitive)) {
        const qsizetype end = at + term.size();
        const bool startOk = !isWordChar(term.front()) || at == 0 || !isWordChar(text.at(at - 1));
        const bool endOk
            = !isWordChar(term.back()) || end == text.size() || !isWordChar(text.at(end));
        if (startOk && endOk)
            return true;
    }
    return false;
}

} // namespace

class TestFindMentions : public QObject
{
    Q_OBJECT
private:
    std::unique_ptr<test::TestDatabase> m_db;
    PgConnection m_super;
    QString m_support, m_auditor, m_worker, m_admin, m_nobody;
    qint64 m_dlA = 0, m_dlB = 0, m_dlC = 0, m_mmA = 0, m_mmB = 0, m_comp = 0, m_note = 0;

    ResultSet q(PgConnection &c, const QByteArray &sql, const QueryParams &params = {})
    {
        auto r = c.exec(sql, params);
        if (!r)
            qFatal("%s: %s", sql.constData(), qPrintable(r.error().summary()));
        return r.value();
    }

    PgConnection as(const QString &login)
    {
        return test::TestDatabase::connectWith(m_db->consoleTcpSettingsAs(login, kPassword));
    }

    DbExpected<ResultSet> search(PgConnection &c, const QString &term, int perKind = 100)
    {
        return c.exec(statementSql(Statement::FindMentions),
                      QueryParams().addText(term).addInt(perKind));
    }

    Hits hits(PgConnection &c, const QString &term)
    {
        auto r = search(c, term);
        if (!r) {
            qWarning("search %s: %s", qPrintable(term), qPrintable(r.error().summary()));
            return { { QStringLiteral("error"), {} } };
        }
        return hitsOf(*r);
    }

    // A dead letter of a charge job for `payment` with `payload`, `lastError` and key; its id.
    qint64 deadLetter(const QString &payment, const QByteArray &payload, const QString &lastError)
    {
        return q(m_super,
                 "WITH j AS (INSERT INTO redrive.job (queue, kind, payload, state, entity_id,"
                 "                                    idempotency_key)"
                 "           VALUES ('payments', 'charge_card', $2::jsonb, 'dead', $1,"
                 "                   'charge:' || $1) RETURNING id, queue, kind, idempotency_key)"
                 "INSERT INTO redrive.dead_letter (job_id, queue, kind, error_class, error_code,"
                 "                                 last_error, idempotency_key)"
                 "SELECT id, queue, kind, 'ambiguous', 'timeout', $3, idempotency_key FROM j"
                 " RETURNING id",
                 QueryParams()
                     .addText(payment)
                     .addText(QString::fromUtf8(payload))
                     .addText(lastError))
            .bigInt(0, 0)
            .value_or(0);
    }

    qint64 mismatch(const QString &payment, const QString &order, const QString &externalCharge)
    {
        return q(m_super,
                 "WITH run AS (INSERT INTO redrive.reconciliation_run (provider) VALUES ('test')"
                 "             RETURNING id)"
                 "INSERT INTO redrive.reconciliation_mismatch (run_id, kind, payment_ref,"
                 "       order_ref, internal_amount_minor, external_amount_minor,"
                 "       internal_currency, external_currency, external_record,"
                 "       internal_charge_ref, external_charge_ref)"
                 "SELECT run.id, 'duplicate_external', $1, $2, 1500, 1500, 'JPY', 'JPY',"
                 "       jsonb_build_object('id', $3::text), 'ch_' || $1, $3 FROM run"
                 " RETURNING id",
                 QueryParams().addText(payment).addText(order).addText(externalCharge))
            .bigInt(0, 0)
            .value_or(0);
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_db = std::make_unique<test::TestDatabase>(QStringLiteral("find_mentions"));
        QVERIFY2(m_db->isValid(), qPrintable(m_db->error()));
        m_super = m_db->connect();
        m_support = m_db->createLogin(QStringLiteral("fm_support"),
                                      { QStringLiteral("redrive_support") }, kPassword);
        m_auditor = m_db->createLogin(QStringLiteral("fm_auditor"),
                                      { QStringLiteral("redrive_auditor") }, kPassword);
        m_worker = m_db->createLogin(QStringLiteral("fm_worker"),
                                     { QStringLiteral("redrive_worker") }, kPassword);
        m_admin = m_db->createLogin(QStringLiteral("fm_admin"), { QStringLiteral("redrive_admin") },
                                    kPassword);
        m_nobody = m_db->createLogin(QStringLiteral("fm_nobody"), {}, kPassword);

        // A: the customer's dead letter; B: a payment whose number merely begins with A's;
        // C: an order whose id matches "ord_7001" only if '_' were a wildcard.
        m_dlA = deadLetter(QStringLiteral("pay_7001"),
                           "{\"order_id\": \"ord_7001\", \"email\": \"Ana.ONeil@example.com\","
                           " \"note\": \"say \\\"hi\\\"\"}",
                           QStringLiteral("provider charge ch_7001 timed out"));
        m_dlB = deadLetter(QStringLiteral("pay_70011"), "{\"order_id\": \"ord_70011\"}",
                           QStringLiteral("card declined"));
        m_dlC = deadLetter(QStringLiteral("pay_8001"), "{\"order_id\": \"ordX7001\"}",
                           QStringLiteral("ord%7001 is not an order"));
        m_mmA = mismatch(QStringLiteral("pay_7001"), QStringLiteral("ord_7001"),
                         QStringLiteral("ch_7001b"));
        m_mmB = mismatch(QStringLiteral("pay_70011"), QStringLiteral("ord_70011"),
                         QStringLiteral("ch_70011b"));
        m_comp = q(m_super,
                   "INSERT INTO redrive.compensation_request (target_type, target_id, kind,"
                   "       payment_ref, amount_minor, currency, status, requires_approval,"
                   "       requested_by, reason, ticket, action_id, charge_ref)"
                   "VALUES ('mismatch', $1, 'refund', 'pay_7001', 1500, 'JPY', 'pending_approval',"
                   "        true, 'someone', 'Ana.ONeil@example.com was charged twice',"
                   "        'SUP-1', gen_random_uuid(), 'ch_7001b') RETURNING id",
                   QueryParams().addBigInt(m_mmA))
                     .bigInt(0, 0)
                     .value_or(0);
        // An audit entry written the way support writes one: a note through its function.
        PgConnection support = as(m_support);
        auto note = support.exec(
            statementSql(Statement::ActionNote),
            QueryParams()
                .addText(QUuid::createUuid().toString(QUuid::WithoutBraces))
                .addText(QStringLiteral("dead_letter"))
                .addText(QString::number(m_dlA))
                .addText(QStringLiteral("Customer called about ORD_7001, wants a refund"))
                .addText(QStringLiteral("tester")));
        QVERIFY2(note, qPrintable(note ? QString() : note.error().summary()));
        m_note = q(m_super, "SELECT max(id) FROM redrive.audit_log").bigInt(0, 0).value_or(0);
        QVERIFY(m_dlA > 0 && m_dlB > 0 && m_dlC > 0 && m_mmA > 0 && m_comp > 0 && m_note > 0);
    }

    // Exact hits per kind for support (who may read every kind).
    void exactHitsPerTerm_data()
    {
        QTest::addColumn<QString>("term");
        QTest::addColumn<QString>("expected"); // describe() of the hits, with the ids below
        QTest::newRow("order number")
            << QStringLiteral("ord_7001")
            << QStringLiteral("audit_entry=NOTE dead_letter=A mismatch=M");
        QTest::newRow("order number, other case, blanks around")
            << QStringLiteral("  ORD_7001 ")
            << QStringLiteral("audit_entry=NOTE dead_letter=A mismatch=M");
        QTest::newRow("payment reference")
            << QStringLiteral("pay_7001")
            << QStringLiteral("compensation=C dead_letter=A mismatch=M");
        QTest::newRow("the longer payment is its own")
            << QStringLiteral("pay_70011") << QStringLiteral("dead_letter=B mismatch=MB");
        QTest::newRow("e-mail address") << QStringLiteral("ana.oneil@example.com")
                                        << QStringLiteral("compensation=C dead_letter=A");
        QTest::newRow("not inside a longer address")
            << QStringLiteral("na.oneil@example.com") << QString();
        QTest::newRow("provider charge id")
            << QStringLiteral("ch_7001b") << QStringLiteral("compensation=C mismatch=M");
        QTest::newRow("'_' is not a wildcard")
            << QStringLiteral("ordX7001") << QStringLiteral("dead_letter=CC");
        QTest::newRow("'%' is not a wildcard")
            << QStringLiteral("ord%7001") << QStringLiteral("dead_letter=CC");
        QTest::newRow("'%' does not match anything") << QStringLiteral("pay%7001") << QString();
        QTest::newRow("a quote inside JSON text")
            << QStringLiteral("say \"hi\"") << QStringLiteral("dead_letter=A");
        QTest::newRow("nothing") << QStringLiteral("ord_9999") << QString();
    }
    void exactHitsPerTerm()
    {
        QFETCH(QString, term);
        QFETCH(QString, expected);
        expected.replace(QStringLiteral("NOTE"), QString::number(m_note))
            .replace(QStringLiteral("=MB"), QLatin1Char('=') + QString::number(m_mmB))
            .replace(QStringLiteral("=M"), QLatin1Char('=') + QString::number(m_mmA))
            .replace(QStringLiteral("=CC"), QLatin1Char('=') + QString::number(m_dlC))
            .replace(QStringLiteral("=C"), QLatin1Char('=') + QString::number(m_comp))
            .replace(QStringLiteral("=A"), QLatin1Char('=') + QString::number(m_dlA))
            .replace(QStringLiteral("=B"), QLatin1Char('=') + QString::number(m_dlB));
        PgConnection support = as(m_support);
        QCOMPARE(describe(hits(support, term)), expected);
    }

    // Each row says how many hits its kind has, and the amounts come in minor units with the
    // currency; the order of kinds is fixed and the rows per kind are capped.
    void rowsCarryCountsAmountsAndRuns()
    {
        PgConnection support = as(m_support);
        auto r = search(support, QStringLiteral("pay_7001"));
        QVERIFY(r);
        QCOMPARE(r->rowCount(), 3);
        QCOMPARE(r->text(0, QStringLiteral("kind")), QStringLiteral("dead_letter"));
        QCOMPARE(r->text(1, QStringLiteral("kind")), QStringLiteral("mismatch"));
        QCOMPARE(r->text(2, QStringLiteral("kind")), QStringLiteral("compensation"));
        QCOMPARE(r->text(1, QStringLiteral("amount_minor")), QStringLiteral("1500"));
        QCOMPARE(r->text(1, QStringLiteral("currency")), QStringLiteral("JPY"));
        QCOMPARE(r->text(1, QStringLiteral("order_ref")), QStringLiteral("ord_7001"));
        QCOMPARE(r->text(1, QStringLiteral("run_id")),
                 q(m_super,
                   "SELECT run_id::text FROM redrive.reconciliation_mismatch WHERE id = $1",
                   QueryParams().addBigInt(m_mmA))
                     .text(0, 0));
        QCOMPARE(r->text(2, QStringLiteral("amount_minor")), QStringLiteral("1500"));
        QCOMPARE(r->text(0, QStringLiteral("order_ref")), QStringLiteral("ord_7001"));
        QCOMPARE(r->text(0, QStringLiteral("payment_ref")), QStringLiteral("pay_7001"));
        for (int row = 0; row < 3; ++row)
            QCOMPARE(r->text(row, QStringLiteral("kind_total")), QStringLiteral("1"));

        // Three dead letters have a key beginning "charge:pay"; with one row per kind asked
        // for, the newest comes and the count still says three.
        auto capped = search(support, QStringLiteral("charge:pay"), 1);
        QVERIFY(capped);
        QVERIFY(capped->rowCount() >= 1);
        QCOMPARE(capped->text(0, QStringLiteral("kind")), QStringLiteral("dead_letter"));
        QCOMPARE(capped->text(0, QStringLiteral("kind_total")), QStringLiteral("3"));
        QCOMPARE(capped->bigInt(0, 1).value_or(0), m_dlC); // the newest
        for (int row = 1; row < capped->rowCount(); ++row)
            QVERIFY(capped->text(row, QStringLiteral("kind")) != QLatin1String("dead_letter"));
    }

    void termsThatCannotBeSearchedAreRefused_data()
    {
        QTest::addColumn<QString>("term");
        QTest::newRow("two characters") << QStringLiteral("or");
        QTest::newRow("blank") << QStringLiteral("   ");
        QTest::newRow("a control character") << QStringLiteral("ord\n7001");
        // Longer terms made one call run for tens of seconds (the regular expression grows with
        // the term, matching with its square).
        QTest::newRow("201 characters") << QString(201, QLatin1Char('a'));
    }
    void termsThatCannotBeSearchedAreRefused()
    {
        QFETCH(QString, term);
        PgConnection support = as(m_support);
        auto r = search(support, term);
        QVERIFY(!r);
        QCOMPARE(r.error().sqlState(), QStringLiteral("22023"));
    }

    // What each role gets is what it may read: the worker has no SELECT on compensation_list,
    // the admin reads none of the four lists, and a login with no role is refused outright.
    void eachRoleGetsOnlyTheKindsItMayRead()
    {
        const QString full = QStringLiteral("compensation=%1 dead_letter=%2 mismatch=%3")
                                 .arg(m_comp)
                                 .arg(m_dlA)
                                 .arg(m_mmA);
        PgConnection support = as(m_support);
        QCOMPARE(describe(hits(support, QStringLiteral("pay_7001"))), full);
        PgConnection auditor = as(m_auditor);
        QCOMPARE(describe(hits(auditor, QStringLiteral("pay_7001"))), full);

        PgConnection worker = as(m_worker);
        QCOMPARE(q(worker, "SELECT has_table_privilege('redrive.compensation_list', 'SELECT')")
                     .text(0, 0),
                 QStringLiteral("f"));
        QCOMPARE(describe(hits(worker, QStringLiteral("pay_7001"))),
                 QStringLiteral("dead_letter=%1 mismatch=%2").arg(m_dlA).arg(m_mmA));
        // Nor audit entries, which record compensations' payments, amounts and reasons: the
        // worker may read audit_entry_list, but the search gives audit entries only to a role
        // that may read the compensations too. Support gets the note's entry.
        QCOMPARE(q(worker, "SELECT has_table_privilege('redrive.audit_entry_list', 'SELECT')")
                     .text(0, 0),
                 QStringLiteral("t"));
        QCOMPARE(describe(hits(worker, QStringLiteral("ord_7001"))),
                 QStringLiteral("dead_letter=%1 mismatch=%2").arg(m_dlA).arg(m_mmA));
        QCOMPARE(describe(hits(support, QStringLiteral("ord_7001"))),
                 QStringLiteral("audit_entry=%1 dead_letter=%2 mismatch=%3")
                     .arg(m_note)
                     .arg(m_dlA)
                     .arg(m_mmA));

        PgConnection admin = as(m_admin);
        QCOMPARE(describe(hits(admin, QStringLiteral("pay_7001"))), QString());
        QCOMPARE(describe(hits(admin, QStringLiteral("ord_7001"))), QString());

        PgConnection nobody = as(m_nobody);
        // Without USAGE on the schema the console's unqualified statement finds no function
        // (42883), and the function named in full is refused (42501).
        auto refused = search(nobody, QStringLiteral("pay_7001"));
        QVERIFY(!refused);
        QCOMPARE(refused.error().sqlState(), QStringLiteral("42883"));
        // Nor can it read around the function.
        auto direct = nobody.exec("SELECT * FROM redrive.find_mentions('pay_7001', 10)");
        QVERIFY(!direct);
        QCOMPARE(direct.error().sqlState(), QStringLiteral("42501"));
    }

    // The indexes serve the search: each kind's candidates come from a bitmap index scan.
    void theSearchUsesTheIndexes()
    {
        q(m_super, "ANALYZE");
        const QByteArray expressions[] = {
            "SELECT x.id FROM redrive.dead_letter_detail x WHERE (coalesce(x.entity_id, '') ||"
            " E'\\x1f' || coalesce(x.payload_text, '')) ILIKE '%pay\\_7001%'",
            "SELECT s.id FROM (SELECT m.id, coalesce(m.payment_ref, '') || E'\\x1f' ||"
            " coalesce(m.order_ref, '') || E'\\x1f' || coalesce(m.internal_charge_ref, '') ||"
            " E'\\x1f' || coalesce(m.external_charge_ref, '') || E'\\x1f' ||"
            " coalesce(m.internal_record, '') || E'\\x1f' || coalesce(m.external_record, '')"
            " AS doc FROM redrive.mismatch_list m) s WHERE s.doc ILIKE '%pay\\_7001%'",
            "SELECT s.id FROM (SELECT e.id, coalesce(e.targets_text, '') || E'\\x1f' ||"
            " coalesce(e.before_text, '') || E'\\x1f' || coalesce(e.after_text, '') || E'\\x1f'"
            " || coalesce(e.outcome_text, '') || E'\\x1f' || coalesce(e.reason, '') || E'\\x1f'"
            " || coalesce(e.ticket, '') AS doc FROM redrive.audit_entry_list e) s"
            " WHERE s.doc ILIKE '%pay\\_7001%'",
        };
        // The hand-made world is tiny: without a full scan or a primary-key walk to fall back
        // on, the planner shows which index serves the condition.
        q(m_super, "SET enable_seqscan = off");
        q(m_super, "SET enable_indexscan = off");
        for (const QByteArray &sql : expressions) {
            const ResultSet plan = q(m_super, "EXPLAIN " + sql);
            QString text;
            for (int r = 0; r < plan.rowCount(); ++r)
                text += plan.text(r, 0) + QLatin1Char('\n');
            // The audit log is partitioned by month (docs/architecture.md#partitions): each
            // month's copy of its trigram index is named by PostgreSQL
            // (audit_log_YYYY_MM_expr_idx).
            static const QRegularExpression trigram(QStringLiteral(
                "Index Scan on (\\w*mention_trgm_idx|audit_log_\\d{4}_\\d{2}_expr_idx)"));
            QVERIFY2(text.contains(trigram) && !text.contains(QLatin1String("Seq Scan")),
                     qPrintable(text));
        }
        q(m_super, "RESET enable_seqscan");
        q(m_super, "RESET enable_indexscan");
    }

    // On the demo world: an order number that appears in a dead letter, a mismatch and an audit
    // entry gives exactly the rows that mention it, found here by scanning every row in C++.
    void demoWorldOrderNumberGivesExactlyItsRows()
    {
        test::TestDatabase demo(QStringLiteral("find_mentions_demo"));
        QVERIFY2(demo.isValid(), qPrintable(demo.error()));
        PgConnection conn = demo.connect();
        QVERIFY(SchemaMigrator(conn, MigrationSet::simulatedWorld()).migrate());
        worker::DemoOptions options;
        options.seed = 11;
        options.orders = 300;
        auto built = worker::DemoWorldGenerator(conn, options).generate();
        QVERIFY2(built, qPrintable(built ? QString() : built.error().summary()));
        const QString login = demo.createLogin(QStringLiteral("fm_demo_support"),
                                               { QStringLiteral("redrive_support") }, kPassword);
        PgConnection support
            = test::TestDatabase::connectWith(demo.consoleTcpSettingsAs(login, kPassword));

        // An order with a dead letter and a mismatch, and support's note about it on the dead
        // letter (an audit entry that mentions it, as support writes one).
        auto chosen = conn.exec("SELECT m.order_ref, d.id FROM redrive.reconciliation_mismatch m"
                                "  JOIN redrive.job j ON j.payload ->> 'order_id' = m.order_ref"
                                "  JOIN redrive.dead_letter d ON d.job_id = j.id"
                                " ORDER BY m.id, d.id LIMIT 1");
        QVERIFY(chosen);
        QVERIFY2(chosen->rowCount() == 1,
                 "the demo world has no order in a dead letter and a mismatch");
        const QString term = chosen->text(0, 0);
        auto note
            = support.exec(statementSql(Statement::ActionNote),
                           QueryParams()
                               .addText(QUuid::createUuid().toString(QUuid::WithoutBraces))
                               .addText(QStringLiteral("dead_letter"))
                               .addText(chosen->text(0, 1))
                               .addText(QStringLiteral("Customer called about order %1").arg(term))
                               .addText(QStringLiteral("tester")));
        QVERIFY(note);

        // The oracle: every row of every kind, checked by mentions().
        Hits expected;
        auto scan = [&](const QString &kind, const QByteArray &sql) {
            auto rows = conn.exec(sql);
            QVERIFY(rows);
            for (int r = 0; r < rows->rowCount(); ++r) {
                bool hit = false;
                for (int c = 1; c < rows->columnCount() && !hit; ++c)
                    hit = mentions(rows->text(r, c), term);
                if (hit)
                    expected[kind].append(rows->bigInt(r, 0).value_or(0));
            }
        };
        scan(QStringLiteral("dead_letter"),
             "SELECT id, entity_id, payload_text, last_error, idempotency_key"
             "  FROM redrive.dead_letter_detail ORDER BY id");
        scan(QStringLiteral("mismatch"),
             "SELECT id, payment_ref, order_ref, internal_charge_ref, external_charge_ref,"
             "       internal_record, external_record FROM redrive.mismatch_list ORDER BY id");
        scan(QStringLiteral("compensation"),
             "SELECT id, payment_ref, charge_ref, provider_ref, reason, ticket"
             "  FROM redrive.compensation_list ORDER BY id");
        scan(QStringLiteral("audit_entry"),
             "SELECT id, targets_text, before_text, after_text, outcome_text, reason, ticket"
             "  FROM redrive.audit_entry_list ORDER BY id");
        QVERIFY(!expected.value(QStringLiteral("dead_letter")).isEmpty());
        QVERIFY(!expected.value(QStringLiteral("mismatch")).isEmpty());
        QVERIFY(!expected.value(QStringLiteral("audit_entry")).isEmpty());
        qInfo("%s: %s", qPrintable(term), qPrintable(describe(expected)));
        QCOMPARE(describe(hits(support, term)), describe(expected));
        QCOMPARE(describe(hits(support, term.toUpper())), describe(expected));
    }
};

QTEST_GUILESS_MAIN(TestFindMentions)
#include "tst_find_mentions.moc"
