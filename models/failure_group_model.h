// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/db_error.h"
#include "models/db/result_set.h"
#include "models/dead_letter_filter.h"

#include <QAbstractTableModel>

namespace redrive {

namespace db {
class DatabaseSession;
}

/// The failure-groups panel: one row per fingerprint among the dead letters that match
/// the current filter (ignoring its failure-group condition), largest first, with count, open
/// count, first and last seen and a sample error. Counted in SQL; holds one ResultSet.
class FailureGroupModel : public QAbstractTableModel
{
    Q_OBJECT
public:
    enum Column {
        Count,
        Open,
        ErrorCode,
        Kind,
        ErrorClass,
        Sample,
        FirstSeen,
        LastSeen,
        ColumnCount
    };
    enum Role { FingerprintRole = Qt::UserRole + 1 };
    static constexpr int kMaxGroups = 500;

    explicit FailureGroupModel(db::DatabaseSession *session, QObject *parent = nullptr);

    /// Reloads the groups for `filter` (its fingerprint is ignored).
    void setFilter(const DeadLetterFilter &filter);
    void reload();
    void setShowUtc(bool utc);
    /// The row of `fingerprint`, or -1.
    int rowOf(const QString &fingerprint) const;
    QString fingerprintAt(int row) const;

    int rowCount(const QModelIndex &parent = {}) const override;
    int columnCount(const QModelIndex &parent = {}) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

Q_SIGNALS:
    void loaded();
    void failed(const redrive::db::DbError &error);

private:
    db::DatabaseSession *m_session;
    DeadLetterFilter m_filter;
    db::ResultSet m_rows;
    quint64 m_generation = 0;
    bool m_showUtc = false;
};

} // namespace redrive
