// SPDX-License-Identifier: GPL-3.0-or-later
// LISTEN/NOTIFY on a dedicated connection, including the dead-letter triggers of the schema and
// a reconnect after the listener's backend is killed.
#include "models/db/database_session.h"
#include "tests/support/test_database.h"

#include <QJsonDocument>
#include <QJsonObject>
#include <QSignalSpy>
#include <QTest>

using namespace redrive;
using namespace redrive::db;

class TestNotificationListener : public QObject
{
    Q_OBJECT
private:
    std::unique_ptr<test::TestDatabase> m_db;

    static QList<Notification> collect(QSignalSpy &spy)
    {
        QList<Notification> out;
        for (const auto &args : spy)
            out.append(args.first().value<Notification>());
        return out;
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_db = std::make_unique<test::TestDatabase>(QStringLiteral("listen"));
        QVERIFY2(m_db->isValid(), qPrintable(m_db->error()));
    }
    void cleanupTestCase() { m_db.reset(); }

    void plainNotify()
    {
        DatabaseSession session(m_db->settings());
        QSignalSpy listening(&session, &DatabaseSession::listening);
        QSignalSpy notified(&session, &DatabaseSession::notified);
        session.listen({ QStringLiteral("redrive_test"), QStringLiteral("Mixed Case") });
        QVERIFY(listening.wait(10000));

        PgConnection admin = m_db->connect();
        QVERIFY(admin
                    .exec("SELECT pg_notify($1, $2)",
                          QueryParams()
                              .addText(QStringLiteral("redrive_test"))
                              .addText(QStringLiteral("héllo")))
                    .ok());
        QVERIFY(admin
                    .exec("SELECT pg_notify($1, $2)",
                          QueryParams()
                              .addText(QStringLiteral("Mixed Case"))
                              .addText(QStringLiteral("quoted channel")))
                    .ok());
        QTRY_COMPARE_WITH_TIMEOUT(notified.count(), 2, 10000);
        const QList<Notification> got = collect(notified);
        QCOMPARE(got[0].channel, QStringLiteral("redrive_test"));
        QCOMPARE(got[0].payload, QStringLiteral("héllo"));
        QCOMPARE(got[0].senderPid, admin.serverInfo().backendPid);
        QCOMPARE(got[1].channel, QStringLiteral("Mixed Case"));
    }

    void deadLetterTriggersNotify()
    {
        DatabaseSession session(m_db->settings());
        QSignalSpy listening(&session, &DatabaseSession::listening);
        QSignalSpy notified(&session, &DatabaseSession::notified);
        session.listen({ QStringLiteral("redrive_dead_letter") });
        QVERIFY(listening.wait(10000));

        PgConnection admin = m_db->connect();
        auto job = admin.exec("INSERT INTO redrive.job (queue, kind, payload, state)"
                              " VALUES ('payments', 'charge_card', '{}', 'dead') RETURNING id");
        QVERIFY(job.ok());
        auto dl = admin.exec(
            "INSERT INTO redrive.dead_letter (job_id, queue, kind, error_class, error_code,"
            " last_error) VALUES ($1, 'payments', 'charge_card', 'permanent', 'card_declined',"
            " 'card declined for order 42') RETURNING id, fingerprint",
            QueryParams().addBigInt(*job->bigInt(0, 0)));
        QVERIFY2(dl.ok(), dl.ok() ? "" : qPrintable(dl.error().summary()));
        const qint64 id = *dl->bigInt(0, 0);
        QCOMPARE(dl->text(0, 1).size(), 64); // the trigger filled in the failure fingerprint

        QVERIFY(admin
                    .exec("UPDATE redrive.dead_letter SET status = 'resolved' WHERE id = $1",
                          QueryParams().addBigInt(id))
                    .ok());
        // Any change the list shows (a claim too) is one notification per statement
        // (migration 0013_live_notifications.sql).
        QVERIFY(admin
                    .exec("UPDATE redrive.dead_letter SET claimed_by = 'x' WHERE id = $1",
                          QueryParams().addBigInt(id))
                    .ok());
        QTRY_COMPARE_WITH_TIMEOUT(notified.count(), 3, 10000);
        QTest::qWait(200);
        QCOMPARE(notified.count(), 3);
        // Anyone who can connect may LISTEN, so a notification carries nothing: no id, no
        // status, no queue. The console re-reads through the role-checked views.
        const QList<Notification> got = collect(notified);
        QCOMPARE(got[0].payload, QString());
        QCOMPARE(got[1].payload, QString());
        auto version = admin.exec("SELECT version FROM redrive.dead_letter WHERE id = $1",
                                  QueryParams().addBigInt(id));
        QCOMPARE(version->integer(0, 0), std::optional<int>(3)); // bumped on every update
    }

    void listensAgainAfterItsBackendIsKilled()
    {
        DatabaseSession session(m_db->settings());
        QSignalSpy listening(&session, &DatabaseSession::listening);
        QSignalSpy notified(&session, &DatabaseSession::notified);
        session.listen({ QStringLiteral("redrive_test") });
        QVERIFY(listening.wait(10000));

        PgConnection admin = m_db->connect();
        auto killed = admin.exec("SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity"
                                 " WHERE datname = $1 AND application_name = 'redrive-listener'",
                                 QueryParams().addText(m_db->name()));
        QVERIFY(killed.ok());
        QCOMPARE(killed->bigInt(0, 0), std::optional<qint64>(1));
        QTRY_VERIFY_WITH_TIMEOUT(listening.count() >= 2, 15000);

        QVERIFY(admin.exec("NOTIFY redrive_test, 'after reconnect'").ok());
        QTRY_COMPARE_WITH_TIMEOUT(notified.count(), 1, 10000);
        QCOMPARE(collect(notified).first().payload, QStringLiteral("after reconnect"));
    }
};

QTEST_GUILESS_MAIN(TestNotificationListener)
#include "tst_notification_listener.moc"
