// SPDX-License-Identifier: GPL-3.0-or-later
// Reading from a hot standby, acting on the primary (docs/architecture.md#reading-from-a-standby),
// against a real primary and a streaming standby (the pg_standby fixture,
// tests/support/pg_test_standby.sh): reads hit the standby, actions the primary; an action's
// result is read at once even while the standby's replay is paused; the lag is measured; a
// stopped standby makes reads fall back to the primary, and they come back when it returns.
#include "models/db/connection_settings.h"
#include "models/db/database_session.h"
#include "models/db/database_worker.h"
#include "models/db/sql_statement.h"
#include "tests/support/test_database.h"

#include <QElapsedTimer>
#include <QFile>
#include <QProcess>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTest>
#include <QUuid>

using namespace redrive;
using namespace redrive::db;

namespace {

QHash<QString, QString> readEnv(const QString &path)
{
    QHash<QString, QString> env;
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        qFatal("standby test: %s not found; run through ctest so the pg_standby fixture starts "
               "the standby",
               qPrintable(path));
    while (!file.atEnd()) {
        const QString line = QString::fromUtf8(file.readLine()).trimmed();
        const qsizetype eq = line.indexOf(QLatin1Char('='));
        if (eq > 0)
            env.insert(line.left(eq), line.mid(eq + 1));
    }
    return env;
}

const QString kStandbyDir = QStringLiteral(REDRIVE_TEST_STANDBY_DIR);

// Runs tests/support/pg_test_standby.sh `action` (halt or resume) on the fixture's standby.
bool standbyScript(const QString &action)
{
    QProcess script;
    script.start(QStringLiteral("bash"),
                 { QStringLiteral(REDRIVE_TEST_STANDBY_SCRIPT), action, kStandbyDir });
    if (!script.waitForFinished(60000) || script.exitCode() != 0) {
        qWarning().noquote() << script.readAllStandardError();
        return false;
    }
    return true;
}

} // namespace

class TestStandbyReads : public QObject
{
    Q_OBJECT
private:
    std::unique_ptr<test::TestDatabase> m_db;
    QString m_login;
    QHash<QString, QString> m_primaryEnv;
    QHash<QString, QString> m_standbyEnv;

    // The console's settings for a primary and its standby, as an operator writes them: one
    // libpq string with both hosts (the primary first).
    ConnectionSettings standbySettings() const
    {
        ConnectionSettings s;
        s.connInfo
            = QStringLiteral("host=%1,%2 port=%3,%4 dbname=%5 user=%6")
                  .arg(m_primaryEnv.value(QStringLiteral("PGHOST")),
                       m_standbyEnv.value(QStringLiteral("STANDBY_PGHOST")),
                       m_primaryEnv.value(QStringLiteral("PGPORT")),
                       m_standbyEnv.value(QStringLiteral("STANDBY_PGPORT")), m_db->name(), m_login);
        s.searchPath = QStringLiteral("redrive");
        return s;
    }

    PgConnection connectStandby(const QString &database) const
    {
        ConnectionSettings s;
        s.connInfo = QStringLiteral("host=%1 port=%2 user=postgres dbname=%3")
                         .arg(m_standbyEnv.value(QStringLiteral("STANDBY_PGHOST")),
                              m_standbyEnv.value(QStringLiteral("STANDBY_PGPORT")), database);
        return test::TestDatabase::connectWith(s);
    }

    // Waits until the standby has replayed everything the primary wrote so far.
    bool standbyCaughtUp()
    {
        PgConnection primary = m_db->connect();
        auto lsn = primary.exec("SELECT pg_current_wal_insert_lsn()::text");
        if (!lsn)
            return false;
        const quint64 target = parseLsn(lsn->text(0, 0));
        PgConnection standby = connectStandby(QStringLiteral("postgres"));
        QElapsedTimer clock;
        clock.start();
        while (clock.elapsed() < 20000) {
            auto replayed = standby.exec("SELECT pg_last_wal_replay_lsn()::text");
            if (replayed && parseLsn(replayed->text(0, 0)) >= target)
                return true;
            QTest::qWait(20);
        }
        return false;
    }

