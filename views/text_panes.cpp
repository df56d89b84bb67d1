// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/text_panes.h"

#include "models/display_format.h"
#include "models/result_column.h"

#include <QAbstractTextDocumentLayout>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QFontDatabase>
#include <QHeaderView>
#include <QLabel>
#include <QPlainTextDocumentLayout>
#include <QPlainTextEdit>
#include <QPointer>
#include <QScreen>
#include <QSettings>
#include <QTableView>
#include <QTextBlock>
#include <QTextCursor>
#include <QTextDocument>
#include <QTimer>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>

namespace redrive::panes {

QFont monospace()
{
    return QFontDatabase::systemFont(QFontDatabase::FixedFont);
}

QPlainTextEdit *readOnlyText(QWidget *parent, const QString &name)
{
    auto *edit = new QPlainTextEdit(parent);
    edit->setObjectName(name);
    edit->setReadOnly(true);
    edit->setTextInteractionFlags(Qt::TextSelectableByMouse | Qt::TextSelectableByKeyboard);
    edit->setFont(monospace());
    edit->setLineWrapMode(QPlainTextEdit::NoWrap);
    return edit;
}

namespace {

// The running feed of one pane: a child of the pane, found by its object name, gone when the
// feed ends or the pane is deleted. It only appends pieces; FeedScheduler decides when.
class TextFeeder : public QObject
{
public:
    TextFeeder(QPlainTextEdit *edit, QString text, std::function<void(int)> onProgress,
               std::function<void()> onDone)
        : QObject(edit)
        , m_edit(edit)
        , m_text(std::move(text))
        , m_onProgress(std::move(onProgress))
        , m_onDone(std::move(onDone))
        , m_undo(edit->document()->isUndoRedoEnabled())
        , m_reveal(edit->isReadOnly())
    {
        setObjectName(QString::fromLatin1(kName));
        edit->document()->setUndoRedoEnabled(false);
        edit->clear();
    }

    static constexpr const char *kName = "redrive_textFeeder";

    // Stops the feed without finishing it (a newer text replaces it).
    void abandon() { end(); }

    bool isDone() const { return m_done; }

    // Appends the next piece of about 4 K UTF-16 units: a turn checks its budget between pieces,
    // so a smaller piece overshoots it less. (A piece cut inside a line already laid out lays
    // that whole line out again, whatever the signals, so bigger pieces suit long lines better:
    // measured, 4 K gives the reconciliation tab's two records 34-39 ms gaps, 16 K 40-67 ms;
    // the edit dialog's 40,000-character lines 25-27 ms turns, 16 K 16-17 ms.)
    void feedPiece()
    {
        constexpr qsizetype kPieceChars = 4 * 1024;
        qsizetype end = std::min(m_fed + kPieceChars, m_text.size());
        if (end < m_text.size()) {
            // A line longer than a piece is cut anywhere but inside a surrogate pair (a
            // read-only pane reveals each piece by code point); a CRLF is one line end, as
            // setPlainText() reads it, so it is never cut.
            const qsizetype newline = m_text.lastIndexOf(QLatin1Char('\n'), end - 1);
            if (newline >= m_fed)
                end = newline + 1;
            else if (m_text.at(end - 1) == QLatin1Char('\r')
                     || m_text.at(end - 1).isHighSurrogate())
                --end;
        }
        const QString piece = m_text.sliced(m_fed, end - m_fed);
        QTextCursor cursor(m_edit->document());
        cursor.movePosition(QTextCursor::End);
        cursor.insertText(m_reveal ? display::revealInvisible(piece) : piece);
        // The edit's own cursor stood at the end of the empty document and moved with the first
        // piece: back to the start, where setPlainText() leaves it (an operator's first key in
        // the edit dialog would otherwise land a hundred lines down).
        if (m_fed == 0)
            m_edit->setTextCursor(QTextCursor(m_edit->document()));
        m_fed = end;
    }

    bool isFed() const { return m_fed >= m_text.size(); }

