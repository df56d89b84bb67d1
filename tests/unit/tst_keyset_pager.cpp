// SPDX-License-Identifier: GPL-3.0-or-later
// The paging logic of every keyset-paginated list, without a server: the keyset values come
// from the last row shown (timestamps exactly as the server printed them), a short page ends the
// list, a page asked for before a reset is dropped, and the total is exact up to the cap and an
// estimate above it.
#include "models/keyset_pager.h"
#include "tests/unit/result_set_builder.h"

#include <QTest>

using namespace redrive;
using db::ParamType;
using test::makeResult;

namespace {

const QList<KeysetKey> kKeys = { { QStringLiteral("dead_at"), ParamType::TimestampTz },
                                 { QStringLiteral("id"), ParamType::BigInt },
                                 { QStringLiteral("queue"), ParamType::Text, true } };

// `n` rows of (queue, id, dead_at), ids from `firstId` down.
db::ResultSet page(int n, int firstId)
{
    QList<QList<std::optional<QByteArray>>> rows;
    for (int i = 0; i < n; ++i) {
        const int id = firstId - i;
        rows.append({ QByteArray("q") + QByteArray::number(id), QByteArray::number(id),
                      "2026-11-29 16:46:" + QByteArray::number(10 + i) + ".123456+00" });
    }
    return makeResult({ "queue", "id", "dead_at" }, rows);
}

// The parameters as (type, text or "NULL").
QList<QPair<ParamType, QByteArray>> bound(const db::QueryParams &params)
{
    QList<QPair<ParamType, QByteArray>> out;
    const auto types = params.types();
    const auto values = params.values();
    for (int i = 0; i < params.size(); ++i)
        out.append({ ParamType(types[i]), values[i] ? QByteArray(values[i]) : "NULL" });
    return out;
}

} // namespace

