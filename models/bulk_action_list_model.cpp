// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/bulk_action_list_model.h"

namespace redrive {

using F = ResultColumn::Format;

namespace {

// "47 of 232 chunks" from the row's counts.
ResultColumn::Hook progressHook()
{
    return [](const ResultCell &cell, int role) -> std::optional<QVariant> {
        if (role != Qt::DisplayRole)
            return std::nullopt;
        return BulkActionListModel::tr("%1 of %2 chunks")
            .arg(cell.text(QStringLiteral("chunks_done")),
                 cell.text(QStringLiteral("chunk_count")));
    };
}

ResultColumn::Hook runningHook()
{
    return [](const ResultCell &cell, int role) -> std::optional<QVariant> {
        if (role != Qt::DisplayRole)
            return std::nullopt;
        return cell.text(QStringLiteral("running")) == QLatin1String("t")
            ? BulkActionListModel::tr("running in a console")
            : BulkActionListModel::tr("stopped");
    };
}

} // namespace

BulkActionListModel::BulkActionListModel(db::DatabaseSession *session, QObject *parent)
    : ResultTableModel(
        session,
        ResultColumnSet(
            {
                { QStringLiteral("action"), tr("Action") },
                { QStringLiteral("chunks_done"), tr("Progress"), F::Text, progressHook() },
                { QStringLiteral("applied"), tr("Applied"), F::Integer },
                { QStringLiteral("actor"), tr("Owner") },
                { QStringLiteral("running"), tr("State"), F::Text, runningHook() },
                { QStringLiteral("reason"), tr("Reason"), F::OneLine },
                { QStringLiteral("created_at"), tr("Started at"), F::Time },
                { QStringLiteral("last_chunk_at"), tr("Last chunk at"), F::Time },
            },
            {},
            { { QStringLiteral("bulk_id"), JsonValueKind::Text },
              { QStringLiteral("target_count"), JsonValueKind::Integer },
              { QStringLiteral("chunk_count"), JsonValueKind::Integer },
              { QStringLiteral("mine"), JsonValueKind::Boolean } }),
        parent)
{ }

void BulkActionListModel::reload()
{
    db::QueryParams params;
    params.addBool(m_mineOnly).addInt(kLimit);
    load(db::Statement::BulkActionList, params);
}

QUuid BulkActionListModel::bulkId(int row) const
{
    return QUuid::fromString(text(row, QStringLiteral("bulk_id")));
}

bool BulkActionListModel::isMine(int row) const
{
    return text(row, QStringLiteral("mine")) == QLatin1String("t");
}

bool BulkActionListModel::isRunning(int row) const
{
    return text(row, QStringLiteral("running")) == QLatin1String("t");
}

} // namespace redrive
