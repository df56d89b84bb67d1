// SPDX-License-Identifier: GPL-3.0-or-later
// After an action (docs/domain.md#failure-groups): a conflict says who changed the dead letter and
// when, the result dialog names the audit entries the Audit log shows for the same action, and
// the follow-up line says where a requeue's dead letters went. Real logins over TCP.
#include "models/bulk_action_runner.h"
#include "models/console_reads.h"
#include "models/db/sql_statement.h"
#include "models/display_format.h"
#include "tests/support/test_database.h"
#include "views/action_result_dialog.h"
#include "views/requeue_follow_up_bar.h"

#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QRegularExpression>
#include <QSignalSpy>
#include <QTableWidget>
#include <QTest>
#include <QUuid>

using namespace redrive;
using namespace redrive::db;

namespace {

const QString kPassword = QStringLiteral("fu-Pw-4410");

QString labelContaining(const QWidget &w, const QString &needle)
{
    for (const QLabel *l : w.findChildren<QLabel *>())
        if (l->text().contains(needle))
            return l->text();
    return {};
}

} // namespace

class TestActionFollowUp : public QObject
{
    Q_OBJECT
private:
    std::unique_ptr<test::TestDatabase> m_db;
    PgConnection m_admin;
    QString m_oncall, m_support;

    ResultSet q(PgConnection &c, const QByteArray &sql, const QueryParams &params = {})
    {
        auto r = c.exec(sql, params);
        if (!r)
            qFatal("%s: %s", sql.constData(), qPrintable(r.error().summary()));
        return r.value();
    }
    // `n` open dead letters; their ids in order.
    QList<qint64> deadLetters(int n)
    {
        const ResultSet r = q(
            m_admin,
            "WITH j AS (INSERT INTO redrive.job (queue, kind, state)"
            "           SELECT 'payments', 'charge_card', 'dead' FROM generate_series(1, $1)"
            "           RETURNING id)"
            "INSERT INTO redrive.dead_letter (job_id, queue, kind, error_class, error_code,"
            "                                 last_error, fingerprint)"
            "SELECT id, 'payments', 'charge_card', 'transient', 'provider_5xx', '502', '' FROM j"
            " RETURNING id",
            QueryParams().addInt(n));
        QList<qint64> ids;
        for (int i = 0; i < r.rowCount(); ++i)
            ids << r.bigInt(i, 0).value_or(0);
        std::sort(ids.begin(), ids.end());
        return ids;
    }
    QJsonObject requeue(PgConnection &c, const QList<qint64> &ids, int version, QUuid *actionId)
    {
        QJsonArray t;
        for (qint64 id : ids)
            t.append(QJsonObject { { QStringLiteral("id"), id },
                                   { QStringLiteral("version"), version } });
        *actionId = QUuid::createUuid();
        return QJsonDocument::fromJson(
                   q(c, statementSql(Statement::ActionRequeue),
                     QueryParams()
                         .addUuid(*actionId)
                         .addJson(QJsonDocument(t).toJson(QJsonDocument::Compact))
                         .addBool(true)
                         .addText(QStringLiteral("provider back"))
                         .addNull(ParamType::Text)
                         .addText(QStringLiteral("tester"))
                         .addNull(ParamType::Uuid)
                         .addNull(ParamType::Int))
                       .raw(0, 0))
            .object();
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_db = std::make_unique<test::TestDatabase>(QStringLiteral("follow_up"));
        QVERIFY2(m_db->isValid(), qPrintable(m_db->error()));
        m_admin = m_db->connect();
        m_oncall = m_db->createLogin(QStringLiteral("fu_oncall"),
                                     { QStringLiteral("redrive_oncall") }, kPassword);
        m_support = m_db->createLogin(QStringLiteral("fu_support"),
                                      { QStringLiteral("redrive_support") }, kPassword);
    }
    void cleanupTestCase()
    {
        m_admin = PgConnection();
        m_db.reset();
    }

