// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/overview_plot.h"

#include "models/display_format.h"
#include "models/time_buckets.h"

#include <QFontMetrics>
#include <QMap>
#include <QResizeEvent>
#include <algorithm>
#include <cmath>

namespace redrive {

namespace {

/// How many characters of a kind or a message a group's label on the axis holds before it is
/// elided to the plot's width.
constexpr qsizetype kMaxLabelChars = 300;

struct Series
{
    const char *name;
    QColor color;
};

// Colour-blind-safe colours (Okabe-Ito), the same word always the same colour.
QList<Series> errorClasses()
{
    return { { "transient", QColor(0x56, 0xb4, 0xe9) },
             { "permanent", QColor(0xd5, 0x5e, 0x00) },
             { "ambiguous", QColor(0x88, 0x4e, 0xa0) } };
}

QList<Series> outcomes()
{
    return { { "succeeded", QColor(0x00, 0x9e, 0x73) },
             { "failed", QColor(0xd5, 0x5e, 0x00) },
             { "conflict", QColor(0xe6, 0x9f, 0x00) },
             { "abandoned", QColor(0x7f, 0x7f, 0x7f) } };
}

QList<Series> openResolved()
{
    return { { "arrived", QColor(0xd5, 0x5e, 0x00) }, { "resolved", QColor(0x00, 0x9e, 0x73) } };
}

QString bucketText(qint64 ms)
{
    const qint64 minutes = ms / 60000;
    if (minutes < 60)
        return QObject::tr("%n min", nullptr, int(minutes));
    if (minutes < 24 * 60)
        return minutes % 60 == 0 ? QObject::tr("%n h", nullptr, int(minutes / 60))
                                 : QObject::tr("%1 min").arg(minutes);
    return QObject::tr("%n d", nullptr, int(minutes / (24 * 60)));
}

QSharedPointer<QCPAxisTickerFixed> wholeNumberTicker()
{
    QSharedPointer<QCPAxisTickerFixed> ticker(new QCPAxisTickerFixed);
    ticker->setTickStep(1.0);
    ticker->setScaleStrategy(QCPAxisTickerFixed::ssMultiples);
    ticker->setTickCount(5);
    return ticker;
}

} // namespace

OverviewPlot::OverviewPlot(Chart chart, QWidget *parent)
    : TimeAxisPlot(parent)
    , m_chart(chart)
{
    setMinimumSize(280, 200);
    setNoAntialiasingOnDrag(true);
    QFont titleFont = font();
    titleFont.setBold(true);
    titleFont.setPointSizeF(font().pointSizeF() + 1);
    m_title = new QCPTextElement(this, QString(), titleFont);
    plotLayout()->insertRow(0);
    plotLayout()->addElement(0, 0, m_title);

    // The legend goes under the chart, in one centred line, so it never hides a bar.
    axisRect()->insetLayout()->take(legend);
    auto *legendRow = new QCPLayoutGrid;
    plotLayout()->addElement(2, 0, legendRow);
    legendRow->addElement(0, 0, new QCPLayoutElement(this));
    legendRow->addElement(0, 1, legend);
    legendRow->addElement(0, 2, new QCPLayoutElement(this));
    legendRow->setColumnStretchFactor(0, 1);
    legendRow->setColumnStretchFactor(1, 0.001);
    legendRow->setColumnStretchFactor(2, 1);
    plotLayout()->setRowStretchFactor(0, 0.001);
    plotLayout()->setRowStretchFactor(2, 0.001);
    legend->setVisible(true);
    legend->setFillOrder(QCPLegend::foColumnsFirst);
    legend->setBorderPen(Qt::NoPen);
    legend->setBrush(Qt::NoBrush);
    legend->setMargins(QMargins(4, 0, 4, 2));
    legend->setRowSpacing(0);
    legend->setColumnSpacing(12);

    m_note = new QCPItemText(this);
    m_note->position->setType(QCPItemPosition::ptAxisRectRatio);
    m_note->position->setCoords(0.5, 0.5);
    m_note->setPositionAlignment(Qt::AlignCenter);
    m_note->setColor(QColor(0x55, 0x55, 0x55));
    m_note->setVisible(false);

    if (isTimeChart())
        setUpTimeChart();
    else
        setUpFailureGroups();
}

QCPBars *OverviewPlot::addBars(const QString &name, const QColor &color, QCPAxis *keyAxis,
                               QCPAxis *valueAxis)
{
    auto *bars = new QCPBars(keyAxis, valueAxis);
    bars->setName(name);
    bars->setPen(Qt::NoPen);
    bars->setBrush(color);
    bars->setWidthType(QCPBars::wtPlotCoords);
    bars->setStackingGap(0);
    m_bars.insert(name, bars);
    m_order << name;
    return bars;
}

QCPGraph *OverviewPlot::addLine(const QString &name, const QColor &color)
{
    QCPGraph *graph = QCustomPlot::addGraph(xAxis, yAxis);
    graph->setName(name);
    QPen pen(color);
    pen.setWidthF(1.6);
    graph->setPen(pen);
    graph->setAntialiased(true);
    m_graphs.insert(name, graph);
    m_order << name;
    return graph;
}

void OverviewPlot::setUpTimeChart()
{
    setUpTimeAxis(tr("Time"));
    yAxis->setTicker(wholeNumberTicker());
    yAxis->setRange(0, 1);
    setInteractions(QCP::iRangeDrag | QCP::iRangeZoom);
    axisRect()->setRangeDrag(Qt::Horizontal);
    axisRect()->setRangeZoom(Qt::Horizontal);
    axisRect()->setRangeZoomFactor(0.8);

    switch (m_chart) {
    case Chart::DeadLettersByClass: {
        m_title->setText(tr("Dead letters by error class"));
        yAxis->setLabel(tr("Dead letters"));
        QCPBars *below = nullptr;
        for (const Series &s : errorClasses()) {
            QCPBars *bars = addBars(QString::fromLatin1(s.name), s.color, xAxis, yAxis);
            if (below)
                bars->moveAbove(below); // stacked: transient, then permanent, then ambiguous
            below = bars;
        }
        break;
    }
    case Chart::AttemptOutcomes:
        m_title->setText(tr("Attempt outcomes"));
        yAxis->setLabel(tr("Attempts"));
        for (const Series &s : outcomes())
            addLine(QString::fromLatin1(s.name), s.color);
        break;
    case Chart::OpenResolved:
        m_title->setText(tr("Dead letters arrived vs resolved"));
        yAxis->setLabel(tr("Dead letters"));
        for (const Series &s : openResolved()) {
            QCPGraph *graph = addLine(QString::fromLatin1(s.name), s.color);
            QColor fill = s.color;
            fill.setAlpha(40);
            graph->setBrush(fill);
        }
        break;
    case Chart::TopFailureGroups:
        break;
    }
    connect(xAxis, qOverload<const QCPRange &>(&QCPAxis::rangeChanged), this,
            &OverviewPlot::onRangeChanged);
    const QDateTime now = QDateTime::currentDateTimeUtc();
    setTimeRange(now.addSecs(-24 * 3600), now);
}

void OverviewPlot::setUpFailureGroups()
{
    m_title->setText(tr("Top failure groups (all dead letters)"));
    for (const Series &s : errorClasses())
        addBars(QString::fromLatin1(s.name), s.color, yAxis, xAxis)->setWidth(0.7);
    m_groupTicker.reset(new QCPAxisTickerText);
    yAxis->setTicker(m_groupTicker);
    yAxis->setRangeReversed(true); // the largest group on top
    yAxis->setSubTicks(false);
    yAxis->setTickLength(0, 4);
    yAxis->grid()->setVisible(false);
    yAxis->setRange(0.4, 1.6);
    xAxis->setTicker(wholeNumberTicker());
    xAxis->setLabel(tr("Dead letters"));
    xAxis->setRange(0, 1);
}

void OverviewPlot::setTimeRange(const QDateTime &from, const QDateTime &to)
{
    if (!isTimeChart())
        return;
    m_settingRange = true;
    xAxis->setRange(keyOf(from), keyOf(to));
    m_settingRange = false;
}

void OverviewPlot::onRangeChanged(const QCPRange &range)
{
    if (!m_settingRange)
        Q_EMIT visibleRangeChanged(instantOf(range.lower), instantOf(range.upper));
}

void OverviewPlot::setBuckets(const db::ResultSet &rows, const QList<QDateTime> &starts,
                              const QDateTime &end, qint64 bucketMs)
{
    if (!isTimeChart() || bucketMs <= 0 || starts.isEmpty())
        return;
    m_bucketMs = bucketMs;
    m_bucketCount = int(starts.size());
    m_dataFrom = starts.constFirst();
    m_dataTo = end;
    // Each bucket's centre, from its own start and end (a day across a DST change is 23 or 25
    // hours).
    QVector<double> keys(m_bucketCount);
    for (int i = 0; i < m_bucketCount; ++i) {
        const qint64 from = starts.at(i).toMSecsSinceEpoch();
        const qint64 to = (i + 1 < m_bucketCount ? starts.at(i + 1) : end).toMSecsSinceEpoch();
        keys[i] = keyOfMs(from) + double(to - from) / 2000.0;
    }
    const double width = double(bucketMs) / 1000.0;

    qint64 total = 0;
    if (m_chart == Chart::DeadLettersByClass) {
        QHash<QString, QVector<QCPBarsData>> data;
        for (int r = 0; r < rows.rowCount(); ++r) {
            const int i = time_buckets::indexOf(starts, end, rows.timestamp(r, 0));
            const qint64 n = rows.bigInt(r, 2).value_or(0);
            if (i < 0)
                continue;
            data[rows.text(r, 1)].append(QCPBarsData(keys[i], double(n)));
            total += n;
        }
        for (auto it = m_bars.begin(); it != m_bars.end(); ++it) {
            it.value()->setWidth(width * 0.85);
            it.value()->data()->set(data.value(it.key()), true);
        }
    } else {
        // Lines: every bucket gets a point, empty ones 0, so a quiet hour reads as 0.
        QHash<QString, QVector<double>> values;
        for (const QString &name : std::as_const(m_order))
            values.insert(name, QVector<double>(m_bucketCount, 0.0));
        auto add = [&](const QString &name, const QDateTime &start, qint64 n) {
            const int i = time_buckets::indexOf(starts, end, start);
            auto it = values.find(name);
            if (it == values.end() || i < 0)
                return;
            (*it)[i] += double(n);
            total += n;
        };
        for (int r = 0; r < rows.rowCount(); ++r) {
            const QDateTime start = rows.timestamp(r, 0);
            if (m_chart == Chart::AttemptOutcomes) {
                add(rows.text(r, 1), start, rows.bigInt(r, 2).value_or(0));
            } else {
                add(QStringLiteral("arrived"), start, rows.bigInt(r, 1).value_or(0));
                add(QStringLiteral("resolved"), start, rows.bigInt(r, 2).value_or(0));
            }
        }
        for (auto it = m_graphs.begin(); it != m_graphs.end(); ++it)
            it.value()->setData(keys, values.value(it.key()), true);
    }
    const QString title = m_chart == Chart::DeadLettersByClass ? tr("Dead letters by error class")
        : m_chart == Chart::AttemptOutcomes                    ? tr("Attempt outcomes")
                                            : tr("Dead letters arrived vs resolved");
    m_title->setText(tr("%1 · per %2").arg(title, bucketText(bucketMs)));
    rescaleValues();
    if (total == 0)
        setNote(m_chart == Chart::AttemptOutcomes ? tr("No attempts in this range")
                                                  : tr("No dead letters in this range"));
    else
        setNote({});
    replot(rpQueuedReplot);
}

void OverviewPlot::rescaleValues()
{
    double max = 0;
    if (m_chart == Chart::DeadLettersByClass) {
        QMap<double, double> stacked;
        for (QCPBars *bars : std::as_const(m_bars)) {
            for (auto it = bars->data()->constBegin(); it != bars->data()->constEnd(); ++it)
                stacked[it->key] += it->value;
        }
        for (double v : std::as_const(stacked))
            max = std::max(max, v);
    } else {
        for (QCPGraph *graph : std::as_const(m_graphs)) {
            for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it)
                max = std::max(max, it->value);
        }
    }
    yAxis->setRange(0, std::max(1.0, std::ceil(max * 1.1)));
}

