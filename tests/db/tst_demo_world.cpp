// SPDX-License-Identifier: GPL-3.0-or-later
// The demo world: lived-in (several failure groups, long histories, stuck keys, mismatches) and
// the same for the same seed.
#include "models/db/database_session.h"
#include "models/db/schema_migrator.h"
#include "models/dead_letter_case.h"
#include "models/worker/demo_world.h"
#include "tests/support/test_database.h"

#include <QProcess>
#include <QTest>
#include <algorithm>
#include <functional>

using namespace redrive;
using namespace redrive::db;
using namespace redrive::worker;

namespace {

// worldCounts(), or the test process ends with why not.
QList<QPair<QString, qint64>> countsOf(PgConnection &conn)
{
    auto counts = worldCounts(conn);
    if (!counts)
        qFatal("counts: %s", qPrintable(counts.error().summary()));
    return counts.value();
}

// The world's counts; `inspect`, when given, looks at the world before its database goes.
QList<QPair<QString, qint64>>
buildWorld(const QString &tag, quint64 seed, int orders,
           const std::function<void(test::TestDatabase &, PgConnection &)> &inspect = {})
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
    const auto counts = countsOf(conn);
    // A second generate on the same database is refused: the demo wants a fresh one.
    if (DemoWorldGenerator(conn, options).generate().ok())
        qFatal("a second demo on the same database should be refused");
    if (inspect)
        inspect(db, conn);
    return counts;
}

// Every attempt of the world, one line each, in an order that depends on nothing but the world
// (job kind, entity, idempotency key, event, attempt number): where two worlds' counts differ,
// the first line that differs says which job went another way.
QStringList attemptTrail(PgConnection &conn)
{
    auto rows = conn.exec(
        "SELECT concat_ws(' ', j.kind, j.entity_id, j.idempotency_key, j.event_seq, a.attempt_no,"
        "                 a.outcome, a.error_class, a.error_code)"
        "  FROM redrive.attempt a JOIN redrive.job j ON j.id = a.job_id"
        " ORDER BY j.kind, j.entity_id, j.idempotency_key, j.event_seq, a.attempt_no, a.outcome,"
        "          a.error_code");
    if (!rows)
        qFatal("attempt trail: %s", qPrintable(rows.error().summary()));
    QStringList lines;
    for (int r = 0; r < rows->rowCount(); ++r)
        lines << rows->text(r, 0);
    return lines;
}

// Prints where two attempt trails part, with the lines around it.
void printFirstDifference(const QStringList &a, const QStringList &b)
{
    qsizetype i = 0;
    while (i < a.size() && i < b.size() && a.at(i) == b.at(i))
        ++i;
    qWarning("attempt trails: %lld and %lld lines, first difference at line %lld",
             static_cast<long long>(a.size()), static_cast<long long>(b.size()),
             static_cast<long long>(i));
    for (qsizetype k = std::max<qsizetype>(0, i - 3); k < i + 4; ++k)
        qWarning("  %-60s | %s", k < a.size() ? qPrintable(a.at(k)) : "",
                 k < b.size() ? qPrintable(b.at(k)) : "");
}

