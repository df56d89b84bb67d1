// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/result_table_model.h"

#include <QStringList>

namespace redrive {

/// Idempotency keys that saw a request with a different request hash (an error, never a silent
/// replay: docs/domain.md#idempotency-key-record), latest conflict first, through
/// Statement::KeyConflicts. At most kLimit rows.
class KeyConflictModel : public ResultTableModel
{
    Q_OBJECT
public:
    enum Column {
        LastConflictAt,
        Scope,
        Key,
        State,
        ConflictCount,
        RequestHash,
        ConflictingHash,
        Job
    };
    static constexpr int kLimit = 500;

    /// `session` must outlive the model. Nothing loads until reload().
    explicit KeyConflictModel(db::DatabaseSession *session, QObject *parent = nullptr);

    /// Only keys in these scopes (empty: all); takes effect at the next reload().
    void setScopes(const QStringList &scopes) { m_scopes = scopes; }
    QStringList scopes() const { return m_scopes; }
    /// Asks the server again.
    void reload();
    /// True when the list holds kLimit rows, so there may be more than shown.
    bool reachedLimit() const { return rowCount() >= kLimit; }

private:
    QStringList m_scopes;
};

} // namespace redrive
