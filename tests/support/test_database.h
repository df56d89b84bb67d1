// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/connection_settings.h"
#include "models/db/pg_connection.h"

#include <QString>

namespace redrive::test {

/// Access to the throwaway PostgreSQL the CTest fixture started (tests/support/pg_test_cluster.sh).
/// Each database test asks for a database of its own; it is dropped when the object goes.
class TestDatabase
{
public:
    enum class Contents { Migrated, Empty };

    /// Creates a new database named after `tag` and the process id: a clone of the migrated
    /// template, or an empty one. QFAIL-style failures are reported through isValid().
    explicit TestDatabase(const QString &tag, Contents contents = Contents::Migrated);
    ~TestDatabase();
    TestDatabase(const TestDatabase &) = delete;
    TestDatabase &operator=(const TestDatabase &) = delete;

    bool isValid() const { return m_valid; }
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

    /// The cluster's connection string for the maintenance database "postgres".
    static QString adminConnInfo();
    /// host=... port=... user=postgres, without dbname.
    static QString clusterConnInfo();

private:
    QString m_name;
    bool m_valid = false;
    QString m_error;
};

} // namespace redrive::test
