// SPDX-License-Identifier: GPL-3.0-or-later
// redrive-worker: the reference worker. Thin: parses the command line and drives
// JobRunner, DemoWorldGenerator and the migrators from redrive_core.

#include "models/db/pg_connection.h"
#include "models/db/schema_migrator.h"
#include "models/worker/demo_world.h"
#include "models/worker/job_runner.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QThread>
#include <atomic>
#include <csignal>
#include <cstdio>

using namespace redrive;

namespace {

std::atomic<bool> s_stop { false };

extern "C" void requestStop(int)
{
    s_stop.store(true);
}

int fail(const char *what, const db::DbError &error)
{
    std::fprintf(stderr, "redrive-worker: %s: %s\n", what, qPrintable(error.summary()));
    if (!error.detail().isEmpty())
        std::fprintf(stderr, "  detail: %s\n", qPrintable(error.detail()));
    return error.kind() == db::ErrorKind::Connection
            || error.kind() == db::ErrorKind::Authentication
        ? 69
        : 1;
}

int setup(db::PgConnection &connection)
{
    for (const db::MigrationSet &set :
         { db::MigrationSet::redrive(), db::MigrationSet::simulatedWorld() }) {
        db::SchemaMigrator migrator(connection, set);
        auto report = migrator.migrate();
        if (!report)
            return fail("setup", report.error());
        std::printf("redrive-worker setup: schema %s at version %d (%lld applied now)\n",
                    qPrintable(set.schema), report->toVersion,
                    static_cast<long long>(report->applied.size()));
    }
    return 0;
}

int printCounts(db::PgConnection &connection)
{
    auto counts = worker::worldCounts(connection);
    if (!counts)
        return fail("counts", counts.error());
    for (const auto &[name, n] : std::as_const(counts.value()))
        std::printf("%-70s %10lld\n", qPrintable(name), static_cast<long long>(n));
    return 0;
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("redrive-worker"));
    QCoreApplication::setApplicationVersion(QStringLiteral(REDRIVE_VERSION));

    QCommandLineParser parser;
    parser.setApplicationDescription(QStringLiteral(
        "Redrive's reference worker: runs jobs with idempotency keys, error-class retries, "
        "backoff with full jitter and dead letters, against a simulated outside world.\n\n"
        "Commands:\n"
        "  setup      create or upgrade the redrive and sim schemas\n"
        "  run        claim and run jobs until stopped (SIGINT/SIGTERM) or, with --drain, until\n"
        "             no job is due\n"
        "  demo       fill a freshly set-up database with the demo world (--seed)\n"
        "  reconcile  compare the ledger with the provider and record mismatches\n"
        "  counts     print row counts per table and failure group\n"
        "  scale      fill a freshly set-up database with a benchmark-sized world\n"
        "             (--dead-letters, --keys, --mismatches, --audit-entries; superuser)"));
    parser.addHelpOption();
    parser.addVersionOption();
    const QCommandLineOption conninfo(QStringLiteral("conninfo"),
                                      QStringLiteral("libpq connection string or URI."),
                                      QStringLiteral("string"));
    const QCommandLineOption seed(QStringLiteral("seed"),
                                  QStringLiteral("Seed for faults and jitter (default 1)."),
                                  QStringLiteral("n"), QStringLiteral("1"));
    const QCommandLineOption orders(QStringLiteral("orders"),
                                    QStringLiteral("demo: orders to create (default 3000)."),
                                    QStringLiteral("n"), QStringLiteral("3000"));
    const QCommandLineOption queues(QStringLiteral("queues"),
                                    QStringLiteral("run: comma-separated queues (default all)."),
                                    QStringLiteral("list"));
    const QCommandLineOption workerId(QStringLiteral("worker-id"),
                                      QStringLiteral("run: this worker's name."),
                                      QStringLiteral("id"));
    const QCommandLineOption drain(QStringLiteral("drain"),
                                   QStringLiteral("run: stop when no job is due."));
    const QCommandLineOption compression(
        QStringLiteral("time-compression"),
        QStringLiteral("run: divide backoff, deadlines and Retry-After by this factor."),
        QStringLiteral("factor"), QStringLiteral("1"));
    const QCommandLineOption leaseMs(QStringLiteral("lease-ms"),
                                     QStringLiteral("run: job lease in ms (default 30000)."),
                                     QStringLiteral("ms"), QStringLiteral("30000"));
    const QCommandLineOption faultProfile(
        QStringLiteral("faults"),
        QStringLiteral("run: 'reference' (the demo's fault rates) or 'none' (default)."),
        QStringLiteral("profile"), QStringLiteral("none"));
    const QCommandLineOption crashForReal(
        QStringLiteral("crash-for-real"),
        QStringLiteral("run: exit the process on a crash-after-effect fault."));
    const QCommandLineOption noBudget(QStringLiteral("no-retry-budget"),
                                      QStringLiteral("run: do not cap retries."));
    const QCommandLineOption latency(
        QStringLiteral("latency-ms"),
        QStringLiteral("run: every downstream call takes this long, in ms (a slow provider)."),
        QStringLiteral("ms"));
    const QCommandLineOption deadLetters(
        QStringLiteral("dead-letters"),
        QStringLiteral("scale: dead letters to create, 5 attempts each (default 1000000)."),
        QStringLiteral("n"), QStringLiteral("1000000"));
    const QCommandLineOption keys(QStringLiteral("keys"),
                                  QStringLiteral("scale: idempotency keys (default 1000000)."),
                                  QStringLiteral("n"), QStringLiteral("1000000"));
    const QCommandLineOption mismatches(
        QStringLiteral("mismatches"),
        QStringLiteral("scale: reconciliation mismatches (default 100000)."), QStringLiteral("n"),
        QStringLiteral("100000"));
    const QCommandLineOption auditEntries(
        QStringLiteral("audit-entries"),
        QStringLiteral("scale: hash-chained audit entries (default 1000000)."), QStringLiteral("n"),
        QStringLiteral("1000000"));
    parser.addOptions({ conninfo, seed, orders, queues, workerId, drain, compression, leaseMs,
                        faultProfile, crashForReal, noBudget, latency, deadLetters, keys,
                        mismatches, auditEntries });
    parser.addPositionalArgument(QStringLiteral("command"),
                                 QStringLiteral("setup | run | demo | reconcile | counts | scale"));
    parser.process(app);

