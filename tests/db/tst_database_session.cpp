// SPDX-License-Identifier: GPL-3.0-or-later
// The threaded session: results by queued signals, cancel, lost connection and reconnect, and a
// GUI event loop that keeps turning while a slow statement runs
// (docs/architecture.md#threading).
#include "models/db/database_session.h"
#include "models/db/database_worker.h"
#include "tests/support/test_database.h"

#include <QElapsedTimer>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTest>
#include <QThread>
#include <QTimer>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <memory>
#include <thread>

using namespace redrive;
using namespace redrive::db;

class TestDatabaseSession : public QObject
{
    Q_OBJECT
private:
    std::unique_ptr<test::TestDatabase> m_db;

    // Runs one statement through the session and waits for its callback.
    static std::optional<DbExpected<ResultSet>> run(DatabaseSession &session, const QByteArray &sql,
                                                    const QueryParams &params = {},
                                                    int timeoutMs = 10000)
    {
        std::optional<DbExpected<ResultSet>> outcome;
        QObject context;
        session.execute(sql, params, &context,
                        [&](const DbExpected<ResultSet> &r) { outcome.emplace(r); });
        [[maybe_unused]] const bool arrived
            = QTest::qWaitFor([&] { return outcome.has_value(); }, timeoutMs);
        return outcome;
    }

    static bool waitConnected(DatabaseSession &session)
    {
        if (session.isConnected())
            return true;
        QSignalSpy spy(&session, &DatabaseSession::connected);
        return spy.wait(10000) || session.isConnected();
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_db = std::make_unique<test::TestDatabase>(QStringLiteral("session"));
        QVERIFY2(m_db->isValid(), qPrintable(m_db->error()));
    }
    void cleanupTestCase() { m_db.reset(); }

    void resultsArriveOnTheCallersThread()
    {
        DatabaseSession session(m_db->settings());
        QSignalSpy connected(&session, &DatabaseSession::connected);
        session.open();
        QVERIFY(connected.wait(10000));
        const auto info = connected.first().first().value<ServerInfo>();
        QVERIFY(info.serverVersion.startsWith(QStringLiteral("15.")));
        QCOMPARE(info.database, m_db->name());
        QVERIFY(info.backendPid > 0);

        QThread *callbackThread = nullptr;
        std::optional<qint64> value;
        QObject context;
        session.execute("SELECT $1::bigint * 2", QueryParams().addBigInt(21), &context,
                        [&](const DbExpected<ResultSet> &r) {
                            callbackThread = QThread::currentThread();
                            if (r)
                                value = r->bigInt(0, 0);
                        });
        QTRY_VERIFY(value.has_value());
        QCOMPARE(*value, 42);
        QCOMPARE(callbackThread, QThread::currentThread());
        QVERIFY(session.lastRoundTripMs() >= 0);
        QCOMPARE(session.pendingCount(), 0);
    }

    // Every Redrive connection turns JIT compilation off whatever the server says (the test
    // cluster runs with PostgreSQL's default, on): it cost seconds per console statement at
    // 1,000,000 dead letters (docs/benchmarks.md#console-paths-at-scale).
    void jitIsOffOnEveryConnection()
    {
        PgConnection admin = m_db->connect();
        auto serverDefault = admin.exec("SELECT reset_val FROM pg_catalog.pg_settings"
                                        " WHERE name = 'jit'");
        QVERIFY(serverDefault);
        QCOMPARE(serverDefault->text(0, 0), QStringLiteral("on"));
        auto plain = PgConnection::open(m_db->settings());
        QVERIFY2(plain, plain ? "" : qPrintable(plain.error().summary()));
        auto shown = plain->exec("SHOW jit");
        QVERIFY(shown);
        QCOMPARE(shown->text(0, 0), QStringLiteral("off"));
        DatabaseSession session(m_db->settings());
        QSignalSpy connected(&session, &DatabaseSession::connected);
        session.open();
        QVERIFY(connected.wait(10000));
        QString value;
        session.execute("SHOW jit", {}, &session, [&value](const DbExpected<ResultSet> &r) {
            value = r ? r->text(0, 0) : r.error().summary();
        });
        QVERIFY(QTest::qWaitFor([&] { return !value.isEmpty(); }, 10000));
        QCOMPARE(value, QStringLiteral("off"));
    }

