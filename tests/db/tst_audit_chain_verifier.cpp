// SPDX-License-Identifier: GPL-3.0-or-later
// The client-side audit chain verifier on a real PostgreSQL
// (docs/audit-chain.md): its canonical form is byte for byte the server's for tricky content;
// reading binary columns it accepts a chain the server's own trigger function hashed (IPv6
// addresses, odd timestamps, a large id); it names an edited entry, the ids around a deleted
// one, a cut start, a cut tail and a rewritten head, even with redrive.verify_audit_chain
// replaced; and the console's job reports progress, its report, and can be canceled.
#include "models/audit_chain_verifier.h"
#include "models/audit_verify_job.h"
#include "tests/support/test_database.h"

#include <QSignalSpy>
#include <QTest>

using namespace redrive;
using namespace redrive::db;

namespace {

// One audit entry's values as SQL literals' texts (NULL: a null QString).
struct Values
{
    QString id, at, dbUser, clientAddr, osUser, action, targets, reason, ticket, before, after,
        actionId, outcome;
};

} // namespace

Q_DECLARE_METATYPE(Values)

class TestAuditChainVerifier : public QObject
{
    Q_OBJECT
    std::unique_ptr<test::TestDatabase> m_db;
    std::unique_ptr<PgConnection> m_admin;

    ResultSet q(const QByteArray &sql, const QueryParams &params = {})
    {
        auto r = m_admin->exec(sql, params);
        if (!r)
            qFatal("%s: %s", sql.constData(), qPrintable(r.error().summary()));
        return r.value();
    }

    static QueryParams paramsOf(const Values &v)
    {
        QueryParams p;
        for (const QString &s : { v.id, v.at, v.dbUser, v.clientAddr, v.osUser, v.action, v.targets,
                                  v.reason, v.ticket, v.before, v.after, v.actionId, v.outcome }) {
            if (s.isNull())
                p.addNull(ParamType::Text);
            else
                p.addText(s);
        }
        return p;
    }

    static constexpr char kRow[]
        = "ROW($1::bigint, $2::timestamptz, $3::text, $4::inet, $5::text, $6::text, $7::jsonb, "
          "$8::text, $9::text, $10::jsonb, $11::jsonb, $12::uuid, $13::jsonb, NULL::bytea, "
          "NULL::bytea)::redrive.audit_log";

    // Rewrites the whole chain in id order with the server's own hash function, as the trigger
    // would have hashed it.
    void rechain()
    {
        q("ALTER TABLE redrive.audit_log DISABLE TRIGGER audit_log_no_update_delete");
        q("DO $$ DECLARE r redrive.audit_log; v_prev bytea; BEGIN"
          " FOR r IN SELECT * FROM redrive.audit_log ORDER BY id LOOP"
          "  UPDATE redrive.audit_log SET prev_hash = v_prev,"
          "         hash = redrive.audit_entry_hash(v_prev, r)"
          "   WHERE id = r.id RETURNING hash INTO v_prev;"
          " END LOOP; END $$");
    }

    AuditChainReport verify(qint64 headId = 0, const QByteArray &headHash = {})
    {
        AuditChainVerifier verifier;
        if (headId > 0)
            verifier.setExpectedHead(headId, headHash);
        PgConnection c = m_db->connect();
        auto report = verifier.verify(c);
        if (!report)
            qFatal("verify: %s", qPrintable(report.error().summary()));
        return report.value();
    }

    qint64 idAt(int offset)
    {
        return q("SELECT id FROM redrive.audit_log ORDER BY id OFFSET $1 LIMIT 1",
                 QueryParams().addInt(offset))
            .bigInt(0, 0)
            .value_or(0);
    }

private Q_SLOTS:
    void init()
    {
        m_db = std::make_unique<test::TestDatabase>(QStringLiteral("audit_chain_verifier"));
        QVERIFY2(m_db->isValid(), qPrintable(m_db->error()));
        m_admin = std::make_unique<PgConnection>(m_db->connect());
        q("INSERT INTO redrive.audit_log (action, reason, action_id)"
          " SELECT 'note', 'entry ' || g, gen_random_uuid() FROM generate_series(1, 20) g");
    }
    void cleanup()
    {
        m_admin.reset();
        m_db.reset();
    }

