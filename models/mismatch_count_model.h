// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/result_table_model.h"

#include <QSet>
#include <QStringList>

namespace redrive {

/// Reconciliation mismatches per kind, all and still open (Statement::MismatchCounts). Each
/// kind is checkable: the checked kinds are the mismatch list's kind filter (none checked: all
/// kinds). Checks survive reload().
class MismatchCountModel : public ResultTableModel
{
    Q_OBJECT
public:
    enum Column { Kind, Mismatches, Open };

    /// `session` must outlive the model. Nothing loads until reload().
    explicit MismatchCountModel(db::DatabaseSession *session, QObject *parent = nullptr);

    /// Asks the server again.
    void reload();
    /// Mismatches of `kind` (0 when there are none), and those still open.
    qint64 count(const QString &kind) const;
    qint64 openCount(const QString &kind) const;
    /// The kind shown in `row`.
    QString kindAt(int row) const { return text(row, QStringLiteral("kind")); }
    /// The checked kinds, in display order (empty: no kind filter).
    QStringList checkedKinds() const;
    /// Checks exactly `kinds`; emits checkedKindsChanged() when that changes anything.
    void setCheckedKinds(const QStringList &kinds);

    Qt::ItemFlags flags(const QModelIndex &index) const override;
    QVariant data(const QModelIndex &index, int role = Qt::DisplayRole) const override;
    bool setData(const QModelIndex &index, const QVariant &value, int role = Qt::EditRole) override;

Q_SIGNALS:
    void checkedKindsChanged(const QStringList &kinds);

private:
    qint64 valueFor(const QString &kind, const QString &column) const;
    QSet<QString> m_checked;
};

} // namespace redrive
