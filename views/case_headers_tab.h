// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "views/field_grid.h"

#include <QWidget>

class QPlainTextEdit;

namespace redrive {

class DeadLetterCase;

/// The case view's Headers tab: the ordering key (entity, event sequence and time), the job
/// behind the dead letter (its reference, state, attempt, lease, deadline, run and creation
/// times, source), then the headers as indented JSON, nothing cut. Times are local with their
/// UTC offset, or UTC. It reads the DeadLetterCase it is given.
class CaseHeadersTab : public QWidget
{
    Q_OBJECT
public:
    CaseHeadersTab(DeadLetterCase *deadLetterCase, bool showUtc, QWidget *parent = nullptr);

    /// Local time with offset (false) or UTC (true), from the next showDetail().
    void setShowUtc(bool utc) { m_showUtc = utc; }
    /// True while long headers are still going into the tab's pane.
    bool isTextBusy() const;
    /// The dead letter arrived (DeadLetterCase::Part::Detail), or the times changed: shows it.
    void showDetail();

private:
    QString time(const QDateTime &utc) const;

    DeadLetterCase *m_case;
    bool m_showUtc;
    FieldGrid m_fields;
    QPlainTextEdit *m_headersText = nullptr;
};

} // namespace redrive
