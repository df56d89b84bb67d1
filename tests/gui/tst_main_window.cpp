// SPDX-License-Identifier: GPL-3.0-or-later
// The main window against a real PostgreSQL: it loads the triage view, keeps the
// operator's filters through a killed backend (banner, reconnect, same filters), explains a
// missing schema instead of failing, and is rendered to PNG for a person to look at.
#include "models/db/database_session.h"
#include "models/dead_letter_model.h"
#include "models/failure_group_model.h"
#include "models/stuck_key_model.h"
#include "tests/support/test_database.h"
#include "views/dead_letter_filter_bar.h"
#include "views/idempotency_keys_widget.h"
#include "views/main_window.h"

#include <QApplication>
#include <QComboBox>
#include <QDir>
#include <QLineEdit>
#include <QSignalSpy>
#include <QTabWidget>
#include <QTableView>
#include <QTest>

using namespace redrive;
using namespace redrive::db;

namespace {

const char kSeed[] = R"sql(
INSERT INTO redrive.job (queue, kind, payload, state)
SELECT (ARRAY['payments','emails'])[1 + g % 2], (ARRAY['charge_card','send_receipt'])[1 + g % 2],
       jsonb_build_object('n', g), 'dead'
  FROM generate_series(1, 300) g;
INSERT INTO redrive.dead_letter (job_id, queue, kind, error_class, error_code, last_error,
                                 attempts, idempotency_key, dead_at)
SELECT j.id, j.queue, j.kind, CASE WHEN j.id % 3 = 0 THEN 'permanent' ELSE 'transient' END,
       CASE WHEN j.id % 3 = 0 THEN 'card_declined' ELSE 'provider_5xx' END,
       CASE WHEN j.id % 3 = 0 THEN '402 card_declined for payment pay_' || j.id
            ELSE '502 Bad Gateway from POST /v1/charges after ' || j.id || ' ms' END,
       1 + j.id % 8, 'charge:pay_' || j.id, now() - j.id * interval '1 minute'
  FROM redrive.job j;
INSERT INTO redrive.idempotency_key (scope, key, request_hash, state, locked_by, locked_until)
VALUES ('charge_card', 'charge:stuck', repeat('c', 64), 'processing', 'w-dead',
        clock_timestamp() - interval '2 hours');
)sql";

QString outputPath(const QString &name)
{
    QDir().mkpath(QStringLiteral(REDRIVE_TEST_OUTPUT_DIR));
    return QStringLiteral(REDRIVE_TEST_OUTPUT_DIR) + QLatin1Char('/') + name;
}

} // namespace

