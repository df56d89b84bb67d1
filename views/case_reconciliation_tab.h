// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "views/text_panes.h"

#include <QWidget>

class QLabel;
class QTableView;

namespace redrive {

class DeadLetterCase;

/// The case view's Reconciliation tab: the mismatches the reconciliation found for the dead
/// letter's payment (its ordering key), newest first, under a note that names the payment, says
/// there are none, or that the job names no payment. It reads the DeadLetterCase it is given.
class CaseReconciliationTab : public QWidget
{
    Q_OBJECT
public:
    CaseReconciliationTab(DeadLetterCase *deadLetterCase, const panes::TableMaker &makeTable,
                          QWidget *parent = nullptr);

    /// The dead letter arrived (DeadLetterCase::Part::Detail): a job with no payment says so.
    void showDetail();
    /// The mismatches arrived (DeadLetterCase::Part::Mismatches).
    void showMismatches();

private:
    DeadLetterCase *m_case;
    QLabel *m_note = nullptr;
    QTableView *m_table = nullptr;
};

} // namespace redrive
