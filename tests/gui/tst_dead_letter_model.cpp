// SPDX-License-Identifier: GPL-3.0-or-later
// The dead-letter list model on a real PostgreSQL: counts per filter equal
// count(*) in SQL, paging yields each row once and in order under QAbstractItemModelTester, and
// the literal search matches exactly the rows that contain the text. Paging stays exact while
// another session changes rows (every sortable order pages through a frozen pass), and the rows
// shown are read again in place, keeping the view's place.
#include "models/db/database_session.h"
#include "models/dead_letter_model.h"
#include "models/display_format.h"
#include "tests/support/test_database.h"
#include "views/result_table_view.h"

#include <QAbstractItemModelTester>
#include <QScopeGuard>
#include <QSignalSpy>
#include <QTest>
#include <QTimeZone>
#include <signal.h>

using namespace redrive;
using namespace redrive::db;

namespace {

// 2,050 dead letters with ties on dead_at, several queues, kinds, statuses and classes, and
// messages and keys holding the characters LIKE treats specially.
const char kSeed[] = R"sql(
INSERT INTO redrive.job (queue, kind, payload, state)
SELECT (ARRAY['payments','emails','webhooks'])[1 + g % 3],
       (ARRAY['charge_card','send_receipt','process_webhook','sync_ledger'])[1 + g % 4],
       jsonb_build_object('n', g), 'dead'
  FROM generate_series(1, 2050) g;
INSERT INTO redrive.dead_letter (job_id, queue, kind, status, error_class, error_code, last_error,
                                 attempts, idempotency_key, dead_at)
SELECT j.id, j.queue, j.kind,
       (ARRAY['open','open','open','requeued','resolved'])[1 + j.id % 5],
       (ARRAY['transient','permanent','ambiguous'])[1 + j.id % 3],
       'code_' || (j.id % 7),
       (ARRAY['timeout after 30 s', '100% of quota used', 'field user_name invalid',
              'O''Brien not found', 'path C:\temp\x missing', 'array[0] out of range',
              'plain failure'])[1 + j.id % 7] || ' #' || j.id,
       1 + j.id % 8,
       CASE WHEN j.id % 11 = 0 THEN 'key_' || j.id ELSE 'k-' || j.id END,
       timestamptz '2026-11-20 12:00:00+00' - (j.id / 3) * interval '1 minute'
                                          - (j.id % 3) * interval '1 microsecond' * 0
  FROM redrive.job j;
)sql";

} // namespace

class TestDeadLetterModel : public QObject
{
    Q_OBJECT
private:
    std::unique_ptr<test::TestDatabase> m_db;
    PgConnection m_admin;
    std::unique_ptr<DatabaseSession> m_session;

    // Loads every page; returns the ids in model order.
    static QList<qint64> loadAll(DeadLetterModel &model)
    {
        if (!QTest::qWaitFor([&] { return !model.isLoading(); }, 10000))
            return {};
        while (model.canFetchMore({})) {
            model.fetchMore({});
            if (!QTest::qWaitFor([&] { return !model.isLoading(); }, 10000))
                break;
        }
        QList<qint64> ids;
        for (int r = 0; r < model.rowCount(); ++r)
            ids << model.idAt(r);
        return ids;
    }

