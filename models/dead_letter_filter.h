// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/query_params.h"

#include <QDateTime>
#include <QMetaType>
#include <QStringList>

namespace redrive {

/// What the operator narrowed the dead-letter list to. Empty lists and null
/// values mean "any". Turned into the parameters $1..$8 of fragments/dead_letter_filter.sql.
struct DeadLetterFilter
{
    QStringList statuses;
    QStringList queues;
    QStringList kinds;
    QStringList errorClasses;
    QDateTime from; ///< dead_at >= from (UTC instant), or any
    QDateTime until; ///< dead_at < until, or any
    QString search; ///< substring of the last error or the idempotency key, matched literally
    QString fingerprint; ///< one failure group, or any

    bool operator==(const DeadLetterFilter &) const = default;

    /// Appends $1..$8 to `params` in the fragment's order.
    void appendParams(db::QueryParams &params) const;
    /// A copy without the failure-group condition (the groups panel lists all groups).
    DeadLetterFilter withoutFingerprint() const;
    /// One line for the status bar, e.g. "status open · queue payments · search "timeout"".
    QString describe() const;
};

/// Turns operator text into an ILIKE pattern that matches it literally as a substring:
/// % _ and \ are escaped with \ (the statement says ESCAPE '\'); ' and [ need nothing, since the
/// pattern is a parameter and LIKE has no brackets (PostgreSQL manual 9.7.1).
QString literalContainsPattern(const QString &text);

} // namespace redrive

Q_DECLARE_METATYPE(redrive::DeadLetterFilter)