class TestMainWindow : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void loadsFiltersAndSurvivesAKilledBackend()
    {
        test::TestDatabase db(QStringLiteral("main_window"));
        QVERIFY(db.isValid());
        PgConnection admin = db.connect();
        QVERIFY(admin.execScript(kSeed).ok());

        MainWindow window;
        window.resize(1400, 860);
        window.show();
        window.connectTo(db.settings());
        QTRY_VERIFY_WITH_TIMEOUT(window.schemaReady(), 10000);
        // Every view is a tab once the schema matched (issues 4 and 5).
        auto *tabs = window.findChild<QTabWidget *>();
        QVERIFY(tabs);
        QStringList titles;
        for (int i = 0; i < tabs->count(); ++i)
            titles << tabs->tabText(i);
        QCOMPARE(titles,
                 QStringList({ QStringLiteral("Dead letters"), QStringLiteral("Idempotency keys"),
                               QStringLiteral("Reconciliation"), QStringLiteral("Overview"),
                               QStringLiteral("Compensations"), QStringLiteral("Audit log") }));
        // Every tab loaded with the window, not on its first refresh: a stuck key shows at once.
        auto *keys = window.findChild<IdempotencyKeysWidget *>();
        QVERIFY(keys);
        QTRY_COMPARE_WITH_TIMEOUT(keys->stuckKeyModel()->rowCount(), 1, 10000);
        // Ctrl+PgDown / Ctrl+PgUp move between tabs from anywhere in the window.
        QApplication::setActiveWindow(&window);
        QVERIFY(QTest::qWaitForWindowActive(&window));
        QCOMPARE(tabs->currentIndex(), 0);
        QTest::keyClick(&window, Qt::Key_PageDown, Qt::ControlModifier);
        QCOMPARE(tabs->currentIndex(), 1);
        QTest::keyClick(&window, Qt::Key_PageUp, Qt::ControlModifier);
        QTest::keyClick(&window, Qt::Key_PageUp, Qt::ControlModifier);
        QCOMPARE(tabs->currentIndex(), tabs->count() - 1);
        tabs->setCurrentIndex(0);
        // One source only (the native one): no picker to distract.
        QTRY_COMPARE_WITH_TIMEOUT(window.sourceBox()->count(), 1, 10000);
        QVERIFY(!window.sourceBox()->isVisible());
        QTRY_COMPARE_WITH_TIMEOUT(window.deadLetterModel()->total(), qint64(300), 10000);
        QTRY_COMPARE_WITH_TIMEOUT(window.failureGroupModel()->rowCount(), 4,
                                  10000); // 2 kinds x 2 errors

        // Narrow by a literal search; the table follows.
        auto *search = window.filterBar()->findChild<QLineEdit *>();
        QVERIFY(search);
        search->setText(QStringLiteral("card_declined"));
        QTRY_COMPARE_WITH_TIMEOUT(window.deadLetterModel()->total(), qint64(100), 10000);
        // The total has its own request: wait for the filtered page too before selecting in it.
        QTRY_VERIFY_WITH_TIMEOUT(!window.deadLetterModel()->isLoading()
                                     && window.deadLetterModel()->rowCount() == 100,
                                 10000);
        const DeadLetterFilter before = window.deadLetterModel()->filter();
        window.deadLetterView()->selectRow(3);
        const qint64 selected = window.deadLetterModel()->idAt(3);
        window.grab().save(outputPath(QStringLiteral("main_window.png")));

        // Kill the console's backend: a banner, a reconnect, the same filter and selection.
        const int pid = window.session()->serverInfo().backendPid;
        QVERIFY(admin.exec("SELECT pg_terminate_backend($1)", QueryParams().addInt(pid)).ok());
        window.deadLetterModel()->reload(); // the operator presses F5 on a dead connection
        QTRY_VERIFY_WITH_TIMEOUT(window.bannerText().contains(QStringLiteral("Connection lost")),
                                 10000);
        window.grab().save(outputPath(QStringLiteral("main_window_connection_lost.png")));
        QTRY_VERIFY_WITH_TIMEOUT(window.session()->isConnected(), 15000);
        QTRY_VERIFY_WITH_TIMEOUT(window.bannerText().isEmpty(), 10000);
        QVERIFY(window.session()->serverInfo().backendPid != pid);
        QTRY_COMPARE_WITH_TIMEOUT(window.deadLetterModel()->total(), qint64(100), 10000);
        QCOMPARE(window.deadLetterModel()->filter().search, before.search);
        QCOMPARE(search->text(), QStringLiteral("card_declined"));
        QTRY_VERIFY_WITH_TIMEOUT(window.deadLetterView()->currentIndex().isValid(), 10000);
        QCOMPARE(window.deadLetterModel()->idAt(window.deadLetterView()->currentIndex().row()),
                 selected);
    }

    void missingSchemaIsExplained()
    {
        test::TestDatabase db(QStringLiteral("main_window_empty"),
                              test::TestDatabase::Contents::Empty);
        QVERIFY(db.isValid());
        MainWindow window;
        window.show();
        // The connection string is quoted back in the banner: a BiDi override in it is shown as
        // a marker, never applied to the rest of the banner.
        ConnectionSettings settings = db.settings();
        settings.connInfo += QStringLiteral(" application_name='x\u202Eevil'");
        window.connectTo(settings);
        QTRY_VERIFY_WITH_TIMEOUT(window.bannerText().contains(QStringLiteral("redrive migrate")),
                                 10000);
        QVERIFY2(window.bannerText().contains(QStringLiteral("x\u27E8U+202E\u27E9evil")),
                 qPrintable(window.bannerText()));
        QVERIFY(!window.bannerText().contains(QChar(0x202E)));
        QVERIFY(!window.schemaReady());
        QCOMPARE(window.deadLetterModel()->rowCount(), 0);
    }

    void olderSchemaNamesBothVersions()
    {
        test::TestDatabase db(QStringLiteral("main_window_old"));
        QVERIFY(db.isValid());
        PgConnection admin = db.connect();
        QVERIFY(admin.exec("DELETE FROM redrive.schema_version WHERE version > 1").ok());
        MainWindow window;
        window.show();
        window.connectTo(db.settings());
        QTRY_VERIFY_WITH_TIMEOUT(window.bannerText().contains(QStringLiteral("version 1")), 10000);
        QVERIFY(window.bannerText().contains(QStringLiteral("redrive migrate")));
        QVERIFY(!window.schemaReady());
    }
};

QTEST_MAIN(TestMainWindow)
#include "tst_main_window.moc"
