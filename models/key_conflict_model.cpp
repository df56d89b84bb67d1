// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/key_conflict_model.h"

namespace redrive {

KeyConflictModel::KeyConflictModel(db::DatabaseSession *session, QObject *parent)
    : ResultTableModel(
        session,
        { { QStringLiteral("last_conflict_at"), tr("Last conflict at"),
            ResultColumn::Format::Time },
          { QStringLiteral("scope"), tr("Scope") },
          { QStringLiteral("key"), tr("Key") },
          { QStringLiteral("state"), tr("State") },
          { QStringLiteral("conflict_count"), tr("Conflicts"), ResultColumn::Format::Integer },
          { QStringLiteral("request_hash"), tr("Request hash"), ResultColumn::Format::ShortHash },
          { QStringLiteral("conflicting_hash"), tr("Conflicting hash"),
            ResultColumn::Format::ShortHash },
          { QStringLiteral("job_ref"), tr("Job") } },
        parent)
{
    setJsonKinds({ { QStringLiteral("last_conflict_at"), JsonValueKind::Timestamp },
                   { QStringLiteral("conflict_count"), JsonValueKind::Integer } });
}

void KeyConflictModel::reload()
{
    db::QueryParams params;
    if (m_scopes.isEmpty())
        params.addNull(db::ParamType::TextArray);
    else
        params.addTextArray(m_scopes);
    params.addInt(kLimit);
    load(db::Statement::KeyConflicts, params);
}

} // namespace redrive
