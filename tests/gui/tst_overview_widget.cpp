// SPDX-License-Identifier: GPL-3.0-or-later
// The overview tab on a real PostgreSQL: after loading, the stacked
// bars summed per error class equal count(*) per class over the range the server bucketed, and
// so do the outcome and arrived/resolved lines; the bucket count stays within the plot's pixel
// width; zooming asks once, after a pause, for finer buckets for the new range. Renders the tab
// to overview.png for a look.
#include "models/db/database_session.h"
#include "tests/support/test_database.h"
#include "views/overview_plot.h"
#include "views/overview_widget.h"

#include <QDir>
#include <QSignalSpy>
#include <QTest>

using namespace redrive;
using namespace redrive::db;

namespace {

// 600 dead letters over the last 24 h (half transient, 30 % permanent, 20 % ambiguous) with a
// burst of transient ones six hours ago and three in seven of them resolved since; a dozen failure
// groups; 3,000 attempts with every outcome.
const char kSeed[] = R"sql(
INSERT INTO redrive.job (queue, kind, payload, state)
SELECT 'payments', (ARRAY['charge_card', 'send_receipt', 'process_webhook'])[1 + g % 3],
       jsonb_build_object('n', g), 'dead'
  FROM generate_series(1, 600) g;
WITH d AS (
    SELECT j.id, j.queue, j.kind,
           CASE WHEN j.id % 10 < 5 THEN 'transient' WHEN j.id % 10 < 8 THEN 'permanent'
                ELSE 'ambiguous' END AS error_class,
           CASE WHEN j.id % 10 < 3 AND j.id % 4 = 0
                THEN clock_timestamp() - interval '6 hours' - (j.id % 45) * interval '1 minute'
                ELSE clock_timestamp() - interval '20 minutes'
                     - (abs(hashint4(j.id::int)) % 1320) * interval '1 minute' END AS dead_at
      FROM redrive.job j
)
INSERT INTO redrive.dead_letter (job_id, queue, kind, status, error_class, error_code, last_error,
                                 attempts, dead_at, resolution, resolved_by, resolved_at)
SELECT id, queue, kind, CASE WHEN id % 7 < 3 THEN 'resolved' ELSE 'open' END, error_class,
       CASE error_class
           WHEN 'transient' THEN (ARRAY['upstream_timeout', 'connection_reset', 'http_503'])[1 + id % 3]
           WHEN 'permanent' THEN (ARRAY['card_declined', 'validation_failed', 'auth_misconfigured'])[1 + id % 3]
           ELSE (ARRAY['timeout_after_send', 'worker_crash'])[1 + id % 2] END,
       CASE error_class
           WHEN 'transient' THEN (ARRAY['timeout after 30000 ms waiting for https://api.payments.test/v1/charges to answer the capture request',
                                        'connection reset by peer while reading the response',
                                        'provider returned 503 Service Unavailable'])[1 + id % 3]
           WHEN 'permanent' THEN (ARRAY['card declined: insufficient funds',
                                        'amount must be positive, got -500',
                                        'invalid API key for merchant account 42'])[1 + id % 3]
           ELSE (ARRAY['timeout after the request was sent: the charge may exist',
                       'worker crashed while capturing order 7781'])[1 + id % 2] END,
       1 + id % 8, dead_at,
       CASE WHEN id % 7 < 3 THEN 'fixed_by_hand' END,
       CASE WHEN id % 7 < 3 THEN 'alice' END,
       CASE WHEN id % 7 < 3 THEN dead_at + (id % 19) * interval '1 minute' END
  FROM d;
INSERT INTO redrive.attempt (job_id, attempt_no, started_at, outcome, error_class, error_code)
SELECT (SELECT min(id) FROM redrive.job), 1 + g % 5,
       clock_timestamp() - interval '10 minutes' - (abs(hashint4(g * 7)) % 85000) * interval '1 second',
       CASE WHEN g % 20 < 15 THEN 'succeeded' WHEN g % 20 < 18 THEN 'failed'
            WHEN g % 20 = 18 THEN 'conflict' ELSE 'abandoned' END,
       CASE WHEN g % 20 BETWEEN 15 AND 18 THEN 'transient' END,
       CASE WHEN g % 20 BETWEEN 15 AND 18 THEN 'http_503' END
  FROM generate_series(1, 3000) g;
)sql";

} // namespace

class TestOverviewWidget : public QObject
{
    Q_OBJECT
private:
    std::unique_ptr<test::TestDatabase> m_db;
    PgConnection m_admin;
    std::unique_ptr<DatabaseSession> m_session;

    qint64 sqlCount(const QByteArray &sql, const QueryParams &params)
    {
        auto r = m_admin.exec(sql, params);
        if (!r)
            qFatal("%s", qPrintable(r.error().summary()));
        return r->bigInt(0, 0).value_or(-1);
    }
    // count(*) of `table` rows with `column` in the plot's bucketed range, and `where`.
    qint64 countInRange(const OverviewPlot *plot, const QByteArray &table, const QByteArray &column,
                        const QByteArray &where)
    {
        return sqlCount("SELECT count(*) FROM redrive." + table + " WHERE " + column + " >= $1 AND "
                            + column + " < $2 AND " + where,
                        QueryParams().addTimestamp(plot->dataFrom()).addTimestamp(plot->dataTo()));
    }

