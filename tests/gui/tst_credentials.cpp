// SPDX-License-Identifier: GPL-3.0-or-later
// Credentials never leak from the console (offscreen widgets, a real PostgreSQL): the "no Redrive
// schema" and "upgrade" banners name the connection without its password, a saved connection
// profile never holds one (typed into the string, a URI or the password field) and its settings
// file is owner-only, and a refused login shows a banner and stops instead of retrying. Renders
// the banner and the dialog to PNG for a person to look at.
#include "models/db/database_session.h"
#include "tests/support/test_database.h"
#include "views/connection_dialog.h"
#include "views/main_window.h"

#include <QApplication>
#include <QDir>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QSettings>
#include <QSignalSpy>
#include <QTest>
#include <QTimer>
#include <QUrl>
#include <sys/stat.h>

using namespace redrive;
using namespace redrive::db;

namespace {

const QString kSecret = QStringLiteral("hunter2-do-not-show");

QString outputPath(const QString &name)
{
    QDir().mkpath(QStringLiteral(REDRIVE_TEST_OUTPUT_DIR));
    return QStringLiteral(REDRIVE_TEST_OUTPUT_DIR) + QLatin1Char('/') + name;
}

// Every text a person can read in `widget` and its children: labels, line edits shown in clear,
// the window title.
QString visibleText(QWidget *widget)
{
    QStringList texts { widget->windowTitle() };
    for (QLabel *label : widget->findChildren<QLabel *>())
        texts << label->text() << label->toolTip();
    for (QLineEdit *edit : widget->findChildren<QLineEdit *>())
        if (edit->echoMode() == QLineEdit::Normal)
            texts << edit->text() << edit->placeholderText();
    return texts.join(QLatin1Char('\n'));
}

int modeOf(const QString &path)
{
    struct stat info
    {
    };
    return ::stat(QFile::encodeName(path).constData(), &info) == 0 ? int(info.st_mode & 07777) : -1;
}

} // namespace