void OverviewPlot::setFailureGroups(const db::ResultSet &rows)
{
    if (m_chart != Chart::TopFailureGroups)
        return;
    for (QCPItemText *label : std::as_const(m_countLabels))
        removeItem(label);
    m_countLabels.clear();
    m_groupTexts.clear();
    const int kind = rows.columnIndex(QStringLiteral("kind"));
    const int errorClass = rows.columnIndex(QStringLiteral("error_class"));
    const int sample = rows.columnIndex(QStringLiteral("sample_message"));
    const int count = rows.columnIndex(QStringLiteral("dead_letters"));
    const int open = rows.columnIndex(QStringLiteral("open_dead_letters"));
    QHash<QString, QVector<QCPBarsData>> data;
    double max = 0;
    for (int r = 0; r < rows.rowCount(); ++r) {
        const double key = r + 1;
        const qint64 n = rows.bigInt(r, count).value_or(0);
        data[rows.text(r, errorClass)].append(QCPBarsData(key, double(n)));
        max = std::max(max, double(n));
        // A bounded prefix, invisible controls shown as markers: relabelGroups() elides it on
        // every resize, and a megabyte-long message took seconds each time
        // (docs/security.md#text-from-the-database-is-plain-text).
        bool cut = false;
        const QString prefix
            = rows.textPrefix(r, sample, display::kMaxCellChars * 4, &cut).simplified();
        QString message = cut
            ? display::boundedParts(prefix, kMaxLabelChars).shown + QStringLiteral(" \u2026")
            : display::boundedText(prefix, kMaxLabelChars);
        if (message.isEmpty())
            message = tr("(no message)");
        m_groupTexts << tr("%1: %2").arg(display::boundedText(rows.text(r, kind), kMaxLabelChars),
                                         message);
        auto *label = new QCPItemText(this);
        label->position->setType(QCPItemPosition::ptPlotCoords);
        label->position->setAxes(xAxis, yAxis);
        label->position->setCoords(double(n), key);
        label->setPositionAlignment(Qt::AlignLeft | Qt::AlignVCenter);
        label->setPadding(QMargins(4, 0, 0, 0));
        label->setText(tr("%1 (%2 open)").arg(n).arg(rows.bigInt(r, open).value_or(0)));
        label->setColor(QColor(0x33, 0x33, 0x33));
        m_countLabels << label;
    }
    for (auto it = m_bars.begin(); it != m_bars.end(); ++it)
        it.value()->data()->set(data.value(it.key()), true);
    m_groupMax = max;
    yAxis->setRange(0.4, std::max(1, rows.rowCount()) + 0.6);
    relabelGroups();
    setNote(rows.rowCount() == 0 ? tr("No dead letters") : QString());
    replot(rpQueuedReplot);
}

