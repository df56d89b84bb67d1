// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/scoped_key_list_model.h"

namespace redrive {

/// Idempotency keys that saw a request with a different request hash (an error, never a silent
/// replay: docs/domain.md#idempotency-key-record), latest conflict first, through
/// Statement::KeyConflicts. At most kLimit rows.
class KeyConflictModel : public ScopedKeyListModel
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
    /// `session` must outlive the model. Nothing loads until reload().
    explicit KeyConflictModel(db::DatabaseSession *session, QObject *parent = nullptr);
};

} // namespace redrive
