// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/idempotency_key_model.h"

#include "models/dead_letter_model.h"

#include <QBrush>
#include <QColor>

namespace redrive {

namespace {

// Result columns of resources/sql/idempotency_key_page.sql.
enum ResultColumn {
    RScope,
    RKey,
    RState,
    RLockedBy,
    RLockedUntil,
    RJobRef,
    RRequestHash,
    RResultText,
    RErrorMessage,
    RConflictCount,
    RCreatedAt,
    RUpdatedAt,
    RExpiresAt,
    RVersion,
    RStuck
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
    case IdempotencyKeyModel::UpdatedAt:
        return RUpdatedAt;
    case IdempotencyKeyModel::Scope:
        return RScope;
    case IdempotencyKeyModel::Key:
        return RKey;
    case IdempotencyKeyModel::State:
        return RState;
    case IdempotencyKeyModel::LockedBy:
        return RLockedBy;
    case IdempotencyKeyModel::LockedUntil:
        return RLockedUntil;
    case IdempotencyKeyModel::Job:
        return RJobRef;
    case IdempotencyKeyModel::Conflicts:
        return RConflictCount;
    case IdempotencyKeyModel::RequestHash:
        return RRequestHash;
    case IdempotencyKeyModel::CreatedAt:
        return RCreatedAt;
    case IdempotencyKeyModel::ExpiresAt:
        return RExpiresAt;
    default:
        return -1;
    }
}

} // namespace

IdempotencyKeyModel::IdempotencyKeyModel(db::DatabaseSession *session, QObject *parent,
                                         int pageSize)
    : KeysetPageModel(session, db::Statement::IdempotencyKeyPage, pageSize, parent)
{
    setJsonKinds({ { QStringLiteral("locked_until"), JsonValueKind::Timestamp },
                   { QStringLiteral("result_text"), JsonValueKind::Document },
                   { QStringLiteral("conflict_count"), JsonValueKind::Integer },
                   { QStringLiteral("created_at"), JsonValueKind::Timestamp },
                   { QStringLiteral("updated_at"), JsonValueKind::Timestamp },
                   { QStringLiteral("expires_at"), JsonValueKind::Timestamp },
                   { QStringLiteral("version"), JsonValueKind::Integer },
                   { QStringLiteral("stuck"), JsonValueKind::Boolean } });
}

QStringList IdempotencyKeyModel::allStates()
{
    return { QStringLiteral("received"), QStringLiteral("processing"), QStringLiteral("done"),
             QStringLiteral("failed") };
}

void IdempotencyKeyModel::setFilter(const IdempotencyKeyFilter &filter)
{
    m_filter = filter;
    reload();
}

void IdempotencyKeyModel::appendParams(db::QueryParams &params, const db::ResultSet *last,
                                       int lastRow) const
{
    addList(params, m_filter.scopes);
    addList(params, m_filter.states);
    if (last) {
        // Exactly as the server printed them: microseconds and all.
        params.addTimestampText(last->raw(lastRow, RUpdatedAt));
        params.addText(last->text(lastRow, RScope));
        params.addText(last->text(lastRow, RKey));
    } else {
        params.addNull(db::ParamType::TimestampTz);
        params.addNull(db::ParamType::Text);
        params.addNull(db::ParamType::Text);
    }
    params.addInt(pageSize());
}

int IdempotencyKeyModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant IdempotencyKeyModel::cellData(const db::ResultSet &rows, int row, int column,
                                       int role) const
{
    const bool stuck = rows.boolean(row, RStuck).value_or(false);
    const int rc = resultColumnFor(column);
    switch (role) {
    case Qt::DisplayRole:
        switch (Column(column)) {
        case UpdatedAt:
        case LockedUntil:
        case CreatedAt:
        case ExpiresAt:
            return DeadLetterModel::formatTime(rows.timestamp(row, rc), showUtc());
        case State:
            return stuck ? tr("%1 (stuck)").arg(rows.text(row, RState)) : rows.text(row, RState);
        case Conflicts:
            return rows.integer(row, RConflictCount).value_or(0);
        case RequestHash: {
            const QString hash = rows.text(row, RRequestHash);
            return hash.left(12) + (hash.size() > 12 ? QString(QChar(0x2026)) : QString());
        }
        case Outcome:
            if (!rows.isNull(row, RErrorMessage))
                return rows.text(row, RErrorMessage).section(QLatin1Char('\n'), 0, 0);
            return rows.text(row, RResultText);
        default:
            return rows.text(row, rc);
        }
    case Qt::ToolTipRole:
        switch (Column(column)) {
        case UpdatedAt:
        case LockedUntil:
        case CreatedAt:
        case ExpiresAt:
            return DeadLetterModel::formatTime(rows.timestamp(row, rc), !showUtc());
        case Outcome:
            return rows.isNull(row, RErrorMessage) ? rows.text(row, RResultText)
                                                   : rows.text(row, RErrorMessage);
        case State:
            return stuck ? tr("Processing past its lease: the side effect may have happened.")
                         : QVariant();
        case RequestHash:
        case Key:
            return rows.text(row, rc);
        default:
            return {};
        }
    case Qt::ForegroundRole:
        if (column == State && stuck)
            return QBrush(QColor(0xb0, 0x1e, 0x16));
        return {};
    case Qt::TextAlignmentRole:
        if (column == Conflicts)
            return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case StuckRole:
        return stuck;
    default:
        return {};
    }
}

QVariant IdempotencyKeyModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return KeysetPageModel::headerData(section, orientation, role);
    switch (Column(section)) {
    case UpdatedAt:
        return tr("Updated at");
    case Scope:
        return tr("Scope");
    case Key:
        return tr("Key");
    case State:
        return tr("State");
    case LockedBy:
        return tr("Locked by");
    case LockedUntil:
        return tr("Lease until");
    case Job:
        return tr("Job");
    case Conflicts:
        return tr("Conflicts");
    case Outcome:
        return tr("Result or error");
    case RequestHash:
        return tr("Request hash");
    case CreatedAt:
        return tr("Created at");
    case ExpiresAt:
        return tr("Expires at");
    case ColumnCount:
        break;
    }
    return {};
}

} // namespace redrive
