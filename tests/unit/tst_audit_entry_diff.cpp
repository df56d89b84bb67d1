// SPDX-License-Identifier: GPL-3.0-or-later
// The before/after diff of audit entries, as an entry's details show it,
// without a database: per key for objects, dotted paths into nested objects, a bulk action's
// per-target before list against one after object, and the entries that record only one side.
#include "models/audit_entry_diff.h"

#include <QTest>

using namespace redrive;

Q_DECLARE_METATYPE(AuditDiffLine::Change)

class TestAuditEntryDiff : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void lines_data()
    {
        QTest::addColumn<QString>("before");
        QTest::addColumn<QString>("after");
        QTest::addColumn<QStringList>("expected"); // "path|change|before|after" per line
        const QString null; // SQL NULL
        QTest::newRow("objects") << QStringLiteral(R"({"a": 1, "b": "x", "c": true})")
                                 << QStringLiteral(R"({"a": 2, "b": "x", "d": null})")
                                 << QStringList { QStringLiteral("a|changed|1|2"),
                                                  QStringLiteral("b|unchanged|\"x\"|\"x\""),
                                                  QStringLiteral("c|removed|true|"),
                                                  QStringLiteral("d|added||null") };
        QTest::newRow("nested")
            << QStringLiteral(
                   R"({"payload": {"amount": 100, "currency": "USD"}, "status": "open"})")
            << QStringLiteral(
                   R"({"payload": {"amount": 120, "currency": "USD"}, "status": "requeued"})")
            << QStringList { QStringLiteral("payload.amount|changed|100|120"),
                             QStringLiteral("payload.currency|unchanged|\"USD\"|\"USD\""),
                             QStringLiteral("status|changed|\"open\"|\"requeued\"") };
        QTest::newRow("string vs number")
            << QStringLiteral(R"({"n": "1"})") << QStringLiteral(R"({"n": 1})")
            << QStringList { QStringLiteral("n|changed|\"1\"|1") };
        QTest::newRow("bulk targets")
            << QStringLiteral(R"([{"id": 4, "status": "open"}, {"id": 9, "status": "open"}])")
            << QStringLiteral(R"({"status": "requeued", "reset_attempts": false})")
            << QStringList { QStringLiteral("id 4 · reset_attempts|added||false"),
                             QStringLiteral("id 4 · status|changed|\"open\"|\"requeued\""),
                             QStringLiteral("id 9 · reset_attempts|added||false"),
                             QStringLiteral("id 9 · status|changed|\"open\"|\"requeued\"") };
        QTest::newRow("only after") << null << QStringLiteral(R"({"status": "resolved"})")
                                    << QStringList { QStringLiteral("status|added||\"resolved\"") };
        QTest::newRow("only before")
            << QStringLiteral(R"({"state": "processing"})") << null
            << QStringList { QStringLiteral("state|unchanged|\"processing\"|\"processing\"") };
        QTest::newRow("neither") << null << null << QStringList();
        QTest::newRow("arrays whole")
            << QStringLiteral("[1, 2]") << QStringLiteral("[1, 3]")
            << QStringList { QStringLiteral("(whole value)|changed|[1,2]|[1,3]") };
        QTest::newRow("big number kept")
            << QStringLiteral(R"({"cents": 4200})") << QStringLiteral(R"({"cents": 9007199254740})")
            << QStringList { QStringLiteral("cents|changed|4200|9007199254740") };
        // Entries written before schema version 21 say amount_cents; the same amount now says
        // amount_minor (docs/domain.md#money), and the diff compares them as one key.
        QTest::newRow("old amount_cents is the new amount_minor")
            << QStringLiteral(R"({"amount_cents": 12000, "status": "open"})")
            << QStringLiteral(R"({"amount_minor": 12000, "status": "compensation_pending"})")
            << QStringList { QStringLiteral("amount_minor|unchanged|12000|12000"),
                             QStringLiteral("status|changed|\"open\"|\"compensation_pending\"") };
        QTest::newRow("old amount_cents changed to a new amount_minor")
            << QStringLiteral(R"({"payload": {"internal_amount_cents": 1999}})")
            << QStringLiteral(R"({"payload": {"internal_amount_minor": 2099}})")
            << QStringList { QStringLiteral("payload.internal_amount_minor|changed|1999|2099") };
        QTest::newRow("both names with one value count once")
            << QStringLiteral(R"({"amount_cents": 500, "amount_minor": 500})")
            << QStringLiteral(R"({"amount_minor": 700})")
            << QStringList { QStringLiteral("amount_minor|changed|500|700") };
        QTest::newRow("both names with two values stay apart")
            << QStringLiteral(R"({"amount_cents": 1, "amount_minor": 2})")
            << QStringLiteral(R"({"amount_minor": 2})")
            << QStringList { QStringLiteral("amount_cents|removed|1|"),
                             QStringLiteral("amount_minor|unchanged|2|2") };
        QTest::newRow("20-digit integers exact")
            << QStringLiteral(R"({"id": 12345678901234567890})")
            << QStringLiteral(R"({"id": 12345678901234567891})")
            << QStringList { QStringLiteral(
                   "id|changed|12345678901234567890|12345678901234567891") };
        QTest::newRow("array values keep order and digits")
            << QStringLiteral("{\"list\": [{\"z\": 1, \"a\": 0.1000}], \"s\": \"q\\\"\\n\"}")
            << QStringLiteral("{\"list\": [{\"z\": 1, \"a\": 0.1000}], \"s\": \"q\\\"\\n\"}")
            << QStringList {
                   QStringLiteral(
                       "list|unchanged|[{\"z\":1,\"a\":0.1000}]|[{\"z\":1,\"a\":0.1000}]"),
                   QStringLiteral("s|unchanged|\"q\\\"\\n\"|\"q\\\"\\n\"")
               };
    }
    void lines()
    {
        QFETCH(QString, before);
        QFETCH(QString, after);
        QFETCH(QStringList, expected);
        const AuditEntryDiff diff = AuditEntryDiff::compute(before, after);
        QStringList got;
        for (const AuditDiffLine &l : diff.lines())
            got << QStringList { l.path, AuditEntryDiff::changeName(l.change), l.before, l.after }
                       .join(QLatin1Char('|'));
        QCOMPARE(got, expected);
        if (before.isNull() || after.isNull())
            QVERIFY(!diff.note().isEmpty());
    }

    void manyTargetsAreSummarised()
    {
        QString before = QStringLiteral("[");
        for (int i = 0; i < AuditEntryDiff::kMaxTargets + 50; ++i)
            before += QStringLiteral("%1{\"id\": %2, \"status\": \"open\"}")
                          .arg(i ? QStringLiteral(", ") : QString())
                          .arg(i);
        before += QLatin1Char(']');
        const AuditEntryDiff diff
            = AuditEntryDiff::compute(before, QStringLiteral(R"({"status": "resolved"})"));
        QCOMPARE(diff.lines().size(), qsizetype(AuditEntryDiff::kMaxTargets));
        QCOMPARE(diff.count(AuditDiffLine::Change::Changed), AuditEntryDiff::kMaxTargets);
        QVERIFY2(diff.note().contains(QStringLiteral("50 more")), qPrintable(diff.note()));
    }
};

QTEST_GUILESS_MAIN(TestAuditEntryDiff)
#include "tst_audit_entry_diff.moc"
