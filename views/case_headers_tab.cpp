// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/case_headers_tab.h"

#include "models/dead_letter_case.h"
#include "models/display_format.h"
#include "models/payload_text.h"
#include "views/text_panes.h"

#include <QGridLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QVBoxLayout>

namespace redrive {

CaseHeadersTab::CaseHeadersTab(DeadLetterCase *deadLetterCase, bool showUtc, QWidget *parent)
    : QWidget(parent)
    , m_case(deadLetterCase)
    , m_showUtc(showUtc)
{
    auto *layout = new QVBoxLayout(this);
    auto *grid = new QGridLayout;
    grid->setHorizontalSpacing(10);
    m_fields.add(grid, 0, 0, tr("Entity id"), QStringLiteral("entityId"));
    m_fields.add(grid, 0, 1, tr("Event seq"), QStringLiteral("eventSeq"));
    m_fields.add(grid, 0, 2, tr("Event at"), QStringLiteral("eventAt"));
    m_fields.add(grid, 1, 0, tr("Job"), QStringLiteral("jobRef"));
    m_fields.add(grid, 1, 1, tr("Job state"), QStringLiteral("jobState"));
    m_fields.add(grid, 1, 2, tr("Job attempt"), QStringLiteral("jobAttempt"));
    m_fields.add(grid, 2, 0, tr("Leased by"), QStringLiteral("lockedBy"));
    m_fields.add(grid, 2, 1, tr("Lease until"), QStringLiteral("lockedUntil"));
    m_fields.add(grid, 2, 2, tr("Deadline"), QStringLiteral("deadlineAt"));
    m_fields.add(grid, 3, 0, tr("Run at"), QStringLiteral("runAt"));
    m_fields.add(grid, 3, 1, tr("Job created"), QStringLiteral("jobCreatedAt"));
    m_fields.add(grid, 3, 2, tr("Source"), QStringLiteral("source"));
    for (int c = 0; c < 3; ++c)
        grid->setColumnStretch(2 * c + 1, 1);
    layout->addLayout(grid);
    layout->addWidget(new QLabel(tr("Headers"), this));
    m_headersText = panes::readOnlyText(this, QStringLiteral("headersText"));
    layout->addWidget(m_headersText, 1);
}

bool CaseHeadersTab::isTextBusy() const
{
    return panes::isFeeding(m_headersText);
}

QString CaseHeadersTab::time(const QDateTime &utc) const
{
    return display::time(utc, m_showUtc);
}

void CaseHeadersTab::showDetail()
{
    const auto detail = m_case->detail();
    if (!detail)
        return;
    const DeadLetterCase::Detail &d = *detail;
    m_fields.set(QStringLiteral("entityId"), d.entityId);
    m_fields.set(QStringLiteral("eventSeq"), d.eventSeq ? QString::number(*d.eventSeq) : QString());
    m_fields.set(QStringLiteral("eventAt"), time(d.eventAt));
    m_fields.set(QStringLiteral("jobRef"), d.jobRef);
    m_fields.set(QStringLiteral("jobState"), d.jobState);
    m_fields.set(QStringLiteral("jobAttempt"),
                 tr("%1 of %2").arg(QString::number(d.jobAttempt), QString::number(d.maxAttempts)));
    m_fields.set(QStringLiteral("lockedBy"), d.lockedBy);
    QString lease = time(d.lockedUntil);
    if (d.lockedUntil.isValid() && d.serverNow.isValid())
        lease += d.lockedUntil > d.serverNow ? tr(" (live)") : tr(" (expired)");
    m_fields.set(QStringLiteral("lockedUntil"), lease);
    m_fields.set(QStringLiteral("deadlineAt"), time(d.deadlineAt));
    m_fields.set(QStringLiteral("runAt"), time(d.runAt));
    m_fields.set(QStringLiteral("jobCreatedAt"), time(d.jobCreatedAt));
    m_fields.set(QStringLiteral("source"), d.source);
    // Lines over 2,000 characters in pieces: a 10 MB header value fed as one line was laid out
    // again after every slice.
    panes::setPlainTextInSlices(
        m_headersText,
        display::inPieces(QString::fromUtf8(PayloadText::indentJson(d.headersText.toUtf8()))));
}

} // namespace redrive
