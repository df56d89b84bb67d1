// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/attempt_history_model.h"
#include "views/text_panes.h"

#include <QWidget>

class QLabel;
class QPlainTextEdit;
class QTableView;

namespace redrive {

class AttemptTimelinePlot;
class DeadLetterCase;

/// The case view's Retry history tab: the rounds told in a line or three, the attempt count,
/// the attempts (newest first, paged as they are scrolled to, requeues as marker rows), their
/// timeline, and the selected attempt's message and stack trace (the first 2,000 characters from
/// the page, then, when cut, up to 1,000,000 read for that attempt alone; at most
/// kMaxDetailLines lines shown). Times are local with their UTC offset, or UTC. It reads
/// everything from the DeadLetterCase it is given; the case view tells it when a part arrived.
class CaseHistoryTab : public QWidget
{
    Q_OBJECT
public:
    using TableMaker = panes::TableMaker;

    CaseHistoryTab(DeadLetterCase *deadLetterCase, bool showUtc, const TableMaker &makeTable,
                   QWidget *parent = nullptr);

    AttemptTimelinePlot *timeline() const { return m_timeline; }
    /// True while a long attempt text is still going into the detail pane.
    bool isTextBusy() const;
    /// Local time with offset (false) or UTC (true).
    void setShowUtc(bool utc);
    /// The rounds arrived (DeadLetterCase::Part::Attempts): the story, the requeue lines on the
    /// timeline, the count.
    void showRounds();
    /// The timeline's buckets or attempts arrived (DeadLetterCase::Part::Timeline).
    void showTimeline();
    /// The rounds or the timeline could not be read: the timeline says so.
    void showTimelineFailed();

private:
    void showFirstPage();
    void showCount();
    void showSelectedAttempt();
    /// Fills the detail pane with the attempt in `row` and its texts `t`; `reading`: the rest of
    /// a cut text is on its way (the pane says so).
    void showAttempt(int row, const AttemptHistoryModel::AttemptText &t, bool reading);
    QString time(const QDateTime &utc) const;

    DeadLetterCase *m_case;
    bool m_showUtc;
    QLabel *m_story = nullptr;
    QLabel *m_count = nullptr;
    QTableView *m_attemptsTable = nullptr;
    AttemptTimelinePlot *m_timeline = nullptr;
    QPlainTextEdit *m_attemptDetail = nullptr;
    quint64 m_attemptTextRequest = 0; ///< bumped per attempt shown: an older text is dropped
};

} // namespace redrive
