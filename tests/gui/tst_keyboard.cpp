// SPDX-License-Identifier: GPL-3.0-or-later
// The console from the keyboard alone, against a real PostgreSQL: every shortcut is unique where
// it applies and listed by Help ▸ Keyboard shortcuts (F1) with its exact keys; Tab and
// Shift+Tab enter and leave every view of every tab (none traps the focus); passing through
// the failure groups changes nothing, and Enter on a group filters by exactly that group
// (docs/architecture.md "Keyboard").
#include "models/dead_letter_model.h"
#include "models/failure_group_model.h"
#include "tests/support/test_database.h"
#include "views/dead_letter_filter_bar.h"
#include "views/keyboard_shortcuts_dialog.h"
#include "views/main_window.h"

#include <QAbstractItemView>
#include <QAction>
#include <QApplication>
#include <QHash>
#include <QLineEdit>
#include <QTabWidget>
#include <QTableView>
#include <QTableWidget>
#include <QTest>

using namespace redrive;

namespace {

const char kSeed[] = R"sql(
INSERT INTO redrive.job (queue, kind, payload, state)
SELECT 'payments', 'charge_card', jsonb_build_object('n', g), 'dead'
  FROM generate_series(1, 30) g;
INSERT INTO redrive.dead_letter (job_id, queue, kind, error_class, error_code, last_error,
                                 attempts, dead_at)
SELECT j.id, j.queue, j.kind, CASE WHEN j.id % 3 = 0 THEN 'permanent' ELSE 'transient' END,
       CASE WHEN j.id % 3 = 0 THEN 'card_declined' ELSE 'provider_5xx' END,
       CASE WHEN j.id % 3 = 0 THEN '402 card_declined' ELSE '502 Bad Gateway' END,
       3, now() - j.id * interval '1 minute'
  FROM redrive.job j;
)sql";

} // namespace

class TestKeyboard : public QObject
{
    Q_OBJECT

    std::unique_ptr<test::TestDatabase> m_db;
    std::unique_ptr<MainWindow> m_window;

    QTabWidget *tabs() const { return m_window->findChild<QTabWidget *>(); }

    // Presses Tab (or Shift+Tab) `steps` times from the window's focus; the widget focused
    // after each press.
    QList<QWidget *> tabThrough(int steps, bool backwards)
    {
        QList<QWidget *> visited;
        for (int i = 0; i < steps; ++i) {
            QWidget *from = QApplication::focusWidget();
            QTest::keyClick(from ? from : m_window.get(), backwards ? Qt::Key_Backtab : Qt::Key_Tab,
                            backwards ? Qt::ShiftModifier : Qt::NoModifier);
            visited << QApplication::focusWidget();
        }
        return visited;
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_db = std::make_unique<test::TestDatabase>(QStringLiteral("keyboard"));
        QVERIFY2(m_db->isValid(), qPrintable(m_db->error()));
        QVERIFY(m_db->connect().execScript(kSeed).ok());
        const QString login
            = m_db->createLogin(QStringLiteral("kim"), { QStringLiteral("redrive_oncall") });
        m_window = std::make_unique<MainWindow>();
        m_window->resize(1400, 860);
        m_window->show();
        m_window->connectTo(m_db->settingsAs(login));
        QTRY_VERIFY_WITH_TIMEOUT(m_window->schemaReady(), 10000);
        QTRY_VERIFY_WITH_TIMEOUT(
            m_window->redriveRoles().contains(QStringLiteral("redrive_oncall")), 10000);
        QTRY_COMPARE_WITH_TIMEOUT(m_window->failureGroupModel()->rowCount(), 2, 10000);
        QTRY_COMPARE_WITH_TIMEOUT(m_window->deadLetterModel()->rowCount(), 30, 10000);
        QApplication::setActiveWindow(m_window.get());
        QVERIFY(QTest::qWaitForWindowActive(m_window.get()));
    }

    // Two window-wide actions on one key would fire one of them at random (Qt reports an
    // ambiguous shortcut and runs neither): every key is one action's, and the ones operators
    // learn first are the exact keys.
    void everyShortcutIsUniqueWhereItApplies()
    {
        QHash<QString, QString> owner; // key, place -> action
        QHash<QString, QString> windowKeys;
        for (const ShortcutEntry &e : collectShortcuts(m_window.get())) {
            for (const QString &key : e.keys.split(QStringLiteral(", "))) {
                const QString slot = key + QLatin1Char('@') + e.where;
                QVERIFY2(!owner.contains(slot),
                         qPrintable(key + QStringLiteral(" is both ") + owner.value(slot)
                                    + QStringLiteral(" and ") + e.action + QStringLiteral(" (")
                                    + e.where + QLatin1Char(')')));
                owner.insert(slot, e.action);
                if (e.where == QStringLiteral("Anywhere in the window"))
                    windowKeys.insert(key, e.action);
            }
        }
        QCOMPARE(windowKeys.value(QStringLiteral("F5")), QStringLiteral("Refresh"));
        QCOMPARE(windowKeys.value(QStringLiteral("Ctrl+R")), QStringLiteral("Requeue"));
        QCOMPARE(windowKeys.value(QStringLiteral("Ctrl+K")), QStringLiteral("Find customer"));
        QCOMPARE(windowKeys.value(QStringLiteral("F1")), QStringLiteral("Keyboard shortcuts"));
        QCOMPARE(windowKeys.value(QStringLiteral("Esc")), QStringLiteral("Cancel running query"));
    }

