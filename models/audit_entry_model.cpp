// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/audit_entry_model.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace redrive {

namespace {

using F = ResultColumn::Format;

// Who the server authenticated, and from where.
std::optional<QVariant> actorHook(const ResultCell &cell, int role)
{
    if (role != Qt::ToolTipRole)
        return std::nullopt;
    const QString address = cell.text(QStringLiteral("client_addr"));
    return address.isNull() ? AuditEntryModel::tr("%1 (local connection)").arg(cell.text())
                            : AuditEntryModel::tr("%1 from %2").arg(cell.text(), address);
}

// A count with the first few targets; a bulk chunk's entry can list a thousand.
std::optional<QVariant> targetsHook(const ResultCell &cell, int role)
{
    const QString summary = cell.text(QStringLiteral("target_summary"));
    if (role == Qt::ToolTipRole)
        return summary;
    if (role != Qt::DisplayRole)
        return std::nullopt;
    const qint64 n = cell.rows.bigInt(cell.row, cell.column).value_or(0);
    if (n == 0)
        return QString(QChar(0x2014));
    return n <= 3 ? summary : AuditEntryModel::tr("%1: %2, …").arg(n).arg(summary);
}

std::optional<QVariant> outcomeHook(const ResultCell &cell, int role)
{
    if (role == Qt::DisplayRole)
        return AuditEntryModel::describeOutcome(cell.text());
    return std::nullopt;
}

ResultColumnSet columns()
{
    using M = AuditEntryModel;
    return ResultColumnSet(
        {
            { QStringLiteral("id"), M::tr("Entry"), F::Integer },
            { QStringLiteral("at"), M::tr("At"), F::Time },
            { QStringLiteral("db_user"), M::tr("Actor"), F::Text, actorHook },
            // The console sends it; the server cannot check it (Actor is the server's login).
            { QStringLiteral("os_user"), M::tr("OS user (reported by client)") },
            { QStringLiteral("action"), M::tr("Action") },
            { QStringLiteral("target_count"), M::tr("Targets"), F::Text, targetsHook,
              JsonValueKind::Integer },
            { QStringLiteral("reason"), M::tr("Reason"), F::OneLine },
            { QStringLiteral("ticket"), M::tr("Ticket") },
            { QStringLiteral("outcome_text"), M::tr("Outcome"), F::Text, outcomeHook,
              JsonValueKind::Document },
            { QStringLiteral("hash"), M::tr("Hash"), F::ShortHash },
        },
        {
            { M::IdRole, QStringLiteral("id"), JsonValueKind::Integer },
            { M::ActionRole, QStringLiteral("action") },
            { M::ActorRole, QStringLiteral("db_user") },
        });
}

} // namespace

AuditEntryModel::AuditEntryModel(db::DatabaseSession *session, QObject *parent, int pageSize)
    : KeysetPageModel(session, db::Statement::AuditEntryPage,
                      { { QStringLiteral("id"), db::ParamType::BigInt } }, columns(), pageSize,
                      parent)
{
    setCount({ db::Statement::AuditEntryCount, std::nullopt, kCountCap });
}

void AuditEntryModel::setFilter(const AuditFilter &filter)
{
    m_filter = filter;
    reload();
}

QString AuditEntryModel::describeOutcome(const QString &outcomeJson)
{
    const QJsonObject o = QJsonDocument::fromJson(outcomeJson.toUtf8()).object();
    if (o.isEmpty() || !o.contains(QStringLiteral("applied")))
        return {};
    const auto applied = qint64(o.value(QStringLiteral("applied")).toDouble());
    const auto confirmed = qint64(o.value(QStringLiteral("confirmed")).toDouble());
    const auto conflicts = qint64(o.value(QStringLiteral("conflicts")).toDouble());
    const auto refused = qint64(o.value(QStringLiteral("refused")).toDouble());
    QString text = tr("%1 of %2 applied").arg(applied).arg(confirmed);
    if (conflicts > 0)
        text += QStringLiteral(" \u00b7 ") + tr("%n conflict(s)", nullptr, int(conflicts));
    if (refused > 0)
        text += QStringLiteral(" \u00b7 ") + tr("%n refused", nullptr, int(refused));
    return text;
}

void AuditEntryModel::appendFilterParams(db::QueryParams &params) const
{
    m_filter.appendParams(params);
}

QVariant AuditEntryModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Horizontal && role == Qt::ToolTipRole && section == OsUser)
        return tr("The operating-system user name the console reported. The client sets it and "
                  "the server cannot check it; Actor is the login the server authenticated.");
    return KeysetPageModel::headerData(section, orientation, role);
}

} // namespace redrive
