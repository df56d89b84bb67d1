// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/result_table_model.h"

#include <QUuid>

namespace redrive {

/// Unfinished bulk actions (not every chunk applied, not abandoned), newest first, through
/// Statement::BulkActionList: what is left after a console was closed or crashed mid-bulk
/// (docs/reliability.md#bulk-actions-survive-the-console). Progress is counted by the server from
/// the chunks it applied. At most kLimit rows.
class BulkActionListModel : public ResultTableModel
{
    Q_OBJECT
public:
    enum Column { Action, Progress, Applied, Owner, Running, Reason, Created, LastChunk };
    static constexpr int kLimit = 200;

    /// `session` must outlive the model. Nothing loads until reload().
    explicit BulkActionListModel(db::DatabaseSession *session, QObject *parent = nullptr);

    /// Only the caller's own bulks (true, as offered on start) or every operator's (false);
    /// takes effect at the next reload().
    void setMineOnly(bool mineOnly) { m_mineOnly = mineOnly; }
    bool mineOnly() const { return m_mineOnly; }
    /// Asks the server again.
    void reload();

    /// The bulk id of `row`.
    QUuid bulkId(int row) const;
    /// Whether `row` belongs to the caller (only its owner resumes it).
    bool isMine(int row) const;
    /// Whether a session is running `row` now.
    bool isRunning(int row) const;

private:
    bool m_mineOnly = true;
};

} // namespace redrive
