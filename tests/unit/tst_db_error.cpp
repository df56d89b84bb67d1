// SPDX-License-Identifier: GPL-3.0-or-later
// SQLSTATE -> ErrorKind mapping: errors as a value type.
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
        QTest::newRow("invalid_password") << "28P01" << ErrorKind::Authentication;
        QTest::newRow("invalid_authorization_specification")
            << "28000" << ErrorKind::Authentication;
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

    // Connection failures: libpq's message, with the SQLSTATE verbose errors put in it.
    void connectionMessage_data()
    {
        QTest::addColumn<QString>("message");
        QTest::addColumn<bool>("needsPassword");
        QTest::addColumn<ErrorKind>("kind");
        QTest::addColumn<QString>("sqlState");
        QTest::addColumn<QString>("text");
        QTest::newRow("wrong password")
            << "connection to server at \"127.0.0.1\", port 5432 failed: FATAL:  28P01: "
               "password authentication failed for user \"alice\"\nLOCATION:  auth_failed, "
               "auth.c:323\n"
            << false << ErrorKind::Authentication << "28P01"
            << "connection to server at \"127.0.0.1\", port 5432 failed: FATAL:  password "
               "authentication failed for user \"alice\"";
        QTest::newRow("no pg_hba.conf entry")
            << "connection to server on socket \"/tmp/.s.PGSQL.5432\" failed: FATAL:  28000: no "
               "pg_hba.conf entry for host \"[local]\", user \"x\", database \"y\", no "
               "encryption\nLOCATION:  ClientAuthentication, auth.c:533"
            << false << ErrorKind::Authentication << "28000"
            << "connection to server on socket \"/tmp/.s.PGSQL.5432\" failed: FATAL:  no "
               "pg_hba.conf entry for host \"[local]\", user \"x\", database \"y\", no "
               "encryption";
        QTest::newRow("translated severity")
            << "connection failed: SCHWERWIEGEND:  28P01: Passwort-Authentifizierung fehlgeschlagen"
            << false << ErrorKind::Authentication << "28P01"
            << "connection failed: SCHWERWIEGEND:  Passwort-Authentifizierung fehlgeschlagen";
        QTest::newRow("no such database: retry later")
            << "connection to server failed: FATAL:  3D000: database \"nope\" does not exist"
            << false << ErrorKind::Connection << "3D000"
            << "connection to server failed: FATAL:  database \"nope\" does not exist";
        QTest::newRow("no password supplied (client side)")
            << "connection to server at \"db\", port 5432 failed: fe_sendauth: no password "
               "supplied\n"
            << true << ErrorKind::Authentication << ""
            << "connection to server at \"db\", port 5432 failed: fe_sendauth: no password "
               "supplied";
        QTest::newRow("refused: no SQLSTATE")
            << "connection to server at \"127.0.0.1\", port 1 failed: Connection refused\n\tIs "
               "the server running on that host and accepting TCP/IP connections?\n"
            << false << ErrorKind::Connection << "08006"
            << "connection to server at \"127.0.0.1\", port 1 failed: Connection refused\n\tIs "
               "the server running on that host and accepting TCP/IP connections?";
        QTest::newRow("two hosts: the last one's state")
            << "connection to server at \"a\", port 1 failed: Connection refused\nconnection to "
               "server at \"b\", port 2 failed: FATAL:  28P01: password authentication failed"
            << false << ErrorKind::Authentication << "28P01"
            << "connection to server at \"a\", port 1 failed: Connection refused\nconnection to "
               "server at \"b\", port 2 failed: FATAL:  password authentication failed";
    }
    void connectionMessage()
    {
        QFETCH(QString, message);
        QFETCH(bool, needsPassword);
        QFETCH(ErrorKind, kind);
        QFETCH(QString, sqlState);
        QFETCH(QString, text);
        const DbError e = DbError::fromConnectionMessage(message, needsPassword);
        QCOMPARE(e.kind(), kind);
        QCOMPARE(e.sqlState(), sqlState);
        QCOMPARE(e.message(), text);
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
