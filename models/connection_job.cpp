// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/connection_job.h"

#include <QMetaObject>
#include <QThread>
#include <QtConcurrent/QtConcurrentRun>

namespace redrive {

ConnectionJob::ConnectionJob(QObject *parent)
    : QObject(parent)
{ }

ConnectionJob::~ConnectionJob()
{
    stopAndWait();
}

void ConnectionJob::stopAndWait()
{
    if (!m_thread)
        return;
    cancel();
    m_thread->wait();
    delete m_thread;
    m_thread = nullptr;
}

bool ConnectionJob::launch(const db::ConnectionSettings &settings, const QString &threadName,
                           Work work)
{
    if (m_running)
        return false;
    if (m_thread) { // the previous run's thread has ended: its result was delivered
        m_thread->wait();
        delete m_thread;
        m_thread = nullptr;
    }
    m_running = true;
    m_cancel = false;
    const quint64 generation = ++m_generation;
    m_thread = QThread::create([this, settings, generation, work = std::move(work)] {
        auto connection = db::PgConnection::open(settings);
        if (!connection) {
            deliver(generation, connection.error());
            return;
        }
        {
            QMutexLocker lock(&m_cancelMutex);
            m_cancelHandle = connection->cancelHandle();
        }
        std::optional<db::DbError> error;
        if (m_cancel)
            error = db::DbError(db::ErrorKind::Canceled, tr("canceled"));
        else
            error = work(connection.value());
        {
            QMutexLocker lock(&m_cancelMutex);
            m_cancelHandle = db::CancelHandle();
        }
        deliver(generation, error);
    });
    m_thread->setObjectName(threadName);
    m_thread->start();
    return true;
}

void ConnectionJob::cancel()
{
    if (!m_running)
        return;
    m_cancel = true;
    // The work may be waiting on the server (a lock, a long count) with nothing arriving:
    // cancel the statement too, from a pool thread, as PQcancel blocks (libpq 15).
    QMutexLocker lock(&m_cancelMutex);
    const db::CancelHandle handle = m_cancelHandle;
    std::ignore = QtConcurrent::run([handle] { handle.cancel(); });
}

void ConnectionJob::postProgress(qint64 done, qint64 total)
{
    const quint64 generation = m_generation; // read on the work's thread: set before it began
    QMetaObject::invokeMethod(
        this,
        [this, generation, done, total] {
            if (generation == m_generation && m_running)
                Q_EMIT progress(done, total);
        },
        Qt::QueuedConnection);
}

void ConnectionJob::completed()
{
    Q_EMIT finished(false);
}

void ConnectionJob::deliver(quint64 generation, const std::optional<db::DbError> &error)
{
    QMetaObject::invokeMethod(
        this,
        [this, generation, error] {
            if (generation != m_generation || !m_running)
                return;
            m_running = false;
            if (!error) {
                completed();
                return;
            }
            abandoned(*error);
            if (error->kind() == db::ErrorKind::Canceled && m_cancel)
                Q_EMIT finished(true);
            else
                Q_EMIT failed(*error);
        },
        Qt::QueuedConnection);
}

} // namespace redrive
