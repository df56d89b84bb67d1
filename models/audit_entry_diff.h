// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QList>
#include <QString>

namespace redrive {

/// One line of an audit entry's before/after diff.
struct AuditDiffLine
{
    enum class Change { Unchanged, Changed, Added, Removed };

    QString path; ///< "status", "payload.amount_minor", or "dead_letter 42 · status" per target
    Change change = Change::Unchanged;
    QString before; ///< the value before as compact JSON; empty when absent
    QString after; ///< the value after as compact JSON; empty when absent
};

/// The before/after of an audit entry as a readable diff, shown in an entry's
/// details: per key for JSON objects, recursing into nested objects with dotted paths
/// ("payload.amount_minor"); values are compact JSON, so "1" and 1 stay apart. A key named
/// `x_cents` (entries written before schema version 21) is compared as `x_minor`, the same
/// amount under its newer name (docs/domain.md#money). A bulk action's
/// before is a list of per-target objects ({"id": 42, "status": "open"}) against one after
/// object: each target is compared with the after, its lines prefixed "id 42 · ". Anything else
/// (arrays, scalars) compares as a whole. Pure computation: no widgets, no database.
class AuditEntryDiff
{
public:
    /// Compares `beforeJson` with `afterJson` (jsonb text; a null QString is SQL NULL: absent).
    static AuditEntryDiff compute(const QString &beforeJson, const QString &afterJson);
    /// Lines for at most this many targets of a bulk before list; the rest is summarised.
    static constexpr int kMaxTargets = 200;

    const QList<AuditDiffLine> &lines() const { return m_lines; }
    /// A sentence about what the lines do not show ("No before state recorded", "… 800 more
    /// targets"), or empty.
    const QString &note() const { return m_note; }
    int count(AuditDiffLine::Change change) const;
    /// "changed", "added", "removed", "unchanged".
    static QString changeName(AuditDiffLine::Change change);

private:
    QList<AuditDiffLine> m_lines;
    QString m_note;
};

} // namespace redrive
