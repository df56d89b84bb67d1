// SPDX-License-Identifier: GPL-3.0-or-later
// panes::setPlainTextInSlices without a server: several panes fed at once from the one scheduler
// end with their whole text and a scroll range that reaches its end, a feed may start another
// from its callbacks, and a pane deleted mid-feed stops only its own feed
// (docs/architecture.md#long-text-in-panes).
#include "views/text_panes.h"

#include <QAbstractTextDocumentLayout>
#include <QPlainTextEdit>
#include <QScrollBar>
#include <QTest>
#include <QTextBlock>
#include <memory>

using namespace redrive;

namespace {

// 30,000 lines: short ones, and every 1,000th 40,000 characters long (more than two of a feed's
// pieces, so some pieces are cut inside a line).
QString manyLines(QChar fill)
{
    QString text;
    for (int i = 0; i < 30000; ++i) {
        text += QStringLiteral("line %1 ").arg(i);
        text += QString(i % 1000 == 0 ? 40000 : 20, fill);
        text += QLatin1Char('\n');
    }
    return text + QStringLiteral("the end");
}

std::unique_ptr<QPlainTextEdit> shownPane()
{
    auto edit = std::unique_ptr<QPlainTextEdit>(panes::readOnlyText(nullptr, QStringLiteral("p")));
    edit->resize(400, 300);
    edit->show();
    return edit;
}

} // namespace

class TestTextPanes : public QObject
{
    Q_OBJECT

private slots:
    // Two panes fed at once share the scheduler's turns; each ends holding its text exactly,
    // with a vertical scroll range that reaches the last line (the layout's size signals are
    // held back during a turn and must be given once the feed ends).
    void panesFedTogetherEndWithTheirTextAndScrollRange()
    {
        const QString ours = manyLines(QLatin1Char('o'));
        const QString theirs = manyLines(QLatin1Char('t'));
        QVERIFY(ours.size() > panes::kFeedAtOnceChars);
        auto a = shownPane();
        auto b = shownPane();
        int doneA = 0;
        int doneB = 0;
        int progressA = 0;
        panes::setPlainTextInSlices(
            a.get(), ours, [&](int) { ++progressA; }, [&] { ++doneA; });
        panes::setPlainTextInSlices(b.get(), theirs, {}, [&] { ++doneB; });
        QVERIFY(panes::isFeeding(a.get()));
        QVERIFY(panes::isFeeding(b.get()));
        QTRY_VERIFY_WITH_TIMEOUT(!panes::isFeeding(a.get()) && !panes::isFeeding(b.get()), 30000);
        QCOMPARE(doneA, 1);
        QCOMPARE(doneB, 1);
        QVERIFY(progressA > 0);
        QCOMPARE(a->toPlainText(), ours);
        QCOMPARE(b->toPlainText(), theirs);
        for (QPlainTextEdit *pane : { a.get(), b.get() }) {
            // The layout speaks again, and the caret is where setPlainText() leaves it.
            QVERIFY(!pane->document()->documentLayout()->signalsBlocked());
            QCOMPARE(pane->textCursor().position(), 0);
        }

        // Scrolled to its end, each pane shows the last line: the range covers the whole text.
        for (QPlainTextEdit *pane : { a.get(), b.get() }) {
            QVERIFY(pane->verticalScrollBar()->maximum() > 29000);
            pane->verticalScrollBar()->setValue(pane->verticalScrollBar()->maximum());
            QCoreApplication::processEvents();
            QCOMPARE(
                pane->cursorForPosition(QPoint(0, pane->viewport()->height() - 1)).block().text(),
                QStringLiteral("the end"));
        }
    }

    // A feed's onDone may give the same pane another text, and a progress callback may replace
    // another pane's feed: both run after the turn, and each pane ends with its last text.
    void callbacksMayStartFeeds()
    {
        const QString first = manyLines(QLatin1Char('1'));
        const QString second = manyLines(QLatin1Char('2'));
        const QString replaced = manyLines(QLatin1Char('r'));
        auto a = shownPane();
        auto b = shownPane();
        bool bReplaced = false;
        int doneB = 0;
        panes::setPlainTextInSlices(
            a.get(), first,
            [&](int) {
                if (!bReplaced) {
                    bReplaced = true;
                    panes::setPlainTextInSlices(b.get(), replaced, {}, [&] { ++doneB; });
                }
            },
            [&] { panes::setPlainTextInSlices(a.get(), second); });
        panes::setPlainTextInSlices(b.get(), first, {}, [&] { doneB += 100; });
        QTRY_VERIFY_WITH_TIMEOUT(a->toPlainText() == second && !panes::isFeeding(a.get())
                                     && !panes::isFeeding(b.get()),
                                 30000);
        QCOMPARE(b->toPlainText(), replaced);
        QCOMPARE(doneB, 1); // the replaced feed never finished
    }

    // An editable pane (the edit dialog's editor) fed a long text: exactly that text, the caret
    // at the start, undo on again afterwards with nothing to undo (the feed is not an edit).
    void editablePaneEndsAsSetPlainTextLeavesIt()
    {
        const QString text = manyLines(QLatin1Char('e'));
        QPlainTextEdit edit; // as the edit dialog makes its editor
        edit.setFont(panes::monospace());
        edit.setLineWrapMode(QPlainTextEdit::NoWrap);
        edit.resize(400, 300);
        edit.show();
        QVERIFY(edit.document()->isUndoRedoEnabled());
        panes::setPlainTextInSlices(&edit, text);
        QVERIFY(panes::isFeeding(&edit));
        QTRY_VERIFY_WITH_TIMEOUT(!panes::isFeeding(&edit), 30000);
        QCOMPARE(edit.toPlainText(), text);
        QCOMPARE(edit.textCursor().position(), 0);
        QVERIFY(edit.document()->isUndoRedoEnabled());
        QVERIFY(!edit.document()->isUndoAvailable());
        QVERIFY(!edit.document()->documentLayout()->signalsBlocked());
    }

    // A pane deleted while it is fed takes its feed with it; the other pane's feed goes on.
    void deletedPaneStopsOnlyItsFeed()
    {
        const QString text = manyLines(QLatin1Char('d'));
        auto a = shownPane();
        auto b = shownPane();
        int doneA = 0;
        int progressB = 0;
        panes::setPlainTextInSlices(a.get(), text, {}, [&] { ++doneA; });
        panes::setPlainTextInSlices(b.get(), text, [&](int) { ++progressB; });
        QTRY_VERIFY_WITH_TIMEOUT(progressB > 0, 30000);
        QVERIFY(panes::isFeeding(b.get()));
        b.reset();
        QTRY_VERIFY_WITH_TIMEOUT(!panes::isFeeding(a.get()), 30000);
        QCOMPARE(doneA, 1);
        QCOMPARE(a->toPlainText(), text);
    }
};

QTEST_MAIN(TestTextPanes)
#include "tst_text_panes.moc"
