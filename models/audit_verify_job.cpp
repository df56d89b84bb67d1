// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/audit_verify_job.h"

#include "models/logging.h"

#include <QMetaObject>
#include <QPointer>
#include <QThread>
#include <QtConcurrent/QtConcurrentRun>

namespace redrive {

AuditVerifyJob::AuditVerifyJob(QObject *parent)
    : QObject(parent)
{ }

AuditVerifyJob::~AuditVerifyJob()
{
    if (m_thread) {
        cancel();
        m_thread->wait();
        delete m_thread;
    }
}

bool AuditVerifyJob::start(const db::ConnectionSettings &settings)
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
    m_thread = QThread::create([this, settings, generation] { run(settings, generation); });
    m_thread->setObjectName(QStringLiteral("audit verify"));
    m_thread->start();
    qCInfo(lcModel) << "audit chain verification started";
    Q_EMIT progress(0, -1);
    return true;
}

void AuditVerifyJob::cancel()
{
    if (!m_running)
        return;
    m_cancel = true;
    // The worker may be waiting on the server (a lock, a long count) with nothing arriving:
    // cancel the statement too, from a pool thread, as PQcancel blocks (libpq 15).
    QMutexLocker lock(&m_cancelMutex);
    const db::CancelHandle handle = m_cancelHandle;
    std::ignore = QtConcurrent::run([handle] { handle.cancel(); });
}

// The worker thread: owns its connection from opening to closing.
void AuditVerifyJob::run(db::ConnectionSettings settings, quint64 generation)
{
    // The verifier sets its own search_path (pg_catalog, pg_temp) for its one transaction and
    // compares the audit view's definition as pg_get_viewdef() prints it under that path: the
    // console's path, pinned again before every statement, would print the view's names
    // unqualified and make an untouched view look altered. It reads no queue's view, so nothing
    // planted can run on this connection (docs/security.md, "The queue's own role").
    settings.pinEveryStatement = false;
    settings.searchPath.clear();
    auto connection = db::PgConnection::open(settings);
    if (!connection) {
        deliverResult(generation, connection.error());
        return;
    }
    {
        QMutexLocker lock(&m_cancelMutex);
        m_cancelHandle = connection->cancelHandle();
    }
    auto finish = [this, generation](const db::DbExpected<AuditChainReport> &result) {
        {
            QMutexLocker lock(&m_cancelMutex);
            m_cancelHandle = db::CancelHandle();
        }
        deliverResult(generation, result);
    };
    if (m_cancel) {
        finish(db::DbError(db::ErrorKind::Canceled, tr("the verification was canceled")));
        return;
    }
    const auto total = AuditChainVerifier::countEntries(connection.value());
    if (!total) {
        finish(total.error());
        return;
    }
    const qint64 count = total.value();
    deliverProgress(generation, 0, count);
    AuditChainVerifier verifier;
    verifier.setCancelFlag(&m_cancel);
    verifier.setProgress(
        [this, generation, count](qint64 checked) { deliverProgress(generation, checked, count); },
        16384);
    finish(verifier.verify(connection.value()));
}

void AuditVerifyJob::deliverProgress(quint64 generation, qint64 checked, qint64 total)
{
    QMetaObject::invokeMethod(
        this,
        [this, generation, checked, total] {
            if (generation == m_generation && m_running)
                Q_EMIT progress(checked, total);
        },
        Qt::QueuedConnection);
}

void AuditVerifyJob::deliverResult(quint64 generation,
                                   const db::DbExpected<AuditChainReport> &result)
{
    QMetaObject::invokeMethod(
        this,
        [this, generation, result] {
            if (generation != m_generation || !m_running)
                return;
            m_running = false;
            if (result) {
                m_report = result.value();
                qCInfo(lcModel) << "audit chain verified:" << m_report.checked << "entries,"
                                << m_report.problems.size() << "problems";
                Q_EMIT finished(false);
            } else if (result.error().kind() == db::ErrorKind::Canceled && m_cancel) {
                qCInfo(lcModel) << "audit chain verification canceled";
                Q_EMIT finished(true);
            } else {
                Q_EMIT failed(result.error());
            }
        },
        Qt::QueuedConnection);
}

} // namespace redrive
