// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/attempt_history_model.h"

#include "models/db/database_session.h"

#include <QBrush>
#include <QColor>
#include <QFont>

namespace redrive {

namespace {

using F = ResultColumn::Format;

bool isMarker(const ResultCell &cell)
{
    return cell.text(QStringLiteral("row_kind")) == QLatin1String("requeue");
}

QString markerDescription(const QString &by, const QString &reset, const QString &actionId)
{
    using M = AttemptHistoryModel;
    const QString counter = reset == QLatin1String("t") ? M::tr("attempt counter reset")
        : reset == QLatin1String("f")                   ? M::tr("attempt counter kept")
                                                        : M::tr("attempt counter not recorded");
    return M::tr("Requeued by %1 · %2 · action %3").arg(by, counter, actionId);
}

// A marker row reads as one line across the table, in bold on a tint.
std::optional<QVariant> markerLook(const ResultCell &cell, int role)
{
    if (!isMarker(cell))
        return std::nullopt;
    switch (role) {
    case Qt::BackgroundRole:
        return QBrush(QColor(0xe3, 0xee, 0xfa));
    case Qt::FontRole: {
        QFont font;
        font.setBold(true);
        return font;
    }
    default:
        return std::nullopt;
    }
}

std::optional<QVariant> attemptHook(const ResultCell &cell, int role)
{
    if (isMarker(cell) && role == Qt::DisplayRole)
        return QString(QChar(0x21bb)); // ↻
    return markerLook(cell, role);
}

std::optional<QVariant> outcomeHook(const ResultCell &cell, int role)
{
    if (isMarker(cell) && role == Qt::DisplayRole)
        return AttemptHistoryModel::tr("requeued");
    return markerLook(cell, role);
}

std::optional<QVariant> messageHook(const ResultCell &cell, int role)
{
    if (isMarker(cell) && (role == Qt::DisplayRole || role == Qt::ToolTipRole))
        return markerDescription(cell.text(QStringLiteral("requeued_by")),
                                 cell.text(QStringLiteral("reset_attempts")),
                                 cell.text(QStringLiteral("action_id")));
    return markerLook(cell, role);
}

ResultColumnSet columns()
{
    using M = AttemptHistoryModel;
    return ResultColumnSet({
        { QStringLiteral("round"), M::tr("Round"), F::Integer, markerLook },
        { QStringLiteral("attempt_in_round"), M::tr("Attempt"), F::Integer, attemptHook },
        { QStringLiteral("attempt_no"), M::tr("Job attempt"), F::Integer, markerLook },
        { QStringLiteral("at"), M::tr("Started"), F::Time, markerLook },
        { QStringLiteral("duration_ms"), M::tr("Duration (ms)"), F::Integer, markerLook },
        { QStringLiteral("outcome"), M::tr("Outcome"), F::Text, outcomeHook },
        { QStringLiteral("error_class"), M::tr("Error class"), F::Text, markerLook },
        { QStringLiteral("error_code"), M::tr("Code"), F::Text, markerLook },
        { QStringLiteral("message"), M::tr("Message"), F::OneLine, messageHook },
        { QStringLiteral("worker_id"), M::tr("Worker"), F::Text, markerLook },
        { QStringLiteral("backoff_ms"), M::tr("Backoff after"), F::DurationMs, markerLook },
    });
}

} // namespace

AttemptHistoryModel::AttemptHistoryModel(db::DatabaseSession *session, QObject *parent,
                                         int pageSize)
    : KeysetPageModel(session, db::Statement::AttemptHistoryPage,
                      { { QStringLiteral("at"), db::ParamType::TimestampTz },
                        { QStringLiteral("kind_order"), db::ParamType::Int },
                        { QStringLiteral("id"), db::ParamType::BigInt } },
                      columns(), pageSize, parent)
{
    setCount({ db::Statement::AttemptHistoryCount, std::nullopt, kCountCap });
    // An attempt is its id with its start (the attempt table's key; the id alone may repeat).
    setWholeValues({ db::Statement::AttemptWholeText,
                     { QStringLiteral("id"), QStringLiteral("at") },
                     { QStringLiteral("message"), QStringLiteral("stack_trace") } });
}

AttemptHistoryModel::AttemptText AttemptHistoryModel::pageText(int row) const
{
    return { text(row, QStringLiteral("message")), text(row, QStringLiteral("stack_trace")),
             cutBytes(row, QStringLiteral("message")),
             cutBytes(row, QStringLiteral("stack_trace")) };
}

void AttemptHistoryModel::readText(
    int row, QObject *context, std::function<void(const db::DbExpected<AttemptText> &)> done) const
{
    session()->execute(
        db::statementSql(db::Statement::AttemptText),
        db::QueryParams()
            .addBigInt(bigInt(row, QStringLiteral("id")))
            .addText(text(row, QStringLiteral("at"))),
        context, [done = std::move(done)](const db::DbExpected<db::ResultSet> &rows) {
            if (!rows) {
                done(rows.error());
                return;
            }
            if (rows->rowCount() == 0) {
                done(db::DbError(db::ErrorKind::Other,
                                 AttemptHistoryModel::tr("The attempt is no longer readable.")));
                return;
            }
            done(AttemptText {
                rows->text(0, QStringLiteral("message")),
                rows->text(0, QStringLiteral("stack_trace")),
                rows->bigInt(0, QStringLiteral("message_cut_bytes")).value_or(0),
                rows->bigInt(0, QStringLiteral("stack_trace_cut_bytes")).value_or(0) });
        });
}

void AttemptHistoryModel::setDeadLetter(qint64 deadLetterId)
{
    m_deadLetterId = deadLetterId;
    reload();
}

QDateTime AttemptHistoryModel::at(int row) const
{
    int offset = 0;
    const db::ResultSet *page = pageFor(row, &offset);
    return page ? page->timestamp(offset, page->columnIndex(QStringLiteral("at"))) : QDateTime();
}

bool AttemptHistoryModel::isRequeueMarker(int row) const
{
    return text(row, QStringLiteral("row_kind")) == QLatin1String("requeue");
}

QString AttemptHistoryModel::markerText(int row) const
{
    if (!isRequeueMarker(row))
        return {};
    return markerDescription(text(row, QStringLiteral("requeued_by")),
                             text(row, QStringLiteral("reset_attempts")),
                             text(row, QStringLiteral("action_id")));
}

void AttemptHistoryModel::appendFilterParams(db::QueryParams &params) const
{
    params.addBigInt(m_deadLetterId);
}

} // namespace redrive
