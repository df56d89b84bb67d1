// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/dead_letter_case.h"
#include "views/time_axis_plot.h"

#include <QList>

namespace redrive {

/// The retry history of one job on a time axis: one lane per attempt, oldest at the
/// top; a marker at each attempt's start (colour and shape by outcome and error class), a short
/// bar for how long it ran, and a dashed line for the backoff that followed, labelled with the
/// delay chosen, up to where the next attempt started. The time axis ("Started") is
/// TimeAxisPlot's: local time with the UTC offset in its label, or UTC (setShowUtc()), the same
/// in the tooltips. The x axis can be dragged and zoomed with the mouse.
class AttemptTimelinePlot : public TimeAxisPlot
{
    Q_OBJECT
public:
    /// What a marker stands for; each has its own colour and shape and a legend entry.
    enum class MarkerKind {
        Succeeded,
        Transient, ///< failed, transient
        Permanent, ///< failed, permanent
        Ambiguous, ///< failed, ambiguous: the side effect may have happened
        Failed, ///< failed without an error class
        Conflict, ///< the idempotency key was held by another run
        Abandoned, ///< the worker vanished (lease expired)
    };

    explicit AttemptTimelinePlot(QWidget *parent = nullptr);

    /// Replaces the attempts (in the order given, oldest first) and replots (queued).
    void setAttempts(const QList<DeadLetterCase::Attempt> &attempts);
    /// The number of attempt markers plotted.
    int pointCount() const;

    static MarkerKind markerKind(const QString &outcome, const QString &errorClass);
    /// Translated legend text of a kind, e.g. "failed (transient)".
    static QString markerName(MarkerKind kind);

    QSize sizeHint() const override { return { 600, 220 }; }

private:
    void rebuild();
    void showToolTipAt(const QPoint &pos);

    QList<DeadLetterCase::Attempt> m_attempts;
    QList<QCPGraph *> m_markerGraphs; ///< one per MarkerKind
};

} // namespace redrive