    QList<qint64> sqlIds(const QByteArray &where, const QueryParams &params,
                         const QByteArray &order = "dead_at DESC, id DESC")
    {
        auto r = m_admin.exec(
            "SELECT id FROM redrive.dead_letter WHERE " + where + " ORDER BY " + order, params);
        if (!r)
            qFatal("%s", qPrintable(r.error().summary()));
        QList<qint64> ids;
        for (int i = 0; i < r->rowCount(); ++i)
            ids << r->bigInt(i, 0).value_or(0);
        return ids;
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_db = std::make_unique<test::TestDatabase>(QStringLiteral("dl_model"));
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

    void pagingYieldsEachRowOnceInOrder()
    {
        DeadLetterModel model(m_session.get());
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setFilter({});
        const QList<qint64> ids = loadAll(model);
        QCOMPARE(ids.size(), 2050);
        QCOMPARE(ids, sqlIds("true", {}));
        QCOMPARE(model.total(), 2050);
        QVERIFY(model.totalIsExact());
    }

    // Views and tests find a column by the result column it shows; the header says the same
    // name, so a column added anywhere in the list moves nothing.
    void columnsAreFoundByName()
    {
        DeadLetterModel model(m_session.get());
        const QStringList names = { QStringLiteral("dead_at"),     QStringLiteral("queue"),
                                    QStringLiteral("kind"),        QStringLiteral("status"),
                                    QStringLiteral("payment_ref"), QStringLiteral("amount_minor"),
                                    QStringLiteral("error_class"), QStringLiteral("last_error"),
                                    QStringLiteral("age_seconds"), QStringLiteral("id"),
                                    QStringLiteral("job_ref") };
        QSet<int> seen;
        for (const QString &name : names) {
            const int column = DeadLetterModel::column(name);
            QVERIFY2(column >= 0, qPrintable(name));
            QCOMPARE(model.headerData(column, Qt::Horizontal, kColumnNameRole).toString(), name);
            seen.insert(column);
        }
        QCOMPARE(seen.size(), names.size());
        QCOMPARE(DeadLetterModel::column(QStringLiteral("version")), -1); // copied, not shown
        QCOMPARE(DeadLetterModel::column(QStringLiteral("no_such_column")), -1);
    }

    void sortOrdersServedBySql_data()
    {
        QTest::addColumn<int>("column");
        QTest::addColumn<int>("order");
        QTest::addColumn<QByteArray>("sqlOrder");
        QTest::newRow("oldest first")
            << DeadLetterModel::column(QStringLiteral("dead_at")) << int(Qt::AscendingOrder)
            << QByteArray("dead_at ASC, id ASC");
        QTest::newRow("by queue") << DeadLetterModel::column(QStringLiteral("queue"))
                                  << int(Qt::AscendingOrder)
                                  << QByteArray("queue, dead_at DESC, id DESC");
        QTest::newRow("by status")
            << DeadLetterModel::column(QStringLiteral("status")) << int(Qt::AscendingOrder)
            << QByteArray("status, dead_at DESC, id DESC");
        QTest::newRow("by error class")
            << DeadLetterModel::column(QStringLiteral("error_class")) << int(Qt::AscendingOrder)
            << QByteArray("error_class, dead_at DESC, id DESC");
    }
    void sortOrdersServedBySql()
    {
        QFETCH(int, column);
        QFETCH(int, order);
        QFETCH(QByteArray, sqlOrder);
        DeadLetterModel model(m_session.get());
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        DeadLetterFilter f;
        f.statuses = { QStringLiteral("open") };
        model.setFilter(f);
        QTRY_VERIFY(!model.isLoading());
        model.sort(column, Qt::SortOrder(order));
        QCOMPARE(loadAll(model), sqlIds("status = 'open'", {}, sqlOrder));
    }

    void countsPerFilterEqualSql_data()
    {
        QTest::addColumn<DeadLetterFilter>("filter");
        QTest::addColumn<QByteArray>("where");
        DeadLetterFilter f;
        QTest::newRow("none") << f << QByteArray("true");
        f.statuses = { QStringLiteral("open") };
        QTest::newRow("status") << f << QByteArray("status = 'open'");
        f = {};
        f.queues = { QStringLiteral("payments"), QStringLiteral("emails") };
        QTest::newRow("queues") << f << QByteArray("queue IN ('payments', 'emails')");
        f = {};
        f.kinds = { QStringLiteral("sync_ledger") };
        QTest::newRow("kind") << f << QByteArray("kind = 'sync_ledger'");
        f = {};
        f.errorClasses = { QStringLiteral("ambiguous") };
        QTest::newRow("error class") << f << QByteArray("error_class = 'ambiguous'");
        f = {};
        f.from = QDateTime(QDate(2026, 11, 20), QTime(0, 0), QTimeZone::utc());
        f.until = QDateTime(QDate(2026, 11, 20), QTime(6, 30), QTimeZone::utc());
        QTest::newRow("time range") << f
                                    << QByteArray("dead_at >= '2026-11-20 00:00+00' AND dead_at"
                                                  " < '2026-11-20 06:30+00'");
        f = {};
        f.statuses = { QStringLiteral("open") };
        f.queues = { QStringLiteral("webhooks") };
        f.errorClasses = { QStringLiteral("ambiguous"), QStringLiteral("permanent") };
        QTest::newRow("combined") << f
                                  << QByteArray("status = 'open' AND queue = 'webhooks' AND"
                                                " error_class IN ('ambiguous', 'permanent')");
    }
    void countsPerFilterEqualSql()
    {
        QFETCH(DeadLetterFilter, filter);
        QFETCH(QByteArray, where);
        DeadLetterModel model(m_session.get());
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setFilter(filter);
        const QList<qint64> ids = loadAll(model);
        const QList<qint64> expected = sqlIds(where, {});
        QVERIFY(!expected.isEmpty());
        QTRY_COMPARE(model.total(), qint64(expected.size()));
        QVERIFY(model.totalIsExact());
        QCOMPARE(ids, expected);
    }

    void failureGroupFilter()
    {
        auto fp = m_admin.exec("SELECT fingerprint FROM redrive.dead_letter ORDER BY id LIMIT 1");
        DeadLetterFilter f;
        f.fingerprint = fp->text(0, 0);
        DeadLetterModel model(m_session.get());
        model.setFilter(f);
        QCOMPARE(loadAll(model), sqlIds("fingerprint = $1", QueryParams().addText(f.fingerprint)));
    }

    void literalSearch_data()
    {
        QTest::addColumn<QString>("text");
        QTest::newRow("percent") << QStringLiteral("%");
        QTest::newRow("underscore") << QStringLiteral("_");
        QTest::newRow("quote") << QStringLiteral("'");
        QTest::newRow("backslash") << QStringLiteral("\\");
        QTest::newRow("bracket") << QStringLiteral("[");
        QTest::newRow("100%") << QStringLiteral("100%");
        QTest::newRow("mixed case word") << QStringLiteral("o'brien");
        QTest::newRow("key") << QStringLiteral("key_1");
    }
    void literalSearch()
    {
        QFETCH(QString, text);
        DeadLetterFilter f;
        f.search = text;
        DeadLetterModel model(m_session.get());
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setFilter(f);
        const QList<qint64> got = loadAll(model);
        // Independent of LIKE: a plain case-insensitive substring test.
        const QList<qint64> expected
            = sqlIds("strpos(lower(last_error), lower($1)) > 0 OR strpos(lower(idempotency_key),"
                     " lower($1)) > 0",
                     QueryParams().addText(text));
        QVERIFY(!expected.isEmpty());
        QVERIFY(expected.size() < 2050); // it narrows: not everything matches
        QCOMPARE(got, expected);
    }

    void staleFilterResultsAreDropped()
    {
        DeadLetterModel model(m_session.get());
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        DeadLetterFilter a;
        a.queues = { QStringLiteral("payments") };
        DeadLetterFilter b;
        b.queues = { QStringLiteral("emails") };
        model.setFilter(a); // its page is on the way when b replaces it
        model.setFilter(b);
        const QList<qint64> ids = loadAll(model);
        QCOMPARE(ids, sqlIds("queue = 'emails'", {}));
    }

    void estimateAboveTheCap()
    {
        test::TestDatabase big(QStringLiteral("dl_model_big"));
        QVERIFY(big.isValid());
        PgConnection admin = big.connect();
        QVERIFY(admin
                    .execScript(R"sql(
            INSERT INTO redrive.job (queue, kind, payload, state)
            SELECT 'payments', 'charge_card', '{}', 'dead' FROM generate_series(1, 12000);
            INSERT INTO redrive.dead_letter (job_id, queue, kind, error_class, last_error, dead_at)
            SELECT id, queue, kind, 'transient', 'x', now() - id * interval '1 s' FROM redrive.job;
            ANALYZE redrive.dead_letter;)sql")
                    .ok());
        const auto session = big.openSession(big.consoleSettings());
        QVERIFY2(session, qPrintable(big.error()));
        DeadLetterModel model(session.get());
        QSignalSpy total(&model, &DeadLetterModel::totalChanged);
        model.setFilter({});
        QTRY_VERIFY_WITH_TIMEOUT(model.total() > 0, 10000);
        QVERIFY(!model.totalIsExact());
        QVERIFY2(model.total() > 10000 && model.total() < 15000,
                 qPrintable(QString::number(model.total())));
    }

    // Another session changes rows between page fetches, in every sortable order: one row not
    // yet shown takes the sort values (status, queue, kind, error class) of the row now first in
    // that order and a time just before it, so a keyset page would skip it; one row already
    // shown takes those of the row now last and a time after it, so a keyset page would list it
    // again. The ids the model lists are exactly the ids in that order at the start, each once.
    void pagingStaysExactWhileRowsChange_data()
    {
        QTest::addColumn<int>("column");
        QTest::addColumn<int>("order");
        QTest::addColumn<QByteArray>("sqlOrder");
        QTest::addColumn<int>("towardsFirst"); // seconds that move a row ahead in this order
        QTest::newRow("newest first")
            << DeadLetterModel::column(QStringLiteral("dead_at")) << int(Qt::DescendingOrder)
            << QByteArray("dead_at DESC, id DESC") << 1;
        QTest::newRow("oldest first")
            << DeadLetterModel::column(QStringLiteral("dead_at")) << int(Qt::AscendingOrder)
            << QByteArray("dead_at ASC, id ASC") << -1;
        QTest::newRow("by status")
            << DeadLetterModel::column(QStringLiteral("status")) << int(Qt::AscendingOrder)
            << QByteArray("status, dead_at DESC, id DESC") << 1;
        QTest::newRow("by queue") << DeadLetterModel::column(QStringLiteral("queue"))
                                  << int(Qt::AscendingOrder)
                                  << QByteArray("queue, dead_at DESC, id DESC") << 1;
        QTest::newRow("by kind") << DeadLetterModel::column(QStringLiteral("kind"))
                                 << int(Qt::AscendingOrder)
                                 << QByteArray("kind, dead_at DESC, id DESC") << 1;
        QTest::newRow("by error class")
            << DeadLetterModel::column(QStringLiteral("error_class")) << int(Qt::AscendingOrder)
            << QByteArray("error_class, dead_at DESC, id DESC") << 1;
    }
    void pagingStaysExactWhileRowsChange()
    {
        QFETCH(int, column);
        QFETCH(int, order);
        QFETCH(QByteArray, sqlOrder);
        QFETCH(int, towardsFirst);
        test::TestDatabase db(QStringLiteral("dl_paging"));
        QVERIFY2(db.isValid(), qPrintable(db.error()));
        PgConnection other = db.connect();
        QVERIFY(other.execScript(kSeed).ok());
        auto session = db.openSession(db.consoleSettings());
        QVERIFY(session);
        auto idsInOrder = [&] {
            auto r = other.exec("SELECT id FROM redrive.dead_letter ORDER BY " + sqlOrder);
            QList<qint64> ids;
            for (int i = 0; r && i < r->rowCount(); ++i)
                ids << r->bigInt(i, 0).value_or(0);
            return ids;
        };
        // `target` takes the sort values of `source` and a time `seconds` from its.
        auto moveNextTo = [&](qint64 target, qint64 source, int seconds) {
            return other
                .exec("UPDATE redrive.dead_letter d SET status = s.status, queue = s.queue,"
                      " kind = s.kind, error_class = s.error_class,"
                      " dead_at = s.dead_at + make_interval(secs => $3), version = d.version + 1"
                      " FROM redrive.dead_letter s WHERE s.id = $2 AND d.id = $1",
                      QueryParams().addBigInt(target).addBigInt(source).addInt(seconds))
                .ok();
        };

        // No QAbstractItemModelTester here: it fetches the next page as soon as rows arrive,
        // which leaves no moment between two fetches for the other session to act (the other
        // tests of this file run the same model under it).
        DeadLetterModel model(session.get());
        model.setFilter({});
        QTRY_VERIFY(!model.isLoading());
        model.sort(column, Qt::SortOrder(order));
        const QList<qint64> atStart = idsInOrder();
        QCOMPARE(atStart.size(), 2050);
        QTRY_VERIFY(!model.isLoading());
        QCOMPARE(model.rowCount(), DeadLetterModel::kPageSize);

        QList<qint64> moved;
        qint64 lastAhead = 0;
        while (model.canFetchMore({})) {
            const int shown = model.rowCount();
            const QList<qint64> now = idsInOrder();
            // A row two pages ahead jumps before the boundary; the first row shown jumps after.
            const qint64 ahead = atStart.value(shown + DeadLetterModel::kPageSize + 7);
            if (ahead != 0 && !moved.contains(ahead)) {
                QVERIFY(moveNextTo(ahead, now.first(), towardsFirst));
                moved << ahead;
                lastAhead = ahead;
            }
            const qint64 behind = model.idAt(shown / 2);
            if (!moved.contains(behind)) {
                QVERIFY(moveNextTo(behind, now.last(), -towardsFirst));
                moved << behind;
            }
            model.fetchMore({});
            QTRY_VERIFY(!model.isLoading());
        }
        QList<qint64> seen;
        for (int r = 0; r < model.rowCount(); ++r)
            seen << model.idAt(r);
        QCOMPARE(seen.size(), 2050);
        QCOMPARE(seen, atStart);
        QCOMPARE(QSet<qint64>(seen.cbegin(), seen.cend()).size(), 2050);
        // The changes did reorder the table: a keyset over the current values would differ.
        QVERIFY(moved.size() >= 15);
        QVERIFY(idsInOrder() != atStart);
        // A row changed before its page was fetched shows what it is now, in its place at the
        // start.
        auto status = other.exec("SELECT status, queue FROM redrive.dead_letter WHERE id = $1",
                                 QueryParams().addBigInt(lastAhead));
        QVERIFY(status && status->rowCount() == 1);
        const int rowOfLast = model.rowOf(QStringLiteral("id"), lastAhead);
        QCOMPARE(rowOfLast, int(atStart.indexOf(lastAhead)));
        QCOMPARE(model.text(rowOfLast, QStringLiteral("status")), status->text(0, 0));
        QCOMPARE(model.text(rowOfLast, QStringLiteral("queue")), status->text(0, 1));
    }

    // The first page of a pass is shown before the rest of the pass's ids are read: when it is
    // in, the model holds exactly the first 200 ids of the list and has read no more of it
    // (the rest is read after the first page, on the model's own connection). Another session
    // then changes rows before the rest is read: the pass is one snapshot, so the rest still
    // lists every row once, in the order of the start.
    void firstPageComesBeforeTheRestOfThePass()
    {
        test::TestDatabase db(QStringLiteral("dl_first_page"));
        QVERIFY2(db.isValid(), qPrintable(db.error()));
        PgConnection other = db.connect();
        QVERIFY(other.execScript(kSeed).ok());
        auto session = db.openSession(db.consoleSettings());
        QVERIFY(session);
        const auto idsNow = [&] {
            auto r
                = other.exec("SELECT id FROM redrive.dead_letter ORDER BY dead_at DESC, id DESC");
            QList<qint64> ids;
            for (int i = 0; r && i < r->rowCount(); ++i)
                ids << r->bigInt(i, 0).value_or(0);
            return ids;
        };
        const QList<qint64> atStart = idsNow();
        QCOMPARE(atStart.size(), 2050);

        DeadLetterModel model(session.get());
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        QList<qint64> firstPage;
        int frozenAtFirstPage = -1;
        bool completeAtFirstPage = true;
        bool changed = false;
        connect(&model, &DeadLetterModel::pageLoaded, this, [&] {
            if (frozenAtFirstPage >= 0)
                return;
            for (int r = 0; r < model.rowCount(); ++r)
                firstPage << model.idAt(r);
            frozenAtFirstPage = model.frozenCount();
            completeAtFirstPage = model.isFrozenComplete();
            // Before the rest of the pass is read: the row 300th at the start moves to the top,
            // the 10th (shown) to the bottom, the 1000th is deleted.
            changed
                = other
                      .exec("UPDATE redrive.dead_letter SET dead_at = dead_at + interval '1 day'"
                            " WHERE id = $1",
                            QueryParams().addBigInt(atStart.at(299)))
                      .ok()
                && other
                       .exec("UPDATE redrive.dead_letter SET dead_at = dead_at - interval '1 day'"
                             " WHERE id = $1",
                             QueryParams().addBigInt(atStart.at(9)))
                       .ok()
                && other
                       .exec("DELETE FROM redrive.dead_letter WHERE id = $1",
                             QueryParams().addBigInt(atStart.at(999)))
                       .ok();
        });
        model.setFilter({});
        QTRY_VERIFY(frozenAtFirstPage >= 0);
        QCOMPARE(firstPage, atStart.mid(0, DeadLetterModel::kPageSize));
        QCOMPARE(frozenAtFirstPage, DeadLetterModel::kPageSize);
        QVERIFY(!completeAtFirstPage);
        QVERIFY(changed);
        QVERIFY(idsNow() != atStart);

        const QList<qint64> ids = loadAll(model);
        QVERIFY(model.isFrozenComplete());
        QCOMPARE(model.frozenCount(), 2050);
        QList<qint64> expected = atStart;
        expected.removeAt(999); // deleted: no longer there to show
        QCOMPARE(ids, expected);
        QCOMPARE(QSet<qint64>(ids.cbegin(), ids.cend()).size(), 2049);
    }

    // A reload (a filter change) while a pass is still being read abandons it: the rest of the
    // old pass's ids never arrive (no rows of the old filter), its transaction is rolled back and
    // nothing of it is left on the server. The pass is held back by stopping its backend
    // (SIGSTOP) as soon as its first page is in.
    void reloadDuringAPassCancelsIt()
    {
        test::TestDatabase db(QStringLiteral("dl_pass_cancel"));
        QVERIFY2(db.isValid(), qPrintable(db.error()));
        PgConnection other = db.connect();
        QVERIFY(other.execScript(kSeed).ok());
        auto session = db.openSession(db.consoleSettings());
        QVERIFY(session);
        DeadLetterModel model(session.get());
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        // A first pass opens the model's own connection.
        model.setFilter({});
        QTRY_VERIFY(model.isFrozenComplete());
        QCOMPARE(session->ownConnectionCount(), 1);
        const QByteArray ownBackend
            = "SELECT pid, state, query FROM pg_stat_activity"
              " WHERE datname = current_database() AND application_name = 'redrive (own)'";
        int pid = 0;
        QTRY_VERIFY([&] {
            auto r = other.exec(ownBackend);
            pid = r && r->rowCount() == 1 && r->text(0, 2) == QStringLiteral("COMMIT")
                ? r->integer(0, 0).value_or(0)
                : 0;
            return pid > 0;
        }());

        bool stopped = false;
        auto resume = qScopeGuard([&] {
            if (stopped)
                ::kill(pid_t(pid), SIGCONT);
        });
        QMetaObject::Connection stopAtFirstPage
            = connect(&model, &DeadLetterModel::pageLoaded, this, [&] {
                  if (!stopped)
                      stopped = ::kill(pid_t(pid), SIGSTOP) == 0;
              });
        DeadLetterFilter payments;
        payments.queues = { QStringLiteral("payments") };
        model.setFilter(payments);
        QTRY_VERIFY(stopped);
        disconnect(stopAtFirstPage);
        QCOMPARE(model.rowCount(), DeadLetterModel::kPageSize);
        QVERIFY(!model.isFrozenComplete());
        QCOMPARE(model.frozenCount(), DeadLetterModel::kPageSize);
        // The pass is held back with its transaction open.
        {
            auto r = other.exec(ownBackend);
            QVERIFY(r && r->rowCount() == 1);
            QCOMPARE(r->text(0, 1), QStringLiteral("idle in transaction"));
        }

        DeadLetterFilter emails;
        emails.queues = { QStringLiteral("emails") };
        model.setFilter(emails);
        QCOMPARE(model.rowCount(), 0);
        QTest::qWait(300); // the cancel goes out while the backend is stopped
        QCOMPARE(::kill(pid_t(pid), SIGCONT), 0);
        stopped = false;

        const QList<qint64> ids = loadAll(model);
        QCOMPARE(ids, sqlIds("queue = 'emails'", {}));
        QCOMPARE(ids.size(), 684);
        QVERIFY(model.isFrozenComplete());
        QCOMPARE(model.frozenCount(), 684);
        // Nothing of either pass is left on the server: the own backend is idle, its last
        // statement the new pass's COMMIT; no backend of this console holds a transaction open.
        QTRY_VERIFY([&] {
            auto r = other.exec(ownBackend);
            return r && r->rowCount() == 1 && r->integer(0, 0).value_or(0) == pid
                && r->text(0, 1) == QStringLiteral("idle")
                && r->text(0, 2) == QStringLiteral("COMMIT");
        }());
        // Waited for: the list's total may still be counted on another connection meanwhile (a
        // statement that ends), but a transaction of a pass left open would stay.
        const QByteArray open = "SELECT coalesce(string_agg(application_name || ': ' || state"
                                "                           || ': ' || query, '; '), '')"
                                "  FROM pg_stat_activity"
                                " WHERE datname = current_database() AND pid <> pg_backend_pid()"
                                "   AND (state <> 'idle' OR backend_xid IS NOT NULL"
                                "        OR backend_xmin IS NOT NULL)";
        QTRY_COMPARE_WITH_TIMEOUT(other.exec(open)->text(0, 0), QString(), 5000);
    }

    // Another session resolves, requeues and claims rows the operator sees: rereadShown() puts
    // their new values in place, the rows keep their order, and the view keeps its selection,
    // current row and the row at the top.
    void rowsShownAreReadAgainInPlace()
    {
        test::TestDatabase db(QStringLiteral("dl_reread"));
        QVERIFY2(db.isValid(), qPrintable(db.error()));
        PgConnection other = db.connect();
        QVERIFY(other.execScript(kSeed).ok());
        auto session = db.openSession(db.consoleSettings());
        QVERIFY(session);
        DeadLetterModel model(session.get());
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        ResultTableView view;
        view.setModel(&model);
        view.setRowKey(QStringLiteral("id"));
        view.resize(900, 400);
        view.show();
        DeadLetterFilter open;
        open.statuses = { QStringLiteral("open") };
        model.setFilter(open);
        // The tester fetches every page as rows arrive: all 1,230 open dead letters.
        QTRY_VERIFY(model.isAtEnd() && !model.isLoading());
        QCOMPARE(model.rowCount(), 1230);
        view.scrollTo(model.index(250, 0), QAbstractItemView::PositionAtTop);
        const int top = view.rowAt(0);
        QVERIFY(top > 200);
        view.setCurrentIndex(model.index(260, DeadLetterModel::column(QStringLiteral("status"))));
        view.selectionModel()->select(
            model.index(260, 0), QItemSelectionModel::SelectCurrent | QItemSelectionModel::Rows);
        const qint64 resolved = model.idAt(260);
        const qint64 requeued = model.idAt(261);
        const qint64 claimed = model.idAt(3);
        const QList<qint64> before = [&] {
            QList<qint64> ids;
            for (int r = 0; r < model.rowCount(); ++r)
                ids << model.idAt(r);
            return ids;
        }();
        QVERIFY(other
                    .exec("UPDATE redrive.dead_letter SET status = 'resolved',"
                          " resolution = 'duplicate', resolved_by = 'someone_else',"
                          " resolved_at = clock_timestamp(), version = version + 1 WHERE id = $1",
                          QueryParams().addBigInt(resolved))
                    .ok());
        QVERIFY(other
                    .exec("UPDATE redrive.dead_letter SET status = 'requeued',"
                          " dead_at = dead_at - interval '3 days', version = version + 1"
                          " WHERE id = $1",
                          QueryParams().addBigInt(requeued))
                    .ok());
        QVERIFY(other
                    .exec("UPDATE redrive.dead_letter SET claimed_by = 'dana',"
                          " claimed_at = clock_timestamp(), version = version + 1 WHERE id = $1",
                          QueryParams().addBigInt(claimed))
                    .ok());
        QSignalSpy reread(&model, &DeadLetterModel::rowsReread);
        QSignalSpy reset(&model, &QAbstractItemModel::modelReset);
        model.rereadShown();
        QVERIFY(reread.wait(10000));
        QCOMPARE(reset.size(), 0); // same rows, same order: changed in place
        QCOMPARE(model.rowCount(), 1230);
        QCOMPARE(model.idAt(260), resolved);
        QCOMPARE(model.data(model.index(260, DeadLetterModel::column(QStringLiteral("status"))))
                     .toString(),
                 QStringLiteral("resolved"));
        QCOMPARE(model.data(model.index(261, DeadLetterModel::column(QStringLiteral("status"))))
                     .toString(),
                 QStringLiteral("requeued"));
        QCOMPARE(model.text(3, QStringLiteral("claimed_by")), QStringLiteral("dana"));
        QCOMPARE(model.text(260, QStringLiteral("version")), QStringLiteral("2"));
        QCOMPARE(model.data(model.index(3, 0), DeadLetterModel::VersionRole).toInt(), 2);
        QList<qint64> after;
        for (int r = 0; r < model.rowCount(); ++r)
            after << model.idAt(r);
        QCOMPARE(after, before);
        QCOMPARE(view.currentIndex().row(), 260);
        QCOMPARE(view.currentIndex().column(), DeadLetterModel::column(QStringLiteral("status")));
        QCOMPARE(view.selectionModel()->selectedRows().size(), 1);
        QCOMPARE(view.selectionModel()->selectedRows().first().row(), 260);
        QCOMPARE(view.rowAt(0), top);
    }

    void formatting()
    {
        QCOMPARE(display::age(45), QStringLiteral("45 s"));
        QCOMPARE(display::age(3 * 3600 + 12 * 60), QStringLiteral("3 h 12 min"));
        QCOMPARE(display::age(2 * 86400 + 3 * 3600), QStringLiteral("2 d 3 h"));
        const QDateTime t(QDate(2026, 11, 29), QTime(16, 46, 27), QTimeZone::utc());
        QCOMPARE(display::time(t, true), QStringLiteral("2026-11-29 16:46:27 UTC"));
        QVERIFY(display::time(t, false).contains(QLatin1Char(':')));
    }
};

QTEST_MAIN(TestDeadLetterModel)
#include "tst_dead_letter_model.moc"