    void verifyTotals(const OverviewWidget &widget)
    {
        const OverviewPlot *dead = widget.deadLetterPlot();
        for (const QString &cls : { QStringLiteral("transient"), QStringLiteral("permanent"),
                                    QStringLiteral("ambiguous") }) {
            const qint64 expected = countInRange(dead, "dead_letter", "dead_at",
                                                 "error_class = '" + cls.toUtf8() + "'");
            QCOMPARE(qint64(dead->seriesTotal(cls)), expected);
        }
        const OverviewPlot *outcomes = widget.outcomePlot();
        for (const QString &outcome : outcomes->seriesNames())
            QCOMPARE(qint64(outcomes->seriesTotal(outcome)),
                     countInRange(outcomes, "attempt", "started_at",
                                  "outcome = '" + outcome.toUtf8() + "'"));
        const OverviewPlot *flow = widget.openResolvedPlot();
        QCOMPARE(qint64(flow->seriesTotal(QStringLiteral("arrived"))),
                 countInRange(flow, "dead_letter", "dead_at", "true"));
        QCOMPARE(qint64(flow->seriesTotal(QStringLiteral("resolved"))),
                 countInRange(flow, "dead_letter", "resolved_at", "true"));
        for (const OverviewPlot *plot : { dead, outcomes, flow }) {
            QVERIFY(plot->bucketMs() >= 60 * 1000);
            QVERIFY2(plot->bucketCount() > 0 && plot->bucketCount() <= plot->width(),
                     qPrintable(QStringLiteral("%1 buckets, %2 px")
                                    .arg(plot->bucketCount())
                                    .arg(plot->width())));
            // About one bucket per 4 pixels, never more.
            QVERIFY(plot->bucketCount() <= plot->width() / 4 + 2);
        }
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_db = std::make_unique<test::TestDatabase>(QStringLiteral("overview_widget"));
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

    void bucketWidth_data()
    {
        QTest::addColumn<qint64>("span");
        QTest::addColumn<int>("width");
        QTest::addColumn<qint64>("bucket");
        const qint64 min = 60 * 1000;
        QTest::newRow("1 h on 600 px") << 60 * min << 600 << min;
        QTest::newRow("24 h on 600 px") << 24 * 60 * min << 600 << 10 * min;
        QTest::newRow("7 d on 600 px") << 7 * 24 * 60 * min << 600 << 2 * 60 * min;
        QTest::newRow("30 d on 600 px") << 30 * 24 * 60 * min << 600 << 6 * 60 * min;
        QTest::newRow("30 d on 40 px") << 30 * 24 * 60 * min << 40 << 3 * 24 * 60 * min;
        QTest::newRow("10 min, never under a minute") << 10 * min << 2000 << min;
        QTest::newRow("no width yet") << 60 * min << 0 << 60 * min;
    }
    void bucketWidth()
    {
        QFETCH(qint64, span);
        QFETCH(int, width);
        QFETCH(qint64, bucket);
        QCOMPARE(OverviewWidget::bucketWidthMs(span, width), bucket);
    }

    void stackedBarsEqualSqlCounts()
    {
        OverviewWidget widget(m_session.get());
        widget.resize(1280, 800);
        widget.show();
        QVERIFY(QTest::qWaitForWindowExposed(&widget));
        widget.setRange(OverviewWidget::Range::LastDay);
        QTRY_VERIFY_WITH_TIMEOUT(!widget.isLoading(), 10000);
        verifyTotals(widget);
        // Every dead letter lies in the last 24 h: the classes' known sizes.
        const OverviewPlot *dead = widget.deadLetterPlot();
        QCOMPARE(dead->seriesTotal(QStringLiteral("transient")), 300.0);
        QCOMPARE(dead->seriesTotal(QStringLiteral("permanent")), 180.0);
        QCOMPARE(dead->seriesTotal(QStringLiteral("ambiguous")), 120.0);
        QVERIFY(dead->dataFrom() <= widget.viewFrom());
        QVERIFY(dead->dataTo() >= widget.viewTo());
        QCOMPARE(dead->note(), QString());
        // Unzoomed, every chart shows its buckets whole: the current one is not cut at now.
        for (const OverviewPlot *plot : std::initializer_list<const OverviewPlot *> {
                 dead, widget.outcomePlot(), widget.openResolvedPlot() }) {
            QCOMPARE(plot->visibleFrom(), plot->dataFrom());
            QCOMPARE(plot->visibleTo(), plot->dataTo());
            const qint64 pastNow = widget.viewTo().msecsTo(plot->visibleTo());
            QVERIFY2(pastNow >= 0 && pastNow < plot->bucketMs(),
                     qPrintable(QString::number(pastNow)));
        }

        // Top failure groups: ten at most, labelled with their sample message, elided.
        const OverviewPlot *groups = widget.failureGroupPlot();
        const qint64 groupCount
            = sqlCount("SELECT count(DISTINCT fingerprint) FROM redrive.dead_letter", {});
        QCOMPARE(qint64(groups->groupLabels().size()), std::min<qint64>(10, groupCount));
        const QFontMetrics metrics(groups->yAxis->tickLabelFont());
        for (const QString &label : groups->groupLabels())
            QVERIFY2(metrics.horizontalAdvance(label) <= groups->width() / 2, qPrintable(label));
        QVERIFY(groups->groupLabels().join(QLatin1Char('\n')).contains(QChar(0x2026)));
    }

    void everyRangeStaysWithinThePlotWidth_data()
    {
        QTest::addColumn<int>("range");
        QTest::newRow("1 h") << int(OverviewWidget::Range::LastHour);
        QTest::newRow("7 d") << int(OverviewWidget::Range::LastWeek);
        QTest::newRow("30 d") << int(OverviewWidget::Range::LastMonth);
    }
    void everyRangeStaysWithinThePlotWidth()
    {
        QFETCH(int, range);
        OverviewWidget widget(m_session.get());
        widget.resize(1280, 800);
        widget.show();
        QVERIFY(QTest::qWaitForWindowExposed(&widget));
        widget.setRange(OverviewWidget::Range(range));
        QTRY_VERIFY_WITH_TIMEOUT(!widget.isLoading(), 10000);
        verifyTotals(widget);
    }

    void zoomAsksOnceForFinerBuckets()
    {
        OverviewWidget widget(m_session.get());
        widget.resize(1280, 800);
        widget.show();
        QVERIFY(QTest::qWaitForWindowExposed(&widget));
        widget.setRange(OverviewWidget::Range::LastDay);
        QTRY_VERIFY_WITH_TIMEOUT(!widget.isLoading(), 10000);
        OverviewPlot *dead = widget.deadLetterPlot();
        const qint64 coarse = dead->bucketMs();

        // Three wheel steps in a row, as QCustomPlot applies them: one reload after the pause.
        QSignalSpy loading(&widget, &OverviewWidget::loadingChanged);
        const double centre = dead->xAxis->range().upper - 6 * 3600.0;
        const double spanSeconds = dead->xAxis->range().size(); // 24 h and whole buckets
        for (int i = 0; i < 3; ++i)
            dead->xAxis->scaleRange(0.5, centre);
        QVERIFY(widget.isLoading());
        QTRY_VERIFY_WITH_TIMEOUT(!widget.isLoading(), 10000);
        QCOMPARE(loading.count(), 2); // true once, false once
        QVERIFY2(dead->bucketMs() < coarse,
                 qPrintable(QStringLiteral("%1 -> %2").arg(coarse).arg(dead->bucketMs())));
        // The other time charts followed the zoom.
        QCOMPARE(widget.outcomePlot()->visibleFrom(), dead->visibleFrom());
        QCOMPARE(widget.openResolvedPlot()->visibleTo(), dead->visibleTo());
        QCOMPARE(widget.viewFrom(), dead->visibleFrom());
        QVERIFY(spanSeconds >= 24 * 3600.0 && spanSeconds < 26 * 3600.0);
        QVERIFY(qAbs(widget.viewFrom().msecsTo(widget.viewTo()) - spanSeconds * 1000 / 8) < 1000);
        verifyTotals(widget);

        widget.resetZoom();
        QTRY_VERIFY_WITH_TIMEOUT(!widget.isLoading(), 10000);
        QCOMPARE(dead->bucketMs(), coarse);
        verifyTotals(widget);
    }

    void showUtcLabelsTheAxis()
    {
        OverviewWidget widget(m_session.get());
        widget.refresh();
        QTRY_VERIFY_WITH_TIMEOUT(!widget.isLoading(), 10000);
        const QString local = widget.deadLetterPlot()->xAxis->label();
        QVERIFY2(local.contains(QStringLiteral("UTC+")) || local.contains(QStringLiteral("UTC-")),
                 qPrintable(local));
        widget.setShowUtc(true);
        QTRY_VERIFY_WITH_TIMEOUT(!widget.isLoading(), 10000);
        QCOMPARE(widget.deadLetterPlot()->xAxis->label(), QStringLiteral("Time (UTC)"));
    }

    void rendersToPng()
    {
        OverviewWidget widget(m_session.get());
        widget.resize(1280, 800);
        widget.show();
        QVERIFY(QTest::qWaitForWindowExposed(&widget));
        widget.setRange(OverviewWidget::Range::LastDay);
        QTRY_VERIFY_WITH_TIMEOUT(!widget.isLoading(), 10000);
        for (OverviewPlot *plot : { widget.deadLetterPlot(), widget.outcomePlot(),
                                    widget.openResolvedPlot(), widget.failureGroupPlot() })
            plot->replot(); // the queued replot may not have run yet
        const QString dir = QStringLiteral(REDRIVE_TEST_OUTPUT_DIR);
        QVERIFY(QDir().mkpath(dir));
        const QString path = dir + QStringLiteral("/overview.png");
        QVERIFY(widget.grab().save(path));
        qInfo("rendered %s", qPrintable(path));
    }
};

QTEST_MAIN(TestOverviewWidget)
#include "tst_overview_widget.moc"
