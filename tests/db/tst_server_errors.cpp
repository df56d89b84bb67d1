// SPDX-License-Identifier: GPL-3.0-or-later
// Real server errors arrive as DbError values with SQLSTATE, detail, hint and kind.
#include "tests/support/test_database.h"

#include <QDir>
#include <QFile>
#include <QTest>
#include <thread>

using namespace redrive;
using namespace redrive::db;

class TestServerErrors : public QObject
{
    Q_OBJECT
private:
    std::unique_ptr<test::TestDatabase> m_db;
    PgConnection m_conn;

private Q_SLOTS:
    void initTestCase()
    {
        m_db = std::make_unique<test::TestDatabase>(QStringLiteral("errors"));
        QVERIFY2(m_db->isValid(), qPrintable(m_db->error()));
        m_conn = m_db->connect();
        QVERIFY(m_conn.exec("CREATE TABLE t (id int PRIMARY KEY, v int CHECK (v >= 0))").ok());
        QVERIFY(m_conn.exec("INSERT INTO t VALUES (1, 1), (2, 2)").ok());
    }
    void cleanupTestCase()
    {
        m_conn = PgConnection();
        m_db.reset();
    }

    void uniqueViolationIsConstraintWithDetail()
    {
        auto r = m_conn.exec("INSERT INTO t VALUES ($1, 0)", QueryParams().addInt(1));
        QVERIFY(!r.ok());
        QCOMPARE(r.error().sqlState(), QStringLiteral("23505"));
        QCOMPARE(r.error().kind(), ErrorKind::Constraint);
        QVERIFY2(r.error().detail().contains(QStringLiteral("(id)=(1)")),
                 qPrintable(r.error().detail()));
    }

    void checkViolationIsConstraint()
    {
        auto r = m_conn.exec("UPDATE t SET v = $1 WHERE id = 1", QueryParams().addInt(-1));
        QVERIFY(!r.ok());
        QCOMPARE(r.error().sqlState(), QStringLiteral("23514"));
        QCOMPARE(r.error().kind(), ErrorKind::Constraint);
    }

    void permissionDenied()
    {
        // A Redrive reader role may not write: the database, not the console, says no.
        QVERIFY(m_conn.exec("SET ROLE redrive_auditor").ok());
        auto r = m_conn.exec("DELETE FROM redrive.job");
        QVERIFY(m_conn.exec("RESET ROLE").ok());
        QVERIFY(!r.ok());
        QCOMPARE(r.error().sqlState(), QStringLiteral("42501"));
        QCOMPARE(r.error().kind(), ErrorKind::Permission);
    }

    void hintAndMessageFromRaise()
    {
        auto r = m_conn.exec(
            "DO $$ BEGIN RAISE EXCEPTION 'lease still live' USING DETAIL = 'job 7 until 12:00',"
            " HINT = 'wait for the lease to expire', ERRCODE = 'P0001'; END $$");
        QVERIFY(!r.ok());
        QCOMPARE(r.error().message(), QStringLiteral("lease still live"));
        QCOMPARE(r.error().detail(), QStringLiteral("job 7 until 12:00"));
        QCOMPARE(r.error().hint(), QStringLiteral("wait for the lease to expire"));
        QCOMPARE(r.error().kind(), ErrorKind::Other);
    }

    void statementTimeoutIsCanceled()
    {
        QVERIFY(m_conn.exec("SET statement_timeout = 100").ok());
        auto r = m_conn.exec("SELECT pg_sleep(5)");
        QVERIFY(m_conn.exec("RESET statement_timeout").ok());
        QVERIFY(!r.ok());
        QCOMPARE(r.error().sqlState(), QStringLiteral("57014"));
        QCOMPARE(r.error().kind(), ErrorKind::Canceled);
        QVERIFY(m_conn.isHealthy()); // a canceled statement leaves the connection usable
    }

    void serializationFailureIsRetryable()
    {
        // Two real transactions: A reads at REPEATABLE READ, B commits a change to the same
        // row, then A's update must fail with 40001.
        PgConnection other = m_db->connect();
        QVERIFY(m_conn.exec("BEGIN ISOLATION LEVEL REPEATABLE READ").ok());
        QVERIFY(m_conn.exec("SELECT v FROM t WHERE id = 2").ok());
        QVERIFY(other.exec("UPDATE t SET v = v + 1 WHERE id = 2").ok());
        auto r = m_conn.exec("UPDATE t SET v = v + 10 WHERE id = 2");
        QVERIFY(m_conn.exec("ROLLBACK").ok());
        QVERIFY(!r.ok());
        QCOMPARE(r.error().sqlState(), QStringLiteral("40001"));
        QCOMPARE(r.error().kind(), ErrorKind::Retryable);
    }

