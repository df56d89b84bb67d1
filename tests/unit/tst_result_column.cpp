// SPDX-License-Identifier: GPL-3.0-or-later
// The column description of every result-backed table, without a server: display, tooltip,
// alignment and JSON per format, a missing column or NULL as an empty cell, the hook before the
// format, row roles, and columns bound by name so a column added to the SQL shifts nothing.
#include "models/display_format.h"
#include "models/result_column.h"
#include "tests/unit/result_set_builder.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QTest>
#include <QTimeZone>

using namespace redrive;
using F = ResultColumn::Format;
using test::makeResult;

Q_DECLARE_METATYPE(ResultColumn::Format)
Q_DECLARE_METATYPE(JsonValueKind)

namespace {

const QVariant kRight = QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);

} // namespace

class TestResultColumn : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void formats_data()
    {
        QTest::addColumn<F>("format");
        QTest::addColumn<QByteArray>("raw");
        QTest::addColumn<QVariant>("display");
        QTest::addColumn<QVariant>("toolTip");
        QTest::addColumn<QVariant>("alignment");
        QTest::addColumn<JsonValueKind>("json");
        const QByteArray ts = "2026-11-29 16:46:27.123456+00";
        const QDateTime t(QDate(2026, 11, 29), QTime(16, 46, 27, 123), QTimeZone::utc());
        const QString hash = QStringLiteral("0123456789abcdef0123");
        QTest::newRow("text") << F::Text << QByteArray("a\nb") << QVariant(QStringLiteral("a\nb"))
                              << QVariant(QStringLiteral("a\nb")) << QVariant()
                              << JsonValueKind::Text;
        QTest::newRow("integer") << F::Integer << QByteArray("42") << QVariant(qint64(42))
                                 << QVariant() << kRight << JsonValueKind::Integer;
        QTest::newRow("time (UTC shown)")
            << F::Time << ts << QVariant(QStringLiteral("2026-11-29 16:46:27 UTC"))
            << QVariant(display::time(t, false)) << QVariant() << JsonValueKind::Timestamp;
        QTest::newRow("age") << F::AgeSeconds << QByteArray("11520")
                             << QVariant(QStringLiteral("3 h 12 min")) << QVariant() << kRight
                             << JsonValueKind::Integer;
        QTest::newRow("duration") << F::DurationMs << QByteArray("350")
                                  << QVariant(QStringLiteral("350 ms"))
                                  << QVariant(QStringLiteral("350 ms")) << kRight
                                  << JsonValueKind::Integer;
        QTest::newRow("short hash")
            << F::ShortHash << hash.toUtf8() << QVariant(hash.left(12) + QChar(0x2026))
            << QVariant(hash) << QVariant() << JsonValueKind::Text;
        QTest::newRow("short hash, short")
            << F::ShortHash << QByteArray("abc") << QVariant(QStringLiteral("abc"))
            << QVariant(QStringLiteral("abc")) << QVariant() << JsonValueKind::Text;
        // A lone CR ends a line too, so "=1+1" after one is not passed off as the whole.
        QTest::newRow("one line, CR")
            << F::OneLine << QByteArray("\r=1+1") << QVariant(QStringLiteral(" …"))
            << QVariant(QStringLiteral("\r=1+1")) << QVariant() << JsonValueKind::Text;
        QTest::newRow("one line, CR LF")
            << F::OneLine << QByteArray("<b>note</b>\r\n=1+1")
            << QVariant(QStringLiteral("<b>note</b> …"))
            << QVariant(QStringLiteral("<b>note</b>\r\n=1+1")) << QVariant() << JsonValueKind::Text;
        QTest::newRow("one line") << F::OneLine << QByteArray("first  line\nsecond")
                                  << QVariant(QStringLiteral("first  line …"))
                                  << QVariant(QStringLiteral("first  line\nsecond")) << QVariant()
                                  << JsonValueKind::Text;
        QTest::newRow("one line, whole")
            << F::OneLine << QByteArray("just one") << QVariant(QStringLiteral("just one"))
            << QVariant(QStringLiteral("just one")) << QVariant() << JsonValueKind::Text;
    }
    void formats()
    {
        QFETCH(F, format);
        QFETCH(QByteArray, raw);
        QFETCH(QVariant, display);
        QFETCH(QVariant, toolTip);
        QFETCH(QVariant, alignment);
        QFETCH(JsonValueKind, json);
        const db::ResultSet rows = makeResult({ "other", "value" }, { { "x", raw } });
        const ResultColumn column { QStringLiteral("value"), QStringLiteral("Value"), format };
        const ResultCell cell { rows, 0, rows.columnIndex(QStringLiteral("value")), true };
        QCOMPARE(column.data(cell, Qt::DisplayRole), display);
        // Every text tooltip goes out escaped
        // (docs/security.md#text-from-the-database-is-plain-text).
        QCOMPARE(column.data(cell, Qt::ToolTipRole),
                 toolTip.isValid() ? QVariant(display::plainToolTip(toolTip.toString()))
                                   : QVariant());
        QCOMPARE(column.toolTip(cell), toolTip);
        QCOMPARE(column.data(cell, Qt::TextAlignmentRole), alignment);
        QCOMPARE(column.data(cell, Qt::ForegroundRole), QVariant());
        QCOMPARE(column.jsonKind(), json);
    }

    void markupAndHugeTextStayPlainAndBounded()
    {
        const QByteArray markup = "<b>x</b><img src=\"file:///etc/hostname\">";
        const QByteArray huge = markup + QByteArray(1000000, 'y');
        const db::ResultSet rows = makeResult({ "value" }, { { huge } });
        for (F format : { F::Text, F::OneLine }) {
            const ResultColumn column { QStringLiteral("value"), QString(), format };
            const ResultCell cell { rows, 0, 0, false };
            const QString shown = column.data(cell, Qt::DisplayRole).toString();
            QVERIFY(shown.startsWith(QString::fromUtf8(markup))); // the delegate paints it plain
            QVERIFY(shown.size() <= display::kMaxCellChars + 2);
            const QString tip = column.data(cell, Qt::ToolTipRole).toString();
            QVERIFY(
                tip.startsWith(QStringLiteral("<qt><p style=\"white-space:pre-wrap\">&lt;b&gt;x")));
            QVERIFY(!tip.contains(QStringLiteral("<img")));
            QVERIFY(tip.size() < display::kMaxToolTipChars + 200);
        }
        // A hook's tooltip is escaped too.
        const ResultColumn hooked { QStringLiteral("value"), QString(), F::Text,
                                    [](const ResultCell &c, int role) -> std::optional<QVariant> {
                                        if (role == Qt::ToolTipRole)
                                            return c.text().left(40);
                                        return std::nullopt;
                                    } };
        QCOMPARE(hooked.data(ResultCell { rows, 0, 0, false }, Qt::ToolTipRole).toString(),
                 display::plainToolTip(QString::fromUtf8(huge.left(40))));
    }

    // A TAB (it moved the rest of the cell to a tab stop), an ESC and a DEL in a text cell show
    // as their control pictures; line breaks stay, and copy-out reads the raw cell.
    void controlCharactersShowAsPictures()
    {
        const QByteArray raw = QByteArray("\t=1+1\x1b[31m\x7f") + "end\nline";
        const db::ResultSet rows = makeResult({ "value" }, { { raw } });
        const ResultColumn column { QStringLiteral("value"), QString(), F::Text };
        QCOMPARE(column.data(ResultCell { rows, 0, 0, false }, Qt::DisplayRole).toString(),
                 QStringLiteral("\u2409=1+1\u241B[31m\u2421end\nline"));
        QCOMPARE(resultRowToJson(rows, 0, {}).value(QStringLiteral("value")).toString(),
                 QString::fromUtf8(raw));
    }

    void missingColumnOrNullIsEmpty_data()
    {
        QTest::addColumn<F>("format");
        for (F f : { F::Text, F::Integer, F::Time, F::AgeSeconds, F::DurationMs, F::ShortHash,
                     F::OneLine })
            QTest::newRow(QByteArray::number(int(f)).constData()) << f;
    }
    void missingColumnOrNullIsEmpty()
    {
        QFETCH(F, format);
        const db::ResultSet rows = makeResult({ "value" }, { { std::nullopt } });
        const ResultColumn column { QStringLiteral("value"), QString(), format };
        for (const ResultCell &cell :
             { ResultCell { rows, 0, 0, false }, ResultCell { rows, 0, -1, false } }) {
            QCOMPARE(column.data(cell, Qt::DisplayRole), QVariant());
            QCOMPARE(column.data(cell, Qt::ToolTipRole), QVariant());
        }
        // A column list naming a result column the statement does not have: empty cells.
        ResultColumnSet set({ { QStringLiteral("nowhere"), QStringLiteral("Nowhere"), format } });
        set.resolve(rows);
        QCOMPARE(set.resultIndex(0), -1);
        QCOMPARE(set.data(rows, 0, 0, Qt::DisplayRole, false), QVariant());
    }

    void hookComesBeforeTheFormat()
    {
        const db::ResultSet rows = makeResult({ "state", "stuck" }, { { "processing", "t" } });
        const ResultColumn column {
            QStringLiteral("state"), QStringLiteral("State"), F::Text,
            [](const ResultCell &cell, int role) -> std::optional<QVariant> {
                if (role == Qt::DisplayRole)
                    return cell.text() + QStringLiteral(" / ") + cell.text(QStringLiteral("stuck"));
                if (role == Qt::ToolTipRole)
                    return QVariant(); // an answer: no tooltip at all
                return std::nullopt; // the format's
            }
        };
        const ResultCell cell { rows, 0, 0, false };
        QCOMPARE(column.data(cell, Qt::DisplayRole).toString(), QStringLiteral("processing / t"));
        QCOMPARE(column.data(cell, Qt::ToolTipRole), QVariant());
        QCOMPARE(column.toolTip(cell), QVariant(QStringLiteral("processing"))); // format alone
        QCOMPARE(column.data(cell, Qt::TextAlignmentRole), QVariant());
    }

    void moneyInItsCurrency()
    {
        const db::ResultSet rows
            = makeResult({ "amount_minor", "currency" },
                         { { "1234", "USD" }, { "1234", "KWD" }, { std::nullopt, "USD" } });
        const ResultColumn column { QStringLiteral("amount_minor"), QStringLiteral("Amount"),
                                    F::Integer, ResultColumn::moneyIn(QStringLiteral("currency")) };
        QCOMPARE(column.data({ rows, 0, 0, false }, Qt::DisplayRole).toString(),
                 QStringLiteral("12.34 USD"));
        QCOMPARE(column.data({ rows, 1, 0, false }, Qt::DisplayRole).toString(),
                 QStringLiteral("1.234 KWD"));
        QCOMPARE(column.data({ rows, 2, 0, false }, Qt::DisplayRole), QVariant());
        QCOMPARE(column.data({ rows, 0, 0, false }, Qt::TextAlignmentRole), kRight);
        QCOMPARE(column.jsonKind(), JsonValueKind::Integer);
    }

    void columnsAreBoundByName()
    {
        ResultColumnSet set(
            { { QStringLiteral("id"), QStringLiteral("Id"), F::Integer },
              { QStringLiteral("dead_at"), QStringLiteral("Dead at"), F::Time } },
            { { Qt::UserRole + 1, QStringLiteral("id"), JsonValueKind::Integer },
              { Qt::UserRole + 2, QStringLiteral("version"), JsonValueKind::Integer },
              { Qt::UserRole + 3, QStringLiteral("dead_at"), JsonValueKind::Timestamp } },
            { { QStringLiteral("version"), JsonValueKind::Integer } });
        const QByteArray ts = "2026-11-29 16:46:27+00";
        const db::ResultSet before
            = makeResult({ "id", "dead_at", "version" }, { { "7", ts, "3" } });
        // The same statement after someone added a column in front: nothing shifts.
        const db::ResultSet after = makeResult({ "amount_minor", "id", "dead_at", "version" },
                                               { { "1250", "7", ts, "3" } });
        for (const db::ResultSet &rows : { before, after }) {
            set.resolve(rows);
            QCOMPARE(set.data(rows, 0, 0, Qt::DisplayRole, true), QVariant(qint64(7)));
            QCOMPARE(set.data(rows, 0, 1, Qt::DisplayRole, true).toString(),
                     QStringLiteral("2026-11-29 16:46:27 UTC"));
            QCOMPARE(set.data(rows, 0, 1, Qt::UserRole + 2, true), QVariant(qint64(3)));
            QCOMPARE(set.data(rows, 0, 0, Qt::UserRole + 3, true).toDateTime(),
                     QDateTime(QDate(2026, 11, 29), QTime(16, 46, 27), QTimeZone::utc()));
            const QJsonObject json = set.data(rows, 0, 1, kRowJsonRole, true).toJsonObject();
            QCOMPARE(json.value(QStringLiteral("id")).toInteger(), 7);
            QCOMPARE(json.value(QStringLiteral("version")).toInteger(), 3);
            QCOMPARE(json.value(QStringLiteral("dead_at")).toString(),
                     QStringLiteral("2026-11-29T16:46:27.000Z"));
        }
        QCOMPARE(set.columnOf(QStringLiteral("dead_at")), 1);
        QCOMPARE(set.columnOf(QStringLiteral("nowhere")), -1);
        QCOMPARE(set.header(1, Qt::DisplayRole).toString(), QStringLiteral("Dead at"));
        QCOMPARE(set.data(after, 1, 0, Qt::DisplayRole, true), QVariant()); // no such row
    }

    void jsonKinds()
    {
        const db::ResultSet rows
            = makeResult({ "n", "flag", "doc", "list", "bad", "text", "nothing" },
                         { { "12", "t", R"({"a":1})", "[1,2]", "{oops", "12", std::nullopt } });
        const QJsonObject o
            = resultRowToJson(rows, 0,
                              { { QStringLiteral("n"), JsonValueKind::Integer },
                                { QStringLiteral("flag"), JsonValueKind::Boolean },
                                { QStringLiteral("doc"), JsonValueKind::Document },
                                { QStringLiteral("list"), JsonValueKind::Document },
                                { QStringLiteral("bad"), JsonValueKind::Document },
                                { QStringLiteral("nothing"), JsonValueKind::Integer } });
        QCOMPARE(o.value(QStringLiteral("n")), QJsonValue(12));
        QCOMPARE(o.value(QStringLiteral("flag")), QJsonValue(true));
        QCOMPARE(o.value(QStringLiteral("doc")).toObject().value(QStringLiteral("a")),
                 QJsonValue(1));
        QCOMPARE(o.value(QStringLiteral("list")).toArray().size(), 2);
        QCOMPARE(o.value(QStringLiteral("bad")), QJsonValue(QStringLiteral("{oops")));
        QCOMPARE(o.value(QStringLiteral("text")), QJsonValue(QStringLiteral("12")));
        QVERIFY(o.value(QStringLiteral("nothing")).isNull());
    }
};

QTEST_GUILESS_MAIN(TestResultColumn)
#include "tst_result_column.moc"
