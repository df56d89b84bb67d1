// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/dead_letter_case.h"
#include "views/time_axis_plot.h"

#include <QList>
#include <QStringList>
#include <optional>

namespace redrive {

/// The retry history of one job on a time axis: one lane per attempt, oldest at the
/// top; a marker at each attempt's start (colour and shape by outcome and error class), a short
/// bar for how long it ran, and a dashed line for the backoff that followed, labelled with the
/// delay chosen, up to where the next attempt started. The time axis ("Started") is
/// TimeAxisPlot's: local time with the UTC offset in its label, or UTC (setShowUtc()), the same
/// in the tooltips. The x axis can be dragged and zoomed with the mouse.
/// With more attempts than the plot has pixels, it draws instead the server's buckets
/// (setBuckets()): attempts per time bucket, one line per kind, so tens of thousands of attempts
/// make a few hundred points and no items. Each requeue is a vertical line labelled with who
/// requeued (setRounds()).
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

    /// Shows that the attempts are on their way ("Loading the attempts…"), drawing nothing:
    /// the state from construction until setAttempts() or setBuckets().
    void setLoading();
    /// Shows that the attempts could not be read ("The attempts could not be loaded"); the
    /// reason is shown by whoever asked (the case view's banner).
    void setFailed();
    /// Replaces the attempts (in the order given, oldest first) and replots (queued); "No
    /// attempts recorded" when the list is empty, and only then.
    void setAttempts(const QList<DeadLetterCase::Attempt> &attempts);
    /// Replaces what is drawn by attempts counted per time bucket (any order) and replots.
    void setBuckets(const QList<DeadLetterCase::AttemptBucket> &buckets);
    /// The requeues to mark (rounds after the first), drawn in either mode.
    void setRounds(const QList<DeadLetterCase::Round> &rounds);
    /// True while buckets are drawn rather than each attempt.
    bool isBucketed() const { return m_bucketed; }
    /// The number of points plotted: attempt markers, or non-empty (bucket, kind) pairs.
    int pointCount() const;
    /// The number of points plotted of one kind (markers, or non-empty buckets).
    int pointCount(MarkerKind kind) const;
    /// The attempts drawn: one per marker, or the buckets' counts summed; of one kind, or of
    /// every kind when `kind` is empty.
    qint64 plottedAttempts(std::optional<MarkerKind> kind = std::nullopt) const;
    /// The texts of the plot's text items (labels and notes, "No attempts recorded").
    QStringList itemTexts() const;
    /// The number of plot items (bars, lines, labels): bounded in bucket mode.
    int itemsDrawn() const { return itemCount(); }
    /// The note under the plot naming the attempts that started at 'infinity' or '-infinity'
    /// and so have no marker ("Not on the time axis: #1 at −∞, #5 at ∞"); empty when every
    /// attempt is drawn (docs/domain.md "Times at the ends of the range").
    QString offAxisNote() const { return m_offAxisNote; }

    static MarkerKind markerKind(const QString &outcome, const QString &errorClass);
    /// Translated legend text of a kind, e.g. "failed (transient)".
    static QString markerName(MarkerKind kind);

    QSize sizeHint() const override { return { 600, 220 }; }

private:
    void rebuild();
    void rebuildBuckets();
    void showToolTipAt(const QPoint &pos);

    void addRequeueLines();

    QList<DeadLetterCase::Attempt> m_attempts;
    QList<DeadLetterCase::AttemptBucket> m_buckets;
    QList<DeadLetterCase::Round> m_rounds;
    bool m_bucketed = false;
    enum class State { Loading, Loaded, Failed };
    State m_state = State::Loading;
    QString m_offAxisNote;
    QList<QCPGraph *> m_markerGraphs; ///< one per MarkerKind
};

} // namespace redrive
