// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/compensation_model.h"

#include <QJsonObject>
#include <QPointer>
#include <QStringList>
#include <QWidget>

class QComboBox;
class QLabel;
class QPushButton;

namespace redrive {

namespace db {
class DatabaseSession;
class DbError;
} // namespace db

class CompensationDecisionDialog;
class ResultTableView;

/// Compensation requests and their approval, in their own view
/// (docs/domain.md#compensation-goes-through-the-outbox-with-four-eyes): every request, those
/// pending approval first, with the requester, target, amount as money and the decision; the
/// selected request's details below. An approver decides through Approve…/Reject…, which open a
/// CompensationDecisionDialog. The buttons follow setRoles(): without redrive_approver they are
/// disabled with "needs role redrive_approver"; on a request the signed-in role made they are
/// disabled with "you requested this; a different approver must decide" (maker-checker; the
/// database refuses it too); on a request no longer pending they say so. Errors go through
/// ErrorPresenter.
class CompensationWidget : public QWidget
{
    Q_OBJECT
public:
    /// `session` must outlive the widget. Nothing loads until reload().
    explicit CompensationWidget(db::DatabaseSession *session, QWidget *parent = nullptr);

    CompensationModel *model() const { return m_model; }
    /// True while the list waits for the server.
    bool isLoading() const;

    /// The signed-in login role (session_user) and the Redrive group roles it holds (as the
    /// SessionRoles statement returns them); decides which decide buttons are enabled.
    void setRoles(const QString &loginRole, const QStringList &redriveRoles);
    /// The operating-system user reported in the audit entries of decisions (default: $USER).
    void setOsUser(const QString &osUser) { m_osUser = osUser; }
    /// Only requests pending approval (true) or all of them (false, the default).
    void setPendingOnly(bool pendingOnly);

    /// Selects the request in `row` (and shows it in the details).
    void selectRequest(int row);
    /// Shows request `id` selected: every status, reloaded, then selected when the list holds
    /// it (the search's "open where it lives").
    void showRequest(qint64 id);
    /// The selected request (invalid when none).
    CompensationRequest currentRequest() const;
    /// Why the selected request cannot be decided by this login (the buttons' tooltip), or
    /// empty when it can.
    QString decideBlockedReason() const;
    /// True when the Approve… (or Reject…) button is enabled.
    bool canApprove() const;
    bool canReject() const;
    /// The selected request's details as shown.
    QString detailText() const;

    /// Opens the decision dialog for the selected request (what Approve…/Reject… do) and
    /// returns it (it deletes itself when closed); nullptr when the buttons are disabled.
    CompensationDecisionDialog *openDecisionDialog(bool approve);

public Q_SLOTS:
    /// Loads the list again.
    void reload();
    /// Show times in UTC instead of local time with the UTC offset.
    void setShowUtc(bool utc);

Q_SIGNALS:
    /// A decision reached the database and returned `outcome` (applied, or a conflict when the
    /// request changed meanwhile); the list reloads.
    void compensationDecided(qint64 requestId, bool approved, const QJsonObject &outcome);
    /// Emitted when the loading state of the list changed.
    void loadingChanged(bool loading);

private:
    void updateButtons();
    void showDetail();
    void updateTitle();
    void reportError(const db::DbError &error, const QString &what);

    db::DatabaseSession *m_session;
    CompensationModel *m_model;
    ResultTableView *m_view = nullptr;
    QComboBox *m_show = nullptr;
    QPushButton *m_approve = nullptr;
    QPushButton *m_reject = nullptr;
    QLabel *m_title = nullptr;
    QLabel *m_roleNote = nullptr;
    QLabel *m_activity = nullptr;
    QLabel *m_policy = nullptr;
    QLabel *m_detail = nullptr;
    QPointer<CompensationDecisionDialog> m_dialog;
    QString m_loginRole;
    QStringList m_roles;
    QString m_osUser;
    qint64 m_selectAfterLoad = 0;
};

} // namespace redrive
