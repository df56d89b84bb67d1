// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/mismatch_model.h"

#include "models/display_format.h"

#include <QBrush>
#include <QColor>
#include <QFont>

namespace redrive {

namespace {

using F = ResultColumn::Format;

// One cell of an ours|theirs pair (result column `partner` is the other half): an em dash for
// a missing side, money in its side's currency when `currency` is given, and highlighted when
// the two differ.
ResultColumn::Hook pairHook(const QString &partner, bool ours, const QString &currency = {})
{
    return [partner, ours, currency](const ResultCell &cell, int role) -> std::optional<QVariant> {
        const bool differs = cell.isNull() != cell.isNull(partner)
            || (!cell.isNull() && cell.text() != cell.text(partner));
        switch (role) {
        case Qt::DisplayRole:
            if (cell.isNull())
                return QString(QChar(0x2014));
            if (!currency.isEmpty())
                return display::money(cell.rows.bigInt(cell.row, cell.column).value_or(0),
                                      cell.text(currency));
            return std::nullopt;
        case Qt::ToolTipRole:
            if (cell.isNull())
                return ours ? MismatchModel::tr("No record on our side")
                            : MismatchModel::tr("No record at the provider");
            if (differs)
                return ours ? MismatchModel::tr("Ours differs from the provider's")
                            : MismatchModel::tr("The provider's differs from ours");
            return QVariant();
        case Qt::BackgroundRole:
            return differs ? QVariant(QBrush(QColor(0xff, 0xe0, 0xa8))) : QVariant();
        case Qt::ForegroundRole: // readable on the highlight in any theme
            return differs ? QVariant(QBrush(QColor(0x5c, 0x2b, 0x00))) : QVariant();
        case Qt::FontRole: {
            if (!differs)
                return QVariant();
            QFont font;
            font.setBold(true);
            return font;
        }
        case MismatchModel::DiffersRole:
            return differs;
        default:
            return std::nullopt;
        }
    };
}

ResultColumnSet columns()
{
    using M = MismatchModel;
    const QString ourAmount = QStringLiteral("internal_amount_minor");
    const QString theirAmount = QStringLiteral("external_amount_minor");
    const QString ourCurrency = QStringLiteral("internal_currency");
    const QString theirCurrency = QStringLiteral("external_currency");
    const QString ourStatus = QStringLiteral("internal_status");
    const QString theirStatus = QStringLiteral("external_status");
    return ResultColumnSet(
        {
            { QStringLiteral("detected_at"), M::tr("Detected at"), F::Time },
            { QStringLiteral("run_id"), M::tr("Run"), F::Integer },
            { QStringLiteral("kind"), M::tr("Kind") },
            { QStringLiteral("payment_ref"), M::tr("Payment"), ResultColumn::Format::Identifier },
            { QStringLiteral("order_ref"), M::tr("Order"), ResultColumn::Format::Identifier },
            { ourAmount, M::tr("Amount ours"), F::Integer,
              pairHook(theirAmount, true, ourCurrency) },
            { theirAmount, M::tr("Amount theirs"), F::Integer,
              pairHook(ourAmount, false, theirCurrency) },
            { ourCurrency, M::tr("Currency ours"), F::Text, pairHook(theirCurrency, true) },
            { theirCurrency, M::tr("Currency theirs"), F::Text, pairHook(ourCurrency, false) },
            { ourStatus, M::tr("Status ours"), F::Text, pairHook(theirStatus, true) },
            { theirStatus, M::tr("Status theirs"), F::Text, pairHook(ourStatus, false) },
            { QStringLiteral("status"), M::tr("Mismatch status") },
        },
        {
            { M::IdRole, QStringLiteral("id"), JsonValueKind::Integer },
            { M::RunIdRole, QStringLiteral("run_id"), JsonValueKind::Integer },
            { M::KindRole, QStringLiteral("kind") },
            { M::VersionRole, QStringLiteral("version"), JsonValueKind::Integer },
            { M::InternalRecordRole, QStringLiteral("internal_record") },
            { M::ExternalRecordRole, QStringLiteral("external_record") },
        },
        { { QStringLiteral("id"), JsonValueKind::Integer },
          { QStringLiteral("internal_record"), JsonValueKind::Document },
          { QStringLiteral("external_record"), JsonValueKind::Document },
          { QStringLiteral("version"), JsonValueKind::Integer } });
}

} // namespace

MismatchModel::MismatchModel(db::DatabaseSession *session, QObject *parent, int pageSize)
    : KeysetPageModel(session, db::Statement::MismatchPage,
                      { { QStringLiteral("detected_at"), db::ParamType::TimestampTz },
                        { QStringLiteral("id"), db::ParamType::BigInt } },
                      columns(), pageSize, parent)
{ }

QStringList MismatchModel::allKinds()
{
    return { QStringLiteral("missing_internal"), QStringLiteral("missing_external"),
             QStringLiteral("amount_mismatch"),  QStringLiteral("currency_mismatch"),
             QStringLiteral("status_mismatch"),  QStringLiteral("duplicate_external") };
}

QStringList MismatchModel::allStatuses()
{
    return { QStringLiteral("open"), QStringLiteral("resolved"),
             QStringLiteral("compensation_pending"), QStringLiteral("compensated") };
}

void MismatchModel::setFilter(const MismatchFilter &filter)
{
    m_filter = filter;
    reload();
}

void MismatchModel::appendFilterParams(db::QueryParams &params) const
{
    addAnyOf(params, m_filter.kinds);
    addAnyOf(params, m_filter.statuses);
    if (m_filter.runId > 0)
        params.addBigInt(m_filter.runId);
    else
        params.addNull(db::ParamType::BigInt);
}

} // namespace redrive
