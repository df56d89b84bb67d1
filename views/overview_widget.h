// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QDateTime>
#include <QTimer>
#include <QWidget>

class QButtonGroup;
class QLabel;
class QPushButton;

namespace redrive {

namespace db {
class DatabaseSession;
class DbError;
} // namespace db

class OverviewPlot;

/// The overview tab: dead letters per time bucket by error class
/// (stacked bars), attempt outcomes over time, dead letters arrived vs resolved, and the largest
/// failure groups. The server buckets the data: the bucket width is chosen so the range has
/// about a quarter as many buckets as the plot is wide in pixels (never under a minute), and
/// the range is widened to whole buckets. Zooming or dragging a time axis moves all three time
/// charts and, after a short pause, asks for buckets sized to the new range. Changes only mark
/// dirty flags; one timer drains them and each chart then replots with rpQueuedReplot.
/// Everything loads through the session; errors go through ErrorPresenter.
class OverviewWidget : public QWidget
{
    Q_OBJECT
public:
    /// The time ranges the selector offers, each ending now.
    enum class Range { LastHour, LastDay, LastWeek, LastMonth };
    /// Pause after the last zoom or drag before asking for new buckets, in ms.
    static constexpr int kZoomDebounceMs = 250;

    /// `session` must outlive the widget. Nothing loads until refresh().
    explicit OverviewWidget(db::DatabaseSession *session, QWidget *parent = nullptr);

    OverviewPlot *deadLetterPlot() const { return m_deadLetters; }
    OverviewPlot *outcomePlot() const { return m_outcomes; }
    OverviewPlot *openResolvedPlot() const { return m_openResolved; }
    OverviewPlot *failureGroupPlot() const { return m_failureGroups; }

    /// Selects a range ending now and loads it (the zoom is reset).
    void setRange(Range range);
    Range range() const { return m_range; }
    /// The visible time range of the time charts (UTC instants).
    QDateTime viewFrom() const { return m_viewFrom; }
    QDateTime viewTo() const { return m_viewTo; }
    /// True while a chart waits for the server or a change waits for the timer.
    bool isLoading() const { return m_pending > 0 || m_dirty != 0; }
    /// The bucket width for `spanMs` of time on a plot `widthPixels` wide: about one bucket per
    /// 4 pixels, rounded up to a whole minute, hour or day step, at least one minute.
    static qint64 bucketWidthMs(qint64 spanMs, int widthPixels);

public Q_SLOTS:
    /// Loads every chart again: the selected range ending now, or the zoomed window.
    void refresh();
    /// Label time axes in UTC instead of local time with the UTC offset.
    void setShowUtc(bool utc);
    /// Back to the selected range ending now.
    void resetZoom();

Q_SIGNALS:
    void loadingChanged(bool loading);

protected:
    void resizeEvent(QResizeEvent *event) override;

private:
    enum Dirty : unsigned {
        DirtyDeadLetters = 1u << 0,
        DirtyOutcomes = 1u << 1,
        DirtyOpenResolved = 1u << 2,
        DirtyFailureGroups = 1u << 3,
        DirtyAxes = 1u << 4,
        DirtyTimeCharts = DirtyDeadLetters | DirtyOutcomes | DirtyOpenResolved,
        DirtyAll = DirtyTimeCharts | DirtyFailureGroups | DirtyAxes,
    };

    void markDirty(unsigned flags, int delayMs);
    void drain();
    void requestBuckets(OverviewPlot *plot, int slot);
    void requestFailureGroups();
    void onVisibleRangeChanged(const QDateTime &from, const QDateTime &to);
    void applyViewToPlots();
    void finishRequest();
    void reportError(const db::DbError &error, const QString &what);
    void updateHint();
    static qint64 spanOf(Range range);

    db::DatabaseSession *m_session;
    OverviewPlot *m_deadLetters;
    OverviewPlot *m_outcomes;
    OverviewPlot *m_openResolved;
    OverviewPlot *m_failureGroups;
    QButtonGroup *m_rangeButtons = nullptr;
    QPushButton *m_resetZoom = nullptr;
    QLabel *m_hint = nullptr;
    QLabel *m_activity = nullptr;
    QTimer m_drainTimer;
    Range m_range = Range::LastDay;
    QDateTime m_viewFrom;
    QDateTime m_viewTo;
    bool m_zoomed = false;
    qint64 m_clockOffsetMs = 0; ///< server clock minus local clock, measured at refresh()
    /// Now by the server's clock (the local clock corrected by the last measured offset).
    QDateTime serverNow() const;
    bool m_started = false;
    bool m_showUtc = false;
    bool m_errorShown = false; ///< one error report per drain, not one per chart
    unsigned m_dirty = 0;
    int m_pending = 0;
    quint64 m_generation[4] = { 0, 0, 0, 0 };
};

} // namespace redrive
