// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/case_last_error_tab.h"

#include "models/dead_letter_case.h"
#include "models/display_format.h"
#include "views/text_panes.h"

#include <QClipboard>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QLabel>
#include <QLocale>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace redrive {

CaseLastErrorTab::CaseLastErrorTab(DeadLetterCase *deadLetterCase, bool showUtc, QWidget *parent)
    : QWidget(parent)
    , m_case(deadLetterCase)
    , m_showUtc(showUtc)
{
    auto *layout = new QVBoxLayout(this);
    auto *bar = new QHBoxLayout;
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("errorSummary"));
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_summary->setWordWrap(true);
    m_summary->setTextFormat(Qt::PlainText);
    panes::ignoreTextWidth(m_summary);
    auto *copyButton = new QPushButton(tr("Copy"), this);
    copyButton->setObjectName(QStringLiteral("copyLastError"));
    copyButton->setToolTip(tr("Copy the message and the whole stack trace"));
    connect(copyButton, &QPushButton::clicked, this, &CaseLastErrorTab::copy);
    bar->addWidget(m_summary, 1);
    bar->addWidget(copyButton);
    layout->addLayout(bar);
    m_longLineNote = panes::note(this, QStringLiteral("longLineNote"));
    m_longLineNote->setText(tr("Lines longer than %1 characters are shown in pieces; Copy copies"
                               " them whole.")
                                .arg(QLocale().toString(display::kMaxLineChars)));
    m_longLineNote->hide();
    layout->addWidget(m_longLineNote);
    m_stackTrace = panes::readOnlyText(this, QStringLiteral("stackTrace"));
    layout->addWidget(m_stackTrace, 1);
}

QString CaseLastErrorTab::time(const QDateTime &utc) const
{
    return display::time(utc, m_showUtc);
}

bool CaseLastErrorTab::isTextBusy() const
{
    return panes::isFeeding(m_stackTrace);
}

void CaseLastErrorTab::showDetail()
{
    const auto detail = m_case->detail();
    if (!detail)
        return;
    const DeadLetterCase::Detail &d = *detail;
    QStringList summary;
    for (const QString &part : { d.errorClass, d.errorCode })
        if (!part.isEmpty())
            summary << part;
    // One arg() call: a "%1" inside the error class or reason is shown as it is, never replaced.
    m_summary->setText(tr("%1 — dead-lettered (%2) after %3 attempts, %4")
                           .arg(display::boundedLines(summary.join(QStringLiteral(" · ")), 2),
                                display::boundedLines(d.reason, 2), QString::number(d.attempts),
                                time(d.deadAt)));
    QString text = d.lastError.isEmpty() ? tr("(no error message recorded)") : d.lastError;
    text += QStringLiteral("\n\n");
    text += d.stackTrace.isEmpty() ? tr("(no stack trace recorded)") : d.stackTrace;
    // A megabyte-long line is shown in pieces (a text view shapes a whole line at once), a long
    // text goes in in slices (100,000 lines took 800 ms at once); Copy copies the original.
    bool broken = false;
    panes::setPlainTextInSlices(m_stackTrace,
                                display::inPieces(text, display::kMaxLineChars, &broken));
    m_longLineNote->setVisible(broken);
}

void CaseLastErrorTab::copy()
{
    const auto detail = m_case->detail();
    if (!detail)
        return;
    const DeadLetterCase::Detail &d = *detail;
    QString text = tr("Dead letter #%1 (%2, queue %3), dead at %4\nError class: %5\nError code: %6"
                      "\nReason: %7\nAttempts: %8\n\n")
                       .arg(QString::number(d.id), d.kind, d.queue, time(d.deadAt), d.errorClass,
                            d.errorCode, d.reason, QString::number(d.attempts));
    text += d.lastError + QStringLiteral("\n\n") + d.stackTrace;
    QGuiApplication::clipboard()->setText(text);
}

} // namespace redrive
