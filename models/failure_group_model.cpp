// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/failure_group_model.h"

namespace redrive {

using F = ResultColumn::Format;

FailureGroupModel::FailureGroupModel(db::DatabaseSession *session, QObject *parent)
    : ResultTableModel(session,
                       ResultColumnSet(
                           {
                               { QStringLiteral("dead_letters"), tr("Count"), F::Integer },
                               { QStringLiteral("open_dead_letters"), tr("Open"), F::Integer },
                               { QStringLiteral("error_code"), tr("Code") },
                               { QStringLiteral("kind"), tr("Kind") },
                               { QStringLiteral("error_class"), tr("Class") },
                               { QStringLiteral("sample_message"), tr("Sample error") },
                               { QStringLiteral("first_dead_at"), tr("First seen"), F::Time },
                               { QStringLiteral("last_dead_at"), tr("Last seen"), F::Time },
                           },
                           { { FingerprintRole, QStringLiteral("fingerprint") } }),
                       parent)
{ }

void FailureGroupModel::setFilter(const DeadLetterFilter &filter)
{
    m_filter = filter.withoutFingerprint();
    reload();
}

void FailureGroupModel::reload()
{
    db::QueryParams params;
    m_filter.appendParams(params);
    params.addInt(kMaxGroups);
    load(db::Statement::FailureGroups, params);
}

} // namespace redrive
