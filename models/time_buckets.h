// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QDateTime>
#include <QList>
#include <QTimeZone>

namespace redrive::time_buckets {

/// How chart buckets are cut in the operator's time zone (docs/architecture.md "Time buckets"):
/// - a width below an hour (whole minutes) counts from the Unix epoch, as the rollups do;
/// - a width of whole hours counts wall-clock hours in `zone` from local midnight of
///   2000-01-03 (a Monday), so an hour starts on the hour of the zone's clock (also at +05:30)
///   and a day bucket is a local day: 23 or 25 hours long across a daylight-saving change.
/// Panning keeps the same edges. Widths in ms (a whole number of minutes); times are instants
/// (any QDateTime spec), results carry `zone`'s spec (UTC for widths below an hour).

/// True when bucket edges of `widthMs` follow the zone's wall clock (whole hours).
bool isWallClock(qint64 widthMs);

/// The start of the bucket that holds `t`.
QDateTime floor(const QDateTime &t, qint64 widthMs, const QTimeZone &zone);

/// The start of the bucket after the one starting at `start` (a bucket start): the end of that
/// bucket.
QDateTime next(const QDateTime &start, qint64 widthMs, const QTimeZone &zone);

/// The starts of the buckets that cover [from, to): floor(from) first, each next one a width
/// of wall-clock time later; never two equal starts (an hour skipped by a DST change is no
/// bucket). Empty when to <= from.
QList<QDateTime> starts(const QDateTime &from, const QDateTime &to, qint64 widthMs,
                        const QTimeZone &zone);

/// The index of the bucket in `starts` (sorted) that holds `t`: the last start at or before it;
/// -1 before the first start or at or after `end` (the end of the last bucket).
int indexOf(const QList<QDateTime> &starts, const QDateTime &end, const QDateTime &t);

/// True when `zone`'s offset from UTC is a whole number of hours at every instant of
/// [from, to], so hourly rollups (UTC hours) can be summed into its wall-clock buckets.
bool hasWholeHourOffsets(const QTimeZone &zone, const QDateTime &from, const QDateTime &to);

/// The zone's name as PostgreSQL's `AT TIME ZONE` takes it: the IANA id ("Europe/Berlin"),
/// or "UTC".
QString serverName(const QTimeZone &zone);

} // namespace redrive::time_buckets
