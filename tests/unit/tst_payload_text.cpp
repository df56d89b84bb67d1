// SPDX-License-Identifier: GPL-3.0-or-later
// How payloads become text (docs/domain.md#payloads-are-shown-as-they-are): JSON is indented
// without changing a literal, valid UTF-8 stays text, anything else is a hex dump behind a marker,
// previews say so, and sizes and durations read like a person would write them.
#include "models/display_format.h"
#include "models/payload_text.h"

#include <QLocale>
#include <QStringDecoder>
#include <QTest>

using namespace redrive;

class TestPayloadText : public QObject
{
    Q_OBJECT
private Q_SLOTS:
    void initTestCase() { QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates)); }

    void indentJson_data()
    {
        QTest::addColumn<QByteArray>("input");
        QTest::addColumn<QByteArray>("expected");
        QTest::newRow("object") << QByteArray(R"({"a": 1, "b": [true, null]})")
                                << QByteArray("{\n    \"a\": 1,\n    \"b\": [\n        true,\n"
                                              "        null\n    ]\n}");
        QTest::newRow("empty containers") << QByteArray(R"({"a": {}, "b": [ ]})")
                                          << QByteArray("{\n    \"a\": {},\n    \"b\": []\n}");
        QTest::newRow("numbers kept exactly")
            << QByteArray(R"([12345678901234567890, 1.10, 1e400, -0.0])")
            << QByteArray("[\n    12345678901234567890,\n    1.10,\n    1e400,\n    -0.0\n]");
        QTest::newRow("strings copied verbatim")
            << QByteArray("{\"k\": \"a{b,c}:[d]\", \"e\": \"q\\\"uote\\\\\", \"u\": \"\\u00e9 é\"}")
            << QByteArray("{\n    \"k\": \"a{b,c}:[d]\",\n    \"e\": \"q\\\"uote\\\\\",\n"
                          "    \"u\": \"\\u00e9 é\"\n}");
        QTest::newRow("scalar") << QByteArray("  42 ") << QByteArray("42");
        QTest::newRow("cut preview") << QByteArray(R"({"items": [{"n": 1}, {"n")")
                                     << QByteArray("{\n    \"items\": [\n        {\n"
                                                   "            \"n\": 1\n        },\n"
                                                   "        {\n            \"n\"");
    }
    void indentJson()
    {
        QFETCH(QByteArray, input);
        QFETCH(QByteArray, expected);
        QCOMPARE(PayloadText::indentJson(input), expected);
    }

    void parseJsonKeepsOrderAndLiterals()
    {
        QString error;
        const auto root = PayloadText::parseJson(
            R"({"z": 12345678901234567890, "a": [1.10, "x\ny", false], "m": {"k": null}, )"
            R"("s": "\ud83d\ude00 Zoë"})",
            &error);
        QVERIFY2(root, qPrintable(error));
        QCOMPARE(root->type, JsonNode::Type::Object);
        QCOMPARE(root->children.size(), std::size_t(4));
        QCOMPARE(root->children[0].key, QStringLiteral("z")); // document order, not sorted
        QCOMPARE(root->children[0].value, QStringLiteral("12345678901234567890"));
        QCOMPARE(root->children[1].children[0].value, QStringLiteral("1.10"));
        QCOMPARE(root->children[1].children[1].value, QStringLiteral("x\ny"));
        QCOMPARE(root->children[1].children[2].type, JsonNode::Type::Bool);
        QCOMPARE(root->children[2].children[0].type, JsonNode::Type::Null);
        QCOMPARE(root->children[3].value, QStringLiteral("😀 Zoë"));
    }

    void parseJsonRejects_data()
    {
        QTest::addColumn<QByteArray>("input");
        QTest::newRow("trailing comma") << QByteArray(R"({"a": 1,})");
        QTest::newRow("leading zero") << QByteArray("[01]");
        QTest::newRow("single quotes") << QByteArray("{'a': 1}");
        QTest::newRow("control character") << QByteArray("[\"a\tb\"]");
        QTest::newRow("garbage after") << QByteArray("{} x");
        QTest::newRow("cut") << QByteArray(R"({"a": [1, 2)");
        QTest::newRow("bad escape") << QByteArray(R"(["\x"])");
        QTest::newRow("empty") << QByteArray();
        QTest::newRow("invalid UTF-8") << QByteArray("[\"\xC3\x28\"]");
        QTest::newRow("too deep") << QByteArray(600, '[') + QByteArray(600, ']');
    }
    void parseJsonRejects()
    {
        QFETCH(QByteArray, input);
        QString error;
        QVERIFY(!PayloadText::parseJson(input, &error));
        QVERIFY(!error.isEmpty());
    }

    void utf8Validity_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::addColumn<bool>("valid");
        QTest::addColumn<bool>("validAsPreview");
        QTest::addColumn<int>("firstInvalid");
        QTest::newRow("ascii") << QByteArray("hello") << true << true << -1;
        QTest::newRow("two-byte é") << QByteArray("caf\xC3\xA9") << true << true << -1;
        QTest::newRow("three-byte €") << QByteArray("\xE2\x82\xAC") << true << true << -1;
        QTest::newRow("four-byte emoji") << QByteArray("\xF0\x9F\x98\x80") << true << true << -1;
        QTest::newRow("C3 28") << QByteArray("a\xC3\x28") << false << false << 1;
        QTest::newRow("FF") << QByteArray("ab\xFF") << false << false << 2;
        QTest::newRow("lone continuation") << QByteArray("\x80x") << false << false << 0;
        QTest::newRow("overlong C0 AF") << QByteArray("\xC0\xAF") << false << false << 0;
        QTest::newRow("overlong E0 80 AF") << QByteArray("\xE0\x80\xAF") << false << false << 0;
        QTest::newRow("surrogate ED A0 80") << QByteArray("\xED\xA0\x80") << false << false << 0;
        QTest::newRow("above U+10FFFF") << QByteArray("\xF4\x90\x80\x80") << false << false << 0;
        QTest::newRow("cut at the end") << QByteArray("ok\xF0\x9F\x98") << false << true << 2;
        QTest::newRow("cut in the middle") << QByteArray("\xE2\x82x") << false << false << 0;
    }
    void utf8Validity()
    {
        QFETCH(QByteArray, bytes);
        QFETCH(bool, valid);
        QFETCH(bool, validAsPreview);
        QFETCH(int, firstInvalid);
        qsizetype at = -2;
        QCOMPARE(PayloadText::isValidUtf8(bytes, false, &at), valid);
        QCOMPARE(at, qsizetype(firstInvalid));
        QCOMPARE(PayloadText::isValidUtf8(bytes, true), validAsPreview);
        // The same judgement as Qt's own decoder, which replaces what we refuse to.
        QStringDecoder decoder(QStringDecoder::Utf8, QStringDecoder::Flag::Stateless);
        const QString decoded = decoder.decode(bytes);
        QCOMPARE(!decoder.hasError(), valid);
        Q_UNUSED(decoded);
    }

    void nonAsciiUtf8StaysText()
    {
        const QByteArray text = "Zoë Ångström — 東京 😀\nline two";
        const auto r = PayloadText::render(text, false, text.size());
        QCOMPARE(r.kind, PayloadText::Kind::Text);
        QCOMPARE(r.text, QString::fromUtf8(text));
        const QByteArray json = R"({"name": "Zoë"})";
        const auto j = PayloadText::render(json, true, json.size());
        QCOMPARE(j.kind, PayloadText::Kind::Json);
        QCOMPARE(j.text, QStringLiteral("{\n    \"name\": \"Zoë\"\n}"));
    }

    void invalidUtf8IsHexDumped_data()
    {
        QTest::addColumn<QByteArray>("bytes");
        QTest::newRow("C3 28") << QByteArray("\xC3\x28");
        QTest::newRow("FF") << QByteArray("\xFF");
        QTest::newRow("lone continuation") << QByteArray("abc\x80");
    }
    void invalidUtf8IsHexDumped()
    {
        QFETCH(QByteArray, bytes);
        const auto r = PayloadText::render(bytes, false, bytes.size());
        QCOMPARE(r.kind, PayloadText::Kind::Hex);
        const QStringList lines = r.text.split(QLatin1Char('\n'));
        QCOMPARE(lines.first(),
                 QStringLiteral("[binary payload: %1, not valid UTF-8 — shown as hex]")
                     .arg(bytes.size() == 1 ? QStringLiteral("1 byte")
                                            : QStringLiteral("%1 bytes").arg(bytes.size())));
        QVERIFY(lines.at(1).startsWith(QStringLiteral("00000000  ")));
        QVERIFY(lines.at(1).contains(QString::fromLatin1(bytes.toHex(' '))));
    }

    void hexDumpLayout()
    {
        QByteArray bytes;
        for (int i = 0; i < 20; ++i)
            bytes.append(char(i == 1 ? 'A' : 0xF0 + (i % 16)));
        const QStringList lines = PayloadText::hexDump(bytes).split(QLatin1Char('\n'));
        QCOMPARE(lines.size(), 2);
        QCOMPARE(lines.at(0),
                 QStringLiteral("00000000  f0 41 f2 f3 f4 f5 f6 f7  f8 f9 fa fb fc fd fe ff"
                                "  |.A..............|"));
        // A short last line keeps the ASCII column where the full lines have it.
        QVERIFY(lines.at(1).startsWith(QStringLiteral("00000010  f0 f1 f2 f3   ")));
        QVERIFY(lines.at(1).endsWith(QStringLiteral("  |....|")));
        QCOMPARE(lines.at(1).indexOf(QLatin1Char('|')), lines.at(0).indexOf(QLatin1Char('|')));
        QCOMPARE(PayloadText::binaryMarker(1234),
                 QStringLiteral("[binary payload: 1,234 bytes, not valid UTF-8 — shown as hex]"));
    }

    void previewIsMarkedFirstAndLast()
    {
        // A UTF-8 preview cut inside a character is still text, not "binary".
        const QByteArray full
            = QByteArray("{\"note\": \"") + QByteArray(3000, 'a') + "\xE2\x82\xAC\"}";
        const QByteArray preview = full.left(full.size() - 3); // cuts the euro sign
        const auto r = PayloadText::render(preview, true, full.size());
        QCOMPARE(r.kind, PayloadText::Kind::Json);
        const QString marker = PayloadText::previewMarker(preview.size(), full.size());
        QVERIFY(marker.contains(QStringLiteral("3,015 bytes")));
        QVERIFY(r.text.startsWith(marker));
        QVERIFY(r.text.endsWith(marker));
        // A binary preview keeps the whole payload's size in its marker.
        const QByteArray binary = QByteArray("\xFF\xFE") + QByteArray(100, 'x');
        const auto b = PayloadText::render(binary.left(10), false, binary.size());
        QCOMPARE(b.kind, PayloadText::Kind::Hex);
        QVERIFY(b.text.contains(PayloadText::binaryMarker(binary.size())));
        QVERIFY(b.text.startsWith(PayloadText::previewMarker(10, binary.size())));
    }

    void emptyPayload()
    {
        QCOMPARE(PayloadText::render({}, false, 0).kind, PayloadText::Kind::Empty);
    }

    void sizes_data()
    {
        QTest::addColumn<qint64>("bytes");
        QTest::addColumn<QString>("expected");
        QTest::newRow("0") << qint64(0) << QStringLiteral("0 bytes");
        QTest::newRow("1") << qint64(1) << QStringLiteral("1 byte");
        QTest::newRow("1023") << qint64(1023) << QStringLiteral("1,023 bytes");
        QTest::newRow("1 KiB") << qint64(1024) << QStringLiteral("1.0 KiB");
        QTest::newRow("1.5 KiB") << qint64(1536) << QStringLiteral("1.5 KiB");
        QTest::newRow("1 MiB") << qint64(1024 * 1024) << QStringLiteral("1.0 MiB");
        QTest::newRow("3.2 MiB") << qint64(3355443) << QStringLiteral("3.2 MiB");
        QTest::newRow("2 GiB") << qint64(2) * 1024 * 1024 * 1024 << QStringLiteral("2.0 GiB");
    }
    void sizes()
    {
        QFETCH(qint64, bytes);
        QFETCH(QString, expected);
        QCOMPARE(PayloadText::formatSize(bytes), expected);
    }

    void byteCounts()
    {
        QCOMPARE(PayloadText::formatByteCount(1234), QStringLiteral("1,234 bytes"));
        QCOMPARE(PayloadText::formatByteCount(3145728), QStringLiteral("3,145,728 bytes"));
    }

    // Backoff and duration cells of the retry history (pure formatting, no database).
    void durations_data()
    {
        QTest::addColumn<qint64>("ms");
        QTest::addColumn<QString>("expected");
        QTest::newRow("ms") << qint64(350) << QStringLiteral("350 ms");
        QTest::newRow("seconds") << qint64(1850) << QStringLiteral("1.8 s");
        QTest::newRow("minutes and seconds") << qint64(252000) << QStringLiteral("4 min 12 s");
        QTest::newRow("whole minutes") << qint64(120000) << QStringLiteral("2 min");
        QTest::newRow("hours") << qint64(7500000) << QStringLiteral("2 h 5 min");
        QTest::newRow("days") << qint64(100800000) << QStringLiteral("1 d 4 h");
    }
    void durations()
    {
        QFETCH(qint64, ms);
        QFETCH(QString, expected);
        QCOMPARE(display::duration(ms), expected);
    }

    // RFC 8259 sets no limit on a number's size: what a double cannot hold is still JSON, and is
    // checked without going through one (the edit dialog's check).
    void checkJsonAcceptsAnyNumber_data()
    {
        QTest::addColumn<QByteArray>("json");
        QTest::newRow("1e400") << QByteArray("{\"huge\": 1e400}");
        QTest::newRow("401 digits") << "{\"digits\": " + QByteArray(401, '9') + "}";
        QTest::newRow("-0") << QByteArray("[-0]");
        QTest::newRow("1.0E+2") << QByteArray("[1.0E+2, -1e-400, 0.10000000000000000000000001]");
        QTest::newRow("string") << QByteArray("{\"s\": \"\\u00e9\\n\\\"\\ud83d\\ude00\"}");
        QTest::newRow("deep") << QByteArray(500, '[') + QByteArray(500, ']');
    }
    void checkJsonAcceptsAnyNumber()
    {
        QFETCH(QByteArray, json);
        QString error;
        QCOMPARE(PayloadText::checkJson(json, &error), qsizetype(-1));
        QCOMPARE(error, QString());
        QVERIFY(PayloadText::parseJson(json).has_value());
    }

    void checkJsonNamesTheFirstProblem_data()
    {
        QTest::addColumn<QByteArray>("json");
        QTest::addColumn<qsizetype>("offset");
        QTest::addColumn<QString>("error");
        QTest::newRow("missing value") << QByteArray("{\"n\": 1,\n \"amount\": }") << qsizetype(20)
                                       << QStringLiteral("expected a value");
        QTest::newRow("trailing") << QByteArray("{} x") << qsizetype(3)
                                  << QStringLiteral("unexpected text after the document");
        QTest::newRow("bad escape")
            << QByteArray("[\"a\\x\"]") << qsizetype(4) << QStringLiteral("bad escape");
        QTest::newRow("control") << QByteArray("[\"a\tb\"]") << qsizetype(3)
                                 << QStringLiteral("control character in a string");
        QTest::newRow("leading zero")
            << QByteArray("[01]") << qsizetype(2) << QStringLiteral("expected ',' or ']'");
        QTest::newRow("too deep") << QByteArray(600, '[') + QByteArray(600, ']') << qsizetype(513)
                                  << QStringLiteral("nested too deeply");
        QTest::newRow("empty") << QByteArray() << qsizetype(0)
                               << QStringLiteral("expected a value");
    }
    void checkJsonNamesTheFirstProblem()
    {
        QFETCH(QByteArray, json);
        QFETCH(qsizetype, offset);
        QFETCH(QString, error);
        QString what;
        QCOMPARE(PayloadText::checkJson(json, &what), offset);
        QCOMPARE(what, error);
    }
};

QTEST_APPLESS_MAIN(TestPayloadText)
#include "tst_payload_text.moc"