    void callbackSkippedWhenContextIsGone()
    {
        DatabaseSession session(m_db->settings());
        session.open();
        QVERIFY(waitConnected(session));
        bool called = false;
        auto *context = new QObject;
        session.execute("SELECT pg_sleep(0.2)", {}, context, [&](const auto &) { called = true; });
        delete context;
        QSignalSpy idle(&session, &DatabaseSession::activityChanged);
        QVERIFY(idle.wait(5000));
        QVERIFY(!called);
    }

    void cancelARunningStatement()
    {
        DatabaseSession session(m_db->settings());
        session.open();
        QVERIFY(waitConnected(session));
        std::optional<DbExpected<ResultSet>> outcome;
        QObject context;
        QElapsedTimer clock;
        clock.start();
        session.execute("SELECT pg_sleep(30)", {}, &context,
                        [&](const DbExpected<ResultSet> &r) { outcome.emplace(r); });
        QTest::qWait(300); // let it reach the server
        session.cancelRunning();
        QTRY_VERIFY_WITH_TIMEOUT(outcome.has_value(), 10000);
        QVERIFY(clock.elapsed() < 10000);
        QVERIFY(!outcome->ok());
        QCOMPARE(outcome->error().kind(), ErrorKind::Canceled);
        QCOMPARE(outcome->error().sqlState(), QStringLiteral("57014"));
        // The connection survives a cancel.
        auto after = run(session, "SELECT 1");
        QVERIFY(after && after->ok());
    }

    // A cancel may reach the server while the settings pinned in front of a statement run
    // (PgConnection::exec()). Whatever moment it lands on: the connection stays open, the
    // request ends in its result or as canceled (57014), a statement never runs under the
    // search_path the previous one planted, and a ROLLBACK still ends its transaction. A cancel
    // on the pinning used to close the connection (the console's tabs then failed with "not
    // connected; reconnecting" while the operator typed a search).
    void cancelAtAnyMomentKeepsTheConnectionPinnedAndOpen()
    {
        ConnectionSettings settings = m_db->consoleSettings();
        settings.pinEveryStatement = true;
        auto opened = PgConnection::open(settings);
        QVERIFY2(opened.ok(), opened ? "" : qPrintable(opened.error().summary()));
        PgConnection connection = std::move(opened.value());
        const QString pinned = PgConnection::pinnedSearchPath(settings.searchPath);
        const CancelHandle cancel = connection.cancelHandle();
        std::atomic<bool> stop = false;
        std::atomic<int> sent = 0;
        std::thread canceller([&] {
            quint32 state = 12345;
            while (!stop.load()) {
                state = state * 1103515245u + 12345u; // spread the moments over 0 to 1.5 ms
                std::this_thread::sleep_for(std::chrono::microseconds((state >> 8) % 1500));
                if (cancel.cancel())
                    ++sent;
            }
        });
        const auto stopCancelling = [&] {
            stop = true;
            if (canceller.joinable())
                canceller.join();
        };
        const auto joined = qScopeGuard(stopCancelling);
        const QByteArray plant = "SELECT pg_catalog.set_config('search_path', 'loot', false)";
        const QByteArray read = "SELECT pg_catalog.current_setting('search_path')";
        int canceled = 0;
        auto runs = [&](const QByteArray &sql) -> std::optional<ResultSet> {
            auto r = connection.exec(sql);
            if (!connection.isOpen())
                qFatal("the connection was closed after %s: %s", sql.constData(),
                       r ? "" : qPrintable(r.error().summary()));
            if (r)
                return r.value();
            if (r.error().sqlState() != QLatin1String("57014")
                && r.error().sqlState() != QLatin1String("25P02"))
                qFatal("%s: %s", sql.constData(), qPrintable(r.error().summary()));
            ++canceled;
            return std::nullopt;
        };
        // At least 1,500 rounds, and on until more than 50 cancels have landed: under load (the
        // suite in parallel) fewer cancels go out and fewer find a statement running.
        for (int i = 0; i < 1500 || (canceled <= 50 && i < 20000); ++i) {
            runs(plant);
            if (const auto path = runs(read))
                QCOMPARE(path->text(0, 0), pinned);
            if (!runs(i % 2 ? "BEGIN ISOLATION LEVEL REPEATABLE READ" : "BEGIN")) {
                QVERIFY(!connection.inTransactionBlock()); // a BEGIN pinned in vain is undone
                continue;
            }
            QVERIFY(connection.inTransactionBlock());
            runs(plant);
            if (const auto path = runs(read))
                QCOMPARE(path->text(0, 0), pinned);
            runs(i % 3 ? "ROLLBACK" : "COMMIT");
            for (int tries = 0; tries < 5 && connection.inTransactionBlock(); ++tries)
                runs("ROLLBACK"); // a failed block: only ROLLBACK runs, unpinned
            QVERIFY(!connection.inTransactionBlock());
        }
        // The canceller stops before the last checks (it ran on through them, and once canceled
        // the final read); the backend may still act on the last cancel it was sent, so that read
        // may be canceled once more, never anything else.
        stopCancelling();
        qInfo() << sent.load() << "cancels sent," << canceled << "statements canceled";
        QVERIFY(canceled > 50); // the cancels did land
        QVERIFY(connection.isHealthy());
        auto after = connection.exec(read);
        for (int tries = 0;
             tries < 3 && !after && after.error().sqlState() == QLatin1String("57014"); ++tries)
            after = connection.exec(read);
        QVERIFY2(after.ok(), after ? "" : qPrintable(after.error().summary()));
        QCOMPARE(after->text(0, 0), pinned);
    }

