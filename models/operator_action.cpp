// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/operator_action.h"

#include "models/db/database_session.h"
#include "models/display_format.h"

#include <QCoreApplication>
#include <QJsonDocument>
#include <QObject>
#include <pwd.h>
#include <unistd.h>

namespace redrive {

namespace {

// An empty ticket is sent as NULL: the action functions store "no ticket", not "".
db::QueryParams &addTicket(db::QueryParams &params, const QString &ticket)
{
    const QString trimmed = ticket.trimmed();
    if (trimmed.isEmpty())
        return params.addNull(db::ParamType::Text);
    return params.addText(trimmed);
}

OperatorAction start(db::Statement statement, const QUuid &id = QUuid::createUuid())
{
    OperatorAction action { statement, {}, id };
    action.params.addUuid(id);
    return action;
}

} // namespace

QString OperatorAction::osUser()
{
    for (const char *variable : { "USER", "LOGNAME", "USERNAME" }) {
        const QString user = qEnvironmentVariable(variable);
        if (!user.isEmpty())
            return user;
    }
    // No login variables (a service, a container): the account the process runs as.
    if (const passwd *account = getpwuid(getuid()))
        return QString::fromLocal8Bit(account->pw_name);
    return {};
}

OperatorAction OperatorAction::claim(const QByteArray &targetsJson, bool release,
                                     const QString &reason)
{
    OperatorAction a = start(db::Statement::ActionClaim);
    a.params.addJson(targetsJson).addBool(release).addText(reason).addText(osUser());
    return a;
}

OperatorAction OperatorAction::note(qint64 deadLetterId, const QString &text)
{
    OperatorAction a = start(db::Statement::ActionNote);
    a.params.addText(QStringLiteral("dead_letter"))
        .addText(QString::number(deadLetterId))
        .addText(text)
        .addText(osUser());
    return a;
}

OperatorAction OperatorAction::releaseStuckJobs(const QByteArray &targetsJson,
                                                const QString &reason, const QString &ticket)
{
    OperatorAction a = start(db::Statement::ActionReleaseStuckJobs);
    a.params.addJson(targetsJson).addText(reason);
    addTicket(a.params, ticket).addText(osUser());
    return a;
}

OperatorAction OperatorAction::releaseKey(const QString &scope, const QString &key, int version,
                                          const QString &reason, const QString &ticket)
{
    OperatorAction a = start(db::Statement::ActionReleaseKey);
    a.params.addText(scope).addText(key).addInt(version).addText(reason);
    addTicket(a.params, ticket).addText(osUser());
    return a;
}

OperatorAction OperatorAction::takeOverBulk(const QUuid &bulkId, const QString &expectedActor,
                                            const QString &reason, const QString &ticket)
{
    OperatorAction a = start(db::Statement::ActionTakeOverBulk);
    a.params.addUuid(bulkId).addText(expectedActor).addText(reason);
    addTicket(a.params, ticket).addText(osUser());
    return a;
}

OperatorAction OperatorAction::abandonBulk(const QUuid &bulkId, const QString &reason,
                                           const QString &ticket)
{
    OperatorAction a = start(db::Statement::ActionAbandonBulk);
    a.params.addUuid(bulkId).addText(reason);
    addTicket(a.params, ticket).addText(osUser());
    return a;
}

OperatorAction OperatorAction::resolveMismatch(qint64 mismatchId, int version,
                                               const QString &resolution, const QString &reason,
                                               const QString &ticket)
{
    OperatorAction a = start(db::Statement::ActionResolveMismatch);
    a.params.addBigInt(mismatchId).addInt(version).addText(resolution).addText(reason);
    addTicket(a.params, ticket).addText(osUser());
    return a;
}

OperatorAction OperatorAction::editAndRequeue(qint64 deadLetterId, int version,
                                              const QByteArray &payload, bool resetAttempts,
                                              const QString &reason, const QString &ticket)
{
    OperatorAction a = start(db::Statement::ActionEditAndRequeue);
    a.params.addBigInt(deadLetterId)
        .addInt(version)
        .addJson(payload)
        .addBool(resetAttempts)
        .addText(reason.trimmed());
    addTicket(a.params, ticket).addText(osUser());
    return a;
}

OperatorAction OperatorAction::requestCompensation(qint64 deadLetterId, int version,
                                                   const QString &kind, qint64 amountMinor,
                                                   const QString &reason, const QString &ticket)
{
    OperatorAction a = start(db::Statement::ActionRequestCompensation);
    a.params.addText(QStringLiteral("dead_letter"))
        .addBigInt(deadLetterId)
        .addInt(version)
        .addText(kind)
        .addBigInt(amountMinor)
        .addText(reason.trimmed());
    addTicket(a.params, ticket).addText(osUser());
    return a;
}

OperatorAction OperatorAction::requestMismatchCompensation(qint64 mismatchId, int version,
                                                           qint64 amountMinor,
                                                           const QString &reason,
                                                           const QString &ticket)
{
    OperatorAction a = start(db::Statement::ActionRequestMismatchCompensation);
    a.params.addBigInt(mismatchId).addInt(version).addBigInt(amountMinor).addText(reason.trimmed());
    addTicket(a.params, ticket).addText(osUser());
    return a;
}

OperatorAction OperatorAction::decideCompensation(const QUuid &actionId, qint64 requestId,
                                                  int version, bool approve, const QString &reason,
                                                  const QString &osUser)
{
    OperatorAction a = start(db::Statement::ActionDecideCompensation, actionId);
    a.params.addBigInt(requestId).addInt(version).addBool(approve).addText(reason);
    if (osUser.isEmpty())
        a.params.addNull(db::ParamType::Text);
    else
        a.params.addText(osUser);
    return a;
}

db::DbError explainedActionError(const db::DbError &error)
{
    // The action functions live in schema redrive, granted to the roles only; the statements
    // name them unqualified (the search_path picks a source's adapter first), and PostgreSQL
    // skips a schema the login may not use, so a login without a Redrive role is told the
    // function does not exist and to add type casts (docs/security.md, "Roles").
    if (error.sqlState() != QLatin1String("42883"))
        return error;
    return db::DbError(db::ErrorKind::Permission,
                       QCoreApplication::translate(
                           "OperatorAction",
                           "This login may not take this action: the database offers it no such "
                           "function (%1). Either the login lacks the Redrive role the action "
                           "needs, or this database's Redrive schema is older than the console. "
                           "Ask its administrator to check the login's roles (redrive_oncall, "
                           "redrive_support, redrive_approver), or to run `redrive migrate`.")
                           .arg(display::firstLine(error.message())),
                       error.sqlState());
}

void runOperatorAction(db::DatabaseSession *session, QObject *context, const OperatorAction &action,
                       std::function<void(const db::DbExpected<QJsonObject> &)> done)
{
    session->execute(db::statementSql(action.statement), action.params, context,
                     [done = std::move(done)](const db::DbExpected<db::ResultSet> &rows) {
                         if (!rows) {
                             done(explainedActionError(rows.error()));
                             return;
                         }
                         // Every action function returns one row, one column: its outcome.
                         done(QJsonDocument::fromJson(rows->raw(0, 0)).object());
                     });
}

} // namespace redrive
