// SQLSTATE -> ErrorKind mapping (issue 2, "Errors as a value type").
#include "models/db/db_error.h"

#include <QTest>

using redrive::db::DbError;
using redrive::db::ErrorKind;

class TestDbError : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void kindForSqlState_data()
    {
        QTest::addColumn<QString>("sqlState");
        QTest::addColumn<ErrorKind>("kind");
        QTest::newRow("connection_failure") << "08006" << ErrorKind::Connection;
        QTest::newRow("connection_does_not_exist") << "08003" << ErrorKind::Connection;
        QTest::newRow("admin_shutdown (pg_terminate_backend)") << "57P01" << ErrorKind::Connection;
        QTest::newRow("crash_shutdown") << "57P02" << ErrorKind::Connection;
        QTest::newRow("cannot_connect_now") << "57P03" << ErrorKind::Connection;
        QTest::newRow("query_canceled") << "57014" << ErrorKind::Canceled;
        QTest::newRow("serialization_failure") << "40001" << ErrorKind::Retryable;
        QTest::newRow("deadlock_detected") << "40P01" << ErrorKind::Retryable;
        QTest::newRow("transaction_rollback (other)") << "40000" << ErrorKind::Other;
        QTest::newRow("unique_violation") << "23505" << ErrorKind::Constraint;
        QTest::newRow("check_violation") << "23514" << ErrorKind::Constraint;
        QTest::newRow("foreign_key_violation") << "23503" << ErrorKind::Constraint;
        QTest::newRow("insufficient_privilege") << "42501" << ErrorKind::Permission;
        QTest::newRow("undefined_table") << "42P01" << ErrorKind::Other;
        QTest::newRow("division_by_zero") << "22012" << ErrorKind::Other;
        QTest::newRow("empty") << "" << ErrorKind::Other;
        QTest::newRow("garbage") << "xyz" << ErrorKind::Other;
    }
    void kindForSqlState()
    {
        QFETCH(QString, sqlState);
        QFETCH(ErrorKind, kind);
        QCOMPARE(DbError::kindForSqlState(sqlState), kind);
    }

    void summaryCarriesSqlState()
    {
        const DbError e(ErrorKind::Constraint, QStringLiteral("duplicate key"),
                        QStringLiteral("23505"));
        QCOMPARE(e.summary(), QStringLiteral("[23505] duplicate key"));
        QCOMPARE(DbError::kindName(e.kind()), QStringLiteral("constraint"));
    }
};

QTEST_GUILESS_MAIN(TestDbError)
#include "tst_db_error.moc"
