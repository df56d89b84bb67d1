// SPDX-License-Identifier: GPL-3.0-or-later
// The per-queue retry budget caps retries at a share of recent requests.
#include "models/worker/retry_budget.h"

#include <QTest>

using namespace redrive::worker;

class TestRetryBudget : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void capsRetriesAtTheRatio()
    {
        RetryBudget budget(0.1, 0.0, 10000);
        for (int i = 0; i < 100; ++i)
            budget.recordRequest(1000 + i);
        int granted = 0;
        for (int i = 0; i < 100; ++i)
            granted += budget.tryAcquireRetry(1500) ? 1 : 0;
        QCOMPARE(granted, 10); // 10 % of 100 requests
    }

    void minimumRateAllowsSomeRetriesWithoutTraffic()
    {
        RetryBudget budget(0.1, 1.0, 10000);
        int granted = 0;
        for (int i = 0; i < 50; ++i)
            granted += budget.tryAcquireRetry(0) ? 1 : 0;
        QCOMPARE(granted, 10); // 1 per second over a 10 s window
    }

    void windowSlides()
    {
        RetryBudget budget(0.0, 1.0, 10000);
        while (budget.tryAcquireRetry(0)) { }
        QVERIFY(!budget.tryAcquireRetry(9999));
        QVERIFY(budget.tryAcquireRetry(10001)); // the first retries left the window
    }

    void disabledAllowsEverything()
    {
        RetryBudget budget(0.0, 0.0, 10000);
        budget.setEnabled(false);
        for (int i = 0; i < 1000; ++i)
            QVERIFY(budget.tryAcquireRetry(0));
    }
};

QTEST_GUILESS_MAIN(TestRetryBudget)
#include "tst_retry_budget.moc"
