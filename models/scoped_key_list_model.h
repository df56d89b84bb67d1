// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/result_table_model.h"

#include <QStringList>

namespace redrive {

/// A bounded list of idempotency keys read by one statement whose parameters are the scopes
/// shown ($1, text[]; NULL: all) and the most rows ($2, kLimit): the Keys tab's stuck keys and
/// key conflicts. The subclass gives the columns and the statement.
class ScopedKeyListModel : public ResultTableModel
{
    Q_OBJECT
public:
    static constexpr int kLimit = 500;

    /// Only keys in these scopes (empty: all); takes effect at the next reload().
    void setScopes(const QStringList &scopes) { m_scopes = scopes; }
    QStringList scopes() const { return m_scopes; }
    /// Asks the server again.
    void reload();
    /// True when the list holds kLimit rows, so there may be more than shown.
    bool reachedLimit() const { return rowCount() >= kLimit; }

protected:
    /// `session` must outlive the model. Nothing loads until reload().
    ScopedKeyListModel(db::DatabaseSession *session, ResultColumnSet columns,
                       db::Statement statement, QObject *parent);

private:
    db::Statement m_statement;
    QStringList m_scopes;
};

} // namespace redrive
