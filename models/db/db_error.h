// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QMetaType>
#include <QString>

struct pg_conn;
struct pg_result;

namespace redrive::db {

/// What a caller can do about an error, derived from the SQLSTATE class
/// (PostgreSQL manual, Appendix A "PostgreSQL Error Codes").
enum class ErrorKind {
    Connection, ///< class 08, 57P01-57P03, or no usable connection: reconnect
    Canceled, ///< 57014 query_canceled: the operator or a timeout stopped it
    Retryable, ///< 40001 serialization_failure, 40P01 deadlock_detected: run the transaction again
    Constraint, ///< class 23 integrity constraint violation: the data says no
    Permission, ///< 42501 insufficient_privilege: the role says no
    /// class 28 (28P01 invalid_password, 28000 invalid_authorization_specification) or no
    /// password to send: retrying the same login cannot succeed, so nothing retries it
    Authentication,
    Other, ///< anything else, shown with SQLSTATE, detail and hint
};

/// An error from libpq or the server as a value: safe to copy across threads and queued signals.
/// Never carries parameter values or payloads (they may hold customer data).
class DbError
{
public:
    DbError() = default;
    DbError(ErrorKind kind, QString message, QString sqlState = {});

    /// Reads SQLSTATE, primary message, detail and hint from a failed result. `connection` is used
    /// to tell a lost connection from a server error when the result carries no SQLSTATE.
    static DbError fromResult(const pg_result *result, const pg_conn *connection);
    /// Describes why `connection` could not be opened or is no longer usable. When the
    /// connection was opened with verbose errors (as PgConnection::open does), the server's
    /// SQLSTATE is read from the message, so a refused login is ErrorKind::Authentication.
    static DbError fromConnection(const pg_conn *connection);
    /// The error for libpq's connection message `message` (PQerrorMessage): the last SQLSTATE
    /// it names after a severity (verbose errors, "FATAL:  28P01: ..."), removed from the text
    /// along with LOCATION lines; 08006 when it names none. `needsPassword` (libpq asked for a
    /// password and had none) makes it ErrorKind::Authentication too.
    static DbError fromConnectionMessage(const QString &message, bool needsPassword = false);
    /// Maps a five-character SQLSTATE to its kind; an empty or unknown state is ErrorKind::Other.
    static ErrorKind kindForSqlState(const QString &sqlState);

    ErrorKind kind() const { return m_kind; }
    QString sqlState() const { return m_sqlState; }
    QString message() const { return m_message; }
    QString detail() const { return m_detail; }
    QString hint() const { return m_hint; }

    /// One line for logs and status bars: "[SQLSTATE] message".
    QString summary() const;
    /// Stable lower-case name of a kind ("connection", "canceled", ...), for logs and tests.
    static QString kindName(ErrorKind kind);

private:
    ErrorKind m_kind = ErrorKind::Other;
    QString m_sqlState;
    QString m_message;
    QString m_detail;
    QString m_hint;
};

} // namespace redrive::db

Q_DECLARE_METATYPE(redrive::db::DbError)
