// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QDateTime>
#include <QJsonObject>
#include <QString>
#include <QStringList>

namespace redrive {

namespace db {
class QueryParams;
}

/// Which audit entries the auditors' view lists and an export writes:
/// an actor (the login role that acted, audit_log.db_user), an action, a time range on the
/// server's timestamp, and a target. Empty fields and invalid times mean "any". Binds the
/// parameters $1..$7 of resources/sql/fragments/audit_entry_filter.sql.
struct AuditFilter
{
    QString actor; ///< session user, exact
    QString action; ///< requeue, resolve, compensate_request, ... exact
    QDateTime from; ///< entries at or after this instant (invalid: open)
    QDateTime until; ///< entries before this instant (invalid: open)
    /// Microseconds past `from`'s (`until`'s) millisecond, 0–999: a bound typed to the
    /// microsecond, as entries' `at` is kept (QDateTime holds milliseconds).
    int fromSubMs = 0;
    int untilSubMs = 0;
    QString targetType; ///< dead_letter, mismatch, compensation, idempotency_key (empty: any)
    QString targetId; ///< a target's id as the audit entry names it (empty: any)

    bool operator==(const AuditFilter &) const = default;

    /// True when nothing narrows the list.
    bool isEmpty() const;
    /// Sets targetType and targetId from what an operator typed: "42" (id 42 of any type),
    /// "dead_letter:42" or "dead_letter 42" (a known type, then the id), or any other text as an
    /// id ("charge_card:key-1", an idempotency key's scope:key). Blank clears the target.
    void setTargetText(const QString &text);
    /// Sets `from` (`until`) and its microseconds from ISO 8601 text: a date-time with "Z" or
    /// an offset up to ±14:00 ("2026-03-01T10:00:00.123456Z", "…+02:00", "…+0200", "…+02"),
    /// one without (local time; one a daylight-saving change skips or repeats is refused), a
    /// space or a lower-case "t" for the "T", a comma for the decimal point, or a date alone
    /// (its local midnight), in years 1 to 9999, with ASCII spaces or tabs around it. Up to six
    /// fractional digits are kept exactly, none rounded: an entry's `at` copied from an export
    /// bounds the range at that entry. Returns false, changing nothing, for anything else
    /// (24:00, a leap second, fractional minutes, more than six digits, trailing text).
    bool setFromText(const QString &text);
    bool setUntilText(const QString &text);
    /// The target as setTargetText() reads it back ("dead_letter:42", "42", or empty).
    QString targetText() const;
    /// Appends $1..$7: actor, action, from, until, target type, numeric id, text id.
    void appendParams(db::QueryParams &params) const;
    /// One line for titles and status bars, e.g. "actor alice · action requeue · since …".
    QString describe() const;
    /// The filter as JSON (null for "any"), for the export's chain-head record.
    QJsonObject toJson() const;

    /// Target types the audit log uses, in the order the view offers them.
    static QStringList targetTypes();
    /// Actions the action functions write, in the order the view offers them.
    static QStringList knownActions();
};

} // namespace redrive
