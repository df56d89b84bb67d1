// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/audit_verify_job.h"

#include "models/logging.h"

namespace redrive {

AuditVerifyJob::AuditVerifyJob(QObject *parent)
    : ConnectionJob(parent)
{ }

AuditVerifyJob::~AuditVerifyJob()
{
    stopAndWait(); // the work writes m_pending
}

bool AuditVerifyJob::start(const db::ConnectionSettings &given)
{
    // The verifier sets its own search_path (pg_catalog, pg_temp) for its one transaction and
    // compares the audit view's definition as pg_get_viewdef() prints it under that path: the
    // console's path, pinned again before every statement, would print the view's names
    // unqualified and make an untouched view look altered. It reads no queue's view, so nothing
    // planted can run on this connection (docs/security.md, "The queue's own role").
    db::ConnectionSettings settings = given;
    settings.pinEveryStatement = false;
    settings.searchPath.clear();
    const bool started
        = launch(settings, QStringLiteral("audit verify"),
                 [this](db::PgConnection &connection) -> std::optional<db::DbError> {
                     const auto total = AuditChainVerifier::countEntries(connection);
                     if (!total)
                         return total.error();
                     const qint64 count = total.value();
                     postProgress(0, count);
                     AuditChainVerifier verifier;
                     verifier.setCancelFlag(&cancelFlag());
                     verifier.setProgress(
                         [this, count](qint64 checked) { postProgress(checked, count); }, 16384);
                     auto report = verifier.verify(connection);
                     if (!report)
                         return report.error();
                     m_pending = std::move(report.value());
                     return std::nullopt;
                 });
    if (!started)
        return false;
    qCInfo(lcModel) << "audit chain verification started";
    Q_EMIT progress(0, -1);
    return true;
}

void AuditVerifyJob::completed()
{
    m_report = std::move(m_pending);
    qCInfo(lcModel) << "audit chain verified:" << m_report.checked << "entries,"
                    << m_report.problems.size() << "problems";
    Q_EMIT finished(false);
}

} // namespace redrive
