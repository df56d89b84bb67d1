// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/db_expected.h"
#include "models/worker/fault_injector.h"

#include <QDateTime>
#include <QList>
#include <QPair>
#include <QString>
#include <functional>

namespace redrive::db {
class PgConnection;
}

namespace redrive::worker {

/// Settings of the demo world: data for the demo and for scale.
struct DemoOptions
{
    quint64 seed = 1;
    int orders = 3000; ///< one payment (and one charge job) per order
    int hours = 24; ///< how much history to live through, ending at the server's now
};

/// Builds a lived-in world in a freshly migrated database: orders and payments, charge jobs
/// arriving in bursts, receipts, webhooks (duplicated, late and malformed ones too), ledger sync
/// batches, a provider outage, a window where the provider ignores idempotency keys, crashes
/// between side effect and record, and reconciliation runs that find every mismatch kind. It runs
/// the real JobRunner in virtual time, so hours of backoff pass in seconds, and the same seed
/// gives the same world (the same rows per table and per failure group).
class DemoWorldGenerator
{
public:
    using Progress = std::function<void(const QString &)>;

    DemoWorldGenerator(db::PgConnection &connection, DemoOptions options);
    /// Fills the database; fails if it already holds jobs. `progress` gets one line per phase.
    db::DbExpected<int> generate(const Progress &progress = {});

    /// The fault profile of the reference world for a day starting at `start`: provider 5xx,
    /// 429, refusals, timeouts before and after the effect, crashes, declines, validation
    /// errors, and a 50-minute provider outage; mail and webhook faults of their own.
    static FaultInjector referenceFaults(quint64 seed, const QDateTime &start);

private:
    db::PgConnection &m_connection;
    DemoOptions m_options;
};

/// Row counts that characterise a world: per table, per job state, per dead-letter status and
/// per failure group (kind, error class, code). Two equal lists mean two identical worlds.
db::DbExpected<QList<QPair<QString, qint64>>> worldCounts(db::PgConnection &connection);

} // namespace redrive::worker
