// SPDX-License-Identifier: GPL-3.0-or-later
// The live link (docs/architecture.md#live-updates): one notification per statement, bursts
// coalesced into one re-read, and after the listener's connection drops (its backend killed, or
// the server paused so that nothing answers) it comes back by itself, re-reads what changed in
// the gap and the "N new" badge counts exactly the rows inserted during and after it.
#include "models/db/database_session.h"
#include "models/dead_letter_filter.h"
#include "models/dead_letter_model.h"
#include "models/live_updates.h"
#include "tests/support/test_database.h"

#include <QAbstractItemModelTester>
#include <QElapsedTimer>
#include <QFile>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTest>
#include <csignal>
#include <sys/types.h>

using namespace redrive;
using namespace redrive::db;

namespace {

// `n` dead letters in one statement, dead now (after every row inserted before).
bool insertDeadLetters(PgConnection &admin, int n)
{
    return admin
        .exec("WITH j AS (INSERT INTO redrive.job (queue, kind, payload, state)"
              "           SELECT 'payments', 'charge_card', '{}', 'dead'"
              "             FROM generate_series(1, $1) RETURNING id)"
              " INSERT INTO redrive.dead_letter (job_id, queue, kind, error_class, error_code,"
              "                                  last_error, dead_at)"
              " SELECT id, 'payments', 'charge_card', 'permanent', 'card_declined',"
              "        'card declined', clock_timestamp() FROM j",
              QueryParams().addInt(n))
        .ok();
}

} // namespace

class TestLiveUpdates : public QObject
{
    Q_OBJECT
private:
    std::unique_ptr<test::TestDatabase> m_db;

    int listenerPid(PgConnection &admin)
    {
        auto rows = admin.exec("SELECT pid FROM pg_stat_activity WHERE datname = $1"
                               " AND application_name = 'redrive-listener'",
                               QueryParams().addText(m_db->name()));
        return rows && rows->rowCount() == 1 ? rows->integer(0, 0).value_or(0) : 0;
    }

    /// A session, a dead-letter list loaded newest first with the badge's count kept by the live
    /// link as the Dead letters tab does it, and the link's signals.
    struct Console
    {
        std::unique_ptr<DatabaseSession> session;
        std::unique_ptr<DeadLetterModel> model;
        std::unique_ptr<LiveUpdates> live;
        int newer = -1;
    };

    void openConsole(Console &c, int heartbeatMs = -1)
    {
        c.session = std::make_unique<DatabaseSession>(m_db->consoleSettings());
        if (heartbeatMs > 0)
            c.session->setListenerHeartbeat(heartbeatMs, heartbeatMs);
        QSignalSpy connected(c.session.get(), &DatabaseSession::connected);
        c.session->open();
        QVERIFY(connected.wait(10000));
        c.model = std::make_unique<DeadLetterModel>(c.session.get());
        new QAbstractItemModelTester(c.model.get(), c.model.get());
        QObject::connect(c.model.get(), &DeadLetterModel::newerCountChanged, c.model.get(),
                         [&c](int n) { c.newer = n; });
        QSignalSpy page(c.model.get(), &KeysetPageModel::pageLoaded);
        c.model->setFilter(DeadLetterFilter());
        QVERIFY(page.wait(10000));
        c.live = std::make_unique<LiveUpdates>(c.session.get());
        c.live->setTiming(50, 200);
        QObject::connect(c.live.get(), &LiveUpdates::changed, c.model.get(), [&c](LiveAreas areas) {
            if (areas & LiveArea::DeadLetters)
                c.model->checkForNewer();
        });
        QSignalSpy link(c.live.get(), &LiveUpdates::linkChanged);
        c.live->start();
        QVERIFY(link.wait(10000));
        QVERIFY(c.live->isLive());
        QTRY_COMPARE_WITH_TIMEOUT(c.newer, 0, 5000);
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_db = std::make_unique<test::TestDatabase>(QStringLiteral("live"));
        QVERIFY2(m_db->isValid(), qPrintable(m_db->error()));
        PgConnection admin = m_db->connect();
        QVERIFY(insertDeadLetters(admin, 5));
    }
    void cleanupTestCase() { m_db.reset(); }

    void channelsNameEveryArea()
    {
        const QStringList channels = LiveUpdates::channels();
        QCOMPARE(channels.size(), 7);
        LiveAreas all;
        for (const QString &c : channels)
            all |= LiveUpdates::areaOf(c);
        QCOMPARE(all, kAllLiveAreas);
        QCOMPARE(LiveUpdates::areaOf(QStringLiteral("redrive_compensation")),
                 LiveAreas(LiveArea::Compensations));
        QCOMPARE(LiveUpdates::areaOf(QStringLiteral("someone_elses")), LiveAreas());
    }

