// SPDX-License-Identifier: GPL-3.0-or-later
// Seeded fault injection is reproducible and independent of call order.
#include "models/worker/fault_injector.h"

#include <QTest>
#include <QTimeZone>

using namespace redrive::worker;

class TestFaultInjector : public QObject
{
    Q_OBJECT
private:
    static FaultInjector make(quint64 seed)
    {
        FaultInjector f(seed);
        FaultRates r;
        r.serverError = 0.2;
        r.declined = 0.1;
        r.timeoutAfterEffect = 0.1;
        f.setRates(QStringLiteral("provider"), r);
        return f;
    }

private Q_SLOTS:
    void sameSeedSameFaultsInAnyOrder()
    {
        const FaultInjector a = make(7);
        const FaultInjector b = make(7);
        const QDateTime t(QDate(2026, 1, 1), QTime(0, 0), QTimeZone::utc());
        QList<int> forward;
        for (int job = 1; job <= 300; ++job)
            forward << int(a.draw(QStringLiteral("provider"), job, 1, t).kind);
        QList<int> backward;
        for (int job = 300; job >= 1; --job)
            backward.prepend(int(b.draw(QStringLiteral("provider"), job, 1, t).kind));
        QCOMPARE(forward, backward);
        // Roughly the configured rates (40 % faulty), and not all the same.
        const auto faulty = std::count_if(forward.begin(), forward.end(),
                                          [](int k) { return k != int(FaultKind::None); });
        QVERIFY2(faulty > 80 && faulty < 160, qPrintable(QString::number(faulty)));
    }

    void otherSeedOtherFaults()
    {
        const FaultInjector a = make(7);
        const FaultInjector b = make(8);
        const QDateTime t(QDate(2026, 1, 1), QTime(0, 0), QTimeZone::utc());
        int differ = 0;
        for (int job = 1; job <= 200; ++job)
            differ += a.draw(QStringLiteral("provider"), job, 1, t).kind
                    != b.draw(QStringLiteral("provider"), job, 1, t).kind
                ? 1
                : 0;
        QVERIFY(differ > 20);
    }

    void outageWindowAndForcedFaults()
    {
        FaultInjector f = make(1);
        const QDateTime start(QDate(2026, 1, 1), QTime(9, 0), QTimeZone::utc());
        f.addOutage(QStringLiteral("provider"), start, start.addSecs(600));
        QCOMPARE(f.draw(QStringLiteral("provider"), 1, 1, start.addSecs(300)).kind,
                 FaultKind::Outage);
        QVERIFY(f.draw(QStringLiteral("provider"), 1, 1, start.addSecs(600)).kind
                != FaultKind::Outage);
        QVERIFY(f.draw(QStringLiteral("mail"), 1, 1, start.addSecs(300)).kind != FaultKind::Outage);
        f.force(QStringLiteral("provider"), 5, 2, FaultKind::CrashAfterEffect);
        QCOMPARE(f.draw(QStringLiteral("provider"), 5, 2, start).kind, FaultKind::CrashAfterEffect);
    }
};

QTEST_GUILESS_MAIN(TestFaultInjector)
#include "tst_fault_injector.moc"