    // Interactive first: a background load waiting on a lock another session holds does not
    // delay what the operator asked for; the background one still finishes once the lock goes.
    void interactiveRequestDoesNotWaitBehindABackgroundLoad()
    {
        auto holder = PgConnection::open(m_db->settings());
        QVERIFY(holder);
        QVERIFY(holder->exec("CREATE TABLE IF NOT EXISTS priority_probe (id int)").ok());
        QVERIFY(holder->exec("BEGIN").ok());
        QVERIFY(holder->exec("LOCK TABLE priority_probe IN ACCESS EXCLUSIVE MODE").ok());
        auto unlock = qScopeGuard([&] { holder->exec("ROLLBACK"); });

        DatabaseSession session(m_db->settings());
        session.open();
        QVERIFY(waitConnected(session));
        std::optional<DbExpected<ResultSet>> slow;
        std::optional<DbExpected<ResultSet>> quick;
        QObject context;
        {
            // Loads started inside a BackgroundScope (the other tabs') are background work.
            const DatabaseSession::BackgroundScope background(&session);
            session.execute("SELECT count(*) FROM priority_probe", {}, &context,
                            [&](const DbExpected<ResultSet> &r) { slow.emplace(r); });
        }
        QTRY_VERIFY_WITH_TIMEOUT(session.hasBackgroundConnection(), 5000);
        QTest::qWait(300); // let it reach the server and wait for the lock
        QElapsedTimer clock;
        clock.start();
        session.execute("SELECT 7", {}, &context,
                        [&](const DbExpected<ResultSet> &r) { quick.emplace(r); });
        QTRY_VERIFY_WITH_TIMEOUT(quick.has_value(), 5000);
        QVERIFY2(clock.elapsed() < 1000, qPrintable(QString::number(clock.elapsed())));
        QVERIFY(quick->ok());
        QCOMPARE(quick->value().bigInt(0, 0), std::optional<qint64>(7));
        QVERIFY(!slow.has_value()); // still waiting on the lock
        holder->exec("ROLLBACK");
        unlock.dismiss();
        QTRY_VERIFY_WITH_TIMEOUT(slow.has_value(), 10000);
        QVERIFY(slow->ok());
    }

