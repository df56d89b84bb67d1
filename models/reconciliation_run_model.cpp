// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/reconciliation_run_model.h"

#include <QBrush>
#include <QColor>

namespace redrive {

ReconciliationRunModel::ReconciliationRunModel(db::DatabaseSession *session, QObject *parent)
    : ResultTableModel(
        session,
        { { QStringLiteral("id"), tr("Run"), ResultColumn::Format::Integer },
          { QStringLiteral("started_at"), tr("Started at"), ResultColumn::Format::Time },
          { QStringLiteral("provider"), tr("Provider") },
          { QStringLiteral("status"), tr("Status") },
          { QStringLiteral("checked_count"), tr("Checked"), ResultColumn::Format::Integer },
          { QStringLiteral("mismatch_count"), tr("Mismatches"), ResultColumn::Format::Integer },
          { QStringLiteral("finished_at"), tr("Finished at"), ResultColumn::Format::Time },
          { QStringLiteral("error_message"), tr("Error"), ResultColumn::Format::FirstLine } },
        parent)
{
    setJsonKinds({ { QStringLiteral("id"), JsonValueKind::Integer },
                   { QStringLiteral("started_at"), JsonValueKind::Timestamp },
                   { QStringLiteral("finished_at"), JsonValueKind::Timestamp },
                   { QStringLiteral("checked_count"), JsonValueKind::Integer },
                   { QStringLiteral("mismatch_count"), JsonValueKind::Integer } });
}

void ReconciliationRunModel::reload()
{
    load(db::Statement::ReconciliationRuns, db::QueryParams().addInt(kLimit));
}

qint64 ReconciliationRunModel::runIdAt(int row) const
{
    return text(row, QStringLiteral("id")).toLongLong();
}

int ReconciliationRunModel::rowOfRun(qint64 runId) const
{
    for (int row = 0; row < rowCount(); ++row) {
        if (runIdAt(row) == runId)
            return row;
    }
    return -1;
}

QVariant ReconciliationRunModel::data(const QModelIndex &index, int role) const
{
    if (role == Qt::ForegroundRole && index.isValid() && index.column() == Status) {
        const QString status = text(index.row(), QStringLiteral("status"));
        if (status == QLatin1String("failed"))
            return QBrush(QColor(0xb0, 0x1e, 0x16));
        return {};
    }
    return ResultTableModel::data(index, role);
}

} // namespace redrive