    void deadlockIsRetryable()
    {
        // Two sessions lock rows 1 and 2 in opposite order; the server breaks the cycle by
        // failing one of them with 40P01.
        PgConnection a = m_db->connect();
        PgConnection b = m_db->connect();
        QVERIFY(a.exec("BEGIN").ok() && b.exec("BEGIN").ok());
        QVERIFY(a.exec("UPDATE t SET v = v WHERE id = 1").ok());
        QVERIFY(b.exec("UPDATE t SET v = v WHERE id = 2").ok());
        std::optional<DbError> errorB;
        std::thread thread([&] {
            auto r = b.exec("UPDATE t SET v = v WHERE id = 1");
            if (!r.ok())
                errorB = r.error();
            b.exec("ROLLBACK");
        });
        auto ra = a.exec("UPDATE t SET v = v WHERE id = 2");
        std::optional<DbError> errorA;
        if (!ra.ok())
            errorA = ra.error();
        a.exec("ROLLBACK");
        thread.join();
        QVERIFY(errorA.has_value() != errorB.has_value()); // exactly one victim
        const DbError victim = errorA ? *errorA : *errorB;
        QCOMPARE(victim.sqlState(), QStringLiteral("40P01"));
        QCOMPARE(victim.kind(), ErrorKind::Retryable);
    }

    void badConnectionStringIsNotAConnectionAttempt()
    {
        ConnectionSettings s;
        s.connInfo = QStringLiteral("host=localhost port");
        auto r = PgConnection::open(s);
        QVERIFY(!r.ok());
        QCOMPARE(r.error().kind(), ErrorKind::Other);
    }

    void unreachableServerIsConnectionError()
    {
        ConnectionSettings s;
        s.connInfo = QStringLiteral("host=127.0.0.1 port=1 dbname=x connect_timeout=2");
        auto r = PgConnection::open(s);
        QVERIFY(!r.ok());
        QCOMPARE(r.error().kind(), ErrorKind::Connection);
        QVERIFY(!r.error().message().isEmpty());
    }

    void applicationNameAndServiceFile()
    {
        // Defaults apply, and what the connection string says wins over them.
        auto r = m_conn.exec("SELECT current_setting('application_name')");
        QCOMPARE(r->text(0, 0), QStringLiteral("redrive"));
        ConnectionSettings s = m_db->settings();
        s.connInfo += QStringLiteral(" application_name=ops-tool");
        auto named = PgConnection::open(s);
        QVERIFY(named.ok());
        QCOMPARE(named->exec("SELECT current_setting('application_name')")->text(0, 0),
                 QStringLiteral("ops-tool"));

        // pg_service.conf: a service name alone reaches the database, as in psql.
        const QString dir = QStringLiteral(REDRIVE_TEST_OUTPUT_DIR);
        QDir().mkpath(dir);
        const QString serviceFile = dir + QStringLiteral("/pg_service.conf");
        QFile f(serviceFile);
        QVERIFY(f.open(QIODevice::WriteOnly | QIODevice::Truncate));
        const QString cluster = test::TestDatabase::clusterConnInfo();
        f.write(QStringLiteral("[redrive-test]\n%1\ndbname=%2\n")
                    .arg(cluster.split(QLatin1Char(' ')).join(QLatin1Char('\n')), m_db->name())
                    .remove(QLatin1Char('\''))
                    .toUtf8());
        f.close();
        qputenv("PGSERVICEFILE", serviceFile.toUtf8());
        ConnectionSettings viaService;
        viaService.connInfo = QStringLiteral("service=redrive-test");
        auto svc = PgConnection::open(viaService);
        qunsetenv("PGSERVICEFILE");
        QVERIFY2(svc.ok(), svc.ok() ? "" : qPrintable(svc.error().summary()));
        QCOMPARE(svc->serverInfo().database, m_db->name());
    }
};

QTEST_GUILESS_MAIN(TestServerErrors)
#include "tst_server_errors.moc"
