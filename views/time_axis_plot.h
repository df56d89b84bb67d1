// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QDateTime>
#include <QString>
#include <qcustomplot.h>

namespace redrive {

class DayMarkingTicker;

/// The base of the console's charts over time (OverviewPlot, AttemptTimelinePlot): a QCustomPlot
/// whose x axis shows instants, in one place for every chart:
/// - the plot key of an instant is seconds since 1970-01-01T00:00Z as a double
///   (QCPAxisTickerDateTime's unit), to the millisecond: keyOf(), keyOfMs(), instantOf();
/// - the zone: local time (the system zone, as the tables show it) or UTC, switched with
///   setShowUtc() like the tables' "UTC" toggle (View ▸ Show times in UTC);
/// - the axis label: "<caption> (UTC)" or "<caption> (local time, UTC+01:00)", the offset being
///   the one in force at the middle of the visible range (it changes across a DST switch);
/// - the tick labels: "HH:mm:ss" when at most 30 minutes are visible, "HH:mm" up to 10 days,
///   "d MMM" up to a year (365.25 days), "MMM yyyy" up to ten years, "yyyy" beyond (a year
///   before 1 as "4713 BC"); QCPAxisTickerDateTime keeps about six ticks whatever the span (over a
///   year, whole multiples of 1, 2, 5 × 10ⁿ years), so centuries make no more ticks than hours;
///   below 10 days the first visible tick and every tick on a new day also carry
///   the date ("d MMM" on a second line), so a range across midnight reads unambiguously; in
///   local time the ticks fall on whole local hours and minutes, whatever the offset.
/// A subclass calls setUpTimeAxis() once; a plot that has no time axis (the failure-groups
/// chart) never does, and the zone setting then does nothing.
class TimeAxisPlot : public QCustomPlot
{
    Q_OBJECT
public:
    explicit TimeAxisPlot(QWidget *parent = nullptr);

    /// The plot key of `instant` (any time spec): seconds since the epoch, UTC.
    static double keyOf(const QDateTime &instant);
    /// The plot key of `msSinceEpoch` milliseconds since 1970-01-01T00:00Z.
    static double keyOfMs(qint64 msSinceEpoch);
    /// The instant of plot key `key`, rounded to the millisecond, as a UTC QDateTime.
    static QDateTime instantOf(double key);
    /// "UTC+01:00", "UTC-03:30", "UTC+00:00" for an offset of `offsetSeconds` east of UTC.
    static QString offsetLabel(int offsetSeconds);
    /// The tick label format for `spanSeconds` visible seconds (see the class comment).
    static QString tickFormat(double spanSeconds);

    /// Shows the time axis in UTC (true) or local time with its offset (false, the default);
    /// relabels and replots (queued).
    void setShowUtc(bool utc);
    bool showUtc() const { return m_showUtc; }
    /// The time axis' visible range, as UTC instants.
    QDateTime visibleFrom() const;
    QDateTime visibleTo() const;

protected:
    /// Makes xAxis the time axis, labelled "`caption` (…)", and keeps its ticks and label up to
    /// date with every change of its range. Call once, from the subclass' constructor.
    void setUpTimeAxis(const QString &caption);
    bool hasTimeAxis() const { return m_ticker != nullptr; }

private:
    void updateTimeAxis();

    QSharedPointer<DayMarkingTicker> m_ticker;
    QString m_caption;
    bool m_showUtc = false;
};

} // namespace redrive