    // One NOTIFY per statement: 40 dead letters in one INSERT are one notification, and an
    // UPDATE of all of them another one; their payload is empty.
    void oneNotificationPerStatement()
    {
        DatabaseSession session(m_db->settings());
        QSignalSpy listening(&session, &DatabaseSession::listening);
        QSignalSpy notified(&session, &DatabaseSession::notified);
        session.listen({ QStringLiteral("redrive_dead_letter") });
        QVERIFY(listening.wait(10000));
        PgConnection admin = m_db->connect();
        QVERIFY(insertDeadLetters(admin, 40));
        // Two notifications of the first statement: the job insert is not a dead letter, the
        // dead-letter insert and the failure-group upsert its trigger makes are one each.
        QTRY_VERIFY_WITH_TIMEOUT(notified.count() >= 1, 5000);
        QTest::qWait(300);
        const int afterInsert = int(notified.count());
        QCOMPARE(afterInsert, 1); // one transaction: identical notifications fold into one
        QVERIFY(admin
                    .exec("UPDATE redrive.dead_letter SET claimed_by = 'x'"
                          " WHERE error_code = 'card_declined'")
                    .ok());
        QTRY_COMPARE_WITH_TIMEOUT(notified.count(), afterInsert + 1, 5000);
        QTest::qWait(300);
        QCOMPARE(notified.count(), afterInsert + 1);
        for (const auto &args : notified)
            QCOMPARE(args.first().value<Notification>().payload, QString());
        QVERIFY(admin.exec("UPDATE redrive.dead_letter SET claimed_by = NULL").ok());
    }

    // Every area's channel fires for a change to its tables.
    void everyAreaNotifies_data()
    {
        QTest::addColumn<QString>("channel");
        QTest::addColumn<QByteArray>("sql");
        QTest::newRow("outbox") << QStringLiteral("redrive_outbox")
                                << QByteArray("UPDATE redrive.outbox SET attempts = attempts"
                                              " WHERE false");
        QTest::newRow("keys") << QStringLiteral("redrive_key")
                              << QByteArray("UPDATE redrive.idempotency_key SET state = state"
                                            " WHERE false");
        QTest::newRow("compensations")
            << QStringLiteral("redrive_compensation")
            << QByteArray("UPDATE redrive.compensation_request SET status = status WHERE false");
        QTest::newRow("approvals")
            << QStringLiteral("redrive_compensation")
            << QByteArray("DELETE FROM redrive.compensation_approval WHERE false");
        QTest::newRow("reconciliation runs")
            << QStringLiteral("redrive_reconciliation")
            << QByteArray("DELETE FROM redrive.reconciliation_run WHERE false");
        QTest::newRow("mismatches")
            << QStringLiteral("redrive_reconciliation")
            << QByteArray("DELETE FROM redrive.reconciliation_mismatch WHERE false");
        QTest::newRow("operator actions")
            << QStringLiteral("redrive_audit")
            << QByteArray("DELETE FROM redrive.operator_action WHERE false");
        QTest::newRow("attempts") << QStringLiteral("redrive_attempt")
                                  << QByteArray("DELETE FROM redrive.attempt WHERE false");
        QTest::newRow("adapter jobs") << QStringLiteral("redrive_dead_letter")
                                      << QByteArray("DELETE FROM redrive.source_job WHERE false");
        QTest::newRow("failure groups")
            << QStringLiteral("redrive_dead_letter")
            << QByteArray("DELETE FROM redrive.failure_group WHERE false");
    }
    void everyAreaNotifies()
    {
        QFETCH(QString, channel);
        QFETCH(QByteArray, sql);
        DatabaseSession session(m_db->settings());
        QSignalSpy listening(&session, &DatabaseSession::listening);
        QSignalSpy notified(&session, &DatabaseSession::notified);
        session.listen(LiveUpdates::channels());
        QVERIFY(listening.wait(10000));
        PgConnection admin = m_db->connect();
        // A statement that touches no row still notifies: the trigger is per statement.
        auto done = admin.exec(sql);
        QVERIFY2(done.ok(), done.ok() ? "" : qPrintable(done.error().summary()));
        QTRY_COMPARE_WITH_TIMEOUT(notified.count(), 1, 5000);
        QTest::qWait(200);
        QCOMPARE(notified.count(), 1);
        QCOMPARE(notified.first().first().value<Notification>().channel, channel);
    }

