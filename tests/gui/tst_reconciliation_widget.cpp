// SPDX-License-Identifier: GPL-3.0-or-later
// The reconciliation tab on a real PostgreSQL: counts per kind equal
// count(*) in SQL; paging through the mismatches yields each once, in the statement's order,
// across more than two pages; kind, status and run filters narrow exactly as SQL does; an
// amount mismatch shows both amounts as money with the differing cells marked, and the detail
// pane shows both records. Renders the tab to reconciliation.png for a look.
#include "models/db/database_session.h"
#include "models/display_format.h"
#include "models/mismatch_count_model.h"
#include "models/mismatch_model.h"
#include "models/reconciliation_run_model.h"
#include "tests/support/test_database.h"
#include "tests/support/widget_lookup.h"
#include "views/reconciliation_widget.h"
#include "views/result_table_view.h"

#include <QAbstractItemModelTester>
#include <QAction>
#include <QApplication>
#include <QClipboard>
#include <QDir>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QSignalSpy>
#include <QTest>
#include <QToolButton>

using namespace redrive;
using namespace redrive::db;

namespace {

// Three runs (the last one failed) and 481 mismatches of every kind and several statuses, in
// groups of three sharing detected_at (ties broken by id); plus one amount mismatch of 12.34 USD
// against 12.43 USD detected last, so it heads the list.
const char kSeed[] = R"sql(
INSERT INTO redrive.reconciliation_run
       (provider, started_at, finished_at, status, checked_count, mismatch_count, error_message)
VALUES ('stripe', clock_timestamp() - interval '2 days',
        clock_timestamp() - interval '2 days' + interval '4 minutes', 'succeeded', 5210, 241, NULL),
       ('stripe', clock_timestamp() - interval '1 day',
        clock_timestamp() - interval '1 day' + interval '5 minutes', 'succeeded', 5302, 241, NULL),
       ('adyen', clock_timestamp() - interval '3 hours',
        clock_timestamp() - interval '3 hours' + interval '1 minute', 'failed', 812, 0,
        'provider API returned 503 after 3 retries');
WITH m AS (
    SELECT g, (ARRAY['missing_internal', 'missing_external', 'amount_mismatch',
                     'currency_mismatch', 'status_mismatch', 'duplicate_external'])[1 + g % 6] AS kind,
           'pay_' || lpad(g::text, 5, '0') AS payment_ref, 'ord_' || (10000 + g) AS order_ref,
           500 + g * 37 AS amount
      FROM generate_series(1, 480) g
), sides AS (
    SELECT m.*,
           CASE WHEN kind <> 'missing_internal' THEN amount END AS ia,
           CASE WHEN kind = 'missing_external' THEN NULL
                WHEN kind = 'amount_mismatch' THEN amount + (1 + g % 5) * 100
                ELSE amount END AS ea,
           CASE WHEN kind <> 'missing_internal' THEN 'USD' END AS ic,
           CASE WHEN kind = 'missing_external' THEN NULL
                WHEN kind = 'currency_mismatch' THEN 'EUR' ELSE 'USD' END AS ec,
           CASE WHEN kind <> 'missing_internal' THEN 'succeeded' END AS ist,
           CASE WHEN kind = 'missing_external' THEN NULL
                WHEN kind = 'status_mismatch' THEN 'refunded' ELSE 'succeeded' END AS est
      FROM m
)
INSERT INTO redrive.reconciliation_mismatch
       (run_id, kind, payment_ref, order_ref, internal_amount_minor, external_amount_minor,
        internal_currency, external_currency, internal_status, external_status,
        internal_record, external_record, status, detected_at)
SELECT 1 + g % 2, kind, payment_ref, order_ref, ia, ea, ic, ec, ist, est,
       CASE WHEN ia IS NOT NULL THEN jsonb_build_object('payment_id', payment_ref,
            'order_id', order_ref, 'amount_minor', ia, 'currency', ic, 'status', ist,
            'customer', 'cus_' || (g % 17)) END,
       CASE WHEN ea IS NOT NULL THEN jsonb_build_object('payment_id', payment_ref,
            'order_id', order_ref, 'amount_minor', ea, 'currency', ec, 'status', est,
            'customer', 'cus_' || (g % 17), 'provider_charge', 'ch_' || md5(payment_ref)) END,
       (ARRAY['open', 'open', 'resolved', 'compensation_pending', 'compensated'])[1 + g % 5],
       clock_timestamp() - interval '1 hour' - (g / 3) * interval '5 minutes'
  FROM sides;
INSERT INTO redrive.reconciliation_mismatch
       (run_id, kind, payment_ref, order_ref, internal_amount_minor, external_amount_minor,
        internal_currency, external_currency, internal_status, external_status,
        internal_record, external_record, status, detected_at)
VALUES (2, 'amount_mismatch', 'pay_amount_check', 'ord_777', 1234, 1243, 'USD', 'USD',
        'succeeded', 'succeeded',
        '{"payment_id": "pay_amount_check", "amount_minor": 1234, "currency": "USD", "status": "succeeded"}',
        '{"payment_id": "pay_amount_check", "amount_minor": 1243, "currency": "USD", "status": "succeeded", "provider_charge": "ch_42"}',
        'open', clock_timestamp());
)sql";

} // namespace

