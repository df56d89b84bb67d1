// SPDX-License-Identifier: GPL-3.0-or-later
// The idempotency-keys tab on a real PostgreSQL: the stuck list holds
// exactly the keys processing past their lease, oldest lease first; paging through the full
// list yields each key once, in the statement's order, across more than two pages; the state and
// scope filters count what count(*) counts; the key search is literal; paging stays exact while
// another session changes keys; Ctrl+C copies rows as JSON. Renders the tab to
// idempotency_keys.png for a look.
#include "models/db/database_session.h"
#include "models/display_format.h"
#include "models/idempotency_key_model.h"
#include "models/key_conflict_model.h"
#include "models/stuck_key_model.h"
#include "tests/support/test_database.h"
#include "tests/support/widget_lookup.h"
#include "views/case_view.h"
#include "views/dead_letter_filter_bar.h"
#include "views/idempotency_keys_widget.h"
#include "views/main_window.h"
#include "views/result_table_view.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTabWidget>
#include <QTest>
#include <QToolButton>

using namespace redrive;
using namespace redrive::db;

namespace {

// 450 keys in three scopes: 90 processing past their lease (stuck), 45 processing with a live
// lease, 180 done, 45 failed, 90 received; every 7th saw a conflicting request. updated_at ties
// in pairs and differs by microseconds inside each group of four, so keyset paging must send
// the server's text back unchanged.
const char kSeed[] = R"sql(
INSERT INTO redrive.idempotency_key
       (scope, key, request_hash, state, locked_by, locked_until, result, error_message,
        conflicting_hash, conflict_count, last_conflict_at, created_at, updated_at)
SELECT (ARRAY['charge_card', 'send_receipt', 'process_webhook'])[1 + g % 3],
       'key-' || lpad(g::text, 4, '0'),
       encode(sha256(convert_to('request ' || g, 'UTF8')), 'hex'),
       CASE WHEN g % 10 IN (0, 1, 2) THEN 'processing'
            WHEN g % 10 IN (3, 4, 5, 6) THEN 'done'
            WHEN g % 10 = 7 THEN 'failed'
            ELSE 'received' END,
       CASE WHEN g % 10 IN (0, 1, 2) THEN 'worker-' || (g % 4) END,
       CASE WHEN g % 10 IN (0, 1) THEN clock_timestamp() - g * interval '37 seconds'
            WHEN g % 10 = 2 THEN clock_timestamp() + interval '1 hour' END,
       CASE WHEN g % 10 IN (3, 4, 5, 6)
            THEN jsonb_build_object('charge_id', 'ch_' || g, 'status', 'succeeded') END,
       CASE WHEN g % 10 = 7 THEN 'card_declined: insufficient funds' END,
       CASE WHEN g % 7 = 0 THEN encode(sha256(convert_to('other ' || g, 'UTF8')), 'hex') END,
       CASE WHEN g % 7 = 0 THEN 1 + g % 3 ELSE 0 END,
       CASE WHEN g % 7 = 0 THEN clock_timestamp() - g * interval '1 minute' END,
       timestamptz '2026-11-20 11:00:00+00' - g * interval '1 minute',
       timestamptz '2026-11-20 12:00:00+00' - (g / 4) * interval '1 minute'
                                          - ((g % 4) / 2) * interval '7 microseconds'
  FROM generate_series(1, 450) g;
)sql";

} // namespace

class TestIdempotencyKeysWidget : public QObject
{
    Q_OBJECT
private:
    std::unique_ptr<test::TestDatabase> m_db;
    PgConnection m_admin;
    std::unique_ptr<DatabaseSession> m_session;

    QStringList sqlKeys(const QByteArray &sql, const QueryParams &params = {})
    {
        auto r = m_admin.exec(sql, params);
        if (!r)
            qFatal("%s", qPrintable(r.error().summary()));
        QStringList keys;
        for (int i = 0; i < r->rowCount(); ++i)
            keys << r->text(i, 0) + QLatin1Char('/') + r->text(i, 1);
        return keys;
    }

    static QStringList modelKeys(const QAbstractItemModel &model,
                                 const std::function<QString(int, const QString &)> &text)
    {
        QStringList keys;
        for (int row = 0; row < model.rowCount(); ++row)
            keys << text(row, QStringLiteral("scope")) + QLatin1Char('/')
                    + text(row, QStringLiteral("key"));
        return keys;
    }

