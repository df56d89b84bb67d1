// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/result_table_model.h"

#include <QDateTime>
#include <QStringList>

namespace redrive {

/// One compensation request as the list showed it: what the decision dialog starts from.
struct CompensationRequest
{
    qint64 id = 0;
    QString targetType; ///< dead_letter or mismatch
    qint64 targetId = 0;
    QString kind; ///< refund, void, reversal
    QString paymentRef;
    qint64 amountMinor = 0;
    QString currency;
    QString status; ///< pending_approval, approved, rejected, executing, done, failed
    bool requiresApproval = false;
    QString requestedBy; ///< the login role that asked
    QDateTime requestedAt;
    QString reason;
    QString ticket;
    int version = 0; ///< what a decision must name (optimistic locking)
    QString decidedBy;
    QString decision;
    QDateTime decidedAt;
    QString decisionReason;
    QString providerRef;
    QString errorMessage;

    bool isValid() const { return id > 0; }
    bool isPendingApproval() const { return status == QLatin1String("pending_approval"); }
    /// "dead letter 42" or "mismatch 7".
    QString targetText() const;
};

/// Compensation requests (docs/domain.md#compensation-and-maker-checker), those pending approval
/// first, then newest, through Statement::CompensationList. The amount shows as money in its
/// currency ("50.00 USD"); a request pending approval is marked. At most kLimit rows;
/// reachedLimit() says when there may be more.
class CompensationModel : public ResultTableModel
{
    Q_OBJECT
public:
    enum Column {
        Status,
        RequestedAt,
        RequestedBy,
        Target,
        Kind,
        Payment,
        Amount,
        Reason,
        DecidedBy,
        DecidedAt,
    };
    enum Role {
        IdRole = Qt::UserRole + 1, ///< qint64 request id
        VersionRole, ///< int
        StatusRole, ///< QString
        RequestedByRole, ///< QString login role
    };
    static constexpr int kLimit = 1000;

    /// `session` must outlive the model. Nothing loads until reload().
    explicit CompensationModel(db::DatabaseSession *session, QObject *parent = nullptr);

    /// Only requests in these statuses (empty: all); takes effect at the next reload().
    void setStatuses(const QStringList &statuses) { m_statuses = statuses; }
    QStringList statuses() const { return m_statuses; }
    /// Asks the server again.
    void reload();
    /// True when the list holds kLimit rows, so there may be more requests than shown.
    bool reachedLimit() const { return rowCount() >= kLimit; }
    /// The request in `row` (invalid when out of range).
    CompensationRequest requestAt(int row) const;
    /// The row of request `id`, or -1.
    int rowOfRequest(qint64 id) const { return rowOf(QStringLiteral("id"), QString::number(id)); }
    /// Every request status, in the order of the lifecycle.
    static QStringList allStatuses();

    /// Reads one request from a row of Statement::CompensationList or CompensationContext.
    static CompensationRequest requestFrom(const db::ResultSet &rows, int row);
    /// Asks for the approval policy; policyLoaded() follows (nothing on error: failed()).
    void loadPolicy();

Q_SIGNALS:
    /// Requests at or above `approvalMinor` (minor units of the request's currency) wait for a
    /// second person. Only redrive_admin changes it, through an audited function.
    void policyLoaded(qint64 approvalMinor);

private:
    QStringList m_statuses;
};

} // namespace redrive
