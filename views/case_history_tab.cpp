// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/case_history_tab.h"

#include "models/dead_letter_case.h"
#include "models/display_format.h"
#include "views/attempt_timeline_plot.h"
#include "views/error_presenter.h"
#include "views/text_panes.h"

#include <QHeaderView>
#include <QLabel>
#include <QLocale>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QTableView>
#include <QVBoxLayout>
#include <algorithm>

namespace redrive {

namespace {

/// The attempts model's message column.
constexpr int kAttemptMessageColumn = AttemptHistoryModel::Message;

// Most lines the attempt detail pane shows: a pane of 100,000 lines is laid out again, every
// line, each time its width changes (a tab shown, a splitter moved: 60 ms here), so an attempt
// whose message and stack run longer shows its head and says how to get the whole.
constexpr qsizetype kMaxDetailLines = 5000;

} // namespace

CaseHistoryTab::CaseHistoryTab(DeadLetterCase *deadLetterCase, bool showUtc,
                               const TableMaker &makeTable, QWidget *parent)
    : QWidget(parent)
    , m_case(deadLetterCase)
    , m_showUtc(showUtc)
{
    auto *pageLayout = new QVBoxLayout(this);
    pageLayout->setContentsMargins(0, 4, 0, 0);
    m_story = new QLabel(this);
    m_story->setObjectName(QStringLiteral("historyStory"));
    m_story->setTextFormat(Qt::PlainText);
    m_story->setWordWrap(true);
    m_story->setTextInteractionFlags(Qt::TextSelectableByMouse);
    panes::ignoreTextWidth(m_story);
    m_count = panes::note(this, QStringLiteral("historyCount"));
    pageLayout->addWidget(m_story);
    pageLayout->addWidget(m_count);
    auto *splitter = new QSplitter(Qt::Vertical, this);
    pageLayout->addWidget(splitter, 1);
    splitter->setChildrenCollapsible(false);
    m_attemptsTable = makeTable(splitter, QStringLiteral("attemptsTable"));
    m_attemptsTable->setModel(m_case->attemptsModel());
    // The message takes what the other columns leave, so the backoff stays in view.
    m_attemptsTable->horizontalHeader()->setStretchLastSection(false);
    m_attemptsTable->horizontalHeader()->setSectionResizeMode(kAttemptMessageColumn,
                                                              QHeaderView::Stretch);
    connect(m_attemptsTable->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &CaseHistoryTab::showSelectedAttempt);
    m_timeline = new AttemptTimelinePlot(splitter);
    m_timeline->setObjectName(QStringLiteral("timeline"));
    m_timeline->setShowUtc(m_showUtc);
    m_attemptDetail = panes::readOnlyText(splitter, QStringLiteral("attemptDetail"));
    m_attemptDetail->setPlaceholderText(
        tr("Select an attempt to see its message and stack trace."));
    splitter->addWidget(m_attemptsTable);
    splitter->addWidget(m_timeline);
    splitter->addWidget(m_attemptDetail);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 3);
    splitter->setStretchFactor(2, 2);
    AttemptHistoryModel *history = m_case->attemptsModel();
    connect(history, &KeysetPageModel::pageLoaded, this, [this](int rows) {
        if (m_case->attemptsModel()->pageCount() == 1)
            showFirstPage();
        else if (rows > 0)
            showCount();
    });
    connect(history, &KeysetPageModel::totalChanged, this, [this] { showCount(); });
}

bool CaseHistoryTab::isTextBusy() const
{
    return panes::isFeeding(m_attemptDetail);
}

void CaseHistoryTab::setShowUtc(bool utc)
{
    m_showUtc = utc;
    m_timeline->setShowUtc(utc);
    showSelectedAttempt();
}

void CaseHistoryTab::showTimelineFailed()
{
    m_timeline->setFailed();
}

QString CaseHistoryTab::time(const QDateTime &utc) const
{
    return display::time(utc, m_showUtc);
}

void CaseHistoryTab::showRounds()
{
    // The rounds: the story above the table and the requeue lines on the timeline.
    m_story->setText(display::boundedLines(m_case->story(m_showUtc), 3 * display::kMaxLabelLines));
    m_timeline->setRounds(m_case->rounds());
    showCount();
}

void CaseHistoryTab::showTimeline()
{
    if (!m_case->attemptBuckets().isEmpty())
        m_timeline->setBuckets(m_case->attemptBuckets());
    else
        m_timeline->setAttempts(m_case->attempts());
}

void CaseHistoryTab::showFirstPage()
{
    // Column widths once per load, from the first page (the view stays Fixed).
    QHeaderView *header = m_attemptsTable->horizontalHeader();
    m_attemptsTable->resizeColumnsToContents();
    for (int c = 0; c < header->count(); ++c) {
        if (c != kAttemptMessageColumn)
            header->resizeSection(c, std::min(header->sectionSize(c) + 12, 240));
    }
    if (m_case->attemptsModel()->rowCount() > 0 && !m_attemptsTable->currentIndex().isValid())
        m_attemptsTable->setCurrentIndex(m_case->attemptsModel()->index(0, 0));
    showSelectedAttempt();
    showCount();
}