    // Before a turn's pieces: the pane's layout keeps quiet while they go in. Each insert would
    // otherwise size the scroll bar again, laying out the pane's last page (lines no one sees
    // yet), and repaint the whole viewport: 12 ms a turn for a page of 2,000-character lines.
    // Whether the last line is in view decides the repaint after the turn (found from the
    // viewport's bottom: QPlainTextEdit::cursorRect() of the end would lay out every line
    // between the view and the end).
    void beginTurn()
    {
        m_layout = m_edit->document()->documentLayout();
        const QTextCursor bottom
            = m_edit->cursorForPosition(QPoint(0, m_edit->viewport()->height() - 1));
        m_endInView = bottom.block() == m_edit->document()->lastBlock();
        m_layoutWasBlocked = m_layout->blockSignals(true);
    }

    // After them: the viewport repainted only when what it shows grew (the end of the text was
    // in view), and the scroll bar sized again then, at the end of the feed, and every
    // kResizeScrollBarMs between (each sizing lays out the new last page).
    void endTurn()
    {
        if (!m_layout)
            return;
        m_layout->blockSignals(m_layoutWasBlocked);
        if (m_endInView || isFed() || !m_sized.isValid()
            || m_sized.elapsed() >= kResizeScrollBarMs) {
            Q_EMIT m_layout->documentSizeChanged(m_layout->documentSize());
            m_sized.start();
        }
        if (m_endInView)
            m_edit->viewport()->update();
        m_layout = nullptr;
    }

    // After a turn that fed this feed: progress, or the end of the feed (`onDone` runs last, and
    // may start another feed). Each callback runs from a copy: one that opens a nested event
    // loop may see this feeder finished and deleted there.
    void turnEnded()
    {
        if (!isFed()) {
            if (const auto progress = m_onProgress)
                progress(int(m_fed * 100 / m_text.size()));
            return;
        }
        end();
        if (const auto done = std::move(m_onDone))
            done();
    }

private:
    // Undo as it was, no longer found as the pane's feed, deleted from the event loop.
    void end()
    {
        m_edit->document()->setUndoRedoEnabled(m_undo);
        setObjectName(QString());
        m_done = true;
        deleteLater();
    }

    QPlainTextEdit *m_edit;
    QString m_text;
    qsizetype m_fed = 0; // UTF-16 units of m_text already in the document
    std::function<void(int)> m_onProgress;
    std::function<void()> m_onDone;
    bool m_undo;
    bool m_reveal; // a read-only pane: hidden characters as markers
    bool m_done = false;
    QPointer<QAbstractTextDocumentLayout> m_layout; // quiet for the turn running, else null
    bool m_layoutWasBlocked = false; // restored after the turn
    bool m_endInView = false;
    QElapsedTimer m_sized; // since the scroll bar was last sized to the text fed so far
    static constexpr qint64 kResizeScrollBarMs = 100;
};

// Every feed of the GUI thread, served from one zero-interval timer: one turn of the event loop
// appends pieces to the panes in turn until kFeedSliceMs have passed, so two panes fed at once
// (ours and the provider's record) share one slice instead of taking one each back to back.
class FeedScheduler : public QTimer
{
public:
    static FeedScheduler &instance()
    {
        static QPointer<FeedScheduler> scheduler;
        if (!scheduler)
            scheduler = new FeedScheduler(QCoreApplication::instance());
        return *scheduler;
    }

    void add(TextFeeder *feeder)
    {
        m_feeders << feeder;
        if (!isActive())
            start();
    }

private:
    explicit FeedScheduler(QObject *parent)
        : QTimer(parent)
    {
        setInterval(0);
        connect(this, &QTimer::timeout, this, &FeedScheduler::turn);
    }

