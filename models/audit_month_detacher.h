// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/connection_settings.h"
#include "models/db/db_expected.h"

#include <QByteArray>
#include <QDate>
#include <QString>
#include <optional>

namespace redrive {

namespace db {
class PgConnection;
}

/// What `redrive audit-detach` recorded and detached (docs/audit-chain.md, "Detached months").
struct AuditDetachSummary
{
    QDate month; ///< the first day of the UTC month detached
    qint64 firstId = 0; ///< the month's first entry
    qint64 lastId = 0; ///< its last entry: the recorded head
    qint64 entries = 0; ///< entries in the month
    QByteArray headHash; ///< the hash of entry lastId, lower-case hex
    QByteArray exportSha256; ///< SHA-256 of the export file, lower-case hex
    QString partition; ///< the detached table, e.g. "audit_log_2026_08"
};

/// Detaches an exported audit month (docs/audit-chain.md, "Detached months"): verifies the whole
/// chain in this program (AuditChainVerifier; nothing is detached when it does not hold), exports
/// the month again as JSON Lines and requires the given export's entry lines to be exactly those
/// (byte for byte, every entry of the month, nothing else; the chain-head line may differ), then
/// calls redrive.detach_audit_month with the month's last entry, its hash, the entry count and
/// the file's SHA-256. That function checks the role (redrive_admin), records the head, writes the
/// audit entry and detaches the partition in one transaction. The login also needs to read the
/// audit log (redrive_auditor). Blocking: for the command line and tests.
class AuditMonthDetacher
{
public:
    /// `connection` must reach the read contract (search_path "redrive") and outlive this.
    explicit AuditMonthDetacher(db::PgConnection &connection);

    /// "2026-08" -> 2026-08-01; nullopt for anything else.
    static std::optional<QDate> parseMonth(const QString &text);

    /// The audit entry's reason (default: "retention: audit month YYYY-MM exported to FILE").
    void setReason(const QString &reason) { m_reason = reason; }

    /// Checks `exportPath` against the chain and the month, then records and detaches. Errors:
    /// the server's, or ErrorKind::Other naming what does not match.
    db::DbExpected<AuditDetachSummary> run(const QDate &month, const QString &exportPath);

private:
    db::PgConnection &m_connection;
    QString m_reason;
};

/// The options of `redrive audit-detach` as typed (empty = not given).
struct AuditDetachArguments
{
    QString month; ///< YYYY-MM (required)
    QString exportPath; ///< the month's JSON Lines export (required)
    QString reason;
};

/// `redrive audit-detach`: connects with `settings`, runs AuditMonthDetacher, prints the recorded
/// head on stdout, errors on stderr. Exit codes: 0 detached, 1 failed, 64 usage, 69 cannot
/// connect.
int runAuditDetachCommand(const db::ConnectionSettings &settings,
                          const AuditDetachArguments &arguments);

} // namespace redrive
