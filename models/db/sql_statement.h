#pragma once

#include <QByteArray>
#include <QList>
#include <QString>

namespace redrive::db {

/// Named SQL statements kept as .sql files under resources/sql/ and compiled in (STYLE.md
/// "Data flow"): a misspelt name is a compile error, and tst_sql_statements PREPAREs every one
/// against the real schema.
enum class Statement {
    SessionRoles, ///< session_roles.sql: login role and the Redrive roles it holds
};

/// Every statement, for tests that prepare them all.
QList<Statement> allStatements();
/// The file's base name, e.g. "session_roles".
QString statementName(Statement statement);
/// The SQL text; empty if the resource is missing (a build error that the tests catch).
QByteArray statementSql(Statement statement);

} // namespace redrive::db