    // A load a newer request made obsolete is withdrawn: queued, it never reaches the server;
    // running, it finishes unseen; neither calls back, and the newer request runs.
    void obsoleteRequestsAreWithdrawn()
    {
        DatabaseSession session(m_db->settings());
        session.open();
        QVERIFY(waitConnected(session));
        bool called = false;
        QObject context;
        const quint64 running = session.execute("SELECT pg_sleep(0.5)", {}, &context,
                                                [&](const auto &) { called = true; });
        const quint64 queued = session.execute(
            "SELECT pg_sleep(30)", {}, &context, [&](const auto &) { called = true; },
            DatabaseSession::Priority::Interactive);
        QTest::qWait(100); // the first one reaches the server
        QElapsedTimer clock;
        clock.start();
        session.cancelRequest(queued);
        session.cancelRequest(running);
        QCOMPARE(session.pendingCount(), 0);
        auto after = run(session, "SELECT 1");
        QVERIFY(after && after->ok());
        // The queued sleep never ran: the newer request waited only for the running one.
        QVERIFY2(clock.elapsed() < 5000, qPrintable(QString::number(clock.elapsed())));
        QTest::qWait(200);
        QVERIFY(!called);
    }

    // A connection of a context's own (a frozen pass's transaction) serves only that context:
    // a transaction begun there is not seen by the interactive connection; abortRequest() stops
    // the statement running there on the server at once (its callback never called), and the
    // next request on it runs normally, uncancelled.
    void abortRequestCancelsOnTheOwnConnection()
    {
        DatabaseSession session(m_db->settings());
        session.open();
        QVERIFY(waitConnected(session));
        QObject owner;
        auto onOwn = [&](const QByteArray &sql) {
            std::optional<DbExpected<ResultSet>> result;
            session.execute(
                sql, {}, &owner, [&](const DbExpected<ResultSet> &r) { result = r; },
                DatabaseSession::Priority::OwnConnection);
            [[maybe_unused]] const bool arrived
                = QTest::qWaitFor([&] { return result.has_value(); }, 10000);
            return result.value_or(DbError(ErrorKind::Connection, QStringLiteral("no answer")));
        };
        QVERIFY(onOwn("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY").ok());
        QCOMPARE(session.ownConnectionCount(), 1);
        // The transaction begun there is the own connection's alone.
        const auto inside = onOwn("SELECT current_setting('transaction_isolation')");
        QVERIFY(inside.ok());
        QCOMPARE(inside->text(0, 0), QStringLiteral("repeatable read"));
        auto interactive = run(session, "SELECT current_setting('transaction_isolation')");
        QVERIFY(interactive && interactive->ok());
        QCOMPARE(interactive->value().text(0, 0), QStringLiteral("read committed"));
        QVERIFY(onOwn("ROLLBACK").ok());

        PgConnection probe = m_db->connect();
        bool called = false;
        const quint64 sleeping = session.execute(
            "SELECT pg_sleep(30)", {}, &owner, [&](const auto &) { called = true; },
            DatabaseSession::Priority::OwnConnection);
        const QByteArray sleepers = "SELECT count(*) FROM pg_stat_activity"
                                    " WHERE application_name = 'redrive (own)' AND state = 'active'"
                                    "   AND query = 'SELECT pg_sleep(30)'";
        QTRY_COMPARE_WITH_TIMEOUT(probe.exec(sleepers)->bigInt(0, 0).value_or(-1), qint64(1),
                                  10000);
        QElapsedTimer clock;
        clock.start();
        session.abortRequest(sleeping);
        QCOMPARE(session.pendingCount(), 0);
        const auto next = onOwn("SELECT 42");
        QVERIFY2(next.ok(), next.ok() ? "" : qPrintable(next.error().summary()));
        QCOMPARE(next->text(0, 0), QStringLiteral("42"));
        QVERIFY2(clock.elapsed() < 5000, qPrintable(QString::number(clock.elapsed())));
        QCOMPARE(probe.exec(sleepers)->bigInt(0, 0).value_or(-1), qint64(0));
        QVERIFY(!called);
        QCOMPARE(session.ownConnectionCount(), 1);
    }

