// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/time_buckets.h"

#include <algorithm>

namespace redrive::time_buckets {

namespace {

constexpr qint64 kHourMs = 3600 * 1000;

// Wall-clock arithmetic: a local date and time read as if it were UTC, so adding hours adds
// hours of the clock on the wall, whatever the zone's offset does meanwhile.
QDateTime naiveOrigin()
{
    return QDateTime(QDate(2000, 1, 3), QTime(0, 0), QTimeZone::utc());
}

QDateTime naiveOf(const QDateTime &t, const QTimeZone &zone)
{
    const QDateTime local = t.toTimeZone(zone);
    return QDateTime(local.date(), local.time(), QTimeZone::utc());
}

QDateTime instantOf(const QDateTime &naive, const QTimeZone &zone)
{
    // In a gap (a wall-clock time skipped by DST) Qt moves forward to the first real instant.
    const QDateTime t(naive.date(), naive.time(), zone);
    // A wall-clock time that a fall-back change repeats names two instants: a bucket starts at
    // the first, so it also holds the repeated hour.
    const QDateTime earlier = t.addMSecs(-kHourMs);
    return naiveOf(earlier, zone) == naive ? earlier : t;
}

qint64 floorDiv(qint64 a, qint64 b)
{
    return a / b - ((a % b != 0) && ((a < 0) != (b < 0)) ? 1 : 0);
}

} // namespace

bool isWallClock(qint64 widthMs)
{
    return widthMs > 0 && widthMs % kHourMs == 0;
}

QDateTime floor(const QDateTime &t, qint64 widthMs, const QTimeZone &zone)
{
    if (!isWallClock(widthMs)) {
        const qint64 ms = t.toMSecsSinceEpoch();
        return QDateTime::fromMSecsSinceEpoch(floorDiv(ms, widthMs) * widthMs, QTimeZone::utc());
    }
    const QDateTime origin = naiveOrigin();
    const qint64 since = origin.msecsTo(naiveOf(t, zone));
    const QDateTime naive = origin.addMSecs(floorDiv(since, widthMs) * widthMs);
    return instantOf(naive, zone);
}

QDateTime next(const QDateTime &start, qint64 widthMs, const QTimeZone &zone)
{
    if (!isWallClock(widthMs))
        return start.addMSecs(widthMs);
    QDateTime naive = naiveOf(start, zone);
    for (;;) { // past a skipped hour, never onto the same instant again
        naive = naive.addMSecs(widthMs);
        const QDateTime after = instantOf(naive, zone);
        if (after > start)
            return after;
    }
}

QList<QDateTime> starts(const QDateTime &from, const QDateTime &to, qint64 widthMs,
                        const QTimeZone &zone)
{
    QList<QDateTime> out;
    if (widthMs <= 0 || to <= from)
        return out;
    QDateTime start = floor(from, widthMs, zone);
    for (; start < to; start = next(start, widthMs, zone))
        out.append(start);
    return out;
}

int indexOf(const QList<QDateTime> &starts, const QDateTime &end, const QDateTime &t)
{
    if (starts.isEmpty() || t < starts.constFirst() || t >= end)
        return -1;
    const auto it = std::upper_bound(starts.cbegin(), starts.cend(), t);
    return int(std::distance(starts.cbegin(), it)) - 1;
}

bool hasWholeHourOffsets(const QTimeZone &zone, const QDateTime &from, const QDateTime &to)
{
    if (zone.offsetFromUtc(from) % 3600 != 0 || zone.offsetFromUtc(to) % 3600 != 0)
        return false;
    for (const QTimeZone::OffsetData &d : zone.transitions(from, to))
        if (d.offsetFromUtc % 3600 != 0)
            return false;
    return true;
}

QString serverName(const QTimeZone &zone)
{
    return zone.isValid() && !zone.id().isEmpty() ? QString::fromLatin1(zone.id())
                                                  : QStringLiteral("UTC");
}

} // namespace redrive::time_buckets
