// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/connection_settings.h"
#include "models/db/db_expected.h"

#include <QByteArray>
#include <QString>
#include <optional>

namespace redrive {

namespace db {
class PgConnection;
}

/// What one `redrive archive` run did (docs/architecture.md, "Retention").
struct ArchiveSummary
{
    qint64 archived = 0; ///< dead letters exported and removed
    qint64 attempts = 0; ///< their attempts removed with them
    qint64 chunks = 0; ///< audited calls, one audit entry each
    qint64 firstId = 0; ///< the lowest dead letter id archived (0: none)
    qint64 lastId = 0; ///< the highest
    qint64 bytesWritten = 0; ///< bytes appended to the file by this run
    QByteArray fileSha256; ///< SHA-256 (lower-case hex) of the whole file after the run
};

/// Archives resolved dead letters older than a retention period, chunk by chunk
/// (docs/architecture.md, "Retention"): reads the next chunk's lines with
/// redrive.archive_candidates, appends them to a JSON Lines file and fsyncs it, then asks
/// redrive.archive_dead_letters to remove exactly those dead letters (with their jobs and
/// attempts) against SHA-256 over the lines written; that function checks the role
/// (redrive_admin), refuses when any row changed or may no longer go, and writes the audit entry
/// in the same transaction. A chunk the server refused is cut off the file again; nothing is held
/// in memory beyond one chunk. Blocking: for the command line and tests.
class DeadLetterArchiver
{
public:
    /// Dead letters per chunk (and per audit entry); the server takes at most 1000.
    static constexpr int kChunkSize = 1000;

    /// `connection` must outlive the archiver.
    explicit DeadLetterArchiver(db::PgConnection &connection);

    /// The retention period as PostgreSQL's interval text: "90d" -> "90 days", "12w" ->
    /// "84 days", "90 days" as given; nullopt for anything else or less than one day.
    static std::optional<QString> parsePeriod(const QString &text);

    void setChunkSize(int rows) { m_chunkSize = rows; }
    /// The audit entries' reason (default: "retention: resolved and older than PERIOD").
    void setReason(const QString &reason) { m_reason = reason; }

    /// Archives every dead letter that may go with `period` (interval text) into `path`, which
    /// is appended to (created when missing; refused when it ends in a partial line). Errors: the
    /// server's (permission, a row changed), or ErrorKind::Other for the file.
    db::DbExpected<ArchiveSummary> run(const QString &period, const QString &path);

private:
    db::PgConnection &m_connection;
    int m_chunkSize = kChunkSize;
    QString m_reason;
};

/// The options of `redrive archive` as typed (empty = not given).
struct ArchiveArguments
{
    QString olderThan; ///< e.g. "90d" (default 90 days)
    QString out; ///< the JSON Lines file (required)
    QString reason;
};

/// `redrive archive`: connects with `settings`, runs DeadLetterArchiver and reports what it
/// archived (count, id range, attempts, the file's SHA-256) on stdout, errors on stderr.
/// Exit codes: 0 done (also when nothing was due), 1 failed, 64 usage, 69 cannot connect.
int runArchiveCommand(const db::ConnectionSettings &settings, const ArchiveArguments &arguments);

} // namespace redrive
