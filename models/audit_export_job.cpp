// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/audit_export_job.h"

#include "models/audit_entry_model.h"
#include "models/audit_export_writer.h"
#include "models/db/database_session.h"
#include "models/db/sql_statement.h"
#include "models/logging.h"

#include <QSaveFile>

namespace redrive {

AuditExportJob::AuditExportJob(db::DatabaseSession *session, QObject *parent)
    : QObject(parent)
    , m_session(session)
{ }

AuditExportJob::~AuditExportJob() = default;

bool AuditExportJob::start(const AuditFilter &filter, AuditExportFormat format, const QString &path)
{
    if (m_running) {
        m_error = tr("An export is already running.");
        return false;
    }
    auto file = std::make_unique<QSaveFile>(path);
    if (!file->open(QIODevice::WriteOnly)) {
        m_error = file->errorString();
        return false;
    }
    m_file = std::move(file);
    m_writer = std::make_unique<AuditExportWriter>(format, m_file.get());
    m_path = path;
    m_error.clear();
    m_summary = AuditExportSummary();
    m_summary.format = format;
    m_summary.filter = filter;
    m_summary.exportedAt = QDateTime::currentDateTimeUtc();
    m_total = -1;
    m_running = true;
    m_cancelRequested = false;
    const quint64 generation = ++m_generation;
    qCInfo(lcModel) << "audit export started:" << auditExportFormatName(format);
    if (!m_writer->begin()) {
        fail(db::DbError(db::ErrorKind::Other,
                         tr("Cannot write %1: %2").arg(path, m_writer->errorString())));
        return true;
    }
    // The head first: the export covers the chain up to it, and nothing appended later.
    m_session->execute(db::statementSql(db::Statement::AuditChainHead), {}, this,
                       [this, generation](const db::DbExpected<db::ResultSet> &head) {
                           if (generation != m_generation || !m_running)
                               return;
                           if (!head) {
                               fail(head.error());
                               return;
                           }
                           m_summary.head = AuditChainHead::fromResult(head.value());
                           if (!m_summary.head.isValid()) {
                               complete();
                               return;
                           }
                           requestPage();
                       });
    // The count only feeds the progress bar; a failure there is not the export's failure.
    db::QueryParams countParams;
    filter.appendParams(countParams);
    countParams.addBigInt(AuditEntryModel::kCountCap);
    m_session->execute(db::statementSql(db::Statement::AuditEntryCount), countParams, this,
                       [this, generation](const db::DbExpected<db::ResultSet> &rows) {
                           if (generation != m_generation || !m_running || !rows
                               || rows->rowCount() < 1)
                               return;
                           m_total = rows->bigInt(0, 0).value_or(-1);
                           Q_EMIT progress(m_writer->rows(), m_total);
                       });
    return true;
}

void AuditExportJob::cancel()
{
    if (m_running)
        m_cancelRequested = true;
}

void AuditExportJob::requestPage()
{
    if (m_cancelRequested) {
        m_file->cancelWriting();
        m_file.reset();
        m_running = false;
        qCInfo(lcModel) << "audit export canceled";
        Q_EMIT finished(true);
        return;
    }
    const quint64 generation = m_generation;
    m_session->execute(
        db::statementSql(db::Statement::AuditExportPage),
        auditExportPageParams(m_summary.filter, m_writer->lastId(), m_summary.head.id, m_pageSize),
        this, [this, generation](const db::DbExpected<db::ResultSet> &page) {
            if (generation != m_generation || !m_running)
                return;
            if (!page) {
                fail(page.error());
                return;
            }
            if (!m_writer->writePage(page.value())) {
                fail(db::DbError(db::ErrorKind::Other,
                                 tr("Cannot write %1: %2").arg(m_path, m_writer->errorString())));
                return;
            }
            Q_EMIT progress(m_writer->rows(), m_total);
            if (page->rowCount() < m_pageSize)
                complete();
            else
                requestPage();
        });
}

void AuditExportJob::complete()
{
    m_summary.rows = m_writer->rows();
    m_summary.firstId = m_writer->firstId();
    m_summary.lastId = m_writer->lastId();
    if (!m_writer->finish(m_summary) || !m_file->commit()) {
        fail(db::DbError(db::ErrorKind::Other,
                         tr("Cannot write %1: %2").arg(m_path, m_file->errorString())));
        return;
    }
    m_file.reset();
    QString error;
    if (m_summary.format == AuditExportFormat::Csv
        && !writeAuditHeadFile(m_path, m_summary, &error)) {
        m_running = false;
        m_error = error;
        Q_EMIT failed(
            db::DbError(db::ErrorKind::Other,
                        tr("The export was written, but not its chain head %1.head.json: %2")
                            .arg(m_path, error)));
        return;
    }
    m_running = false;
    qCInfo(lcModel) << "audit export finished:" << m_summary.rows << "entries";
    Q_EMIT progress(m_summary.rows, m_summary.rows);
    Q_EMIT finished(false);
}

void AuditExportJob::fail(const db::DbError &error)
{
    if (m_file)
        m_file->cancelWriting();
    m_file.reset();
    m_running = false;
    m_error = error.message();
    Q_EMIT failed(error);
}

} // namespace redrive
