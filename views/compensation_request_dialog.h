// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QDialog>
#include <QJsonObject>
#include <optional>

class QComboBox;
class QDialogButtonBox;
class QGridLayout;
class QLabel;
class QLineEdit;
class QPushButton;
class QWidget;

namespace redrive {

namespace db {
class DatabaseSession;
class ResultSet;
} // namespace db

class MoneyEdit;

/// What a compensation is requested for: one dead letter, or one reconciliation mismatch (a
/// double charge or an amount mismatch). Always the row the operator was looking at in the
/// focused view, never a selection kept on another tab (docs/domain.md#the-right-target).
struct CompensationTarget
{
    enum class Type { DeadLetter, Mismatch };
    Type type = Type::DeadLetter;
    qint64 id = 0;

    static CompensationTarget deadLetter(qint64 id) { return { Type::DeadLetter, id }; }
    static CompensationTarget mismatch(qint64 id) { return { Type::Mismatch, id }; }
    bool operator==(const CompensationTarget &) const = default;
};

/// Request a compensation (docs/domain.md#compensation-goes-through-the-outbox-with-four-eyes):
/// for a dead letter, a refund, void or reversal of its payment's charge; for a mismatch, a
/// refund of what the mismatch says is owed (docs/domain.md#refundable): the duplicate charge of
/// a duplicate_external, with both provider charges side by side, or the difference of an
/// amount_mismatch. The first line names the target (what it is, payment, order, customer and
/// the amount charged in its currency). The amount is typed in the payment's currency (MoneyEdit,
/// exact minor units), defaults to what is owed, and is refused beside the field above what may
/// be refunded. The dialog shows the currency's approval threshold, the payment's other
/// compensations and whether this one will wait for a second person (the payment's open and
/// executed compensations plus this one, at or above the threshold). Reads run off the GUI
/// thread; the request is one call of request_compensation or request_mismatch_compensation with
/// a fresh action id, which re-checks everything; its refusal is shown beside the form.
class CompensationRequestDialog : public QDialog
{
    Q_OBJECT
public:
    /// `session` must outlive the dialog. Loads the target at once.
    CompensationRequestDialog(db::DatabaseSession *session, CompensationTarget target,
                              QWidget *parent = nullptr);
    /// A compensation for dead letter `deadLetterId`.
    CompensationRequestDialog(db::DatabaseSession *session, qint64 deadLetterId,
                              QWidget *parent = nullptr);

    /// The other compensations on a payment (db::ResultSet of reads::paymentCompensations), one
    /// line each ("request 7 · refund 1.00 USD · done · by eve"), the request `exceptId` left
    /// out, every value through display::oneLine(); at most 10 lines, then "… and 3 more".
    static QStringList otherCompensationLines(const db::ResultSet &rows, qint64 exceptId);
    /// The first line of a compensation dialog: `what` (e.g. "Dead letter 42"), then payment,
    /// order, customer (each "unknown" when missing, else display::oneLine()) and `amount` as
    /// display::money writes it.
    static QString targetLine(const QString &what, const QString &payment, const QString &order,
                              const QString &customer, const QString &amount);

    CompensationTarget target() const { return m_target; }
    MoneyEdit *amountEdit() const { return m_amount; }
    QLineEdit *reasonEdit() const { return m_reason; }
    QLineEdit *ticketEdit() const { return m_ticket; }
    QComboBox *kindBox() const { return m_kind; }
    QPushButton *confirmButton() const;
    /// True once the target's payment arrived (and was shown).
    bool isLoaded() const { return m_loaded; }
    /// The first line as shown (plain text).
    QString targetText() const;
    /// The provider charges side by side (mismatch), one line per row, cells tab-separated.
    QString chargesText() const;
    /// The approval threshold line as shown.
    QString approvalText() const;
    /// The payment's other compensations as listed.
    QString otherCompensationsText() const;
    /// The payment's currency (the amount's).
    QString currency() const { return m_currency; }
    /// The inline error from the database, or empty.
    QString errorText() const;

Q_SIGNALS:
    /// The target's payment was loaded and shown (or could not be).
    void loaded();
    /// The database accepted the request; `outcome` is its JSON, `reference` the action id.
    void applied(const QJsonObject &outcome, const QString &reference);

private:
    void load();
    void showDeadLetter(const db::ResultSet &r);
    void showMismatch(const db::ResultSet &r);
    void loadOtherCompensations(const QString &paymentRef);
    void updateConfirm();
    void submit();

    db::DatabaseSession *m_session;
    CompensationTarget m_target;
    bool m_loaded = false;
    int m_version = -1;
    std::optional<qint64> m_maximum;
    qint64 m_threshold = 0;
    qint64 m_compensated = 0;
    qint64 m_openRequest = 0;
    QString m_currency;
    QLabel *m_first = nullptr;
    QLabel *m_payment = nullptr;
    QWidget *m_charges = nullptr;
    QGridLayout *m_chargeGrid = nullptr;
    QComboBox *m_kind = nullptr;
    MoneyEdit *m_amount = nullptr;
    QLabel *m_approval = nullptr;
    QLabel *m_others = nullptr;
    QLineEdit *m_reason = nullptr;
    QLineEdit *m_ticket = nullptr;
    QLabel *m_error = nullptr;
    QDialogButtonBox *m_buttons = nullptr;
};

} // namespace redrive