class TestReconciliationWidget : public QObject
{
    Q_OBJECT
private:
    std::unique_ptr<test::TestDatabase> m_db;
    PgConnection m_admin;
    std::unique_ptr<DatabaseSession> m_session;

    QList<qint64> sqlIds(const QByteArray &where)
    {
        auto r = m_admin.exec("SELECT id FROM redrive.reconciliation_mismatch WHERE " + where
                              + " ORDER BY detected_at DESC, id DESC");
        if (!r)
            qFatal("%s", qPrintable(r.error().summary()));
        QList<qint64> ids;
        for (int i = 0; i < r->rowCount(); ++i)
            ids << r->bigInt(i, 0).value_or(0);
        return ids;
    }
    qint64 sqlCount(const QByteArray &sql)
    {
        auto r = m_admin.exec(sql);
        if (!r)
            qFatal("%s", qPrintable(r.error().summary()));
        return r->bigInt(0, 0).value_or(-1);
    }

    static bool loadAll(MismatchModel &model)
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
    static QList<qint64> ids(const MismatchModel &model)
    {
        QList<qint64> out;
        for (int row = 0; row < model.rowCount(); ++row)
            out << model.idAt(row);
        return out;
    }
    static int rowOfPayment(const MismatchModel &model, const QString &payment)
    {
        for (int row = 0; row < model.rowCount(); ++row) {
            if (model.text(row, QStringLiteral("payment_ref")) == payment)
                return row;
        }
        return -1;
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_db = std::make_unique<test::TestDatabase>(QStringLiteral("recon_widget"));
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

    void countsByKindEqualSql()
    {
        ReconciliationWidget widget(m_session.get());
        QAbstractItemModelTester t1(widget.runModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester t2(widget.countModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
        QAbstractItemModelTester t3(widget.mismatchModel(),
                                    QAbstractItemModelTester::FailureReportingMode::QtTest);
        widget.refresh();
        QTRY_VERIFY_WITH_TIMEOUT(!widget.isLoading(), 10000);
        const MismatchCountModel *counts = widget.countModel();
        QCOMPARE(counts->rowCount(), 6);
        for (const QString &kind : MismatchModel::allKinds()) {
            const QByteArray k = kind.toUtf8();
            QCOMPARE(counts->count(kind),
                     sqlCount("SELECT count(*) FROM redrive.reconciliation_mismatch WHERE kind = '"
                              + k + "'"));
            QCOMPARE(counts->openCount(kind),
                     sqlCount("SELECT count(*) FROM redrive.reconciliation_mismatch WHERE kind = '"
                              + k + "' AND status = 'open'"));
        }
        QCOMPARE(widget.runModel()->rowCount(), 3);
        QCOMPARE(widget.runModel()->text(0, QStringLiteral("provider")), QStringLiteral("adyen"));
    }

    void pagingYieldsEachMismatchOnce()
    {
        MismatchModel model(m_session.get());
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setFilter({});
        QVERIFY(loadAll(model));
        QVERIFY2(model.pageCount() >= 3, qPrintable(QString::number(model.pageCount())));
        const QList<qint64> got = ids(model);
        QCOMPARE(got.size(), 481);
        QCOMPARE(QSet<qint64>(got.begin(), got.end()).size(), 481);
        QCOMPARE(got, sqlIds("true"));
    }

    void filtersEqualSql_data()
    {
        QTest::addColumn<QStringList>("kinds");
        QTest::addColumn<QStringList>("statuses");
        QTest::addColumn<qint64>("run");
        QTest::addColumn<QByteArray>("where");
        QTest::newRow("kind") << QStringList { QStringLiteral("amount_mismatch") } << QStringList()
                              << qint64(0) << QByteArray("kind = 'amount_mismatch'");
        QTest::newRow("two kinds, open")
            << QStringList { QStringLiteral("missing_internal"),
                             QStringLiteral("duplicate_external") }
            << QStringList { QStringLiteral("open") } << qint64(0)
            << QByteArray("kind IN ('missing_internal', 'duplicate_external') AND status = 'open'");
        QTest::newRow("run") << QStringList() << QStringList() << qint64(1)
                             << QByteArray("run_id = 1");
        QTest::newRow("run and status")
            << QStringList() << QStringList { QStringLiteral("resolved") } << qint64(2)
            << QByteArray("run_id = 2 AND status = 'resolved'");
        QTest::newRow("empty run")
            << QStringList() << QStringList() << qint64(3) << QByteArray("run_id = 3");
    }
    void filtersEqualSql()
    {
        QFETCH(QStringList, kinds);
        QFETCH(QStringList, statuses);
        QFETCH(qint64, run);
        QFETCH(QByteArray, where);
        MismatchModel model(m_session.get(), nullptr, 64);
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setFilter({ kinds, statuses, run });
        QVERIFY(loadAll(model));
        QCOMPARE(ids(model), sqlIds(where));
    }

    void amountMismatchShowsBothAmounts()
    {
        MismatchModel model(m_session.get());
        QAbstractItemModelTester tester(&model,
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        model.setFilter({ { QStringLiteral("amount_mismatch") }, {}, 0 });
        QVERIFY(loadAll(model));
        const int row = rowOfPayment(model, QStringLiteral("pay_amount_check"));
        QVERIFY(row >= 0);
        auto cell = [&](int column, int role = Qt::DisplayRole) {
            return model.index(row, column).data(role);
        };
        QCOMPARE(cell(MismatchModel::AmountOurs).toString(), QStringLiteral("12.34 USD"));
        QCOMPARE(cell(MismatchModel::AmountTheirs).toString(), QStringLiteral("12.43 USD"));
        QVERIFY(cell(MismatchModel::AmountOurs, MismatchModel::DiffersRole).toBool());
        QVERIFY(cell(MismatchModel::AmountTheirs, MismatchModel::DiffersRole).toBool());
        QVERIFY(cell(MismatchModel::AmountOurs, Qt::BackgroundRole).isValid());
        QVERIFY(!cell(MismatchModel::CurrencyOurs, MismatchModel::DiffersRole).toBool());
        QVERIFY(!cell(MismatchModel::StatusTheirs, Qt::BackgroundRole).isValid());
        // A missing side reads as missing, and differs.
        model.setFilter({ { QStringLiteral("missing_internal") }, {}, 0 });
        QVERIFY(loadAll(model));
        QVERIFY(model.rowCount() > 0);
        QCOMPARE(model.index(0, MismatchModel::AmountOurs).data().toString(),
                 QString(QChar(0x2014)));
        QVERIFY(model.index(0, MismatchModel::AmountTheirs)
                    .data()
                    .toString()
                    .endsWith(QStringLiteral(" USD")));
        QVERIFY(
            model.index(0, MismatchModel::StatusOurs).data(MismatchModel::DiffersRole).toBool());
    }

    void formatMoney_data()
    {
        QTest::addColumn<qint64>("minor");
        QTest::addColumn<QString>("currency");
        QTest::addColumn<QString>("text");
        QTest::newRow("usd") << qint64(1234) << QStringLiteral("USD")
                             << QStringLiteral("12.34 USD");
        QTest::newRow("cents") << qint64(5) << QStringLiteral("EUR") << QStringLiteral("0.05 EUR");
        QTest::newRow("negative") << qint64(-1205) << QStringLiteral("EUR")
                                  << QStringLiteral("-12.05 EUR");
        // Groups of three and no guessed exponent: display::money (models/display_format.h).
        QTest::newRow("jpy") << qint64(1200) << QStringLiteral("JPY")
                             << QStringLiteral("1,200 JPY");
        QTest::newRow("kwd") << qint64(1234) << QStringLiteral("KWD")
                             << QStringLiteral("1.234 KWD");
        QTest::newRow("no currency")
            << qint64(100) << QString() << QStringLiteral("100 minor units");
    }
    void formatMoney()
    {
        QFETCH(qint64, minor);
        QFETCH(QString, currency);
        QFETCH(QString, text);
        QCOMPARE(display::money(minor, currency), text);
    }

    void widgetFiltersByRunKindAndStatus()
    {
        ReconciliationWidget widget(m_session.get());
        widget.refresh();
        QTRY_VERIFY_WITH_TIMEOUT(!widget.isLoading(), 10000);

        // Selecting a run in the runs table narrows the list to it.
        auto *runs = widget.findChild<ResultTableView *>(QStringLiteral("runs"));
        QVERIFY(runs);
        const int runRow = widget.runModel()->rowOfRun(1);
        QVERIFY(runRow >= 0);
        runs->selectRow(runRow);
        QCOMPARE(widget.runFilter(), qint64(1));
        QCOMPARE(widget.mismatchModel()->filter().runId, qint64(1));
        QVERIFY(loadAll(*widget.mismatchModel()));
        QCOMPARE(ids(*widget.mismatchModel()), sqlIds("run_id = 1"));

        // Checking a kind narrows it further; a status too.
        MismatchCountModel *counts = widget.countModel();
        int kindRow = -1;
        for (int row = 0; row < counts->rowCount(); ++row) {
            if (counts->kindAt(row) == QLatin1String("status_mismatch"))
                kindRow = row;
        }
        QVERIFY(kindRow >= 0);
        QVERIFY(counts->setData(counts->index(kindRow, MismatchCountModel::Kind), int(Qt::Checked),
                                Qt::CheckStateRole));
        QCOMPARE(widget.mismatchModel()->filter().kinds,
                 QStringList { QStringLiteral("status_mismatch") });
        widget.setStatusFilter({ QStringLiteral("open") });
        QVERIFY(loadAll(*widget.mismatchModel()));
        QCOMPARE(ids(*widget.mismatchModel()),
                 sqlIds("run_id = 1 AND kind = 'status_mismatch' AND status = 'open'"));
        // The operator's way, the Status menu: unticking "open" lifts the status filter and the
        // button reads "any"; ticking it again narrows the list back.
        auto *statusButton = widget.findChild<QToolButton *>(QStringLiteral("statusFilter"));
        QVERIFY(statusButton);
        QCOMPARE(statusButton->text(), QStringLiteral("open"));
        QAction *open
            = test::menuAction(widget, QStringLiteral("statusFilter"), QStringLiteral("open"));
        QVERIFY(open);
        open->trigger();
        QVERIFY(widget.mismatchModel()->filter().statuses.isEmpty());
        QCOMPARE(statusButton->text(), QStringLiteral("any"));
        QVERIFY(loadAll(*widget.mismatchModel()));
        QCOMPARE(ids(*widget.mismatchModel()), sqlIds("run_id = 1 AND kind = 'status_mismatch'"));
        open->trigger();
        QCOMPARE(widget.mismatchModel()->filter().statuses, QStringList { QStringLiteral("open") });
        QCOMPARE(statusButton->text(), QStringLiteral("open"));

        // Refreshing keeps the filters and the selected run.
        widget.refresh();
        QTRY_VERIFY_WITH_TIMEOUT(!widget.isLoading(), 10000);
        QCOMPARE(widget.runFilter(), qint64(1));
        QCOMPARE(runs->selectionModel()->selectedRows().size(), 1);
        QCOMPARE(counts->checkedKinds(), QStringList { QStringLiteral("status_mismatch") });

        // "All runs" lifts the run filter.
        widget.setRunFilter(0);
        QVERIFY(runs->selectionModel()->selectedRows().isEmpty());
        QVERIFY(loadAll(*widget.mismatchModel()));
        QCOMPARE(ids(*widget.mismatchModel()),
                 sqlIds("kind = 'status_mismatch' AND status = 'open'"));
    }

    void detailShowsBothRecordsAndCopies()
    {
        ReconciliationWidget widget(m_session.get());
        widget.refresh();
        QTRY_VERIFY_WITH_TIMEOUT(!widget.isLoading(), 10000);
        QCOMPARE(widget.mismatchModel()->text(0, QStringLiteral("payment_ref")),
                 QStringLiteral("pay_amount_check"));
        widget.selectMismatch(0);
        QVERIFY(widget.internalRecordText().contains(QStringLiteral("\"amount_minor\": 1234")));
        QVERIFY(widget.externalRecordText().contains(QStringLiteral("\"amount_minor\": 1243")));
        QVERIFY(widget.externalRecordText().contains(QStringLiteral("ch_42")));

        auto *view = widget.findChild<ResultTableView *>(QStringLiteral("mismatches"));
        QVERIFY(view);
        QTest::keySequence(view, QKeySequence::Copy);
        const QJsonArray rows
            = QJsonDocument::fromJson(QApplication::clipboard()->text().toUtf8()).array();
        QCOMPARE(rows.size(), 1);
        const QJsonObject row = rows.first().toObject();
        QCOMPARE(row.value(QStringLiteral("internal_amount_minor")).toInteger(), 1234);
        QCOMPARE(row.value(QStringLiteral("external_record"))
                     .toObject()
                     .value(QStringLiteral("provider_charge"))
                     .toString(),
                 QStringLiteral("ch_42"));
    }

    void rendersToPng()
    {
        ReconciliationWidget widget(m_session.get());
        widget.resize(1280, 800);
        widget.show();
        QVERIFY(QTest::qWaitForWindowExposed(&widget));
        widget.refresh();
        QTRY_VERIFY_WITH_TIMEOUT(!widget.isLoading(), 10000);
        widget.selectMismatch(0);
        QVERIFY(!widget.internalRecordText().isEmpty());
        const QString dir = QStringLiteral(REDRIVE_TEST_OUTPUT_DIR);
        QVERIFY(QDir().mkpath(dir));
        const QString path = dir + QStringLiteral("/reconciliation.png");
        QVERIFY(widget.grab().save(path));
        qInfo("rendered %s", qPrintable(path));
    }

    // A payment reference of 10,000 characters grew the main window to 9,293 px and pushed
    // "Request refund…" and "Resolve mismatch…" off the screen; a "%1" in a reference was
    // rewritten. The title shows a bounded prefix literally, the buttons stay in view, and the
    // record below has the reference whole. Runs last: its mismatch is the newest.
    void longReferenceKeepsTheButtonsInView()
    {
        QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates));
        // 10,002 characters: 120 shown, 9,882 counted.
        const QString reference = QStringLiteral("pay%1%2") + QString(9995, QLatin1Char('R'));
        auto inserted
            = m_admin.exec("INSERT INTO redrive.reconciliation_mismatch"
                           " (run_id, kind, payment_ref, order_ref, internal_amount_minor,"
                           "  internal_currency, internal_status, internal_record, status,"
                           "  detected_at)"
                           " VALUES (2, 'missing_external', $1, 'ord%1%L2', 500, 'EUR',"
                           " 'succeeded', jsonb_build_object('payment_id', $1), 'open',"
                           " clock_timestamp() + interval '1 minute') RETURNING id",
                           QueryParams().addText(reference));
        QVERIFY2(inserted, qPrintable(inserted ? QString() : inserted.error().summary()));
        const qint64 id = inserted->bigInt(0, 0).value_or(0);
        ReconciliationWidget widget(m_session.get());
        widget.resize(1280, 800);
        widget.show();
        QVERIFY(QTest::qWaitForWindowExposed(&widget));
        widget.refresh();
        QTRY_VERIFY_WITH_TIMEOUT(!widget.isLoading(), 10000);
        QCOMPARE(widget.mismatchModel()->idAt(0), id);
        widget.selectMismatch(0);
        QCoreApplication::processEvents();
        auto *title = widget.findChild<QLabel *>(QStringLiteral("detailTitle"));
        QVERIFY(title);
        QCOMPARE(title->text(),
                 QStringLiteral("Mismatch %1 · missing_external · payment ").arg(id)
                     + reference.left(120)
                     + QStringLiteral(" … (9,882 more characters) · order ord%1%L2 · run 2"));
        QVERIFY2(widget.minimumSizeHint().width() < 1280,
                 qPrintable(QString::number(widget.minimumSizeHint().width())));
        QCOMPARE(widget.width(), 1280);
        for (QToolButton *button : widget.findChildren<QToolButton *>()) {
            if (!button->defaultAction() || !button->isVisible())
                continue;
            const int right = button->mapTo(&widget, QPoint(button->width(), 0)).x();
            QVERIFY2(
                right <= widget.width(),
                qPrintable(button->text() + QStringLiteral(" ends at ") + QString::number(right)));
        }
        QVERIFY(widget.internalRecordText().contains(reference));
        const QString path = QStringLiteral(REDRIVE_TEST_OUTPUT_DIR)
            + QStringLiteral("/reconciliation_long_ref.png");
        QVERIFY(widget.grab().save(path));
    }
};

QTEST_MAIN(TestReconciliationWidget)
#include "tst_reconciliation_widget.moc"
