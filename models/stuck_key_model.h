// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/result_table_model.h"

#include <QStringList>

namespace redrive {

/// Idempotency keys stuck in processing past their lease (docs/domain.md#idempotency-key-record),
/// oldest lease first, through Statement::StuckKeys: what support staff untangle. "Stuck for" is
/// measured by the server's clock. At most kLimit rows; reachedLimit() says when there may be more.
class StuckKeyModel : public ResultTableModel
{
    Q_OBJECT
public:
    enum Column { StuckFor, Scope, Key, LockedBy, LockedUntil, Job, RequestHash, UpdatedAt };
    static constexpr int kLimit = 500;

    /// `session` must outlive the model. Nothing loads until reload().
    explicit StuckKeyModel(db::DatabaseSession *session, QObject *parent = nullptr);

    /// Only keys in these scopes (empty: all); takes effect at the next reload().
    void setScopes(const QStringList &scopes) { m_scopes = scopes; }
    QStringList scopes() const { return m_scopes; }
    /// Asks the server again.
    void reload();
    /// True when the list holds kLimit rows, so there may be more stuck keys than shown.
    bool reachedLimit() const { return rowCount() >= kLimit; }

private:
    QStringList m_scopes;
};

} // namespace redrive