    void wordsForAChange()
    {
        QCOMPARE(
            display::lastChange(QStringLiteral("resolve"), QStringLiteral("demo_support"), 125),
            QStringLiteral("resolved by demo_support 2 min ago"));
        QCOMPARE(
            display::lastChange(QStringLiteral("worker_dead_again"), QStringLiteral("worker"), 7),
            QStringLiteral("failed again by worker 7 s ago"));
        QCOMPARE(display::lastChange(QStringLiteral("mystery"), QStringLiteral("x"), 0),
                 QStringLiteral("changed (mystery) by x 0 s ago"));
        QCOMPARE(display::auditReference({ 42 }, { QStringLiteral("u-1") }),
                 QStringLiteral("audit entry 42 \u00b7 action id u-1"));
        QCOMPARE(display::auditReference({ 42, 43 }, { QStringLiteral("a"), QStringLiteral("b") }),
                 QStringLiteral("audit entries 42, 43 \u00b7 action ids a, b"));
        QCOMPARE(display::auditReference({ 9, 3, 4, 5, 6, 7 }, {}),
                 QStringLiteral("audit entries 3 \u2026 9 (6 entries)"));
        QCOMPARE(display::auditReference({}, {}), QString());
    }

    // Support resolved a dead letter; on-call requeues it from an older preview: the conflict
    // says who resolved it and when, and the dialog names the audit entry the Audit log shows.
    void conflictSaysWhoAndWhenAndTheReferenceIsTheAuditLogs()
    {
        const QList<qint64> ids = deadLetters(2);
        PgConnection support
            = test::TestDatabase::connectWith(m_db->consoleTcpSettingsAs(m_support, kPassword));
        q(support, statementSql(Statement::ActionResolve),
          QueryParams()
              .addUuid(QUuid::createUuid())
              .addJson(QStringLiteral("[{\"id\": %1, \"version\": 1}]").arg(ids[0]).toUtf8())
              .addText(QStringLiteral("fixed_by_hand"))
              .addNull(ParamType::Text)
              .addText(QStringLiteral("done by hand"))
              .addNull(ParamType::Text)
              .addText(QStringLiteral("tester"))
              .addNull(ParamType::Uuid)
              .addNull(ParamType::Int));

        PgConnection oncall
            = test::TestDatabase::connectWith(m_db->consoleTcpSettingsAs(m_oncall, kPassword));
        QUuid actionId;
        const QJsonObject outcome = requeue(oncall, ids, 1, &actionId);
        QCOMPARE(outcome.value(QStringLiteral("conflicts")).toInt(), 1);

        auto session = m_db->openSession(m_db->consoleTcpSettingsAs(m_oncall, kPassword));
        QVERIFY2(session, qPrintable(m_db->error()));
        ActionResultDialog dialog(ActionResultDialog::Outcome::fromJson(
            QStringLiteral("Requeue"), outcome, actionId.toString(QUuid::WithoutBraces)));
        auto *table = dialog.findChild<QTableWidget *>();
        QVERIFY(table);
        QCOMPARE(table->rowCount(), 1);
        QCOMPARE(table->item(0, 2)->text(),
                 QStringLiteral("now resolved at version 2 (you saw version 1)"));
        dialog.explainConflicts(session.get());
        QTRY_VERIFY_WITH_TIMEOUT(table->item(0, 2)->text().contains(QLatin1String("by")), 10000);
        const QRegularExpression expected(
            QStringLiteral("^resolved by %1 [0-2] s ago \u2014 now resolved at version 2 \\(you "
                           "saw version 1\\)$")
                .arg(QRegularExpression::escape(m_support)));
        QVERIFY2(expected.match(table->item(0, 2)->text()).hasMatch(),
                 qPrintable(table->item(0, 2)->text()));
        QVERIFY(dialog.reportText().contains(table->item(0, 2)->text()));

        // The reference: the entry and the action id the Audit log lists for this action.
        const ResultSet entry = q(oncall,
                                  "SELECT id, action_id FROM audit_entry_list"
                                  " WHERE action_id = $1",
                                  QueryParams().addUuid(actionId));
        QCOMPARE(entry.rowCount(), 1);
        const QString reference = QStringLiteral("audit entry %1 \u00b7 action id %2")
                                      .arg(entry.text(0, 0), entry.text(0, 1));
        QCOMPARE(entry.text(0, 1), actionId.toString(QUuid::WithoutBraces));
        QVERIFY2(labelContaining(dialog, QStringLiteral("Audit log:"))
                     .contains(QStringLiteral("<code>%1</code>").arg(reference)),
                 qPrintable(labelContaining(dialog, QStringLiteral("Audit log:"))));
        QVERIFY(dialog.reportText().contains(QStringLiteral("audit log: ") + reference));
    }

