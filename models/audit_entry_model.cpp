// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/audit_entry_model.h"

#include "models/db/database_session.h"
#include "models/dead_letter_model.h"

#include <QJsonDocument>
#include <QJsonObject>

namespace redrive {

namespace {

// Result columns of resources/sql/audit_entry_page.sql.
enum ResultColumn {
    RId,
    RAt,
    RDbUser,
    RClientAddr,
    ROsUser,
    RAction,
    RTargetCount,
    RTargetSummary,
    RReason,
    RTicket,
    RActionId,
    ROutcome,
    RHash
};

} // namespace

AuditEntryModel::AuditEntryModel(db::DatabaseSession *session, QObject *parent, int pageSize)
    : KeysetPageModel(session, db::Statement::AuditEntryPage, pageSize, parent)
    , m_session(session)
{
    setJsonKinds({ { QStringLiteral("id"), JsonValueKind::Integer },
                   { QStringLiteral("at"), JsonValueKind::Timestamp },
                   { QStringLiteral("target_count"), JsonValueKind::Integer },
                   { QStringLiteral("outcome_text"), JsonValueKind::Document } });
}

void AuditEntryModel::setFilter(const AuditFilter &filter)
{
    m_filter = filter;
    refresh();
}

void AuditEntryModel::refresh()
{
    reload();
    count();
}

void AuditEntryModel::count()
{
    const quint64 generation = ++m_countGeneration;
    if (m_total != -1) {
        m_total = -1;
        Q_EMIT totalChanged(m_total);
    }
    db::QueryParams params;
    m_filter.appendParams(params);
    params.addBigInt(kCountCap);
    m_session->execute(db::statementSql(db::Statement::AuditEntryCount), params, this,
                       [this, generation](const db::DbExpected<db::ResultSet> &rows) {
                           if (generation != m_countGeneration || !rows || rows->rowCount() < 1)
                               return; // stale, or failed: the page request reports errors
                           m_total = rows->bigInt(0, 0).value_or(-1);
                           Q_EMIT totalChanged(m_total);
                       });
}

qint64 AuditEntryModel::idAt(int row) const
{
    int offset = 0;
    const db::ResultSet *page = pageFor(row, &offset);
    return page ? page->bigInt(offset, RId).value_or(0) : 0;
}

int AuditEntryModel::rowOfId(qint64 id) const
{
    for (int row = 0; row < rowCount(); ++row) {
        if (idAt(row) == id)
            return row;
    }
    return -1;
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

void AuditEntryModel::appendParams(db::QueryParams &params, const db::ResultSet *last,
                                   int lastRow) const
{
    m_filter.appendParams(params);
    if (last)
        params.addBigInt(last->bigInt(lastRow, RId).value_or(0));
    else
        params.addNull(db::ParamType::BigInt);
    params.addInt(pageSize());
}

int AuditEntryModel::columnCount(const QModelIndex &parent) const
{
    return parent.isValid() ? 0 : ColumnCount;
}

QVariant AuditEntryModel::cellData(const db::ResultSet &rows, int row, int column, int role) const
{
    switch (role) {
    case Qt::DisplayRole:
        switch (Column(column)) {
        case Id:
            return rows.bigInt(row, RId).value_or(0);
        case At:
            return DeadLetterModel::formatTime(rows.timestamp(row, RAt), showUtc());
        case Actor:
            return rows.text(row, RDbUser);
        case OsUser:
            return rows.text(row, ROsUser);
        case Action:
            return rows.text(row, RAction);
        case Targets: {
            const qint64 n = rows.bigInt(row, RTargetCount).value_or(0);
            if (n == 0)
                return QString(QChar(0x2014));
            const QString summary = rows.text(row, RTargetSummary);
            return n <= 3 ? summary : tr("%1: %2, …").arg(n).arg(summary);
        }
        case Reason:
            return rows.text(row, RReason).section(QLatin1Char('\n'), 0, 0);
        case Ticket:
            return rows.text(row, RTicket);
        case Outcome:
            return describeOutcome(rows.text(row, ROutcome));
        case Hash: {
            const QString hash = rows.text(row, RHash);
            return hash.size() > 12 ? hash.left(12) + QChar(0x2026) : hash;
        }
        case ColumnCount:
            break;
        }
        return {};
    case Qt::ToolTipRole:
        switch (Column(column)) {
        case At:
            return DeadLetterModel::formatTime(rows.timestamp(row, RAt), !showUtc());
        case Actor:
            return rows.isNull(row, RClientAddr)
                ? tr("%1 (local connection)").arg(rows.text(row, RDbUser))
                : tr("%1 from %2").arg(rows.text(row, RDbUser), rows.text(row, RClientAddr));
        case Reason:
            return rows.text(row, RReason);
        case Targets:
            return rows.text(row, RTargetSummary);
        case Outcome:
            return rows.text(row, ROutcome);
        case Hash:
            return rows.text(row, RHash);
        default:
            return {};
        }
    case Qt::TextAlignmentRole:
        if (column == Id)
            return QVariant::fromValue(Qt::AlignRight | Qt::AlignVCenter);
        return {};
    case IdRole:
        return rows.bigInt(row, RId).value_or(0);
    case ActionRole:
        return rows.text(row, RAction);
    case ActorRole:
        return rows.text(row, RDbUser);
    default:
        return {};
    }
}

QVariant AuditEntryModel::headerData(int section, Qt::Orientation orientation, int role) const
{
    if (orientation == Qt::Horizontal && role == Qt::ToolTipRole && section == OsUser)
        return tr("The operating-system user name the console reported. The client sets it and "
                  "the server cannot check it; Actor is the login the server authenticated.");
    if (orientation != Qt::Horizontal || role != Qt::DisplayRole)
        return KeysetPageModel::headerData(section, orientation, role);
    switch (Column(section)) {
    case Id:
        return tr("Entry");
    case At:
        return tr("At");
    case Actor:
        return tr("Actor");
    case OsUser:
        // The console sends it; the server cannot check it (Actor is the server's login).
        return tr("OS user (reported by client)");
    case Action:
        return tr("Action");
    case Targets:
        return tr("Targets");
    case Reason:
        return tr("Reason");
    case Ticket:
        return tr("Ticket");
    case Outcome:
        return tr("Outcome");
    case Hash:
        return tr("Hash");
    case ColumnCount:
        break;
    }
    return {};
}

} // namespace redrive
