// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/audit_month_detacher.h"

#include "models/audit_chain_verifier.h"
#include "models/audit_export.h"
#include "models/audit_filter.h"
#include "models/cli_commands.h"
#include "models/db/pg_connection.h"
#include "models/db/query_params.h"
#include "models/db/sql_statement.h"
#include "models/operator_action.h"

#include <QCryptographicHash>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QJsonObject>
#include <QRegularExpression>
#include <QTemporaryFile>
#include <QTimeZone>
#include <QUuid>
#include <cstdio>

namespace redrive {

namespace {

db::DbError mismatch(const QString &what)
{
    return db::DbError(db::ErrorKind::Other, what);
}

// The next entry line of a JSON Lines export (the chain-head record is skipped), without its
// line end; empty at the end.
QByteArray nextEntryLine(QFile &file)
{
    while (!file.atEnd()) {
        QByteArray line = file.readLine();
        if (line.endsWith('\n'))
            line.chop(1);
        if (line.isEmpty() || line.startsWith("{\"chain_head\""))
            continue;
        return line;
    }
    return {};
}

} // namespace

AuditMonthDetacher::AuditMonthDetacher(db::PgConnection &connection)
    : m_connection(connection)
{ }

std::optional<QDate> AuditMonthDetacher::parseMonth(const QString &text)
{
    static const QRegularExpression form(QStringLiteral("^([0-9]{4})-(0[1-9]|1[0-2])$"));
    const auto m = form.match(text.trimmed());
    if (!m.hasMatch())
        return std::nullopt;
    return QDate(m.captured(1).toInt(), m.captured(2).toInt(), 1);
}

db::DbExpected<AuditDetachSummary> AuditMonthDetacher::run(const QDate &month,
                                                           const QString &exportPath)
{
    AuditDetachSummary summary;
    summary.month = month;
    const QString monthText = month.toString(QStringLiteral("yyyy-MM"));

    QFile given(exportPath);
    if (!given.open(QIODevice::ReadOnly))
        return mismatch(QStringLiteral("cannot read %1: %2").arg(exportPath, given.errorString()));
    QCryptographicHash fileHash(QCryptographicHash::Sha256);
    fileHash.addData(&given);
    summary.exportSha256 = fileHash.result().toHex();

    // The chain as it stands must hold: the export is compared with entries this program
    // verified, so the file's entries are the chain's.
    AuditChainVerifier verifier;
    auto report = verifier.verify(m_connection);
    if (!report)
        return report.error();
    if (!report->holds())
        return mismatch(QStringLiteral("the audit chain does not hold (entry %1: %2); nothing "
                                       "was detached")
                            .arg(report->first().id)
                            .arg(report->first().message()));

    // The month as export-audit writes it now, to compare with the file line by line.
    AuditFilter filter;
    filter.from = QDateTime(month, QTime(0, 0), QTimeZone::utc());
    filter.until = QDateTime(month.addMonths(1), QTime(0, 0), QTimeZone::utc());
    QTemporaryFile fresh;
    if (!fresh.open())
        return mismatch(
            QStringLiteral("cannot create a temporary file: %1").arg(fresh.errorString()));
    auto exported = exportAudit(m_connection, filter, AuditExportFormat::JsonLines, &fresh);
    if (!exported)
        return exported.error();
    if (exported->rows == 0)
        return mismatch(
            QStringLiteral("audit month %1 holds no entries: nothing to detach").arg(monthText));
    if (!fresh.seek(0) || !given.seek(0))
        return mismatch(QStringLiteral("cannot read the exports back"));
    qint64 compared = 0;
    QByteArray lastLine;
    for (;;) {
        const QByteArray expected = nextEntryLine(fresh);
        const QByteArray actual = nextEntryLine(given);
        if (expected.isEmpty() && actual.isEmpty())
            break;
        if (expected != actual) {
            const qint64 id = QJsonDocument::fromJson(expected.isEmpty() ? actual : expected)
                                  .object()
                                  .value(QLatin1String("id"))
                                  .toInteger();
            return mismatch(
                QStringLiteral("%1 is not the export of audit month %2: entry line %3 (id %4) "
                               "differs from the chain; export the month with `redrive "
                               "export-audit --format jsonl --from %2-01T00:00:00Z --until …` "
                               "and try again")
                    .arg(exportPath, monthText)
                    .arg(compared + 1)
                    .arg(id));
        }
        lastLine = actual;
        ++compared;
    }
    const QJsonObject last = QJsonDocument::fromJson(lastLine).object();
    summary.firstId = exported->firstId;
    summary.lastId = last.value(QLatin1String("id")).toInteger();
    summary.headHash = last.value(QLatin1String("hash")).toString().toLatin1();
    summary.entries = compared;
    summary.partition
        = QStringLiteral("audit_log_%1").arg(month.toString(QStringLiteral("yyyy_MM")));

    const QString reason = m_reason.isEmpty()
        ? QStringLiteral("retention: audit month %1 exported to %2")
              .arg(monthText, QFileInfo(exportPath).fileName())
        : m_reason;
    auto outcome = m_connection.exec(db::statementSql(db::Statement::AuditDetachMonth),
                                     db::QueryParams()
                                         .addUuid(QUuid::createUuid())
                                         .addText(month.toString(Qt::ISODate))
                                         .addBigInt(summary.lastId)
                                         .addText(QString::fromLatin1(summary.headHash))
                                         .addBigInt(summary.entries)
                                         .addText(QString::fromLatin1(summary.exportSha256))
                                         .addText(reason)
                                         .addText(OperatorAction::osUser()));
    if (!outcome)
        return outcome.error();
    return summary;
}

int runAuditDetachCommand(const db::ConnectionSettings &settings,
                          const AuditDetachArguments &arguments)
{
    using namespace cli;
    const char *me = "redrive audit-detach";
    const auto month = AuditMonthDetacher::parseMonth(arguments.month);
    if (!month || arguments.exportPath.isEmpty()) {
        std::fprintf(stderr,
                     "%s: give --month YYYY-MM and --export FILE (that month's JSON Lines "
                     "export from redrive export-audit)\n",
                     me);
        return kExitUsage;
    }
    db::ConnectionSettings readContract = settings;
    readContract.searchPath = QStringLiteral("redrive");
    auto connection = db::PgConnection::open(readContract);
    if (!connection)
        return reportCannotConnect(me, connection.error());
    AuditMonthDetacher detacher(connection.value());
    detacher.setReason(arguments.reason);
    auto summary = detacher.run(*month, arguments.exportPath);
    if (!summary)
        return reportFailure(me, summary.error());
    std::printf("redrive audit-detach: detached audit month %s: entries %lld to %lld (%lld), "
                "export sha256 %s\n",
                qPrintable(summary->month.toString(QStringLiteral("yyyy-MM"))),
                static_cast<long long>(summary->firstId), static_cast<long long>(summary->lastId),
                static_cast<long long>(summary->entries), summary->exportSha256.constData());
    std::printf("redrive audit-detach: recorded head: entry %lld hash %s; verification starts "
                "there\n",
                static_cast<long long>(summary->lastId), summary->headHash.constData());
    std::printf("redrive audit-detach: the table redrive.%s stays in the database for the DBA to "
                "dump and drop\n",
                qPrintable(summary->partition));
    return kExitOk;
}

} // namespace redrive