class TestCredentials : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase()
    {
        QCoreApplication::setOrganizationName(QStringLiteral("RedriveCredentialsTest"));
        QCoreApplication::setApplicationName(QStringLiteral("redrive"));
        QSettings().clear();
    }

    void missingSchemaBannerHidesThePassword()
    {
        test::TestDatabase db(QStringLiteral("cred_empty"), test::TestDatabase::Contents::Empty);
        QVERIFY(db.isValid());
        ConnectionSettings settings = db.settings();
        // The socket trusts every login, so the password is accepted and ignored.
        settings.connInfo += QStringLiteral(" password='%1'").arg(kSecret);
        MainWindow window;
        window.show();
        window.connectTo(settings);
        QTRY_VERIFY_WITH_TIMEOUT(window.bannerText().contains(QStringLiteral("redrive migrate")),
                                 10000);
        QVERIFY2(!window.bannerText().contains(kSecret), qPrintable(window.bannerText()));
        QVERIFY(!window.bannerText().contains(QLatin1String("password")));
        QVERIFY(window.bannerText().contains(QStringLiteral("dbname=") + db.name()));
        QVERIFY(!visibleText(&window).contains(kSecret));
        QVERIFY(window.grab().save(outputPath(QStringLiteral("credentials-banner.png"))));
    }

    void upgradeBannerHidesAUriPassword()
    {
        test::TestDatabase db(QStringLiteral("cred_old"));
        QVERIFY(db.isValid());
        PgConnection admin = db.connect();
        QVERIFY(admin.exec("DELETE FROM redrive.schema_version WHERE version > 1").ok());
        // The same database as a URI with user:password@ (the socket directory percent-encoded).
        const ServerInfo info = admin.serverInfo();
        ConnectionSettings settings;
        settings.connInfo
            = QStringLiteral("postgresql://%1:%2@%3:%4/%5")
                  .arg(info.user, kSecret, QString::fromUtf8(QUrl::toPercentEncoding(info.host)),
                       info.port, db.name());
        MainWindow window;
        window.show();
        window.connectTo(settings);
        QTRY_VERIFY_WITH_TIMEOUT(window.bannerText().contains(QStringLiteral("version 1")), 10000);
        QVERIFY(window.bannerText().contains(QStringLiteral("redrive migrate")));
        QVERIFY2(!window.bannerText().contains(kSecret), qPrintable(window.bannerText()));
        QVERIFY(!visibleText(&window).contains(kSecret));
    }

    void savedProfileNeverHoldsAPassword_data()
    {
        QTest::addColumn<QString>("typed");
        QTest::addColumn<QString>("passwordField");
        QTest::addColumn<QString>("stored");
        QTest::newRow("key=value") << QStringLiteral("host=db dbname=pay password=%1").arg(kSecret)
                                   << QString() << "dbname=pay host=db";
        QTest::newRow("URI user:pass@")
            << QStringLiteral("postgresql://alice:%1@db:5433/pay").arg(kSecret) << QString()
            << "user=alice dbname=pay host=db port=5433";
        QTest::newRow("URI ?password=")
            << QStringLiteral("postgresql://alice@db/pay?password=%1").arg(kSecret) << QString()
            << "user=alice dbname=pay host=db";
        QTest::newRow("password field")
            << QStringLiteral("host=db dbname=pay") << kSecret << "dbname=pay host=db";
    }
    void savedProfileNeverHoldsAPassword()
    {
        QFETCH(QString, typed);
        QFETCH(QString, passwordField);
        QFETCH(QString, stored);
        ConnectionDialog dialog;
        ConnectionSettings initial;
        initial.connInfo = typed;
        initial.password = passwordField;
        dialog.setInitial(initial);
        dialog.show();
        // Nothing on screen shows the password, not even the connection string's field.
        QVERIFY2(!visibleText(&dialog).contains(kSecret), qPrintable(visibleText(&dialog)));
        // Connecting still uses it.
        QCOMPARE(dialog.settings().password.isEmpty() ? connInfoPassword(dialog.settings().connInfo)
                                                      : dialog.settings().password,
                 kSecret);

        // Typed straight into the string field (not through setInitial) and saved.
        for (QLineEdit *edit : dialog.findChildren<QLineEdit *>())
            if (edit->placeholderText().contains(QLatin1String("host=")))
                edit->setText(typed);
        QVERIFY(dialog.saveProfileAs(QStringLiteral("prod")));
        QVERIFY(!visibleText(&dialog).contains(kSecret));
        QCOMPARE(dialog.settings().password, kSecret); // moved to the masked field, still used
        QVERIFY(dialog.grab().save(outputPath(QStringLiteral("credentials-dialog.png"))));

        QSettings settings;
        QCOMPARE(settings.value(QStringLiteral("connection-profiles/prod")).toString(), stored);
        QFile file(settings.fileName());
        QVERIFY(file.open(QIODevice::ReadOnly));
        const QByteArray bytes = file.readAll();
        QVERIFY(!bytes.contains(kSecret.toUtf8()));
        QVERIFY(!bytes.contains("password"));
        QCOMPARE(modeOf(settings.fileName()), 0600);
        QCOMPARE(modeOf(QFileInfo(settings.fileName()).absolutePath()), 0700);
    }

    void profilesSavedWithAPasswordLoseIt()
    {
        {
            QSettings old;
            old.setValue(QStringLiteral("connection-profiles/legacy"),
                         QStringLiteral("host=db user=bob password=%1").arg(kSecret));
        }
        ConnectionDialog dialog;
        QSettings settings;
        QCOMPARE(settings.value(QStringLiteral("connection-profiles/legacy")).toString(),
                 QStringLiteral("user=bob host=db"));
        QVERIFY(!visibleText(&dialog).contains(kSecret));
    }

    void unparseableStringIsNotSaved()
    {
        ConnectionDialog dialog;
        ConnectionSettings initial;
        initial.connInfo = QStringLiteral("host=db password '%1").arg(kSecret);
        dialog.setInitial(initial);
        QVERIFY(!visibleText(&dialog).contains(kSecret));
        for (QLineEdit *edit : dialog.findChildren<QLineEdit *>())
            if (edit->placeholderText().contains(QLatin1String("host=")))
                edit->setText(initial.connInfo);
        QVERIFY(!dialog.saveProfileAs(QStringLiteral("broken")));
        QVERIFY(!QSettings().contains(QStringLiteral("connection-profiles/broken")));
    }

    void refusedLoginShowsABannerAndStops()
    {
        test::TestDatabase db(QStringLiteral("cred_refused"));
        QVERIFY(db.isValid());
        const QString role
            = db.createLogin(QStringLiteral("t_cred"), {}, QStringLiteral("the-right-one"));
        {
            ConnectionSettings settings = db.settingsOverTcp(role);
            settings.connInfo += QStringLiteral(" password=%1").arg(kSecret);
            MainWindow window;
            window.setPromptsAllowed(false);
            window.show();
            QSignalSpy refused(&window, &MainWindow::loginRefused);
            window.connectTo(settings);
            QVERIFY(refused.wait(10000));
            QVERIFY(window.isLoginRefused());
            QVERIFY(window.bannerText().contains(QStringLiteral("refused the login")));
            QVERIFY(window.bannerText().contains(QStringLiteral("not retrying")));
            QVERIFY(!visibleText(&window).contains(kSecret));
            QSignalSpy attempts(window.session(), &DatabaseSession::connecting);
            QVERIFY(!attempts.wait(3000));
            QVERIFY(window.grab().save(outputPath(QStringLiteral("credentials-refused.png"))));
        }
    }

    void passwordPromptHidesTheOldOneAndANewOneConnects()
    {
        test::TestDatabase db(QStringLiteral("cred_prompt"));
        QVERIFY(db.isValid());
        const QString role
            = db.createLogin(QStringLiteral("t_prompt"), { QStringLiteral("redrive_auditor") },
                             QStringLiteral("the-right-one"));
        {
            ConnectionSettings settings = db.settingsOverTcp(role);
            settings.connInfo += QStringLiteral(" password=%1").arg(kSecret);
            MainWindow window;
            window.show();
            // The prompt is modal: answer it from a timer, after reading what it shows.
            QString promptText;
            bool answered = false;
            QTimer answer;
            connect(&answer, &QTimer::timeout, &window, [&] {
                auto *prompt = qobject_cast<QInputDialog *>(QApplication::activeModalWidget());
                if (!prompt || answered)
                    return;
                answered = true;
                promptText = visibleText(prompt) + prompt->labelText();
                QVERIFY(prompt->grab().save(outputPath(QStringLiteral("credentials-prompt.png"))));
                prompt->setTextValue(QStringLiteral("the-right-one"));
                prompt->accept();
            });
            answer.start(50);
            QSignalSpy refused(&window, &MainWindow::loginRefused);
            window.connectTo(settings);
            QTRY_VERIFY_WITH_TIMEOUT(answered, 10000);
            QVERIFY2(!promptText.contains(kSecret), qPrintable(promptText));
            QVERIFY(promptText.contains(QStringLiteral("user=") + role));
            QVERIFY(promptText.contains(QLatin1String("password authentication failed")));
            // The new password connects, on the same session; nothing was refused for good.
            QTRY_VERIFY_WITH_TIMEOUT(window.session()->isConnected(), 10000);
            QCOMPARE(window.session()->serverInfo().user, role);
            QCOMPARE(refused.count(), 0);
        }
    }
};

QTEST_MAIN(TestCredentials)
#include "tst_credentials.moc"
