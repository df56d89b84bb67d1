// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/key_conflict_model.h"

namespace redrive {

using F = ResultColumn::Format;

KeyConflictModel::KeyConflictModel(db::DatabaseSession *session, QObject *parent)
    : ScopedKeyListModel(
        session,
        ResultColumnSet({
            { QStringLiteral("last_conflict_at"), tr("Last conflict at"), F::Time },
            { QStringLiteral("scope"), tr("Scope") },
            { QStringLiteral("key"), tr("Key"), ResultColumn::Format::Identifier },
            { QStringLiteral("state"), tr("State") },
            { QStringLiteral("conflict_count"), tr("Conflicts"), F::Integer },
            { QStringLiteral("request_hash"), tr("Request hash"), F::ShortHash },
            { QStringLiteral("conflicting_hash"), tr("Conflicting hash"), F::ShortHash },
            { QStringLiteral("job_ref"), tr("Job") },
        }),
        db::Statement::KeyConflicts, parent)
{ }

} // namespace redrive
