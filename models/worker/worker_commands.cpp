// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/worker/worker_commands.h"

#include "models/db/schema_migrator.h"
#include "models/worker/worker_clock.h"

#include <QElapsedTimer>
#include <QThread>
#include <cstdio>

namespace redrive::worker {

namespace {

constexpr int kExitOk = 0;
constexpr int kExitFailed = 1;
constexpr int kExitUnavailable = 69; // EX_UNAVAILABLE

} // namespace

int reportFailure(const char *what, const db::DbError &error)
{
    std::fprintf(stderr, "redrive-worker: %s: %s\n", what, qPrintable(error.summary()));
    if (!error.detail().isEmpty())
        std::fprintf(stderr, "  detail: %s\n", qPrintable(error.detail()));
    return error.kind() == db::ErrorKind::Connection
            || error.kind() == db::ErrorKind::Authentication
        ? kExitUnavailable
        : kExitFailed;
}

int runSetupCommand(db::PgConnection &connection)
{
    for (const db::MigrationSet &set :
         { db::MigrationSet::redrive(), db::MigrationSet::simulatedWorld() }) {
        db::SchemaMigrator migrator(connection, set);
        auto report = migrator.migrate();
        if (!report)
            return reportFailure("setup", report.error());
        std::printf("redrive-worker setup: schema %s at version %d (%lld applied now)\n",
                    qPrintable(set.schema), report->toVersion,
                    static_cast<long long>(report->applied.size()));
    }
    return kExitOk;
}

int runCountsCommand(db::PgConnection &connection)
{
    auto counts = worldCounts(connection);
    if (!counts)
        return reportFailure("counts", counts.error());
    for (const auto &[name, n] : std::as_const(counts.value()))
        std::printf("%-70s %10lld\n", qPrintable(name), static_cast<long long>(n));
    return kExitOk;
}

int runReconcileCommand(db::PgConnection &connection)
{
    auto run = connection.exec("SELECT sim.run_reconciliation()");
    if (!run)
        return reportFailure("reconcile", run.error());
    auto summary = connection.exec(
        "SELECT checked_count, mismatch_count FROM redrive.reconciliation_run WHERE id = $1",
        db::QueryParams().addBigInt(run->bigInt(0, 0).value_or(0)));
    if (!summary)
        return reportFailure("reconcile", summary.error());
    std::printf("redrive-worker reconcile: run %lld checked %s payments, %s new mismatches\n",
                static_cast<long long>(run->bigInt(0, 0).value_or(0)),
                qPrintable(summary->text(0, 0)), qPrintable(summary->text(0, 1)));
    return kExitOk;
}

int runDemoCommand(db::PgConnection &connection, const DemoOptions &options)
{
    if (int rc = runSetupCommand(connection); rc != kExitOk)
        return rc;
    QElapsedTimer clock;
    clock.start();
    DemoWorldGenerator generator(connection, options);
    auto attempts = generator.generate([](const QString &line) {
        std::printf("redrive-worker demo: %s\n", qPrintable(line));
        std::fflush(stdout);
    });
    if (!attempts)
        return reportFailure("demo", attempts.error());
    std::printf("redrive-worker demo: world for seed %llu ready in %.1f s\n",
                static_cast<unsigned long long>(options.seed), double(clock.elapsed()) / 1000.0);
    return runCountsCommand(connection);
}

int runScaleCommand(db::PgConnection &connection, const ScaleOptions &options)
{
    if (int rc = runSetupCommand(connection); rc != kExitOk)
        return rc;
    QElapsedTimer clock;
    clock.start();
    // One transaction inside sim.generate_scale_world; one row per phase when it commits.
    auto phases = connection.exec(
        "SELECT what, rows, seconds FROM sim.generate_scale_world($1, 5, $2, $3, $4)",
        db::QueryParams()
            .addBigInt(options.deadLetters)
            .addBigInt(options.keys)
            .addBigInt(options.mismatches)
            .addBigInt(options.auditEntries));
    if (!phases)
        return reportFailure("scale", phases.error());
    for (int row = 0; row < phases->rowCount(); ++row)
        std::printf("redrive-worker scale: %-26s %10s rows %9s s\n",
                    qPrintable(phases->text(row, 0)), qPrintable(phases->text(row, 1)),
                    qPrintable(phases->text(row, 2)));
    // The bulk load ran with triggers off: recount the read rollups (migration 18) once.
    QElapsedTimer rollupClock;
    rollupClock.start();
    auto rollups = connection.exec("SELECT redrive.rebuild_read_rollups()");
    if (!rollups)
        return reportFailure("scale", rollups.error());
    std::printf("redrive-worker scale: %-26s %10s      %9.2f s\n", "read rollups", "",
                double(rollupClock.elapsed()) / 1000.0);
    // Settle the freshly loaded tables (visibility map, hint bits) as autovacuum would.
    QElapsedTimer vacuumClock;
    vacuumClock.start();
    auto vacuumed = connection.exec("VACUUM redrive.job, redrive.attempt, redrive.dead_letter,"
                                    " redrive.idempotency_key, redrive.reconciliation_mismatch,"
                                    " redrive.audit_log");
    if (!vacuumed)
        return reportFailure("scale", vacuumed.error());
    std::printf("redrive-worker scale: %-26s %10s      %9.2f s\n", "vacuum", "",
                double(vacuumClock.elapsed()) / 1000.0);
    std::printf("redrive-worker scale: world ready in %.1f s\n", double(clock.elapsed()) / 1000.0);
    return kExitOk;
}

int runWorkerCommand(db::PgConnection &connection, const db::ConnectionSettings &settings,
                     const RunOptions &options, const std::atomic<bool> &stop)
{
    const WorkerConfig &config = options.config;
    auto serverNow = connection.exec("SELECT clock_timestamp()");
    if (!serverNow)
        return reportFailure("run", serverNow.error());
    WorkerClock clock
        = WorkerClock::real(QDateTime::currentDateTimeUtc().msecsTo(serverNow->timestamp(0, 0)));
    FaultInjector faults = options.faultProfile == QLatin1String("reference")
        ? DemoWorldGenerator::referenceFaults(config.seed, clock.now().addDays(-1))
        : FaultInjector(config.seed);
    if (options.latencyMs) {
        for (const QString &downstream : { QStringLiteral("provider"), QStringLiteral("mail"),
                                           QStringLiteral("webhook"), QStringLiteral("ledger") }) {
            FaultRates rates;
            rates.latencyMinMs = rates.latencyMaxMs = *options.latencyMs;
            faults.setRates(downstream, rates);
        }
    }
    JobRunner runner(connection, config, &faults, &clock);
    std::printf("redrive-worker %s: running queues %s\n", qPrintable(config.workerId),
                qPrintable(config.queues.join(QLatin1Char(','))));
    std::fflush(stdout);

    int idleRounds = 0;
    while (!stop.load()) {
        auto reclaimed = runner.reclaimExpiredLeases();
        auto relayed = reclaimed ? runner.relayOutbox() : db::DbExpected<int>(reclaimed.error());
        auto batch = relayed ? runner.runDueBatch()
                             : db::DbExpected<QList<AttemptReport>>(relayed.error());
        if (!batch) {
            std::fprintf(stderr, "redrive-worker: %s; reconnecting\n",
                         qPrintable(batch.error().summary()));
            QThread::msleep(1000);
            auto again = db::PgConnection::open(settings);
            if (again)
                connection = std::move(again.value());
            else if (again.error().kind() == db::ErrorKind::Authentication)
                return reportFailure("login refused; not retrying", again.error()); // same password
            continue;
        }
        for (const AttemptReport &r : std::as_const(batch.value())) {
            std::printf(
                "job %lld %s attempt %d: %s%s%s\n", static_cast<long long>(r.jobId),
                qPrintable(r.kind), r.attempt, qPrintable(r.outcome),
                r.errorCode.isEmpty() ? "" : " ",
                qPrintable(r.errorCode
                           + (r.next.isEmpty() ? QString() : QStringLiteral(" -> ") + r.next)));
        }
        std::fflush(stdout);
        if (batch->isEmpty() && *relayed == 0) {
            if (options.drain) {
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
    return kExitOk;
}

} // namespace redrive::worker
