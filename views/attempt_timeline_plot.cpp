// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/attempt_timeline_plot.h"

#include "models/display_format.h"

#include <QMap>
#include <QToolTip>
#include <algorithm>

namespace redrive {

namespace {

constexpr int kKindCount = int(AttemptTimelinePlot::MarkerKind::Abandoned) + 1;

struct MarkerStyle
{
    QColor colour;
    QCPScatterStyle::ScatterShape shape;
};

// Okabe-Ito colours: told apart by people with the common colour-vision deficiencies, and the
// shapes differ too.
MarkerStyle styleOf(AttemptTimelinePlot::MarkerKind kind)
{
    using K = AttemptTimelinePlot::MarkerKind;
    switch (kind) {
    case K::Succeeded:
        return { QColor(0x00, 0x9E, 0x73), QCPScatterStyle::ssDisc };
    case K::Transient:
        return { QColor(0xE6, 0x9F, 0x00), QCPScatterStyle::ssTriangle };
    case K::Permanent:
        return { QColor(0xD5, 0x5E, 0x00), QCPScatterStyle::ssSquare };
    case K::Ambiguous:
        return { QColor(0xCC, 0x79, 0xA7), QCPScatterStyle::ssDiamond };
    case K::Failed:
        return { QColor(0x33, 0x33, 0x33), QCPScatterStyle::ssPlusCircle };
    case K::Conflict:
        return { QColor(0x00, 0x72, 0xB2), QCPScatterStyle::ssCrossSquare };
    case K::Abandoned:
        return { QColor(0x88, 0x88, 0x88), QCPScatterStyle::ssCross };
    }
    return { Qt::black, QCPScatterStyle::ssCircle };
}

} // namespace

AttemptTimelinePlot::AttemptTimelinePlot(QWidget *parent)
    : TimeAxisPlot(parent)
{
    setMinimumHeight(160);
    setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    axisRect()->setRangeDrag(Qt::Horizontal);
    axisRect()->setRangeZoom(Qt::Horizontal);

    setUpTimeAxis(tr("Started"));
    auto lanes = QSharedPointer<QCPAxisTickerText>::create();
    yAxis->setTicker(lanes);
    yAxis->setRangeReversed(true); // the first attempt on top, like a Gantt chart
    yAxis->setLabel(tr("Attempt"));
    yAxis->grid()->setPen(QPen(QColor(0xE6, 0xE6, 0xE6), 0, Qt::SolidLine));
    xAxis->grid()->setPen(QPen(QColor(0xE6, 0xE6, 0xE6), 0, Qt::SolidLine));

    addLayer(QStringLiteral("bars"), layer(QStringLiteral("main")), QCustomPlot::limBelow);

    for (int k = 0; k < kKindCount; ++k) {
        const auto kind = MarkerKind(k);
        const MarkerStyle style = styleOf(kind);
        QCPGraph *graph = addGraph();
        graph->setLineStyle(QCPGraph::lsNone);
        QPen pen(style.colour, 2);
        graph->setPen(pen);
        graph->setScatterStyle(QCPScatterStyle(style.shape, pen, QBrush(style.colour), 11));
        graph->setName(markerName(kind));
        m_markerGraphs.append(graph);
    }
    legend->setVisible(true);
    QFont legendFont = font();
    legendFont.setPointSizeF(legendFont.pointSizeF() * 0.9);
    legend->setFont(legendFont);
    legend->setBrush(QColor(255, 255, 255, 220));
    legend->setBorderPen(QPen(QColor(0xBB, 0xBB, 0xBB)));
    axisRect()->insetLayout()->setInsetAlignment(0, Qt::AlignTop | Qt::AlignRight);

    connect(this, &QCustomPlot::mouseMove, this,
            [this](QMouseEvent *event) { showToolTipAt(event->pos()); });
    rebuild();
}

AttemptTimelinePlot::MarkerKind AttemptTimelinePlot::markerKind(const QString &outcome,
                                                                const QString &errorClass)
{
    if (outcome == QLatin1String("succeeded"))
        return MarkerKind::Succeeded;
    if (outcome == QLatin1String("conflict"))
        return MarkerKind::Conflict;
    if (outcome == QLatin1String("abandoned"))
        return MarkerKind::Abandoned;
    if (errorClass == QLatin1String("transient"))
        return MarkerKind::Transient;
    if (errorClass == QLatin1String("permanent"))
        return MarkerKind::Permanent;
    if (errorClass == QLatin1String("ambiguous"))
        return MarkerKind::Ambiguous;
    return MarkerKind::Failed;
}

QString AttemptTimelinePlot::markerName(MarkerKind kind)
{
    switch (kind) {
    case MarkerKind::Succeeded:
        return tr("succeeded");
    case MarkerKind::Transient:
        return tr("failed (transient)");
    case MarkerKind::Permanent:
        return tr("failed (permanent)");
    case MarkerKind::Ambiguous:
        return tr("failed (ambiguous)");
    case MarkerKind::Failed:
        return tr("failed");
    case MarkerKind::Conflict:
        return tr("conflict");
    case MarkerKind::Abandoned:
        return tr("abandoned");
    }
    return {};
}

void AttemptTimelinePlot::setLoading()
{
    m_state = State::Loading;
    m_attempts.clear();
    m_buckets.clear();
    m_bucketed = false;
    rebuild();
}

void AttemptTimelinePlot::setFailed()
{
    m_state = State::Failed;
    m_attempts.clear();
    m_buckets.clear();
    m_bucketed = false;
    rebuild();
}

void AttemptTimelinePlot::setAttempts(const QList<DeadLetterCase::Attempt> &attempts)
{
    m_state = State::Loaded;
    m_attempts = attempts;
    m_buckets.clear();
    m_bucketed = false;
    rebuild();
}

void AttemptTimelinePlot::setBuckets(const QList<DeadLetterCase::AttemptBucket> &buckets)
{
    m_state = State::Loaded;
    m_attempts.clear();
    m_buckets = buckets;
    m_bucketed = true;
    rebuild();
}

void AttemptTimelinePlot::setRounds(const QList<DeadLetterCase::Round> &rounds)
{
    m_rounds = rounds;
    rebuild();
}

void AttemptTimelinePlot::addRequeueLines()
{
    for (const DeadLetterCase::Round &r : m_rounds) {
        if (r.round <= 1 || !r.requeuedAt.isValid())
            continue;
        const double x = keyOf(r.requeuedAt);
        auto *line = new QCPItemStraightLine(this);
        line->setLayer(QStringLiteral("bars"));
        line->setPen(QPen(QColor(0x00, 0x72, 0xB2), 1.5, Qt::DashDotLine));
        line->point1->setCoords(x, 0);
        line->point2->setCoords(x, 1);
        auto *label = new QCPItemText(this);
        label->setLayer(QStringLiteral("bars"));
        label->position->setTypeX(QCPItemPosition::ptPlotCoords);
        label->position->setTypeY(QCPItemPosition::ptAxisRectRatio);
        label->position->setCoords(x, 0.0);
        // Left of the line: a requeue is usually the latest thing on the plot.
        label->setPositionAlignment(Qt::AlignRight | Qt::AlignTop);
        label->setPadding(QMargins(0, 2, 4, 0));
        label->setBrush(QColor(255, 255, 255, 200));
        label->setColor(QColor(0x00, 0x55, 0x88));
        label->setText(tr("round %1: requeued by %2")
                           .arg(r.round)
                           .arg(display::boundedText(r.requeuedBy, 64)));
    }
}

int AttemptTimelinePlot::pointCount() const
{
    int n = 0;
    for (const QCPGraph *g : m_markerGraphs)
        n += g->dataCount();
    return n;
}

int AttemptTimelinePlot::pointCount(MarkerKind kind) const
{
    return m_markerGraphs.at(int(kind))->dataCount();
}

qint64 AttemptTimelinePlot::plottedAttempts(std::optional<MarkerKind> kind) const
{
    qint64 n = 0;
    for (int k = 0; k < kKindCount; ++k) {
        if (kind && int(*kind) != k)
            continue;
        const QCPGraph *g = m_markerGraphs.at(k);
        if (!m_bucketed) {
            n += g->dataCount();
            continue;
        }
        for (auto it = g->data()->constBegin(); it != g->data()->constEnd(); ++it)
            n += qint64(it->value);
    }
    return n;
}

QStringList AttemptTimelinePlot::itemTexts() const
{
    QStringList texts;
    for (int i = 0; i < itemCount(); ++i) {
        if (const auto *text = qobject_cast<const QCPItemText *>(item(i)))
            texts << text->text();
    }
    return texts;
}

void AttemptTimelinePlot::rebuild()
{
    clearItems();
    m_offAxisNote.clear();
    for (QCPGraph *g : m_markerGraphs)
        g->data()->clear();
    if (m_bucketed) {
        rebuildBuckets();
        return;
    }
    auto lanes = qSharedPointerDynamicCast<QCPAxisTickerText>(yAxis->ticker());
    if (!lanes) {
        lanes = QSharedPointer<QCPAxisTickerText>::create();
        yAxis->setTicker(lanes);
        yAxis->setRangeReversed(true);
        yAxis->setLabel(tr("Attempt"));
        for (int k = 0; k < kKindCount; ++k) {
            const MarkerStyle style = styleOf(MarkerKind(k));
            const QPen pen(style.colour, 2);
            m_markerGraphs.at(k)->setLineStyle(QCPGraph::lsNone);
            m_markerGraphs.at(k)->setPen(pen);
            m_markerGraphs.at(k)->setScatterStyle(
                QCPScatterStyle(style.shape, pen, QBrush(style.colour), 11));
        }
    }
    lanes->clear();
    addRequeueLines();

    const int n = int(m_attempts.size());
    if (n == 0) {
        auto *empty = new QCPItemText(this);
        empty->position->setType(QCPItemPosition::ptAxisRectRatio);
        empty->position->setCoords(0.5, 0.5);
        // Only a loaded, empty history has no attempts: before it arrives (or when it could not
        // be read) the plot says so instead.
        empty->setText(m_state == State::Loaded        ? tr("No attempts recorded")
                           : m_state == State::Loading ? tr("Loading the attempts…")
                                                       : tr("The attempts could not be loaded"));
        empty->setColor(QColor(0x66, 0x66, 0x66));
        for (QCPGraph *g : m_markerGraphs)
            g->removeFromLegend();
        const double now = keyOf(QDateTime::currentDateTimeUtc());
        xAxis->setRange(now - 60, now);
        yAxis->setRange(0.5, 1.5);
        replot(QCustomPlot::rpQueuedReplot);
        return;
    }

    // An attempt that started at 'infinity' or '-infinity' has no place on a time axis: it gets
    // its lane with no marker, and a note says so (the table lists it with "∞" / "−∞").
    QStringList offAxis;
    bool first = true;
    double xMin = 0;
    double xMax = 0;
    // One label per lane while they fit; with more lanes than lines of text, every k-th lane is
    // labelled (501 labels drawn over each other made the axis a black smear).
    const int lines = std::max(1, std::max(100, height() - 60) / (fontMetrics().height() + 2));
    const int every = std::max(1, (n + lines - 1) / lines);
    for (int i = 0; i < n; ++i) {
        const DeadLetterCase::Attempt &a = m_attempts.at(i);
        const double lane = i + 1;
        if (i % every == 0)
            lanes->addTick(lane, QStringLiteral("#%1").arg(a.attemptNo));
        if (!a.startedAt.isValid() || display::isInfinite(a.startedAt)) {
            offAxis << tr("#%1 at %2").arg(a.attemptNo).arg(display::time(a.startedAt, true));
            continue;
        }
        const double start = keyOf(a.startedAt);
        if (first) {
            xMin = xMax = start;
            first = false;
        }
        const MarkerKind kind = markerKind(a.outcome, a.errorClass);
        const QColor colour = styleOf(kind).colour;
        m_markerGraphs.at(int(kind))->addData(start, lane);
        xMin = std::min(xMin, start);
        xMax = std::max(xMax, start);

        // How long it ran: a short thick bar from start to finish (none when it finished at
        // 'infinity': it has no duration).
        const double finish = a.finishedAt.isValid() && !display::isInfinite(a.finishedAt)
            ? keyOf(a.finishedAt)
            : start + a.durationMs.value_or(0) / 1e3;
        auto *bar = new QCPItemLine(this);
        bar->setLayer(QStringLiteral("bars"));
        bar->setPen(QPen(colour.lighter(130), 6, Qt::SolidLine, Qt::FlatCap));
        bar->start->setCoords(start, lane);
        bar->end->setCoords(std::max(finish, start), lane);
        xMax = std::max(xMax, finish);

        // The backoff that followed, up to where the next attempt really started.
        if (!a.backoffMs)
            continue;
        const bool nextOnAxis = i + 1 < n && m_attempts.at(i + 1).startedAt.isValid()
            && !display::isInfinite(m_attempts.at(i + 1).startedAt);
        const double gapEnd
            = nextOnAxis ? keyOf(m_attempts.at(i + 1).startedAt) : finish + *a.backoffMs / 1e3;
        auto *gap = new QCPItemLine(this);
        gap->setLayer(QStringLiteral("bars"));
        gap->setPen(QPen(QColor(0x80, 0x80, 0x80), 1.5, Qt::DashLine));
        gap->start->setCoords(finish, lane);
        gap->end->setCoords(gapEnd, lane);
        if (nextOnAxis) {
            auto *step = new QCPItemLine(this);
            step->setLayer(QStringLiteral("bars"));
            step->setPen(QPen(QColor(0xB0, 0xB0, 0xB0), 1, Qt::DotLine));
            step->start->setCoords(gapEnd, lane);
            step->end->setCoords(gapEnd, lane + 1);
        }
        auto *label = new QCPItemText(this);
        label->setLayer(QStringLiteral("bars"));
        label->position->setCoords(gapEnd, lane);
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
        label->setPadding(QMargins(6, 0, 0, 0));
        label->setColor(QColor(0x44, 0x44, 0x44));
        label->setText(tr("backoff %1").arg(display::duration(*a.backoffMs)));
        xMax = std::max(xMax, gapEnd);
    }

    for (QCPGraph *g : m_markerGraphs) {
        if (g->dataCount() > 0)
            g->addToLegend();
        else
            g->removeFromLegend();
    }
    m_offAxisNote.clear();
    if (!offAxis.isEmpty()) {
        m_offAxisNote = tr("Not on the time axis: %1").arg(offAxis.join(QStringLiteral(", ")));
        auto *note = new QCPItemText(this);
        note->position->setType(QCPItemPosition::ptAxisRectRatio);
        note->position->setCoords(0.01, 0.99);
        note->setPositionAlignment(Qt::AlignLeft | Qt::AlignBottom);
        note->setBrush(QColor(255, 255, 255, 220));
        note->setColor(QColor(0x44, 0x44, 0x44));
        note->setText(display::boundedText(m_offAxisNote, 200));
    }
    if (first) { // no attempt on the axis: the last minute, as with none at all
        xMax = keyOf(QDateTime::currentDateTimeUtc());
        xMin = xMax - 60;
    }
    const double span = std::max(xMax - xMin, 1.0);
    // Room on the left for the first marker and on the right for the last label.
    xAxis->setRange(xMin - span * 0.04, xMax + span * 0.22);
    yAxis->setRange(0.4, n + 0.6);
    replot(QCustomPlot::rpQueuedReplot);
}

void AttemptTimelinePlot::rebuildBuckets()
{
    // Attempts per bucket, one impulse line per kind at the bucket's middle: a few hundred
    // points whatever the number of attempts, and no item per attempt.
    if (qSharedPointerDynamicCast<QCPAxisTickerText>(yAxis->ticker())) {
        yAxis->setTicker(QSharedPointer<QCPAxisTicker>::create());
        yAxis->setRangeReversed(false);
        yAxis->setLabel(tr("Attempts per bucket"));
    }
    QList<QMap<double, double>> perKind(kKindCount);
    double xMin = 0;
    double xMax = 0;
    double yMax = 1;
    bool first = true;
    for (const DeadLetterCase::AttemptBucket &b : m_buckets) {
        const double from = keyOf(b.from);
        const double until = keyOf(b.until);
        const double middle = (from + until) / 2;
        const int kind = int(markerKind(b.outcome, b.errorClass));
        double &value = perKind[kind][middle];
        value += double(b.attempts);
        yMax = std::max(yMax, value);
        xMin = first ? from : std::min(xMin, from);
        xMax = first ? until : std::max(xMax, until);
        first = false;
    }
    for (int k = 0; k < kKindCount; ++k) {
        QCPGraph *g = m_markerGraphs.at(k);
        const MarkerStyle style = styleOf(MarkerKind(k));
        g->setLineStyle(QCPGraph::lsImpulse);
        g->setPen(QPen(style.colour, 2));
        g->setScatterStyle(
            QCPScatterStyle(style.shape, QPen(style.colour, 1.5), QBrush(style.colour), 5));
        QVector<double> keys;
        QVector<double> values;
        keys.reserve(perKind.at(k).size());
        values.reserve(perKind.at(k).size());
        for (auto it = perKind.at(k).cbegin(); it != perKind.at(k).cend(); ++it) {
            keys << it.key();
            values << it.value();
        }
        g->setData(keys, values, true);
        if (g->dataCount() > 0)
            g->addToLegend();
        else
            g->removeFromLegend();
    }
    addRequeueLines();
    const double span = std::max(xMax - xMin, 1.0);
    xAxis->setRange(xMin - span * 0.02, xMax + span * 0.05);
    yAxis->setRange(0, yMax * 1.1);
    replot(QCustomPlot::rpQueuedReplot);
}

void AttemptTimelinePlot::showToolTipAt(const QPoint &pos)
{
    if (m_bucketed) {
        QToolTip::hideText();
        return;
    }
    constexpr double kHitPixels = 10;
    int best = -1;
    double bestDistance = kHitPixels;
    for (int i = 0; i < m_attempts.size(); ++i) {
        if (display::isInfinite(m_attempts.at(i).startedAt))
            continue;
        const double x = xAxis->coordToPixel(keyOf(m_attempts.at(i).startedAt));
        const double y = yAxis->coordToPixel(i + 1);
        const double d = std::hypot(x - pos.x(), y - pos.y());
        if (d <= bestDistance) {
            bestDistance = d;
            best = i;
        }
    }
    if (best < 0) {
        QToolTip::hideText();
        return;
    }
    const DeadLetterCase::Attempt &a = m_attempts.at(best);
    QString text = tr("Attempt %1: %2\nStarted %3")
                       .arg(a.attemptNo)
                       .arg(markerName(markerKind(a.outcome, a.errorClass)),
                            display::time(a.startedAt, showUtc()));
    if (a.durationMs)
        text += tr("\nRan %1").arg(display::duration(*a.durationMs));
    if (!a.errorCode.isEmpty())
        text += tr("\nCode %1").arg(a.errorCode);
    if (!a.message.isEmpty())
        text += QLatin1Char('\n') + display::firstLine(a.message, nullptr, 200);
    if (a.backoffMs)
        text += tr("\nBackoff after it: %1").arg(display::duration(*a.backoffMs));
    QToolTip::showText(mapToGlobal(pos), display::plainToolTip(text), this);
}

} // namespace redrive
