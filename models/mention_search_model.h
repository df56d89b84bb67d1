// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/result_table_model.h"

#include <QDateTime>
#include <QString>

namespace redrive {

/// What support searches for (docs/domain.md#finding-a-customer): every dead letter, mismatch,
/// compensation and audit entry that mentions a term, literally and case-insensitively, through
/// Statement::FindMentions (the function redrive.find_mentions). Rows are grouped by kind
/// (dead letters, mismatches, compensations, audit entries), newest first within a kind, at most
/// kRowsPerKind of each. A kind the login may not read is left out by the server.
class MentionSearchModel : public ResultTableModel
{
    Q_OBJECT
public:
    /// The kinds of hit, in the order the rows come.
    enum class Kind { DeadLetter, Mismatch, Compensation, AuditEntry, Unknown };
    static constexpr int kRowsPerKind = 100;
    /// kind_total at or above this means "more than kMaxCounted" (the server stops counting).
    static constexpr qint64 kMaxCounted = 1000;
    /// Terms shorter than this are not sent (the server refuses them too).
    static constexpr int kMinimumLength = 3;

    /// `session` must outlive the model. Nothing loads until search().
    explicit MentionSearchModel(db::DatabaseSession *session, QObject *parent = nullptr);

    /// Searches for `term` (blanks around it ignored). Returns false, and changes nothing, when
    /// the term is shorter than kMinimumLength characters.
    bool search(const QString &term);
    /// The term of the last search() (trimmed).
    QString term() const { return m_term; }

    /// The kind of the hit in `row`.
    Kind kindAt(int row) const;
    /// The id of the hit in `row` (dead letter, mismatch, compensation or audit entry id), or 0.
    qint64 idAt(int row) const { return text(row, QStringLiteral("id")).toLongLong(); }
    /// The time of the hit in `row` (dead_at, detected_at, requested_at or the audit entry's at),
    /// in UTC; invalid when unknown.
    QDateTime atOf(int row) const;
    /// The reconciliation run of the mismatch in `row`, or 0.
    qint64 runIdAt(int row) const { return text(row, QStringLiteral("run_id")).toLongLong(); }
    /// How many hits of `kind` the server counted (0 when none or the kind is not visible);
    /// kMaxCounted + 1 means more than kMaxCounted.
    qint64 totalOf(Kind kind) const;
    /// One line with the counts per kind, e.g. "2 dead letters · 1 mismatch · 0 compensations ·
    /// 3 audit entries".
    QString countsText() const;

    /// The kind's name in the result ("dead_letter", ...).
    static QString kindName(Kind kind);
    /// The kind as a person reads it, singular or plural ("Dead letter", "mismatches").
    static QString kindLabel(Kind kind, qint64 count);

private:
    QString m_term;
};

} // namespace redrive
