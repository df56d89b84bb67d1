// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/bulk_action_runner.h"

#include "models/db/database_session.h"
#include "models/db/sql_statement.h"
#include "models/operator_action.h"

#include <QFutureWatcher>
#include <QJsonArray>
#include <QJsonDocument>
#include <QSet>
#include <QtConcurrent/QtConcurrentRun>

namespace redrive {

namespace {

QString actionName(BulkActionRunner::Action action)
{
    return action == BulkActionRunner::Action::Requeue ? QStringLiteral("requeue")
                                                       : QStringLiteral("resolve");
}

// The frozen bulk `r` (one row of bulk_begin_run.sql) as the request its chunks repeat: the
// action, the target list with the versions seen at preview, the options, reason, ticket, OS
// user and chunk size. A 100,000-target list is megabytes of JSON: this runs on a pool thread,
// never the GUI thread (docs/reliability.md#bulk-actions-survive-the-console).
BulkActionRunner::Request frozenRequest(const db::ResultSet &r)
{
    BulkActionRunner::Request request;
    request.action = r.text(0, QStringLiteral("action")) == QLatin1String("requeue")
        ? BulkActionRunner::Action::Requeue
        : BulkActionRunner::Action::Resolve;
    const QJsonArray targets
        = QJsonDocument::fromJson(r.raw(0, r.columnIndex(QStringLiteral("targets")))).array();
    request.targets.reserve(targets.size());
    for (const QJsonValue &t : targets) {
        const QJsonObject o = t.toObject();
        request.targets.append({ qint64(o.value(QStringLiteral("id")).toDouble()),
                                 o.value(QStringLiteral("version")).toInt() });
    }
    const QJsonObject params
        = QJsonDocument::fromJson(r.raw(0, r.columnIndex(QStringLiteral("params")))).object();
    request.resetAttempts = params.value(QStringLiteral("reset_attempts")).toBool();
    request.resolution = params.value(QStringLiteral("resolution")).toString();
    const QJsonValue note = params.value(QStringLiteral("note"));
    request.note = note.isString() ? note.toString() : QString();
    request.reason = r.text(0, QStringLiteral("reason"));
    request.ticket = r.text(0, QStringLiteral("ticket"));
    // The chunks must carry the OS user frozen with the list (the server checks it).
    request.osUser = r.text(0, QStringLiteral("os_user"));
    request.chunkSize = r.integer(0, QStringLiteral("chunk_size")).value_or(1000);
    return request;
}

} // namespace

BulkActionRunner::BulkActionRunner(db::DatabaseSession *session, QObject *parent)
    : QObject(parent)
    , m_session(session)
{ }

QByteArray BulkActionRunner::targetsJson(const QList<Target> &targets)
{
    QJsonArray array;
    for (const Target &t : targets)
        array.append(QJsonObject { { QStringLiteral("id"), t.id },
                                   { QStringLiteral("version"), t.version } });
    return QJsonDocument(array).toJson(QJsonDocument::Compact);
}

QString BulkActionRunner::outcomeMismatch(const QJsonObject &outcome, const QUuid &bulkId,
                                          int chunk, int chunkTargets)
{
    const QString bulk = outcome.value(QStringLiteral("bulk_id")).toString();
    if (QUuid::fromString(bulk) != bulkId)
        return QStringLiteral("the server answered for bulk %1, not %2")
            .arg(bulk.isEmpty() ? QStringLiteral("(none)") : bulk,
                 bulkId.toString(QUuid::WithoutBraces));
    const QJsonValue chunkNo = outcome.value(QStringLiteral("chunk_no"));
    if (!chunkNo.isDouble() || chunkNo.toInt(-1) != chunk)
        return QStringLiteral("the server answered for chunk %1, not %2")
            .arg(chunkNo.isDouble() ? QString::number(chunkNo.toInt()) : QStringLiteral("(none)"))
            .arg(chunk);
    if (outcome.value(QStringLiteral("confirmed")).toInt(-1) != chunkTargets)
        return QStringLiteral("the server confirmed %1 targets for a chunk of %2")
            .arg(outcome.value(QStringLiteral("confirmed")).toInt(-1))
            .arg(chunkTargets);
    return {};
}

int BulkActionRunner::chunkCount() const
{
    const int size = std::max(1, m_request.chunkSize);
    return int((m_request.targets.size() + size - 1) / size);
}

void BulkActionRunner::start(const Request &request)
{
    m_request = request;
    m_bulkId = QUuid::createUuid();
    m_nextChunk = 0;
    m_totals = {};
    m_running = true;
    m_cancelRequested = false;
    QJsonObject params;
    if (request.action == Action::Requeue)
        params.insert(QStringLiteral("reset_attempts"), request.resetAttempts);
    else {
        // Every option is frozen, the note too, exactly as each chunk will send it.
        params.insert(QStringLiteral("resolution"), request.resolution);
        params.insert(QStringLiteral("note"),
                      request.note.isNull() ? QJsonValue(QJsonValue::Null)
                                            : QJsonValue(request.note));
    }
    db::QueryParams p;
    p.addUuid(m_bulkId)
        .addText(actionName(request.action))
        .addJson(targetsJson(request.targets))
        .addInt(request.chunkSize)
        .addJson(QJsonDocument(params).toJson(QJsonDocument::Compact))
        .addText(request.reason)
        .addText(request.ticket.isEmpty() ? QString() : request.ticket)
        .addText(request.osUser);
    m_session->execute(db::statementSql(db::Statement::ActionFreezeBulk), p, this,
                       [this](const db::DbExpected<db::ResultSet> &frozen) {
                           if (!frozen) {
                               m_running = false;
                               Q_EMIT failed(explainedActionError(frozen.error()));
                               return;
                           }
                           beginRun(false);
                       });
}

void BulkActionRunner::cancel()
{
    m_cancelRequested = true;
}

void BulkActionRunner::resume()
{
    if (m_running || m_bulkId.isNull())
        return;
    m_running = true;
    m_cancelRequested = false;
    beginRun(false);
}

void BulkActionRunner::resumeFrozen(const QUuid &bulkId)
{
    if (m_running || bulkId.isNull())
        return;
    m_bulkId = bulkId;
    m_request = {};
    m_running = true;
    m_cancelRequested = false;
    beginRun(true);
}

void BulkActionRunner::beginRun(bool loadTargets)
{
    db::QueryParams p;
    p.addUuid(m_bulkId).addBool(loadTargets);
    m_session->execute(db::statementSql(db::Statement::BulkBeginRun), p, this,
                       [this, loadTargets](const db::DbExpected<db::ResultSet> &begun) {
                           if (!begun) {
                               stop(false, false, begun.error());
                               return;
                           }
                           const db::ResultSet r = begun.value();
                           if (r.rowCount() != 1) {
                               stop(false, false,
                                    db::DbError(db::ErrorKind::Other,
                                                QStringLiteral("bulk %1 was not found")
                                                    .arg(m_bulkId.toString(QUuid::WithoutBraces))));
                               return;
                           }
                           if (!loadTargets) {
                               proceed(r);
                               return;
                           }
                           // The frozen list is parsed on a pool thread; the run goes on here once
                           // it is.
                           auto *watcher = new QFutureWatcher<Request>(this);
                           connect(watcher, &QFutureWatcher<Request>::finished, this,
                                   [this, watcher, r] {
                                       watcher->deleteLater();
                                       m_request = watcher->result();
                                       proceed(r);
                                   });
                           watcher->setFuture(QtConcurrent::run(&frozenRequest, r));
                       });
}

void BulkActionRunner::proceed(const db::ResultSet &r)
{
    m_chunksDone.clear();
    const QJsonArray done
        = QJsonDocument::fromJson(r.raw(0, r.columnIndex(QStringLiteral("chunks_done")))).array();
    for (const QJsonValue &chunk : done)
        m_chunksDone.insert(chunk.toInt());
    m_totals = {};
    m_totals.applied = r.integer(0, QStringLiteral("applied")).value_or(0);
    m_totals.conflicts = r.integer(0, QStringLiteral("conflicts")).value_or(0);
    m_totals.refused = r.integer(0, QStringLiteral("refused")).value_or(0);
    m_totals.confirmed = m_totals.applied + m_totals.conflicts + m_totals.refused;
    m_nextChunk = 0;
    Q_EMIT progress(int(m_chunksDone.size()), chunkCount());
    runNextChunk();
}

void BulkActionRunner::endRun()
{
    // The run lock goes with the session too; this gives it back while the session lives on.
    db::QueryParams p;
    p.addUuid(m_bulkId);
    m_session->execute(db::statementSql(db::Statement::BulkEndRun), p, this,
                       [](const db::DbExpected<db::ResultSet> &) {});
}

void BulkActionRunner::stop(bool ok, bool canceled, const db::DbError &error)
{
    m_running = false;
    if (!m_bulkId.isNull())
        endRun();
    if (ok)
        Q_EMIT finished(canceled);
    else
        Q_EMIT failed(explainedActionError(error));
}

void BulkActionRunner::runNextChunk()
{
    // Chunks the server had already applied when this run began are not sent again.
    while (m_nextChunk < chunkCount() && m_chunksDone.contains(m_nextChunk))
        ++m_nextChunk;
    if (m_nextChunk >= chunkCount()) {
        stop(true, false);
        return;
    }
    if (m_cancelRequested) {
        stop(true, true);
        return;
    }
    const int chunk = m_nextChunk;
    const QList<Target> slice
        = m_request.targets.mid(qsizetype(chunk) * m_request.chunkSize, m_request.chunkSize);
    const QByteArray targets = targetsJson(slice);
    // A fresh, unpredictable action id per call: the server applies each chunk of a bulk at
    // most once by (bulk id, chunk number), for the bulk's owner only, so a resume after a lost
    // reply gets the chunk's first outcome back whatever id it sends.
    const QUuid actionId = QUuid::createUuid();
    db::QueryParams p;
    db::Statement statement;
    if (m_request.action == Action::Requeue) {
        statement = db::Statement::ActionRequeue;
        p.addUuid(actionId)
            .addJson(targets)
            .addBool(m_request.resetAttempts)
            .addText(m_request.reason)
            .addText(m_request.ticket.isEmpty() ? QString() : m_request.ticket)
            .addText(m_request.osUser)
            .addUuid(m_bulkId)
            .addInt(chunk);
    } else {
        statement = db::Statement::ActionResolve;
        p.addUuid(actionId)
            .addJson(targets)
            .addText(m_request.resolution)
            .addText(m_request.note)
            .addText(m_request.reason)
            .addText(m_request.ticket.isEmpty() ? QString() : m_request.ticket)
            .addText(m_request.osUser)
            .addUuid(m_bulkId)
            .addInt(chunk);
    }
    m_session->execute(
        db::statementSql(statement), p, this,
        [this, chunk, slice](const db::DbExpected<db::ResultSet> &result) {
            const int size = int(slice.size());
            if (!result) {
                stop(false, false, result.error()); // resume() picks up the chunks not done
                return;
            }
            const QJsonObject outcome = QJsonDocument::fromJson(result->raw(0, 0)).object();
            const QString mismatch = outcomeMismatch(outcome, m_bulkId, chunk, size);
            if (!mismatch.isEmpty()) {
                stop(false, false,
                     db::DbError(db::ErrorKind::Other,
                                 QStringLiteral("chunk %1 was not applied as asked: %2")
                                     .arg(chunk)
                                     .arg(mismatch)));
                return;
            }
            m_totals.confirmed += outcome.value(QStringLiteral("confirmed")).toInt();
            m_totals.applied += outcome.value(QStringLiteral("applied")).toInt();
            m_totals.conflicts += outcome.value(QStringLiteral("conflicts")).toInt();
            m_totals.refused += outcome.value(QStringLiteral("refused")).toInt();
            m_totals.auditIds.append(outcome.value(QStringLiteral("audit_id")).toInteger());
            m_totals.actionIds.append(outcome.value(QStringLiteral("action_id")).toString());
            QSet<qint64> notApplied;
            for (const QJsonValue &r : outcome.value(QStringLiteral("results")).toArray())
                if (r.toObject().value(QStringLiteral("result")).toString()
                    != QLatin1String("applied")) {
                    m_totals.notApplied.append(r);
                    notApplied.insert(r.toObject().value(QStringLiteral("id")).toInteger());
                }
            for (const Target &t : slice)
                if (!notApplied.contains(t.id))
                    m_totals.appliedIds.append(t.id);
            m_nextChunk = chunk + 1;
            m_chunksDone.insert(chunk);
            Q_EMIT chunkFinished(chunk, outcome);
            Q_EMIT progress(int(m_chunksDone.size()), chunkCount());
            runNextChunk();
        });
}

} // namespace redrive
