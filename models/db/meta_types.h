// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

namespace redrive::db {

/// Registers the database value types for queued signals; idempotent, call before connecting
/// signals across threads.
void registerMetaTypes();

} // namespace redrive::db
