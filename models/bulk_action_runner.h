// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/db_error.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QSet>
#include <QStringList>
#include <QUuid>

namespace redrive {

namespace db {
class DatabaseSession;
class ResultSet;
} // namespace db

/// Runs a requeue or resolve over a frozen target list in chunks
/// (docs/architecture.md#bulk-actions, docs/domain.md#bulk-actions-act-on-the-frozen-set). The list
/// — ids with the versions the operator saw at preview — is frozen in redrive.bulk_operation first;
/// chunk n then runs as its own transaction with its own audit entry. The server applies each chunk
/// at most once and for the bulk's owner only, checking it is exactly that slice of the frozen list
/// (docs/security.md), so chunk action ids are random. While it runs, the runner holds the bulk's
/// run lock in its session, so no other console runs the same bulk at the same time
/// (docs/reliability.md#bulk-actions-survive-the-console). Cancel stops between chunks; resume()
/// and resumeFrozen() read the chunks already done from the server and run only the others, and a
/// chunk whose reply was lost only returns its first outcome, so nothing is applied twice.
class BulkActionRunner : public QObject
{
    Q_OBJECT
public:
    struct Target
    {
        qint64 id = 0;
        int version = 0;
    };
    enum class Action { Requeue, Resolve };

    /// What the operator confirmed. For Requeue, resetAttempts; for Resolve, resolution and note.
    struct Request
    {
        Action action = Action::Requeue;
        QList<Target> targets;
        bool resetAttempts = true;
        QString resolution;
        QString note;
        QString reason;
        QString ticket;
        QString osUser;
        int chunkSize = 1000;
    };

    /// Totals over the chunks run so far.
    struct Totals
    {
        int confirmed = 0;
        int applied = 0;
        int conflicts = 0;
        int refused = 0;
        QJsonArray notApplied; ///< per-target results that were not "applied"
        /// Per chunk run, in chunk order: its audit entry's id and its action id, as the audit
        /// log shows them.
        QList<qint64> auditIds;
        QStringList actionIds;
        QList<qint64> appliedIds; ///< the targets applied, in chunk and id order
    };

    explicit BulkActionRunner(db::DatabaseSession *session, QObject *parent = nullptr);

    /// Freezes `request` under a new bulk id and runs its chunks.
    void start(const Request &request);
    /// Stops after the chunk that is running.
    void cancel();
    /// Runs the rest of the same frozen list (after a cancel or an error): the chunks the server
    /// has recorded as done are skipped, the others run in order.
    void resume();
    /// Resumes bulk `bulkId` frozen earlier, by this console or another one, a crashed one too:
    /// takes its run lock (another session running it: failed() with ErrorKind::Other and
    /// SQLSTATE 55P03), reads its frozen list, options, reason, ticket and OS user and the chunks
    /// done, and runs the others. Only the bulk's actor may (docs/reliability.md). The frozen
    /// list (megabytes of JSON for 100,000 targets) is parsed on a pool thread, so the GUI thread
    /// never waits for it.
    void resumeFrozen(const QUuid &bulkId);

    QUuid bulkId() const { return m_bulkId; }
    int chunkCount() const;
    /// Chunks applied so far (in this run or before it).
    int chunksDone() const { return int(m_chunksDone.size()); }
    /// How many targets the operator confirmed (the frozen list).
    int targetCount() const { return int(m_request.targets.size()); }
    bool isRunning() const { return m_running; }
    const Totals &totals() const { return m_totals; }
    /// `targets` as the action functions take them: [{"id": 1, "version": 3}, ...].
    static QByteArray targetsJson(const QList<Target> &targets);
    /// Whether `outcome`, returned for chunk `chunk` of bulk `bulkId` holding `chunkTargets`
    /// targets, answers that very request: a replayed outcome of some other request (another
    /// bulk, another chunk, another size) is a failure, never success. Empty when it matches,
    /// else what differs.
    static QString outcomeMismatch(const QJsonObject &outcome, const QUuid &bulkId, int chunk,
                                   int chunkTargets);

Q_SIGNALS:
    void progress(int chunksDone, int chunkCount);
    void chunkFinished(int chunk, const QJsonObject &outcome);
    void finished(bool canceled);
    void failed(const redrive::db::DbError &error);

private:
    void runNextChunk();
    void beginRun(bool loadTargets);
    /// Goes on with bulk_begin_run's row `r`: the chunks done and the totals so far, then the
    /// first chunk not done.
    void proceed(const db::ResultSet &r);
    void endRun();
    void stop(bool ok, bool canceled, const db::DbError &error = {});

    db::DatabaseSession *m_session;
    Request m_request;
    QUuid m_bulkId;
    int m_nextChunk = 0;
    bool m_running = false;
    bool m_cancelRequested = false;
    QSet<int> m_chunksDone; ///< chunks applied: before this run began (as read) or in it
    Totals m_totals;
};

} // namespace redrive
