// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/db/pg_connection.h"

#include "models/logging.h"

#include <QDeadlineTimer>
#include <QScopeGuard>
#include <QStringList>
#include <algorithm>
#include <cerrno>
#include <libpq-fe.h>
#include <poll.h>
#include <vector>

namespace redrive::db {

namespace {

// connect_timeout as libpq reads it for this connection (string, PGCONNECT_TIMEOUT, service):
// seconds, at least 2; 0 when there is none (wait as long as the network does).
int connectTimeoutSeconds(PGconn *conn)
{
    int seconds = 0;
    if (PQconninfoOption *options = PQconninfo(conn)) {
        for (PQconninfoOption *o = options; o->keyword; ++o)
            if (qstrcmp(o->keyword, "connect_timeout") == 0 && o->val)
                seconds = QByteArray(o->val).trimmed().toInt();
        PQconninfoFree(options);
    }
    return seconds <= 0 ? 0 : std::max(seconds, 2);
}

// PQconnectdbParams, driven by hand with PQconnectStartParams/PQconnectPoll so that errors are
// verbose while connecting: the server's SQLSTATE then reaches the message, which is how a
// refused login (28P01) is told from a server that is down. Returns the connection (ready or
// failed); `timedOut` when a host gave no answer within connect_timeout (libpq itself would try
// the next host then; this ends the attempt).
PGconn *connectVerbosely(const char *const *keys, const char *const *values, bool *timedOut)
{
    *timedOut = false;
    PGconn *conn = PQconnectStartParams(keys, values, 1);
    if (!conn || PQstatus(conn) == CONNECTION_BAD)
        return conn;
    PQsetErrorVerbosity(conn, PQERRORS_VERBOSE);
    const int timeoutSeconds = connectTimeoutSeconds(conn);
    auto deadline = [timeoutSeconds] {
        return timeoutSeconds > 0 ? QDeadlineTimer(qint64(timeoutSeconds) * 1000)
                                  : QDeadlineTimer(QDeadlineTimer::Forever);
    };
    QDeadlineTimer expires = deadline();
    int socket = PQsocket(conn);
    PostgresPollingStatusType polling = PGRES_POLLING_WRITING;
    while (polling != PGRES_POLLING_OK && polling != PGRES_POLLING_FAILED) {
        if (PQsocket(conn) != socket) { // the next address or host: a fresh timeout, as libpq
            socket = PQsocket(conn);
            expires = deadline();
        }
        pollfd fd {};
        fd.fd = socket;
        fd.events = short(polling == PGRES_POLLING_READING ? POLLIN : POLLOUT);
        const int waitMs = expires.isForever() ? -1 : int(expires.remainingTime());
        const int ready = ::poll(&fd, 1, waitMs);
        if (ready < 0 && errno == EINTR)
            continue;
        if (ready == 0) {
            *timedOut = true;
            break;
        }
        polling = PQconnectPoll(conn);
    }
    PQsetErrorVerbosity(conn, PQERRORS_DEFAULT);
    return conn;
}

// The settings open() pins, as one statement: $1 TimeZone, $2 search_path (empty: left as it is),
// $3 for the transaction only. Every name is qualified: it may run under a search_path that code
// of the previous statement set.
constexpr const char *kPinSettings
    = "SELECT pg_catalog.set_config('TimeZone', $1, $3::boolean),"
      " pg_catalog.set_config('DateStyle', 'ISO, YMD', $3::boolean),"
      " pg_catalog.set_config('IntervalStyle', 'postgres', $3::boolean),"
      " pg_catalog.set_config('jit', 'off', $3::boolean),"
      " CASE WHEN pg_catalog.current_setting('synchronous_commit') OPERATOR(pg_catalog.=) 'off'"
      "      THEN pg_catalog.set_config('synchronous_commit', 'on', $3::boolean) END,"
      " CASE WHEN $2::text OPERATOR(pg_catalog.<>) ''"
      "      THEN pg_catalog.set_config('search_path', $2::text, $3::boolean) END";

} // namespace

quint64 parseLsn(const QString &text)
{
    const qsizetype slash = text.indexOf(QLatin1Char('/'));
    if (slash <= 0)
        return 0;
    bool okHigh = false;
    bool okLow = false;
    const quint64 high = text.left(slash).toULongLong(&okHigh, 16);
    const quint64 low = text.mid(slash + 1).toULongLong(&okLow, 16);
    return okHigh && okLow && high <= 0xffffffffULL && low <= 0xffffffffULL ? (high << 32) | low
                                                                            : 0;
}

CancelHandle::CancelHandle(pg_cancel *cancel)
    : m_cancel(cancel, [](pg_cancel *c) {
        if (c)
            PQfreeCancel(c);
    })
{ }

bool CancelHandle::cancel(QString *errorMessage) const
{
    if (!m_cancel) {
        if (errorMessage)
            *errorMessage = QStringLiteral("no connection to cancel");
        return false;
    }
    char buffer[256] = {};
    const bool sent = PQcancel(m_cancel.get(), buffer, sizeof buffer) == 1;
    if (!sent && errorMessage)
        *errorMessage = QString::fromUtf8(buffer);
    return sent;
}

PgConnection::PgConnection() = default;

PgConnection::PgConnection(PGconn *conn)
    : m_conn(conn)
{ }

PgConnection::~PgConnection()
{
    if (m_conn)
        PQfinish(m_conn);
}

PgConnection::PgConnection(PgConnection &&other) noexcept
    : m_conn(std::exchange(other.m_conn, nullptr))
    , m_timeZone(std::move(other.m_timeZone))
    , m_searchPath(std::move(other.m_searchPath))
{ }

PgConnection &PgConnection::operator=(PgConnection &&other) noexcept
{
    if (this != &other) {
        if (m_conn)
            PQfinish(m_conn);
        m_conn = std::exchange(other.m_conn, nullptr);
        m_timeZone = std::move(other.m_timeZone);
        m_searchPath = std::move(other.m_searchPath);
    }
    return *this;
}

DbExpected<PgConnection> PgConnection::open(const ConnectionSettings &settings)
{
    // Validate the string first, so a typo is reported as such and not as "could not connect".
    if (!settings.connInfo.trimmed().isEmpty()) {
        char *parseError = nullptr;
        PQconninfoOption *parsed
            = PQconninfoParse(settings.connInfo.toUtf8().constData(), &parseError);
        if (!parsed) {
            // libpq's message quotes the text it choked on, which may be part of a password:
            // it is shown only when the string names no password and no URI user info.
            const bool mayQuoteSecret = settings.connInfo.contains(QLatin1String("pass"))
                || settings.connInfo.contains(QLatin1Char('@'));
            const QString message = parseError && !mayQuoteSecret
                ? QString::fromUtf8(parseError).trimmed()
                : QStringLiteral("invalid connection string (libpq cannot parse it)");
            PQfreemem(parseError);
            return DbError(ErrorKind::Other, message);
        }
        PQconninfoFree(parsed);
    }

    // Order matters: libpq applies keywords in order and the last non-empty value wins, so our
    // defaults come first and anything in the operator's connection string overrides them.
    // A default is left out where the matching environment variable is set, so PGAPPNAME and
    // PGCONNECT_TIMEOUT keep working.
    std::vector<QByteArray> keys;
    std::vector<QByteArray> values;
    auto add = [&](const char *key, const QByteArray &value) {
        keys.emplace_back(key);
        values.push_back(value);
    };
    if (qEnvironmentVariableIsEmpty("PGAPPNAME"))
        add("application_name", settings.applicationName.toUtf8());
    if (qEnvironmentVariableIsEmpty("PGCONNECT_TIMEOUT"))
        add("connect_timeout", QByteArray::number(settings.connectTimeoutSeconds));
    add("keepalives", "1");
    add("keepalives_idle", "30");
    add("keepalives_interval", "10");
    add("keepalives_count", "3");
    if (!settings.connInfo.trimmed().isEmpty())
        add("dbname", settings.connInfo.toUtf8());
    // After the string, so it overrides the string's own, PGCLIENTENCODING and the login's
    // settings (a client's startup option outranks ALTER ROLE ... SET): every text the program
    // reads or sends is UTF-8, and another encoding had the server convert what the console and
    // export-audit then wrote as if it were UTF-8 ("caf\xe9").
    add("client_encoding", "UTF8");
    // After the string, so it overrides the string's own
    // (docs/architecture.md#reading-from-a-standby).
    if (!settings.targetSessionAttrs.isEmpty())
        add("target_session_attrs", settings.targetSessionAttrs.toUtf8());
    if (!settings.password.isEmpty())
        add("password", settings.password.toUtf8());

    std::vector<const char *> keyPtrs;
    std::vector<const char *> valuePtrs;
    for (size_t i = 0; i < keys.size(); ++i) {
        keyPtrs.push_back(keys[i].constData());
        valuePtrs.push_back(values[i].constData());
    }
    keyPtrs.push_back(nullptr);
    valuePtrs.push_back(nullptr);

    bool timedOut = false;
    PgConnection connection(connectVerbosely(keyPtrs.data(), valuePtrs.data(), &timedOut));
    if (timedOut)
        return DbError(ErrorKind::Connection,
                       QStringLiteral("could not connect to %1 port %2: timeout expired")
                           .arg(QString::fromUtf8(PQhost(connection.m_conn)),
                                QString::fromUtf8(PQport(connection.m_conn))),
                       QStringLiteral("08001"));
    if (!connection.m_conn || PQstatus(connection.m_conn) != CONNECTION_OK)
        return DbError::fromConnection(connection.m_conn);

    // An acknowledged commit must survive a server crash
    // (docs/reliability.md#acknowledged-means-durable): a server, database or role set to
    // synchronous_commit = off acknowledges commits that a crash can still lose, so such a session
    // asks for "on"; a stronger setting (remote_write, remote_apply) and "local" (durable on this
    // server) are kept.
    // JIT compilation is off (docs/benchmarks.md, "The run at 1,000,000"): Redrive's statements
    // are short reads and set-based actions whose plans the planner over-costs (functions
    // returning sets count as 1,000 rows each), so with the server's default jit = on it spent
    // seconds compiling a statement that runs in milliseconds (the failure groups: 14 of 15 s).
    // The same settings are pinned again before every statement (exec()).
    auto pinned = connection.exec(kPinSettings,
                                  QueryParams()
                                      .addText(settings.sessionTimeZone)
                                      .addText(pinnedSearchPath(settings.searchPath))
                                      .addText(QStringLiteral("false")));
    if (!pinned)
        return pinned.error();
    connection.m_timeZone = settings.sessionTimeZone.toUtf8();
    if (settings.pinEveryStatement)
        connection.m_searchPath = pinnedSearchPath(settings.searchPath).toUtf8();
    qCDebug(lcDb) << "connected, backend pid" << PQbackendPID(connection.m_conn);
    return connection;
}

bool PgConnection::isOpen() const
{
    return m_conn != nullptr;
}

bool PgConnection::isHealthy() const
{
    return m_conn && PQstatus(m_conn) == CONNECTION_OK;
}

bool PgConnection::inTransactionBlock() const
{
    if (!m_conn)
        return false;
    const PGTransactionStatusType status = PQtransactionStatus(m_conn);
    return status == PQTRANS_INTRANS || status == PQTRANS_INERROR;
}

DbExpected<ResultSet> PgConnection::checked(PGresult *result)
{
    const ExecStatusType status = result ? PQresultStatus(result) : PGRES_FATAL_ERROR;
    if (status == PGRES_COMMAND_OK || status == PGRES_TUPLES_OK || status == PGRES_SINGLE_TUPLE)
        return ResultSet(result);
    DbError error = DbError::fromResult(result, m_conn);
    if (result)
        PQclear(result);
    return error;
}

QString PgConnection::pinnedSearchPath(const QString &path)
{
    QStringList names;
    for (const QString &part : path.split(QLatin1Char(','), Qt::SkipEmptyParts)) {
        const QString name = part.trimmed();
        if (!name.isEmpty() && name.compare(QLatin1String("pg_temp"), Qt::CaseInsensitive) != 0
            && name.compare(QLatin1String("\"pg_temp\"")) != 0)
            names << name;
    }
    if (names.isEmpty())
        return {};
    // pg_catalog named (it is searched first when it is not), so that pg_temp comes after it.
    if (!names.contains(QLatin1String("pg_catalog"), Qt::CaseInsensitive))
        names << QStringLiteral("pg_catalog");
    return names.join(QStringLiteral(", ")) + QStringLiteral(", pg_temp");
}

DbExpected<ResultSet> PgConnection::exec(const QByteArray &sql, const QueryParams &params)
{
    if (!m_conn)
        return DbError(ErrorKind::Connection, QStringLiteral("connection is not open"));
    if (const std::optional<DbError> refused = params.error())
        return *refused; // a text value with a NUL: nothing is sent (QueryParams)
    if (!m_searchPath.isEmpty()) {
        // In a failed transaction block only ROLLBACK can run: nothing to pin there.
        const PGTransactionStatusType status = PQtransactionStatus(m_conn);
        if (status == PQTRANS_IDLE || status == PQTRANS_INTRANS)
            return execPinned(sql, params, status == PQTRANS_INTRANS);
    }
    const std::vector<unsigned int> types = params.types();
    const std::vector<const char *> vals = params.values();
    const std::vector<int> lengths = params.lengths();
    const std::vector<int> formats = params.formats();
    PGresult *result = PQexecParams(m_conn, sql.constData(), params.size(), types.data(),
                                    vals.data(), lengths.data(), formats.data(), 0);
    return checked(result);
}

namespace {

// BEGIN or START TRANSACTION: the statement that opens a transaction block, whose isolation
// level must come before any other statement of its transaction.
bool opensTransactionBlock(const QByteArray &sql)
{
    const QByteArray head = sql.trimmed().left(5).toUpper();
    return head == "BEGIN" || head == "START";
}

} // namespace

// The pinning and the statement go in one pipeline, read back in one round trip:
//  - outside a transaction block: [RESET ALL, the settings of kPinSettings, the statement] Sync.
//    One implicit transaction: when the pinning fails (a cancel that came while it ran), the
//    server skips the statement (PGRES_PIPELINE_ABORTED) and the settings stay as they were;
//  - a BEGIN or START TRANSACTION: [RESET ALL, the settings] Sync [the statement] Sync, so that
//    its isolation level still comes first in its transaction; when the pinning fails, the
//    BEGIN ran (it runs no code a setting could redirect) and is rolled back at once;
//  - inside a transaction block: [the settings for the transaction] Sync [the statement] Sync.
//    When the pinning fails, the transaction is aborted and the statement can only fail with
//    25P02 or end the transaction (ROLLBACK, or COMMIT, which then rolls back): a ROLLBACK the
//    caller sends after a cancel still ends the transaction.
// A failed pinning is returned as the request's error (a cancel as ErrorKind::Canceled) and the
// connection stays open: the next statement is pinned again. Only a pipeline that does not end
// as sent closes the connection.
DbExpected<ResultSet> PgConnection::execPinned(const QByteArray &sql, const QueryParams &params,
                                               bool inTransaction)
{
    const QByteArray local = inTransaction ? "true" : "false";
    const char *pinValues[]
        = { m_timeZone.constData(), m_searchPath.constData(), local.constData() };
    const std::vector<unsigned int> types = params.types();
    const std::vector<const char *> vals = params.values();
    const std::vector<int> lengths = params.lengths();
    const std::vector<int> formats = params.formats();
    auto lost = [this](const QString &what) {
        DbError error(ErrorKind::Connection,
                      QStringLiteral("the session's settings could not be pinned before the "
                                     "statement (%1); the connection is closed")
                          .arg(what));
        PQfinish(m_conn);
        m_conn = nullptr;
        return error;
    };
    const bool syncBetween = inTransaction || opensTransactionBlock(sql);
    if (PQenterPipelineMode(m_conn) != 1)
        return lost(QString::fromUtf8(PQerrorMessage(m_conn)).trimmed());
    const int preamble = inTransaction ? 1 : 2;
    bool sent = inTransaction
        || PQsendQueryParams(m_conn, "RESET ALL", 0, nullptr, nullptr, nullptr, nullptr, 0) == 1;
    sent = sent
        && PQsendQueryParams(m_conn, kPinSettings, 3, nullptr, pinValues, nullptr, nullptr, 0) == 1;
    if (syncBetween)
        sent = sent && PQpipelineSync(m_conn) == 1;
    sent = sent
        && PQsendQueryParams(m_conn, sql.constData(), params.size(), types.data(), vals.data(),
                             lengths.data(), formats.data(), 0)
            == 1;
    sent = sent && PQpipelineSync(m_conn) == 1;
    if (!sent)
        return lost(QString::fromUtf8(PQerrorMessage(m_conn)).trimmed());

    // Each query's results end with a NULL; each Sync answers PGRES_PIPELINE_SYNC.
    auto lastResultOfQuery = [this]() -> PGresult * {
        PGresult *last = nullptr;
        while (PGresult *r = PQgetResult(m_conn)) {
            if (last)
                PQclear(last);
            last = r;
        }
        return last;
    };
    auto awaitSync = [this]() {
        PGresult *r = PQgetResult(m_conn);
        const bool synced = r && PQresultStatus(r) == PGRES_PIPELINE_SYNC;
        if (r)
            PQclear(r);
        return synced;
    };
    PGresult *pinFailure = nullptr; // the first of the pinning's results that is not a success
    for (int i = 0; i < preamble; ++i) {
        PGresult *r = lastResultOfQuery();
        const ExecStatusType status = r ? PQresultStatus(r) : PGRES_FATAL_ERROR;
        if (!pinFailure && status != PGRES_TUPLES_OK && status != PGRES_COMMAND_OK) {
            if (!r)
                r = PQmakeEmptyPGresult(m_conn, PGRES_FATAL_ERROR);
            pinFailure = r;
        } else if (r) {
            PQclear(r);
        }
    }
    const auto clearPinFailure = qScopeGuard([&pinFailure] {
        if (pinFailure)
            PQclear(pinFailure);
    });
    const bool firstSync = !syncBetween || awaitSync();
    PGresult *result = lastResultOfQuery();
    const bool lastSync = awaitSync();
    if (!firstSync || !lastSync || PQexitPipelineMode(m_conn) != 1) {
        if (result)
            PQclear(result);
        if (PQstatus(m_conn) != CONNECTION_OK)
            return DbError::fromConnection(m_conn);
        return lost(QStringLiteral("the pipeline did not end"));
    }
    if (!pinFailure)
        return checked(result);
    if (result)
        PQclear(result);
    if (!inTransaction && PQtransactionStatus(m_conn) != PQTRANS_IDLE) {
        // The BEGIN ran after its pinning failed: end that transaction before anything runs in it.
        PGresult *rolledBack = PQexec(m_conn, "ROLLBACK");
        const bool ended = rolledBack && PQresultStatus(rolledBack) == PGRES_COMMAND_OK
            && PQtransactionStatus(m_conn) == PQTRANS_IDLE;
        if (rolledBack)
            PQclear(rolledBack);
        if (!ended)
            return lost(QStringLiteral("a transaction begun unpinned could not be rolled back"));
    }
    return DbError::fromResult(pinFailure, m_conn);
}

DbExpected<ResultSet> PgConnection::prepare(const QByteArray &name, const QByteArray &sql)
{
    if (!m_conn)
        return DbError(ErrorKind::Connection, QStringLiteral("connection is not open"));
    return checked(PQprepare(m_conn, name.constData(), sql.constData(), 0, nullptr));
}

DbExpected<ResultSet> PgConnection::execPrepared(const QByteArray &name, const QueryParams &params)
{
    if (!m_conn)
        return DbError(ErrorKind::Connection, QStringLiteral("connection is not open"));
    if (const std::optional<DbError> refused = params.error())
        return *refused; // a text value with a NUL: nothing is sent (QueryParams)
    const std::vector<const char *> vals = params.values();
    const std::vector<int> lengths = params.lengths();
    const std::vector<int> formats = params.formats();
    return checked(PQexecPrepared(m_conn, name.constData(), params.size(), vals.data(),
                                  lengths.data(), formats.data(), 0));
}

DbExpected<ResultSet> PgConnection::execScript(const QByteArray &sql)
{
    if (!m_conn)
        return DbError(ErrorKind::Connection, QStringLiteral("connection is not open"));
    return checked(PQexec(m_conn, sql.constData()));
}

CancelHandle PgConnection::cancelHandle() const
{
    return m_conn ? CancelHandle(PQgetCancel(m_conn)) : CancelHandle();
}

int PgConnection::socket() const
{
    return m_conn ? PQsocket(m_conn) : -1;
}

DbExpected<QList<Notification>> PgConnection::takeNotifications()
{
    if (!m_conn)
        return DbError(ErrorKind::Connection, QStringLiteral("connection is not open"));
    if (PQconsumeInput(m_conn) == 0 || PQstatus(m_conn) != CONNECTION_OK)
        return DbError::fromConnection(m_conn);
    QList<Notification> out;
    while (PGnotify *n = PQnotifies(m_conn)) {
        out.append(
            Notification { QString::fromUtf8(n->relname), QString::fromUtf8(n->extra), n->be_pid });
        PQfreemem(n);
    }
    return out;
}

QByteArray PgConnection::quoteIdentifier(const QString &name) const
{
    if (!m_conn)
        return {};
    const QByteArray utf8 = name.toUtf8();
    char *quoted = PQescapeIdentifier(m_conn, utf8.constData(), size_t(utf8.size()));
    if (!quoted)
        return {};
    QByteArray out(quoted);
    PQfreemem(quoted);
    return out;
}

ServerInfo PgConnection::serverInfo() const
{
    ServerInfo info;
    if (!m_conn)
        return info;
    const int version = PQserverVersion(m_conn);
    info.serverVersion = QStringLiteral("%1.%2").arg(version / 10000).arg(version % 10000);
    info.host = QString::fromUtf8(PQhost(m_conn));
    info.port = QString::fromUtf8(PQport(m_conn));
    info.database = QString::fromUtf8(PQdb(m_conn));
    info.user = QString::fromUtf8(PQuser(m_conn));
    info.backendPid = PQbackendPID(m_conn);
    // Reported by the server at connect and whenever it changes (PostgreSQL 14 and later).
    info.hotStandby = qstrcmp(PQparameterStatus(m_conn, "in_hot_standby"), "on") == 0;
    return info;
}

} // namespace redrive::db
