// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/keyset_page_model.h"

#include <QStringList>

namespace redrive {

/// Which idempotency keys the "All keys" list shows; empty lists mean "any".
struct IdempotencyKeyFilter
{
    QStringList scopes; ///< e.g. charge_card; exact matches
    QStringList states; ///< received, processing, done, failed
    /// Keys containing this text, taken literally (no wildcards; case-sensitive); empty: any.
    QString keyContains;

    bool operator==(const IdempotencyKeyFilter &) const = default;
};

/// Every idempotency key record (docs/domain.md#idempotency-key-record), most recently changed
/// first, keyset-paginated over (updated_at, scope, key) through Statement::IdempotencyKeyPage. The
/// keyset values go back to the server exactly as it printed them (updated_at keeps its
/// microseconds), so paging never skips or repeats a key that shares a timestamp with its
/// neighbour.
class IdempotencyKeyModel : public KeysetPageModel
{
    Q_OBJECT
public:
    enum Column {
        UpdatedAt,
        Scope,
        Key,
        State,
        LockedBy,
        LockedUntil,
        Job,
        Conflicts,
        Outcome,
        RequestHash,
        CreatedAt,
        ExpiresAt,
    };
    enum Role {
        StuckRole = Qt::UserRole + 1, ///< bool: processing past its lease
    };
    static constexpr int kPageSize = 200;

    /// `session` must outlive the model. Nothing loads until setFilter() or reload().
    explicit IdempotencyKeyModel(db::DatabaseSession *session, QObject *parent = nullptr,
                                 int pageSize = kPageSize);

    /// Replaces the filter and reloads from the first page.
    void setFilter(const IdempotencyKeyFilter &filter);
    IdempotencyKeyFilter filter() const { return m_filter; }
    /// The states a key can be in, in lifecycle order.
    static QStringList allStates();

protected:
    void appendFilterParams(db::QueryParams &params) const override;

private:
    IdempotencyKeyFilter m_filter;
};

} // namespace redrive
