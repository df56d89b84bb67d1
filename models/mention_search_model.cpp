// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/mention_search_model.h"

#include "models/display_format.h"

namespace redrive {

using F = ResultColumn::Format;

namespace {

MentionSearchModel::Kind kindFromName(const QString &name)
{
    using K = MentionSearchModel::Kind;
    for (K kind : { K::DeadLetter, K::Mismatch, K::Compensation, K::AuditEntry })
        if (MentionSearchModel::kindName(kind) == name)
            return kind;
    return K::Unknown;
}

// The kind column as a person reads it.
std::optional<QVariant> kindHook(const ResultCell &cell, int role)
{
    if (role != Qt::DisplayRole)
        return std::nullopt;
    QString label = MentionSearchModel::kindLabel(kindFromName(cell.text()), 1);
    if (!label.isEmpty())
        label[0] = label[0].toUpper();
    return label;
}

} // namespace

MentionSearchModel::MentionSearchModel(db::DatabaseSession *session, QObject *parent)
    : ResultTableModel(
        session,
        ResultColumnSet({
            { QStringLiteral("kind"), tr("Kind"), F::Text, kindHook },
            { QStringLiteral("id"), tr("Id"), F::Integer },
            { QStringLiteral("at"), tr("When"), F::Time },
            { QStringLiteral("status"), tr("Status") },
            { QStringLiteral("payment_ref"), tr("Payment"), ResultColumn::Format::Identifier },
            { QStringLiteral("order_ref"), tr("Order"), ResultColumn::Format::Identifier },
            { QStringLiteral("amount_minor"), tr("Amount"), F::Integer,
              ResultColumn::moneyIn(QStringLiteral("currency")) },
            { QStringLiteral("summary"), tr("What"), F::OneLine },
        }),
        parent)
{ }

bool MentionSearchModel::search(const QString &term)
{
    const QString trimmed = term.trimmed();
    if (trimmed.size() < kMinimumLength)
        return false;
    m_term = trimmed;
    load(db::Statement::FindMentions, db::QueryParams().addText(trimmed).addInt(kRowsPerKind));
    return true;
}

MentionSearchModel::Kind MentionSearchModel::kindAt(int row) const
{
    return kindFromName(text(row, QStringLiteral("kind")));
}

QDateTime MentionSearchModel::atOf(int row) const
{
    if (row < 0 || row >= rowCount())
        return {};
    return typedValue(result(), row, result().columnIndex(QStringLiteral("at")),
                      JsonValueKind::Timestamp)
        .toDateTime();
}

qint64 MentionSearchModel::totalOf(Kind kind) const
{
    const int row = rowOf(QStringLiteral("kind"), kindName(kind));
    return row < 0 ? 0 : text(row, QStringLiteral("kind_total")).toLongLong();
}

QString MentionSearchModel::countsText() const
{
    QStringList parts;
    for (Kind kind : { Kind::DeadLetter, Kind::Mismatch, Kind::Compensation, Kind::AuditEntry }) {
        const qint64 total = totalOf(kind);
        parts << (total > kMaxCounted
                      ? tr("more than %1 %2").arg(kMaxCounted).arg(kindLabel(kind, total))
                      : tr("%1 %2").arg(total).arg(kindLabel(kind, total)));
    }
    return parts.join(QStringLiteral(" · "));
}

QString MentionSearchModel::kindName(Kind kind)
{
    switch (kind) {
    case Kind::DeadLetter:
        return QStringLiteral("dead_letter");
    case Kind::Mismatch:
        return QStringLiteral("mismatch");
    case Kind::Compensation:
        return QStringLiteral("compensation");
    case Kind::AuditEntry:
        return QStringLiteral("audit_entry");
    case Kind::Unknown:
        break;
    }
    return {};
}

QString MentionSearchModel::kindLabel(Kind kind, qint64 count)
{
    const bool one = count == 1;
    switch (kind) {
    case Kind::DeadLetter:
        return one ? tr("dead letter") : tr("dead letters");
    case Kind::Mismatch:
        return one ? tr("mismatch") : tr("mismatches");
    case Kind::Compensation:
        return one ? tr("compensation") : tr("compensations");
    case Kind::AuditEntry:
        return one ? tr("audit entry") : tr("audit entries");
    case Kind::Unknown:
        break;
    }
    return tr("other");
}

} // namespace redrive
