// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/requeue_follow_up_bar.h"

#include "models/console_reads.h"
#include "models/display_format.h"

#include <QStringList>
#include <QTimer>

namespace redrive {

RequeueFollowUpBar::RequeueFollowUpBar(QWidget *parent)
    : QLabel(parent)
    , m_timer(new QTimer(this))
{
    setWordWrap(true);
    setTextInteractionFlags(Qt::TextSelectableByMouse);
    setToolTip(tr("Where the dead letters of your last requeue are now: waiting for the worker "
                  "to pick the requeue up, in flight (queued or running again), succeeded after "
                  "the requeue, or dead again (open, in the list again)."));
    m_timer->setInterval(kPollMs);
    connect(m_timer, &QTimer::timeout, this, &RequeueFollowUpBar::poll);
    hide();
}

void RequeueFollowUpBar::follow(db::DatabaseSession *session, const QList<qint64> &ids)
{
    m_session = session;
    m_ids = ids;
    ++m_generation;
    if (ids.isEmpty() || !session) {
        m_timer->stop();
        hide();
        return;
    }
    setText(tr("Requeue of %L1: reading where they went…").arg(ids.size()));
    show();
    poll();
    m_timer->start();
}

QString RequeueFollowUpBar::describe(qint64 count, const reads::RequeueFollowUp &f)
{
    QStringList parts;
    if (f.waiting > 0)
        parts << tr("%L1 waiting for the worker").arg(f.waiting);
    if (f.inFlight > 0)
        parts << tr("%L1 in flight").arg(f.inFlight);
    if (f.succeeded > 0)
        parts << tr("%L1 succeeded after requeue").arg(f.succeeded);
    if (f.deadAgain > 0)
        parts << tr("%L1 dead again").arg(f.deadAgain);
    if (f.requeueFailed > 0)
        parts << tr("%L1 could not be requeued").arg(f.requeueFailed);
    if (f.elsewhere > 0)
        parts << tr("%L1 changed otherwise").arg(f.elsewhere);
    QString text = tr("Requeue of %L1: %2").arg(count).arg(parts.join(QStringLiteral(" \u00b7 ")));
    if (f.settled())
        text += tr(" \u2014 settled");
    return text;
}

void RequeueFollowUpBar::poll()
{
    if (!m_session || m_ids.isEmpty())
        return;
    reads::requeueFollowUp(
        m_session, this, m_ids,
        [this, generation = m_generation](const db::DbExpected<reads::RequeueFollowUp> &f) {
            if (generation != m_generation)
                return;
            if (!f) {
                setText(tr("Requeue of %L1: could not read where they went "
                           "(%2); trying again.")
                            .arg(m_ids.size())
                            .arg(f.error().message()));
                return;
            }
            setText(describe(m_ids.size(), *f));
            if (f->settled())
                m_timer->stop();
            Q_EMIT updated();
        });
}

} // namespace redrive