    // Runs `sql` through `session` (routed as the console routes it) and returns its first row.
    static QStringList readRow(DatabaseSession *session, const QByteArray &sql,
                               const QueryParams &params = {})
    {
        QStringList row;
        bool done = false;
        QObject context;
        session->execute(sql, params, &context, [&](const DbExpected<ResultSet> &rows) {
            done = true;
            if (!rows) {
                row << QStringLiteral("error: ") + rows.error().summary();
                return;
            }
            for (int c = 0; rows->rowCount() > 0 && c < rows->columnCount(); ++c)
                row << rows->text(0, c);
        });
        QElapsedTimer clock;
        clock.start();
        while (!done && clock.elapsed() < 20000)
            QTest::qWait(5);
        if (!done)
            row << QStringLiteral("no answer in 20 s");
        return row;
    }

    qint64 insertDeadLetter()
    {
        PgConnection admin = m_db->connect();
        auto id = admin.exec(
            "WITH j AS (INSERT INTO redrive.job (queue, kind, payload, state)"
            "           VALUES ('payments', 'charge_card', '{}', 'dead') RETURNING id)"
            " INSERT INTO redrive.dead_letter (job_id, queue, kind, error_class, error_code,"
            "                                  last_error, dead_at)"
            " SELECT id, 'payments', 'charge_card', 'transient', 'timeout', 'timed out',"
            "        clock_timestamp() FROM j RETURNING id");
        return id && id->rowCount() == 1 ? id->text(0, 0).toLongLong() : 0;
    }

    static QueryParams requeueParams(qint64 id)
    {
        return QueryParams()
            .addUuid(QUuid::createUuid())
            .addJson(QStringLiteral(R"([{"id": %1, "version": 1}])").arg(id).toUtf8())
            .addBool(true)
            .addText(QStringLiteral("provider recovered"))
            .addNull(ParamType::Text)
            .addText(QStringLiteral("tester"))
            .addNull(ParamType::Uuid)
            .addNull(ParamType::Int);
    }

    void setReplayPaused(bool paused)
    {
        PgConnection standby = connectStandby(QStringLiteral("postgres"));
        QVERIFY(standby.exec(paused ? "SELECT pg_wal_replay_pause()"
                                    : "SELECT pg_wal_replay_resume()"));
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_primaryEnv = readEnv(QStringLiteral(REDRIVE_TEST_PG_ENV));
        m_standbyEnv = readEnv(kStandbyDir + QStringLiteral("/env"));
    }

    void init()
    {
        m_db = std::make_unique<test::TestDatabase>(QStringLiteral("standby"));
        QVERIFY2(m_db->isValid(), qPrintable(m_db->error()));
        m_login = m_db->createLogin(QStringLiteral("standby_oncall"),
                                    { QStringLiteral("redrive_oncall") });
        // The new database and login reach the standby by replication.
        QVERIFY(standbyCaughtUp());
    }

    void cleanup()
    {
        // Whatever a failed test left: a standby halted or paused is made whole again.
        if (!QFile::exists(kStandbyDir + QStringLiteral("/data/postmaster.pid")))
            QVERIFY(standbyScript(QStringLiteral("resume")));
        setReplayPaused(false);
        m_db.reset();
    }

    /// Which strings name a standby, and the settings derived for reads and for the primary.
    void standbyIsNamed_data()
    {
        QTest::addColumn<QString>("connInfo");
        QTest::addColumn<bool>("named");
        QTest::addColumn<QString>("readAttrs");
        QTest::addColumn<QString>("primaryAttrs");
        QTest::newRow("one host") << "host=db1 port=5432 dbname=app" << false << ""
                                  << "";
        QTest::newRow("one host URI") << "postgresql://db1:5432/app" << false << ""
                                      << "";
        QTest::newRow("two hosts")
            << "host=db1,db2 port=5432,5433 dbname=app" << true << "prefer-standby"
            << "read-write";
        QTest::newRow("two hosts URI")
            << "postgresql://db1:5432,db2:5433/app" << true << "prefer-standby"
            << "read-write";
        QTest::newRow("two addresses")
            << "hostaddr=10.0.0.1,10.0.0.2 dbname=app" << true << "prefer-standby"
            << "read-write";
        QTest::newRow("prefer-standby asked")
            << "host=db1 target_session_attrs=prefer-standby" << true << "prefer-standby"
            << "read-write";
        QTest::newRow("standby asked")
            << "host=db1,db2 target_session_attrs=standby" << true << "standby"
            << "read-write";
        QTest::newRow("read-write on one host")
            << "host=db1 target_session_attrs=read-write" << false << ""
            << "";
        QTest::newRow("unparsable") << "host='db1" << false << ""
                                    << "";
    }