    void canonicalFormMatchesTheServer_data()
    {
        QTest::addColumn<Values>("v");
        const QString uuid = QStringLiteral("6f1c2a4e-8d3b-4c5a-9e7f-0a1b2c3d4e5f");
        const Values plain { QStringLiteral("1"),
                             QStringLiteral("2026-03-01 10:00:00.123456+00"),
                             QStringLiteral("alice"),
                             QStringLiteral("10.0.0.7"),
                             QStringLiteral("alice@laptop"),
                             QStringLiteral("requeue"),
                             QStringLiteral("[{\"id\": 42, \"type\": \"dead_letter\"}]"),
                             QStringLiteral("customer asked"),
                             QStringLiteral("T-1"),
                             QStringLiteral("{\"status\": \"open\"}"),
                             QStringLiteral("{\"status\": \"requeued\"}"),
                             uuid,
                             QStringLiteral("{\"applied\": 1}") };
        QTest::newRow("plain") << plain;
        Values v = plain;
        v.reason = QStringLiteral("say \"hi\" \\ back\\slash\n\ttab\r\b\f") + QChar(0x01)
            + QChar(0x1f) + QChar(0x7f) + QStringLiteral(" end");
        v.osUser = QStringLiteral("os\"user\\");
        QTest::newRow("quotes, backslashes, control characters") << v;
        v = plain;
        v.reason = QStringLiteral("\u00fcber \u20ac 12,50 \u4e2d\u6587 ") + QChar(0xD83D)
            + QChar(0xDE00);
        v.targets = QStringLiteral("[{\"n\": \"\u00e9\\u0001\\\\x\", \"big\": 9007199254740993, "
                                   "\"f\": 1.50, \"e\": 1e2, \"neg\": -0.0}]");
        QTest::newRow("unicode, jsonb numbers and escapes") << v;
        v = plain;
        v.clientAddr = v.osUser = v.ticket = v.before = v.after = QString();
        v.at = QString();
        QTest::newRow("NULL fields") << v;
        v = plain;
        v.id = QStringLiteral("9223372036854775807");
        v.at = QStringLiteral("2026-01-02 03:04:05.000001+00");
        QTest::newRow("largest id, one microsecond") << v;
        v = plain;
        v.before = QStringLiteral("\"just a string\"");
        v.after = QStringLiteral("null");
        v.outcome = QStringLiteral("[]");
        QTest::newRow("jsonb scalars") << v;
    }

    void canonicalFormMatchesTheServer()
    {
        QFETCH(Values, v);
        const QByteArray sql = QByteArray("WITH e AS (SELECT ") + kRow
            + " AS r) SELECT (r).id, to_char((r).at AT TIME ZONE 'UTC',"
              " 'YYYY-MM-DD\"T\"HH24:MI:SS.US\"Z\"'), (r).db_user, host((r).client_addr),"
              " (r).os_user, (r).action, (r).targets::text, (r).reason, (r).ticket,"
              " (r).before::text, (r).after::text, (r).action_id::text, (r).outcome::text,"
              " convert_from(redrive.audit_canonical(r), 'UTF8') FROM e";
        const ResultSet rows = q(sql, paramsOf(v));
        auto col = [&rows](int c) {
            return rows.isNull(0, c) ? QByteArray() : rows.raw(0, c);
        };
        AuditChainVerifier::TextEntry e;
        e.id = rows.bigInt(0, 0).value_or(0);
        e.atUtc = col(1);
        e.dbUser = col(2);
        e.clientAddr = col(3);
        e.osUser = col(4);
        e.action = col(5);
        e.targets = col(6);
        e.reason = col(7);
        e.ticket = col(8);
        e.before = col(9);
        e.after = col(10);
        e.actionId = col(11);
        e.outcome = col(12);
        QCOMPARE(AuditChainVerifier::canonicalForm(e), col(13));
    }

