// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QDialog>
#include <QJsonObject>

class QComboBox;
class QDialogButtonBox;
class QDoubleSpinBox;
class QLabel;
class QLineEdit;
class QPushButton;

namespace redrive {

namespace db {
class DatabaseSession;
}

/// Request a compensation (refund, void or reversal) for the payment a dead letter's job
/// changed (docs/domain.md#compensation-goes-through-the-outbox-with-four-eyes). Shows what was
/// charged and already refunded (off the GUI thread, Statement::CompensationTarget), caps the
/// amount at what is still refundable, says when the request will wait for a second person's
/// approval (at or above the configured threshold), and calls request_compensation with a fresh
/// action id. The database re-checks the amount, the one-open-per-target constraint and the role;
/// its refusal is shown beside the form.
class CompensationRequestDialog : public QDialog
{
    Q_OBJECT
public:
    /// `session` must outlive the dialog.
    CompensationRequestDialog(db::DatabaseSession *session, qint64 deadLetterId,
                              QWidget *parent = nullptr);

    QDoubleSpinBox *amountBox() const { return m_amount; }
    QLineEdit *reasonEdit() const { return m_reason; }
    QComboBox *kindBox() const { return m_kind; }
    QPushButton *confirmButton() const;
    /// The inline error from the database, or empty.
    QString errorText() const;

Q_SIGNALS:
    /// The database accepted the request; `outcome` is its JSON, `reference` the action id.
    void applied(const QJsonObject &outcome, const QString &reference);

private:
    void load();
    void updateConfirm();
    void submit();

    db::DatabaseSession *m_session;
    qint64 m_id;
    int m_version = -1;
    qint64 m_refundable = 0;
    qint64 m_threshold = 0;
    QString m_currency;
    QLabel *m_payment = nullptr;
    QComboBox *m_kind = nullptr;
    QDoubleSpinBox *m_amount = nullptr;
    QLabel *m_approval = nullptr;
    QLineEdit *m_reason = nullptr;
    QLineEdit *m_ticket = nullptr;
    QLabel *m_error = nullptr;
    QDialogButtonBox *m_buttons = nullptr;
};

} // namespace redrive
