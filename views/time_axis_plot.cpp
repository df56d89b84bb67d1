// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/time_axis_plot.h"

#include <QTimeZone>
#include <cmath>

namespace redrive {

namespace {

constexpr double kSecondsTicksUpTo = 30 * 60; // visible span (s) up to which ticks show seconds
constexpr double kDatesOnlyFrom = 10 * 86400; // visible span (s) from which ticks are dates only
constexpr double kYear = 365.25 * 86400; // an average year (s)
constexpr double kMonthsFrom = kYear; // visible span (s) from which ticks are months of a year
constexpr double kYearsFrom = 10 * kYear; // visible span (s) from which ticks are years
const QString kDayFormat = QStringLiteral("d MMM");
const QString kMonthFormat = QStringLiteral("MMM yyyy");
const QString kYearFormat = QStringLiteral("yyyy");

} // namespace

/// QCPAxisTickerDateTime that adds the date under the first visible tick and under every tick
/// on a new day (in the ticker's zone), unless the format already is a date.
class DayMarkingTicker : public QCPAxisTickerDateTime
{
public:
    /// The first visible key: ticks before it (QCustomPlot keeps one outside the range) are
    /// not drawn, so the first one at or after it carries the date.
    void setVisibleLower(double key) { m_visibleLower = key; }

protected:
    QVector<QString> createLabelVector(const QVector<double> &ticks, const QLocale &locale, QChar,
                                       int) override
    {
        QVector<QString> labels;
        labels.reserve(ticks.size());
        // Only a time of day needs its date under it; a format with a day, month or year has it.
        const bool markDays = mDateTimeFormat.startsWith(QLatin1String("HH"));
        QDate previous;
        for (const double tick : ticks) {
            const QDateTime at = TimeAxisPlot::instantOf(tick).toTimeZone(mTimeZone);
            QString label = at.date().year() > 0 ? locale.toString(at, mDateTimeFormat)
                                                 : yearBcLabel(at, locale);
            if (markDays && tick >= m_visibleLower) {
                if (at.date() != previous)
                    label += QLatin1Char('\n') + locale.toString(at.date(), kDayFormat);
                previous = at.date();
            }
            labels << label;
        }
        return labels;
    }

private:
    // A tick in a year before 1: the same format with the year as its number BC ("4713 BC").
    QString yearBcLabel(const QDateTime &at, const QLocale &locale) const
    {
        const QDate ad(-at.date().year(), at.date().month(), at.date().day());
        return locale.toString(QDateTime(ad, at.time(), at.timeZone()), mDateTimeFormat)
            + QStringLiteral(" BC");
    }

    double m_visibleLower = 0;
};

TimeAxisPlot::TimeAxisPlot(QWidget *parent)
    : QCustomPlot(parent)
{ }

double TimeAxisPlot::keyOf(const QDateTime &instant)
{
    return keyOfMs(instant.toMSecsSinceEpoch());
}

double TimeAxisPlot::keyOfMs(qint64 msSinceEpoch)
{
    return double(msSinceEpoch) / 1000.0;
}

QDateTime TimeAxisPlot::instantOf(double key)
{
    return QDateTime::fromMSecsSinceEpoch(qint64(std::llround(key * 1000.0)), QTimeZone::utc());
}

QString TimeAxisPlot::offsetLabel(int offsetSeconds)
{
    const int minutes = std::abs(offsetSeconds) / 60;
    return QStringLiteral("UTC%1%2:%3")
        .arg(offsetSeconds < 0 ? QLatin1Char('-') : QLatin1Char('+'))
        .arg(minutes / 60, 2, 10, QLatin1Char('0'))
        .arg(minutes % 60, 2, 10, QLatin1Char('0'));
}

QString TimeAxisPlot::tickFormat(double spanSeconds)
{
    if (spanSeconds <= kSecondsTicksUpTo)
        return QStringLiteral("HH:mm:ss");
    if (spanSeconds < kDatesOnlyFrom)
        return QStringLiteral("HH:mm");
    if (spanSeconds < kMonthsFrom)
        return kDayFormat;
    if (spanSeconds < kYearsFrom)
        return kMonthFormat;
    return kYearFormat;
}

void TimeAxisPlot::setUpTimeAxis(const QString &caption)
{
    m_caption = caption;
    m_ticker = QSharedPointer<DayMarkingTicker>::create();
    m_ticker->setTickCount(6);
    xAxis->setTicker(m_ticker);
    connect(xAxis, qOverload<const QCPRange &>(&QCPAxis::rangeChanged), this,
            &TimeAxisPlot::updateTimeAxis);
    updateTimeAxis();
}

void TimeAxisPlot::setShowUtc(bool utc)
{
    if (utc == m_showUtc)
        return;
    m_showUtc = utc;
    if (!hasTimeAxis())
        return;
    updateTimeAxis();
    replot(rpQueuedReplot);
}

QDateTime TimeAxisPlot::visibleFrom() const
{
    return instantOf(xAxis->range().lower);
}

QDateTime TimeAxisPlot::visibleTo() const
{
    return instantOf(xAxis->range().upper);
}

void TimeAxisPlot::updateTimeAxis()
{
    if (!m_ticker)
        return;
    const QCPRange range = xAxis->range();
    m_ticker->setDateTimeFormat(tickFormat(range.size()));
    m_ticker->setVisibleLower(range.lower);
    if (m_showUtc) {
        m_ticker->setTimeZone(QTimeZone::utc());
        m_ticker->setTickOrigin(0.0);
        xAxis->setLabel(tr("%1 (UTC)").arg(m_caption));
        return;
    }
    const QTimeZone zone = QTimeZone::systemTimeZone();
    // The offset in force at the middle of the range (it can change across a DST switch); ticks
    // counted from local midnight fall on whole local hours and minutes.
    const int offset = zone.offsetFromUtc(instantOf(range.center()));
    m_ticker->setTimeZone(zone);
    m_ticker->setTickOrigin(-double(offset));
    xAxis->setLabel(tr("%1 (local time, %2)").arg(m_caption, offsetLabel(offset)));
}

} // namespace redrive
