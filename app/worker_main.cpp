// SPDX-License-Identifier: GPL-3.0-or-later
// redrive-worker: the reference worker. Thin: parses the command line and calls the commands in
// models/worker/worker_commands.h, which drive JobRunner, DemoWorldGenerator and the migrators
// from redrive_core.

#include "models/db/pg_connection.h"
#include "models/worker/worker_commands.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <algorithm>
#include <atomic>
#include <csignal>
#include <cstdio>

using namespace redrive;

namespace {

constexpr int kExitUsage = 64; // EX_USAGE

std::atomic<bool> s_stop { false };

extern "C" void requestStop(int)
{
    s_stop.store(true);
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
        return kExitUsage;
    }
    const QString command = args.first();

    db::ConnectionSettings settings;
    settings.connInfo = parser.value(conninfo);
    settings.applicationName = QStringLiteral("redrive-worker");
    auto connection = db::PgConnection::open(settings);
    if (!connection)
        return worker::reportFailure("cannot connect", connection.error());

    if (command == QLatin1String("setup"))
        return worker::runSetupCommand(connection.value());
    if (command == QLatin1String("counts"))
        return worker::runCountsCommand(connection.value());
    if (command == QLatin1String("reconcile"))
        return worker::runReconcileCommand(connection.value());
    if (command == QLatin1String("demo")) {
        worker::DemoOptions options;
        options.seed = parser.value(seed).toULongLong();
        options.orders = parser.value(orders).toInt();
        return worker::runDemoCommand(connection.value(), options);
    }
    if (command == QLatin1String("scale")) {
        worker::ScaleOptions options;
        options.deadLetters = parser.value(deadLetters).toLongLong();
        options.keys = parser.value(keys).toLongLong();
        options.mismatches = parser.value(mismatches).toLongLong();
        options.auditEntries = parser.value(auditEntries).toLongLong();
        return worker::runScaleCommand(connection.value(), options);
    }
    if (command != QLatin1String("run")) {
        std::fprintf(stderr, "redrive-worker: unknown command '%s'\n", qPrintable(command));
        return kExitUsage;
    }

    worker::RunOptions options;
    options.config = worker::WorkerConfig::referenceDefaults(
        parser.isSet(workerId)
            ? parser.value(workerId)
            : QStringLiteral("worker-%1").arg(QCoreApplication::applicationPid()));
    worker::WorkerConfig &config = options.config;
    if (parser.isSet(queues))
        config.queues = parser.value(queues).split(QLatin1Char(','), Qt::SkipEmptyParts);
    config.timeCompression = std::max(1.0, parser.value(compression).toDouble());
    config.leaseMs = parser.value(leaseMs).toInt();
    config.keyLeaseMs = config.leaseMs;
    config.crashForReal = parser.isSet(crashForReal);
    config.retryBudget = !parser.isSet(noBudget);
    config.seed = parser.value(seed).toULongLong();
    options.faultProfile = parser.value(faultProfile);
    if (parser.isSet(latency))
        options.latencyMs = parser.value(latency).toLongLong();
    options.drain = parser.isSet(drain);
    std::signal(SIGINT, requestStop);
    std::signal(SIGTERM, requestStop);
    return worker::runWorkerCommand(connection.value(), settings, options, s_stop);
}
