// SPDX-License-Identifier: GPL-3.0-or-later
#include "tests/support/test_database.h"

#include <QCoreApplication>
#include <QFile>
#include <QHash>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTest>

namespace redrive::test {

namespace {

QHash<QString, QString> clusterEnv()
{
    QHash<QString, QString> env;
    QFile file(QStringLiteral(REDRIVE_TEST_PG_ENV));
    if (!file.open(QIODevice::ReadOnly))
        qFatal("test database: %s not found; run the tests through ctest so the pg fixture starts "
               "PostgreSQL",
               REDRIVE_TEST_PG_ENV);
    while (!file.atEnd()) {
        const QString line = QString::fromUtf8(file.readLine()).trimmed();
        const qsizetype eq = line.indexOf(QLatin1Char('='));
        if (eq > 0)
            env.insert(line.left(eq), line.mid(eq + 1));
    }
    return env;
}

QString quoteValue(const QString &value)
{
    QString v = value;
    v.replace(QLatin1Char('\\'), QStringLiteral("\\\\"))
        .replace(QLatin1Char('\''), QStringLiteral("\\'"));
    return QLatin1Char('\'') + v + QLatin1Char('\'');
}

db::ConnectionSettings withConsolePath(db::ConnectionSettings s)
{
    s.searchPath = QStringLiteral("redrive");
    return s;
}

std::optional<db::PgConnection> openAdmin(QString *error)
{
    db::ConnectionSettings admin;
    admin.connInfo = TestDatabase::adminConnInfo();
    auto connection = db::PgConnection::open(admin);
    if (!connection) {
        *error = connection.error().summary();
        return std::nullopt;
    }
    return std::move(connection.value());
}

} // namespace

QString TestDatabase::clusterConnInfo()
{
    const QHash<QString, QString> env = clusterEnv();
    return QStringLiteral("host=%1 port=%2 user=%3")
        .arg(quoteValue(env.value(QStringLiteral("PGHOST"))), env.value(QStringLiteral("PGPORT")),
             env.value(QStringLiteral("PGUSER")));
}

QString TestDatabase::adminConnInfo()
{
    return clusterConnInfo() + QStringLiteral(" dbname=postgres");
}

TestDatabase::TestDatabase(const QString &tag, Contents contents)
{
    static int counter = 0;
    QString safeTag = tag.toLower();
    safeTag.replace(QRegularExpression(QStringLiteral("[^a-z0-9_]")), QStringLiteral("_"));
    m_name = QStringLiteral("t_%1_%2_%3")
                 .arg(safeTag.left(30))
                 .arg(QCoreApplication::applicationPid())
                 .arg(++counter);
    auto connection = openAdmin(&m_error);
    if (!connection)
        return;
    // CREATE DATABASE takes an identifier, not a value; the name is built above from [a-z0-9_].
    QByteArray sql = "CREATE DATABASE " + connection->quoteIdentifier(m_name);
    if (contents == Contents::Migrated)
        sql += " TEMPLATE redrive_template";
    auto created = connection->exec(sql);
    if (!created) {
        m_error = created.error().summary();
        return;
    }
    m_valid = true;
}

TestDatabase::~TestDatabase()
{
    if (!m_valid && m_logins.isEmpty())
        return;
    QString error;
    auto connection = openAdmin(&error);
    if (!connection)
        return;
    if (m_valid)
        connection->exec("DROP DATABASE IF EXISTS " + connection->quoteIdentifier(m_name)
                         + " WITH (FORCE)");
    // After the database: whatever a login owned or was granted there went with it.
    for (const QString &login : std::as_const(m_logins))
        connection->exec("DROP ROLE IF EXISTS " + connection->quoteIdentifier(login));
}

QString TestDatabase::createLogin(const QString &name, const QStringList &roles,
                                  const QString &password)
{
    const QString login = QStringLiteral("%1_%2").arg(name).arg(QCoreApplication::applicationPid());
    QString error;
    auto connection = openAdmin(&error);
    if (!connection)
        qFatal("test database: create login %s: %s", qPrintable(login), qPrintable(error));
    // CREATE ROLE takes identifiers and a literal password, never parameters: the names are the
    // test's constants, quoted as identifiers; the password is quoted as a literal.
    QByteArray sql = "CREATE ROLE " + connection->quoteIdentifier(login) + " LOGIN";
    if (!password.isEmpty()) {
        QString literal = password;
        literal.replace(QLatin1Char('\''), QStringLiteral("''"));
        sql += " PASSWORD '" + literal.toUtf8() + "'";
    }
    if (!roles.isEmpty()) {
        QByteArrayList quoted;
        for (const QString &role : roles)
            quoted << connection->quoteIdentifier(role);
        sql += " IN ROLE " + quoted.join(", ");
    }
    connection->exec("DROP ROLE IF EXISTS " + connection->quoteIdentifier(login));
    auto created = connection->exec(sql);
    if (!created)
        qFatal("test database: create login %s: %s", qPrintable(login),
               qPrintable(created.error().summary()));
    if (!m_logins.contains(login))
        m_logins << login;
    return login;
}

db::ConnectionSettings TestDatabase::settings() const
{
    db::ConnectionSettings s;
    s.connInfo = clusterConnInfo() + QStringLiteral(" dbname=") + quoteValue(m_name);
    return s;
}

db::ConnectionSettings TestDatabase::settingsAs(const QString &role) const
{
    db::ConnectionSettings s = settings();
    s.connInfo += QStringLiteral(" user=") + quoteValue(role);
    return s;
}

db::ConnectionSettings TestDatabase::settingsOverTcp(const QString &role) const
{
    const QHash<QString, QString> env = clusterEnv();
    db::ConnectionSettings s;
    // passfile: no ~/.pgpass of the person running the tests may answer for the role.
    s.connInfo
        = QStringLiteral("host=127.0.0.1 port=%1 dbname=%2 user=%3 passfile=/nonexistent")
              .arg(env.value(QStringLiteral("PGPORT")), quoteValue(m_name), quoteValue(role));
    return s;
}

db::PgConnection TestDatabase::connect() const
{
    return connectWith(settings());
}

db::ConnectionSettings TestDatabase::consoleSettings() const
{
    return withConsolePath(settings());
}

db::ConnectionSettings TestDatabase::consoleSettingsAs(const QString &login) const
{
    return withConsolePath(settingsAs(login));
}

db::ConnectionSettings TestDatabase::consoleTcpSettingsAs(const QString &login,
                                                          const QString &password) const
{
    return withConsolePath(tcpSettingsAs(login, password));
}

db::PgConnection TestDatabase::connectAs(const QString &login) const
{
    return connectWith(consoleSettingsAs(login));
}

db::PgConnection TestDatabase::connectWith(const db::ConnectionSettings &settings)
{
    auto connection = db::PgConnection::open(settings);
    if (!connection)
        qFatal("test database: cannot connect (%s): %s",
               qPrintable(db::redactedConnInfo(settings.connInfo)),
               qPrintable(connection.error().summary()));
    return std::move(connection.value());
}

std::unique_ptr<db::DatabaseSession>
TestDatabase::openSession(const db::ConnectionSettings &settings, int timeoutMs)
{
    auto session = std::make_unique<db::DatabaseSession>(settings);
    QSignalSpy connected(session.get(), &db::DatabaseSession::connected);
    QString lastError = QStringLiteral("none reported");
    const QMetaObject::Connection lost
        = QObject::connect(session.get(), &db::DatabaseSession::connectionLost, session.get(),
                           [&lastError](const db::DbError &error) { lastError = error.summary(); });
    session->open();
    const bool ok = !connected.isEmpty() || connected.wait(timeoutMs);
    // The lambda must not outlive lastError: the session may report more later.
    QObject::disconnect(lost);
    if (!ok) {
        m_error = QStringLiteral("session (%1) did not connect within %2 ms; last error: %3")
                      .arg(db::redactedConnInfo(settings.connInfo))
                      .arg(timeoutMs)
                      .arg(lastError);
        return nullptr;
    }
    return session;
}

db::ConnectionSettings TestDatabase::tcpSettingsAs(const QString &role,
                                                   const QString &password) const
{
    db::ConnectionSettings s = settingsOverTcp(role);
    s.password = password;
    return s;
}

} // namespace redrive::test