    // A context destroyed while its own connection works (a list closed during its frozen pass):
    // the statement running there is cancelled on the server, the requests queued behind it
    // never run, none of their callbacks is called, and the connection is closed with its open
    // transaction, within seconds rather than when the statement would have ended.
    void destroyedContextLeavesNothingRunningOnItsConnection()
    {
        DatabaseSession session(m_db->settings());
        session.open();
        QVERIFY(waitConnected(session));
        auto owner = std::make_unique<QObject>();
        int called = 0;
        const auto count = [&](const auto &) {
            ++called;
        };
        session.execute("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY", {}, owner.get(), count,
                        DatabaseSession::Priority::OwnConnection);
        session.execute("SELECT pg_sleep(30)", {}, owner.get(), count,
                        DatabaseSession::Priority::OwnConnection);
        // Were these to run after the sleep's cancel, the connection would sleep on for 30 s.
        session.execute("ROLLBACK", {}, owner.get(), count,
                        DatabaseSession::Priority::OwnConnection);
        session.execute("SELECT pg_sleep(30) /* queued */", {}, owner.get(), count,
                        DatabaseSession::Priority::OwnConnection);
        QCOMPARE(session.ownConnectionCount(), 1);
        PgConnection probe = m_db->connect();
        const QByteArray sleepers = "SELECT count(*) FROM pg_stat_activity"
                                    " WHERE application_name = 'redrive (own)'"
                                    "   AND datname = current_database()"
                                    "   AND query = 'SELECT pg_sleep(30)' AND state = 'active'";
        QTRY_COMPARE_WITH_TIMEOUT(probe.exec(sleepers)->bigInt(0, 0).value_or(-1), qint64(1),
                                  10000);
        QTRY_COMPARE_WITH_TIMEOUT(called, 1, 10000); // the BEGIN's answer

        QSignalSpy activity(&session, &DatabaseSession::activityChanged);
        QElapsedTimer clock;
        clock.start();
        owner.reset();
        QCOMPARE(session.ownConnectionCount(), 0);
        QCOMPARE(session.pendingCount(), 0);
        QCOMPARE(activity.size(), 1);
        QCOMPARE(activity.at(0).at(0).toBool(), false);
        const QByteArray own = "SELECT count(*) FROM pg_stat_activity"
                               " WHERE application_name = 'redrive (own)'"
                               "   AND datname = current_database()";
        QTRY_COMPARE_WITH_TIMEOUT(probe.exec(own)->bigInt(0, 0).value_or(-1), qint64(0), 10000);
        QVERIFY2(clock.elapsed() < 5000, qPrintable(QString::number(clock.elapsed())));
        QTRY_COMPARE_WITH_TIMEOUT(session.ownThreadCount(), 0, 5000); // its thread stopped too
        // The withdrawn requests' answers (cancelled) reach nobody and say nothing more: no
        // callback of the gone context (deliver() skips those, as it did before contexts had
        // connections of their own), and no second activityChanged (this is what the change
        // made true).
        QTest::qWait(500);
        QCOMPARE(called, 1);
        QCOMPARE(activity.size(), 1);
        // The interactive connection is untouched.
        auto after = run(session, "SELECT 1");
        QVERIFY(after && after->ok());

        // A context whose connection is idle goes the same way: connection and thread.
        auto idle = std::make_unique<QObject>();
        bool answered = false;
        session.execute(
            "SELECT 1", {}, idle.get(), [&](const auto &) { answered = true; },
            DatabaseSession::Priority::OwnConnection);
        QTRY_VERIFY_WITH_TIMEOUT(answered, 10000);
        QCOMPARE(probe.exec(own)->bigInt(0, 0).value_or(-1), qint64(1));
        QCOMPARE(session.ownThreadCount(), 1);
        idle.reset();
        QTRY_COMPARE_WITH_TIMEOUT(probe.exec(own)->bigInt(0, 0).value_or(-1), qint64(0), 5000);
        QTRY_COMPARE_WITH_TIMEOUT(session.ownThreadCount(), 0, 5000);
    }

