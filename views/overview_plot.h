// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/result_set.h"
#include "views/time_axis_plot.h"

#include <QDateTime>
#include <QHash>
#include <QStringList>

namespace redrive {

/// One chart of the overview tab. It shows the buckets the server computed for one statement and
/// never reads a table model. Time charts draw the bucket counts over TimeAxisPlot's time axis
/// ("Time", in local time with the UTC offset in the axis label, or UTC: setShowUtc()); the
/// operator zooms and drags the time axis only, and visibleRangeChanged() reports it so the owner
/// can ask for finer buckets. The failure-groups chart draws horizontal bars labelled with each
/// group's sample message and has no time axis. Data setters never replot synchronously: they
/// call replot(rpQueuedReplot).
class OverviewPlot : public TimeAxisPlot
{
    Q_OBJECT
public:
    enum class Chart {
        DeadLettersByClass, ///< stacked bars per error class
                            ///< (Statement::OverviewDeadLettersByClass)
        AttemptOutcomes, ///< a line per attempt outcome (Statement::OverviewAttemptOutcomes)
        OpenResolved, ///< dead letters arrived vs resolved (Statement::OverviewOpenResolved)
        TopFailureGroups, ///< the largest failure groups (Statement::FailureGroups)
    };

    explicit OverviewPlot(Chart chart, QWidget *parent = nullptr);

    Chart chart() const { return m_chart; }
    bool isTimeChart() const { return m_chart != Chart::TopFailureGroups; }

    /// Time charts: shows [from, to) on the time axis without reporting it as the operator's.
    void setTimeRange(const QDateTime &from, const QDateTime &to);

    /// Time charts: replaces the data with `rows` of the chart's statement, bucketed by the
    /// server in buckets of nominally `bucketMs` ms that start at `starts` (sorted instants, as
    /// time_buckets::starts() cuts them: a local day may be 23 or 25 hours) and end at `end`.
    /// A row belongs to the bucket whose start is the last at or before its own.
    void setBuckets(const db::ResultSet &rows, const QList<QDateTime> &starts, const QDateTime &end,
                    qint64 bucketMs);
    /// The failure-groups chart: replaces the bars with `rows` of Statement::FailureGroups.
    void setFailureGroups(const db::ResultSet &rows);
    /// A line shown over the data area ("Loading…", "No dead letters in this range", an error);
    /// empty hides it.
    void setNote(const QString &note);
    QString note() const;

    /// The buckets of the last setBuckets() ((to - from) / bucketMs), 0 before.
    int bucketCount() const { return m_bucketCount; }
    qint64 bucketMs() const { return m_bucketMs; }
    /// The range the last setBuckets() covered.
    QDateTime dataFrom() const { return m_dataFrom; }
    QDateTime dataTo() const { return m_dataTo; }
    /// The series' names (error classes, outcomes, "arrived"/"resolved", or error classes of
    /// the failure groups), in drawing order.
    QStringList seriesNames() const;
    /// The sum of a series' values over all its points (bars or line points); 0 if unknown.
    double seriesTotal(const QString &name) const;
    /// The failure-groups chart's bar labels, top to bottom, as drawn (elided).
    QStringList groupLabels() const;
    /// The same labels before they are elided to the plot's width: "<kind>: <message>", each a
    /// bounded prefix with invisible controls shown as markers (display::boundedText, at most 300
    /// characters of the kind and of the message, " …" after a message longer than 4,000 bytes).
    QStringList groupTexts() const;

Q_SIGNALS:
    /// The operator zoomed or dragged the time axis to [from, to) (UTC instants).
    void visibleRangeChanged(const QDateTime &from, const QDateTime &to);

protected:
    void resizeEvent(QResizeEvent *event) override;

private:
    void setUpTimeChart();
    void setUpFailureGroups();
    QCPBars *addBars(const QString &name, const QColor &color, QCPAxis *keyAxis,
                     QCPAxis *valueAxis);
    QCPGraph *addLine(const QString &name, const QColor &color);
    void onRangeChanged(const QCPRange &range);
    void relabelGroups();
    void rescaleValues();

    Chart m_chart;
    bool m_settingRange = false;
    QHash<QString, QCPBars *> m_bars;
    QHash<QString, QCPGraph *> m_graphs;
    QStringList m_order;
    QSharedPointer<QCPAxisTickerText> m_groupTicker;
    QStringList m_groupTexts; ///< bounded labels of the failure groups, top to bottom
    QStringList m_groupLabels; ///< as drawn
    QList<QCPItemText *> m_countLabels;
    double m_groupMax = 0; ///< the largest group's count
    QCPItemText *m_note = nullptr;
    QCPTextElement *m_title = nullptr;
    int m_bucketCount = 0;
    qint64 m_bucketMs = 0;
    QDateTime m_dataFrom;
    QDateTime m_dataTo;
};

} // namespace redrive
