// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/compensation_model.h"

#include "models/db/database_session.h"
#include "models/db/sql_statement.h"

#include <QBrush>
#include <QColor>
#include <QCoreApplication>
#include <QFont>

namespace redrive {

QString CompensationRequest::targetText() const
{
    const QString type = targetType == QLatin1String("dead_letter")
        ? QCoreApplication::translate("CompensationModel", "dead letter")
        : targetType;
    return QStringLiteral("%1 %2").arg(type, QString::number(targetId));
}

namespace {

using F = ResultColumn::Format;

bool isPending(const ResultCell &cell)
{
    return cell.text(QStringLiteral("status")) == QLatin1String("pending_approval");
}

// "pending approval", marked while it waits for a second person.
std::optional<QVariant> statusHook(const ResultCell &cell, int role)
{
    const bool pending = isPending(cell);
    switch (role) {
    case Qt::DisplayRole:
        return cell.text().replace(QLatin1Char('_'), QLatin1Char(' '));
    case Qt::ToolTipRole:
        if (pending)
            return CompensationModel::tr("Waits for a second person's approval (maker-checker)");
        return std::nullopt;
    case Qt::FontRole: {
        if (!pending)
            return QVariant();
        QFont font;
        font.setBold(true);
        return font;
    }
    case Qt::BackgroundRole:
        return pending ? QVariant(QBrush(QColor(0xff, 0xe0, 0xa8))) : QVariant();
    case Qt::ForegroundRole:
        return pending ? QVariant(QBrush(QColor(0x5c, 0x2b, 0x00))) : QVariant();
    default:
        return std::nullopt;
    }
}

std::optional<QVariant> targetHook(const ResultCell &cell, int role)
{
    if (role != Qt::DisplayRole)
        return std::nullopt;
    CompensationRequest r;
    r.targetType = cell.text(QStringLiteral("target_type"));
    r.targetId = cell.rows.bigInt(cell.row, cell.column).value_or(0);
    return r.targetText();
}

// The decision and its reason.
std::optional<QVariant> decidedByHook(const ResultCell &cell, int role)
{
    const QString reason = cell.text(QStringLiteral("decision_reason"));
    if (role != Qt::ToolTipRole || reason.isEmpty())
        return std::nullopt;
    return CompensationModel::tr("%1: %2").arg(cell.text(QStringLiteral("decision")), reason);
}

} // namespace

CompensationModel::CompensationModel(db::DatabaseSession *session, QObject *parent)
    : ResultTableModel(
        session,
        ResultColumnSet(
            {
                { QStringLiteral("status"), tr("Status"), F::Text, statusHook },
                { QStringLiteral("requested_at"), tr("Requested at"), F::Time },
                { QStringLiteral("requested_by"), tr("Requested by") },
                { QStringLiteral("target_id"), tr("Target"), F::Text, targetHook,
                  JsonValueKind::Integer },
                { QStringLiteral("kind"), tr("Kind") },
                { QStringLiteral("payment_ref"), tr("Payment"), ResultColumn::Format::Identifier },
                { QStringLiteral("amount_minor"), tr("Amount"), F::Integer,
                  ResultColumn::moneyIn(QStringLiteral("currency")) },
                { QStringLiteral("reason"), tr("Reason"), F::OneLine },
                { QStringLiteral("decided_by"), tr("Decided by"), F::Text, decidedByHook },
                { QStringLiteral("decided_at"), tr("Decided at"), F::Time },
            },
            {
                { IdRole, QStringLiteral("id"), JsonValueKind::Integer },
                { VersionRole, QStringLiteral("version"), JsonValueKind::Integer },
                { StatusRole, QStringLiteral("status") },
                { RequestedByRole, QStringLiteral("requested_by") },
            },
            { { QStringLiteral("id"), JsonValueKind::Integer },
              { QStringLiteral("version"), JsonValueKind::Integer },
              { QStringLiteral("requires_approval"), JsonValueKind::Boolean } }),
        parent)
{ }

QStringList CompensationModel::allStatuses()
{
    return {
        QStringLiteral("pending_approval"), QStringLiteral("approved"), QStringLiteral("rejected"),
        QStringLiteral("executing"),        QStringLiteral("done"),     QStringLiteral("failed")
    };
}

void CompensationModel::loadPolicy()
{
    session()->execute(db::statementSql(db::Statement::ApprovalPolicy), {}, this,
                       [this](const db::DbExpected<db::ResultSet> &r) {
                           if (!r) {
                               Q_EMIT failed(r.error());
                               return;
                           }
                           if (r->rowCount() > 0)
                               Q_EMIT policyLoaded(
                                   r->bigInt(0, QStringLiteral("approval_minor")).value_or(0));
                       });
}

void CompensationModel::reload()
{
    db::QueryParams params;
    addAnyOf(params, m_statuses);
    params.addInt(kLimit);
    load(db::Statement::CompensationList, params);
}

CompensationRequest CompensationModel::requestFrom(const db::ResultSet &rows, int row)
{
    CompensationRequest r;
    if (row < 0 || row >= rows.rowCount())
        return r;
    auto col = [&rows](const char *name) {
        return rows.columnIndex(QLatin1String(name));
    };
    auto text = [&](const char *name) {
        return rows.text(row, col(name));
    };
    r.id = rows.bigInt(row, col("id")).value_or(0);
    r.targetType = text("target_type");
    r.targetId = rows.bigInt(row, col("target_id")).value_or(0);
    r.kind = text("kind");
    r.paymentRef = text("payment_ref");
    r.amountMinor = rows.bigInt(row, col("amount_minor")).value_or(0);
    r.currency = text("currency");
    r.status = text("status");
    r.requiresApproval = rows.boolean(row, col("requires_approval")).value_or(false);
    r.requestedBy = text("requested_by");
    r.requestedAt = rows.timestamp(row, col("requested_at"));
    r.reason = text("reason");
    r.ticket = text("ticket");
    r.version = rows.integer(row, col("version")).value_or(0);
    r.decidedBy = text("decided_by");
    r.decision = text("decision");
    r.decidedAt = rows.timestamp(row, col("decided_at"));
    r.decisionReason = text("decision_reason");
    r.providerRef = text("provider_ref");
    r.errorMessage = text("error_message");
    return r;
}

CompensationRequest CompensationModel::requestAt(int row) const
{
    return requestFrom(result(), row);
}

} // namespace redrive
