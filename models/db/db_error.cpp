#include "models/db/db_error.h"

#include <libpq-fe.h>

namespace redrive::db {

namespace {

QString field(const PGresult *result, int code)
{
    const char *value = PQresultErrorField(result, code);
    return value ? QString::fromUtf8(value).trimmed() : QString();
}

} // namespace

DbError::DbError(ErrorKind kind, QString message, QString sqlState)
    : m_kind(kind)
    , m_sqlState(std::move(sqlState))
    , m_message(std::move(message))
{ }

DbError DbError::fromResult(const PGresult *result, const PGconn *connection)
{
    if (!result)
        return fromConnection(connection);
    DbError error;
    error.m_sqlState = field(result, PG_DIAG_SQLSTATE);
    error.m_message = field(result, PG_DIAG_MESSAGE_PRIMARY);
    if (error.m_message.isEmpty())
        error.m_message = QString::fromUtf8(PQresultErrorMessage(result)).trimmed();
    error.m_detail = field(result, PG_DIAG_MESSAGE_DETAIL);
    error.m_hint = field(result, PG_DIAG_MESSAGE_HINT);
    error.m_kind = kindForSqlState(error.m_sqlState);
    // libpq reports a dropped socket as a fatal result without SQLSTATE (or, since 14, 08006).
    if (connection && PQstatus(connection) != CONNECTION_OK)
        error.m_kind = ErrorKind::Connection;
    return error;
}

DbError DbError::fromConnection(const PGconn *connection)
{
    QString message = connection ? QString::fromUtf8(PQerrorMessage(connection)).trimmed()
                                 : QStringLiteral("out of memory allocating a connection");
    if (message.isEmpty())
        message = QStringLiteral("connection is not open");
    return DbError(ErrorKind::Connection, message, QStringLiteral("08006"));
}

ErrorKind DbError::kindForSqlState(const QString &sqlState)
{
    if (sqlState.size() != 5)
        return ErrorKind::Other;
    const QStringView cls = QStringView(sqlState).left(2);
    if (cls == u"08" || sqlState == u"57P01" || sqlState == u"57P02" || sqlState == u"57P03")
        return ErrorKind::Connection;
    if (sqlState == u"57014")
        return ErrorKind::Canceled;
    if (sqlState == u"40001" || sqlState == u"40P01")
        return ErrorKind::Retryable;
    if (cls == u"23")
        return ErrorKind::Constraint;
    if (sqlState == u"42501")
        return ErrorKind::Permission;
    return ErrorKind::Other;
}

QString DbError::summary() const
{
    return m_sqlState.isEmpty() ? m_message : QStringLiteral("[%1] %2").arg(m_sqlState, m_message);
}

QString DbError::kindName(ErrorKind kind)
{
    switch (kind) {
    case ErrorKind::Connection:
        return QStringLiteral("connection");
    case ErrorKind::Canceled:
        return QStringLiteral("canceled");
    case ErrorKind::Retryable:
        return QStringLiteral("retryable");
    case ErrorKind::Constraint:
        return QStringLiteral("constraint");
    case ErrorKind::Permission:
        return QStringLiteral("permission");
    case ErrorKind::Other:
        break;
    }
    return QStringLiteral("other");
}

} // namespace redrive::db
