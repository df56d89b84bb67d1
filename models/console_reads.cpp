// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/console_reads.h"

#include "models/db/database_session.h"
#include "models/db/query_params.h"
#include "models/db/sql_statement.h"
#include "models/dead_letter_filter.h"
#include "models/failure_group_model.h"
#include "models/time_buckets.h"

#include <QObject>

namespace redrive::reads {

namespace {

void run(db::DatabaseSession *session, QObject *context, db::Statement statement,
         const db::QueryParams &params, Done<db::ResultSet> done,
         db::DatabaseSession::Priority priority = db::DatabaseSession::Priority::Default)
{
    session->execute(db::statementSql(statement), params, context, std::move(done), priority);
}

// Loads nobody is waiting on to act: never in the way of a page or a case view.
constexpr auto kBackground = db::DatabaseSession::Priority::Background;

// A text[] column as the server writes it ({a,b}) into its elements; Redrive's role names and
// capability words never need quoting.
QStringList textArray(const QString &text)
{
    return text.mid(1, text.size() - 2).split(QLatin1Char(','), Qt::SkipEmptyParts);
}

} // namespace

void schemaVersion(db::DatabaseSession *session, QObject *context, Done<int> done)
{
    run(session, context, db::Statement::SchemaPresence, {},
        [session, context, done](const db::DbExpected<db::ResultSet> &present) {
            if (!present) {
                done(present.error());
                return;
            }
            if (!present->boolean(0, present->columnIndex(QStringLiteral("present")))
                     .value_or(false)) {
                done(0);
                return;
            }
            run(session, context, db::Statement::SchemaVersion, {},
                [done](const db::DbExpected<db::ResultSet> &version) {
                    if (!version)
                        done(version.error());
                    else
                        done(version->integer(0, QStringLiteral("version")).value_or(0));
                });
        });
}

void sessionRoles(db::DatabaseSession *session, QObject *context, Done<SessionRoles> done)
{
    run(session, context, db::Statement::SessionRoles, {},
        [done](const db::DbExpected<db::ResultSet> &rows) {
            if (!rows) {
                done(rows.error());
                return;
            }
            SessionRoles roles;
            if (rows->rowCount() > 0) {
                roles.login = rows->text(0, QStringLiteral("login_role"));
                roles.redriveRoles = textArray(rows->text(0, QStringLiteral("redrive_roles")));
            }
            done(roles);
        });
}

void deadLetterFacets(db::DatabaseSession *session, QObject *context, Done<DeadLetterFacets> done)
{
    run(
        session, context, db::Statement::DeadLetterFacets, {},
        [done](const db::DbExpected<db::ResultSet> &rows) {
            if (!rows) {
                done(rows.error());
                return;
            }
            DeadLetterFacets facets;
            for (int r = 0; r < rows->rowCount(); ++r) {
                const QString value = rows->text(r, QStringLiteral("value"));
                if (rows->text(r, QStringLiteral("facet")) == QLatin1String("queue"))
                    facets.queues << value;
                else
                    facets.kinds << value;
            }
            done(facets);
        },
        kBackground);
}

void sources(db::DatabaseSession *session, QObject *context, Done<QList<Source>> done)
{
    run(session, context, db::Statement::SourceList, {},
        [done](const db::DbExpected<db::ResultSet> &rows) {
            if (!rows) {
                done(rows.error());
                return;
            }
            QList<Source> sources;
            for (int r = 0; r < rows->rowCount(); ++r)
                sources << Source {
                    rows->text(r, QStringLiteral("label")),
                    rows->text(r, QStringLiteral("search_path")),
                    textArray(rows->text(r, QStringLiteral("capabilities"))),
                    rows->timestamp(r, rows->columnIndex(QStringLiteral("history_starts_at"))),
                    rows->boolean(r, rows->columnIndex(QStringLiteral("capture_active")))
                        .value_or(true)
                };
            done(sources);
        });
}

void deadLetterOfJob(db::DatabaseSession *session, QObject *context, const QString &jobRef,
                     Done<std::optional<qint64>> done)
{
    db::QueryParams params;
    params.addText(jobRef);
    run(session, context, db::Statement::DeadLetterOfJob, params,
        [done](const db::DbExpected<db::ResultSet> &rows) {
            if (!rows)
                done(rows.error());
            else
                done(rows->rowCount() == 0 ? std::optional<qint64>() : rows->bigInt(0, 0));
        });
}

void serverClock(db::DatabaseSession *session, QObject *context, Done<QDateTime> done)
{
    run(session, context, db::Statement::ServerClock, {},
        [done](const db::DbExpected<db::ResultSet> &rows) {
            if (!rows)
                done(rows.error());
            else
                done(rows->rowCount() == 1
                         ? rows->timestamp(0, rows->columnIndex(QStringLiteral("server_now")))
                         : QDateTime());
        });
}

void overviewBuckets(db::DatabaseSession *session, QObject *context, OverviewChart chart,
                     qint64 widthMs, const QDateTime &from, const QDateTime &to,
                     const QTimeZone &zone, Done<db::ResultSet> done)
{
    Q_ASSERT(widthMs > 0 && widthMs % 60000 == 0);
    db::QueryParams params;
    params.addBigInt(widthMs).addTimestamp(from).addTimestamp(to);
    params.addText(time_buckets::serverName(zone))
        .addBool(time_buckets::hasWholeHourOffsets(zone, from, to));
    const db::Statement statement = chart == OverviewChart::DeadLettersByClass
        ? db::Statement::OverviewDeadLettersByClass
        : chart == OverviewChart::AttemptOutcomes ? db::Statement::OverviewAttemptOutcomes
                                                  : db::Statement::OverviewOpenResolved;
    run(session, context, statement, params, std::move(done), kBackground);
}

void failureGroups(db::DatabaseSession *session, QObject *context, const DeadLetterFilter &filter,
                   int limit, Done<db::ResultSet> done)
{
    db::QueryParams params;
    filter.appendParams(params);
    params.addInt(limit).addInt(FailureGroupModel::kSearchSample);
    run(session, context, db::Statement::FailureGroups, params, std::move(done), kBackground);
}

void requeueFollowUp(db::DatabaseSession *session, QObject *context, const QList<qint64> &ids,
                     Done<RequeueFollowUp> done)
{
    run(session, context, db::Statement::RequeueFollowUp, db::QueryParams().addBigIntArray(ids),
        [done](const db::DbExpected<db::ResultSet> &rows) {
            if (!rows) {
                done(rows.error());
                return;
            }
            RequeueFollowUp f;
            if (rows->rowCount() == 1) {
                auto n = [&](const char *name) {
                    return rows->bigInt(0, QLatin1String(name)).value_or(0);
                };
                f.waiting = n("waiting");
                f.inFlight = n("in_flight");
                f.requeueFailed = n("requeue_failed");
                f.succeeded = n("succeeded");
                f.deadAgain = n("dead_again");
                f.elsewhere = n("elsewhere");
            }
            done(f);
        });
}

void lastChanges(db::DatabaseSession *session, QObject *context, const QList<qint64> &ids,
                 Done<QList<LastChange>> done)
{
    run(session, context, db::Statement::DeadLetterLastChange,
        db::QueryParams().addBigIntArray(ids), [done](const db::DbExpected<db::ResultSet> &rows) {
            if (!rows) {
                done(rows.error());
                return;
            }
            QList<LastChange> out;
            const int at = rows->columnIndex(QStringLiteral("at"));
            for (int r = 0; r < rows->rowCount(); ++r)
                out << LastChange { rows->bigInt(r, QStringLiteral("id")).value_or(0),
                                    rows->text(r, QStringLiteral("action")),
                                    rows->text(r, QStringLiteral("db_user")),
                                    rows->timestamp(r, at),
                                    rows->bigInt(r, QStringLiteral("age_seconds")).value_or(0) };
            done(out);
        });
}

void auditActors(db::DatabaseSession *session, QObject *context, int limit, Done<QStringList> done)
{
    run(session, context, db::Statement::AuditActors, db::QueryParams().addInt(limit),
        [done](const db::DbExpected<db::ResultSet> &rows) {
            if (!rows) {
                done(rows.error());
                return;
            }
            QStringList actors;
            for (int r = 0; r < rows->rowCount(); ++r)
                actors << rows->text(r, QStringLiteral("actor"));
            done(actors);
        });
}

void auditEntryDetail(db::DatabaseSession *session, QObject *context, qint64 id,
                      Done<db::ResultSet> done)
{
    run(session, context, db::Statement::AuditEntryDetail, db::QueryParams().addBigInt(id),
        std::move(done));
}

void compensationContext(db::DatabaseSession *session, QObject *context, qint64 requestId,
                         Done<db::ResultSet> done)
{
    run(session, context, db::Statement::CompensationContext,
        db::QueryParams().addBigInt(requestId), std::move(done));
}

void compensationTarget(db::DatabaseSession *session, QObject *context, qint64 deadLetterId,
                        Done<db::ResultSet> done)
{
    run(session, context, db::Statement::CompensationTarget,
        db::QueryParams().addBigInt(deadLetterId), std::move(done));
}

void mismatchCompensationTarget(db::DatabaseSession *session, QObject *context, qint64 mismatchId,
                                Done<db::ResultSet> done)
{
    run(session, context, db::Statement::MismatchCompensationTarget,
        db::QueryParams().addBigInt(mismatchId), std::move(done));
}

void paymentCompensations(db::DatabaseSession *session, QObject *context, const QString &paymentRef,
                          Done<db::ResultSet> done)
{
    run(session, context, db::Statement::PaymentCompensations,
        db::QueryParams().addText(paymentRef), std::move(done));
}

void attemptHistory(db::DatabaseSession *session, QObject *context, qint64 deadLetterId,
                    Done<db::ResultSet> done)
{
    run(session, context, db::Statement::AttemptHistory, db::QueryParams().addBigInt(deadLetterId),
        std::move(done));
}

void deadLetterMismatches(db::DatabaseSession *session, QObject *context, qint64 deadLetterId,
                          Done<db::ResultSet> done)
{
    run(session, context, db::Statement::DeadLetterMismatches,
        db::QueryParams().addBigInt(deadLetterId), std::move(done));
}

void deadLetterPreview(db::DatabaseSession *session, QObject *context, qint64 deadLetterId,
                       Done<db::ResultSet> done)
{
    db::QueryParams params;
    params.addBigIntArray({ deadLetterId }).addNull(db::ParamType::Text);
    run(session, context, db::Statement::ActionPreview, params, std::move(done));
}

void deadLetterPayload(db::DatabaseSession *session, QObject *context, qint64 deadLetterId,
                       Done<db::ResultSet> done)
{
    run(session, context, db::Statement::DeadLetterPayload,
        db::QueryParams().addBigInt(deadLetterId), std::move(done));
}

} // namespace redrive::reads
