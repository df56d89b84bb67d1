// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/audit_chain_verifier.h"
#include "models/connection_job.h"

namespace redrive {

/// A client-side verification of the audit chain for the console: AuditChainVerifier, as
/// `redrive verify-audit` runs it, on a connection of its own (ConnectionJob); progress() counts
/// entries checked of the total.
class AuditVerifyJob : public ConnectionJob
{
    Q_OBJECT
public:
    explicit AuditVerifyJob(QObject *parent = nullptr);
    ~AuditVerifyJob() override;

    /// Starts verifying the chain of the database `settings` reach. Returns false (and emits
    /// nothing) while a verification runs.
    bool start(const db::ConnectionSettings &settings);

    /// The report of the last verification that completed.
    const AuditChainReport &report() const { return m_report; }

protected:
    void completed() override;

private:
    AuditChainReport m_report;
    AuditChainReport m_pending; // written by the work's thread, taken by completed()
};

} // namespace redrive
