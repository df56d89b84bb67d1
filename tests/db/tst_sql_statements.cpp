// SPDX-License-Identifier: GPL-3.0-or-later
// Every named statement compiled into the binary PREPAREs against the real schema.
#include "models/db/sql_statement.h"
#include "tests/support/test_database.h"

#include <QSet>
#include <QTest>

using namespace redrive;
using namespace redrive::db;

class TestSqlStatements : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void everyStatementPrepares()
    {
        test::TestDatabase db(QStringLiteral("statements"));
        QVERIFY2(db.isValid(), qPrintable(db.error()));
        PgConnection conn = test::TestDatabase::connectWith(db.consoleSettings());
        QVERIFY(!allStatements().isEmpty());
        // Every enum value has exactly one row, and names are unique.
        QCOMPARE(allStatements().size(), qsizetype(Statement::Count));
        QSet<int> values;
        for (Statement s : allStatements())
            values.insert(int(s));
        QCOMPARE(values.size(), qsizetype(Statement::Count));
        QSet<QString> names;
        for (Statement s : allStatements())
            names.insert(statementName(s));
        QCOMPARE(names.size(), allStatements().size());
        for (Statement s : allStatements()) {
            const QByteArray sql = statementSql(s);
            QVERIFY2(!sql.isEmpty(), qPrintable(statementName(s)));
            QVERIFY2(!sql.contains("{{"), qPrintable(statementName(s))); // all fragments expanded
            auto prepared = conn.prepare(statementName(s).toUtf8(), sql);
            QVERIFY2(prepared.ok(),
                     qPrintable(statementName(s) + QStringLiteral(": ")
                                + (prepared.ok() ? QString() : prepared.error().summary())));
        }
    }
};

QTEST_GUILESS_MAIN(TestSqlStatements)
#include "tst_sql_statements.moc"
