// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

class QSettings;

namespace redrive {

/// Writes `settings` to disk now (QSettings::sync) and makes the file readable and writable by
/// its owner only (0600) and the folder that holds it 0700: a settings file holds connection
/// profiles (host, database, login role), which other local users have no business reading.
/// Returns false when the file or its folder could not be restricted (e.g. not a native file).
bool syncOwnerOnly(QSettings &settings);

} // namespace redrive
