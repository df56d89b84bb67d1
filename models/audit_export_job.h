// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/audit_export.h"
#include "models/connection_job.h"

#include <memory>

class QSaveFile;

namespace redrive {

namespace db {
class DatabaseSession;
}

/// An audit export for the console: exportAudit(), as `redrive export-audit` runs it (one
/// read-only transaction, one cursor), on a connection of its own (ConnectionJob) to the
/// session's primary; progress() counts entries written of those that match. The file is
/// written under a temporary name (QSaveFile) and appears only when complete; a CSV export gets
/// its chain head beside it (FILE.head.json). cancel() stops after the page on its way and
/// leaves no file.
class AuditExportJob : public ConnectionJob
{
    Q_OBJECT
public:
    /// `session` (whose primarySettings() the export connects with) must outlive the job.
    explicit AuditExportJob(db::DatabaseSession *session, QObject *parent = nullptr);
    ~AuditExportJob() override;

    /// Starts exporting the entries matching `filter` to `path`. Returns false (and emits
    /// nothing) when the file cannot be opened or an export is already running; errorString()
    /// says why.
    bool start(const AuditFilter &filter, AuditExportFormat format, const QString &path);

    /// What was written, with the head, once the export completed.
    const AuditExportSummary &summary() const { return m_summary; }
    /// The path being written (or last written).
    QString path() const { return m_path; }
    /// Why start() or the export failed.
    QString errorString() const { return m_error; }
    int pageSize() const { return m_pageSize; }
    /// Rows per page (default kAuditExportPageSize); set before start().
    void setPageSize(int rows) { m_pageSize = rows > 0 ? rows : kAuditExportPageSize; }

protected:
    void completed() override;
    void abandoned(const db::DbError &why) override;

private:
    db::DatabaseSession *m_session;
    std::unique_ptr<QSaveFile> m_file; // used by the work's thread until it ends
    AuditExportSummary m_summary;
    AuditExportSummary m_pending; // written by the work's thread, taken by completed()
    QString m_path;
    QString m_error;
    int m_pageSize = kAuditExportPageSize;
};

} // namespace redrive
