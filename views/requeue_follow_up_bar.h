// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QLabel>
#include <QList>

class QTimer;

namespace redrive {

namespace db {
class DatabaseSession;
}
namespace reads {
struct RequeueFollowUp;
}

/// A line above the dead-letter list that follows the operator's last requeue to its outcome
/// (docs/domain.md#failure-groups), so the list does not just empty: "Requeue of 25: 3 waiting
/// for the worker · 2 in flight · 18 succeeded after requeue · 2 dead again". It re-reads every
/// kPollMs while something is waiting or in flight, then says the requeue has settled and stops.
/// Hidden until the first requeue; the close button hides it again.
class RequeueFollowUpBar : public QLabel
{
    Q_OBJECT
public:
    static constexpr int kPollMs = 2000;

    explicit RequeueFollowUpBar(QWidget *parent = nullptr);

    /// Follows dead letters `ids` (the targets a requeue applied to), read through `session`
    /// (which must outlive this bar or the next follow()).
    void follow(db::DatabaseSession *session, const QList<qint64> &ids);
    /// The sentence for `f` about a requeue of `count` dead letters.
    static QString describe(qint64 count, const reads::RequeueFollowUp &f);

Q_SIGNALS:
    /// A new count arrived (for tests and for views that follow the same requeue).
    void updated();

private:
    void poll();

    db::DatabaseSession *m_session = nullptr;
    QList<qint64> m_ids;
    QTimer *m_timer = nullptr;
    quint64 m_generation = 0;
};

} // namespace redrive
