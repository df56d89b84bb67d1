// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/connection_settings.h"
#include "models/db/db_expected.h"

#include <QByteArray>
#include <QList>
#include <QMetaType>
#include <QString>
#include <atomic>
#include <functional>

namespace redrive {

namespace db {
class PgConnection;
}

/// One way in which the audit chain does not hold (docs/audit-chain.md, "What verification
/// checks").
struct AuditChainProblem
{
    enum class Kind {
        Changed, ///< the entry's stored hash is not the hash of its contents: it was edited
        MissingBetween, ///< the entry is intact but its prev_hash is not the hash of the entry
                        ///< before it: entries between the two were deleted
        StartCut, ///< the first entry has a prev_hash: the entries before it were deleted
        HeadNotReached, ///< the exported head's entry is not in the chain: the tail was cut
        HeadHashDiffers, ///< the exported head's entry holds another hash: it was rewritten
        TableReplaced, ///< redrive.audit_log is not the table the console and exports read,
                       ///< or carries triggers, rules or row-level security of someone else's,
                       ///< or a partition that is not Redrive's (docs/audit-chain.md)
        ViewHidesEntries, ///< the audit view the console and exports read shows other entries
                          ///< than the table holds (id: entries in the view)
        ViewAltered, ///< that view is not Redrive's definition: it may show other text
        RecordedHeadDiffers, ///< the first entry kept after detached months does not follow
                             ///< the head recorded at their end (previousId: that head's entry):
                             ///< the recorded head or the entries after it were changed
                             ///< (docs/audit-chain.md, "Detached months")
    };
    Kind kind = Kind::Changed;
    qint64 id = 0; ///< the entry that does not hold (HeadNotReached: the exported head's id)
    qint64 previousId = 0; ///< MissingBetween: the entry before the gap
    qint64 checkedBefore = 0; ///< entries read before this one

    /// One line for a person, e.g. "missing entries between id 4 and id 9: …".
    QString message() const;
};

/// What a verification found: the chain's head as read, and every problem in id order.
struct AuditChainReport
{
    qint64 checked = 0; ///< entries read and recomputed
    qint64 headId = 0; ///< the last entry read (0: the audit log is empty)
    QByteArray headHash; ///< its stored hash, lower-case hex
    bool headCompared = false; ///< an exported head was given
    QList<AuditChainProblem> problems; ///< in id order, at most kMaxProblems
    bool truncated = false; ///< more problems were found than kept
    /// Set when the oldest months were detached (docs/audit-chain.md, "Detached months") and the
    /// first entry read follows the head recorded at their end: that head's entry id (0: the
    /// chain was read from its first entry), when it was recorded ("YYYY-MM-DD HH:MM:SS UTC")
    /// and the last month detached ("YYYY-MM").
    qint64 recordedHeadId = 0;
    QString recordedHeadAt;
    QString recordedMonth;

    static constexpr int kMaxProblems = 100;

    /// True when every entry holds (and the exported head, if given, was reached intact).
    bool holds() const { return problems.isEmpty(); }
    /// The first problem; only valid when !holds().
    const AuditChainProblem &first() const { return problems.first(); }
    /// "verified from the head recorded on … at entry N (months up to YYYY-MM detached)", or
    /// empty when the chain was read from its first entry.
    QString startText() const;
};

/// Verifies the audit hash chain in the client, trusting no server function
/// (docs/domain.md#the-audit-log-is-append-only-and-hash-chained; the canonical form is specified
/// in docs/audit-chain.md). Reads the raw columns of redrive.audit_log with one binary COPY in a
/// read-only repeatable-read transaction, rebuilds every entry's canonical form from them, hashes
/// it with SHA-256 on a pool of threads while the calling thread reads on, and checks the links
/// between entries in order. Blocking: the command line calls it directly, the console through
/// AuditVerifyJob on a worker thread.
class AuditChainVerifier
{
public:
    /// Called from the reading thread now and then with the entries checked so far.
    using Progress = std::function<void(qint64 checked)>;

    AuditChainVerifier();

    /// Compares the chain with an exported head: entry `id` must be reached and hold `hashHex`.
    void setExpectedHead(qint64 id, const QByteArray &hashHex);
    /// Threads that hash (default: QThread::idealThreadCount()).
    void setHashThreads(int threads);
    /// Called at most every `entries` entries (default 65536).
    void setProgress(Progress progress, int entries = 65536);
    /// Checked between batches; when it turns true the COPY is canceled and verify() returns an
    /// ErrorKind::Canceled error. The owner may also cancel the connection from another thread.
    void setCancelFlag(const std::atomic<bool> *flag) { m_cancel = flag; }

    /// Counts the entries (for a progress bar's total), on `connection`, with a plain count(*).
    static db::DbExpected<qint64> countEntries(db::PgConnection &connection);
    /// Runs the verification on `connection` (which it leaves idle, outside a transaction).
    db::DbExpected<AuditChainReport> verify(db::PgConnection &connection);

    /// The canonical form of one entry (docs/audit-chain.md) from its column texts as COPY
    /// (FORMAT text) with TimeZone UTC would print them; NULL columns as a null QByteArray. For
    /// tests that compare it with the server; verify() builds it from binary columns instead.
    struct TextEntry
    {
        qint64 id = 0;
        QByteArray atUtc; ///< "YYYY-MM-DDTHH:MM:SS.ffffffZ", or null
        QByteArray dbUser, clientAddr, osUser, action, targets, reason, ticket, before, after,
            actionId, outcome; ///< client_addr without a /bits suffix; jsonb as their text
    };
    /// See TextEntry.
    static QByteArray canonicalForm(const TextEntry &entry);

private:
    qint64 m_expectedId = 0;
    QByteArray m_expectedHash; // raw bytes
    int m_threads = 0;
    Progress m_progress;
    int m_progressEvery = 65536;
    const std::atomic<bool> *m_cancel = nullptr;
};

/// The options of `redrive verify-audit` as typed (empty = not given).
struct AuditVerifyArguments
{
    QString headId;
    QString headHash; ///< hex
};

/// `redrive verify-audit`: connects with `settings`, verifies with AuditChainVerifier, prints the
/// head it verified and "audit chain OK" or "BROKEN at entry N: …" with every problem found.
/// Exit codes: 0 holds, 1 broken or failed, 64 usage, 69 cannot connect.
int runVerifyAuditCommand(const db::ConnectionSettings &settings,
                          const AuditVerifyArguments &arguments);

} // namespace redrive

Q_DECLARE_METATYPE(redrive::AuditChainReport)
