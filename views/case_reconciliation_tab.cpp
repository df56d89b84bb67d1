// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/case_reconciliation_tab.h"

#include "models/dead_letter_case.h"
#include "models/display_format.h"

#include <QLabel>
#include <QTableView>
#include <QVBoxLayout>

namespace redrive {

CaseReconciliationTab::CaseReconciliationTab(DeadLetterCase *deadLetterCase,
                                             const panes::TableMaker &makeTable, QWidget *parent)
    : QWidget(parent)
    , m_case(deadLetterCase)
{
    auto *layout = new QVBoxLayout(this);
    m_note = panes::note(this, QStringLiteral("mismatchNote"));
    panes::ignoreTextWidth(m_note);
    m_table = makeTable(this, QStringLiteral("mismatchesTable"));
    m_table->setModel(m_case->mismatchesModel());
    layout->addWidget(m_note);
    layout->addWidget(m_table, 1);
}

void CaseReconciliationTab::showDetail()
{
    const auto detail = m_case->detail();
    if (detail && detail->entityId.isEmpty())
        m_note->setText(tr("This job names no payment (ordering key), so there is nothing"
                           " to reconcile it with."));
}

void CaseReconciliationTab::showMismatches()
{
    const auto detail = m_case->detail();
    if (detail && !detail->entityId.isEmpty()) {
        const QString payment = display::boundedLines(detail->entityId, 1, 300);
        m_note->setText(m_case->mismatchesModel()->rowCount() == 0
                            ? tr("No reconciliation mismatch for payment %1.").arg(payment)
                            : tr("Mismatches the reconciliation found for payment %1, newest "
                                 "first.")
                                  .arg(payment));
    }
    panes::fitColumns(m_table, 320);
}

} // namespace redrive