    void standbyIsNamed()
    {
        QFETCH(QString, connInfo);
        QFETCH(bool, named);
        QFETCH(QString, readAttrs);
        QFETCH(QString, primaryAttrs);
        ConnectionSettings s;
        s.connInfo = connInfo;
        QCOMPARE(connInfoNamesStandby(connInfo), named);
        QCOMPARE(readSettings(s).targetSessionAttrs, readAttrs);
        QCOMPARE(primarySettings(s).targetSessionAttrs, primaryAttrs);
        QCOMPARE(readSettings(s).connInfo, connInfo); // the operator's string is kept as it is
    }

    /// What runs on the primary: every action function, the bulk run lock, the audit chain's
    /// verification and export; a read does not.
    void actionStatementsRunOnThePrimary()
    {
        QVERIFY(statementRunsOnPrimary(Statement::ActionRequeue));
        QVERIFY(statementRunsOnPrimary(Statement::ActionRequestCompensation));
        QVERIFY(statementRunsOnPrimary(Statement::BulkBeginRun));
        QVERIFY(statementRunsOnPrimary(Statement::VerifyAuditChain));
        QVERIFY(!statementRunsOnPrimary(Statement::DeadLetterRows));
        QVERIFY(!statementRunsOnPrimary(Statement::ActionPreview));
        QVERIFY(sqlRunsOnPrimary(statementSql(Statement::ActionResolve)));
        QVERIFY(!sqlRunsOnPrimary(statementSql(Statement::DeadLetterDetail)));
        QVERIFY(!sqlRunsOnPrimary("SELECT 1"));
        // Every statement whose name says it is an action runs on the primary.
        for (const Statement s : allStatements())
            if (statementName(s).startsWith(QLatin1String("action_"))
                && s != Statement::ActionPreview)
                QVERIFY2(statementRunsOnPrimary(s), qPrintable(statementName(s)));
    }

    /// With one server nothing changes: no standby is used, reads and actions share it.
    void oneServerIsUnchanged()
    {
        auto session = m_db->openSession(m_db->consoleSettingsAs(m_login));
        QVERIFY2(session, qPrintable(m_db->error()));
        QVERIFY(!session->usesStandby());
        QVERIFY(!session->readsFromStandby());
        QCOMPARE(readRow(session.get(), "SELECT pg_is_in_recovery()"), QStringList { "f" });
        const qint64 id = insertDeadLetter();
        QVERIFY(id > 0);
        const QStringList outcome
            = readRow(session.get(), statementSql(Statement::ActionRequeue), requeueParams(id));
        QVERIFY2(outcome.value(0).contains(QLatin1String("\"applied\"")),
                 qPrintable(outcome.join(' ')));
        QCOMPARE(session->lastCommitLsn(), quint64(0));
    }

    /// Reads go to the standby, actions to the primary, and a requeue is read back at once.
    void readsHitTheStandbyAndActionsThePrimary()
    {
        const qint64 id = insertDeadLetter();
        QVERIFY(id > 0);
        QVERIFY(standbyCaughtUp());
        auto session = m_db->openSession(standbySettings());
        QVERIFY2(session, qPrintable(m_db->error()));
        QVERIFY(session->usesStandby());
        QVERIFY(session->serverInfo().hotStandby);
        QCOMPARE(session->serverInfo().port, m_standbyEnv.value(QStringLiteral("STANDBY_PGPORT")));
        QCOMPARE(readRow(session.get(), "SELECT pg_is_in_recovery()"), QStringList { "t" });
        const QByteArray statusOf
            = "SELECT pg_is_in_recovery(), status FROM dead_letter_list WHERE id = $1";
        QCOMPARE(readRow(session.get(), statusOf, QueryParams().addBigInt(id)),
                 (QStringList { "t", "open" }));

        // On a standby the action would fail (25006, read-only transaction): it runs on the
        // primary and applies.
        const QStringList outcome
            = readRow(session.get(), statementSql(Statement::ActionRequeue), requeueParams(id));
        QVERIFY2(outcome.value(0).contains(QLatin1String("\"applied\": 1"))
                     || outcome.value(0).contains(QLatin1String("\"applied\":1")),
                 qPrintable(outcome.join(' ')));
        QVERIFY(session->lastCommitLsn() > 0);
        // The read right after waits for the standby to replay the requeue, and sees it there.
        QCOMPARE(readRow(session.get(), statusOf, QueryParams().addBigInt(id)),
                 (QStringList { "t", "requeued" }));
    }

