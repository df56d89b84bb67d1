// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/result_table_model.h"

namespace redrive {

/// Running jobs whose lease expired: their worker died or hung, and no worker has reclaimed them
/// yet (docs/reliability.md#jobs-whose-worker-died). Listed whatever their idempotency key, with
/// the worker that held them, the attempt it was on and how long ago the lease ran out by the
/// server's clock, longest expired first, through Statement::ExpiredLeases. At most kLimit rows.
class ExpiredLeaseModel : public ResultTableModel
{
    Q_OBJECT
public:
    enum Column { ExpiredFor, Job, Queue, Kind, Worker, Attempt, LeaseExpiredAt, Key };
    static constexpr int kLimit = 500;

    /// `session` must outlive the model. Nothing loads until reload().
    explicit ExpiredLeaseModel(db::DatabaseSession *session, QObject *parent = nullptr);

    /// Asks the server again.
    void reload();
    /// True when the list holds kLimit rows, so there may be more than shown.
    bool reachedLimit() const { return rowCount() >= kLimit; }
};

} // namespace redrive
