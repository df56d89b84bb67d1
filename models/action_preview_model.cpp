// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/action_preview_model.h"

#include "models/db/query_params.h"
#include "models/db/sql_statement.h"
#include "models/display_format.h"

#include <QBrush>
#include <QColor>

namespace redrive {

namespace {

ResultColumnSet previewColumns()
{
    using F = ResultColumn::Format;
    return ResultColumnSet({
        { QStringLiteral("id"), ActionPreviewModel::tr("Id"), F::Integer },
        { QStringLiteral("status"), ActionPreviewModel::tr("Status"), F::Text },
        { QStringLiteral("verdict"), ActionPreviewModel::tr("Safe to retry?"), F::Text },
        { QStringLiteral("queue"), ActionPreviewModel::tr("Queue"), F::Text },
        { QStringLiteral("kind"), ActionPreviewModel::tr("Kind"), F::Text },
        { QStringLiteral("error_code"), ActionPreviewModel::tr("Error code"), F::Text },
        { QStringLiteral("claimed_by"), ActionPreviewModel::tr("Claimed by"), F::Text },
        { QStringLiteral("version"), ActionPreviewModel::tr("Version"), F::Integer },
        { QStringLiteral("verdict_reasons"), ActionPreviewModel::tr("Why"), F::OneLine },
    });
}

} // namespace

ActionPreviewModel::ActionPreviewModel(db::DatabaseSession *session, QObject *parent)
    : ResultTableModel(session, previewColumns(), parent)
{ }

void ActionPreviewModel::loadIds(const QList<qint64> &ids)
{
    db::QueryParams params;
    params.addBigIntArray(ids).addNull(db::ParamType::Text);
    load(db::Statement::ActionPreview, params);
}

void ActionPreviewModel::loadFailureGroup(const QString &fingerprint)
{
    db::QueryParams params;
    params.addNull(db::ParamType::BigIntArray).addText(fingerprint);
    load(db::Statement::ActionPreview, params);
}

QList<BulkActionRunner::Target> ActionPreviewModel::targets() const
{
    QList<BulkActionRunner::Target> out;
    const db::ResultSet &rows = result();
    out.reserve(rows.rowCount());
    for (int r = 0; r < rows.rowCount(); ++r)
        out.append({ rows.bigInt(r, QStringLiteral("id")).value_or(0),
                     rows.integer(r, QStringLiteral("version")).value_or(0) });
    return out;
}

QMap<QString, int> ActionPreviewModel::countBy(const QString &column) const
{
    QMap<QString, int> out;
    for (int r = 0; r < rowCount(); ++r)
        ++out[text(r, column)];
    return out;
}

QMap<QString, int> ActionPreviewModel::countByQueue() const
{
    return countBy(QStringLiteral("queue"));
}

QMap<QString, int> ActionPreviewModel::countByFailureGroup() const
{
    return countBy(QStringLiteral("fingerprint"));
}

QMap<QString, int> ActionPreviewModel::countByVerdict() const
{
    return countBy(QStringLiteral("verdict"));
}

int ActionPreviewModel::countNotOpen() const
{
    int n = 0;
    for (int r = 0; r < rowCount(); ++r)
        n += text(r, QStringLiteral("status")) != QLatin1String("open");
    return n;
}

QVariant ActionPreviewModel::data(const QModelIndex &index, int role) const
{
    if (index.isValid() && role == Qt::ForegroundRole) {
        if (index.column() == Verdict) {
            const QString verdict = text(index.row(), QStringLiteral("verdict"));
            if (verdict == QLatin1String("block"))
                return QBrush(QColor(display::rgb(display::Tone::Error)));
            if (verdict == QLatin1String("warn"))
                return QBrush(QColor(display::rgb(display::Tone::Warning)));
            return QBrush(QColor(display::rgb(display::Tone::Ok)));
        }
        if (index.column() == Status
            && text(index.row(), QStringLiteral("status")) != QLatin1String("open"))
            return QBrush(QColor(display::rgb(display::Tone::Error)));
    }
    if (index.isValid() && role == Qt::DisplayRole && index.column() == Verdict) {
        const QString verdict = text(index.row(), QStringLiteral("verdict"));
        if (verdict == QLatin1String("block"))
            return tr("no — blocked");
        if (verdict == QLatin1String("warn"))
            return tr("check first");
        return tr("yes");
    }
    return ResultTableModel::data(index, role);
}

} // namespace redrive