    // The binary path (timestamps, inet, uuid, jsonb as COPY sends them) against the hashes the
    // server's own function computes.
    void binaryColumnsMatchTheServer()
    {
        q("ALTER TABLE redrive.audit_log DISABLE TRIGGER audit_log_no_update_delete");
        // A new `at` moves an entry to another month's partition, which PostgreSQL does as a
        // delete and an insert that fires the chain trigger (docs/architecture.md, "Partitions"):
        // a superuser writing raw values sets that aside too.
        q("ALTER TABLE redrive.audit_log DISABLE TRIGGER audit_log_chain");
        const QStringList addresses
            = { QStringLiteral("::1"),           QStringLiteral("::"),
                QStringLiteral("2001:db8::1"),   QStringLiteral("1:0:0:1:0:0:0:1"),
                QStringLiteral("fe80::1:0:0:1"), QStringLiteral("::ffff:10.1.2.3"),
                QStringLiteral("::10.1.2.3"),    QStringLiteral("1::"),
                QStringLiteral("10.0.0.0/8"),    QStringLiteral("2001:db8::/32"),
                QStringLiteral("0:1::1:0:0"),    QStringLiteral("192.168.1.255") };
        const QStringList times = { QStringLiteral("2026-03-01 10:00:00+00"),
                                    QStringLiteral("1999-12-31 23:59:59.999999+00"),
                                    QStringLiteral("0044-03-15 12:00:00+00"),
                                    QStringLiteral("0010-01-01 00:00:00+00 BC"),
                                    QStringLiteral("12000-06-30 01:02:03.5+00"),
                                    QStringLiteral("infinity"),
                                    QStringLiteral("1970-01-01 00:00:00+00"),
                                    QStringLiteral("2000-02-29 12:00:00.000001+00") };
        for (int i = 0; i < addresses.size(); ++i)
            q("UPDATE redrive.audit_log SET client_addr = $2::inet, at = $3::timestamptz,"
              " os_user = $4, reason = $5 WHERE id = $1",
              QueryParams()
                  .addBigInt(idAt(i))
                  .addText(addresses.at(i))
                  .addText(times.at(i % times.size()))
                  .addText(QStringLiteral("os\"user\u00e9"))
                  .addText(QStringLiteral("tab\there \\ \"q\" \u4e2d") + QChar(0x02)));
        q("UPDATE redrive.audit_log SET id = 9223372036854775000,"
          " targets = '[{\"id\": 9007199254740993, \"f\": 1.50}]', before = '\"s\"',"
          " after = '{\"a\": {\"b\": [1, 2.0, null]}}' WHERE id = $1",
          QueryParams().addBigInt(idAt(19)));
        q("ALTER TABLE redrive.audit_log ENABLE TRIGGER audit_log_chain");
        rechain();
        QCOMPARE(q("SELECT count(*) FROM redrive.verify_audit_chain()").bigInt(0, 0), 0);
        const AuditChainReport report = verify();
        QVERIFY2(report.holds(), qPrintable(report.problems.value(0).message()));
        QCOMPARE(report.checked, 20);
        QCOMPARE(report.headId, Q_INT64_C(9223372036854775000));
        QCOMPARE(report.headHash,
                 q("SELECT encode(hash, 'hex') FROM redrive.audit_log ORDER BY id DESC LIMIT 1")
                     .raw(0, 0));
    }

