// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/connection_settings.h"
#include "models/db/db_error.h"
#include "models/db/pg_connection.h"

#include <QMutex>
#include <QObject>
#include <atomic>
#include <functional>
#include <optional>

class QThread;

namespace redrive {

/// A long piece of database work for the console (verifying the audit chain, exporting it) run
/// blocking, the way the command line runs it, on a connection of its own in a thread of its
/// own: the console's session stays free for the operator and the GUI thread never waits
/// (docs/architecture.md#threading). Reports progress, can be canceled (a flag the work reads
/// between steps, and a PQcancel for the statement on its way), and ends with finished() or
/// failed() on the thread that owns the job. Subclasses start it with launch().
class ConnectionJob : public QObject
{
    Q_OBJECT
public:
    /// Cancels a running job and waits for its thread (stopAndWait()).
    ~ConnectionJob() override;

    bool isRunning() const { return m_running; }
    /// Stops the job: the flag is set and the statement running now canceled on the server;
    /// finished() follows with canceled set.
    void cancel();

Q_SIGNALS:
    /// `done` of `total` (-1 until known) steps, entries for the audit jobs.
    void progress(qint64 done, qint64 total);
    /// The job ended: complete, or canceled.
    void finished(bool canceled);
    /// It could not run to the end: no connection, a statement or a write failed.
    void failed(const redrive::db::DbError &error);

protected:
    explicit ConnectionJob(QObject *parent = nullptr);

    /// What runs in the job's thread with its open connection: nullopt when it completed, else
    /// why not (ErrorKind::Canceled when it stopped for cancel()).
    using Work = std::function<std::optional<db::DbError>(db::PgConnection &connection)>;
    /// Opens a connection with `settings` in a new thread named `threadName` and runs `work` on
    /// it. Returns false (and runs nothing) while the job runs.
    bool launch(const db::ConnectionSettings &settings, const QString &threadName, Work work);
    /// Cancels a running job and waits for its thread. A subclass whose members the work uses
    /// calls it from its own destructor, before they go.
    void stopAndWait();
    /// From the work's thread: progress() on the job's thread.
    void postProgress(qint64 done, qint64 total);
    /// Set by cancel(); the work reads it between steps.
    const std::atomic<bool> &cancelFlag() const { return m_cancel; }
    /// On the job's thread, when the work completed: emits finished(false). A subclass that
    /// has more to do (commit a file) overrides it and emits finished() or failed() itself.
    virtual void completed();
    /// On the job's thread, when the work failed or was canceled (`why`), before failed() or
    /// finished(true): a subclass drops what it left half done.
    virtual void abandoned(const db::DbError &why) { Q_UNUSED(why) }

private:
    void deliver(quint64 generation, const std::optional<db::DbError> &error);

    QThread *m_thread = nullptr;
    std::atomic<bool> m_cancel { false };
    QMutex m_cancelMutex;
    db::CancelHandle m_cancelHandle; // guarded by m_cancelMutex
    quint64 m_generation = 0;
    bool m_running = false;
};

} // namespace redrive
