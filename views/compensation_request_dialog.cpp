// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/compensation_request_dialog.h"

#include "models/console_reads.h"
#include "models/db/database_session.h"
#include "models/display_format.h"
#include "models/operator_action.h"
#include "views/dead_letter_actions.h"
#include "views/error_presenter.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QDoubleSpinBox>
#include <QFormLayout>
#include <QJsonDocument>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QUuid>
#include <QVBoxLayout>
#include <cmath>

namespace redrive {

CompensationRequestDialog::CompensationRequestDialog(db::DatabaseSession *session,
                                                     qint64 deadLetterId, QWidget *parent)
    : QDialog(parent)
    , m_session(session)
    , m_id(deadLetterId)
{
    setWindowTitle(tr("Request compensation — dead letter %1").arg(deadLetterId));
    resize(620, 360);
    auto *layout = new QVBoxLayout(this);
    m_payment = new QLabel(tr("Loading the payment…"), this);
    m_payment->setWordWrap(true);
    m_payment->setTextInteractionFlags(Qt::TextSelectableByMouse);
    layout->addWidget(m_payment);

    auto *form = new QFormLayout;
    m_kind = new QComboBox(this);
    m_kind->addItem(tr("Refund"), QStringLiteral("refund"));
    m_kind->addItem(tr("Void"), QStringLiteral("void"));
    m_kind->addItem(tr("Reversal"), QStringLiteral("reversal"));
    form->addRow(tr("&Kind:"), m_kind);
    m_amount = new QDoubleSpinBox(this);
    m_amount->setDecimals(2);
    m_amount->setRange(0, 0);
    m_amount->setEnabled(false);
    form->addRow(tr("&Amount:"), m_amount);
    m_approval = new QLabel(this);
    m_approval->setWordWrap(true);
    form->addRow(QString(), m_approval);
    m_reason = new QLineEdit(this);
    m_reason->setPlaceholderText(tr("Why — required; the approver and the audit log see it"));
    form->addRow(tr("&Reason:"), m_reason);
    m_ticket = new QLineEdit(this);
    m_ticket->setPlaceholderText(tr("e.g. SUP-991 (optional)"));
    form->addRow(tr("&Ticket:"), m_ticket);
    layout->addLayout(form);
    m_error = new QLabel(this);
    m_error->setTextFormat(Qt::PlainText);
    m_error->setWordWrap(true);
    m_error->setStyleSheet(
        QStringLiteral("QLabel { color: %1; }").arg(display::colorName(display::Tone::Error)));
    m_error->hide();
    layout->addWidget(m_error);
    layout->addStretch(1);

    m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    confirmButton()->setText(tr("Request"));
    connect(m_buttons, &QDialogButtonBox::accepted, this, &CompensationRequestDialog::submit);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(m_buttons);
    connect(m_reason, &QLineEdit::textChanged, this, &CompensationRequestDialog::updateConfirm);
    connect(m_amount, &QDoubleSpinBox::valueChanged, this,
            &CompensationRequestDialog::updateConfirm);
    updateConfirm();
    load();
}

QPushButton *CompensationRequestDialog::confirmButton() const
{
    return m_buttons->button(QDialogButtonBox::Ok);
}

QString CompensationRequestDialog::errorText() const
{
    return m_error->isVisible() ? m_error->text() : QString();
}

void CompensationRequestDialog::load()
{
    reads::compensationTarget(
        m_session, this, m_id, [this](const db::DbExpected<db::ResultSet> &r) {
            if (!r) {
                ErrorPresenter::report(this, r.error(), tr("Loading the payment"));
                return;
            }
            if (r->rowCount() == 0) {
                m_payment->setText(tr("Dead letter %1 was not found.").arg(m_id));
                return;
            }
            m_version = r->integer(0, QStringLiteral("version")).value_or(-1);
            const QString payment = r->text(0, QStringLiteral("payment_ref"));
            if (r->isNull(0, QStringLiteral("charged_cents"))) {
                m_payment->setText(tr("No payment is known for this dead letter (ordering key "
                                      "%1): there is nothing to compensate.")
                                       .arg(payment.isEmpty() ? tr("none") : payment));
                return;
            }
            m_currency = r->text(0, QStringLiteral("currency"));
            const qint64 charged = r->bigInt(0, QStringLiteral("charged_cents")).value_or(0);
            const qint64 refunded = r->bigInt(0, QStringLiteral("refunded_cents")).value_or(0);
            m_refundable = r->bigInt(0, QStringLiteral("refundable_cents")).value_or(0);
            m_threshold = r->bigInt(0, QStringLiteral("approval_cents")).value_or(0);
            m_payment->setText(
                tr("Payment <b>%1</b> (charge %2): charged <b>%3</b>, already refunded %4, "
                   "refundable <b>%5</b>. Status of the dead letter: %6.")
                    .arg(payment.toHtmlEscaped(),
                         r->text(0, QStringLiteral("charge_ref")).toHtmlEscaped(),
                         display::money(charged, m_currency), display::money(refunded, m_currency),
                         display::money(m_refundable, m_currency),
                         r->text(0, QStringLiteral("status")).toHtmlEscaped()));
            m_amount->setSuffix(QLatin1Char(' ') + m_currency);
            m_amount->setRange(0.0, double(m_refundable) / 100.0);
            m_amount->setValue(double(m_refundable) / 100.0);
            m_amount->setEnabled(m_refundable > 0);
            updateConfirm();
        });
}

void CompensationRequestDialog::updateConfirm()
{
    const qint64 cents = qint64(std::llround(m_amount->value() * 100.0));
    if (m_version >= 0 && m_refundable > 0)
        m_approval->setText(cents >= m_threshold
                                ? tr("At or above %1 this waits for approval by a different "
                                     "person (an approver who is not you).")
                                      .arg(display::money(m_threshold, m_currency))
                                : tr("Below %1: goes to the worker without approval.")
                                      .arg(display::money(m_threshold, m_currency)));
    confirmButton()->setEnabled(m_version >= 0 && cents > 0
                                && !m_reason->text().trimmed().isEmpty());
}

void CompensationRequestDialog::submit()
{
    const OperatorAction action = OperatorAction::requestCompensation(
        m_id, m_version, m_kind->currentData().toString(),
        qint64(std::llround(m_amount->value() * 100.0)), m_reason->text(), m_ticket->text());
    confirmButton()->setEnabled(false);
    runOperatorAction(
        m_session, this, action,
        [this, reference = action.reference()](const db::DbExpected<QJsonObject> &outcome) {
            if (!outcome) {
                m_error->setText(ErrorPresenter::inlineText(outcome.error()));
                m_error->show();
                updateConfirm();
                return;
            }
            Q_EMIT applied(*outcome, reference);
            accept();
        });
}

} // namespace redrive
