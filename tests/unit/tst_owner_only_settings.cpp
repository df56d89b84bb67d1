// SPDX-License-Identifier: GPL-3.0-or-later
// Every settings file Redrive writes is owner-only (0600) in an owner-only folder (0700): it
// holds connection profiles. No server, no widgets.
#include "models/owner_only_settings.h"

#include <QDir>
#include <QFileInfo>
#include <QSettings>
#include <QTemporaryDir>
#include <QTest>
#include <sys/stat.h>

using redrive::syncOwnerOnly;

class TestOwnerOnlySettings : public QObject
{
    Q_OBJECT
private:
    static int modeOf(const QString &path)
    {
        struct stat info
        {
        };
        if (::stat(QFile::encodeName(path).constData(), &info) != 0)
            return -1;
        return int(info.st_mode & 07777);
    }

private Q_SLOTS:
    void fileIs0600AndFolder0700()
    {
        QTemporaryDir root;
        QVERIFY(root.isValid());
        const QString folder = root.filePath(QStringLiteral("Redrive"));
        QVERIFY(QDir().mkpath(folder));
        QVERIFY(QFile::setPermissions(folder,
                                      QFileDevice::ReadOwner | QFileDevice::WriteOwner
                                          | QFileDevice::ExeOwner | QFileDevice::ReadGroup
                                          | QFileDevice::ExeGroup | QFileDevice::ReadOther
                                          | QFileDevice::ExeOther));
        const QString path = folder + QStringLiteral("/redrive.conf");
        {
            QSettings settings(path, QSettings::IniFormat);
            settings.setValue(QStringLiteral("connection-profiles/prod"),
                              QStringLiteral("host=db dbname=payments"));
            QVERIFY(syncOwnerOnly(settings));
        }
        QCOMPARE(modeOf(path), 0600);
        QCOMPARE(modeOf(folder), 0700);

        // A file left world-readable by an older version is restricted on the next write.
        QVERIFY(QFile::setPermissions(
            path, QFileDevice::ReadOwner | QFileDevice::WriteOwner | QFileDevice::ReadOther));
        QSettings again(path, QSettings::IniFormat);
        again.setValue(QStringLiteral("main/geometry"), QByteArray("x"));
        QVERIFY(syncOwnerOnly(again));
        QCOMPARE(modeOf(path), 0600);
    }

    void defaultSettingsFileToo()
    {
        // The application's own file (under XDG_CONFIG_HOME, the build tree in ctest).
        QCoreApplication::setOrganizationName(QStringLiteral("RedriveOwnerOnlyTest"));
        QCoreApplication::setApplicationName(QStringLiteral("redrive"));
        QSettings settings;
        settings.setValue(QStringLiteral("k"), 1);
        QVERIFY(syncOwnerOnly(settings));
        QCOMPARE(modeOf(settings.fileName()), 0600);
        QCOMPARE(modeOf(QFileInfo(settings.fileName()).absolutePath()), 0700);
        QFile::remove(settings.fileName());
    }
};

QTEST_GUILESS_MAIN(TestOwnerOnlySettings)
#include "tst_owner_only_settings.moc"
