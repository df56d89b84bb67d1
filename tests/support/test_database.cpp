// SPDX-License-Identifier: GPL-3.0-or-later
#include "tests/support/test_database.h"

#include <QCoreApplication>
#include <QFile>
#include <QHash>
#include <QRegularExpression>
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
    db::ConnectionSettings admin;
    admin.connInfo = adminConnInfo();
    auto connection = db::PgConnection::open(admin);
    if (!connection) {
        m_error = connection.error().summary();
        return;
    }
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
    if (!m_valid)
        return;
    db::ConnectionSettings admin;
    admin.connInfo = adminConnInfo();
    auto connection = db::PgConnection::open(admin);
    if (connection)
        connection->exec("DROP DATABASE IF EXISTS " + connection->quoteIdentifier(m_name)
                         + " WITH (FORCE)");
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
    auto connection = db::PgConnection::open(settings());
    if (!connection)
        qFatal("test database: cannot connect to %s: %s", qPrintable(m_name),
               qPrintable(connection.error().summary()));
    return std::move(connection.value());
}

db::ConnectionSettings TestDatabase::tcpSettingsAs(const QString &role,
                                                   const QString &password) const
{
    db::ConnectionSettings s = settingsOverTcp(role);
    s.password = password;
    return s;
}

} // namespace redrive::test
