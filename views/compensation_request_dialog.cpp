// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/compensation_request_dialog.h"

#include "models/console_reads.h"
#include "models/db/database_session.h"
#include "models/display_format.h"
#include "models/operator_action.h"
#include "views/error_presenter.h"
#include "views/money_edit.h"
#include "views/single_action.h"
#include "views/text_panes.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QGridLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>
#include <algorithm>
#include <climits>

namespace redrive {

namespace {

QLabel *cell(const QString &text, QWidget *parent, bool bold = false)
{
    auto *label = new QLabel(text, parent);
    label->setTextFormat(Qt::PlainText);
    label->setTextInteractionFlags(Qt::TextSelectableByMouse);
    if (bold) {
        QFont f = label->font();
        f.setBold(true);
        label->setFont(f);
    }
    return label;
}

QString orUnknown(const QString &text)
{
    return text.isEmpty()
        ? QCoreApplication::translate("redrive::CompensationRequestDialog", "unknown")
        : display::oneLine(text);
}

/// How many other compensations on the payment are listed at most.
constexpr qsizetype kMaxOtherLines = 10;

} // namespace

CompensationRequestDialog::CompensationRequestDialog(db::DatabaseSession *session,
                                                     qint64 deadLetterId, QWidget *parent)
    : CompensationRequestDialog(session, CompensationTarget::deadLetter(deadLetterId), parent)
{ }

CompensationRequestDialog::CompensationRequestDialog(db::DatabaseSession *session,
                                                     CompensationTarget target, QWidget *parent)
    : QDialog(parent)
    , m_session(session)
    , m_target(target)
{
    const bool mismatch = target.type == CompensationTarget::Type::Mismatch;
    setWindowTitle(mismatch ? tr("Request a refund — mismatch %1").arg(target.id)
                            : tr("Request compensation — dead letter %1").arg(target.id));
    resize(720, mismatch ? 560 : 460);
    // Never larger than the screen, whatever the data (docs/security.md#text-from-the-database-
    // is-plain-text).
    panes::restoreGeometryOnScreen(this, {});
    auto *layout = new QVBoxLayout(this);
    m_first = new QLabel(mismatch ? tr("Mismatch %1: loading its payment…").arg(target.id)
                                  : tr("Dead letter %1: loading its payment…").arg(target.id),
                         this);
    m_first->setObjectName(QStringLiteral("target"));
    m_first->setTextFormat(Qt::PlainText);
    m_first->setWordWrap(true);
    m_first->setTextInteractionFlags(Qt::TextSelectableByMouse);
    panes::ignoreTextWidth(m_first);
    QFont big = m_first->font();
    big.setBold(true);
    big.setPointSizeF(big.pointSizeF() * 1.15);
    m_first->setFont(big);
    layout->addWidget(m_first);
    m_payment = new QLabel(this);
    m_payment->setObjectName(QStringLiteral("payment"));
    m_payment->setWordWrap(true);
    m_payment->setTextFormat(Qt::PlainText);
    m_payment->setTextInteractionFlags(Qt::TextSelectableByMouse);
    panes::ignoreTextWidth(m_payment);
    layout->addWidget(m_payment);

    m_charges = new QWidget(this);
    m_charges->setObjectName(QStringLiteral("charges"));
    m_chargeGrid = new QGridLayout(m_charges);
    m_chargeGrid->setContentsMargins(0, 4, 0, 4);
    m_chargeGrid->setHorizontalSpacing(18);
    m_charges->setVisible(mismatch);
    layout->addWidget(m_charges);

    auto *form = new QFormLayout;
    m_kind = new QComboBox(this);
    m_kind->addItem(tr("Refund"), QStringLiteral("refund"));
    if (!mismatch) {
        m_kind->addItem(tr("Void"), QStringLiteral("void"));
        m_kind->addItem(tr("Reversal"), QStringLiteral("reversal"));
    } else {
        m_kind->setEnabled(false); // a mismatch is refunded
        m_kind->setToolTip(tr("What a mismatch owes is refunded"));
    }
    form->addRow(tr("&Kind:"), m_kind);
    m_amount = new MoneyEdit(this);
    m_amount->setEnabled(false);
    form->addRow(tr("&Amount:"), m_amount);
    m_approval = new QLabel(this);
    m_approval->setObjectName(QStringLiteral("approval"));
    m_approval->setWordWrap(true);
    m_approval->setTextFormat(Qt::PlainText);
    form->addRow(tr("Four eyes:"), m_approval);
    m_others = new QLabel(this);
    m_others->setObjectName(QStringLiteral("otherCompensations"));
    m_others->setWordWrap(true);
    m_others->setTextFormat(Qt::PlainText);
    m_others->setTextInteractionFlags(Qt::TextSelectableByMouse);
    panes::ignoreTextWidth(m_others);
    form->addRow(tr("On this payment:"), m_others);
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
    confirmButton()->setText(mismatch ? tr("Request refund") : tr("Request"));
    connect(m_buttons, &QDialogButtonBox::accepted, this, &CompensationRequestDialog::submit);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(m_buttons);
    connect(m_reason, &QLineEdit::textChanged, this, &CompensationRequestDialog::updateConfirm);
    connect(m_amount, &MoneyEdit::changed, this, &CompensationRequestDialog::updateConfirm);
    updateConfirm();
    load();
}

QString CompensationRequestDialog::targetLine(const QString &what, const QString &payment,
                                              const QString &order, const QString &customer,
                                              const QString &amount)
{
    return tr("%1 · payment %2 · order %3 · customer %4 · %5")
        .arg(what, orUnknown(display::revealLookAlikes(payment)),
             orUnknown(display::revealLookAlikes(order)), orUnknown(customer), amount);
}

QStringList CompensationRequestDialog::otherCompensationLines(const db::ResultSet &rows,
                                                              qint64 exceptId)
{
    QStringList lines;
    qsizetype left = 0;
    for (int row = 0; row < rows.rowCount(); ++row) {
        if (rows.bigInt(row, QStringLiteral("id")).value_or(0) == exceptId)
            continue;
        if (lines.size() == kMaxOtherLines) {
            ++left;
            continue;
        }
        lines << tr("request %1 · %2 %3 · %4 · by %5")
                     .arg(rows.text(row, QStringLiteral("id")),
                          display::oneLine(rows.text(row, QStringLiteral("kind"))),
                          display::money(
                              rows.bigInt(row, QStringLiteral("amount_minor")).value_or(0),
                              rows.text(row, QStringLiteral("currency"))),
                          display::oneLine(rows.text(row, QStringLiteral("status"))
                                               .replace(QLatin1Char('_'), QLatin1Char(' '))),
                          display::oneLine(rows.text(row, QStringLiteral("requested_by"))));
    }
    if (left > 0)
        lines << tr("… and %n more", nullptr, int(std::min<qsizetype>(left, INT_MAX)));
    return lines;
}

QPushButton *CompensationRequestDialog::confirmButton() const
{
    return m_buttons->button(QDialogButtonBox::Ok);
}

QString CompensationRequestDialog::targetText() const
{
    return m_first->text();
}

QString CompensationRequestDialog::chargesText() const
{
    QStringList lines;
    for (int row = 0; row < m_chargeGrid->rowCount(); ++row) {
        QStringList cells;
        for (int column = 0; column < m_chargeGrid->columnCount(); ++column) {
            QLayoutItem *item = m_chargeGrid->itemAtPosition(row, column);
            auto *label = item ? qobject_cast<QLabel *>(item->widget()) : nullptr;
            cells << (label ? label->text() : QString());
        }
        lines << cells.join(QLatin1Char('\t'));
    }
    return lines.join(QLatin1Char('\n'));
}

QString CompensationRequestDialog::approvalText() const
{
    return m_approval->text();
}

QString CompensationRequestDialog::otherCompensationsText() const
{
    return m_others->text();
}

QString CompensationRequestDialog::errorText() const
{
    return m_error->isVisible() ? m_error->text() : QString();
}

void CompensationRequestDialog::load()
{
    auto done = [this](const db::DbExpected<db::ResultSet> &r) {
        if (!r) {
            ErrorPresenter::report(this, r.error(), tr("Loading the payment"));
            Q_EMIT loaded();
            return;
        }
        if (r->rowCount() == 0) {
            m_first->setText(m_target.type == CompensationTarget::Type::Mismatch
                                 ? tr("Mismatch %1 was not found.").arg(m_target.id)
                                 : tr("Dead letter %1 was not found.").arg(m_target.id));
            Q_EMIT loaded();
            return;
        }
        if (m_target.type == CompensationTarget::Type::Mismatch)
            showMismatch(r.value());
        else
            showDeadLetter(r.value());
        m_loaded = true;
        updateConfirm();
        Q_EMIT loaded();
    };
    if (m_target.type == CompensationTarget::Type::Mismatch)
        reads::mismatchCompensationTarget(m_session, this, m_target.id, done);
    else
        reads::compensationTarget(m_session, this, m_target.id, done);
}

void CompensationRequestDialog::showDeadLetter(const db::ResultSet &r)
{
    const QString payment = r.text(0, QStringLiteral("payment_ref"));
    const QString what = tr("Dead letter %1").arg(m_target.id);
    if (r.isNull(0, QStringLiteral("charged_minor"))) {
        m_first->setText(targetLine(what, payment, r.text(0, QStringLiteral("order_ref")),
                                    r.text(0, QStringLiteral("customer")), tr("no charge")));
        m_payment->setText(tr("No payment is known for this dead letter (ordering key %1): there "
                              "is nothing to compensate.")
                               .arg(payment.isEmpty() ? tr("none") : display::oneLine(payment)));
        return;
    }
    m_version = r.integer(0, QStringLiteral("version")).value_or(-1);
    m_currency = r.text(0, QStringLiteral("currency"));
    const qint64 charged = r.bigInt(0, QStringLiteral("charged_minor")).value_or(0);
    const qint64 refunded = r.bigInt(0, QStringLiteral("refunded_minor")).value_or(0);
    const qint64 refundable = r.bigInt(0, QStringLiteral("refundable_minor")).value_or(0);
    m_maximum = refundable;
    m_threshold = r.bigInt(0, QStringLiteral("threshold_minor")).value_or(0);
    m_compensated = r.bigInt(0, QStringLiteral("compensated_minor")).value_or(0);
    m_openRequest = r.bigInt(0, QStringLiteral("open_request")).value_or(0);
    m_first->setText(targetLine(what, payment, r.text(0, QStringLiteral("order_ref")),
                                r.text(0, QStringLiteral("customer")),
                                tr("charged %1").arg(display::money(charged, m_currency))));
    m_payment->setText(tr("Charge %1: charged %2, already refunded %3, still refundable %4. "
                          "Status of the dead letter: %5.")
                           .arg(display::oneLine(r.text(0, QStringLiteral("charge_ref"))),
                                display::money(charged, m_currency),
                                display::money(refunded, m_currency),
                                display::money(refundable, m_currency),
                                display::oneLine(r.text(0, QStringLiteral("status")))));
    m_amount->setCurrency(m_currency);
    m_amount->setMaximum(refundable);
    m_amount->setValue(refundable);
    m_amount->setEnabled(refundable > 0);
    loadOtherCompensations(payment);
}

void CompensationRequestDialog::showMismatch(const db::ResultSet &r)
{
    auto text = [&r](const char *name) {
        return r.text(0, QLatin1String(name));
    };
    auto minor = [&r](const char *name) {
        return r.bigInt(0, QLatin1String(name));
    };
    const QString kind = text("kind");
    const QString payment = text("payment_ref");
    const bool duplicate = kind == QLatin1String("duplicate_external");
    m_version = r.integer(0, QStringLiteral("version")).value_or(-1);
    m_currency = text("currency");
    m_threshold = minor("threshold_minor").value_or(0);
    m_compensated = minor("compensated_minor").value_or(0);
    m_openRequest = minor("open_request").value_or(0);
    const std::optional<qint64> suggested = minor("suggested_minor");
    const qint64 maximum = minor("maximum_minor").value_or(0);
    const QString what = tr("Mismatch %1 (%2)").arg(m_target.id).arg(display::oneLine(kind));
    QString amount;
    if (duplicate && minor("other_charged_minor"))
        amount = tr("duplicate charge %1")
                     .arg(display::money(*minor("other_charged_minor"), text("other_currency")));
    else if (suggested)
        amount = tr("difference %1").arg(display::money(*suggested, m_currency));
    else
        amount = tr("nothing to refund");
    m_first->setText(targetLine(what, payment, text("order_ref"), text("customer"), amount));

    // Both provider charges side by side: the duplicate is the one our ledger did not record.
    const int header = 0;
    m_chargeGrid->addWidget(cell(QString(), m_charges), header, 0);
    m_chargeGrid->addWidget(
        cell(duplicate ? tr("Charge our ledger recorded") : tr("Our ledger"), m_charges, true),
        header, 1);
    m_chargeGrid->addWidget(
        cell(duplicate ? tr("Duplicate charge (refunded)") : tr("The provider's charge"), m_charges,
             true),
        header, 2);
    auto money = [&](const char *amountColumn, const char *currencyColumn) {
        const std::optional<qint64> v = minor(amountColumn);
        return v ? display::money(*v, text(currencyColumn)) : QStringLiteral("—");
    };
    auto row = [&](int at, const QString &label, const QString &ours, const QString &theirs) {
        m_chargeGrid->addWidget(cell(label, m_charges, true), at, 0);
        m_chargeGrid->addWidget(
            cell(ours.isEmpty() ? QStringLiteral("—") : display::oneLine(ours), m_charges), at, 1);
        m_chargeGrid->addWidget(
            cell(theirs.isEmpty() ? QStringLiteral("—") : display::oneLine(theirs), m_charges), at,
            2);
    };
    auto time = [&](const char *column) {
        return display::time(r.timestamp(0, r.columnIndex(QLatin1String(column))), false);
    };
    row(1, tr("Provider charge id"), text("original_charge_ref"), text("other_charge_ref"));
    row(2, tr("Charged at"), time("original_charged_at"), time("other_charged_at"));
    if (duplicate) {
        row(3, tr("Amount"), money("original_charged_minor", "original_currency"),
            money("other_charged_minor", "other_currency"));
        row(4, tr("Already refunded"), money("original_refunded_minor", "original_currency"),
            money("other_refunded_minor", "other_currency"));
    } else {
        row(3, tr("Amount"), money("internal_minor", "internal_currency"),
            money("external_minor", "external_currency"));
        row(4, tr("Difference"), QString(),
            suggested ? display::money(*suggested, m_currency) : QString());
    }

    if (!suggested) {
        m_payment->setText(
            duplicate ? tr("The provider's ledger lists no second charge for payment %1: there "
                           "is no duplicate to refund. Resolve the mismatch instead.")
                            .arg(display::oneLine(payment))
                      : tr("This %1 owes nothing to refund (the provider did not charge more "
                           "than our ledger). Resolve the mismatch instead.")
                            .arg(display::oneLine(kind)));
        m_version = -1;
        return;
    }
    m_maximum = maximum;
    m_payment->setText(
        duplicate ? tr("The customer was charged twice for payment %1. The refund goes to the "
                       "duplicate charge %2 and is at most what is still refundable of it: %3.")
                        .arg(display::oneLine(payment), display::oneLine(text("other_charge_ref")),
                             display::money(maximum, m_currency))
                  : tr("The provider charged %1 more than our ledger for payment %2. The refund "
                       "is at most that difference: %3.")
                        .arg(display::money(*suggested, m_currency), display::oneLine(payment),
                             display::money(maximum, m_currency)));
    m_amount->setCurrency(m_currency);
    m_amount->setMaximum(maximum);
    m_amount->setValue(maximum); // what is owed, never the full charge
    m_amount->setEnabled(maximum > 0);
    loadOtherCompensations(payment);
}

void CompensationRequestDialog::loadOtherCompensations(const QString &paymentRef)
{
    m_others->setText(tr("Loading…"));
    reads::paymentCompensations(
        m_session, this, paymentRef, [this](const db::DbExpected<db::ResultSet> &r) {
            if (!r) {
                m_others->setText(
                    tr("could not be loaded: %1").arg(ErrorPresenter::inlineText(r.error())));
                return;
            }
            const QStringList lines = otherCompensationLines(r.value(), -1);
            m_others->setText(lines.isEmpty() ? tr("no other compensation")
                                              : lines.join(QLatin1Char('\n')));
        });
}

void CompensationRequestDialog::updateConfirm()
{
    const std::optional<qint64> amount = m_amount->value();
    QString blocked;
    if (m_loaded && m_version >= 0) {
        const QString threshold = display::money(m_threshold, m_currency);
        const QString already = display::money(m_compensated, m_currency);
        if (m_openRequest > 0) {
            blocked = tr("This payment already has an open compensation (request %1): a payment "
                         "has one at a time. Wait until it is decided and carried out.")
                          .arg(m_openRequest);
            m_approval->setText(blocked);
        } else if (amount) {
            const qint64 total = m_compensated + *amount;
            m_approval->setText(
                total >= m_threshold
                    ? tr("Approval threshold for %1: %2. Open and executed compensations on this "
                         "payment: %3; with this one %4, at or above the threshold: it waits for "
                         "approval by a different person (an approver who is not you).")
                          .arg(m_currency, threshold, already, display::money(total, m_currency))
                    : tr("Approval threshold for %1: %2. Open and executed compensations on this "
                         "payment: %3; with this one %4, below the threshold: the worker "
                         "executes it without approval.")
                          .arg(m_currency, threshold, already, display::money(total, m_currency)));
        } else {
            m_approval->setText(tr("Approval threshold for %1: %2. Open and executed "
                                   "compensations on this payment: %3.")
                                    .arg(m_currency, threshold, already));
        }
    }
    confirmButton()->setEnabled(m_loaded && m_version >= 0 && amount && blocked.isEmpty()
                                && !m_reason->text().trimmed().isEmpty());
}

void CompensationRequestDialog::submit()
{
    const std::optional<qint64> amount = m_amount->value();
    if (!amount || m_version < 0)
        return;
    const OperatorAction action = m_target.type == CompensationTarget::Type::Mismatch
        ? OperatorAction::requestMismatchCompensation(m_target.id, m_version, *amount,
                                                      m_reason->text(), m_ticket->text())
        : OperatorAction::requestCompensation(m_target.id, m_version,
                                              m_kind->currentData().toString(), *amount,
                                              m_reason->text(), m_ticket->text());
    confirmButton()->setEnabled(false);
    runFormAction(
        m_session, this, action, m_error, [this] { updateConfirm(); },
        [this](const QJsonObject &outcome, const QString &reference) {
            Q_EMIT applied(outcome, reference);
        });
}

} // namespace redrive