    void turn()
    {
        QElapsedTimer clock;
        clock.start();
        const QList<QPointer<TextFeeder>> feeders = m_feeders;
        QList<QPointer<TextFeeder>> fed;
        // A feed already whole but not yet told (a nested event loop ran a turn meanwhile) is
        // told in this one.
        for (const QPointer<TextFeeder> &feeder : feeders)
            if (feeder && !feeder->isDone() && feeder->isFed())
                fed << feeder;
        bool more = true;
        while (more && clock.elapsed() < kFeedSliceMs) {
            more = false;
            for (const QPointer<TextFeeder> &feeder : feeders) {
                if (!feeder || feeder->isDone() || feeder->isFed())
                    continue;
                if (!fed.contains(feeder)) {
                    feeder->beginTurn();
                    fed << feeder;
                }
                feeder->feedPiece();
                // (A slot on the edit's textChanged may have deleted it.)
                more = more || (feeder && !feeder->isFed());
                if (clock.elapsed() >= kFeedSliceMs)
                    break;
            }
        }
        for (const QPointer<TextFeeder> &feeder : fed)
            if (feeder)
                feeder->endTurn();
        // Callbacks last: one may start a feed (added to m_feeders) or abandon another.
        for (const QPointer<TextFeeder> &feeder : fed)
            if (feeder && !feeder->isDone())
                feeder->turnEnded();
        m_feeders.removeIf(
            [](const QPointer<TextFeeder> &feeder) { return !feeder || feeder->isDone(); });
        // The first feed goes last next turn: a slow piece of one never starves the others.
        if (m_feeders.size() > 1)
            m_feeders.move(0, m_feeders.size() - 1);
        if (m_feeders.isEmpty())
            stop();
    }