// The same world made by another process, as `redrive-worker demo` (the demo script) makes it:
// anything that differs from process to process (Qt's qHash() is seeded per process) gives
// another world there, never inside one process. `trail`, when given, gets its attempt trail.
QList<QPair<QString, qint64>> buildWorldElsewhere(const QString &tag, quint64 seed, int orders,
                                                  QStringList *trail = nullptr)
{
    test::TestDatabase db(tag);
    if (!db.isValid())
        qFatal("%s", qPrintable(db.error()));
    QProcess worker;
    worker.setProcessChannelMode(QProcess::MergedChannels);
    worker.start(QStringLiteral(REDRIVE_WORKER_EXE),
                 { QStringLiteral("demo"), QStringLiteral("--seed"), QString::number(seed),
                   QStringLiteral("--orders"), QString::number(orders),
                   QStringLiteral("--conninfo"), db.settings().connInfo });
    // The ctest limit (30 minutes) is what catches a hang.
    if (!worker.waitForFinished(-1) || worker.exitStatus() != QProcess::NormalExit
        || worker.exitCode() != 0)
        qFatal("redrive-worker demo: %s", worker.readAll().constData());
    PgConnection conn = db.connect();
    if (trail)
        *trail = attemptTrail(conn);
    return countsOf(conn);
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
        QByteArray dispute, disputeExpected, receipt, receiptExpected;
        QStringList firstTrail;
        const auto first = buildWorld(
            QStringLiteral("demo_a"), 11, 700, [&](test::TestDatabase &db, PgConnection &conn) {
                // The producers keep the payload's text (docs/domain.md#payloads-are-shown-as-they-
                // are): a dispute event as the provider sent it (a repeated key, a 64-bit id), as
                // the case view's model reads it, and a receipt the worker enqueued mid-day.
                auto dead = conn.exec(
                    "SELECT d.id, j.entity_id, o.id, o.customer FROM redrive.dead_letter d"
                    "  JOIN redrive.job j ON j.id = d.job_id"
                    "  JOIN sim.ledger_payment p ON p.id = j.entity_id"
                    "  JOIN sim.ledger_order o ON o.id = p.order_id"
                    " WHERE j.kind = 'process_webhook'"
                    "   AND j.payload ->> 'type' = 'charge.dispute.created'"
                    " ORDER BY d.id LIMIT 1");
                QVERIFY2(dead && dead->rowCount() == 1, "no dispute was dead-lettered");
                const QString payment = dead->text(0, 1);
                disputeExpected
                    = QStringLiteral("{\"event_id\" : \"evt_%1_dispute\", \"type\" : "
                                     "\"charge.dispute.created\", \"payment_id\" : \"%1\", "
                                     "\"seq\" : 3, \"order_id\" : \"%2\", \"customer\" : \"%3\", "
                                     "\"reason\" : \"fraudulent\", \"reason\" : "
                                     "\"general\", \"network_id\" : 9007199254740993}")
                          .arg(payment, dead->text(0, 2), dead->text(0, 3))
                          .toUtf8();
                auto session = db.openSession(db.consoleSettings());
                QVERIFY2(session, qPrintable(db.error()));
                DeadLetterCase deadLetter(session.get(), dead->bigInt(0, 0).value_or(0));
                deadLetter.load();
                QVERIFY(QTest::qWaitFor([&] { return deadLetter.isComplete(); }, 60000));
                QVERIFY(deadLetter.detail().has_value());
                dispute = deadLetter.detail()->payloadReceived.value_or("(none)");

                auto receipts = conn.exec(
                    "SELECT j.payload_received::text, j.entity_id, o.id, o.email, o.customer"
                    "  FROM redrive.job j JOIN sim.ledger_payment p ON p.id = j.entity_id"
                    "  JOIN sim.ledger_order o ON o.id = p.order_id"
                    " WHERE j.kind = 'send_receipt' ORDER BY j.id LIMIT 1");
                QVERIFY2(receipts && receipts->rowCount() == 1, "no receipt was enqueued");
                receipt = receipts->raw(0, 0);
                receiptExpected = QStringLiteral("{\"payment_id\" : \"%1\", \"order_id\" : "
                                                 "\"%2\", \"customer\" : \"%4\", \"to\" : \"%3\", "
                                                 "\"template\" : \"receipt\"}")
                                      .arg(receipts->text(0, 1), receipts->text(0, 2),
                                           receipts->text(0, 3), receipts->text(0, 4))
                                      .toUtf8();
                firstTrail = attemptTrail(conn);
            });
        QCOMPARE(dispute, disputeExpected);
        QCOMPARE(receipt, receiptExpected);
        QStringList secondTrail;
        const auto second = buildWorldElsewhere(QStringLiteral("demo_b"), 11, 700, &secondTrail);
        for (const auto &[k, v] : first)
            qInfo("%-70s %8lld", qPrintable(k), static_cast<long long>(v));
        if (firstTrail != secondTrail)
            printFirstDifference(firstTrail, secondTrail);
        QCOMPARE(first, second);
        QCOMPARE(firstTrail, secondTrail);

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
