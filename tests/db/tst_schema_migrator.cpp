// SPDX-License-Identifier: GPL-3.0-or-later
// Migrations: applied once, recorded, idempotent, serialized, and the roles and grants of
// docs/domain.md#roles-are-enforced-by-postgresql.
#include "models/db/schema_migrator.h"
#include "models/source_installer.h"
#include "tests/support/test_database.h"

#include <QCryptographicHash>
#include <QDir>
#include <QFile>
#include <QTemporaryDir>
#include <QTest>
#include <QTimeZone>
#include <thread>

using namespace redrive;
using namespace redrive::db;

namespace {

// Everything a migration can change, as sorted text: relations, columns, constraints, indexes,
// functions, triggers, grants, extensions. Two equal snapshots mean an unchanged schema.
QString schemaSnapshot(PgConnection &conn)
{
    auto r = conn.exec(R"sql(
        SELECT string_agg(line, E'\n' ORDER BY line) FROM (
          SELECT 'rel ' || c.relname || ' ' || c.relkind::text || ' ' || coalesce(c.relacl::text, '')
            FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
           WHERE n.nspname = 'redrive'
          UNION ALL
          SELECT 'col ' || table_name || '.' || column_name || ' ' || data_type || ' '
                 || is_nullable || ' ' || coalesce(column_default, '')
            FROM information_schema.columns WHERE table_schema = 'redrive'
          UNION ALL
          SELECT 'con ' || conrelid::regclass::text || ' ' || conname || ' '
                 || pg_get_constraintdef(oid)
            FROM pg_constraint WHERE connamespace = 'redrive'::regnamespace
          UNION ALL
          SELECT 'idx ' || indexdef FROM pg_indexes WHERE schemaname = 'redrive'
          UNION ALL
          SELECT 'fun ' || p.oid::regprocedure::text || ' ' || md5(p.prosrc) || ' '
                 || coalesce(p.proacl::text, '') || ' ' || coalesce(p.proconfig::text, '')
            FROM pg_proc p WHERE p.pronamespace = 'redrive'::regnamespace
          UNION ALL
          SELECT 'trg ' || tgrelid::regclass::text || ' ' || pg_get_triggerdef(oid)
            FROM pg_trigger WHERE NOT tgisinternal
          UNION ALL
          SELECT 'ext ' || extname FROM pg_extension
          UNION ALL
          SELECT 'ver ' || version || ' ' || name || ' ' || checksum FROM redrive.schema_version
        ) s(line))sql");
    return r ? r->text(0, 0) : QStringLiteral("error: ") + r.error().summary();
}

} // namespace

