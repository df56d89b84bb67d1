// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/audit_filter.h"
#include "models/keyset_page_model.h"

namespace redrive {

/// Audit entries for auditors, newest first, keyset-paginated over the
/// entry id (id order is chain order) through Statement::AuditEntryPage, filtered in SQL by an
/// AuditFilter. Each setFilter()/reload() also counts the matching entries (up to kCountCap)
/// through Statement::AuditEntryCount (total(), totalChanged()), so the view can say "N of M
/// loaded". Targets show as a
/// count with the first few; the full entry (targets, before, after) is loaded on demand by the
/// details pane, since a bulk chunk's entry can list a thousand targets.
class AuditEntryModel : public KeysetPageModel
{
    Q_OBJECT
public:
    enum Column {
        Id,
        At,
        Actor,
        OsUser,
        Action,
        Targets,
        Reason,
        Ticket,
        Outcome,
        Hash,
    };
    enum Role {
        IdRole = Qt::UserRole + 1, ///< qint64 entry id
        ActionRole, ///< QString action
        ActorRole, ///< QString session user
    };
    static constexpr int kPageSize = 200;
    static constexpr qint64 kCountCap = 1000000;

    /// `session` must outlive the model. Nothing loads until setFilter() or reload().
    explicit AuditEntryModel(db::DatabaseSession *session, QObject *parent = nullptr,
                             int pageSize = kPageSize);

    /// Replaces the filter, reloads from the first page and counts again.
    void setFilter(const AuditFilter &filter);
    const AuditFilter &filter() const { return m_filter; }
    /// Loads the first page again and counts again, with the same filter.
    void refresh() { reload(); }
    /// True when the count stopped at kCountCap (total() is then kCountCap).
    bool totalIsCapped() const { return total() >= 0 && !totalIsExact(); }
    /// The entry id in `row`, or 0.
    qint64 idAt(int row) const { return bigInt(row, QStringLiteral("id")); }
    /// The row showing entry `id` among the loaded rows, or -1.
    int rowOfId(qint64 id) const { return rowOf(QStringLiteral("id"), id); }

    /// "3 of 3 applied", "497 of 500 applied · 3 conflicts" from an outcome's JSON text.
    static QString describeOutcome(const QString &outcomeJson);

    /// The OS user column's header explains where the name comes from (ToolTipRole).
    QVariant headerData(int section, Qt::Orientation orientation,
                        int role = Qt::DisplayRole) const override;

protected:
    void appendFilterParams(db::QueryParams &params) const override;

private:
    AuditFilter m_filter;
};

} // namespace redrive
