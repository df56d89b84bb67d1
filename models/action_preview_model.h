// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/bulk_action_runner.h"
#include "models/result_table_model.h"

#include <QList>
#include <QMap>

namespace redrive {

/// The preview of an operator action on dead letters (docs/domain.md: the bulk, requeue and
/// ordering-key rules): the exact targets the confirmation dialog shows, each with the version the
/// operator confirms, its queue, failure group, status and safe-to-retry verdict (Statement::
/// ActionPreview, computed by the read contract's retry_verdict()). The list loaded here is the
/// one frozen for the action: targets() never re-runs a query.
class ActionPreviewModel : public ResultTableModel
{
    Q_OBJECT
public:
    enum Column { Id, Status, Verdict, Queue, Kind, ErrorCode, ClaimedBy, Version, Reasons };

    /// `session` must outlive the model. Nothing loads until loadIds() or loadFailureGroup().
    explicit ActionPreviewModel(db::DatabaseSession *session, QObject *parent = nullptr);

    /// Previews exactly these dead letters (whatever their status).
    void loadIds(const QList<qint64> &ids);
    /// Previews the open dead letters of the failure group `fingerprint`.
    void loadFailureGroup(const QString &fingerprint);

    /// The previewed targets with the versions shown, in id order.
    QList<BulkActionRunner::Target> targets() const;
    /// Targets per queue, and per failure group (fingerprint → count).
    QMap<QString, int> countByQueue() const;
    QMap<QString, int> countByFailureGroup() const;
    /// Targets per verdict: "block", "warn", "ok".
    QMap<QString, int> countByVerdict() const;
    /// Targets whose status is not open (they will be reported as conflicts, not applied).
    int countNotOpen() const;

    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;

private:
    QMap<QString, int> countBy(const QString &column) const;
};

} // namespace redrive
