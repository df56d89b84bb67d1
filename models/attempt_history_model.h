// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/keyset_page_model.h"

#include <QDateTime>

namespace redrive {

/// The retry history of one dead letter for the case view, newest first and keyset-paginated
/// (Statement::AttemptHistoryPage), so a job with tens of thousands of attempts opens with one
/// page and scrolls page by page in bounded memory; the total comes from
/// Statement::AttemptHistoryCount. The list holds the attempts and, between them, a marker row
/// for each applied requeue (who, when, the action id the audit log shows, whether the attempt
/// counter was reset); each attempt is numbered by round (docs/domain.md#a-requeues-story).
class AttemptHistoryModel : public KeysetPageModel
{
    Q_OBJECT
public:
    enum Column {
        Round,
        Attempt, ///< the attempt's number in its round
        JobAttempt, ///< attempt_no as the queue counts it
        Started,
        Duration,
        Outcome,
        ErrorClass,
        Code,
        Message,
        Worker,
        Backoff,
    };
    static constexpr int kPageSize = 200;
    static constexpr qint64 kCountCap = 10000000;

    /// `session` must outlive the model. Nothing loads until setDeadLetter().
    AttemptHistoryModel(db::DatabaseSession *session, QObject *parent = nullptr,
                        int pageSize = kPageSize);

    /// Shows the history of `deadLetterId` from its newest row (also a reload).
    void setDeadLetter(qint64 deadLetterId);
    /// When the attempt in `row` started, or when its requeue was applied (UTC); invalid when
    /// out of range.
    QDateTime at(int row) const;
    /// True when `row` is a requeue marker rather than an attempt.
    bool isRequeueMarker(int row) const;
    /// "Requeued by demo_oncall · attempt counter reset · action 0d3c…" for a marker row; the
    /// action id whole, for the audit log's search.
    QString markerText(int row) const;

    /// What the attempt pane shows of one attempt: its message and stack trace, each at most
    /// kShownChars characters, and the bytes of each left out (0 when whole).
    struct AttemptText
    {
        QString message;
        QString stackTrace;
        qint64 messageCutBytes = 0;
        qint64 stackTraceCutBytes = 0;
    };
    /// Characters of a message or stack trace the attempt pane reads (the page sends
    /// kPageChars; docs/architecture.md#long-values-in-lists).
    static constexpr qsizetype kShownChars = 1000000;
    static constexpr qsizetype kPageChars = 2000;
    /// The page's text of the attempt in `row` (its first kPageChars characters of each).
    AttemptText pageText(int row) const;
    /// Reads the first kShownChars characters of each text of the attempt in `row`, found by its
    /// id and start (attempt_text.sql, through the role-checked view: the id alone may name
    /// another attempt); `done` gets them on `context`'s thread, or the error; nothing when
    /// `context` is gone.
    void readText(int row, QObject *context,
                  std::function<void(const db::DbExpected<AttemptText> &)> done) const;

protected:
    void appendFilterParams(db::QueryParams &params) const override;

private:
    qint64 m_deadLetterId = 0;
};

} // namespace redrive