    const QStringList args = parser.positionalArguments();
    if (args.size() != 1) {
        std::fprintf(stderr, "redrive-worker: give one command (see --help)\n");
        return 64;
    }
    const QString command = args.first();

    db::ConnectionSettings settings;
    settings.connInfo = parser.value(conninfo);
    settings.applicationName = QStringLiteral("redrive-worker");
    auto connection = db::PgConnection::open(settings);
    if (!connection)
        return fail("cannot connect", connection.error());

    if (command == QLatin1String("setup"))
        return setup(connection.value());
    if (command == QLatin1String("counts"))
        return printCounts(connection.value());
    if (command == QLatin1String("reconcile")) {
        auto run = connection->exec("SELECT sim.run_reconciliation()");
        if (!run)
            return fail("reconcile", run.error());
        auto summary = connection->exec(
            "SELECT checked_count, mismatch_count FROM redrive.reconciliation_run WHERE id = $1",
            db::QueryParams().addBigInt(run->bigInt(0, 0).value_or(0)));
        if (!summary)
            return fail("reconcile", summary.error());
        std::printf("redrive-worker reconcile: run %lld checked %s payments, %s new mismatches\n",
                    static_cast<long long>(run->bigInt(0, 0).value_or(0)),
                    qPrintable(summary->text(0, 0)), qPrintable(summary->text(0, 1)));
        return 0;
    }
    if (command == QLatin1String("demo")) {
        worker::DemoOptions options;
        options.seed = parser.value(seed).toULongLong();
        options.orders = parser.value(orders).toInt();
        if (int rc = setup(connection.value()); rc != 0)
            return rc;
        QElapsedTimer clock;
        clock.start();
        worker::DemoWorldGenerator generator(connection.value(), options);
        auto attempts = generator.generate([](const QString &line) {
            std::printf("redrive-worker demo: %s\n", qPrintable(line));
            std::fflush(stdout);
        });
        if (!attempts)
            return fail("demo", attempts.error());
        std::printf("redrive-worker demo: world for seed %llu ready in %.1f s\n",
                    static_cast<unsigned long long>(options.seed),
                    double(clock.elapsed()) / 1000.0);
        return printCounts(connection.value());
    }
    if (command == QLatin1String("scale")) {
        if (int rc = setup(connection.value()); rc != 0)
            return rc;
        QElapsedTimer clock;
        clock.start();
        // One transaction inside sim.generate_scale_world; one row per phase when it commits.
        auto phases = connection->exec(
            "SELECT what, rows, seconds FROM sim.generate_scale_world($1, 5, $2, $3, $4)",
            db::QueryParams()
                .addBigInt(parser.value(deadLetters).toLongLong())
                .addBigInt(parser.value(keys).toLongLong())
                .addBigInt(parser.value(mismatches).toLongLong())
                .addBigInt(parser.value(auditEntries).toLongLong()));
        if (!phases)
            return fail("scale", phases.error());
        for (int row = 0; row < phases->rowCount(); ++row)
            std::printf("redrive-worker scale: %-26s %10s rows %9s s\n",
                        qPrintable(phases->text(row, 0)), qPrintable(phases->text(row, 1)),
                        qPrintable(phases->text(row, 2)));
        // Settle the freshly loaded tables (visibility map, hint bits) as autovacuum would.
        QElapsedTimer vacuumClock;
        vacuumClock.start();
        auto vacuumed
            = connection->exec("VACUUM redrive.job, redrive.attempt, redrive.dead_letter,"
                               " redrive.idempotency_key, redrive.reconciliation_mismatch,"
                               " redrive.audit_log");
        if (!vacuumed)
            return fail("scale", vacuumed.error());
        std::printf("redrive-worker scale: %-26s %10s      %9.2f s\n", "vacuum", "",
                    double(vacuumClock.elapsed()) / 1000.0);
        std::printf("redrive-worker scale: world ready in %.1f s\n",
                    double(clock.elapsed()) / 1000.0);
        return 0;
    }
    if (command != QLatin1String("run")) {
        std::fprintf(stderr, "redrive-worker: unknown command '%s'\n", qPrintable(command));
        return 64;
    }