    // Esc: with another session holding a lock, the statement waiting on it and every request
    // queued behind it end as canceled within 2 s, nothing of this session is left waiting on
    // the server, and the same holds the second time (after the operator retried).
    void cancelAllLeavesNothingWaitingOnTheServer()
    {
        auto holder = PgConnection::open(m_db->settings());
        QVERIFY(holder);
        QVERIFY(holder->exec("CREATE TABLE IF NOT EXISTS cancel_probe (id int)").ok());
        QVERIFY(holder->exec("BEGIN").ok());
        QVERIFY(holder->exec("LOCK TABLE cancel_probe IN ACCESS EXCLUSIVE MODE").ok());
        const auto unlock = qScopeGuard([&] { holder->exec("ROLLBACK"); });

        DatabaseSession session(m_db->settings());
        session.open();
        QVERIFY(waitConnected(session));
        const int backend = session.serverInfo().backendPid;
        // Its own connection: inside the holder's transaction pg_stat_activity is a snapshot.
        auto probe = PgConnection::open(m_db->settings());
        QVERIFY(probe);
        auto waitingOnServer = [&] {
            auto rows = probe->exec("SELECT count(*) FROM pg_stat_activity WHERE pid = $1 "
                                    "AND state = 'active'",
                                    QueryParams().addInt(backend));
            return rows ? rows->bigInt(0, 0).value_or(-1) : -1;
        };
        for (int round = 1; round <= 2; ++round) {
            QList<std::optional<DbExpected<ResultSet>>> outcomes(3);
            QObject context;
            for (int i = 0; i < 3; ++i)
                session.execute(
                    "SELECT count(*) FROM cancel_probe", {}, &context,
                    [&outcomes, i](const DbExpected<ResultSet> &r) { outcomes[i].emplace(r); });
            QTRY_COMPARE_WITH_TIMEOUT(waitingOnServer(), qint64(1), 5000);
            QElapsedTimer clock;
            clock.start();
            session.cancelAll();
            QTRY_VERIFY_WITH_TIMEOUT(std::all_of(outcomes.cbegin(), outcomes.cend(),
                                                 [](const auto &o) { return o.has_value(); }),
                                     DatabaseSession::kCancelTimeoutMs);
            QVERIFY2(clock.elapsed() <= DatabaseSession::kCancelTimeoutMs,
                     qPrintable(QString::number(clock.elapsed())));
            for (int i = 0; i < 3; ++i) {
                QVERIFY2(!outcomes[i]->ok(), qPrintable(QStringLiteral("request %1").arg(i)));
                QCOMPARE(outcomes[i]->error().kind(), ErrorKind::Canceled);
            }
            QCOMPARE(session.pendingCount(), 0);
            QCOMPARE(waitingOnServer(), qint64(0));
        }
        // Requests made after the cancel run normally.
        auto after = run(session, "SELECT 7");
        QVERIFY(after && after->ok());
        QCOMPARE(after->value().bigInt(0, 0).value_or(0), 7);
    }

    // Esc after a retry: the operator cancels a query stuck behind another session's lock,
    // retries it (stuck again) and cancels again; then the connection is lost and the worker
    // reconnects by itself (a new backend, a new cancel key), and the retried query is cancelled
    // just as fast. Each time within kCancelTimeoutMs, and nothing left waiting on the server.
    void cancelAllWorksAfterARetryAndAReconnect()
    {
        auto holder = PgConnection::open(m_db->settings());
        QVERIFY(holder);
        QVERIFY(holder->exec("CREATE TABLE IF NOT EXISTS cancel_retry_probe (id int)").ok());
        QVERIFY(holder->exec("BEGIN").ok());
        QVERIFY(holder->exec("LOCK TABLE cancel_retry_probe IN ACCESS EXCLUSIVE MODE").ok());
        const auto unlock = qScopeGuard([&] { holder->exec("ROLLBACK"); });
        auto probe = PgConnection::open(m_db->settings());
        QVERIFY(probe);

        DatabaseSession session(m_db->settings());
        QSignalSpy connected(&session, &DatabaseSession::connected);
        session.open();
        QVERIFY(waitConnected(session));
        auto waitingOnServer = [&](int backend) {
            auto rows = probe->exec("SELECT count(*) FROM pg_stat_activity WHERE pid = $1 "
                                    "AND state = 'active'",
                                    QueryParams().addInt(backend));
            return rows ? rows->bigInt(0, 0).value_or(-1) : -1;
        };
        auto stuckThenCancelled = [&]() {
            const int backend = session.serverInfo().backendPid;
            std::optional<DbExpected<ResultSet>> outcome;
            QObject context;
            session.execute("SELECT count(*) FROM cancel_retry_probe", {}, &context,
                            [&outcome](const DbExpected<ResultSet> &r) { outcome.emplace(r); });
            QTRY_COMPARE_WITH_TIMEOUT(waitingOnServer(backend), qint64(1), 5000);
            QElapsedTimer clock;
            clock.start();
            session.cancelAll();
            QTRY_VERIFY_WITH_TIMEOUT(outcome.has_value(), DatabaseSession::kCancelTimeoutMs);
            QVERIFY2(clock.elapsed() <= DatabaseSession::kCancelTimeoutMs,
                     qPrintable(QString::number(clock.elapsed())));
            QVERIFY(!outcome->ok());
            QCOMPARE(outcome->error().kind(), ErrorKind::Canceled);
            QCOMPARE(session.pendingCount(), 0);
            QCOMPARE(waitingOnServer(backend), qint64(0));
        };
        stuckThenCancelled(); // Esc
        if (QTest::currentTestFailed())
            return;
        stuckThenCancelled(); // retry, Esc
        if (QTest::currentTestFailed())
            return;
        stuckThenCancelled(); // and again at once
        if (QTest::currentTestFailed())
            return;

        // The connection is lost and comes back by itself: Esc still reaches the new backend.
        const int oldBackend = session.serverInfo().backendPid;
        PgConnection admin = m_db->connect();
        QVERIFY(
            admin.exec("SELECT pg_terminate_backend($1)", QueryParams().addInt(oldBackend)).ok());
        auto broken = run(session, "SELECT 1");
        QVERIFY(broken && !broken->ok());
        QTRY_VERIFY_WITH_TIMEOUT(connected.count() >= 2, 15000);
        QVERIFY(session.serverInfo().backendPid != oldBackend);
        for (int round = 0; round < 2 && !QTest::currentTestFailed(); ++round)
            stuckThenCancelled();
        if (QTest::currentTestFailed())
            return;
        auto after = run(session, "SELECT 7");
        QVERIFY(after && after->ok());
        QCOMPARE(after->value().bigInt(0, 0).value_or(0), 7);
    }

