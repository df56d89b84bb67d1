// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/reason_dialog.h"

#include "views/text_panes.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace redrive {

ReasonDialog::ReasonDialog(const QString &title, const QString &description,
                           const QString &confirmText, QWidget *parent)
    : QDialog(parent)
{
    setWindowTitle(title);
    resize(560, 240);
    auto *layout = new QVBoxLayout(this);
    auto *text = new QLabel(description, this);
    text->setWordWrap(true);
    text->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // The description names database values (bounded by the caller): never wider than the dialog.
    panes::ignoreTextWidth(text);
    layout->addWidget(text);
    m_form = new QFormLayout;
    m_reason = new QLineEdit(this);
    m_reason->setPlaceholderText(tr("Why — required; it goes into the audit log"));
    m_form->addRow(tr("&Reason:"), m_reason);
    m_ticket = new QLineEdit(this);
    m_ticket->setPlaceholderText(tr("e.g. INC-1234 (optional)"));
    m_form->addRow(tr("&Ticket:"), m_ticket);
    layout->addLayout(m_form);
    layout->addStretch(1);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    m_confirm = buttons->button(QDialogButtonBox::Ok);
    m_confirm->setText(confirmText);
    m_confirm->setEnabled(false);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_reason, &QLineEdit::textChanged, this,
            [this] { m_confirm->setEnabled(!reason().isEmpty()); });
    layout->addWidget(buttons);
}

void ReasonDialog::setChoices(const QString &label, const Choices &choices)
{
    if (!m_choices) {
        m_choices = new QComboBox(this);
        m_form->insertRow(0, label, m_choices);
    }
    m_choices->clear();
    for (const auto &[text, value] : choices)
        m_choices->addItem(text, value);
}

QString ReasonDialog::reason() const
{
    return m_reason->text().trimmed();
}

QString ReasonDialog::ticket() const
{
    return m_ticket->text().trimmed();
}

QString ReasonDialog::choice() const
{
    return m_choices ? m_choices->currentData().toString() : QString();
}

} // namespace redrive
