// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/audit_export.h"
#include "models/db/db_error.h"

#include <QObject>
#include <memory>

class QSaveFile;

namespace redrive {

namespace db {
class DatabaseSession;
}

class AuditExportWriter;

/// An audit export for the console: the same pages and format as exportAudit(), but
/// asked for through the DatabaseSession one page at a time, so the GUI thread never waits for
/// the server; each page is written as it arrives and progress() follows. The file is written
/// under a temporary name (QSaveFile) and appears only when complete; a CSV export gets its
/// chain head beside it (FILE.head.json). cancel() stops after the page on its way and leaves
/// no file.
class AuditExportJob : public QObject
{
    Q_OBJECT
public:
    /// `session` must outlive the job.
    explicit AuditExportJob(db::DatabaseSession *session, QObject *parent = nullptr);
    ~AuditExportJob() override;

    /// Starts exporting the entries matching `filter` to `path`. Returns false (and emits
    /// nothing) when the file cannot be opened or an export is already running; errorString()
    /// says why.
    bool start(const AuditFilter &filter, AuditExportFormat format, const QString &path);
    /// Stops after the page on its way; finished() follows with canceled set, and no file is
    /// left at the path.
    void cancel();

    bool isRunning() const { return m_running; }
    /// What was written so far, and the head once read.
    const AuditExportSummary &summary() const { return m_summary; }
    /// The path being written (or last written).
    QString path() const { return m_path; }
    /// Why start() or a write failed.
    QString errorString() const { return m_error; }
    int pageSize() const { return m_pageSize; }
    /// Rows per page (default kAuditExportPageSize); set before start().
    void setPageSize(int rows) { m_pageSize = rows > 0 ? rows : kAuditExportPageSize; }

Q_SIGNALS:
    /// `written` entries are in the file; `total` is the number that match (-1 until counted).
    void progress(qint64 written, qint64 total);
    /// The export ended: complete (the file is in place), or canceled (no file).
    void finished(bool canceled);
    /// A statement or a write failed; no file is left. isRunning() is false.
    void failed(const redrive::db::DbError &error);

private:
    void requestPage();
    void fail(const db::DbError &error);
    void complete();

    db::DatabaseSession *m_session;
    std::unique_ptr<QSaveFile> m_file;
    std::unique_ptr<AuditExportWriter> m_writer;
    AuditExportSummary m_summary;
    QString m_path;
    QString m_error;
    qint64 m_total = -1;
    int m_pageSize = kAuditExportPageSize;
    bool m_running = false;
    bool m_cancelRequested = false;
    quint64 m_generation = 0;
};

} // namespace redrive
