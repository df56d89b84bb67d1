// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/scoped_key_list_model.h"

namespace redrive {

ScopedKeyListModel::ScopedKeyListModel(db::DatabaseSession *session, ResultColumnSet columns,
                                       db::Statement statement, QObject *parent)
    : ResultTableModel(session, std::move(columns), parent)
    , m_statement(statement)
{ }

void ScopedKeyListModel::reload()
{
    db::QueryParams params;
    addAnyOf(params, m_scopes);
    params.addInt(kLimit);
    load(m_statement, params);
}

} // namespace redrive
