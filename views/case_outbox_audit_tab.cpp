// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/case_outbox_audit_tab.h"

#include "models/dead_letter_case.h"
#include "views/result_table_view.h"

#include <QLabel>
#include <QSplitter>
#include <QVBoxLayout>

namespace redrive {

namespace {

// A page of `parent` with a note named `noteName` over a table named `tableName` showing `model`,
// the table taking the height and keeping its place by row id when a live re-read replaces the
// rows.
QWidget *notedTable(QWidget *parent, const panes::TableMaker &makeTable, const QString &noteName,
                    const QString &tableName, QAbstractItemModel *model, QLabel **note,
                    QTableView **table)
{
    auto *page = new QWidget(parent);
    auto *layout = new QVBoxLayout(page);
    layout->setContentsMargins(0, 0, 0, 0);
    *note = new QLabel(page);
    (*note)->setTextFormat(Qt::PlainText);
    (*note)->setObjectName(noteName);
    *table = makeTable(page, tableName);
    (*table)->setModel(model);
    if (auto *view = qobject_cast<ResultTableView *>(*table))
        view->setRowKey(QStringLiteral("id"));
    layout->addWidget(*note);
    layout->addWidget(*table, 1);
    return page;
}

} // namespace

CaseOutboxAuditTab::CaseOutboxAuditTab(DeadLetterCase *deadLetterCase,
                                       const panes::TableMaker &makeTable, QWidget *parent)
    : QWidget(parent)
    , m_case(deadLetterCase)
{
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->setChildrenCollapsible(false);
    splitter->addWidget(notedTable(splitter, makeTable, QStringLiteral("outboxNote"),
                                   QStringLiteral("outboxTable"), m_case->outboxModel(),
                                   &m_outboxNote, &m_outboxTable));
    splitter->addWidget(notedTable(splitter, makeTable, QStringLiteral("auditNote"),
                                   QStringLiteral("auditTable"), m_case->auditModel(), &m_auditNote,
                                   &m_auditTable));
    layout->addWidget(splitter);
}

void CaseOutboxAuditTab::showOutbox()
{
    m_outboxNote->setText(m_case->outboxModel()->rowCount() == 0
                              ? tr("Outbox commands: none.")
                              : tr("Outbox commands, newest first:"));
    panes::fitColumns(m_outboxTable, 320);
}

void CaseOutboxAuditTab::showAudit()
{
    m_auditNote->setText(m_case->auditModel()->rowCount() == 0
                             ? tr("Audit entries: none.")
                             : tr("Audit entries naming this dead letter, newest first:"));
    panes::fitColumns(m_auditTable, 320);
}

} // namespace redrive
