#include "models/db/sql_statement.h"

#include <QFile>
#include <QHash>
#include <QMutex>
#include <QRegularExpression>

namespace redrive::db {

namespace {

struct Source
{
    const char *file; ///< resources/sql/<file>.sql
    const char *sortColumn; ///< fills {{sort_column}}, or nullptr
    const char *name;
};

Source sourceOf(Statement statement)
{
    switch (statement) {
    case Statement::SessionRoles:
        return { "session_roles", nullptr, "session_roles" };
    case Statement::DeadLetterPageNewest:
        return { "dead_letter_page_newest", nullptr, "dead_letter_page_newest" };
    case Statement::DeadLetterPageOldest:
        return { "dead_letter_page_oldest", nullptr, "dead_letter_page_oldest" };
    case Statement::DeadLetterPageByStatus:
        return { "dead_letter_page_by_column", "status", "dead_letter_page_by_status" };
    case Statement::DeadLetterPageByQueue:
        return { "dead_letter_page_by_column", "queue", "dead_letter_page_by_queue" };
    case Statement::DeadLetterPageByKind:
        return { "dead_letter_page_by_column", "kind", "dead_letter_page_by_kind" };
    case Statement::DeadLetterPageByErrorClass:
        return { "dead_letter_page_by_column", "error_class", "dead_letter_page_by_error_class" };
    case Statement::DeadLetterCount:
        return { "dead_letter_count", nullptr, "dead_letter_count" };
    case Statement::DeadLetterEstimate:
        return { "dead_letter_estimate", nullptr, "dead_letter_estimate" };
    case Statement::DeadLetterNewerCount:
        return { "dead_letter_newer_count", nullptr, "dead_letter_newer_count" };
    case Statement::FailureGroups:
        return { "failure_groups", nullptr, "failure_groups" };
    case Statement::DeadLetterFacets:
        return { "dead_letter_facets", nullptr, "dead_letter_facets" };
    case Statement::DeadLetterDetail:
        return { "dead_letter_detail", nullptr, "dead_letter_detail" };
    case Statement::DeadLetterPayload:
        return { "dead_letter_payload", nullptr, "dead_letter_payload" };
    case Statement::AttemptHistory:
        return { "attempt_history", nullptr, "attempt_history" };
    case Statement::DeadLetterIdempotencyKey:
        return { "dead_letter_idempotency_key", nullptr, "dead_letter_idempotency_key" };
    case Statement::DeadLetterMismatches:
        return { "dead_letter_mismatches", nullptr, "dead_letter_mismatches" };
    case Statement::DeadLetterOutbox:
        return { "dead_letter_outbox", nullptr, "dead_letter_outbox" };
    case Statement::DeadLetterAudit:
        return { "dead_letter_audit", nullptr, "dead_letter_audit" };
    case Statement::RetryVerdict:
        return { "retry_verdict", nullptr, "retry_verdict" };
    case Statement::StuckKeys:
        return { "stuck_keys", nullptr, "stuck_keys" };
    case Statement::KeyConflicts:
        return { "key_conflicts", nullptr, "key_conflicts" };
    case Statement::IdempotencyKeyPage:
        return { "idempotency_key_page", nullptr, "idempotency_key_page" };
    case Statement::ReconciliationRuns:
        return { "reconciliation_runs", nullptr, "reconciliation_runs" };
    case Statement::MismatchPage:
        return { "mismatch_page", nullptr, "mismatch_page" };
    case Statement::MismatchCounts:
        return { "mismatch_counts", nullptr, "mismatch_counts" };
    case Statement::OverviewDeadLettersByClass:
        return { "overview_dead_letters_by_class", nullptr, "overview_dead_letters_by_class" };
    case Statement::OverviewAttemptOutcomes:
        return { "overview_attempt_outcomes", nullptr, "overview_attempt_outcomes" };
    case Statement::OverviewOpenResolved:
        return { "overview_open_resolved", nullptr, "overview_open_resolved" };
    case Statement::SchemaPresence:
        return { "schema_presence", nullptr, "schema_presence" };
    case Statement::SchemaVersion:
        return { "schema_version", nullptr, "schema_version" };
    }
    return { "", nullptr, "" };
}

QByteArray readResource(const QString &path)
{
    QFile file(path);
    return file.open(QIODevice::ReadOnly) ? file.readAll() : QByteArray();
}

QByteArray expand(const Source &source)
{
    QByteArray sql = readResource(QStringLiteral(":/sql/%1.sql").arg(QLatin1String(source.file)));
    if (sql.isEmpty())
        return {};
    if (source.sortColumn)
        sql.replace("{{sort_column}}", source.sortColumn);
    static const QRegularExpression include(QStringLiteral(R"(\{\{([a-z_]+)\}\})"));
    QString text = QString::fromUtf8(sql);
    QRegularExpressionMatch m;
    while ((m = include.match(text)).hasMatch()) {
        QByteArray fragment
            = readResource(QStringLiteral(":/sql/fragments/%1.sql").arg(m.captured(1)));
        if (fragment.isEmpty())
            return {}; // a missing fragment makes the whole statement missing
        text.replace(m.capturedStart(), m.capturedLength(), QString::fromUtf8(fragment).trimmed());
    }
    return text.toUtf8();
}

} // namespace

QList<Statement> allStatements()
{
    return {
        Statement::SessionRoles,
        Statement::DeadLetterPageNewest,
        Statement::DeadLetterPageOldest,
        Statement::DeadLetterPageByStatus,
        Statement::DeadLetterPageByQueue,
        Statement::DeadLetterPageByKind,
        Statement::DeadLetterPageByErrorClass,
        Statement::DeadLetterCount,
        Statement::DeadLetterEstimate,
        Statement::DeadLetterNewerCount,
        Statement::FailureGroups,
        Statement::DeadLetterFacets,
        Statement::DeadLetterDetail,
        Statement::DeadLetterPayload,
        Statement::AttemptHistory,
        Statement::DeadLetterIdempotencyKey,
        Statement::DeadLetterMismatches,
        Statement::DeadLetterOutbox,
        Statement::DeadLetterAudit,
        Statement::RetryVerdict,
        Statement::StuckKeys,
        Statement::KeyConflicts,
        Statement::IdempotencyKeyPage,
        Statement::ReconciliationRuns,
        Statement::MismatchPage,
        Statement::MismatchCounts,
        Statement::OverviewDeadLettersByClass,
        Statement::OverviewAttemptOutcomes,
        Statement::OverviewOpenResolved,
        Statement::SchemaPresence,
        Statement::SchemaVersion,
    };
}

QString statementName(Statement statement)
{
    return QString::fromLatin1(sourceOf(statement).name);
}

QByteArray statementSql(Statement statement)
{
    static QMutex mutex;
    static QHash<Statement, QByteArray> cache;
    QMutexLocker lock(&mutex);
    auto it = cache.constFind(statement);
    if (it != cache.constEnd())
        return *it;
    const QByteArray sql = expand(sourceOf(statement));
    cache.insert(statement, sql);
    return sql;
}

} // namespace redrive::db
