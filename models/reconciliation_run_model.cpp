// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/reconciliation_run_model.h"

#include "models/display_format.h"

#include <QBrush>
#include <QColor>

namespace redrive {

using F = ResultColumn::Format;

namespace {

// A failed run's status in red.
std::optional<QVariant> statusHook(const ResultCell &cell, int role)
{
    if (role != Qt::ForegroundRole)
        return std::nullopt;
    if (cell.text() == QLatin1String("failed"))
        return QBrush(QColor(display::rgb(display::Tone::Error)));
    return QVariant();
}

} // namespace

ReconciliationRunModel::ReconciliationRunModel(db::DatabaseSession *session, QObject *parent)
    : ResultTableModel(session,
                       ResultColumnSet({
                           { QStringLiteral("id"), tr("Run"), F::Integer },
                           { QStringLiteral("started_at"), tr("Started at"), F::Time },
                           { QStringLiteral("provider"), tr("Provider") },
                           { QStringLiteral("status"), tr("Status"), F::Text, statusHook },
                           { QStringLiteral("checked_count"), tr("Checked"), F::Integer },
                           { QStringLiteral("mismatch_count"), tr("Mismatches"), F::Integer },
                           { QStringLiteral("finished_at"), tr("Finished at"), F::Time },
                           { QStringLiteral("error_message"), tr("Error"), F::OneLine },
                       }),
                       parent)
{ }

void ReconciliationRunModel::reload()
{
    load(db::Statement::ReconciliationRuns, db::QueryParams().addInt(kLimit));
}

} // namespace redrive
