// SPDX-License-Identifier: GPL-3.0-or-later
// The demo world: lived-in (several failure groups, long histories, stuck keys, mismatches) and
// the same for the same seed.
#include "models/db/schema_migrator.h"
#include "models/worker/demo_world.h"
#include "tests/support/test_database.h"

#include <QTest>

using namespace redrive;
using namespace redrive::db;
using namespace redrive::worker;

namespace {

QList<QPair<QString, qint64>> buildWorld(const QString &tag, quint64 seed, int orders)
{
    test::TestDatabase db(tag);
    if (!db.isValid())
        qFatal("%s", qPrintable(db.error()));
    PgConnection conn = db.connect();
    if (!SchemaMigrator(conn, MigrationSet::simulatedWorld()).migrate())
        qFatal("sim migration failed");
    DemoOptions options;
    options.seed = seed;
    options.orders = orders;
    auto attempts = DemoWorldGenerator(conn, options).generate();
    if (!attempts)
        qFatal("demo: %s", qPrintable(attempts.error().summary()));
    auto counts = worldCounts(conn);
    if (!counts)
        qFatal("counts: %s", qPrintable(counts.error().summary()));
    // A second generate on the same database is refused: the demo wants a fresh one.
    if (DemoWorldGenerator(conn, options).generate().ok())
        qFatal("a second demo on the same database should be refused");
    return counts.value();
}

qint64 value(const QList<QPair<QString, qint64>> &counts, const QString &key)
{
    for (const auto &[k, v] : counts)
        if (k == key)
            return v;
    return 0;
}

} // namespace

class TestDemoWorld : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void sameSeedSameWorld()
    {
        const auto first = buildWorld(QStringLiteral("demo_a"), 11, 700);
        const auto second = buildWorld(QStringLiteral("demo_b"), 11, 700);
        for (const auto &[k, v] : first)
            qInfo("%-70s %8lld", qPrintable(k), static_cast<long long>(v));
        QCOMPARE(first, second);

        // Lived in: several failure groups, dead letters, stuck keys, mismatches.
        int groups = 0;
        for (const auto &[k, v] : first)
            if (k.startsWith(QLatin1String("group ")) && v > 0)
                ++groups;
        QVERIFY2(groups >= 6, qPrintable(QString::number(groups)));
        QVERIFY(value(first, QStringLiteral("table redrive.dead_letter")) >= 50);
        QVERIFY(value(first, QStringLiteral("stuck keys")) > 0);
        QVERIFY(value(first, QStringLiteral("job state running")) > 0); // a worker died
        // Operators already acted: requeued (some ran again and resolved), resolved, compensated.
        QVERIFY(value(first, QStringLiteral("dead letter resolved")) >= 8);
        QVERIFY(value(first, QStringLiteral("dead letter compensated")) > 0);
        QVERIFY(value(first, QStringLiteral("table sim.provider_refund")) > 0);
        QVERIFY(value(first, QStringLiteral("table redrive.outbox")) > 0);
        for (const char *kind : { "missing_internal", "missing_external", "amount_mismatch",
                                  "status_mismatch", "currency_mismatch" })
            QVERIFY2(value(first, QStringLiteral("mismatch ") + QLatin1String(kind)) > 0, kind);
        // Money in a zero- and a three-decimal currency, with a double charge and an overcharge
        // in each, and a refund of a double charge requested from its mismatch and carried out.
        for (const char *key :
             { "payments in JPY", "payments in KWD", "mismatch duplicate_external in JPY",
               "mismatch duplicate_external in KWD", "mismatch amount_mismatch in JPY",
               "mismatch amount_mismatch in KWD", "compensation from a mismatch done" })
            QVERIFY2(value(first, QLatin1String(key)) > 0, key);
    }

    void anotherSeedAnotherWorld()
    {
        const auto a = buildWorld(QStringLiteral("demo_c"), 1, 300);
        const auto b = buildWorld(QStringLiteral("demo_d"), 2, 300);
        QVERIFY(a != b);
    }
};

QTEST_GUILESS_MAIN(TestDemoWorld)
#include "tst_demo_world.moc"