    /// Notifications come from the primary (a standby cannot LISTEN): the listener's backend
    /// is there, and a change on the primary is announced.
    void listenerIsOnThePrimary()
    {
        auto session = m_db->openSession(standbySettings());
        QVERIFY2(session, qPrintable(m_db->error()));
        QSignalSpy listening(session.get(), &DatabaseSession::listening);
        QSignalSpy notified(session.get(), &DatabaseSession::notified);
        session->listen({ QStringLiteral("redrive_dead_letter") });
        QVERIFY(listening.wait(10000));
        PgConnection primary = m_db->connect();
        auto listeners = primary.exec("SELECT count(*) FROM pg_stat_activity WHERE datname = $1"
                                      " AND application_name = 'redrive-listener'",
                                      QueryParams().addText(m_db->name()));
        QVERIFY(listeners);
        QCOMPARE(listeners->text(0, 0), QStringLiteral("1"));
        QVERIFY(insertDeadLetter() > 0);
        QTRY_VERIFY_WITH_TIMEOUT(!notified.isEmpty(), 10000);
        QCOMPARE(notified.first().first().value<Notification>().channel,
                 QStringLiteral("redrive_dead_letter"));
    }

    /// With the standby's replay paused, the operator's own requeue is still seen at once: the
    /// read waits DatabaseWorker::kReadYourWritesWaitMs, then runs on the primary and says so;
    /// once the standby has replayed it, reads are back on the standby.
    void ownActionIsVisibleWhileReplayIsPaused()
    {
        const qint64 id = insertDeadLetter();
        QVERIFY(id > 0);
        QVERIFY(standbyCaughtUp());
        auto session = m_db->openSession(standbySettings());
        QVERIFY2(session, qPrintable(m_db->error()));
        session->setReplayPollInterval(100);
        QSignalSpy routed(session.get(), &DatabaseSession::readRoutedToPrimary);
        setReplayPaused(true);

        const QStringList outcome
            = readRow(session.get(), statementSql(Statement::ActionRequeue), requeueParams(id));
        QVERIFY2(outcome.value(0).contains(QLatin1String("applied")),
                 qPrintable(outcome.join(' ')));
        const QByteArray statusOf
            = "SELECT pg_is_in_recovery(), status FROM dead_letter_list WHERE id = $1";
        QElapsedTimer clock;
        clock.start();
        QCOMPARE(readRow(session.get(), statusOf, QueryParams().addBigInt(id)),
                 (QStringList { "f", "requeued" }));
        QVERIFY(clock.elapsed() >= DatabaseWorker::kReadYourWritesWaitMs);
        QCOMPARE(routed.count(), 1);
        // The reads after it do not wait again while the standby is behind.
        clock.restart();
        QCOMPARE(readRow(session.get(), statusOf, QueryParams().addBigInt(id)),
                 (QStringList { "f", "requeued" }));
        QVERIFY(clock.elapsed() < DatabaseWorker::kReadYourWritesWaitMs);
        QCOMPARE(routed.count(), 1);
        // The standby stays as it was meanwhile.
        PgConnection standby = connectStandby(m_db->name());
        auto there = standby.exec("SELECT status FROM redrive.dead_letter WHERE id = $1",
                                  QueryParams().addBigInt(id));
        QVERIFY(there);
        QCOMPARE(there->text(0, 0), QStringLiteral("open"));

        setReplayPaused(false);
        QTRY_COMPARE_WITH_TIMEOUT(session->lastCommitLsn(), quint64(0), 10000);
        QCOMPARE(readRow(session.get(), statusOf, QueryParams().addBigInt(id)),
                 (QStringList { "t", "requeued" }));
    }