    // A bulk requeue in two chunks: its totals name exactly the two audit entries (and their
    // action ids) that the Audit log holds for the bulk.
    void bulkReferenceNamesEveryChunksAuditEntry()
    {
        const QList<qint64> ids = deadLetters(3);
        auto session = m_db->openSession(m_db->consoleTcpSettingsAs(m_oncall, kPassword));
        QVERIFY2(session, qPrintable(m_db->error()));
        BulkActionRunner runner(session.get());
        QSignalSpy finished(&runner, &BulkActionRunner::finished);
        BulkActionRunner::Request request;
        request.action = BulkActionRunner::Action::Requeue;
        for (qint64 id : ids)
            request.targets << BulkActionRunner::Target { id, 1 };
        request.reason = QStringLiteral("provider back");
        request.osUser = QStringLiteral("tester");
        request.chunkSize = 2;
        runner.start(request);
        QVERIFY(finished.wait(20000));
        const BulkActionRunner::Totals &totals = runner.totals();
        QCOMPARE(totals.appliedIds, ids);
        const ResultSet entries
            = q(m_admin,
                "SELECT id, action_id FROM redrive.audit_entry_list"
                " WHERE outcome_text::jsonb ->> 'bulk_id' = $1 ORDER BY id",
                QueryParams().addText(runner.bulkId().toString(QUuid::WithoutBraces)));
        QCOMPARE(entries.rowCount(), 2);
        QCOMPARE(
            totals.auditIds,
            (QList<qint64> { entries.bigInt(0, 0).value_or(0), entries.bigInt(1, 0).value_or(0) }));
        QCOMPARE(totals.actionIds, (QStringList { entries.text(0, 1), entries.text(1, 1) }));
        QCOMPARE(display::auditReference(totals.auditIds, totals.actionIds),
                 QStringLiteral("audit entries %1, %2 \u00b7 action ids %3, %4")
                     .arg(entries.text(0, 0), entries.text(1, 0), entries.text(0, 1),
                          entries.text(1, 1)));
    }

    // The follow-up line after a requeue of four: waiting, in flight, succeeded, dead again,
    // then settled.
    void followUpSaysWhereTheRequeuedWent()
    {
        const QList<qint64> ids = deadLetters(4);
        PgConnection oncall
            = test::TestDatabase::connectWith(m_db->consoleTcpSettingsAs(m_oncall, kPassword));
        QUuid actionId;
        QCOMPARE(requeue(oncall, ids, 1, &actionId).value(QStringLiteral("applied")).toInt(), 4);

        auto session = m_db->openSession(m_db->consoleTcpSettingsAs(m_oncall, kPassword));
        QVERIFY2(session, qPrintable(m_db->error()));
        RequeueFollowUpBar bar;
        QSignalSpy updated(&bar, &RequeueFollowUpBar::updated);
        bar.follow(session.get(), ids);
        QVERIFY(updated.wait(10000));
        QCOMPARE(bar.text(), QStringLiteral("Requeue of 4: 4 waiting for the worker"));

        // The worker carried out three requeues: one succeeded, one died again, one still runs.
        const QByteArray carriedOut
            = "UPDATE redrive.outbox o SET status = 'done', processed_at = clock_timestamp()"
              "  FROM redrive.dead_letter d"
              " WHERE o.command = 'requeue' AND o.target_id = d.job_id::text AND d.id = ANY ($1)";
        q(m_admin, carriedOut, QueryParams().addBigIntArray(ids.mid(0, 3)));
        q(m_admin,
          "UPDATE redrive.dead_letter SET status = 'resolved',"
          " resolution = 'succeeded_after_requeue', resolved_at = clock_timestamp() WHERE id = $1",
          QueryParams().addBigInt(ids[0]));
        q(m_admin, "UPDATE redrive.dead_letter SET status = 'open' WHERE id = $1",
          QueryParams().addBigInt(ids[1]));
        QTRY_COMPARE_WITH_TIMEOUT(bar.text(),
                                  QStringLiteral("Requeue of 4: 1 waiting for the worker \u00b7 "
                                                 "1 in flight \u00b7 1 succeeded after requeue "
                                                 "\u00b7 1 dead again"),
                                  10000);

        q(m_admin, carriedOut, QueryParams().addBigIntArray(ids));
        q(m_admin,
          "UPDATE redrive.dead_letter SET status = 'resolved',"
          " resolution = 'succeeded_after_requeue', resolved_at = clock_timestamp()"
          " WHERE id = ANY ($1)",
          QueryParams().addBigIntArray(ids.mid(2)));
        QTRY_COMPARE_WITH_TIMEOUT(bar.text(),
                                  QStringLiteral("Requeue of 4: 3 succeeded after requeue \u00b7 "
                                                 "1 dead again \u2014 settled"),
                                  10000);
    }
};

QTEST_MAIN(TestActionFollowUp)
#include "tst_action_follow_up.moc"
