// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/compensation_model.h"

#include <QDialog>
#include <QJsonObject>
#include <QUuid>
#include <optional>

class QDialogButtonBox;
class QLabel;
class QScrollArea;
class QPlainTextEdit;
class QPushButton;
class QStackedWidget;
class QTableView;

namespace redrive {

namespace db {
class DatabaseSession;
class DbError;
class ResultSet;
} // namespace db

class ResultTableModel;

/// Approve or reject one compensation request
/// (docs/domain.md#compensation-goes-through-the-outbox-with-four-eyes). Shows who asked and when,
/// the amount as money, what is still refundable for the payment, the request's reason and
/// ticket, and the target's history: a dead letter's attempts and the mismatches for its payment,
/// or the mismatch itself. The decision needs a reason. Deciding calls
/// Statement::ActionDecideCompensation with the version shown and an action id made when the
/// operator first confirms (kept for a retry after an error, so a repeat cannot apply twice);
/// the outcome (applied, or changed meanwhile) or the database's refusal is shown in the dialog.
/// The dialog never decides whether the operator may decide: the database does, and says so.
class CompensationDecisionDialog : public QDialog
{
    Q_OBJECT
public:
    enum class Decision { Approve, Reject };

    /// `session` must outlive the dialog. Loads the request's context at once; `request` is what
    /// the list showed, replaced by the fresh row when it arrives. `osUser` goes into the audit
    /// entry.
    CompensationDecisionDialog(db::DatabaseSession *session, const CompensationRequest &request,
                               Decision decision, const QString &osUser, QWidget *parent = nullptr);

    Decision decision() const { return m_decision; }
    /// The request as shown now (the fresh row once loaded).
    const CompensationRequest &request() const { return m_request; }
    /// True while the context or the decision waits for the server.
    bool isBusy() const { return m_pending > 0; }
    /// True once the decision went through (applied or not): nothing more to do here.
    bool isFinished() const { return m_finished; }
    /// The outcome the database returned (empty before).
    const QJsonObject &outcome() const { return m_outcome; }
    /// The action id of the decision (null until the operator confirmed).
    QUuid actionId() const { return m_actionId; }
    /// The decision reason typed so far.
    QString reason() const;
    void setReason(const QString &reason);
    /// The line under the form: an outcome, a refusal, or what is missing.
    QString messageText() const;
    /// The first line as shown: request, target, payment, order, customer, kind and amount.
    QString targetText() const;
    /// The currency's approval threshold and what the payment's compensations add up to.
    QString approvalText() const;
    /// The payment's other compensation requests as listed.
    QString otherCompensationsText() const;
    /// The request summary as shown (requester, amount, target, reason).
    QString summaryText() const;
    ResultTableModel *attemptsModel() const { return m_attempts; }
    ResultTableModel *mismatchesModel() const { return m_mismatches; }

public Q_SLOTS:
    /// Sends the decision (what the Approve/Reject button does); refuses without a reason.
    void decide();

Q_SIGNALS:
    /// The database returned an outcome for the decision (applied or conflict).
    void decided(qint64 requestId, bool approved, const QJsonObject &outcome);
    /// The request's context arrived (or failed) and the dialog shows it.
    void contextLoaded();

protected:
    void resizeEvent(QResizeEvent *event) override;
    bool eventFilter(QObject *watched, QEvent *event) override;

private:
    /// Lets the request's scroll area grow to the height of what it shows, and shrink to 8
    /// lines of it (it scrolls then): the tables and the reason below keep the rest.
    void fitRequest();
    void loadContext();
    void showContext(const db::ResultSet &rows);
    void showRequest();
    void showMessage(const QString &text, bool error);
    void updateButtons();
    void finishRequest();

    db::DatabaseSession *m_session;
    CompensationRequest m_request;
    Decision m_decision;
    QString m_osUser;
    QUuid m_actionId;
    QJsonObject m_outcome;
    std::optional<qint64> m_refundableMinor; ///< for the payment beyond open requests
    QString m_targetLine;
    int m_pending = 0;
    bool m_finished = false;
    bool m_contextStale = false;

    QLabel *m_first = nullptr;
    QLabel *m_threshold = nullptr;
    QLabel *m_others = nullptr;
    QLabel *m_title = nullptr;
    QLabel *m_summary = nullptr;
    QWidget *m_requestBox = nullptr;
    QScrollArea *m_requestScroll = nullptr;
    QLabel *m_amount = nullptr;
    QLabel *m_historyTitle = nullptr;
    QTableView *m_attemptsView = nullptr;
    QLabel *m_mismatchesTitle = nullptr;
    QTableView *m_mismatchesView = nullptr;
    ResultTableModel *m_attempts = nullptr;
    ResultTableModel *m_mismatches = nullptr;
    QPlainTextEdit *m_reason = nullptr;
    QLabel *m_message = nullptr;
    QDialogButtonBox *m_buttons = nullptr;
    QPushButton *m_decide = nullptr;
    QPushButton *m_close = nullptr;
};

} // namespace redrive
