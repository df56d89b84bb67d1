// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/expired_lease_model.h"

namespace redrive {

using F = ResultColumn::Format;

namespace {

// "3 of 8": the attempt the worker was on, of the job's maximum.
ResultColumn::Hook attemptHook()
{
    return [](const ResultCell &cell, int role) -> std::optional<QVariant> {
        if (role != Qt::DisplayRole)
            return std::nullopt;
        return ExpiredLeaseModel::tr("%1 of %2")
            .arg(cell.text(), cell.text(QStringLiteral("max_attempts")));
    };
}

// A lease that ran out at -infinity has no number of seconds (expired_lease_list gives NULL):
// expired for ever, "∞", rather than a blank cell (docs/domain.md "Times at the ends of the
// range").
ResultColumn::Hook expiredHook()
{
    return [](const ResultCell &cell, int role) -> std::optional<QVariant> {
        if (!cell.isNull() || cell.isNull(QStringLiteral("locked_until")))
            return std::nullopt;
        switch (role) {
        case Qt::DisplayRole:
            return QStringLiteral("\u221e");
        case Qt::ToolTipRole:
            return ExpiredLeaseModel::tr("The lease ran out at the start of time (-infinity)");
        default:
            return std::nullopt;
        }
    };
}

} // namespace

ExpiredLeaseModel::ExpiredLeaseModel(db::DatabaseSession *session, QObject *parent)
    : ResultTableModel(
        session,
        ResultColumnSet(
            {
                { QStringLiteral("expired_seconds"), tr("Expired for"), F::AgeSeconds,
                  expiredHook() },
                { QStringLiteral("job_id"), tr("Job"), F::Integer },
                { QStringLiteral("queue"), tr("Queue") },
                { QStringLiteral("kind"), tr("Kind") },
                { QStringLiteral("worker_id"), tr("Worker") },
                { QStringLiteral("attempt"), tr("Attempt"), F::Integer, attemptHook() },
                { QStringLiteral("locked_until"), tr("Lease expired at"), F::Time },
                { QStringLiteral("idempotency_key"), tr("Idempotency key"),
                  ResultColumn::Format::Identifier },
            },
            {}, { { QStringLiteral("max_attempts"), JsonValueKind::Integer } }),
        parent)
{ }

void ExpiredLeaseModel::reload()
{
    db::QueryParams params;
    params.addInt(kLimit);
    load(db::Statement::ExpiredLeases, params);
}

} // namespace redrive
