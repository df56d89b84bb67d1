// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/mismatch_model.h"

#include "models/dead_letter_model.h"

#include <QBrush>
#include <QColor>
#include <QFont>

namespace redrive {

namespace {

// Result columns of resources/sql/mismatch_page.sql.
enum ResultColumn {
    RId,
    RRunId,
    RKind,
    RPaymentRef,
    ROrderRef,
    RInternalAmount,
    RExternalAmount,
    RInternalCurrency,
    RExternalCurrency,
    RInternalStatus,
    RExternalStatus,
    RInternalRecord,
    RExternalRecord,
    RStatus,
    RDetectedAt,
    RVersion,
    RResolution,
    RResolvedBy
};

void addList(db::QueryParams &params, const QStringList &values)
{
    if (values.isEmpty())
        params.addNull(db::ParamType::TextArray);
    else
        params.addTextArray(values);
}

int resultColumnFor(int column)
{
    switch (column) {
    case MismatchModel::DetectedAt:
        return RDetectedAt;
    case MismatchModel::Kind:
        return RKind;
    case MismatchModel::Payment:
        return RPaymentRef;
    case MismatchModel::Order:
        return ROrderRef;
    case MismatchModel::AmountOurs:
        return RInternalAmount;
    case MismatchModel::AmountTheirs:
        return RExternalAmount;
    case MismatchModel::CurrencyOurs:
        return RInternalCurrency;
    case MismatchModel::CurrencyTheirs:
        return RExternalCurrency;
    case MismatchModel::StatusOurs:
        return RInternalStatus;
    case MismatchModel::StatusTheirs:
        return RExternalStatus;
    case MismatchModel::Status:
        return RStatus;
    case MismatchModel::Run:
        return RRunId;
    default:
        return -1;
    }
}

// The other half of an ours|theirs pair, or -1 for a column that is not in a pair.
int partnerOf(int column)
{
    switch (column) {
    case MismatchModel::AmountOurs:
        return MismatchModel::AmountTheirs;
    case MismatchModel::AmountTheirs:
        return MismatchModel::AmountOurs;
    case MismatchModel::CurrencyOurs:
        return MismatchModel::CurrencyTheirs;
    case MismatchModel::CurrencyTheirs:
        return MismatchModel::CurrencyOurs;
    case MismatchModel::StatusOurs:
        return MismatchModel::StatusTheirs;
    case MismatchModel::StatusTheirs:
        return MismatchModel::StatusOurs;
    default:
        return -1;
    }
}

bool isOurs(int column)
{
    return column == MismatchModel::AmountOurs || column == MismatchModel::CurrencyOurs
        || column == MismatchModel::StatusOurs;
}

int minorDigits(const QString &currency)
{
    static const QStringList zero = {
        QStringLiteral("BIF"), QStringLiteral("CLP"), QStringLiteral("DJF"), QStringLiteral("GNF"),
        QStringLiteral("ISK"), QStringLiteral("JPY"), QStringLiteral("KMF"), QStringLiteral("KRW"),
        QStringLiteral("PYG"), QStringLiteral("RWF"), QStringLiteral("UGX"), QStringLiteral("VND"),
        QStringLiteral("VUV"), QStringLiteral("XAF"), QStringLiteral("XOF"), QStringLiteral("XPF")
    };
    static const QStringList three
        = { QStringLiteral("BHD"), QStringLiteral("IQD"), QStringLiteral("JOD"),
            QStringLiteral("KWD"), QStringLiteral("LYD"), QStringLiteral("OMR"),
            QStringLiteral("TND") };
    const QString code = currency.toUpper();
    if (zero.contains(code))
        return 0;
    if (three.contains(code))
        return 3;
    return 2;
}

} // namespace

MismatchModel::MismatchModel(db::DatabaseSession *session, QObject *parent, int pageSize)
    : KeysetPageModel(session, db::Statement::MismatchPage, pageSize, parent)
{
    setJsonKinds({ { QStringLiteral("id"), JsonValueKind::Integer },
                   { QStringLiteral("run_id"), JsonValueKind::Integer },
                   { QStringLiteral("internal_amount_cents"), JsonValueKind::Integer },
                   { QStringLiteral("external_amount_cents"), JsonValueKind::Integer },
                   { QStringLiteral("internal_record"), JsonValueKind::Document },
                   { QStringLiteral("external_record"), JsonValueKind::Document },
                   { QStringLiteral("detected_at"), JsonValueKind::Timestamp },
                   { QStringLiteral("version"), JsonValueKind::Integer } });
}

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

QString MismatchModel::formatMoney(qint64 minorUnits, const QString &currency)
{
    const int digits = minorDigits(currency);
    const quint64 magnitude
        = minorUnits < 0 ? quint64(0) - quint64(minorUnits) : quint64(minorUnits);
    quint64 scale = 1;
    for (int i = 0; i < digits; ++i)
        scale *= 10;
    QString text = QString::number(magnitude / scale);
    if (digits > 0)
        text += QLatin1Char('.')
            + QStringLiteral("%1").arg(magnitude % scale, digits, 10, QLatin1Char('0'));
    if (minorUnits < 0)
        text.prepend(QLatin1Char('-'));
    if (!currency.isEmpty())
        text += QLatin1Char(' ') + currency;
    return text;
}

void MismatchModel::setFilter(const MismatchFilter &filter)
{
    m_filter = filter;
    reload();
}

qint64 MismatchModel::idAt(int row) const
{
    int offset = 0;
    const db::ResultSet *page = pageFor(row, &offset);
    return page ? page->bigInt(offset, RId).value_or(0) : 0;
}

void MismatchModel::appendParams(db::QueryParams &params, const db::ResultSet *last,
                                 int lastRow) const
{
    addList(params, m_filter.kinds);
    addList(params, m_filter.statuses);
    if (m_filter.runId > 0)
        params.addBigInt(m_filter.runId);
    else
        params.addNull(db::ParamType::BigInt);
    if (last) {
        params.addTimestampText(last->raw(lastRow, RDetectedAt));
        params.addBigInt(last->bigInt(lastRow, RId).value_or(0));
    } else {
        params.addNull(db::ParamType::TimestampTz);
        params.addNull(db::ParamType::BigInt);
    }
    params.addInt(pageSize());
}

int MismatchModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant MismatchModel::cellData(const db::ResultSet &rows, int row, int column, int role) const
{
    const int rc = resultColumnFor(column);
    const int partner = partnerOf(column);
    auto differs = [&] {
        if (partner < 0)
            return false;
        const int prc = resultColumnFor(partner);
        return rows.isNull(row, rc) != rows.isNull(row, prc)
            || rows.raw(row, rc) != rows.raw(row, prc);
    };
    switch (role) {
    case Qt::DisplayRole:
        switch (Column(column)) {
        case DetectedAt:
            return DeadLetterModel::formatTime(rows.timestamp(row, RDetectedAt), showUtc());
        case AmountOurs:
        case AmountTheirs: {
            if (rows.isNull(row, rc))
                return QString(QChar(0x2014));
            const int currency = column == AmountOurs ? RInternalCurrency : RExternalCurrency;
            return formatMoney(rows.bigInt(row, rc).value_or(0), rows.text(row, currency));
        }
        case CurrencyOurs:
        case CurrencyTheirs:
        case StatusOurs:
        case StatusTheirs:
            return rows.isNull(row, rc) ? QString(QChar(0x2014)) : rows.text(row, rc);
        case Run:
            return rows.bigInt(row, RRunId).value_or(0);
        default:
            return rows.text(row, rc);
        }
    case Qt::ToolTipRole:
        if (column == DetectedAt)
            return DeadLetterModel::formatTime(rows.timestamp(row, RDetectedAt), !showUtc());
        if (partner >= 0 && rows.isNull(row, rc))
            return isOurs(column) ? tr("No record on our side") : tr("No record at the provider");
        if (partner >= 0 && differs())
            return isOurs(column) ? tr("Ours differs from the provider's")
                                  : tr("The provider's differs from ours");
        if (column == Payment || column == Order)
            return rows.text(row, rc);
        return {};
    case Qt::BackgroundRole:
        if (differs())
            return QBrush(QColor(0xff, 0xe0, 0xa8));
        return {};
    case Qt::ForegroundRole:
        if (differs())
            return QBrush(QColor(0x5c, 0x2b, 0x00)); // readable on the highlight in any theme
        return {};
    case Qt::FontRole:
        if (differs()) {
            QFont font;
            font.setBold(true);
            return font;
        }
        return {};
    case Qt::TextAlignmentRole:
        if (column == AmountOurs || column == AmountTheirs || column == Run)
            return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case IdRole:
        return rows.bigInt(row, RId).value_or(0);
    case RunIdRole:
        return rows.bigInt(row, RRunId).value_or(0);
    case KindRole:
        return rows.text(row, RKind);
    case VersionRole:
        return rows.integer(row, RVersion).value_or(0);
    case InternalRecordRole:
        return rows.text(row, RInternalRecord);
    case ExternalRecordRole:
        return rows.text(row, RExternalRecord);
    case DiffersRole:
        return differs();
    default:
        return {};
    }
}

QVariant MismatchModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return KeysetPageModel::headerData(section, orientation, role);
    switch (Column(section)) {
    case DetectedAt:
        return tr("Detected at");
    case Kind:
        return tr("Kind");
    case Payment:
        return tr("Payment");
    case Order:
        return tr("Order");
    case AmountOurs:
        return tr("Amount ours");
    case AmountTheirs:
        return tr("Amount theirs");
    case CurrencyOurs:
        return tr("Currency ours");
    case CurrencyTheirs:
        return tr("Currency theirs");
    case StatusOurs:
        return tr("Status ours");
    case StatusTheirs:
        return tr("Status theirs");
    case Status:
        return tr("Mismatch status");
    case Run:
        return tr("Run");
    case ColumnCount:
        break;
    }
    return {};
}

} // namespace redrive