    void namesEveryBreakEvenWithTheServerCheckReplaced()
    {
        const ResultSet head
            = q("SELECT id, encode(hash, 'hex') FROM redrive.audit_log ORDER BY id DESC LIMIT 1");
        const qint64 headId = head.bigInt(0, 0).value_or(0);
        const QByteArray headHash = head.raw(0, 1);
        QVERIFY(verify(headId, headHash).holds());
        q("CREATE OR REPLACE FUNCTION redrive.verify_audit_chain(p_from_id bigint DEFAULT NULL,"
          " p_expected_id bigint DEFAULT NULL, p_expected_hash bytea DEFAULT NULL)"
          " RETURNS TABLE (broken_id bigint, problem text, checked bigint) LANGUAGE sql"
          " AS $$ SELECT NULL::bigint, NULL::text, NULL::bigint WHERE false $$");
        q("ALTER TABLE redrive.audit_log DISABLE TRIGGER audit_log_no_update_delete");

        // An edited entry, and (further on) a deleted one.
        const qint64 edited = idAt(3);
        const qint64 beforeGap = idAt(9);
        const qint64 gone = idAt(10);
        const qint64 afterGap = idAt(11);
        q("UPDATE redrive.audit_log SET reason = 'rewritten' WHERE id = $1",
          QueryParams().addBigInt(edited));
        q("DELETE FROM redrive.audit_log WHERE id = $1", QueryParams().addBigInt(gone));
        AuditChainReport report = verify();
        QCOMPARE(report.problems.size(), 2);
        QCOMPARE(report.first().kind, AuditChainProblem::Kind::Changed);
        QCOMPARE(report.first().id, edited);
        QCOMPARE(report.first().checkedBefore, 3);
        QVERIFY(report.first().message().contains(QStringLiteral("hash does not match")));
        QCOMPARE(report.problems.at(1).kind, AuditChainProblem::Kind::MissingBetween);
        QCOMPARE(report.problems.at(1).previousId, beforeGap);
        QCOMPARE(report.problems.at(1).id, afterGap);
        QVERIFY2(report.problems.at(1).message().startsWith(
                     QStringLiteral("missing entries between id %1 and id %2")
                         .arg(beforeGap)
                         .arg(afterGap)),
                 qPrintable(report.problems.at(1).message()));
        QCOMPARE(report.checked, 19);

        // The start cut, and the tail cut against the exported head.
        q("DELETE FROM redrive.audit_log WHERE id <= $1 OR id = $2",
          QueryParams().addBigInt(edited).addBigInt(headId));
        report = verify(headId, headHash);
        QCOMPARE(report.problems.size(), 3);
        QCOMPARE(report.problems.at(0).kind, AuditChainProblem::Kind::StartCut);
        QCOMPARE(report.problems.at(0).id, idAt(0));
        QCOMPARE(report.problems.at(1).kind, AuditChainProblem::Kind::MissingBetween);
        QCOMPARE(report.problems.at(2).kind, AuditChainProblem::Kind::HeadNotReached);
        QCOMPARE(report.problems.at(2).id, headId);
        QVERIFY(report.problems.at(2).message().contains(QStringLiteral("tail cut")));

        // A head that is there but holds another hash.
        const qint64 last = q("SELECT max(id) FROM redrive.audit_log").bigInt(0, 0).value_or(0);
        report = verify(last, QByteArray(64, 'a'));
        QCOMPARE(report.problems.last().kind, AuditChainProblem::Kind::HeadHashDiffers);
        QCOMPARE(report.problems.last().id, last);
    }

    void emptyLogHoldsUnlessAHeadWasExported()
    {
        q("ALTER TABLE redrive.audit_log DISABLE TRIGGER audit_log_no_update_delete");
        q("DELETE FROM redrive.audit_log");
        QVERIFY(verify().holds());
        QCOMPARE(verify().headId, 0);
        const AuditChainReport report = verify(7, QByteArray(64, 'b'));
        QCOMPARE(report.problems.size(), 1);
        QCOMPARE(report.first().kind, AuditChainProblem::Kind::HeadNotReached);
    }

    void jobReportsProgressAndCanBeCanceled()
    {
        q("INSERT INTO redrive.audit_log (action, reason, action_id)"
          " SELECT 'note', 'bulk ' || g, gen_random_uuid() FROM generate_series(1, 50000) g");
        AuditVerifyJob job;
        QSignalSpy progress(&job, &AuditVerifyJob::progress);
        QSignalSpy finished(&job, &AuditVerifyJob::finished);
        QVERIFY(job.start(m_db->settings()));
        QVERIFY(!job.start(m_db->settings()));
        QVERIFY(finished.wait(60000));
        QCOMPARE(finished.first().first().toBool(), false);
        QVERIFY(job.report().holds());
        QCOMPARE(job.report().checked, 50020);
        QVERIFY(progress.size() >= 3); // the start, the count, some batches
        QCOMPARE(progress.last().at(1).toLongLong(), 50020);

        // Held by a lock, the job waits on the server until canceled.
        PgConnection locker = m_db->connect();
        QVERIFY(locker.exec("BEGIN").ok());
        QVERIFY(locker.exec("LOCK TABLE redrive.audit_log IN ACCESS EXCLUSIVE MODE").ok());
        finished.clear();
        QVERIFY(job.start(m_db->settings()));
        QTRY_VERIFY_WITH_TIMEOUT(q("SELECT count(*) FROM pg_stat_activity"
                                   " WHERE datname = current_database()"
                                   " AND wait_event_type = 'Lock'")
                                         .bigInt(0, 0)
                                         .value_or(0)
                                     == 1,
                                 10000);
        job.cancel();
        QVERIFY(finished.wait(10000));
        QCOMPARE(finished.first().first().toBool(), true);
        QVERIFY(!job.isRunning());
        QVERIFY(locker.exec("ROLLBACK").ok());
    }
};

QTEST_MAIN(TestAuditChainVerifier)
#include "tst_audit_chain_verifier.moc"