void OverviewPlot::relabelGroups()
{
    if (!m_groupTicker)
        return;
    const QFontMetrics metrics(yAxis->tickLabelFont());
    const int maxWidth = std::max(80, int(width() * 0.42));
    m_groupLabels.clear();
    QMap<double, QString> ticks;
    for (int i = 0; i < m_groupTexts.size(); ++i) {
        const QString label = metrics.elidedText(m_groupTexts.at(i), Qt::ElideRight, maxWidth);
        m_groupLabels << label;
        ticks.insert(i + 1, label);
    }
    m_groupTicker->setTicks(ticks);

    // Leave room right of the longest bar for its count label: the data area is the plot
    // less the group labels and margins; the value range grows so the label fits beside it.
    int labelsWidth = 0;
    for (const QString &label : std::as_const(m_groupLabels))
        labelsWidth = std::max(labelsWidth, metrics.horizontalAdvance(label));
    int countWidth = 0;
    const QFontMetrics countMetrics(font());
    for (const QCPItemText *label : std::as_const(m_countLabels))
        countWidth = std::max(countWidth, countMetrics.horizontalAdvance(label->text()));
    const int dataWidth = std::max(60, width() - labelsWidth - 40);
    const int barWidth = std::max(20, dataWidth - countWidth - 16);
    xAxis->setRange(0, std::max(1.0, m_groupMax * double(dataWidth) / double(barWidth)));
}