    /// A paused replay shows as lag: WAL bytes behind and the age of the newest replayed commit.
    void pausedReplayIsMeasuredAsLag()
    {
        auto session = m_db->openSession(standbySettings());
        QVERIFY2(session, qPrintable(m_db->error()));
        session->setReplayPollInterval(100);
        QTRY_VERIFY_WITH_TIMEOUT(session->replayStatus().onStandby, 5000);
        QTRY_COMPARE_WITH_TIMEOUT(session->replayStatus().lagBytes, qint64(0), 5000);
        QCOMPARE(session->replayStatus().lagSeconds, 0.0);
        QCOMPARE(session->replayStatus().replayPaused, false);

        setReplayPaused(true);
        QVERIFY(insertDeadLetter() > 0);
        QTRY_VERIFY_WITH_TIMEOUT(session->replayStatus().lagBytes > 0, 10000);
        QVERIFY(session->replayStatus().replayPaused);
        // The newest replayed commit grows older while the replay stays paused.
        QTRY_VERIFY_WITH_TIMEOUT(session->replayStatus().lagSeconds >= 1.0, 10000);
        const ReplayStatus status = session->replayStatus();
        QCOMPARE(qint64(status.primaryLsn - status.replayLsn), status.lagBytes);

        setReplayPaused(false);
        QTRY_COMPARE_WITH_TIMEOUT(session->replayStatus().lagBytes, qint64(0), 10000);
        QCOMPARE(session->replayStatus().lagSeconds, 0.0);
    }

    /// While an action waits on the primary (here behind a lock for 2 s, polled every 20 ms),
    /// the lag measurement's ticks are skipped, not queued: when the action ends, at most the one
    /// measurement that was on its way comes back, not a hundred in a row.
    void replayPollsDoNotPileUpBehindALongAction()
    {
        const qint64 id = insertDeadLetter();
        QVERIFY(id > 0);
        QVERIFY(standbyCaughtUp());
        auto session = m_db->openSession(standbySettings());
        QVERIFY2(session, qPrintable(m_db->error()));
        session->setReplayPollInterval(20);
        QTRY_VERIFY_WITH_TIMEOUT(session->replayStatus().onStandby, 5000);

        PgConnection holder = m_db->connect();
        QVERIFY(holder.exec("BEGIN").ok());
        QVERIFY(holder.exec("LOCK TABLE redrive.audit_log IN ACCESS EXCLUSIVE MODE").ok());
        std::optional<DbExpected<ResultSet>> outcome;
        QObject context;
        session->execute(statementSql(Statement::ActionRequeue), requeueParams(id), &context,
                         [&](const DbExpected<ResultSet> &r) { outcome.emplace(r); });
        QTest::qWait(2000); // about a hundred ticks while the requeue waits for the lock
        QVERIFY(!outcome.has_value());
        session->setReplayPollInterval(60000); // no new ticks from here on
        QSignalSpy measured(session.get(), &DatabaseSession::replayStatusChanged);
        QVERIFY(holder.exec("COMMIT").ok());
        QTRY_VERIFY_WITH_TIMEOUT(outcome.has_value(), 10000);
        QVERIFY2(outcome->ok(), outcome->ok() ? "" : qPrintable(outcome->error().summary()));
        QTest::qWait(1500); // what was queued behind the requeue has run by now
        QVERIFY2(measured.count() <= 1, qPrintable(QString::number(measured.count())));
    }

    /// A standby that stops: reads fall back to the primary (the next read already runs there),
    /// and come back to the standby when it is up again.
    void stoppedStandbyFallsBackAndComesBack()
    {
        auto session = m_db->openSession(standbySettings());
        QVERIFY2(session, qPrintable(m_db->error()));
        session->setReplayPollInterval(100);
        QSignalSpy lost(session.get(), &DatabaseSession::connectionLost);
        QSignalSpy connected(session.get(), &DatabaseSession::connected);
        QCOMPARE(readRow(session.get(), "SELECT pg_is_in_recovery()"), QStringList { "t" });

        QVERIFY(standbyScript(QStringLiteral("halt")));
        QCOMPARE(readRow(session.get(), "SELECT pg_is_in_recovery()"), QStringList { "f" });
        QVERIFY(!session->readsFromStandby());
        QCOMPARE(session->serverInfo().port, m_primaryEnv.value(QStringLiteral("PGPORT")));
        QCOMPARE(lost.count(), 0); // moved over, never lost
        QCOMPARE(connected.count(), 1);

        QVERIFY(standbyScript(QStringLiteral("resume")));
        QTRY_VERIFY_WITH_TIMEOUT(session->readsFromStandby(), 20000);
        QCOMPARE(connected.count(), 2);
        QCOMPARE(readRow(session.get(), "SELECT pg_is_in_recovery()"), QStringList { "t" });
        QCOMPARE(lost.count(), 0);
    }
};

QTEST_GUILESS_MAIN(TestStandbyReads)
#include "tst_standby_reads.moc"
