// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/audit_chain_verifier.h"
#include "models/db/connection_settings.h"
#include "models/db/db_error.h"
#include "models/db/pg_connection.h"

#include <QMutex>
#include <QObject>
#include <atomic>

class QThread;

namespace redrive {

/// A client-side verification of the audit chain for the console: runs AuditChainVerifier on a
/// connection of its own in a worker thread (the console's session stays free, the GUI thread
/// never waits), reports progress as entries checked of the total, and can be canceled. Mirrors
/// AuditExportJob: start(), progress(), finished() or failed().
class AuditVerifyJob : public QObject
{
    Q_OBJECT
public:
    explicit AuditVerifyJob(QObject *parent = nullptr);
    /// Cancels a running verification and waits for its thread.
    ~AuditVerifyJob() override;

    /// Starts verifying the chain of the database `settings` reach. Returns false (and emits
    /// nothing) while a verification runs.
    bool start(const db::ConnectionSettings &settings);
    /// Stops the verification (the server cancels the COPY); finished() follows with canceled set.
    void cancel();

    bool isRunning() const { return m_running; }
    /// The report of the last verification that completed.
    const AuditChainReport &report() const { return m_report; }

Q_SIGNALS:
    /// `checked` entries of `total` (-1 until counted) are verified.
    void progress(qint64 checked, qint64 total);
    /// The verification ended: the whole chain was read (see report()), or it was canceled.
    void finished(bool canceled);
    /// It could not run to the end: no connection, or a statement failed.
    void failed(const redrive::db::DbError &error);

private:
    void run(db::ConnectionSettings settings, quint64 generation);
    void deliverProgress(quint64 generation, qint64 checked, qint64 total);
    void deliverResult(quint64 generation, const db::DbExpected<AuditChainReport> &result);

    QThread *m_thread = nullptr;
    std::atomic<bool> m_cancel { false };
    QMutex m_cancelMutex;
    db::CancelHandle m_cancelHandle; // guarded by m_cancelMutex
    AuditChainReport m_report;
    quint64 m_generation = 0;
    bool m_running = false;
};

} // namespace redrive
