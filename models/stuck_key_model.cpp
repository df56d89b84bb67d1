// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/stuck_key_model.h"

namespace redrive {

StuckKeyModel::StuckKeyModel(db::DatabaseSession *session, QObject *parent)
    : ResultTableModel(
        session,
        { { QStringLiteral("stuck_seconds"), tr("Stuck for"), ResultColumn::Format::AgeSeconds },
          { QStringLiteral("scope"), tr("Scope") },
          { QStringLiteral("key"), tr("Key") },
          { QStringLiteral("locked_by"), tr("Locked by") },
          { QStringLiteral("locked_until"), tr("Lease expired at"), ResultColumn::Format::Time },
          { QStringLiteral("job_ref"), tr("Job") },
          { QStringLiteral("request_hash"), tr("Request hash"), ResultColumn::Format::ShortHash },
          { QStringLiteral("updated_at"), tr("Updated at"), ResultColumn::Format::Time } },
        parent)
{
    setJsonKinds({ { QStringLiteral("locked_until"), JsonValueKind::Timestamp },
                   { QStringLiteral("updated_at"), JsonValueKind::Timestamp },
                   { QStringLiteral("version"), JsonValueKind::Integer },
                   { QStringLiteral("stuck_seconds"), JsonValueKind::Integer } });
}

void StuckKeyModel::reload()
{
    db::QueryParams params;
    if (m_scopes.isEmpty())
        params.addNull(db::ParamType::TextArray);
    else
        params.addTextArray(m_scopes);
    params.addInt(kLimit);
    load(db::Statement::StuckKeys, params);
}

} // namespace redrive