    // Loads every page of `model`; false on a timeout.
    static bool loadAll(IdempotencyKeyModel &model)
    {
        if (!QTest::qWaitFor([&] { return !model.isLoading(); }, 10000))
            return false;
        while (model.canFetchMore({})) {
            model.fetchMore({});
            if (!QTest::qWaitFor([&] { return !model.isLoading(); }, 10000))
                return false;
        }
        return true;
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_db = std::make_unique<test::TestDatabase>(QStringLiteral("keys_widget"));
        QVERIFY2(m_db->isValid(), qPrintable(m_db->error()));
        m_admin = m_db->connect();
        auto seeded = m_admin.execScript(kSeed);
        QVERIFY2(seeded.ok(), seeded.ok() ? "" : qPrintable(seeded.error().summary()));
        m_session = m_db->openSession(m_db->consoleSettings());
        QVERIFY2(m_session, qPrintable(m_db->error()));
    }
    void cleanupTestCase()
    {
        m_session.reset();
        m_admin = PgConnection();
        m_db.reset();
    }

    void stuckKeysAreExactlyTheStuckOnesOldestFirst()
    {
        IdempotencyKeysWidget widget(m_session.get());
        QAbstractItemModelTester t1(widget.stuckKeyModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester t2(widget.keyConflictModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester t3(widget.keyModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
        widget.refresh();
        QTRY_VERIFY_WITH_TIMEOUT(!widget.isLoading(), 10000);

        const QStringList expected
            = sqlKeys("SELECT scope, key FROM redrive.idempotency_key WHERE state = 'processing'"
                      " AND locked_until < clock_timestamp() ORDER BY locked_until, scope, key");
        QCOMPARE(expected.size(), 90);
        const StuckKeyModel *stuck = widget.stuckKeyModel();
        QCOMPARE(modelKeys(*stuck, [&](int r, const QString &c) { return stuck->text(r, c); }),
                 expected);
        // Oldest lease first: "stuck for" never grows down the list.
        for (int row = 1; row < stuck->rowCount(); ++row)
            QVERIFY(stuck->text(row - 1, QStringLiteral("stuck_seconds")).toLongLong()
                    >= stuck->text(row, QStringLiteral("stuck_seconds")).toLongLong());
        // Shown as an age, measured by the server: the oldest was leased 441 * 37 s ago.
        const QString age = stuck->index(0, StuckKeyModel::StuckFor).data().toString();
        QVERIFY2(age.endsWith(QStringLiteral(" min")) || age.contains(QStringLiteral(" h ")),
                 qPrintable(age));

        const QStringList conflicts
            = sqlKeys("SELECT scope, key FROM redrive.idempotency_key WHERE conflicting_hash IS"
                      " NOT NULL ORDER BY last_conflict_at DESC, scope, key");
        const KeyConflictModel *conflict = widget.keyConflictModel();
        QCOMPARE(
            modelKeys(*conflict, [&](int r, const QString &c) { return conflict->text(r, c); }),
            conflicts);
    }

    void scopeFilterNarrowsAllThreeLists()
    {
        IdempotencyKeysWidget widget(m_session.get());
        widget.refresh();
        QTRY_VERIFY_WITH_TIMEOUT(!widget.isLoading(), 10000);
        widget.setScopeFilterText(QStringLiteral(" charge_card ,send_receipt,"));
        QCOMPARE(widget.scopeFilter(),
                 QStringList({ QStringLiteral("charge_card"), QStringLiteral("send_receipt") }));
        QTRY_VERIFY_WITH_TIMEOUT(!widget.isLoading(), 10000);
        const QStringList expected = sqlKeys(
            "SELECT scope, key FROM redrive.idempotency_key WHERE state = 'processing' AND"
            " locked_until < clock_timestamp() AND scope IN ('charge_card', 'send_receipt')"
            " ORDER BY locked_until, scope, key");
        const StuckKeyModel *stuck = widget.stuckKeyModel();
        QCOMPARE(modelKeys(*stuck, [&](int r, const QString &c) { return stuck->text(r, c); }),
                 expected);
        QCOMPARE(widget.keyModel()->filter().scopes, widget.scopeFilter());
    }

    void pagingYieldsEachKeyOnceInOrder()
    {
        IdempotencyKeyModel model(m_session.get());
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setFilter({});
        QVERIFY(loadAll(model));
        QVERIFY2(model.pageCount() >= 3, qPrintable(QString::number(model.pageCount())));
        const QStringList keys
            = modelKeys(model, [&](int r, const QString &c) { return model.text(r, c); });
        QCOMPARE(keys.size(), 450);
        QCOMPARE(QSet<QString>(keys.begin(), keys.end()).size(), 450);
        QCOMPARE(keys,
                 sqlKeys("SELECT scope, key FROM redrive.idempotency_key"
                         " ORDER BY updated_at DESC, scope DESC, key DESC"));
    }

    // Another session changes keys between page fetches: one not yet shown is changed now (its
    // updated_at moves it first, where a keyset page would skip it), one already shown gets an
    // old updated_at and another state (a keyset page would list it again). The keys listed are
    // exactly the keys at the start, in their order then, each once.
    void pagingStaysExactWhileKeysChange()
    {
        test::TestDatabase db(QStringLiteral("keys_paging"));
        QVERIFY2(db.isValid(), qPrintable(db.error()));
        PgConnection other = db.connect();
        QVERIFY(other.execScript(kSeed).ok());
        auto session = db.openSession(db.consoleSettings());
        QVERIFY(session);
        auto keysNow = [&] {
            auto r = other.exec("SELECT scope, key FROM redrive.idempotency_key"
                                " ORDER BY updated_at DESC, scope DESC, key DESC");
            QStringList keys;
            for (int i = 0; r && i < r->rowCount(); ++i)
                keys << r->text(i, 0) + QLatin1Char('/') + r->text(i, 1);
            return keys;
        };
        auto change = [&](const QString &scopeAndKey, const char *sql) {
            const QStringList parts = scopeAndKey.split(QLatin1Char('/'));
            return other.exec(sql, QueryParams().addText(parts.value(0)).addText(parts.value(1)))
                .ok();
        };
        // No QAbstractItemModelTester here: it fetches the next page as soon as rows arrive,
        // leaving no moment between fetches for the other session (pagingYieldsEachKeyOnceInOrder
        // runs the same model under it).
        IdempotencyKeyModel model(session.get(), nullptr, 50);
        model.setFilter({});
        const QStringList atStart = keysNow();
        QCOMPARE(atStart.size(), 450);
        QTRY_VERIFY(!model.isLoading());
        int changes = 0;
        while (model.canFetchMore({})) {
            const int shown = model.rowCount();
            const QString ahead = atStart.value(shown + 60);
            if (!ahead.isEmpty()) {
                QVERIFY(change(ahead,
                               "UPDATE redrive.idempotency_key SET state = 'done',"
                               " result = coalesce(result, '{}'),"
                               " updated_at = clock_timestamp(), version = version + 1"
                               " WHERE scope = $1 AND key = $2"));
                ++changes;
            }
            QVERIFY(change(model.text(shown / 2, QStringLiteral("scope")) + QLatin1Char('/')
                               + model.text(shown / 2, QStringLiteral("key")),
                           "UPDATE redrive.idempotency_key SET state = 'failed',"
                           " updated_at = timestamptz '2020-01-01 00:00:00+00',"
                           " version = version + 1 WHERE scope = $1 AND key = $2"));
            ++changes;
            model.fetchMore({});
            QTRY_VERIFY(!model.isLoading());
        }
        const QStringList seen
            = modelKeys(model, [&](int r, const QString &c) { return model.text(r, c); });
        QCOMPARE(seen.size(), 450);
        QCOMPARE(seen, atStart);
        QCOMPARE(QSet<QString>(seen.cbegin(), seen.cend()).size(), 450);
        QVERIFY(changes >= 14);
        QVERIFY(keysNow() != atStart); // the changes did reorder the keys
        // A key changed before its page was fetched shows what it is now, in its place at the
        // start: state done, version bumped once.
        const QStringList parts = atStart.value(110).split(QLatin1Char('/'));
        auto now = other.exec("SELECT state, version FROM redrive.idempotency_key"
                              " WHERE scope = $1 AND key = $2",
                              QueryParams().addText(parts.value(0)).addText(parts.value(1)));
        QVERIFY(now && now->rowCount() == 1);
        QCOMPARE(now->text(0, 0), QStringLiteral("done"));
        QCOMPARE(model.text(110, QStringLiteral("state")), QStringLiteral("done"));
        QCOMPARE(model.text(110, QStringLiteral("version")), now->text(0, 1));
        QCOMPARE(model.text(110, QStringLiteral("version")), QStringLiteral("2"));
    }

    // The key search takes its text literally, as a parameter: '_' and '%' are no wildcards.
    void keySearchIsLiteral_data()
    {
        QTest::addColumn<QString>("text");
        QTest::addColumn<int>("rows");
        QTest::newRow("key-01") << QStringLiteral("key-01") << 100; // key-0100 .. key-0199
        QTest::newRow("0042") << QStringLiteral("0042") << 1;
        QTest::newRow("underscore") << QStringLiteral("key-0_00") << 0;
        QTest::newRow("percent") << QStringLiteral("%") << 0;
        QTest::newRow("quote") << QStringLiteral("key' OR '1'='1") << 0;
    }
    void keySearchIsLiteral()
    {
        QFETCH(QString, text);
        QFETCH(int, rows);
        IdempotencyKeysWidget widget(m_session.get());
        widget.refresh();
        QTRY_VERIFY_WITH_TIMEOUT(!widget.isLoading(), 10000);
        widget.setKeySearch(text);
        QCOMPARE(widget.keyModel()->filter().keyContains, text);
        QTRY_VERIFY_WITH_TIMEOUT(!widget.isLoading(), 10000);
        QVERIFY(loadAll(*widget.keyModel()));
        QCOMPARE(widget.keyModel()->rowCount(), rows);
        QCOMPARE(modelKeys(*widget.keyModel(),
                           [&](int r, const QString &c) { return widget.keyModel()->text(r, c); }),
                 sqlKeys("SELECT scope, key FROM redrive.idempotency_key"
                         " WHERE strpos(key, $1) > 0"
                         " ORDER BY updated_at DESC, scope DESC, key DESC",
                         QueryParams().addText(text)));
    }

    // From a key to its dead letters: the action on "All keys" asks for the current row's key,
    // and the Dead letters filter bar then lists every dead letter whose key contains it, in
    // any status, queue, kind, class, time and group.
    void keyLinksToItsDeadLetters()
    {
        IdempotencyKeysWidget widget(m_session.get());
        widget.resize(1200, 800);
        widget.show();
        widget.setKeySearch(QStringLiteral("key-0042"));
        QTRY_VERIFY_WITH_TIMEOUT(!widget.isLoading() && widget.keyModel()->rowCount() == 1, 10000);
        auto *all = widget.findChild<ResultTableView *>(QStringLiteral("allKeys"));
        QVERIFY(all);
        all->setCurrentIndex(widget.keyModel()->index(0, 0));
        QSignalSpy asked(&widget, &IdempotencyKeysWidget::deadLettersWithKeyRequested);
        widget.showDeadLettersAction()->trigger();
        QCOMPARE(asked.size(), 1);
        QCOMPARE(asked.first().first().toString(), QStringLiteral("key-0042"));

        DeadLetterFilterBar bar;
        bar.setFailureGroup(QStringLiteral("abc"), QStringLiteral("some group"));
        QSignalSpy changed(&bar, &DeadLetterFilterBar::filterChanged);
        bar.showSearch(QStringLiteral("key-0042"));
        QCOMPARE(changed.size(), 1);
        const DeadLetterFilter f = bar.filter();
        QCOMPARE(f.search, QStringLiteral("key-0042"));
        QVERIFY(f.statuses.isEmpty());
        QVERIFY(f.queues.isEmpty());
        QVERIFY(f.fingerprint.isEmpty());
        QVERIFY(!f.from.isValid());
    }

    // From a key to its job: the action opens the case view of the job's dead letter; a key
    // whose job has no dead letter says so in the status bar, and a key with no job disables it.
    void keyOpensItsJobsCase()
    {
        auto one = [this](const QByteArray &sql) {
            auto r = m_admin.exec(sql);
            if (!r)
                qFatal("%s", qPrintable(r.error().summary()));
            return r->text(0, 0);
        };
        const QString deadJob = one("INSERT INTO redrive.job (queue, kind, state)"
                                    " VALUES ('payments', 'charge_card', 'dead') RETURNING id");
        const QString deadLetter
            = one("INSERT INTO redrive.dead_letter (job_id, queue, kind, reason, error_class,"
                  " error_code, last_error, attempts, dead_at) VALUES ("
                  + deadJob.toLatin1()
                  + ", 'payments', 'charge_card', 'exhausted', 'transient', 'x', 'x', 1,"
                    " clock_timestamp()) RETURNING id");
        const QString liveJob = one("INSERT INTO redrive.job (queue, kind, state)"
                                    " VALUES ('payments', 'charge_card', 'queued') RETURNING id");
        one("INSERT INTO redrive.idempotency_key (scope, key, request_hash, state, job_id)"
            " VALUES ('charge_card', 'jobcase-dead', repeat('a', 64), 'failed', "
            + deadJob.toLatin1()
            + "), ('charge_card', 'jobcase-live', repeat('a', 64), 'received', "
            + liveJob.toLatin1()
            + "), ('charge_card', 'jobcase-none', repeat('a', 64), 'received', NULL)"
              " RETURNING key");

        MainWindow window;
        window.resize(1400, 860);
        window.show();
        window.connectTo(m_db->consoleSettings());
        QTRY_VERIFY_WITH_TIMEOUT(window.schemaReady(), 15000);
        auto *widget = window.findChild<IdempotencyKeysWidget *>();
        QVERIFY(widget);
        window.tabs()->setCurrentWidget(widget);
        auto *all = widget->findChild<ResultTableView *>(QStringLiteral("allKeys"));
        QVERIFY(all);
        auto pick = [&](const QString &key) {
            widget->setKeySearch(key);
            if (!QTest::qWaitFor(
                    [&] { return !widget->isLoading() && widget->keyModel()->rowCount() == 1; },
                    10000))
                return false;
            all->setFocus();
            all->setCurrentIndex(widget->keyModel()->index(0, 0));
            return true;
        };

        QVERIFY(pick(QStringLiteral("jobcase-none")));
        QVERIFY(!widget->openJobCaseAction()->isEnabled());

        QVERIFY(pick(QStringLiteral("jobcase-live")));
        QVERIFY(widget->openJobCaseAction()->isEnabled());
        widget->openJobCaseAction()->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(window.statusBar()->currentMessage(),
                                  QStringLiteral("Job %1 has no dead letter: it has not failed "
                                                 "for good")
                                      .arg(liveJob),
                                  10000);
        QVERIFY(window.findChildren<CaseView *>().isEmpty());

        QVERIFY(pick(QStringLiteral("jobcase-dead")));
        widget->openJobCaseAction()->trigger();
        QTRY_COMPARE_WITH_TIMEOUT(window.findChildren<CaseView *>().size(), qsizetype(1), 10000);
        QCOMPARE(window.findChildren<CaseView *>().first()->deadLetterCase()->id(),
                 deadLetter.toLongLong());

        QVERIFY(
            m_admin.exec("DELETE FROM redrive.idempotency_key WHERE key LIKE 'jobcase-%'").ok());
    }

    void filterCountsEqualSql_data()
    {
        QTest::addColumn<QStringList>("scopes");
        QTest::addColumn<QStringList>("states");
        QTest::addColumn<QByteArray>("where");
        QTest::newRow("processing") << QStringList() << QStringList { QStringLiteral("processing") }
                                    << QByteArray("state = 'processing'");
        QTest::newRow("done or failed")
            << QStringList() << QStringList { QStringLiteral("done"), QStringLiteral("failed") }
            << QByteArray("state IN ('done', 'failed')");
        QTest::newRow("received") << QStringList() << QStringList { QStringLiteral("received") }
                                  << QByteArray("state = 'received'");
        QTest::newRow("scope and state") << QStringList { QStringLiteral("charge_card") }
                                         << QStringList { QStringLiteral("done") }
                                         << QByteArray("scope = 'charge_card' AND state = 'done'");
        QTest::newRow("unknown scope")
            << QStringList { QStringLiteral("nope") } << QStringList() << QByteArray("false");
    }
    void filterCountsEqualSql()
    {
        QFETCH(QStringList, scopes);
        QFETCH(QStringList, states);
        QFETCH(QByteArray, where);
        IdempotencyKeyModel model(m_session.get(), nullptr, 50);
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setFilter({ scopes, states, {} });
        QVERIFY(loadAll(model));
        auto count = m_admin.exec("SELECT count(*) FROM redrive.idempotency_key WHERE " + where);
        QVERIFY(count.ok());
        QCOMPARE(qint64(model.rowCount()), count->bigInt(0, 0).value_or(-1));
        QCOMPARE(modelKeys(model, [&](int r, const QString &c) { return model.text(r, c); }),
                 sqlKeys("SELECT scope, key FROM redrive.idempotency_key WHERE " + where
                         + " ORDER BY updated_at DESC, scope DESC, key DESC"));
    }

    void stateFilterInTheWidget()
    {
        IdempotencyKeysWidget widget(m_session.get());
        widget.refresh();
        QTRY_VERIFY_WITH_TIMEOUT(!widget.isLoading(), 10000);
        widget.setStateFilter({ QStringLiteral("failed") });
        QCOMPARE(widget.keyModel()->filter().states, QStringList { QStringLiteral("failed") });
        QTRY_VERIFY_WITH_TIMEOUT(!widget.isLoading(), 10000);
        QCOMPARE(widget.keyModel()->rowCount(), 45);
        for (int row = 0; row < widget.keyModel()->rowCount(); ++row)
            QCOMPARE(widget.keyModel()->text(row, QStringLiteral("state")),
                     QStringLiteral("failed"));

        // The operator's way, the State menu: unticking "failed" lifts the filter, ticking
        // "done" narrows it again, and the button names what is ticked.
        auto *button = widget.findChild<QToolButton *>(QStringLiteral("stateFilter"));
        QVERIFY(button);
        QCOMPARE(button->text(), QStringLiteral("failed"));
        QAction *failed
            = test::menuAction(widget, QStringLiteral("stateFilter"), QStringLiteral("failed"));
        QAction *done
            = test::menuAction(widget, QStringLiteral("stateFilter"), QStringLiteral("done"));
        QVERIFY(failed && done);
        failed->trigger();
        QVERIFY(widget.keyModel()->filter().states.isEmpty());
        QCOMPARE(button->text(), QStringLiteral("any"));
        done->trigger();
        QCOMPARE(widget.keyModel()->filter().states, QStringList { QStringLiteral("done") });
        QCOMPARE(button->text(), QStringLiteral("done"));
        QTRY_VERIFY_WITH_TIMEOUT(!widget.isLoading(), 10000);
        QVERIFY(widget.keyModel()->rowCount() > 0);
        for (int row = 0; row < widget.keyModel()->rowCount(); ++row)
            QCOMPARE(widget.keyModel()->text(row, QStringLiteral("state")), QStringLiteral("done"));
    }

    void ctrlCCopiesRowsAsJson()
    {
        IdempotencyKeysWidget widget(m_session.get());
        widget.refresh();
        QTRY_VERIFY_WITH_TIMEOUT(!widget.isLoading(), 10000);
        auto *view = widget.findChild<ResultTableView *>(QStringLiteral("stuckKeys"));
        QVERIFY(view);
        view->selectRow(0);
        QTest::keySequence(view, QKeySequence::Copy);
        const QJsonArray rows
            = QJsonDocument::fromJson(QApplication::clipboard()->text().toUtf8()).array();
        QCOMPARE(rows.size(), 1);
        const QJsonObject row = rows.first().toObject();
        QCOMPARE(row.value(QStringLiteral("key")).toString(),
                 widget.stuckKeyModel()->text(0, QStringLiteral("key")));
        QVERIFY(row.value(QStringLiteral("stuck_seconds")).isDouble());
        QCOMPARE(row.value(QStringLiteral("state")).toString(), QStringLiteral("processing"));
    }

    // A key of any length is stored whole (docs/domain.md, "Idempotency key record"); the
    // "All keys" table shows its first 1,000 characters and " …", and Ctrl+C copies it whole.
    void longKeyIsShownBoundedAndCopiedWhole()
    {
        const QString longKey = QString(99999, QLatin1Char('k')) + QLatin1Char('Z');
        QVERIFY(m_admin
                    .exec("INSERT INTO redrive.idempotency_key (scope, key, request_hash, state,"
                          "                                     result, updated_at)"
                          " VALUES ('charge_card', $1, repeat('d', 64), 'done', '{}',"
                          "         timestamptz '2999-01-01 00:00:00+00')",
                          QueryParams().addText(longKey))
                    .ok());
        const auto removed = qScopeGuard([&] {
            m_admin.exec("DELETE FROM redrive.idempotency_key WHERE key = $1",
                         QueryParams().addText(longKey));
        });
        IdempotencyKeysWidget widget(m_session.get());
        widget.refresh();
        QTRY_VERIFY_WITH_TIMEOUT(!widget.isLoading(), 10000);
        IdempotencyKeyModel *model = widget.keyModel();
        QCOMPARE(model->text(0, QStringLiteral("key")).size(), 100000);
        QCOMPARE(model->index(0, IdempotencyKeyModel::Key).data().toString(),
                 QString(1000, QLatin1Char('k')) + QStringLiteral(" \u2026"));
        auto *view = widget.findChild<ResultTableView *>(QStringLiteral("allKeys"));
        QVERIFY(view);
        view->selectRow(0);
        QTest::keySequence(view, QKeySequence::Copy);
        const QJsonArray rows
            = QJsonDocument::fromJson(QApplication::clipboard()->text().toUtf8()).array();
        QCOMPARE(rows.size(), 1);
        QCOMPARE(rows.first().toObject().value(QStringLiteral("key")).toString(), longKey);
    }

    // A stored result of 5 MB and an error of 100,000 lines: the Result or error cell and its
    // tooltip are bounded (the whole result once went into both and froze the tab for seconds on
    // every visit).
    void bigResultAndErrorAreBounded()
    {
        QVERIFY(m_admin
                    .exec("INSERT INTO redrive.idempotency_key (scope, key, request_hash, state,"
                          "                                     result, error_message, updated_at)"
                          " VALUES ('charge_card', 'big-result', repeat('e', 64), 'done',"
                          "         jsonb_build_object('big', repeat('Z', 5000000)), NULL,"
                          "         timestamptz '2999-01-02 00:00:00+00'),"
                          "        ('charge_card', 'tall-error', repeat('f', 64), 'failed', NULL,"
                          "         (SELECT string_agg('<b>e</b> line ' || g, E'\\n')"
                          "            FROM generate_series(1, 100000) g),"
                          "         timestamptz '2999-01-01 12:00:00+00')")
                    .ok());
        const auto removed = qScopeGuard([&] {
            m_admin.exec("DELETE FROM redrive.idempotency_key"
                         " WHERE key IN ('big-result', 'tall-error')");
        });
        IdempotencyKeysWidget widget(m_session.get());
        widget.refresh();
        QTRY_VERIFY_WITH_TIMEOUT(!widget.isLoading(), 10000);
        IdempotencyKeyModel *model = widget.keyModel();
        QCOMPARE(model->text(0, QStringLiteral("key")), QStringLiteral("big-result"));
        const QString result = model->index(0, IdempotencyKeyModel::Outcome).data().toString();
        QVERIFY2(result.startsWith(QStringLiteral("{\"big\": \"ZZZ")), qPrintable(result.left(40)));
        QVERIFY2(result.size() <= 1002, qPrintable(QString::number(result.size())));
        const QString resultTip
            = model->index(0, IdempotencyKeyModel::Outcome).data(Qt::ToolTipRole).toString();
        QVERIFY2(resultTip.size() < 2200, qPrintable(QString::number(resultTip.size())));
        QCOMPARE(model->text(1, QStringLiteral("key")), QStringLiteral("tall-error"));
        QCOMPARE(model->index(1, IdempotencyKeyModel::Outcome).data().toString(),
                 QStringLiteral("<b>e</b> line 1"));
        const QString errorTip
            = model->index(1, IdempotencyKeyModel::Outcome).data(Qt::ToolTipRole).toString();
        QVERIFY2(errorTip.startsWith(QStringLiteral(
                     "<qt><p style=\"white-space:pre-wrap\">&lt;b&gt;e&lt;/b&gt; line 1<br>")),
                 qPrintable(errorTip.left(120)));
        QStringList lines;
        for (int g = 1; g <= 100000; ++g)
            lines << QStringLiteral("<b>e</b> line %1").arg(g);
        QCOMPARE(errorTip, display::plainToolTip(lines.join(QLatin1Char('\n'))));
        QVERIFY2(errorTip.size() < 4000, qPrintable(QString::number(errorTip.size())));
    }

    void setShowUtcChangesTimes()
    {
        IdempotencyKeysWidget widget(m_session.get());
        widget.refresh();
        QTRY_VERIFY_WITH_TIMEOUT(!widget.isLoading(), 10000);
        widget.setShowUtc(true);
        const QString utc
            = widget.keyModel()->index(0, IdempotencyKeyModel::UpdatedAt).data().toString();
        QVERIFY2(utc.endsWith(QStringLiteral(" UTC")), qPrintable(utc));
        widget.setShowUtc(false);
        const QString local
            = widget.keyModel()->index(0, IdempotencyKeyModel::UpdatedAt).data().toString();
        QVERIFY2(local.contains(QLatin1Char('+')) || local.contains(QLatin1Char('-')),
                 qPrintable(local));
        QVERIFY(!local.endsWith(QStringLiteral(" UTC")));
    }

    // Two stuck keys that differ only by a leading byte order mark: the list shows the mark,
    // and the key it hands to "Release stuck key" is the selected one, byte for byte (read
    // through QString::fromUtf8 the mark was dropped, and the action released the other key).
    void byteOrderMarkKeyStaysItself()
    {
        const QString bomKey = QString(QChar(0xFEFF)) + QStringLiteral("bom-k1");
        auto inserted = m_admin.exec(
            "INSERT INTO redrive.idempotency_key (scope, key, request_hash, state, locked_by,"
            " locked_until) VALUES ('bom', $1, repeat('a', 64), 'processing', 'worker-bom',"
            " clock_timestamp() - interval '1 hour'), ('bom', 'bom-k1', repeat('b', 64),"
            " 'processing', 'worker-plain', clock_timestamp() - interval '1 hour')",
            QueryParams().addText(bomKey));
        QVERIFY2(inserted.ok(), inserted.ok() ? "" : qPrintable(inserted.error().summary()));
        IdempotencyKeysWidget widget(m_session.get());
        widget.refresh();
        QTRY_VERIFY_WITH_TIMEOUT(!widget.isLoading(), 10000);
        const StuckKeyModel *stuck = widget.stuckKeyModel();
        int bomRow = -1;
        int plainRow = -1;
        for (int r = 0; r < stuck->rowCount(); ++r) {
            if (stuck->text(r, QStringLiteral("scope")) != QLatin1String("bom"))
                continue;
            (stuck->text(r, QStringLiteral("locked_by")) == QLatin1String("worker-bom") ? bomRow
                                                                                        : plainRow)
                = r;
        }
        QVERIFY(bomRow >= 0 && plainRow >= 0);
        QCOMPARE(stuck->text(bomRow, QStringLiteral("key")), bomKey);
        QCOMPARE(stuck->text(plainRow, QStringLiteral("key")), QStringLiteral("bom-k1"));
        QCOMPARE(stuck->index(bomRow, StuckKeyModel::Key).data().toString(),
                 QStringLiteral("⟨U+FEFF⟩bom-k1"));
        // The key as read names exactly the selected row.
        auto owner
            = m_admin.exec("SELECT locked_by FROM redrive.idempotency_key"
                           " WHERE scope = 'bom' AND key = $1",
                           QueryParams().addText(stuck->text(bomRow, QStringLiteral("key"))));
        QVERIFY(owner.ok());
        QCOMPARE(owner->rowCount(), 1);
        QCOMPARE(owner->text(0, 0), QStringLiteral("worker-bom"));
    }

    // Stuck keys that differ only in what a reader cannot see (a trailing no-break or
    // ideographic space, a trailing space, an invisible separator, a tag character, a decomposed
    // accent): each cell shows its difference, so no two rows read alike.
    void lookAlikeKeysLookDifferent()
    {
        const QStringList keys {
            QStringLiteral("charge:7"),       QStringLiteral("charge:7 "),
            QStringLiteral("charge:7\u00A0"), QStringLiteral("charge:7\u3000"),
            QStringLiteral("charge:7\u2063"), QStringLiteral("charge:7\U000E0020"),
            QStringLiteral("caf\u00E9:7"),    QStringLiteral("cafe\u0301:7")
        };
        const QStringList shown {
            QStringLiteral("charge:7"),         QStringLiteral("charge:7⟨U+0020⟩"),
            QStringLiteral("charge:7⟨U+00A0⟩"), QStringLiteral("charge:7⟨U+3000⟩"),
            QStringLiteral("charge:7⟨U+2063⟩"), QStringLiteral("charge:7⟨U+E0020⟩"),
            QStringLiteral("caf\u00E9:7"),      QStringLiteral("cafe⟨U+0301⟩:7")
        };
        for (int i = 0; i < keys.size(); ++i) {
            auto inserted = m_admin.exec(
                "INSERT INTO redrive.idempotency_key (scope, key, request_hash, state, locked_by,"
                " locked_until) VALUES ('twins', $1, repeat('a', 64), 'processing', $2,"
                " clock_timestamp() - interval '1 hour')",
                QueryParams().addText(keys.at(i)).addText(QStringLiteral("worker-%1").arg(i)));
            QVERIFY2(inserted.ok(), inserted.ok() ? "" : qPrintable(inserted.error().summary()));
        }
        IdempotencyKeysWidget widget(m_session.get());
        widget.refresh();
        QTRY_VERIFY_WITH_TIMEOUT(!widget.isLoading(), 10000);
        const StuckKeyModel *stuck = widget.stuckKeyModel();
        int found = 0;
        for (int r = 0; r < stuck->rowCount(); ++r) {
            if (stuck->text(r, QStringLiteral("scope")) != QLatin1String("twins"))
                continue;
            const int i = stuck->text(r, QStringLiteral("locked_by")).section(u'-', 1).toInt();
            QCOMPARE(stuck->text(r, QStringLiteral("key")), keys.at(i));
            QCOMPARE(stuck->index(r, StuckKeyModel::Key).data().toString(), shown.at(i));
            ++found;
        }
        QCOMPARE(found, int(keys.size()));
    }

    void rendersToPng()
    {
        IdempotencyKeysWidget widget(m_session.get());
        widget.resize(1280, 800);
        widget.show();
        QVERIFY(QTest::qWaitForWindowExposed(&widget));
        widget.refresh();
        QTRY_VERIFY_WITH_TIMEOUT(!widget.isLoading(), 10000);
        QVERIFY(widget.stuckKeyModel()->rowCount() > 0);
        const QString dir = QStringLiteral(REDRIVE_TEST_OUTPUT_DIR);
        QVERIFY(QDir().mkpath(dir));
        const QString path = dir + QStringLiteral("/idempotency_keys.png");
        QVERIFY(widget.grab().save(path));
        qInfo("rendered %s", qPrintable(path));
    }
};

QTEST_MAIN(TestIdempotencyKeysWidget)
#include "tst_idempotency_keys_widget.moc"
