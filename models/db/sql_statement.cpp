#include "models/db/sql_statement.h"

#include <QFile>
#include <QHash>
#include <QMutex>

namespace redrive::db {

QList<Statement> allStatements()
{
    return { Statement::SessionRoles };
}

QString statementName(Statement statement)
{
    switch (statement) {
    case Statement::SessionRoles:
        return QStringLiteral("session_roles");
    }
    return {};
}

QByteArray statementSql(Statement statement)
{
    static QMutex mutex;
    static QHash<Statement, QByteArray> cache;
    QMutexLocker lock(&mutex);
    auto it = cache.constFind(statement);
    if (it != cache.constEnd())
        return *it;
    QFile file(QStringLiteral(":/sql/%1.sql").arg(statementName(statement)));
    QByteArray sql;
    if (file.open(QIODevice::ReadOnly))
        sql = file.readAll();
    cache.insert(statement, sql);
    return sql;
}

} // namespace redrive::db