    // A burst of 60 notifications is one re-read; a steady stream is re-read at most once per
    // minIntervalMs.
    void burstsAreCoalesced()
    {
        DatabaseSession session(m_db->settings());
        LiveUpdates live(&session);
        live.setTiming(100, 500);
        QSignalSpy changed(&live, &LiveUpdates::changed);
        live.start();
        QVERIFY(changed.wait(10000)); // the first LISTEN re-reads everything
        QCOMPARE(changed.first().first().value<LiveAreas>(), kAllLiveAreas);
        changed.clear();
        PgConnection admin = m_db->connect();
        for (int i = 0; i < 60; ++i)
            QVERIFY(admin.exec(i % 2 ? "NOTIFY redrive_key" : "NOTIFY redrive_audit").ok());
        QVERIFY(changed.wait(5000));
        QTest::qWait(700);
        QCOMPARE(changed.count(), 1);
        QCOMPARE(changed.first().first().value<LiveAreas>(),
                 LiveAreas(LiveArea::Keys | LiveArea::Audit));

        // A stream over 2 s: never more than one re-read per 500 ms.
        changed.clear();
        QElapsedTimer clock;
        clock.start();
        while (clock.elapsed() < 2000) {
            QVERIFY(admin.exec("NOTIFY redrive_dead_letter").ok());
            QTest::qWait(20);
        }
        QTest::qWait(700);
        QVERIFY2(changed.count() >= 3 && changed.count() <= 6,
                 qPrintable(QString::number(changed.count())));
    }

    // The listener's backend is killed: it reconnects by itself, says so, and the badge counts
    // exactly the 3 rows inserted while it was down plus the 2 inserted after.
    void badgeIsExactAfterTheListenerIsKilled()
    {
        Console c;
        openConsole(c);
        if (QTest::currentTestFailed())
            return;
        QSignalSpy link(c.live.get(), &LiveUpdates::linkChanged);
        PgConnection admin = m_db->connect();
        const int pid = listenerPid(admin);
        QVERIFY(pid > 0);
        QVERIFY(admin.exec("SELECT pg_terminate_backend($1)", QueryParams().addInt(pid)).ok());
        QVERIFY(insertDeadLetters(admin, 1)); // during the gap, one statement at a time
        QVERIFY(insertDeadLetters(admin, 2));
        QTRY_VERIFY_WITH_TIMEOUT(link.count() >= 2, 15000);
        QCOMPARE(link.at(0).at(0).toBool(), false);
        QCOMPARE(link.at(1).at(0).toBool(), true);
        QVERIFY(c.live->isLive());
        QVERIFY(listenerPid(admin) != pid);
        QTRY_COMPARE_WITH_TIMEOUT(c.newer, 3, 5000);
        QVERIFY(insertDeadLetters(admin, 2)); // after the gap
        QTRY_COMPARE_WITH_TIMEOUT(c.newer, 5, 5000);
        QTest::qWait(500);
        QCOMPARE(c.newer, 5);
    }

    // The server stops answering without closing the socket (postmaster and the listener's
    // backend stopped with SIGSTOP, as in a paused VM or a cut network): the heartbeat notices,
    // the listener reconnects once the server answers again, and the badge is exact.
    void badgeIsExactAfterTheServerPauses()
    {
        Console c;
        openConsole(c, 300);
        if (QTest::currentTestFailed())
            return;
        QSignalSpy link(c.live.get(), &LiveUpdates::linkChanged);
        PgConnection admin = m_db->connect();
        const int backend = listenerPid(admin);
        QVERIFY(backend > 0);
        auto dir = admin.exec("SELECT current_setting('data_directory')");
        QVERIFY(dir.ok());
        QFile pidFile(dir->text(0, 0) + QStringLiteral("/postmaster.pid"));
        QVERIFY(pidFile.open(QIODevice::ReadOnly));
        const int postmaster = pidFile.readLine().trimmed().toInt();
        QVERIFY(postmaster > 0);

        QCOMPARE(::kill(pid_t(postmaster), SIGSTOP), 0);
        QCOMPARE(::kill(pid_t(backend), SIGSTOP), 0);
        auto resume = qScopeGuard([&] {
            ::kill(pid_t(backend), SIGCONT);
            ::kill(pid_t(postmaster), SIGCONT);
        });
        // During the gap: this connection's backend was forked before the pause and still runs.
        QVERIFY(insertDeadLetters(admin, 3));
        QTRY_VERIFY_WITH_TIMEOUT(link.count() >= 1, 5000);
        QCOMPARE(link.at(0).at(0).toBool(), false);
        QVERIFY(!c.live->isLive());
        QCOMPARE(c.newer, 0); // nothing heard while down
        QTest::qWait(500);
        resume.dismiss();
        ::kill(pid_t(backend), SIGCONT);
        ::kill(pid_t(postmaster), SIGCONT);

        QTRY_VERIFY_WITH_TIMEOUT(link.count() >= 2, 20000);
        QCOMPARE(link.at(1).at(0).toBool(), true);
        QTRY_COMPARE_WITH_TIMEOUT(c.newer, 3, 5000);
        QVERIFY(insertDeadLetters(admin, 1)); // after the gap
        QTRY_COMPARE_WITH_TIMEOUT(c.newer, 4, 5000);
        QTest::qWait(500);
        QCOMPARE(c.newer, 4);
    }
};

QTEST_GUILESS_MAIN(TestLiveUpdates)
#include "tst_live_updates.moc"