    QList<QPointer<TextFeeder>> m_feeders;
};

// A read-only pane's document of more than kFeedAtOnceChars characters is replaced by an empty
// one, and the old one deleted on a pool thread: clearing one of 400,000 lines took the GUI
// thread 77 ms here (and five times that on a loaded machine). The pane's extra selections go
// first (their cursors point into the old document).
void emptyWithoutClearing(QPlainTextEdit *edit)
{
    QTextDocument *old = edit->document();
    if (!edit->isReadOnly() || old->characterCount() <= kFeedAtOnceChars)
        return;
    QObject *owner = old->parent();
    // The edit deletes a document it (or its text control) owns when it is replaced: taken from
    // it, it is deleted off the GUI thread instead. A document someone else owns is left alone.
    const bool ours = owner && (owner == edit || owner->parent() == edit);
    edit->setExtraSelections({});
    auto *fresh = new QTextDocument(edit);
    fresh->setDocumentLayout(new QPlainTextDocumentLayout(fresh));
    fresh->setDefaultFont(old->defaultFont());
    fresh->setUndoRedoEnabled(old->isUndoRedoEnabled());
    if (ours)
        old->setParent(nullptr);
    edit->setDocument(fresh);
    if (!ours)
        return;
    old->moveToThread(nullptr); // no thread's events any more: any thread may delete it
    (void)QtConcurrent::run([old] { delete old; });
}

TextFeeder *runningFeeder(const QPlainTextEdit *edit)
{
    // By name: only a TextFeeder carries it (the class has no meta-object of its own).
    TextFeeder *feeder = static_cast<TextFeeder *>(edit->findChild<QObject *>(
        QString::fromLatin1(TextFeeder::kName), Qt::FindDirectChildrenOnly));
    return feeder && !feeder->isDone() ? feeder : nullptr;
}

} // namespace

void setPlainTextInSlices(QPlainTextEdit *edit, QString text, std::function<void(int)> onProgress,
                          std::function<void()> onDone)
{
    if (TextFeeder *running = runningFeeder(edit))
        running->abandon();
    emptyWithoutClearing(edit);
    if (text.size() <= kFeedAtOnceChars) {
        edit->setPlainText(edit->isReadOnly() ? display::revealInvisible(text) : text);
        if (onDone)
            onDone();
        return;
    }
    // The first slice waits for the event loop too: the caller's own work (a result just
    // delivered, a row just selected) and a slice would otherwise add up to one long gap.
    FeedScheduler::instance().add(
        new TextFeeder(edit, std::move(text), std::move(onProgress), std::move(onDone)));
}

bool isFeeding(const QPlainTextEdit *edit)
{
    return runningFeeder(edit) != nullptr;
}

QLabel *note(QWidget *parent, const QString &name)
{
    auto *label = new QLabel(parent);
    label->setObjectName(name);
    label->setWordWrap(true);
    label->setTextFormat(Qt::PlainText);
    label->setStyleSheet(QStringLiteral("color: #555555;"));
    return label;
}

QLabel *title(QWidget *parent)
{
    auto *label = new QLabel(parent);
    QFont font = label->font();
    font.setBold(true);
    label->setFont(font);
    label->setTextFormat(Qt::PlainText);
    return label;
}

QWidget *titled(QLabel *title, QWidget *body, QWidget *parent)
{
    auto *box = new QWidget(parent);
    auto *layout = new QVBoxLayout(box);
    layout->setContentsMargins(0, 6, 0, 0);
    layout->setSpacing(4);
    layout->addWidget(title);
    layout->addWidget(body, 1);
    return box;
}

void fitColumns(QTableView *table, int maxWidth)
{
    if (!table->model() || table->model()->rowCount() == 0)
        return;
    QHeaderView *header = table->horizontalHeader();
    table->resizeColumnsToContents();
    for (int c = 0; c < header->count(); ++c)
        header->resizeSection(c, std::min(header->sectionSize(c) + 12, maxWidth));
}

namespace {

QStringList columnNames(const QTableView *table)
{
    QStringList names;
    const QAbstractItemModel *model = table->model();
    for (int c = 0; model && c < model->columnCount(); ++c)
        names << model->headerData(c, Qt::Horizontal, kColumnNameRole).toString();
    return names;
}

} // namespace

void saveColumns(QSettings &settings, const QString &key, const QTableView *table)
{
    settings.setValue(key + QStringLiteral("/names"), columnNames(table));
    settings.setValue(key + QStringLiteral("/state"), table->horizontalHeader()->saveState());
}

bool restoreColumns(const QSettings &settings, const QString &key, QTableView *table)
{
    if (!table->model()
        || settings.value(key + QStringLiteral("/names")).toStringList() != columnNames(table))
        return false;
    return table->horizontalHeader()->restoreState(
        settings.value(key + QStringLiteral("/state")).toByteArray());
}

void setColumnWidthsByName(QTableView *table, const QList<std::pair<QString, int>> &widths)
{
    const QStringList names = columnNames(table);
    for (const auto &[name, width] : widths) {
        const qsizetype c = names.indexOf(name);
        if (c >= 0)
            table->setColumnWidth(int(c), width);
    }
}

void ignoreTextWidth(QLabel *label)
{
    QSizePolicy policy = label->sizePolicy();
    policy.setHorizontalPolicy(QSizePolicy::Ignored);
    label->setSizePolicy(policy);
}

void restoreGeometryOnScreen(QWidget *window, const QByteArray &geometry)
{
    if (!geometry.isEmpty())
        window->restoreGeometry(geometry);
    const QScreen *screen = window->screen();
    if (!screen)
        return;
    const QRect available = screen->availableGeometry();
    const QSize size = window->size().boundedTo(available.size());
    if (size != window->size())
        window->resize(size);
    // The frame counts when moving: keep the title bar reachable.
    const QRect frame = window->frameGeometry();
    QPoint topLeft = frame.topLeft();
    topLeft.setX(std::clamp(topLeft.x(), available.left(),
                            std::max(available.left(), available.right() - frame.width() + 1)));
    topLeft.setY(std::clamp(topLeft.y(), available.top(),
                            std::max(available.top(), available.bottom() - frame.height() + 1)));
    if (topLeft != frame.topLeft())
        window->move(topLeft);
}

QByteArray geometryWorthSaving(const QWidget *window)
{
    const QScreen *screen = window->screen();
    if (screen) {
        const QSize available = screen->availableGeometry().size();
        if (window->width() > available.width() || window->height() > available.height())
            return {};
    }
    return window->saveGeometry();
}

} // namespace redrive::panes
