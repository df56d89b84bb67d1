// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/connection_settings.h"
#include "models/db/db_error.h"
#include "models/db/pg_connection.h"
#include "models/worker/demo_world.h"
#include "models/worker/job_runner.h"

#include <QString>
#include <atomic>
#include <optional>

namespace redrive::worker {

/// The bodies of `redrive-worker`'s commands (README, "redrive-worker"); app/worker_main.cpp only
/// parses the command line and calls them. Each prints its progress on stdout and returns the
/// process exit status: 0 done, 1 failed, 69 the database could not be reached or refused the
/// login (64, bad usage, is the caller's).

/// Prints "redrive-worker: `what`: <error>" and its detail on stderr; returns 69 for a
/// connection or authentication error, 1 otherwise.
int reportFailure(const char *what, const db::DbError &error);

/// `setup`: creates or upgrades the schemas `redrive` and `sim` (db::MigrationSet::redrive(),
/// db::MigrationSet::simulatedWorld()).
int runSetupCommand(db::PgConnection &connection);
/// `counts`: row counts per table and failure group (worldCounts()).
int runCountsCommand(db::PgConnection &connection);
/// `reconcile`: one run of sim.run_reconciliation(), and what it checked and found.
int runReconcileCommand(db::PgConnection &connection);
/// `demo`: setup, then the demo world of `options` (DemoWorldGenerator), then the counts.
int runDemoCommand(db::PgConnection &connection, const DemoOptions &options);

/// The sizes of `scale`'s benchmark world (row counts; 5 attempts per dead letter).
struct ScaleOptions
{
    qint64 deadLetters = 1000000;
    qint64 keys = 1000000;
    qint64 mismatches = 100000;
    qint64 auditEntries = 1000000;
};
/// `scale`: setup, then sim.generate_scale_world() in one transaction (superuser), then VACUUM
/// of the loaded tables; prints each phase's rows and seconds.
int runScaleCommand(db::PgConnection &connection, const ScaleOptions &options);

/// What `run` runs with.
struct RunOptions
{
    WorkerConfig config;
    /// "reference": the demo's fault rates (DemoWorldGenerator::referenceFaults()); else none.
    QString faultProfile;
    /// Every downstream call takes this long, in ms (a slow provider); unset for none.
    std::optional<qint64> latencyMs;
    /// Stop once no job is due within the hour (twice in a row), instead of waiting for `stop`.
    bool drain = false;
};
/// `run`: reclaims expired leases, relays the outbox and runs due jobs in a loop until `stop`
/// becomes true (set from SIGINT/SIGTERM by the caller) or, with `drain`, until idle. After a
/// failed round it reconnects with `settings` once a second, except after a refused login
/// (returns 69: the same password would be refused again). `connection` is replaced on
/// reconnect. The worker's clock follows the server's (its offset is measured once).
int runWorkerCommand(db::PgConnection &connection, const db::ConnectionSettings &settings,
                     const RunOptions &options, const std::atomic<bool> &stop);

} // namespace redrive::worker
