// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/scoped_key_list_model.h"

namespace redrive {

/// Idempotency keys stuck in processing past their lease (docs/domain.md#idempotency-key-record),
/// oldest lease first, through Statement::StuckKeys: what support staff untangle. "Stuck for" is
/// measured by the server's clock. At most kLimit rows; reachedLimit() says when there may be more.
class StuckKeyModel : public ScopedKeyListModel
{
    Q_OBJECT
public:
    enum Column { StuckFor, Scope, Key, LockedBy, LockedUntil, Job, RequestHash, UpdatedAt };
    /// `session` must outlive the model. Nothing loads until reload().
    explicit StuckKeyModel(db::DatabaseSession *session, QObject *parent = nullptr);
};

} // namespace redrive
