// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/overview_widget.h"

#include "models/console_reads.h"
#include "models/db/db_error.h"
#include "models/dead_letter_filter.h"
#include "models/display_format.h"
#include "models/time_buckets.h"
#include "views/error_presenter.h"
#include "views/overview_plot.h"

#include <QButtonGroup>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPushButton>
#include <QResizeEvent>
#include <QTimeZone>
#include <QToolButton>
#include <QVBoxLayout>
#include <algorithm>
#include <utility>

namespace redrive {

namespace {

constexpr qint64 kMinute = 60 * 1000;
constexpr qint64 kHour = 60 * kMinute;
constexpr qint64 kDay = 24 * kHour;
constexpr int kFailureGroupCount = 10;

qint64 floorTo(qint64 value, qint64 step)
{
    const qint64 q = value / step;
    return (value % step < 0 ? q - 1 : q) * step;
}

qint64 ceilTo(qint64 value, qint64 step)
{
    const qint64 floor = floorTo(value, step);
    return floor == value ? value : floor + step;
}

// The width the buckets are sized for; before the first layout a plot has no real width yet.
int plotWidth(const OverviewPlot *plot)
{
    return plot->width() >= 100 ? plot->width() : 800;
}

} // namespace

OverviewWidget::OverviewWidget(db::DatabaseSession *session, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_deadLetters(new OverviewPlot(OverviewPlot::Chart::DeadLettersByClass, this))
    , m_outcomes(new OverviewPlot(OverviewPlot::Chart::AttemptOutcomes, this))
    , m_openResolved(new OverviewPlot(OverviewPlot::Chart::OpenResolved, this))
    , m_failureGroups(new OverviewPlot(OverviewPlot::Chart::TopFailureGroups, this))
{
    m_drainTimer.setSingleShot(true);
    connect(&m_drainTimer, &QTimer::timeout, this, &OverviewWidget::drain);

    // Range selector.
    m_rangeButtons = new QButtonGroup(this);
    m_rangeButtons->setExclusive(true);
    auto *bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Range:"), this));
    const QList<std::pair<Range, QString>> ranges = { { Range::LastHour, tr("1 h") },
                                                      { Range::LastDay, tr("24 h") },
                                                      { Range::LastWeek, tr("7 d") },
                                                      { Range::LastMonth, tr("30 d") } };
    for (const auto &[range, text] : ranges) {
        auto *button = new QToolButton(this);
        button->setText(text);
        button->setCheckable(true);
        button->setChecked(range == m_range);
        button->setToolTip(tr("The last %1, ending now").arg(text));
        button->setMinimumWidth(44);
        m_rangeButtons->addButton(button, int(range));
        bar->addWidget(button);
    }
    connect(m_rangeButtons, &QButtonGroup::idClicked, this,
            [this](int id) { setRange(Range(id)); });
    m_resetZoom = new QPushButton(tr("Reset zoom"), this);
    m_resetZoom->setEnabled(false);
    connect(m_resetZoom, &QPushButton::clicked, this, &OverviewWidget::resetZoom);
    auto *refreshButton = new QPushButton(tr("Refresh"), this);
    refreshButton->setToolTip(tr("Load every chart again"));
    connect(refreshButton, &QPushButton::clicked, this, &OverviewWidget::refresh);
    m_hint = new QLabel(this);
    m_hint->setTextFormat(Qt::PlainText);
    m_activity = new QLabel(this);
    m_activity->setTextFormat(Qt::PlainText);
    bar->addSpacing(8);
    bar->addWidget(m_resetZoom);
    bar->addWidget(refreshButton);
    bar->addSpacing(12);
    bar->addWidget(m_hint, 1);
    bar->addWidget(m_activity);

    auto *grid = new QGridLayout;
    grid->setSpacing(8);
    grid->addWidget(m_deadLetters, 0, 0);
    grid->addWidget(m_outcomes, 0, 1);
    grid->addWidget(m_openResolved, 1, 0);
    grid->addWidget(m_failureGroups, 1, 1);

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addLayout(grid, 1);

    for (OverviewPlot *plot : { m_deadLetters, m_outcomes, m_openResolved })
        connect(plot, &OverviewPlot::visibleRangeChanged, this,
                &OverviewWidget::onVisibleRangeChanged);

    const QDateTime now = QDateTime::currentDateTimeUtc();
    m_viewTo = now;
    m_viewFrom = now.addMSecs(-spanOf(m_range));
    applyViewToPlots();
    updateHint();
}

qint64 OverviewWidget::spanOf(Range range)
{
    switch (range) {
    case Range::LastHour:
        return kHour;
    case Range::LastDay:
        return kDay;
    case Range::LastWeek:
        return 7 * kDay;
    case Range::LastMonth:
        return 30 * kDay;
    }
    return kDay;
}

qint64 OverviewWidget::bucketWidthMs(qint64 spanMs, int widthPixels)
{
    const qint64 buckets = std::max(1, widthPixels / 4);
    const qint64 raw = std::max<qint64>(1, (spanMs + buckets - 1) / buckets);
    static constexpr qint64 kSteps[]
        = { kMinute,   2 * kMinute, 5 * kMinute, 10 * kMinute, 15 * kMinute, 30 * kMinute, kHour,
            2 * kHour, 3 * kHour,   4 * kHour,   6 * kHour,    12 * kHour,   kDay };
    for (qint64 step : kSteps) {
        if (step >= raw)
            return step;
    }
    return ceilTo(raw, kDay);
}

void OverviewWidget::setRange(Range range)
{
    m_range = range;
    if (QAbstractButton *button = m_rangeButtons->button(int(range)))
        button->setChecked(true);
    m_zoomed = false;
    refresh();
}

QDateTime OverviewWidget::serverNow() const
{
    return QDateTime::currentDateTimeUtc().addMSecs(m_clockOffsetMs);
}

void OverviewWidget::refresh()
{
    m_started = true;
    // "Ending now" means the database's now: measure the clock offset first (one round trip),
    // so a console whose clock is off still shows the last hour of the server's data.
    if (!isLoading()) {
        m_activity->setText(tr("Loading…"));
        Q_EMIT loadingChanged(true);
    }
    ++m_pending;
    reads::serverClock(m_session, this, [this](const db::DbExpected<QDateTime> &server) {
        if (server && server->isValid())
            m_clockOffsetMs = QDateTime::currentDateTimeUtc().msecsTo(*server);
        if (!m_zoomed) {
            m_viewTo = serverNow();
            m_viewFrom = m_viewTo.addMSecs(-spanOf(m_range));
        }
        applyViewToPlots();
        markDirty(DirtyAll, 0);
        finishRequest();
    });
}

void OverviewWidget::resetZoom()
{
    m_zoomed = false;
    m_viewTo = serverNow();
    m_viewFrom = m_viewTo.addMSecs(-spanOf(m_range));
    applyViewToPlots();
    markDirty(DirtyTimeCharts, 0);
}

void OverviewWidget::setShowUtc(bool utc)
{
    if (utc == m_showUtc)
        return;
    m_showUtc = utc;
    updateHint();
    // Buckets of whole hours follow the shown zone's clock: they are cut again.
    markDirty(DirtyAxes | DirtyTimeCharts, 0);
}

void OverviewWidget::resizeEvent(QResizeEvent *event)
{
    QWidget::resizeEvent(event);
    // The layout has placed the plots already: ask again only when the buckets would change.
    if (m_started
        && bucketWidthMs(m_viewFrom.msecsTo(m_viewTo), plotWidth(m_deadLetters))
            != m_deadLetters->bucketMs())
        markDirty(DirtyTimeCharts, kZoomDebounceMs);
}

void OverviewWidget::onVisibleRangeChanged(const QDateTime &from, const QDateTime &to)
{
    if (!from.isValid() || !to.isValid() || from >= to)
        return;
    m_viewFrom = from;
    m_viewTo = to;
    m_zoomed = true;
    applyViewToPlots(); // the other time charts follow
    updateHint();
    markDirty(DirtyTimeCharts, kZoomDebounceMs);
}

void OverviewWidget::applyViewToPlots()
{
    for (OverviewPlot *plot : { m_deadLetters, m_outcomes, m_openResolved }) {
        plot->setTimeRange(m_viewFrom, m_viewTo);
        plot->replot(QCustomPlot::rpQueuedReplot);
    }
    m_resetZoom->setEnabled(m_zoomed);
}

void OverviewWidget::updateHint()
{
    if (m_zoomed)
        m_hint->setText(
            tr("Zoomed to %1 – %2")
                .arg(display::time(m_viewFrom, m_showUtc), display::time(m_viewTo, m_showUtc)));
    else
        m_hint->setText(tr("Scroll on a time chart to zoom, drag to pan"));
}

void OverviewWidget::markDirty(unsigned flags, int delayMs)
{
    const bool wasLoading = isLoading();
    m_dirty |= flags;
    m_drainTimer.start(delayMs); // restarts: a burst of changes is drained once
    if (!wasLoading) {
        m_activity->setText(tr("Loading…"));
        Q_EMIT loadingChanged(true);
    }
}

void OverviewWidget::drain()
{
    const unsigned dirty = std::exchange(m_dirty, 0u);
    ++m_pending; // holds isLoading() while the requests go out
    m_errorShown = false;
    if (dirty & DirtyAxes) {
        for (OverviewPlot *plot : { m_deadLetters, m_outcomes, m_openResolved })
            plot->setShowUtc(m_showUtc);
    }
    if (dirty & DirtyDeadLetters)
        requestBuckets(m_deadLetters, 0);
    if (dirty & DirtyOutcomes)
        requestBuckets(m_outcomes, 1);
    if (dirty & DirtyOpenResolved)
        requestBuckets(m_openResolved, 2);
    if (dirty & DirtyFailureGroups)
        requestFailureGroups();
    finishRequest();
}

void OverviewWidget::requestBuckets(OverviewPlot *plot, int slot)
{
    const qint64 width = bucketWidthMs(m_viewFrom.msecsTo(m_viewTo), plotWidth(plot));
    // Buckets cut in the zone the operator reads (hours and days of its wall clock, so a day
    // across a DST change is a local day); panning keeps the same bucket edges.
    const QTimeZone zone = m_showUtc ? QTimeZone::utc() : QTimeZone::systemTimeZone();
    const QList<QDateTime> starts = time_buckets::starts(m_viewFrom, m_viewTo, width, zone);
    if (starts.isEmpty())
        return;
    const QDateTime from = starts.constFirst();
    const QDateTime to = time_buckets::next(starts.constLast(), width, zone);
    // "Last 24 h" ends now, in the middle of the current bucket: unzoomed, the axis shows the
    // buckets whole, so the current one's bar is not cut at now (the view itself stays).
    if (!m_zoomed)
        plot->setTimeRange(from, to);
    const reads::OverviewChart chart = slot == 0 ? reads::OverviewChart::DeadLettersByClass
        : slot == 1                              ? reads::OverviewChart::AttemptOutcomes
                                                 : reads::OverviewChart::OpenResolved;
    const quint64 generation = ++m_generation[slot];
    ++m_pending;
    if (plot->bucketCount() == 0)
        plot->setNote(tr("Loading…"));
    reads::overviewBuckets(m_session, this, chart, width, from, to, zone,
                           [this, plot, slot, generation, starts, to,
                            width](const db::DbExpected<db::ResultSet> &rows) {
                               if (generation == m_generation[slot]) {
                                   if (rows) {
                                       plot->setBuckets(*rows, starts, to, width);
                                   } else {
                                       plot->setNote(tr("Could not load this chart"));
                                       reportError(rows.error(), tr("Loading the overview"));
                                   }
                               }
                               finishRequest();
                           });
}

void OverviewWidget::requestFailureGroups()
{
    const quint64 generation = ++m_generation[3];
    ++m_pending;
    // An empty filter: every dead letter.
    reads::failureGroups(m_session, this, DeadLetterFilter(), kFailureGroupCount,
                         [this, generation](const db::DbExpected<db::ResultSet> &rows) {
                             if (generation == m_generation[3]) {
                                 if (rows) {
                                     m_failureGroups->setFailureGroups(*rows);
                                 } else {
                                     m_failureGroups->setNote(tr("Could not load this chart"));
                                     reportError(rows.error(), tr("Loading failure groups"));
                                 }
                             }
                             finishRequest();
                         });
}

void OverviewWidget::reportError(const db::DbError &error, const QString &what)
{
    if (std::exchange(m_errorShown, true))
        return;
    ErrorPresenter::report(this, error, what);
}

void OverviewWidget::finishRequest()
{
    --m_pending;
    if (!isLoading()) {
        m_activity->clear();
        Q_EMIT loadingChanged(false);
    }
}

} // namespace redrive
