// SPDX-License-Identifier: GPL-3.0-or-later
// A connection string is shown, logged and saved only without its password: redactedConnInfo
// parses it with libpq's own parser (key=value and URIs alike) and rebuilds it without secrets.
// No server, no widgets.
#include "models/db/connection_settings.h"

#include <QTest>

using redrive::db::connInfoHasPassword;
using redrive::db::connInfoPassword;
using redrive::db::redactedConnInfo;

class TestConnInfoRedaction : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void redacts_data()
    {
        QTest::addColumn<QString>("connInfo");
        QTest::addColumn<QString>("expected"); // libpq's keyword order, secrets left out
        QTest::addColumn<bool>("parses");
        QTest::addColumn<QStringList>("secrets"); // none may appear in the output

        QTest::newRow("key=value with password")
            << "host=db port=5432 dbname=payments user=alice password=s3cret"
            << "user=alice dbname=payments host=db port=5432" << true << QStringList { "s3cret" };
        QTest::newRow("quoted password with spaces and escaped quotes")
            << R"(host=db user=alice password='it\'s a \\ long pass' dbname=app)"
            << "user=alice dbname=app host=db" << true
            << QStringList { "it's", "long pass", R"(\\)" };
        QTest::newRow("URI with user:pass@")
            << "postgresql://alice:s3cret@db.internal:5433/payments?sslmode=require"
            << "user=alice dbname=payments host=db.internal port=5433 sslmode=require" << true
            << QStringList { "s3cret" };
        QTest::newRow("URI with a percent-encoded password")
            << "postgres://alice:p%40ss%20word@db/app"
            << "user=alice dbname=app host=db" << true << QStringList { "p%40ss", "p@ss", "word" };
        QTest::newRow("URI with ?password=")
            << "postgresql://alice@db/payments?password=s3cret&application_name=ops"
            << "user=alice dbname=payments host=db application_name=ops" << true
            << QStringList { "s3cret" };
        QTest::newRow("multi-host key=value")
            << "host=db1,db2 port=5432,5433 dbname=app user=bob password=hunter2 "
               "target_session_attrs=read-write"
            << "user=bob dbname=app host=db1,db2 port=5432,5433 target_session_attrs=read-write"
            << true << QStringList { "hunter2" };
        QTest::newRow("multi-host URI") << "postgresql://bob:hunter2@db1:5432,db2:5433/app"
                                        << "user=bob dbname=app host=db1,db2 port=5432,5433" << true
                                        << QStringList { "hunter2" };
        QTest::newRow("sslpassword (the client key's passphrase) too")
            << "host=db sslkey=/etc/k.pem sslpassword=keypass"
            << "host=db sslkey=/etc/k.pem" << true << QStringList { "keypass" };
        QTest::newRow("values that need quoting stay quoted")
            << R"(dbname='my db' user='o\'brien' password=x)"
            << R"(user='o\'brien' dbname='my db')" << true << QStringList {};
        QTest::newRow("service only") << "service=prod"
                                      << "service=prod" << true << QStringList {};
        QTest::newRow("empty") << ""
                               << "" << true << QStringList {};
        QTest::newRow("unparseable: unterminated quote")
            << "host=db password='hunter2 dbname=app"
            << "(connection string not shown: it cannot be parsed)" << false
            << QStringList { "hunter2", "host=db" };
        QTest::newRow("unparseable: a word without =")
            << "host=db password hunter2"
            << "(connection string not shown: it cannot be parsed)" << false
            << QStringList { "hunter2", "host=db" };
        QTest::newRow("unparseable URI") << "postgresql://bob:hunter2@[::1/app"
                                         << "(connection string not shown: it cannot be parsed)"
                                         << false << QStringList { "hunter2", "bob" };
    }
    void redacts()
    {
        QFETCH(QString, connInfo);
        QFETCH(QString, expected);
        QFETCH(bool, parses);
        QFETCH(QStringList, secrets);
        bool ok = false;
        const QString redacted = redactedConnInfo(connInfo, &ok);
        QCOMPARE(redacted, expected);
        QCOMPARE(ok, parses);
        QVERIFY(!redacted.contains(QLatin1String("password")));
        for (const QString &secret : std::as_const(secrets))
            QVERIFY2(!redacted.contains(secret), qPrintable(secret));
        // What it returns is itself a valid, password-free connection string.
        if (parses) {
            QCOMPARE(redactedConnInfo(redacted), redacted);
            QVERIFY(!connInfoHasPassword(redacted));
        }
    }

    void findsThePassword_data()
    {
        QTest::addColumn<QString>("connInfo");
        QTest::addColumn<QString>("password");
        QTest::newRow("key=value") << "host=db password=s3cret"
                                   << "s3cret";
        QTest::newRow("quoted") << R"(password='it\'s a pass')"
                                << "it's a pass";
        QTest::newRow("URI user info, decoded") << "postgresql://a:p%40ss@db/x"
                                                << "p@ss";
        QTest::newRow("URI query") << "postgresql://a@db/x?password=q"
                                   << "q";
        QTest::newRow("none") << "host=db"
                              << "";
        QTest::newRow("unparseable") << "password='x"
                                     << "";
    }
    void findsThePassword()
    {
        QFETCH(QString, connInfo);
        QFETCH(QString, password);
        QCOMPARE(connInfoPassword(connInfo), password);
        QCOMPARE(connInfoHasPassword(connInfo), !password.isEmpty());
    }
};

QTEST_GUILESS_MAIN(TestConnInfoRedaction)
#include "tst_conninfo_redaction.moc"
