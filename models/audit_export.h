// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/audit_filter.h"
#include "models/db/connection_settings.h"
#include "models/db/db_expected.h"
#include "models/db/query_params.h"

#include <QByteArray>
#include <QDateTime>
#include <QJsonObject>
#include <QString>
#include <atomic>
#include <functional>
#include <optional>

class QIODevice;

namespace redrive {

namespace db {
class PgConnection;
class ResultSet;
} // namespace db

/// How an audit export is written (a filtered range as CSV or JSON Lines, with the
/// chain head).
enum class AuditExportFormat {
    Csv, ///< RFC 4180: a header line, CRLF line ends, fields with , " CR LF quoted; the chain head
         ///< goes beside it (FILE.head.json), never into the table
    JsonLines, ///< one JSON object per entry, JSON columns embedded exactly as jsonb printed
               ///< them; the last line is the chain-head record
};

/// "csv" or "jsonl".
QString auditExportFormatName(AuditExportFormat format);
/// Reads "csv" or "jsonl" (also "json-lines", "ndjson"); nullopt for anything else.
std::optional<AuditExportFormat> parseAuditExportFormat(const QString &name);

/// The newest audit entry when an export began: its id and hash cover the whole chain up to it
/// (hash = SHA-256(prev_hash || entry)), so keeping them elsewhere makes any later rewrite or cut
/// detectable with `redrive verify-audit --head-id ID --head-hash HASH`.
struct AuditChainHead
{
    qint64 id = 0; ///< 0 when the audit log is empty
    QString hash; ///< lower-case hex, as verify-audit takes it
    QDateTime at; ///< server time of that entry
    qint64 entries = 0; ///< entries in the whole chain

    bool isValid() const { return id > 0; }
    /// Reads the row of Statement::AuditChainHead (no row: an empty chain).
    static AuditChainHead fromResult(const db::ResultSet &rows);
};

/// What one export wrote: the chain head, the filter and the exported range.
struct AuditExportSummary
{
    AuditExportFormat format = AuditExportFormat::Csv;
    AuditFilter filter;
    AuditChainHead head;
    qint64 rows = 0; ///< entries written
    qint64 firstId = 0; ///< the first (oldest) entry written, 0 when none
    qint64 lastId = 0; ///< the last (newest) entry written, 0 when none
    QDateTime exportedAt; ///< when the export began (this machine's clock, UTC)

    /// {"chain_head": {id, hash, at, entries}, "export": {format, rows, first_id, last_id,
    /// exported_at, filter}, "verify": "redrive verify-audit --head-id … --head-hash …"}: the
    /// last line of a JSON Lines export and the content of a CSV export's FILE.head.json.
    QJsonObject toJson() const;
    /// The command that checks the chain against this head later (empty for an empty chain).
    QString verifyCommand() const;
    /// A few lines for a person: the range written and the head.
    QString describe() const;
};

/// Rows per page of an export (keyset over the entry id; never all in memory).
inline constexpr int kAuditExportPageSize = 1000;

/// Parameters of Statement::AuditExportPage: `filter`, entries after `afterId` (0: from the
/// start) up to and including `headId`, `pageSize` rows (0: every one, for a cursor).
db::QueryParams auditExportPageParams(const AuditFilter &filter, qint64 afterId, qint64 headId,
                                      int pageSize);

/// How the caller of exportAudit() in another thread follows and stops it (AuditExportJob).
struct AuditExportControl
{
    /// When set, the export stops before its next page and fails with ErrorKind::Canceled.
    const std::atomic<bool> *cancel = nullptr;
    /// Called after each page is written, with the entries written so far.
    std::function<void(qint64 written)> onPage;
};

/// Exports the entries matching `filter` to `out` through `connection` (whose search_path must
/// reach the read contract), blocking: for the command line, the console's AuditExportJob (in
/// its own thread) and tests. In one read-only transaction (or behind a savepoint in the
/// caller's), reads the chain head first, then exports only entries up to it, oldest first,
/// through one cursor fetched `pageSize` rows at a time; JSON Lines end with the head record.
/// Write failures come back as ErrorKind::Other errors.
db::DbExpected<AuditExportSummary> exportAudit(db::PgConnection &connection,
                                               const AuditFilter &filter, AuditExportFormat format,
                                               QIODevice *out, int pageSize = kAuditExportPageSize,
                                               const AuditExportControl &control = {});

/// Writes summary.toJson() to `exportPath` + ".head.json" (what accompanies a CSV export).
bool writeAuditHeadFile(const QString &exportPath, const AuditExportSummary &summary,
                        QString *error = nullptr);

/// The options of `redrive export-audit` as typed (empty = not given).
struct AuditExportArguments
{
    QString format; ///< csv | jsonl (required)
    QString actor;
    QString action;
    QString target; ///< as AuditFilter::setTargetText() reads it
    QString from; ///< ISO 8601 date or date-time; without an offset it is local time
    QString until;
    QString output; ///< a file, or empty for stdout
};

/// `redrive export-audit`: connects with `settings`, exports, writes the head beside a CSV file,
/// and reports the range and the chain head (with the verify-audit command that checks it) on
/// stderr, so stdout carries only the export. Exit codes: 0 done, 1 failed (nothing is left at
/// --output), 64 usage, 69 cannot connect.
int runExportAuditCommand(const db::ConnectionSettings &settings,
                          const AuditExportArguments &arguments);

} // namespace redrive