class TestSchemaMigrator : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void bundledMigrationsAreNumberedFromOne()
    {
        const QList<Migration> all = SchemaMigrator::bundledMigrations();
        QVERIFY(!all.isEmpty());
        // Numbered from one and increasing; a number left unused is skipped (the migrator
        // applies every bundled number not applied yet, in order).
        QCOMPARE(all.first().version, 1);
        for (int i = 0; i < all.size(); ++i) {
            QVERIFY(i == 0 || all[i].version > all[i - 1].version);
            QVERIFY(!all[i].sql.isEmpty());
            QCOMPARE(all[i].checksum.size(), 64);
        }
        QCOMPARE(SchemaMigrator::expectedVersion(), all.last().version);
    }

    // A line `\\ir PATH` stands for the file it names, relative to the including file, as psql
    // runs it; the checksum is of the text as run. A file without one is read byte for byte (so
    // the checksums already recorded in databases stay the same), and a file that is not there
    // leaves its line.
    void includeLinesAreExpanded()
    {
        QTemporaryDir dir;
        QVERIFY(dir.isValid());
        const auto write = [&dir](const QString &path, const QByteArray &text) {
            QVERIFY(QDir(dir.path()).mkpath(QFileInfo(dir.filePath(path)).path()));
            QFile f(dir.filePath(path));
            QVERIFY(f.open(QIODevice::WriteOnly));
            f.write(text);
        };
        write(QStringLiteral("line/0001_plain.sql"), "SELECT 1;\r\n-- \\ir in a comment\n");
        write(QStringLiteral("line/0002_shared.sql"),
              "SELECT 2;\n\\ir ../common/a.sql\nSELECT 3;\n\\ir missing.sql\n");
        write(QStringLiteral("common/a.sql"), "SELECT 'a';\n\\ir b.sql");
        write(QStringLiteral("common/b.sql"), "SELECT 'b';");
        MigrationSet set = MigrationSet::redrive();
        set.resourceDir = dir.filePath(QStringLiteral("line"));
        const QList<Migration> all = SchemaMigrator::bundledMigrations(set);
        QCOMPARE(all.size(), 2);
        QCOMPARE(all[0].sql, QByteArray("SELECT 1;\r\n-- \\ir in a comment\n"));
        QCOMPARE(all[1].sql,
                 QByteArray("SELECT 2;\nSELECT 'a';\nSELECT 'b';\nSELECT 3;\n\\ir missing.sql\n"));
        // Files that are not the shipped ones (a source's SQL rewritten for another queue
        // schema) are read as they are.
        set.expandIncludes = false;
        QCOMPARE(SchemaMigrator::bundledMigrations(set).at(1).sql,
                 QByteArray("SELECT 2;\n\\ir ../common/a.sql\nSELECT 3;\n\\ir missing.sql\n"));
        for (const Migration &m : all) {
            QCOMPARE(m.checksum,
                     QString::fromLatin1(
                         QCryptographicHash::hash(m.sql, QCryptographicHash::Sha256).toHex()));
        }
    }

    // Every migration compiled in (Redrive's, the simulated world's, each source line's) has
    // its includes expanded: none is left for the server to refuse. pg-boss 10's and 12's lines
    // both hold the actions they share (resources/sources/pgboss_common).
    void bundledIncludesAreAllFound()
    {
        QList<MigrationSet> sets { MigrationSet::redrive(), MigrationSet::simulatedWorld() };
        for (const SourceDefinition &source : SourceDefinition::known()) {
            sets.append(source.migrationSet());
            for (const SourceDefinition &line : source.otherLines)
                sets.append(line.migrationSet());
        }
        QCOMPARE(sets.size(), 5);
        int sharing = 0;
        for (const MigrationSet &set : sets) {
            const QList<Migration> all = SchemaMigrator::bundledMigrations(set);
            QVERIFY2(!all.isEmpty(), qPrintable(set.resourceDir));
            for (const Migration &m : all) {
                QVERIFY2(!m.sql.startsWith("\\ir") && !m.sql.contains("\n\\ir"),
                         qPrintable(set.resourceDir + QLatin1Char(' ') + m.name));
                if (m.sql.contains("FUNCTION redrive_pgboss.lock_action_targets(")
                    && m.sql.contains("VIEW redrive_pgboss.bucket_rollup_list AS"))
                    ++sharing;
            }
        }
        QCOMPARE(sharing, 2);
    }

    void freshDatabaseThenAgainChangesNothing()
    {
        test::TestDatabase db(QStringLiteral("migrate_twice"), test::TestDatabase::Contents::Empty);
        QVERIFY2(db.isValid(), qPrintable(db.error()));
        PgConnection conn = db.connect();
        SchemaMigrator migrator(conn);
        QCOMPARE(migrator.currentVersion().value(), 0);

        auto first = migrator.migrate();
        QVERIFY2(first.ok(), first.ok() ? "" : qPrintable(first.error().summary()));
        QCOMPARE(first->fromVersion, 0);
        QCOMPARE(first->toVersion, SchemaMigrator::expectedVersion());
        QCOMPARE(first->applied.size(), SchemaMigrator::bundledMigrations().size());
        QCOMPARE(migrator.currentVersion().value(), SchemaMigrator::expectedVersion());
        const QString before = schemaSnapshot(conn);
        QVERIFY(before.contains(QStringLiteral("rel dead_letter r")));

        auto second = migrator.migrate();
        QVERIFY(second.ok());
        QVERIFY(second->applied.isEmpty());
        QCOMPARE(second->fromVersion, SchemaMigrator::expectedVersion());
        QCOMPARE(schemaSnapshot(conn), before);

        // The same through a second connection, as a second `redrive migrate` would.
        PgConnection other = db.connect();
        SchemaMigrator again(other);
        QVERIFY(again.migrate().ok());
        QCOMPARE(schemaSnapshot(conn), before);
    }

    void concurrentMigratorsApplyOnce()
    {
        test::TestDatabase db(QStringLiteral("migrate_race"), test::TestDatabase::Contents::Empty);
        QVERIFY(db.isValid());
        PgConnection a = db.connect();
        PgConnection b = db.connect();
        std::optional<DbExpected<MigrationReport>> ra;
        std::optional<DbExpected<MigrationReport>> rb;
        std::thread ta([&] { ra.emplace(SchemaMigrator(a).migrate()); });
        std::thread tb([&] { rb.emplace(SchemaMigrator(b).migrate()); });
        ta.join();
        tb.join();
        QVERIFY2(ra->ok(), ra->ok() ? "" : qPrintable(ra->error().summary()));
        QVERIFY2(rb->ok(), rb->ok() ? "" : qPrintable(rb->error().summary()));
        QCOMPARE((*ra)->applied.size() + (*rb)->applied.size(),
                 SchemaMigrator::bundledMigrations().size());
        auto rows = a.exec("SELECT count(*) FROM redrive.schema_version");
        QCOMPARE(rows->integer(0, 0),
                 std::optional<int>(int(SchemaMigrator::bundledMigrations().size())));
    }

    void editedMigrationIsRefused()
    {
        test::TestDatabase db(QStringLiteral("migrate_drift"));
        QVERIFY(db.isValid());
        PgConnection conn = db.connect();
        QVERIFY(conn.exec("UPDATE redrive.schema_version SET checksum = repeat('0', 64)"
                          " WHERE version = 1")
                    .ok());
        auto r = SchemaMigrator(conn).migrate();
        QVERIFY(!r.ok());
        QVERIFY(r.error().message().contains(QStringLiteral("differs")));
        // The advisory lock was released: another migrator is not stuck behind it.
        // (In this database: other tests running beside it hold advisory locks of their own.)
        auto held = conn.exec("SELECT count(*) FROM pg_locks WHERE locktype = 'advisory'"
                              " AND database = (SELECT oid FROM pg_database"
                              "                  WHERE datname = current_database())");
        QCOMPARE(held->integer(0, 0), std::optional<int>(0));
    }

    void rolesExistAndReadOnly_data()
    {
        QTest::addColumn<QString>("role");
        QTest::newRow("auditor") << QStringLiteral("redrive_auditor");
        QTest::newRow("oncall") << QStringLiteral("redrive_oncall");
        QTest::newRow("support") << QStringLiteral("redrive_support");
        QTest::newRow("approver") << QStringLiteral("redrive_approver");
    }
    void rolesExistAndReadOnly()
    {
        QFETCH(QString, role);
        test::TestDatabase db(QStringLiteral("roles"));
        QVERIFY(db.isValid());
        PgConnection conn = db.connect();
        auto r = conn.exec("SELECT rolcanlogin FROM pg_roles WHERE rolname = $1",
                           QueryParams().addText(role));
        QCOMPARE(r->rowCount(), 1);
        QCOMPARE(r->boolean(0, 0), std::optional<bool>(false)); // a group, not a login

        // Exactly SELECT on every table, for every Redrive role.
        auto grants = conn.exec(R"sql(
            SELECT c.relname,
                   has_table_privilege($1, c.oid, 'SELECT'),
                   has_table_privilege($1, c.oid, 'INSERT') OR has_table_privilege($1, c.oid, 'UPDATE')
                   OR has_table_privilege($1, c.oid, 'DELETE') OR has_table_privilege($1, c.oid, 'TRUNCATE')
                   OR has_table_privilege($1, c.oid, 'REFERENCES') OR has_table_privilege($1, c.oid, 'TRIGGER')
              FROM pg_class c WHERE c.relnamespace = 'redrive'::regnamespace AND c.relkind IN ('r', 'v')
             ORDER BY 1)sql",
                                QueryParams().addText(role));
        QVERIFY(grants.ok());
        QVERIFY(grants->rowCount() >= 12);
        for (int i = 0; i < grants->rowCount(); ++i) {
            QVERIFY2(grants->boolean(i, 1).value_or(false), qPrintable(grants->text(i, 0)));
            QVERIFY2(!grants->boolean(i, 2).value_or(true), qPrintable(grants->text(i, 0)));
        }

        // A login role granted into the group reads but cannot write, through plain libpq.
        const QString login = db.createLogin(role + QStringLiteral("_login_test"), { role });
        {
            auto as = PgConnection::open(db.settingsAs(login));
            QVERIFY2(as.ok(), as.ok() ? "" : qPrintable(as.error().summary()));
            QVERIFY(as->exec("SELECT count(*) FROM redrive.dead_letter").ok());
            auto write = as->exec("INSERT INTO redrive.outbox (command, target_type, target_id,"
                                  " dedupe_key) VALUES ('requeue', 'job', '1', 'x')");
            QVERIFY(!write.ok());
            QCOMPARE(write.error().kind(), ErrorKind::Permission);
        }
        conn.exec("DROP OWNED BY " + conn.quoteIdentifier(login));
        conn.exec("DROP ROLE " + conn.quoteIdentifier(login));
    }

    void auditLogRefusesUpdateAndDelete()
    {
        test::TestDatabase db(QStringLiteral("audit_append_only"));
        QVERIFY(db.isValid());
        PgConnection conn = db.connect(); // even the superuser goes through the trigger
        QVERIFY(conn.exec("INSERT INTO redrive.audit_log (action, reason, action_id)"
                          " VALUES ('note', 'test', gen_random_uuid())")
                    .ok());
        auto update = conn.exec("UPDATE redrive.audit_log SET reason = 'changed'");
        QVERIFY(!update.ok());
        QCOMPARE(update.error().kind(), ErrorKind::Permission);
        auto del = conn.exec("DELETE FROM redrive.audit_log");
        QVERIFY(!del.ok());
        auto truncate = conn.exec("TRUNCATE redrive.audit_log");
        QVERIFY(!truncate.ok());
        QCOMPARE(conn.exec("SELECT count(*) FROM redrive.audit_log")->integer(0, 0),
                 std::optional<int>(1));
    }

    void failureFingerprintGroupsLikeMessages()
    {
        test::TestDatabase db(QStringLiteral("fingerprint"));
        QVERIFY(db.isValid());
        PgConnection conn = db.connect();
        auto r = conn.exec(
            "SELECT redrive.failure_fingerprint('charge_card', 'transient', 'timeout', $1)"
            "     = redrive.failure_fingerprint('charge_card', 'transient', 'timeout', $2),"
            "       redrive.failure_fingerprint('charge_card', 'transient', 'timeout', $1)"
            "     = redrive.failure_fingerprint('send_receipt', 'transient', 'timeout', $1)",
            QueryParams()
                .addText(QStringLiteral("timeout after 30012 ms for order ord_1234 (req "
                                        "550e8400-e29b-41d4-a716-446655440000)"))
                .addText(QStringLiteral("Timeout after 29 ms for order ord_98 (req "
                                        "123e4567-e89b-12d3-a456-426614174000)")));
        QVERIFY(r.ok());
        QCOMPARE(r->boolean(0, 0), std::optional<bool>(true)); // same group
        QCOMPARE(r->boolean(0, 1), std::optional<bool>(false)); // other kind, other group
    }
};

QTEST_GUILESS_MAIN(TestSchemaMigrator)
#include "tst_schema_migrator.moc"
