// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/cli_commands.h"

#include "models/db/pg_connection.h"
#include "models/db/query_params.h"
#include "models/db/schema_migrator.h"
#include "models/db/sql_statement.h"
#include "models/display_format.h"

#include <cstdio>

namespace redrive::cli {

namespace {

// The server's words may carry text from rows (a reason, a key): shown with invisible and
// control characters made visible (docs/security.md, "Text from the database is plain text").
void printLine(const char *prefix, const QString &text)
{
    std::fprintf(stderr, "%s%s\n", prefix, qPrintable(display::revealInvisible(text)));
}

} // namespace

int reportFailure(const char *me, const db::DbError &error)
{
    printLine("", QStringLiteral("%1: failed: %2").arg(QLatin1String(me), error.summary()));
    if (!error.detail().isEmpty())
        printLine("  detail: ", error.detail());
    if (!error.hint().isEmpty())
        printLine("  hint: ", error.hint());
    return kExitFailed;
}

int reportCannotConnect(const char *me, const db::DbError &error)
{
    printLine("", QStringLiteral("%1: cannot connect: %2").arg(QLatin1String(me), error.summary()));
    return kExitUnavailable;
}

int runMigrateCommand(const db::ConnectionSettings &given)
{
    // pg_catalog, pg_temp: the default path starts with "$user", a schema another role (the queue's
    // application) may create under the migrating role's name, whose functions the migrations'
    // own top-level calls (format(), array_to_string()) would otherwise run as the migrating role
    // (docs/security.md, "Who owns Redrive's schemas").
    db::ConnectionSettings settings = given;
    settings.searchPath = QStringLiteral("pg_catalog");
    auto connection = db::PgConnection::open(settings);
    if (!connection)
        return reportCannotConnect("redrive migrate", connection.error());
    db::SchemaMigrator migrator(connection.value());
    auto report = migrator.migrate();
    if (!report)
        return reportFailure("redrive migrate", report.error());
    if (report->applied.isEmpty()) {
        std::printf("redrive migrate: schema is up to date (version %d)\n", report->toVersion);
    } else {
        std::printf("redrive migrate: version %d -> %d (applied", report->fromVersion,
                    report->toVersion);
        for (int v : std::as_const(report->applied))
            std::printf(" %04d", v);
        std::printf(")\n");
    }
    return kExitOk;
}

int runMaintainCommand(const db::ConnectionSettings &settings, int monthsAhead)
{
    auto connection = db::PgConnection::open(settings);
    if (!connection)
        return reportCannotConnect("redrive maintain", connection.error());
    auto created = connection->exec(db::statementSql(db::Statement::MaintainPartitions),
                                    db::QueryParams().addInt(monthsAhead));
    if (!created)
        return reportFailure("redrive maintain", created.error());
    if (created->rowCount() == 0)
        std::printf("redrive maintain: every partition up to %d months ahead exists\n",
                    monthsAhead);
    for (int row = 0; row < created->rowCount(); ++row)
        std::printf("redrive maintain: created partition redrive.%s\n",
                    qPrintable(created->text(row, 0)));
    return kExitOk;
}

QString exportAuditFormat(const QString &format, const QString &output)
{
    if (!format.isEmpty())
        return format;
    if (output.endsWith(QLatin1String(".csv"), Qt::CaseInsensitive))
        return QStringLiteral("csv");
    if (output.endsWith(QLatin1String(".jsonl"), Qt::CaseInsensitive)
        || output.endsWith(QLatin1String(".json"), Qt::CaseInsensitive))
        return QStringLiteral("jsonl");
    return {};
}

} // namespace redrive::cli