    void killedBackendThenReconnect()
    {
        DatabaseSession session(m_db->settings());
        QSignalSpy lost(&session, &DatabaseSession::connectionLost);
        QSignalSpy connected(&session, &DatabaseSession::connected);
        session.open();
        QVERIFY(connected.wait(10000));
        const int pid = session.serverInfo().backendPid;

        PgConnection admin = m_db->connect();
        auto killed = admin.exec("SELECT pg_terminate_backend($1)", QueryParams().addInt(pid));
        QVERIFY(killed.ok());
        QCOMPARE(killed->boolean(0, 0), std::optional<bool>(true));

        auto broken = run(session, "SELECT 1");
        QVERIFY(broken.has_value());
        QVERIFY(!broken->ok());
        QCOMPARE(broken->error().kind(), ErrorKind::Connection);
        QVERIFY(lost.count() >= 1 || lost.wait(5000));
        QVERIFY(!session.isConnected() || connected.count() >= 2);

        // The worker reconnects by itself, to a new backend.
        QTRY_VERIFY_WITH_TIMEOUT(connected.count() >= 2, 15000);
        QVERIFY(session.serverInfo().backendPid != pid);
        auto working = run(session, "SELECT 'back'");
        QVERIFY(working && working->ok());
        QCOMPARE((*working)->text(0, 0), QStringLiteral("back"));
    }

    void eventLoopKeepsTurningDuringASlowQuery()
    {
        // A 2-second statement; a 10 ms timer on this (the GUI) thread keeps firing meanwhile. A
        // GUI thread waiting for the statement would stall for its whole 2 s (and tick about
        // once); the bounds leave room for a loaded machine, where ticks come late but come.
        DatabaseSession session(m_db->settings());
        session.open();
        QVERIFY(waitConnected(session));
        QElapsedTimer sinceTick;
        qint64 worstGapMs = 0;
        int ticks = 0;
        QTimer timer;
        timer.setInterval(10);
        connect(&timer, &QTimer::timeout, this, [&] {
            worstGapMs = std::max(worstGapMs, sinceTick.restart());
            ++ticks;
        });
        bool done = false;
        QObject context;
        sinceTick.start();
        timer.start();
        session.execute("SELECT pg_sleep(2)", {}, &context, [&](const auto &) { done = true; });
        QTRY_VERIFY_WITH_TIMEOUT(done, 10000);
        timer.stop();
        qInfo("ticks: %d, worst gap: %lld ms", ticks, worstGapMs);
        QVERIFY2(ticks > 20, qPrintable(QString::number(ticks)));
        QVERIFY2(worstGapMs < 1000, qPrintable(QStringLiteral("gap %1 ms").arg(worstGapMs)));
    }

