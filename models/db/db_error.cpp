// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/db/db_error.h"

#include <QRegularExpression>
#include <QStringList>
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
    if (!connection)
        return DbError(ErrorKind::Connection,
                       QStringLiteral("out of memory allocating a connection"),
                       QStringLiteral("08006"));
    return fromConnectionMessage(QString::fromUtf8(PQerrorMessage(connection)),
                                 PQstatus(connection) == CONNECTION_BAD
                                     && PQconnectionNeedsPassword(connection));
}

DbError DbError::fromConnectionMessage(const QString &message, bool needsPassword)
{
    // Verbose errors put the SQLSTATE after the (possibly translated) severity: "FATAL:  28P01: ".
    // Every SQLSTATE has a digit, which tells it from a severity word such as "FATAL".
    static const QRegularExpression code(QStringLiteral(":[ \\t]+((?=[A-Z]*[0-9])[0-9A-Z]{5}): "));
    QString sqlState;
    QString text = message;
    for (auto it = code.globalMatch(message); it.hasNext();)
        sqlState = it.next().captured(1);
    text.replace(code, QStringLiteral(":  "));
    QStringList lines = text.split(QLatin1Char('\n'));
    lines.removeIf([](const QString &line) { return line.startsWith(QLatin1String("LOCATION:")); });
    text = lines.join(QLatin1Char('\n')).trimmed();
    if (text.isEmpty())
        text = QStringLiteral("connection is not open");
    if (sqlState.isEmpty())
        return DbError(needsPassword ? ErrorKind::Authentication : ErrorKind::Connection, text,
                       needsPassword ? QString() : QStringLiteral("08006"));
    // Anything else that ends a connection attempt (too many clients, no such database, the
    // server starting up) is worth retrying later: ErrorKind::Connection.
    const bool refusedLogin
        = needsPassword || kindForSqlState(sqlState) == ErrorKind::Authentication;
    return DbError(refusedLogin ? ErrorKind::Authentication : ErrorKind::Connection, text,
                   sqlState);
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
    if (cls == u"28")
        return ErrorKind::Authentication;
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
    case ErrorKind::Authentication:
        return QStringLiteral("authentication");
    case ErrorKind::Other:
        break;
    }
    return QStringLiteral("other");
}

} // namespace redrive::db