class TestKeysetPager : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void firstPageBindsNullKeysAndThePageSize()
    {
        KeysetPager pager(kKeys, 3);
        db::QueryParams params;
        params.addText(QStringLiteral("filter"));
        pager.beginRequest(params);
        const QList<QPair<ParamType, QByteArray>> expected
            = { { ParamType::Text, "filter" },
                { ParamType::TimestampTz, "NULL" },
                { ParamType::BigInt, "NULL" },
                { ParamType::Int, "3" },
                { ParamType::Text, "NULL" } }; // bound after the page size
        QCOMPARE(bound(params), expected);
        QVERIFY(pager.isPending());
        QVERIFY(!pager.canRequest());
    }

    void keysetComesFromTheLastRow()
    {
        KeysetPager pager(kKeys, 3);
        db::QueryParams first;
        QVERIFY(pager.accept(pager.beginRequest(first), page(3, 100)));
        QCOMPARE(pager.rowCount(), 3);
        QVERIFY(!pager.isAtEnd());
        QVERIFY(pager.canRequest());
        db::QueryParams second;
        pager.beginRequest(second);
        const QList<QPair<ParamType, QByteArray>> expected
            = { { ParamType::TimestampTz, "2026-11-29 16:46:12.123456+00" }, // microseconds kept
                { ParamType::BigInt, "98" },
                { ParamType::Int, "3" },
                { ParamType::Text, "q98" } };
        QCOMPARE(bound(second), expected);
        QVERIFY(pager.accept(pager.generation(), page(3, 97)));
        db::QueryParams third;
        pager.beginRequest(third);
        QCOMPARE(bound(third).at(1).second, QByteArray("95"));
        int offset = -1;
        const db::ResultSet *p = pager.pageFor(4, &offset);
        QVERIFY(p);
        QCOMPARE(offset, 1);
        QCOMPARE(p->text(offset, QStringLiteral("id")), QStringLiteral("96"));
        QVERIFY(!pager.pageFor(6, &offset));
    }

    void shortPageEndsTheList_data()
    {
        QTest::addColumn<int>("rows");
        QTest::addColumn<bool>("atEnd");
        QTest::newRow("full") << 4 << false;
        QTest::newRow("one short") << 3 << true;
        QTest::newRow("empty") << 0 << true;
    }
    void shortPageEndsTheList()
    {
        QFETCH(int, rows);
        QFETCH(bool, atEnd);
        KeysetPager pager(kKeys, 4);
        db::QueryParams params;
        QVERIFY(pager.accept(pager.beginRequest(params), page(rows, 50)));
        QCOMPARE(pager.isAtEnd(), atEnd);
        QCOMPARE(pager.canRequest(), !atEnd);
        QCOMPARE(pager.rowCount(), rows);
        QCOMPARE(pager.pageCount(), rows > 0 ? 1 : 0);
    }

    void staleGenerationIsDropped()
    {
        KeysetPager pager(kKeys, 3);
        db::QueryParams params;
        const quint64 old = pager.beginRequest(params);
        pager.reset(); // the filter changed while the page was on its way
        QVERIFY(!pager.isCurrent(old));
        QVERIFY(!pager.accept(old, page(3, 100)));
        QCOMPARE(pager.rowCount(), 0);
        QVERIFY(!pager.fail(old));
        QVERIFY(!pager.isAtEnd());
        QVERIFY(pager.canRequest());
        db::QueryParams again;
        QVERIFY(pager.accept(pager.beginRequest(again), page(2, 10)));
        QCOMPARE(pager.rowCount(), 2);
    }

    void failureEndsTheList()
    {
        KeysetPager pager(kKeys, 3);
        db::QueryParams params;
        QVERIFY(pager.fail(pager.beginRequest(params)));
        QVERIFY(pager.isAtEnd());
        QVERIFY(!pager.isPending());
        QVERIFY(!pager.canRequest());
    }

    // A frozen pass binds slices of the frozen list as arrays (no filter, no keyset, no LIMIT),
    // pages may come back shorter than asked (a row gone), rows are found by their page all
    // the same, the list ends when the frozen list is used up, and a re-read binds every entry
    // asked for so far and replaces the pages.
    void frozenPassPagesThroughTheFrozenList()
    {
        KeysetPager pager(kKeys, 2);
        const quint64 generation
            = pager.beginFreeze({ { QStringLiteral("scope"), ParamType::Text },
                                  { QStringLiteral("id"), ParamType::BigInt } });
        QVERIFY(pager.isPending());
        QVERIFY(!pager.canRequest());
        QVERIFY(pager.freeze(
            generation,
            makeResult(
                { "scope", "id" },
                { { "a\"b", "9" }, { "c", "7" }, { "d,e", "5" }, { "f", "3" }, { "g", "1" } })));
        QVERIFY(pager.isFrozen());
        QCOMPARE(pager.frozenCount(), 5);
        QVERIFY(pager.canRequest());

        db::QueryParams first;
        pager.beginRequest(first);
        QCOMPARE(
            bound(first),
            (QList<QPair<ParamType, QByteArray>> { { ParamType::TextArray, "{\"a\\\"b\",\"c\"}" },
                                                   { ParamType::BigIntArray, "{9,7}" } }));
        QVERIFY(pager.accept(generation, page(2, 9)));
        QVERIFY(!pager.isAtEnd());

        db::QueryParams second;
        pager.beginRequest(second);
        QCOMPARE(bound(second).at(1),
                 (QPair<ParamType, QByteArray> { ParamType::BigIntArray, "{5,3}" }));
        QVERIFY(pager.accept(generation, page(1, 5))); // 3 is gone: a short page, not the end
        QVERIFY(!pager.isAtEnd());
        QCOMPARE(pager.rowCount(), 3);
        QCOMPARE(pager.consumed(), 4);

        db::QueryParams third;
        pager.beginRequest(third);
        QCOMPARE(bound(third).at(1),
                 (QPair<ParamType, QByteArray> { ParamType::BigIntArray, "{1}" }));
        QVERIFY(pager.accept(generation, page(1, 1)));
        QVERIFY(pager.isAtEnd());
        QCOMPARE(pager.rowCount(), 4);
        int offset = -1;
        QCOMPARE(pager.pageFor(2, &offset)->text(offset, QStringLiteral("id")),
                 QStringLiteral("5"));
        QCOMPARE(pager.pageFor(3, &offset)->text(offset, QStringLiteral("id")),
                 QStringLiteral("1"));
        QCOMPARE(offset, 0);

        db::QueryParams reread;
        pager.beginReread(reread);
        QCOMPARE(bound(reread).at(1),
                 (QPair<ParamType, QByteArray> { ParamType::BigIntArray, "{9,7,5,3,1}" }));
        QVERIFY(pager.acceptReread(generation, page(3, 9)));
        QCOMPARE(pager.rowCount(), 3);
        QCOMPARE(pager.pageFor(2, &offset)->text(offset, QStringLiteral("id")),
                 QStringLiteral("7"));
        QVERIFY(!pager.isPending());

        pager.reset(); // a new pass: the frozen list is gone, the keyset binds again
        QVERIFY(!pager.isFrozen());
        QVERIFY(!pager.acceptReread(generation, page(1, 1)));
    }
    // A pass read in chunks (a cursor): pages go out as soon as their keys are in, a page whose
    // keys are not all in waits for the next chunk, and the list ends only once the last chunk
    // is in and used up. Dead-letter ids (one bigint key) and composite text keys across chunks.
    void chunkedPassPagesAsItsKeysArrive_data()
    {
        QTest::addColumn<bool>("idsOnly");
        QTest::newRow("ids only") << true;
        QTest::newRow("scope and id, across chunks") << false;
    }
    void chunkedPassPagesAsItsKeysArrive()
    {
        QFETCH(bool, idsOnly);
        KeysetPager pager(kKeys, 2);
        QList<KeysetKey> keys = { { QStringLiteral("id"), ParamType::BigInt } };
        if (!idsOnly)
            keys.prepend({ QStringLiteral("scope"), ParamType::Text });
        const quint64 generation = pager.beginFreeze(keys);
        auto chunk = [](QList<int> ids) {
            QList<QList<std::optional<QByteArray>>> rows;
            for (int id : ids)
                rows.append({ QByteArray("s") + QByteArray::number(id), QByteArray::number(id) });
            return makeResult({ "scope", "id" }, rows);
        };
        auto ids = [&](const db::QueryParams &params) {
            return bound(params).last().second;
        };

        QVERIFY(pager.appendFrozen(generation, chunk({ 9, 8 }), false)); // the first page's keys
        QVERIFY(pager.isFrozen());
        QVERIFY(!pager.isFrozenComplete());
        QVERIFY(!pager.waitsForFrozen());
        QVERIFY(pager.canRequest());
        db::QueryParams first;
        pager.beginRequest(first);
        QCOMPARE(ids(first), QByteArray("{9,8}"));
        if (!idsOnly)
            QCOMPARE(bound(first).first().second, QByteArray(R"({"s9","s8"})"));
        QVERIFY(pager.accept(generation, page(2, 9)));
        QVERIFY(!pager.isAtEnd());
        QVERIFY(pager.waitsForFrozen()); // no key of the next page yet
        QVERIFY(!pager.canRequest());

        QVERIFY(pager.appendFrozen(generation, chunk({ 7 }), false));
        QVERIFY(pager.waitsForFrozen()); // one key of two: still waits
        QVERIFY(!pager.appendFrozen(generation + 1, chunk({ 6 }), false)); // stale
        QCOMPARE(pager.frozenCount(), 3);
        QVERIFY(pager.appendFrozen(generation, chunk({ 6, 5 }), false));
        QVERIFY(pager.canRequest());
        db::QueryParams second;
        pager.beginRequest(second);
        QCOMPARE(ids(second), QByteArray("{7,6}")); // across two chunks
        if (!idsOnly)
            QCOMPARE(bound(second).first().second, QByteArray(R"({"s7","s6"})"));
        QVERIFY(pager.accept(generation, page(2, 7)));

        QVERIFY(pager.appendFrozen(generation, chunk({}), true)); // the last chunk: empty
        QVERIFY(pager.isFrozenComplete());
        QCOMPARE(pager.frozenCount(), 5);
        QVERIFY(pager.canRequest()); // a last, short page
        db::QueryParams third;
        pager.beginRequest(third);
        QCOMPARE(ids(third), QByteArray("{5}"));
        QVERIFY(pager.accept(generation, page(1, 5)));
        QVERIFY(pager.isAtEnd());
        QCOMPARE(pager.rowCount(), 5);

        db::QueryParams reread;
        pager.beginReread(reread);
        QCOMPARE(ids(reread), QByteArray("{9,8,7,6,5}"));
    }

    void emptyFrozenListEndsTheList()
    {
        KeysetPager pager(kKeys, 2);
        const quint64 generation
            = pager.beginFreeze({ { QStringLiteral("id"), ParamType::BigInt } });
        QVERIFY(pager.freeze(generation, makeResult({ "id" }, {})));
        QVERIFY(pager.isAtEnd());
        QVERIFY(!pager.canRequest());
        QVERIFY(!pager.freeze(generation + 1, makeResult({ "id" }, {}))); // stale
    }

    void totalIsExactUpToTheCap_data()
    {
        QTest::addColumn<qint64>("counted");
        QTest::addColumn<qint64>("rows");
        QTest::addColumn<bool>("exact");
        QTest::newRow("none") << qint64(0) << qint64(0) << true;
        QTest::newRow("below") << qint64(42) << qint64(42) << true;
        QTest::newRow("at the cap") << qint64(100) << qint64(100) << true;
        QTest::newRow("above") << qint64(101) << qint64(100) << false;
    }
    void totalIsExactUpToTheCap()
    {
        QFETCH(qint64, counted);
        QFETCH(qint64, rows);
        QFETCH(bool, exact);
        QCOMPARE(ListTotal::fromCount(counted, 100), (ListTotal { rows, exact }));
    }

    void totalAboveTheCapIsAnEstimate_data()
    {
        QTest::addColumn<QByteArray>("plan");
        QTest::addColumn<qint64>("rows");
        QTest::newRow("planner's rows")
            << QByteArray(R"([{"Plan": {"Plan Rows": 12345}}])") << qint64(12345);
        // The count already saw more than the cap: an estimate below it is not believed.
        QTest::newRow("below the cap")
            << QByteArray(R"([{"Plan": {"Plan Rows": 7}}])") << qint64(101);
        QTest::newRow("unreadable") << QByteArray("nonsense") << qint64(101);
    }
    void totalAboveTheCapIsAnEstimate()
    {
        QFETCH(QByteArray, plan);
        QFETCH(qint64, rows);
        const ListTotal total
            = ListTotal::fromEstimate(makeResult({ "QUERY PLAN" }, { { plan } }), 100);
        QCOMPARE(total.rows, rows);
        QVERIFY(!total.exact);
    }
};

QTEST_GUILESS_MAIN(TestKeysetPager)
#include "tst_keyset_pager.moc"
