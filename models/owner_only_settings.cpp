// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/owner_only_settings.h"

#include "models/logging.h"

#include <QFile>
#include <QFileInfo>
#include <QSettings>

namespace redrive {

bool syncOwnerOnly(QSettings &settings)
{
    settings.sync();
    const QString path = settings.fileName();
    if (!QFileInfo::exists(path))
        return false;
    const bool file = QFile::setPermissions(path, QFileDevice::ReadOwner | QFileDevice::WriteOwner);
    const bool folder = QFile::setPermissions(QFileInfo(path).absolutePath(),
                                              QFileDevice::ReadOwner | QFileDevice::WriteOwner
                                                  | QFileDevice::ExeOwner);
    if (!file || !folder)
        qCWarning(lcModel) << "could not make the settings file owner-only:" << path;
    return file && folder;
}

} // namespace redrive
