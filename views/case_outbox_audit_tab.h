// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "views/text_panes.h"

#include <QWidget>

class QLabel;
class QTableView;

namespace redrive {

class DeadLetterCase;

/// The case view's Outbox & audit tab: the outbox commands the dead letter's actions wrote and
/// the audit entries that name it, each newest first under a note, one above the other. Live
/// re-reads keep the selected row. It reads the DeadLetterCase it is given.
class CaseOutboxAuditTab : public QWidget
{
    Q_OBJECT
public:
    CaseOutboxAuditTab(DeadLetterCase *deadLetterCase, const panes::TableMaker &makeTable,
                       QWidget *parent = nullptr);

    /// The outbox commands arrived (DeadLetterCase::Part::Outbox).
    void showOutbox();
    /// The audit entries arrived (DeadLetterCase::Part::Audit).
    void showAudit();

private:
    DeadLetterCase *m_case;
    QLabel *m_outboxNote = nullptr;
    QTableView *m_outboxTable = nullptr;
    QLabel *m_auditNote = nullptr;
    QTableView *m_auditTable = nullptr;
};

} // namespace redrive