    void requestsWhileDisconnectedFailFast()
    {
        ConnectionSettings nowhere;
        nowhere.connInfo = QStringLiteral("host=127.0.0.1 port=1 dbname=x connect_timeout=1");
        DatabaseSession session(nowhere);
        QSignalSpy lost(&session, &DatabaseSession::connectionLost);
        QSignalSpy scheduled(&session, &DatabaseSession::reconnectScheduled);
        session.open();
        QVERIFY(lost.wait(10000));
        QVERIFY(scheduled.count() >= 1 || scheduled.wait(5000));
        auto r = run(session, "SELECT 1");
        QVERIFY(r && !r->ok());
        QCOMPARE(r->error().kind(), ErrorKind::Connection);
    }

    // A refused login is not retried behind the operator's back (each try is a failed login in
    // the server's log and towards any lockout): after 28P01 no attempt for seconds, then a new
    // password connects at once. The test cluster asks for a password over TCP only.
    void wrongPasswordIsNotRetriedUntilANewOneIsGiven()
    {
        const QString role
            = m_db->createLogin(QStringLiteral("t_pw"), {}, QStringLiteral("right-horse-battery"));
        {
            ConnectionSettings settings = m_db->settingsOverTcp(role);
            settings.password = QStringLiteral("wrong-staple");
            DatabaseSession session(settings);
            QSignalSpy attempts(&session, &DatabaseSession::connecting);
            QSignalSpy lost(&session, &DatabaseSession::connectionLost);
            QSignalSpy scheduled(&session, &DatabaseSession::reconnectScheduled);
            session.open();
            QVERIFY(lost.wait(10000));
            const DbError refused = lost.first().first().value<DbError>();
            QCOMPARE(refused.kind(), ErrorKind::Authentication);
            QCOMPARE(refused.sqlState(), QStringLiteral("28P01"));
            QVERIFY(!refused.message().contains(QLatin1String("wrong-staple")));
            QVERIFY(session.isLoginRefused());
            QCOMPARE(attempts.count(), 1);

            // Nothing for several seconds: no attempt, no reconnect scheduled.
            QVERIFY(!attempts.wait(4000));
            QCOMPARE(attempts.count(), 1);
            QCOMPARE(scheduled.count(), 0);
            QCOMPARE(lost.count(), 1);
            // Requests say why, at once.
            auto r = run(session, "SELECT 1");
            QVERIFY(r && !r->ok());
            QCOMPARE(r->error().kind(), ErrorKind::Authentication);

            // A new password: one attempt, connected as the role.
            QSignalSpy connected(&session, &DatabaseSession::connected);
            session.retryWithPassword(QStringLiteral("right-horse-battery"));
            QVERIFY(connected.wait(10000));
            QCOMPARE(attempts.count(), 2);
            QVERIFY(!session.isLoginRefused());
            auto who = run(session, "SELECT session_user");
            QVERIFY(who && who->ok());
            QCOMPARE(who->value().text(0, 0), role);
        }
        {
            // No password at all (libpq asks for one and has none): refused the same way.
            DatabaseSession session(m_db->settingsOverTcp(role));
            QSignalSpy attempts(&session, &DatabaseSession::connecting);
            QSignalSpy lost(&session, &DatabaseSession::connectionLost);
            session.open();
            QVERIFY(lost.wait(10000));
            QCOMPARE(lost.first().first().value<DbError>().kind(), ErrorKind::Authentication);
            QVERIFY(!attempts.wait(2000));
            QCOMPARE(attempts.count(), 1);
        }
    }

    void reconnectDelaysGrowAndStayCapped()
    {
        for (int attempt = 1; attempt <= 30; ++attempt) {
            const int d = reconnectDelayMs(attempt, 500, 30000);
            QVERIFY(d >= 250);
            QVERIFY(d <= 30000);
        }
        QVERIFY(reconnectDelayMs(1, 500, 30000) <= 500);
    }
};

QTEST_MAIN(TestDatabaseSession)
#include "tst_database_session.moc"
