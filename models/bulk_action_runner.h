// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/db_error.h"

#include <QJsonArray>
#include <QJsonObject>
#include <QList>
#include <QObject>
#include <QStringList>
#include <QUuid>

namespace redrive {

namespace db {
class DatabaseSession;
}

/// Runs a requeue or resolve over a frozen target list in chunks
/// (docs/architecture.md#bulk-actions, docs/domain.md#bulk-actions-act-on-the-frozen-set). The list
/// — ids with the versions the operator saw at preview — is frozen in redrive.bulk_operation first;
/// chunk n then runs as its own transaction with its own audit entry. The server applies each chunk
/// at most once and for the bulk's owner only, checking it is exactly that slice of the frozen list
/// (docs/security.md), so chunk action ids are random. Cancel stops between chunks; resume() runs
/// every chunk again from the start, and the chunks already applied only return their first
/// outcome, so nothing is applied twice.
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
    /// Runs the same frozen list again from its first chunk (after a cancel or an error).
    void resume();

    QUuid bulkId() const { return m_bulkId; }
    int chunkCount() const;
    int chunksDone() const { return m_nextChunk; }
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

    db::DatabaseSession *m_session;
    Request m_request;
    QUuid m_bulkId;
    int m_nextChunk = 0;
    bool m_running = false;
    bool m_cancelRequested = false;
    Totals m_totals;
};

} // namespace redrive