void OverviewPlot::resizeEvent(QResizeEvent *event)
{
    QCustomPlot::resizeEvent(event);
    if (m_chart == Chart::TopFailureGroups && event->size().width() != event->oldSize().width()) {
        relabelGroups();
        replot(rpQueuedReplot);
    }
}

void OverviewPlot::setNote(const QString &note)
{
    m_note->setText(note);
    m_note->setVisible(!note.isEmpty());
    replot(rpQueuedReplot);
}

QString OverviewPlot::note() const
{
    return m_note->visible() ? m_note->text() : QString();
}

QStringList OverviewPlot::seriesNames() const
{
    return m_order;
}

double OverviewPlot::seriesTotal(const QString &name) const
{
    double sum = 0;
    if (QCPBars *bars = m_bars.value(name)) {
        for (auto it = bars->data()->constBegin(); it != bars->data()->constEnd(); ++it)
            sum += it->value;
    } else if (QCPGraph *graph = m_graphs.value(name)) {
        for (auto it = graph->data()->constBegin(); it != graph->data()->constEnd(); ++it)
            sum += it->value;
    }
    return sum;
}

QStringList OverviewPlot::groupLabels() const
{
    return m_groupLabels;
}

QStringList OverviewPlot::groupTexts() const
{
    return m_groupTexts;
}

} // namespace redrive
