// SPDX-License-Identifier: GPL-3.0-or-later
// Backoff with full jitter and the retry decision by error class.
#include "models/worker/retry_policy.h"

#include <QRandomGenerator>
#include <QTest>

using namespace redrive::worker;

class TestRetryPolicy : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void ceilingDoublesUpToTheCap_data()
    {
        QTest::addColumn<int>("attempt");
        QTest::addColumn<qint64>("ceiling");
        // base 1 s, cap 300 s: min(cap, base · 2^attempt)
        QTest::newRow("1") << 1 << qint64(2000);
        QTest::newRow("2") << 2 << qint64(4000);
        QTest::newRow("5") << 5 << qint64(32000);
        QTest::newRow("8") << 8 << qint64(256000);
        QTest::newRow("9 capped") << 9 << qint64(300000);
        QTest::newRow("60 capped, no overflow") << 60 << qint64(300000);
    }
    void ceilingDoublesUpToTheCap()
    {
        QFETCH(int, attempt);
        QFETCH(qint64, ceiling);
        QCOMPARE(backoffCeilingMs(attempt, 1000, 300000), ceiling);
    }

    void fullJitterStaysInBoundsAndSpreads()
    {
        QRandomGenerator rng(42);
        for (int attempt = 1; attempt <= 10; ++attempt) {
            const qint64 ceiling = backoffCeilingMs(attempt, 1000, 300000);
            qint64 lo = ceiling;
            qint64 hi = 0;
            for (int i = 0; i < 2000; ++i) {
                const qint64 d = fullJitterBackoffMs(attempt, 1000, 300000, rng);
                QVERIFY(d >= 0 && d <= ceiling);
                lo = std::min(lo, d);
                hi = std::max(hi, d);
            }
            // Full jitter uses the whole range, not a band around the ceiling.
            QVERIFY2(lo < ceiling / 10, qPrintable(QString::number(lo)));
            QVERIFY2(hi > ceiling * 9 / 10, qPrintable(QString::number(hi)));
        }
    }

    void decisionByErrorClass_data()
    {
        QTest::addColumn<int>("errorClass");
        QTest::addColumn<int>("attempt");
        QTest::addColumn<bool>("retryAmbiguous");
        QTest::addColumn<qint64>("msUntilDeadline");
        QTest::addColumn<bool>("retry");
        QTest::addColumn<QString>("reason");
        const qint64 plenty = 3600000;
        QTest::newRow("transient retries")
            << int(ErrorClass::Transient) << 1 << true << plenty << true << QString();
        QTest::newRow("permanent never") << int(ErrorClass::Permanent) << 1 << true << plenty
                                         << false << QStringLiteral("permanent");
        QTest::newRow("ambiguous where receiver dedupes")
            << int(ErrorClass::Ambiguous) << 1 << true << plenty << true << QString();
        QTest::newRow("ambiguous, not idempotent")
            << int(ErrorClass::Ambiguous) << 1 << false << plenty << false
            << QStringLiteral("ambiguous");
        QTest::newRow("exhausted at max attempts")
            << int(ErrorClass::Transient) << 8 << true << plenty << false
            << QStringLiteral("exhausted");
        QTest::newRow("deadline too close") << int(ErrorClass::Transient) << 7 << true << qint64(-1)
                                            << false << QStringLiteral("deadline");
    }
    void decisionByErrorClass()
    {
        QFETCH(int, errorClass);
        QFETCH(int, attempt);
        QFETCH(bool, retryAmbiguous);
        QFETCH(qint64, msUntilDeadline);
        QFETCH(bool, retry);
        QFETCH(QString, reason);
        RetryPolicy policy;
        policy.retryAmbiguous = retryAmbiguous;
        QRandomGenerator rng(1);
        const RetryDecision d = decideRetry(ErrorClass(errorClass), attempt, policy,
                                            msUntilDeadline, std::nullopt, rng);
        QCOMPARE(d.action == RetryDecision::Action::Retry, retry);
        QCOMPARE(d.deadReason, reason);
        if (retry)
            QVERIFY(d.delayMs <= backoffCeilingMs(attempt, policy.baseMs, policy.capMs));
    }

    void retryAfterRaisesTheDelay()
    {
        QRandomGenerator rng(1);
        const RetryDecision d
            = decideRetry(ErrorClass::Transient, 1, RetryPolicy(), 3600000, qint64(45000), rng);
        QCOMPARE(d.action, RetryDecision::Action::Retry);
        QVERIFY(d.delayMs >= 45000);
    }

    void compressionDividesDurations()
    {
        const RetryPolicy p = RetryPolicy().compressed(100);
        QCOMPARE(p.baseMs, qint64(10));
        QCOMPARE(p.capMs, qint64(3000));
        QCOMPARE(p.deadlineMs, qint64(36000));
        QCOMPARE(p.maxAttempts, 8);
    }
};

QTEST_GUILESS_MAIN(TestRetryPolicy)
#include "tst_retry_policy.moc"