    void f1ListsEveryShortcutWithItsKeys()
    {
        QTest::keyClick(m_window.get(), Qt::Key_F1);
        KeyboardShortcutsDialog *dialog = nullptr;
        QTRY_VERIFY((dialog = m_window->findChild<KeyboardShortcutsDialog *>()) != nullptr);
        QTableWidget *table = dialog->table();
        QCOMPARE(table->rowCount(), int(collectShortcuts(m_window.get()).size()) + 2);
        QStringList rows;
        for (int r = 0; r < table->rowCount(); ++r)
            rows << table->item(r, 0)->text() + QLatin1Char('|') + table->item(r, 1)->text()
                    + QLatin1Char('|') + table->item(r, 2)->text();
        for (const char *expected :
             { "Requeue|Ctrl+R|Anywhere in the window", "Refresh|F5|Anywhere in the window",
               "Open case|Return, Enter|In Dead letters list",
               "Filter by this failure group|Return, Enter, Space|In Failure groups",
               "Re-read the case|F5|In a case view",
               "Release stuck key|Ctrl+L|In Idempotency keys" })
            QVERIFY2(rows.contains(QString::fromUtf8(expected)), expected);
        dialog->setFilterText(QStringLiteral("requeue"));
        QStringList shown;
        for (int r = 0; r < table->rowCount(); ++r)
            if (!table->isRowHidden(r))
                shown << table->item(r, 0)->text();
        QCOMPARE(shown,
                 QStringList({ QStringLiteral("Requeue"),
                               QStringLiteral("Requeue the whole failure group"),
                               QStringLiteral("Edit payload and requeue") }));
        dialog->close();
    }

    // Every item view of every tab is reached by Tab and left by the next Tab (and the same
    // backwards): no view keeps the focus to itself.
    void tabEntersAndLeavesEveryView()
    {
        QTabWidget *tabWidget = tabs();
        QVERIFY(tabWidget);
        for (int t = 0; t < tabWidget->count(); ++t) {
            tabWidget->setCurrentIndex(t);
            QWidget *page = tabWidget->widget(t);
            QList<QAbstractItemView *> views;
            for (QAbstractItemView *v : page->findChildren<QAbstractItemView *>())
                if (v->isVisibleTo(m_window.get()) && v->focusPolicy() & Qt::TabFocus)
                    views << v;
            if (views.isEmpty())
                continue; // the Overview: charts and buttons only
            for (bool backwards : { false, true }) {
                tabWidget->tabBar()->setFocus();
                const QList<QWidget *> visited = tabThrough(60, backwards);
                for (QAbstractItemView *v : std::as_const(views)) {
                    const qsizetype at = visited.indexOf(v);
                    QVERIFY2(at >= 0,
                             qPrintable(tabWidget->tabText(t) + QStringLiteral(": never reached ")
                                        + v->objectName() + QLatin1Char(' ')
                                        + v->metaObject()->className()));
                    QVERIFY2(at + 1 < visited.size() && visited.at(at + 1) != v,
                             qPrintable(tabWidget->tabText(t) + QStringLiteral(": Tab stays in ")
                                        + v->objectName()));
                }
            }
        }
        tabWidget->setCurrentIndex(0);
    }

    // Passing through the groups with Tab and the arrows changes no filter; Enter on a group
    // filters by exactly that group.
    void choosingAGroupIsAnExplicitKey()
    {
        tabs()->setCurrentIndex(0);
        auto *groups = m_window->findChild<QTableView *>(QStringLiteral("failureGroups"));
        QVERIFY(groups);
        groups->setFocus();
        QTRY_VERIFY(groups->hasFocus());
        QTest::keyClick(groups, Qt::Key_Down);
        QTest::keyClick(groups, Qt::Key_Down);
        QTest::keyClick(groups, Qt::Key_Up);
        QCOMPARE(groups->currentIndex().row(), 0);
        QCOMPARE(m_window->filterBar()->filter().fingerprint, QString());
        QCOMPARE(m_window->deadLetterModel()->total(), qint64(30));

        QTest::keyClick(groups, Qt::Key_Down); // the smaller group: card_declined, 10
        const QString fingerprint = m_window->failureGroupModel()->fingerprintAt(1);
        QVERIFY(!fingerprint.isEmpty());
        QCOMPARE(m_window->filterBar()->filter().fingerprint, QString());
        QTest::keyClick(groups, Qt::Key_Return);
        QCOMPARE(m_window->filterBar()->filter().fingerprint, fingerprint);
        QTRY_COMPARE_WITH_TIMEOUT(m_window->deadLetterModel()->total(), qint64(10), 10000);
        m_window->filterBar()->clear();
        QTRY_COMPARE_WITH_TIMEOUT(m_window->deadLetterModel()->total(), qint64(30), 10000);
    }

    void cleanupTestCase() { m_window.reset(); }
};

QTEST_MAIN(TestKeyboard)
#include "tst_keyboard.moc"
