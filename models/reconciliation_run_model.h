// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/result_table_model.h"

namespace redrive {

/// The latest reconciliation runs (docs/domain.md#reconciliation-mismatch), newest first, through
/// Statement::ReconciliationRuns. At most kLimit rows.
class ReconciliationRunModel : public ResultTableModel
{
    Q_OBJECT
public:
    enum Column { Run, StartedAt, Provider, Status, Checked, Mismatches, FinishedAt, Error };
    static constexpr int kLimit = 200;

    /// `session` must outlive the model. Nothing loads until reload().
    explicit ReconciliationRunModel(db::DatabaseSession *session, QObject *parent = nullptr);

    /// Asks the server again.
    void reload();
    /// The run id shown in `row`, or 0.
    qint64 runIdAt(int row) const { return text(row, QStringLiteral("id")).toLongLong(); }
    /// The row showing run `runId`, or -1.
    int rowOfRun(qint64 runId) const { return rowOf(QStringLiteral("id"), QString::number(runId)); }
};

} // namespace redrive
