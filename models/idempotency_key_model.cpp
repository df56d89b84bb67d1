// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/idempotency_key_model.h"

#include "models/display_format.h"

#include <QBrush>
#include <QColor>

namespace redrive {

namespace {

using F = ResultColumn::Format;

bool isStuck(const ResultCell &cell)
{
    return cell.rows.boolean(cell.row, cell.rows.columnIndex(QStringLiteral("stuck")))
        .value_or(false);
}

// A key processing past its lease is marked: "processing (stuck)", in red.
std::optional<QVariant> stateHook(const ResultCell &cell, int role)
{
    if (!isStuck(cell))
        return role == Qt::ToolTipRole ? std::optional<QVariant>(QVariant()) : std::nullopt;
    switch (role) {
    case Qt::DisplayRole:
        return IdempotencyKeyModel::tr("%1 (stuck)").arg(cell.text());
    case Qt::ToolTipRole:
        return IdempotencyKeyModel::tr(
            "Processing past its lease: the side effect may have happened.");
    case Qt::ForegroundRole:
        return QBrush(QColor(display::rgb(display::Tone::Error)));
    default:
        return std::nullopt;
    }
}

// The stored result (the column's own bounded text), or the first line of the error when there
// is one, bounded too: a stored result of 5 MB once went whole into the cell and its tooltip and
// froze the Keys tab for seconds on every visit (docs/security.md#text-from-the-database-is-plain-
// text). Copy-out reads the raw cell.
std::optional<QVariant> outcomeHook(const ResultCell &cell, int role)
{
    if (role != Qt::DisplayRole && role != Qt::ToolTipRole)
        return std::nullopt;
    const QString error = cell.text(QStringLiteral("error_message"));
    if (error.isNull())
        return std::nullopt;
    if (role == Qt::DisplayRole)
        return display::firstLine(error);
    return error; // ResultColumn::data bounds and escapes every tooltip
}

ResultColumnSet columns()
{
    using M = IdempotencyKeyModel;
    return ResultColumnSet(
        {
            { QStringLiteral("updated_at"), M::tr("Updated at"), F::Time },
            { QStringLiteral("scope"), M::tr("Scope") },
            { QStringLiteral("key"), M::tr("Key"), ResultColumn::Format::Identifier },
            { QStringLiteral("state"), M::tr("State"), F::Text, stateHook },
            { QStringLiteral("locked_by"), M::tr("Locked by") },
            { QStringLiteral("locked_until"), M::tr("Lease until"), F::Time },
            { QStringLiteral("job_ref"), M::tr("Job") },
            { QStringLiteral("conflict_count"), M::tr("Conflicts"), F::Integer },
            { QStringLiteral("result_text"), M::tr("Result or error"), F::Text, outcomeHook,
              JsonValueKind::Document },
            { QStringLiteral("request_hash"), M::tr("Request hash"), F::ShortHash },
            { QStringLiteral("created_at"), M::tr("Created at"), F::Time },
            { QStringLiteral("expires_at"), M::tr("Expires at"), F::Time },
        },
        { { M::StuckRole, QStringLiteral("stuck"), JsonValueKind::Boolean } },
        { { QStringLiteral("version"), JsonValueKind::Integer },
          { QStringLiteral("stuck"), JsonValueKind::Boolean } });
}

} // namespace

IdempotencyKeyModel::IdempotencyKeyModel(db::DatabaseSession *session, QObject *parent,
                                         int pageSize)
    : KeysetPageModel(session, db::Statement::IdempotencyKeyPage,
                      { { QStringLiteral("updated_at"), db::ParamType::TimestampTz },
                        { QStringLiteral("scope"), db::ParamType::Text },
                        { QStringLiteral("key"), db::ParamType::Text } },
                      columns(), pageSize, parent)
{
    setFrozenPass(FrozenPass { db::Statement::IdempotencyKeyKeys,
                               db::Statement::IdempotencyKeyRows,
                               { { QStringLiteral("scope"), db::ParamType::Text },
                                 { QStringLiteral("key"), db::ParamType::Text } } });
}

QStringList IdempotencyKeyModel::allStates()
{
    return { QStringLiteral("received"), QStringLiteral("processing"), QStringLiteral("done"),
             QStringLiteral("failed") };
}

void IdempotencyKeyModel::setFilter(const IdempotencyKeyFilter &filter)
{
    m_filter = filter;
    reload();
}

void IdempotencyKeyModel::appendFilterParams(db::QueryParams &params) const
{
    addAnyOf(params, m_filter.scopes);
    addAnyOf(params, m_filter.states);
    if (m_filter.keyContains.isEmpty())
        params.addNull(db::ParamType::Text);
    else
        params.addText(m_filter.keyContains);
}

} // namespace redrive