void CaseHistoryTab::showCount()
{
    const AttemptHistoryModel *history = m_case->attemptsModel();
    const QLocale locale;
    int attemptRows = 0;
    for (int r = 0; r < history->rowCount(); ++r)
        attemptRows += history->isRequeueMarker(r) ? 0 : 1;
    const qint64 total = history->total();
    if (total < 0) {
        m_count->setText(tr("Counting…"));
        return;
    }
    m_count->setText(tr("%1 attempts, newest first; %2 loaded (scroll for more).")
                         .arg(locale.toString(total), locale.toString(attemptRows)));
    if (history->isAtEnd() || attemptRows >= total)
        m_count->setText(tr("%1 attempts, newest first.").arg(locale.toString(total)));
}

void CaseHistoryTab::showSelectedAttempt()
{
    ++m_attemptTextRequest; // an attempt's text still on its way is for another row now
    const int row = m_attemptsTable->currentIndex().row();
    const AttemptHistoryModel *history = m_case->attemptsModel();
    if (row < 0 || row >= history->rowCount()) {
        panes::setPlainTextInSlices(m_attemptDetail, QString());
        return;
    }
    if (history->isRequeueMarker(row)) {
        panes::setPlainTextInSlices(m_attemptDetail,
                                    tr("Round %1 begins: %2, at %3")
                                        .arg(history->text(row, QStringLiteral("round")),
                                             history->markerText(row), time(history->at(row))));
        return;
    }
    // The page carries the first 2,000 characters of each text
    // (docs/architecture.md#long-values-in-lists): shown at once, then, when either was cut,
    // what the pane shows of them (up to 1,000,000 characters each) is read for this attempt.
    const AttemptHistoryModel::AttemptText page = history->pageText(row);
    showAttempt(row, page, page.messageCutBytes > 0 || page.stackTraceCutBytes > 0);
    if (page.messageCutBytes == 0 && page.stackTraceCutBytes == 0)
        return;
    // The reply is for the latest selection and for the same attempt (id and start) still in
    // the selected row: a live reload may have moved another attempt there without a new
    // selection.
    const quint64 request = m_attemptTextRequest;
    const QStringList attempt { history->text(row, QStringLiteral("id")),
                                history->text(row, QStringLiteral("at")) };
    history->readText(
        row, this,
        [this, request, attempt](const db::DbExpected<AttemptHistoryModel::AttemptText> &text) {
            const AttemptHistoryModel *h = m_case->attemptsModel();
            const int current = m_attemptsTable->currentIndex().row();
            if (request != m_attemptTextRequest || current < 0
                || QStringList { h->text(current, QStringLiteral("id")),
                                 h->text(current, QStringLiteral("at")) }
                    != attempt)
                return;
            if (!text) {
                ErrorPresenter::report(this, text.error(), tr("Reading the attempt's text"));
                return;
            }
            showAttempt(current, *text, false);
        });
}

void CaseHistoryTab::showAttempt(int row, const AttemptHistoryModel::AttemptText &t, bool reading)
{
    const AttemptHistoryModel *history = m_case->attemptsModel();
    const QString workerId = history->text(row, QStringLiteral("worker_id"));
    const QString errorClass = history->text(row, QStringLiteral("error_class"));
    const QString errorCode = history->text(row, QStringLiteral("error_code"));
    QString text
        = tr("Round %1, attempt %2 (job attempt %3) — %4%5, worker %6, started %7")
              .arg(history->text(row, QStringLiteral("round")),
                   history->text(row, QStringLiteral("attempt_in_round")),
                   history->text(row, QStringLiteral("attempt_no")),
                   history->text(row, QStringLiteral("outcome")),
                   errorClass.isEmpty() ? QString() : QStringLiteral(" (%1)").arg(errorClass),
                   workerId.isEmpty() ? QString::fromUtf8("\u2014") : workerId,
                   time(history->at(row)));
    if (!errorCode.isEmpty())
        text += tr(", code %1").arg(errorCode);
    // Where a text was cut, the pane says so and how much is left.
    const auto notLoaded = [&](qint64 bytes) {
        if (bytes <= 0)
            return QString();
        return QLatin1Char('\n')
            + (reading ? tr("… (%1 more: reading it…)").arg(QLocale().formattedDataSize(bytes))
                       : tr("… (%1 more not loaded: Copy as JSON (Ctrl+C) on the attempt's row "
                            "copies it whole)")
                             .arg(QLocale().formattedDataSize(bytes)));
    };
    text += QStringLiteral("\n\n") + t.message + notLoaded(t.messageCutBytes);
    if (!t.stackTrace.isEmpty())
        text += QStringLiteral("\n\n") + t.stackTrace + notLoaded(t.stackTraceCutBytes);
    qsizetype left = 0;
    text = display::headLines(text, kMaxDetailLines, &left);
    if (left > 0)
        text += QLatin1Char('\n')
            + tr("… (%1 more lines not shown here: Copy as JSON (Ctrl+C) on the attempt's row "
                 "copies it whole)")
                  .arg(QLocale().toString(left));
    panes::setPlainTextInSlices(m_attemptDetail, display::inPieces(text));
}

} // namespace redrive
