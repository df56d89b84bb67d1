// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/connection_settings.h"
#include "models/db/database_session.h"
#include "models/db/pg_connection.h"

#include <QString>
#include <QStringList>
#include <memory>

namespace redrive::test {

/// Access to the throwaway PostgreSQL the CTest fixture started (tests/support/pg_test_cluster.sh).
/// Each database test asks for a database of its own; it is dropped when the object goes, and
/// so are the logins made with createLogin() (after the database, so nothing depends on them).
/// The one place tests set themselves up: logins, connections and sessions as the console makes
/// them.
class TestDatabase
{
public:
    /// How long openSession() waits for the session to connect, in ms.
    static constexpr int kConnectTimeoutMs = 10000;

    enum class Contents { Migrated, Empty };

    /// Creates a new database named after `tag` and the process id: a clone of the migrated
    /// template, or an empty one. QFAIL-style failures are reported through isValid().
    explicit TestDatabase(const QString &tag, Contents contents = Contents::Migrated);
    ~TestDatabase();
    TestDatabase(const TestDatabase &) = delete;
    TestDatabase &operator=(const TestDatabase &) = delete;

    bool isValid() const { return m_valid; }
    /// Why the database or the last openSession() failed.
    QString error() const { return m_error; }
    QString name() const { return m_name; }
    /// Settings that reach this database as the cluster's superuser.
    db::ConnectionSettings settings() const;
    /// Settings for another login role on this database (password-less, trust auth).
    db::ConnectionSettings settingsAs(const QString &role) const;
    /// Settings for login role `role` on this database over TCP (host=127.0.0.1), where the test
    /// cluster asks for a password (scram-sha-256); the password is not part of them.
    db::ConnectionSettings settingsOverTcp(const QString &role) const;
    /// Settings for a login over TCP on loopback with a password (scram-sha-256, as the fixture's
    /// pg_hba.conf asks on 127.0.0.1): how a real operator or worker connects.
    db::ConnectionSettings tcpSettingsAs(const QString &role, const QString &password) const;
    /// A fresh connection as the superuser; aborts the test run when it cannot connect.
    db::PgConnection connect() const;

    /// Creates the login role `name`_<process id> (roles are cluster-wide; the suffix keeps
    /// concurrent test processes apart), member of each of `roles` (e.g. "redrive_oncall"), with
    /// `password` when one is given (needed over TCP, see tcpSettingsAs()). A login of that name
    /// left by a crashed run is dropped first. Returns the login's name; aborts the test run,
    /// naming the login and the server's answer, when it cannot be made (as connect() does). The
    /// login is dropped when this object goes.
    QString createLogin(const QString &name, const QStringList &roles = {},
                        const QString &password = {});

    /// settings() with search_path "redrive", as the console connects to the native source.
    db::ConnectionSettings consoleSettings() const;
    /// settingsAs(login) with search_path "redrive", as the console connects.
    db::ConnectionSettings consoleSettingsAs(const QString &login) const;
    /// tcpSettingsAs(login, password) with search_path "redrive": the console over loopback.
    db::ConnectionSettings consoleTcpSettingsAs(const QString &login,
                                                const QString &password) const;
    /// A fresh connection as `login` with search_path "redrive"; aborts the test run when it
    /// cannot connect.
    db::PgConnection connectAs(const QString &login) const;
    /// A fresh connection with `settings`; aborts the test run, naming the connection (without
    /// its password) and the server's answer, when it cannot connect.
    static db::PgConnection connectWith(const db::ConnectionSettings &settings);

    /// A DatabaseSession with `settings`, opened, once it has connected (waits at most
    /// `timeoutMs`, running the event loop). When it does not connect in time, returns nullptr
    /// and error() says which connection and the last error the session reported; callers
    /// `QVERIFY2(session, qPrintable(db.error()))`.
    std::unique_ptr<db::DatabaseSession> openSession(const db::ConnectionSettings &settings,
                                                     int timeoutMs = kConnectTimeoutMs);

    /// The cluster's connection string for the maintenance database "postgres".
    static QString adminConnInfo();
    /// host=... port=... user=postgres, without dbname.
    static QString clusterConnInfo();

private:
    QString m_name;
    QStringList m_logins;
    bool m_valid = false;
    QString m_error;
};

} // namespace redrive::test