    // run
    std::signal(SIGINT, requestStop);
    std::signal(SIGTERM, requestStop);
    worker::WorkerConfig config = worker::WorkerConfig::referenceDefaults(
        parser.isSet(workerId)
            ? parser.value(workerId)
            : QStringLiteral("worker-%1").arg(QCoreApplication::applicationPid()));
    if (parser.isSet(queues))
        config.queues = parser.value(queues).split(QLatin1Char(','), Qt::SkipEmptyParts);
    config.timeCompression = std::max(1.0, parser.value(compression).toDouble());
    config.leaseMs = parser.value(leaseMs).toInt();
    config.keyLeaseMs = config.leaseMs;
    config.crashForReal = parser.isSet(crashForReal);
    config.retryBudget = !parser.isSet(noBudget);
    config.seed = parser.value(seed).toULongLong();

    auto serverNow = connection->exec("SELECT clock_timestamp()");
    if (!serverNow)
        return fail("run", serverNow.error());
    worker::WorkerClock clock = worker::WorkerClock::real(
        QDateTime::currentDateTimeUtc().msecsTo(serverNow->timestamp(0, 0)));
    worker::FaultInjector faults = parser.value(faultProfile) == QLatin1String("reference")
        ? worker::DemoWorldGenerator::referenceFaults(config.seed, clock.now().addDays(-1))
        : worker::FaultInjector(config.seed);
    if (parser.isSet(latency)) {
        const qint64 ms = parser.value(latency).toLongLong();
        for (const QString &downstream : { QStringLiteral("provider"), QStringLiteral("mail"),
                                           QStringLiteral("webhook"), QStringLiteral("ledger") }) {
            worker::FaultRates rates;
            rates.latencyMinMs = rates.latencyMaxMs = ms;
            faults.setRates(downstream, rates);
        }
    }
    worker::JobRunner runner(connection.value(), config, &faults, &clock);
    std::printf("redrive-worker %s: running queues %s\n", qPrintable(config.workerId),
                qPrintable(config.queues.join(QLatin1Char(','))));
    std::fflush(stdout);

    int idleRounds = 0;
    while (!s_stop.load()) {
        auto reclaimed = runner.reclaimExpiredLeases();
        auto relayed = reclaimed ? runner.relayOutbox() : db::DbExpected<int>(reclaimed.error());
        auto batch = relayed ? runner.runDueBatch()
                             : db::DbExpected<QList<worker::AttemptReport>>(relayed.error());
        if (!batch) {
            std::fprintf(stderr, "redrive-worker: %s; reconnecting\n",
                         qPrintable(batch.error().summary()));
            QThread::msleep(1000);
            auto again = db::PgConnection::open(settings);
            if (again)
                connection.value() = std::move(again.value());
            else if (again.error().kind() == db::ErrorKind::Authentication)
                return fail("login refused; not retrying", again.error()); // the same password
            continue;
        }
        for (const worker::AttemptReport &r : std::as_const(batch.value())) {
            std::printf(
                "job %lld %s attempt %d: %s%s%s\n", static_cast<long long>(r.jobId),
                qPrintable(r.kind), r.attempt, qPrintable(r.outcome),
                r.errorCode.isEmpty() ? "" : " ",
                qPrintable(r.errorCode
                           + (r.next.isEmpty() ? QString() : QStringLiteral(" -> ") + r.next)));
        }
        std::fflush(stdout);
        if (batch->isEmpty() && *relayed == 0) {
            if (parser.isSet(drain)) {
                auto next = runner.nextDueAt();
                if (next && (!next->has_value() || **next > clock.now().addSecs(3600)))
                    if (++idleRounds >= 2)
                        break;
            }
            QThread::msleep(200);
        } else {
            idleRounds = 0;
        }
    }
    std::printf("redrive-worker %s: stopped\n", qPrintable(config.workerId));
    return 0;
}
