// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/audit_export_job.h"

#include "models/audit_entry_model.h"
#include "models/db/database_session.h"
#include "models/db/sql_statement.h"
#include "models/logging.h"

#include <QSaveFile>

namespace redrive {

AuditExportJob::AuditExportJob(db::DatabaseSession *session, QObject *parent)
    : ConnectionJob(parent)
    , m_session(session)
{ }

AuditExportJob::~AuditExportJob()
{
    stopAndWait(); // the work writes m_file and m_pending
}

bool AuditExportJob::start(const AuditFilter &filter, AuditExportFormat format, const QString &path)
{
    if (isRunning()) {
        m_error = tr("An export is already running.");
        return false;
    }
    auto file = std::make_unique<QSaveFile>(path);
    if (!file->open(QIODevice::WriteOnly)) {
        m_error = file->errorString();
        return false;
    }
    m_file = std::move(file);
    m_path = path;
    m_error.clear();
    m_summary = AuditExportSummary();
    const int pageSize = m_pageSize;
    QSaveFile *out = m_file.get();
    db::ConnectionSettings settings = m_session->primarySettings();
    if (settings.searchPath.isEmpty())
        settings.searchPath = QStringLiteral("redrive"); // where the read contract is
    launch(settings, QStringLiteral("audit export"),
           [this, filter, format, pageSize,
            out](db::PgConnection &connection) -> std::optional<db::DbError> {
               // The count only feeds the progress bar; a failure there is not the export's.
               db::QueryParams countParams;
               filter.appendParams(countParams);
               countParams.addBigInt(AuditEntryModel::kCountCap);
               auto counted
                   = connection.exec(db::statementSql(db::Statement::AuditEntryCount), countParams);
               const qint64 total
                   = counted && counted->rowCount() > 0 ? counted->bigInt(0, 0).value_or(-1) : -1;
               postProgress(0, total);
               AuditExportControl control;
               control.cancel = &cancelFlag();
               control.onPage = [this, total](qint64 written) {
                   postProgress(written, total);
               };
               auto summary = exportAudit(connection, filter, format, out, pageSize, control);
               if (!summary)
                   return summary.error();
               m_pending = std::move(summary.value());
               return std::nullopt;
           });
    qCInfo(lcModel) << "audit export started:" << auditExportFormatName(format);
    return true;
}

void AuditExportJob::completed()
{
    m_summary = std::move(m_pending);
    if (!m_file->commit()) {
        m_error = m_file->errorString();
        m_file.reset();
        Q_EMIT failed(
            db::DbError(db::ErrorKind::Other, tr("Cannot write %1: %2").arg(m_path, m_error)));
        return;
    }
    m_file.reset();
    QString error;
    if (m_summary.format == AuditExportFormat::Csv
        && !writeAuditHeadFile(m_path, m_summary, &error)) {
        m_error = error;
        Q_EMIT failed(
            db::DbError(db::ErrorKind::Other,
                        tr("The export was written, but not its chain head %1.head.json: %2")
                            .arg(m_path, error)));
        return;
    }
    qCInfo(lcModel) << "audit export finished:" << m_summary.rows << "entries";
    Q_EMIT progress(m_summary.rows, m_summary.rows);
    Q_EMIT finished(false);
}

void AuditExportJob::abandoned(const db::DbError &why)
{
    m_error = why.message();
    if (m_file)
        m_file->cancelWriting();
    m_file.reset();
    m_pending = AuditExportSummary();
    qCInfo(lcModel) << "audit export ended without a file";
}

} // namespace redrive
