// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/stuck_key_model.h"

namespace redrive {

using F = ResultColumn::Format;

StuckKeyModel::StuckKeyModel(db::DatabaseSession *session, QObject *parent)
    : ScopedKeyListModel(
        session,
        ResultColumnSet(
            {
                { QStringLiteral("stuck_seconds"), tr("Stuck for"), F::AgeSeconds },
                { QStringLiteral("scope"), tr("Scope") },
                { QStringLiteral("key"), tr("Key"), ResultColumn::Format::Identifier },
                { QStringLiteral("locked_by"), tr("Locked by") },
                { QStringLiteral("locked_until"), tr("Lease expired at"), F::Time },
                { QStringLiteral("job_ref"), tr("Job") },
                { QStringLiteral("request_hash"), tr("Request hash"), F::ShortHash },
                { QStringLiteral("updated_at"), tr("Updated at"), F::Time },
            },
            {}, { { QStringLiteral("version"), JsonValueKind::Integer } }),
        db::Statement::StuckKeys, parent)
{ }

} // namespace redrive
