// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/attempt_history_model.h"
#include "models/db/db_error.h"
#include "models/db/result_set.h"
#include "models/result_table_model.h"

#include <QByteArray>
#include <QDateTime>
#include <QList>
#include <QObject>
#include <QString>
#include <array>
#include <optional>

namespace redrive {

namespace db {
class DatabaseSession;
}

/// Everything the case view shows about one dead letter, read through the read
/// contract with one named statement per part. load() posts them all through the session, so
/// nothing waits on the GUI thread; each answer is kept as the ResultSet the server sent and
/// announced by partLoaded() or failed(). A reload bumps a generation number, so answers to an
/// earlier load() are dropped. All times are instants (UTC-based QDateTime) read with the server's
/// clock; ages come from the server's clock_timestamp(), not the workstation's
/// (docs/domain.md#times-are-timestamptz-on-the-server-clock).
class DeadLetterCase : public QObject
{
    Q_OBJECT
public:
    enum class Part {
        Detail, ///< dead letter, job, payload preview
        Attempts, ///< the rounds of the retry history with their attempt counts
        Timeline, ///< the attempts, or their buckets when there are many (asked after Attempts)
        IdempotencyKey, ///< the job's key record
        Mismatches, ///< reconciliation mismatches for the same payment
        Outbox, ///< outbox commands for it
        Audit, ///< audit entries naming it
        Verdict, ///< "is it safe to retry?"
        FullPayload, ///< loadFullPayload(); not part of load()
    };
    Q_ENUM(Part)

    /// Worst first when compared: Block > Warn > Ok.
    enum class Severity { Ok, Warn, Block };
    Q_ENUM(Severity)

    /// Payloads up to this many bytes come with the detail; larger ones as a preview of this size.
    static constexpr int kPreviewBytes = 1024 * 1024;

    /// One row of DeadLetterDetail, typed.
    struct Detail
    {
        qint64 id = 0;
        QString jobRef;
        QString queue;
        QString kind;
        QString status;
        QString reason; ///< exhausted, permanent, deadline, ambiguous
        QString errorClass;
        /// Why that class, for a queue source ("timeout wording"); empty for the native one.
        QString classBecause;
        QString errorCode;
        QString lastError;
        QString stackTrace;
        int attempts = 0;
        QString idempotencyKey;
        QString fingerprint;
        /// The failure group's readable name, as the groups list shows it: error code (or
        /// class) and the normalized first line of its message; empty when unknown.
        QString groupName;
        QDateTime deadAt;
        int version = 0;
        QString claimedBy;
        QDateTime claimedAt;
        QString resolution;
        QString resolutionNote;
        QString resolvedBy;
        QDateTime resolvedAt;
        qint64 payloadSize = 0; ///< bytes of the whole payload
        bool payloadIsJson = false; ///< JSON text (else bytes, or no payload)
        QByteArray payload; ///< the whole payload, or the preview when !payloadComplete
        bool payloadComplete = true;
        /// The payload text exactly as the producer sent it (duplicate keys and member order
        /// kept), when the source keeps it (native jobs enqueued with enqueue_job_received);
        /// nullopt otherwise (then `payload` is the jsonb's text).
        std::optional<QByteArray> payloadReceived;
        QString headersText; ///< the headers as JSON text
        QString entityId; ///< ordering key: the entity the job changes
        std::optional<qint64> eventSeq;
        QDateTime eventAt;
        QString jobState;
        int jobAttempt = 0;
        int maxAttempts = 0;
        QString lockedBy;
        QDateTime lockedUntil; ///< the lease
        QDateTime runAt;
        QDateTime jobCreatedAt;
        QDateTime deadlineAt;
        QString source; ///< which read-contract source ("native", ...)
        QDateTime serverNow; ///< the server's clock when it answered
        /// Seconds from dead_at to the server's clock; 0 when either is missing, dead_at is ahead
        /// of the clock, or dead_at is ±infinity (the case view then shows "∞" for -infinity).
        qint64 ageSeconds() const;
    };

    /// One row of AttemptHistory, typed.
    struct Attempt
    {
        qint64 id = 0;
        int attemptNo = 0;
        QDateTime startedAt;
        QDateTime finishedAt; ///< invalid while running or when abandoned without an end
        std::optional<qint64> durationMs;
        QString outcome; ///< succeeded, failed, conflict, abandoned
        QString errorClass; ///< transient, permanent, ambiguous, or empty
        QString errorCode;
        QString message;
        QString stackTrace;
        QString workerId;
        std::optional<qint64> backoffMs; ///< the delay chosen before the next attempt
    };

    /// One round of the retry history (Statement::AttemptRounds): round 1 until the first
    /// applied requeue, each requeue starting the next (docs/domain.md#a-requeues-story).
    struct Round
    {
        int round = 1;
        QDateTime requeuedAt; ///< when the requeue that started it was applied; invalid for 1
        QString requeuedBy; ///< the login that requeued
        QString actionId; ///< the requeue's action id, as the audit log shows it
        std::optional<bool> resetAttempts; ///< nullopt when the action did not record it
        qint64 attempts = 0;
        int lastAttemptNo = 0;
        QString lastOutcome; ///< the round's last attempt; empty when it has none
        QString lastErrorClass;
    };

    /// Attempts started in one time bucket with one outcome and error class
    /// (Statement::AttemptTimelineBuckets).
    struct AttemptBucket
    {
        QDateTime from;
        QDateTime until;
        QString outcome;
        QString errorClass;
        qint64 attempts = 0;
    };

    /// One row of RetryVerdict.
    struct VerdictReason
    {
        Severity severity = Severity::Ok;
        QString code; ///< stable, e.g. "job_leased"
        QString explanation; ///< one sentence from the server
    };

