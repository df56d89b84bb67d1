// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/audit_export.h"

#include "models/audit_export_writer.h"
#include "models/cli_commands.h"
#include "models/db/pg_connection.h"
#include "models/db/result_set.h"
#include "models/db/sql_statement.h"
#include "models/display_format.h"

#include <QCoreApplication>
#include <QFile>
#include <QFileInfo>
#include <QJsonDocument>
#include <QSaveFile>
#include <QtConcurrent>
#include <cstdio>
#include <utility>

namespace redrive {

namespace {

QString tr(const char *text)
{
    return QCoreApplication::translate("AuditExport", text);
}

// A line on stderr, a terminal most often: what it quotes (a filter, a path) is anyone's text,
// so its controls show as markers (display::revealInvisible), never as escape sequences.
void printErr(const QString &text)
{
    std::fprintf(stderr, "%s\n", qPrintable(display::revealInvisible(text)));
}

} // namespace

QString auditExportFormatName(AuditExportFormat format)
{
    return format == AuditExportFormat::Csv ? QStringLiteral("csv") : QStringLiteral("jsonl");
}

std::optional<AuditExportFormat> parseAuditExportFormat(const QString &name)
{
    const QString n = name.trimmed().toLower();
    if (n == QLatin1String("csv"))
        return AuditExportFormat::Csv;
    if (n == QLatin1String("jsonl") || n == QLatin1String("json-lines")
        || n == QLatin1String("ndjson"))
        return AuditExportFormat::JsonLines;
    return std::nullopt;
}

AuditChainHead AuditChainHead::fromResult(const db::ResultSet &rows)
{
    AuditChainHead head;
    if (rows.rowCount() < 1)
        return head;
    head.id = rows.bigInt(0, rows.columnIndex(QStringLiteral("id"))).value_or(0);
    head.hash = rows.text(0, QStringLiteral("hash")).toLower();
    head.at = rows.timestamp(0, rows.columnIndex(QStringLiteral("at")));
    head.entries = rows.bigInt(0, rows.columnIndex(QStringLiteral("entries"))).value_or(0);
    return head;
}

QJsonObject AuditExportSummary::toJson() const
{
    QJsonObject chainHead;
    if (head.isValid()) {
        chainHead = { { QStringLiteral("id"), head.id },
                      { QStringLiteral("hash"), head.hash },
                      { QStringLiteral("at"), head.at.toUTC().toString(Qt::ISODateWithMs) },
                      { QStringLiteral("entries"), head.entries } };
    }
    auto idOrNull = [](qint64 id) {
        return id > 0 ? QJsonValue(id) : QJsonValue();
    };
    const QJsonObject exportInfo = {
        { QStringLiteral("format"), auditExportFormatName(format) },
        { QStringLiteral("rows"), rows },
        { QStringLiteral("first_id"), idOrNull(firstId) },
        { QStringLiteral("last_id"), idOrNull(lastId) },
        { QStringLiteral("exported_at"), exportedAt.toUTC().toString(Qt::ISODateWithMs) },
        { QStringLiteral("filter"), filter.toJson() },
        // What each field's value rests on, for whoever reads the export without the console:
        // os_user is whatever the client sent, db_user and client_addr are the server's own.
        { QStringLiteral("field_notes"),
          QJsonObject {
              { QStringLiteral("os_user"),
                QStringLiteral("reported by the client: the operating-system user name the "
                               "console sent; not verified by the server") },
              { QStringLiteral("db_user"),
                QStringLiteral("set by the server: the authenticated login (session_user)") },
              { QStringLiteral("client_addr"),
                QStringLiteral("set by the server: the client's address as the server saw it; "
                               "empty for a local socket") } } },
    };
    return {
        { QStringLiteral("chain_head"), head.isValid() ? QJsonValue(chainHead) : QJsonValue() },
        { QStringLiteral("export"), exportInfo },
        { QStringLiteral("verify"), head.isValid() ? QJsonValue(verifyCommand()) : QJsonValue() }
    };
}

QString AuditExportSummary::verifyCommand() const
{
    if (!head.isValid())
        return {};
    return QStringLiteral("redrive verify-audit --head-id %1 --head-hash %2")
        .arg(head.id)
        .arg(head.hash);
}

QString AuditExportSummary::describe() const
{
    QString text = rows > 0 ? tr("%1 entries exported (ids %2 to %3, %4).")
                                  .arg(rows)
                                  .arg(firstId)
                                  .arg(lastId)
                                  .arg(filter.describe())
                            : tr("No entries matched (%1).").arg(filter.describe());
    if (head.isValid())
        text += QLatin1Char('\n')
            + tr("Chain head at export: entry %1, hash %2 (%3 entries in the chain).")
                  .arg(QString::number(head.id), head.hash, QString::number(head.entries))
            + QLatin1Char('\n') + tr("Check it later with: %1").arg(verifyCommand());
    else
        text += QLatin1Char('\n') + tr("The audit log is empty: there is no chain head.");
    return text;
}

db::QueryParams auditExportPageParams(const AuditFilter &filter, qint64 afterId, qint64 headId,
                                      int pageSize)
{
    db::QueryParams params;
    filter.appendParams(params);
    if (afterId > 0)
        params.addBigInt(afterId);
    else
        params.addNull(db::ParamType::BigInt);
    params.addBigInt(headId);
    if (pageSize > 0)
        params.addInt(pageSize);
    else
        params.addNull(db::ParamType::Int);
    return params;
}

db::DbExpected<AuditExportSummary> exportAudit(db::PgConnection &connection,
                                               const AuditFilter &filter, AuditExportFormat format,
                                               QIODevice *out, int pageSize,
                                               const AuditExportControl &control)
{
    AuditExportSummary summary;
    summary.format = format;
    summary.filter = filter;
    summary.exportedAt = QDateTime::currentDateTimeUtc();
    // One read-only transaction and one cursor over the whole export: the statement is planned
    // once and its scan goes on from page to page, where a page per statement planned it again
    // and walked the index down each time (a sixth of the server's time at 1,000,000 entries,
    // docs/benchmarks.md). Rolled back at the end: nothing is written. The transaction waits
    // while a slow reader of the output (a pipe, ssh, gzip) holds up the writes, so the login's
    // idle_in_transaction_session_timeout is turned off for it, as pg_dump does for its own.
    // Inside a caller's transaction the cursor is made behind a savepoint: released with the
    // cursor closed on success, rolled back (closing the cursor) on failure, so the caller's
    // transaction goes on either way.
    const bool ownTransaction = !connection.inTransactionBlock();
    // Ends what was begun, once: rolls back our transaction, or the caller's back to the
    // savepoint.
    bool ended = false;
    const auto end = [&connection, ownTransaction, &ended] {
        if (std::exchange(ended, true))
            return;
        if (ownTransaction) {
            connection.exec("ROLLBACK");
        } else {
            connection.exec("ROLLBACK TO SAVEPOINT redrive_audit_export");
            connection.exec("RELEASE SAVEPOINT redrive_audit_export");
        }
    };
    const auto failed = [&end](db::DbError error) {
        end();
        return error;
    };
    auto begun = connection.exec(ownTransaction
                                     ? QByteArray("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
                                     : QByteArray("SAVEPOINT redrive_audit_export"));
    if (!begun)
        return begun.error();
    if (ownTransaction) {
        auto untimed = connection.exec("SET LOCAL idle_in_transaction_session_timeout = 0");
        if (!untimed)
            return failed(untimed.error());
    }
    auto head = connection.exec(db::statementSql(db::Statement::AuditChainHead));
    if (!head)
        return failed(head.error());
    summary.head = AuditChainHead::fromResult(head.value());

    AuditExportWriter writer(format, out);
    auto writeFailed = [&writer, &failed] {
        return failed(db::DbError(db::ErrorKind::Other,
                                  tr("Cannot write the export: %1").arg(writer.errorString())));
    };
    if (!writer.begin())
        return writeFailed();
    if (summary.head.isValid()) {
        // Every entry of the filter up to the head: no page start, no row limit.
        auto declared = connection.exec("DECLARE redrive_audit_export NO SCROLL CURSOR FOR "
                                            + db::statementSql(db::Statement::AuditExportPage),
                                        auditExportPageParams(filter, 0, summary.head.id, 0));
        if (!declared)
            return failed(declared.error());
    }
    const int fetchSize = std::max(1, pageSize);
    const QByteArray fetch
        = "FETCH FORWARD " + QByteArray::number(fetchSize) + " FROM redrive_audit_export";
    // The next page is read while the previous one is formatted and written on a pool thread:
    // the server's work (formatting every field as the chain hashes it) and the client's (CSV
    // or JSON escaping, the write) overlap instead of taking turns. One page is written at a
    // time, in order: the writer and `out` are never used by two threads at once.
    QFuture<bool> writing;
    const auto written = [&writing] {
        return !writing.isValid() || writing.result();
    };
    const auto canceled = [&control] {
        return control.cancel && control.cancel->load();
    };
    while (summary.head.isValid()) {
        auto page = canceled() ? db::DbExpected<db::ResultSet>(
                        db::DbError(db::ErrorKind::Canceled, tr("the export was canceled")))
                               : connection.exec(fetch);
        if (!written())
            return writeFailed();
        if (control.onPage && writing.isValid())
            control.onPage(writer.rows());
        if (!page)
            return failed(page.error());
        const int rows = page->rowCount();
        writing = QtConcurrent::run(
            [&writer, rowsRead = std::move(page.value())] { return writer.writePage(rowsRead); });
        if (rows < fetchSize)
            break;
    }
    if (!written())
        return writeFailed();
    if (control.onPage)
        control.onPage(writer.rows());
    end();
    summary.rows = writer.rows();
    summary.firstId = writer.firstId();
    summary.lastId = writer.lastId();
    if (!writer.finish(summary))
        return writeFailed();
    return summary;
}

bool writeAuditHeadFile(const QString &exportPath, const AuditExportSummary &summary,
                        QString *error)
{
    QSaveFile file(exportPath + QStringLiteral(".head.json"));
    if (!file.open(QIODevice::WriteOnly)
        || file.write(AuditExportWriter::escapeC1(
               QJsonDocument(summary.toJson()).toJson(QJsonDocument::Indented)))
            < 0
        || !file.flush() || !file.commit()) {
        if (error)
            *error = file.errorString();
        return false;
    }
    return true;
}

int runExportAuditCommand(const db::ConnectionSettings &settings,
                          const AuditExportArguments &arguments)
{
    const QString me = QStringLiteral("redrive export-audit");
    const auto format = parseAuditExportFormat(arguments.format);
    if (!format) {
        printErr(tr("%1: --format csv or --format jsonl is required").arg(me));
        return cli::kExitUsage;
    }
    AuditFilter filter;
    filter.actor = arguments.actor.trimmed();
    filter.action = arguments.action.trimmed();
    filter.setTargetText(arguments.target);
    if (!arguments.from.isEmpty()) {
        if (!filter.setFromText(arguments.from)) {
            printErr(tr("%1: --from '%2' is not an ISO 8601 date or date-time (years 1 to "
                        "9999, at most six fractional digits, a local time that exists)")
                         .arg(me, display::revealInvisibleInLine(arguments.from)));
            return cli::kExitUsage;
        }
    }
    if (!arguments.until.isEmpty()) {
        if (!filter.setUntilText(arguments.until)) {
            printErr(tr("%1: --until '%2' is not an ISO 8601 date or date-time (years 1 to "
                        "9999, at most six fractional digits, a local time that exists)")
                         .arg(me, display::revealInvisibleInLine(arguments.until)));
            return cli::kExitUsage;
        }
    }

    db::ConnectionSettings s = settings;
    if (s.searchPath.isEmpty())
        s.searchPath = QStringLiteral("redrive");
    auto connection = db::PgConnection::open(s);
    if (!connection)
        return cli::reportCannotConnect(qPrintable(me), connection.error());

    // A file is written under a temporary name and renamed only when complete.
    QSaveFile file(arguments.output);
    QFile standardOutput;
    // A path that is there and is not a file (a device, a named pipe) is written to as it is: a
    // save file is renamed over its path, which replaced /dev/full with a file. Such an export
    // has no .head.json beside it; the head is printed below.
    const QFileInfo given(arguments.output);
    const bool special = !arguments.output.isEmpty() && given.exists() && !given.isFile();
    QFile specialFile(arguments.output);
    QIODevice *out = nullptr;
    if (arguments.output.isEmpty()) {
        if (!standardOutput.open(stdout, QIODevice::WriteOnly)) {
            printErr(tr("%1: cannot write to standard output").arg(me));
            return cli::kExitFailed;
        }
        out = &standardOutput;
    } else if (special) {
        if (!specialFile.open(QIODevice::WriteOnly)) {
            printErr(
                tr("%1: cannot write %2: %3").arg(me, arguments.output, specialFile.errorString()));
            return cli::kExitFailed;
        }
        out = &specialFile;
    } else {
        if (!file.open(QIODevice::WriteOnly)) {
            printErr(tr("%1: cannot write %2: %3").arg(me, arguments.output, file.errorString()));
            return cli::kExitFailed;
        }
        out = &file;
    }
    auto exported = exportAudit(connection.value(), filter, *format, out);
    if (!exported)
        return cli::reportFailure(qPrintable(me), exported.error());
    // The last buffered bytes are written by flush(): checked here, because a commit whose
    // closing flush failed (a disk that filled up at the very end) kept a cut file and said
    // nothing.
    if (special) {
        if (!specialFile.flush()) {
            printErr(tr("%1: cannot write %2: %3: the export is incomplete")
                         .arg(me, arguments.output, specialFile.errorString()));
            return cli::kExitFailed;
        }
    } else if (!arguments.output.isEmpty()) {
        if (!file.flush() || !file.commit()) {
            printErr(tr("%1: cannot write %2: %3").arg(me, arguments.output, file.errorString()));
            return cli::kExitFailed;
        }
        QString error;
        if (*format == AuditExportFormat::Csv
            && !writeAuditHeadFile(arguments.output, exported.value(), &error)) {
            printErr(tr("%1: cannot write %2.head.json: %3").arg(me, arguments.output, error));
            return cli::kExitFailed;
        }
    } else if (!standardOutput.flush() || std::fflush(stdout) != 0 || std::ferror(stdout)) {
        printErr(tr("%1: cannot write to standard output: the export is incomplete").arg(me));
        return cli::kExitFailed;
    }
    printErr(exported->describe());
    if (exported->head.isValid())
        printErr(QStringLiteral("chain head: id %1 hash %2")
                     .arg(exported->head.id)
                     .arg(exported->head.hash));
    return cli::kExitOk;
}

} // namespace redrive
