// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QWidget>

class QLabel;
class QPlainTextEdit;

namespace redrive {

class DeadLetterCase;

/// The case view's Last error tab: a summary line (class, code, why it was dead-lettered, after
/// how many attempts, when), then the message and the whole stack trace, nothing cut (a line
/// over display::kMaxLineChars characters is shown in pieces, and a note says so), and Copy,
/// which puts the summary, the message and the stack trace as they are on the clipboard. Times
/// are local with their UTC offset, or UTC. It reads the DeadLetterCase it is given.
class CaseLastErrorTab : public QWidget
{
    Q_OBJECT
public:
    CaseLastErrorTab(DeadLetterCase *deadLetterCase, bool showUtc, QWidget *parent = nullptr);

    /// Local time with offset (false) or UTC (true), from the next showDetail().
    void setShowUtc(bool utc) { m_showUtc = utc; }
    /// True while a long text is still going into the tab's pane.
    bool isTextBusy() const;
    /// The dead letter arrived (DeadLetterCase::Part::Detail), or the times changed: shows it.
    void showDetail();

private:
    void copy();
    QString time(const QDateTime &utc) const;

    DeadLetterCase *m_case;
    bool m_showUtc;
    QLabel *m_summary = nullptr;
    QLabel *m_longLineNote = nullptr;
    QPlainTextEdit *m_stackTrace = nullptr;
};

} // namespace redrive