    /// The idempotency-key record, typed.
    struct KeyRecord
    {
        QString scope;
        QString key;
        QString requestHash;
        QString state; ///< received, processing, done, failed
        QString lockedBy;
        QDateTime lockedUntil;
        QString resultText; ///< the stored result as JSON text
        QString errorMessage;
        QString conflictingHash;
        int conflictCount = 0;
        QDateTime lastConflictAt;
        QDateTime createdAt;
        QDateTime updatedAt;
        QDateTime expiresAt;
        int version = 0;
        bool stuck = false; ///< processing past its lease, by the server's clock
    };

    /// `session` must outlive this object. Nothing is requested until load().
    DeadLetterCase(db::DatabaseSession *session, qint64 deadLetterId, QObject *parent = nullptr);

    qint64 id() const { return m_id; }

    /// Requests every part (not the full payload). Answers to an earlier load() are dropped.
    void load();
    /// Requests the whole payload (DeadLetterPayload) off the GUI thread; fullPayloadLoaded() or
    /// failed(Part::FullPayload, ...) follows. Does nothing while one is on its way.
    void loadFullPayload();
    bool isLoadingFullPayload() const { return m_fullPayloadPending; }
    /// The whole payload once fullPayloadLoaded() was emitted; empty before.
    QByteArray fullPayload() const { return m_fullPayload; }

    /// True once `part` answered (with rows or with an error) for the current load().
    bool isLoaded(Part part) const { return m_loaded[std::size_t(part)]; }
    /// True when `part` answered with an error for the current load().
    bool hasFailed(Part part) const { return m_failed[std::size_t(part)]; }
    /// True once every part of load() answered and the history's first page is in.
    bool isComplete() const;
    /// The rows of `part` as the server sent them (empty before it loaded).
    db::ResultSet result(Part part) const { return m_results[std::size_t(part)]; }

    /// The dead letter; nullopt before it loaded or when there is no such dead letter.
    std::optional<Detail> detail() const { return m_detail; }
    /// Every attempt, oldest first, when the job has at most timelineBuckets() of them (the
    /// timeline draws each); empty otherwise, see attemptBuckets(). The table pages through
    /// attemptsModel() instead.
    QList<Attempt> attempts() const { return m_attempts; }
    /// The attempts counted in timelineBuckets() time buckets when there are more of them.
    QList<AttemptBucket> attemptBuckets() const { return m_buckets; }
    /// How many points the timeline can draw (its width in pixels); more attempts than this are
    /// loaded as buckets. Takes effect at the next load().
    void setTimelineBuckets(int buckets) { m_timelineBuckets = std::max(buckets, 10); }
    int timelineBuckets() const { return m_timelineBuckets; }
    /// The rounds, oldest first (empty before Part::Attempts loaded).
    QList<Round> rounds() const { return m_rounds; }
    /// Every attempt of every round: the history's count.
    qint64 attemptCount() const;
    /// "round 1: 8 attempts, exhausted; requeued by demo_oncall at 2026-03-14 10:26:53 +01:00
    /// (attempt counter reset); round 2: attempt 1 succeeded" (times as display::time with
    /// `showUtc`). Empty before the rounds and the detail loaded.
    QString story(bool showUtc) const;
    QList<VerdictReason> verdict() const { return m_verdict; }
    /// The worst severity among the verdict's reasons (Ok when there is none).
    Severity worstSeverity() const;
    std::optional<KeyRecord> keyRecord() const { return m_keyRecord; }

    /// Table models over the attempts (paged, see AttemptHistoryModel), mismatches, outbox and
    /// audit parts; owned by this object, filled as the parts arrive.
    AttemptHistoryModel *attemptsModel() const { return m_attemptsModel; }
    ResultTableModel *mismatchesModel() const { return m_mismatchesModel; }
    ResultTableModel *outboxModel() const { return m_outboxModel; }
    ResultTableModel *auditModel() const { return m_auditModel; }
    /// Switches the table models between local time with offset and UTC.
    void setShowUtc(bool utc);

    /// "block", "warn" or "ok" (the server's words).
    static Severity severityFromText(const QString &text);

Q_SIGNALS:
    void partLoaded(redrive::DeadLetterCase::Part part);
    void failed(redrive::DeadLetterCase::Part part, const redrive::db::DbError &error);
    /// `bytes` is the whole payload; `isJson` when it is JSON text (else raw bytes).
    void fullPayloadLoaded(const QByteArray &bytes, bool isJson);

private:
    void request(Part part);
    void accept(Part part, const db::ResultSet &rows);

    db::DatabaseSession *m_session;
    qint64 m_id;
    quint64 m_generation = 0;
    QList<quint64> m_requests; ///< the session's ids of the panes still on their way
    static constexpr std::size_t kPartCount = std::size_t(Part::FullPayload) + 1;
    std::array<db::ResultSet, kPartCount> m_results;
    std::array<bool, kPartCount> m_loaded {};
    std::array<bool, kPartCount> m_failed {};
    std::optional<Detail> m_detail;
    QList<Attempt> m_attempts;
    QList<AttemptBucket> m_buckets;
    QList<Round> m_rounds;
    int m_timelineBuckets = 1000;
    QList<VerdictReason> m_verdict;
    std::optional<KeyRecord> m_keyRecord;
    bool m_fullPayloadPending = false;
    QByteArray m_fullPayload;
    AttemptHistoryModel *m_attemptsModel;
    ResultTableModel *m_mismatchesModel;
    ResultTableModel *m_outboxModel;
    ResultTableModel *m_auditModel;
};

} // namespace redrive
