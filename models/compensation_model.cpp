// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/compensation_model.h"

#include "models/db/database_session.h"
#include "models/db/sql_statement.h"
#include "models/display_format.h"

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
    return QStringLiteral("%1 %2").arg(type).arg(targetId);
}

CompensationModel::CompensationModel(db::DatabaseSession *session, QObject *parent)
    : ResultTableModel(
        session,
        { { QStringLiteral("status"), tr("Status") },
          { QStringLiteral("requested_at"), tr("Requested at"), ResultColumn::Format::Time },
          { QStringLiteral("requested_by"), tr("Requested by") },
          { QStringLiteral("target_id"), tr("Target") },
          { QStringLiteral("kind"), tr("Kind") },
          { QStringLiteral("payment_ref"), tr("Payment") },
          { QStringLiteral("amount_cents"), tr("Amount") },
          { QStringLiteral("reason"), tr("Reason"), ResultColumn::Format::FirstLine },
          { QStringLiteral("decided_by"), tr("Decided by") },
          { QStringLiteral("decided_at"), tr("Decided at"), ResultColumn::Format::Time } },
        parent)
    , m_session(session)
{
    setJsonKinds({ { QStringLiteral("id"), JsonValueKind::Integer },
                   { QStringLiteral("target_id"), JsonValueKind::Integer },
                   { QStringLiteral("amount_cents"), JsonValueKind::Integer },
                   { QStringLiteral("version"), JsonValueKind::Integer },
                   { QStringLiteral("requires_approval"), JsonValueKind::Boolean },
                   { QStringLiteral("requested_at"), JsonValueKind::Timestamp },
                   { QStringLiteral("decided_at"), JsonValueKind::Timestamp } });
}

QStringList CompensationModel::allStatuses()
{
    return {
        QStringLiteral("pending_approval"), QStringLiteral("approved"), QStringLiteral("rejected"),
        QStringLiteral("executing"),        QStringLiteral("done"),     QStringLiteral("failed")
    };
}

void CompensationModel::loadPolicy()
{
    m_session->execute(db::statementSql(db::Statement::ApprovalPolicy), {}, this,
                       [this](const db::DbExpected<db::ResultSet> &r) {
                           if (!r) {
                               Q_EMIT failed(r.error());
                               return;
                           }
                           if (r->rowCount() > 0)
                               Q_EMIT policyLoaded(r->bigInt(0, 0).value_or(0));
                       });
}

void CompensationModel::reload()
{
    db::QueryParams params;
    if (m_statuses.isEmpty())
        params.addNull(db::ParamType::TextArray);
    else
        params.addTextArray(m_statuses);
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
    r.amountCents = rows.bigInt(row, col("amount_cents")).value_or(0);
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

int CompensationModel::rowOfRequest(qint64 id) const
{
    const int column = result().columnIndex(QStringLiteral("id"));
    for (int row = 0; row < rowCount(); ++row) {
        if (result().bigInt(row, column).value_or(0) == id)
            return row;
    }
    return -1;
}

QVariant CompensationModel::data(const QModelIndex &index, int role) const
{
    if (!checkIndex(index, CheckIndexOption::IndexIsValid | CheckIndexOption::ParentIsInvalid))
        return {};
    const db::ResultSet &rows = result();
    const int row = index.row();
    const bool pending = text(row, QStringLiteral("status")) == QLatin1String("pending_approval");
    switch (role) {
    case Qt::DisplayRole:
        switch (Column(index.column())) {
        case Status:
            return text(row, QStringLiteral("status")).replace(QLatin1Char('_'), QLatin1Char(' '));
        case Target:
            return requestAt(row).targetText();
        case Amount:
            return display::money(
                rows.bigInt(row, rows.columnIndex(QStringLiteral("amount_cents"))).value_or(0),
                text(row, QStringLiteral("currency")));
        default:
            break;
        }
        break;
    case Qt::ToolTipRole:
        if (index.column() == Status && pending)
            return tr("Waits for a second person's approval (maker-checker)");
        if (index.column() == Reason || index.column() == DecidedBy) {
            const QString decision = text(row, QStringLiteral("decision_reason"));
            if (index.column() == DecidedBy && !decision.isEmpty())
                return tr("%1: %2").arg(text(row, QStringLiteral("decision")), decision);
        }
        break;
    case Qt::TextAlignmentRole:
        if (index.column() == Amount)
            return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        break;
    case Qt::FontRole:
        if (index.column() == Status && pending) {
            QFont font;
            font.setBold(true);
            return font;
        }
        return {};
    case Qt::BackgroundRole:
        if (index.column() == Status && pending)
            return QBrush(QColor(0xff, 0xe0, 0xa8));
        return {};
    case Qt::ForegroundRole:
        if (index.column() == Status && pending)
            return QBrush(QColor(0x5c, 0x2b, 0x00));
        return {};
    case IdRole:
        return rows.bigInt(row, rows.columnIndex(QStringLiteral("id"))).value_or(0);
    case VersionRole:
        return rows.integer(row, rows.columnIndex(QStringLiteral("version"))).value_or(0);
    case StatusRole:
        return text(row, QStringLiteral("status"));
    case RequestedByRole:
        return text(row, QStringLiteral("requested_by"));
    default:
        break;
    }
    return ResultTableModel::data(index, role);
}

} // namespace redrive
