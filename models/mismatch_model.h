// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/keyset_page_model.h"

#include <QStringList>

namespace redrive {

/// Which reconciliation mismatches the list shows; empty lists and runId 0 mean "any".
struct MismatchFilter
{
    QStringList kinds; ///< missing_internal, missing_external, amount_mismatch, ...
    QStringList statuses; ///< open, resolved, compensation_pending, compensated
    qint64 runId = 0; ///< one reconciliation run, or 0 for all

    bool operator==(const MismatchFilter &) const = default;
};

/// Reconciliation mismatches (docs/domain.md#reconciliation-mismatch), newest first,
/// keyset-paginated over (detected_at, id) through Statement::MismatchPage. Our side stands next to
/// the provider's, column by column; a pair whose two cells differ is highlighted (DiffersRole,
/// BackgroundRole). Amounts are in minor units ("cents") and shown as money in their own side's
/// currency, e.g. "12.34 USD" (display::money).
class MismatchModel : public KeysetPageModel
{
    Q_OBJECT
public:
    enum Column {
        DetectedAt,
        Run,
        Kind,
        Payment,
        Order,
        AmountOurs,
        AmountTheirs,
        CurrencyOurs,
        CurrencyTheirs,
        StatusOurs,
        StatusTheirs,
        Status,
    };
    enum Role {
        IdRole = Qt::UserRole + 1, ///< qint64 mismatch id
        RunIdRole, ///< qint64
        KindRole, ///< QString
        VersionRole, ///< int, for optimistic locking in actions
        InternalRecordRole, ///< QString: our record as JSON text (may be null)
        ExternalRecordRole, ///< QString: the provider's record as JSON text (may be null)
        DiffersRole, ///< bool: this cell of an ours|theirs pair differs from its partner
    };
    static constexpr int kPageSize = 200;

    /// `session` must outlive the model. Nothing loads until setFilter() or reload().
    explicit MismatchModel(db::DatabaseSession *session, QObject *parent = nullptr,
                           int pageSize = kPageSize);

    /// Replaces the filter and reloads from the first page.
    void setFilter(const MismatchFilter &filter);
    MismatchFilter filter() const { return m_filter; }
    qint64 idAt(int row) const { return bigInt(row, QStringLiteral("id")); }
    /// Every mismatch kind and status, in the schema's order.
    static QStringList allKinds();
    static QStringList allStatuses();

protected:
    void appendFilterParams(db::QueryParams &params) const override;

private:
    MismatchFilter m_filter;
};

} // namespace redrive
