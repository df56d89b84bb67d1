// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/dead_letter_archiver.h"

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
#include <QList>
#include <QRegularExpression>
#include <QUuid>
#include <cstdio>
#include <fcntl.h>
#include <unistd.h>

namespace redrive {

namespace {

db::DbError fileError(const QString &what)
{
    return db::DbError(db::ErrorKind::Other, what);
}

// Makes what was written to `file` durable: the archive removes rows only after this.
bool syncFile(QFile &file)
{
    return file.flush() && ::fsync(file.handle()) == 0;
}

// Makes a newly created file's directory entry durable.
void syncDirectoryOf(const QString &path)
{
    const QByteArray dir = QFile::encodeName(QFileInfo(path).absolutePath());
    const int fd = ::open(dir.constData(), O_RDONLY | O_DIRECTORY);
    if (fd >= 0) {
        ::fsync(fd);
        ::close(fd);
    }
}

std::optional<QByteArray> sha256OfFile(const QString &path)
{
    QFile file(path);
    if (!file.open(QIODevice::ReadOnly))
        return std::nullopt;
    QCryptographicHash hash(QCryptographicHash::Sha256);
    if (!hash.addData(&file))
        return std::nullopt;
    return hash.result().toHex();
}

} // namespace

DeadLetterArchiver::DeadLetterArchiver(db::PgConnection &connection)
    : m_connection(connection)
{ }

std::optional<QString> DeadLetterArchiver::parsePeriod(const QString &text)
{
    static const QRegularExpression shortForm(QStringLiteral("^([0-9]{1,6})([dw])$"));
    static const QRegularExpression longForm(QStringLiteral("^([0-9]{1,6}) days?$"));
    const QString t = text.trimmed();
    qint64 days = -1;
    if (const auto m = shortForm.match(t); m.hasMatch())
        days = m.captured(1).toLongLong() * (m.captured(2) == QLatin1String("w") ? 7 : 1);
    else if (const auto l = longForm.match(t); l.hasMatch())
        days = l.captured(1).toLongLong();
    if (days < 1)
        return std::nullopt;
    return QStringLiteral("%1 days").arg(days);
}

db::DbExpected<ArchiveSummary> DeadLetterArchiver::run(const QString &period, const QString &path)
{
    ArchiveSummary summary;
    // The lines are compared byte for byte with the server's: UTF-8 both ways.
    if (auto set = m_connection.execScript("SET client_encoding = 'UTF8'"); !set)
        return set.error();

    const bool existed = QFile::exists(path);
    QFile file(path);
    if (!file.open(QIODevice::ReadWrite))
        return fileError(QStringLiteral("cannot open %1: %2").arg(path, file.errorString()));
    if (file.size() > 0) {
        // A run that died while writing leaves a partial line; appending to it would glue two.
        if (!file.seek(file.size() - 1) || file.read(1) != "\n")
            return fileError(QStringLiteral("%1 ends in a partial line: it is not an archive "
                                            "this command finished writing; use another file")
                                 .arg(path));
    }
    if (!file.seek(file.size()))
        return fileError(QStringLiteral("cannot append to %1: %2").arg(path, file.errorString()));
    if (!existed)
        syncDirectoryOf(path);

    const QString reason = m_reason.isEmpty()
        ? QStringLiteral("retention: resolved and older than %1").arg(period)
        : m_reason;
    const QString fileName = QFileInfo(path).fileName();
    const QString osUser = OperatorAction::osUser();
    qint64 after = 0;
    for (;;) {
        auto rows = m_connection.exec(
            db::statementSql(db::Statement::ArchiveCandidates),
            db::QueryParams().addText(period).addBigInt(after).addInt(m_chunkSize));
        if (!rows)
            return rows.error();
        if (rows->rowCount() == 0)
            break;
        QList<qint64> ids;
        QByteArray lines;
        for (int row = 0; row < rows->rowCount(); ++row) {
            ids << rows->bigInt(row, 0).value_or(0);
            lines += rows->raw(row, 1);
            lines += '\n';
        }
        const QByteArray digest
            = QCryptographicHash::hash(lines, QCryptographicHash::Sha256).toHex();
        const qint64 offset = file.pos();
        if (file.write(lines) != lines.size() || !syncFile(file))
            return fileError(QStringLiteral("cannot write %1: %2").arg(path, file.errorString()));

        auto outcome = m_connection.exec(db::statementSql(db::Statement::ArchiveDeadLetters),
                                         db::QueryParams()
                                             .addUuid(QUuid::createUuid())
                                             .addBigIntArray(ids)
                                             .addText(QString::fromLatin1(digest))
                                             .addText(period)
                                             .addText(fileName)
                                             .addBigInt(offset)
                                             .addText(reason)
                                             .addText(osUser));
        if (!outcome) {
            // The server said no (a role, a changed row): these lines were not archived, so they
            // leave the file again. A lost connection may have committed: the lines stay.
            if (outcome.error().kind() != db::ErrorKind::Connection
                && !outcome.error().sqlState().isEmpty()) {
                if (file.resize(offset) && file.seek(offset))
                    syncFile(file);
            }
            return outcome.error();
        }
        ++summary.chunks;
        summary.archived += ids.size();
        summary.bytesWritten += lines.size();
        if (summary.firstId == 0)
            summary.firstId = ids.first();
        summary.lastId = ids.last();
        summary.attempts += QJsonDocument::fromJson(outcome->raw(0, 0))
                                .object()
                                .value(QLatin1String("attempts"))
                                .toInteger();
        after = ids.last();
    }
    file.close();
    if (const auto sha = sha256OfFile(path))
        summary.fileSha256 = *sha;
    return summary;
}

int runArchiveCommand(const db::ConnectionSettings &settings, const ArchiveArguments &arguments)
{
    using namespace cli;
    const char *me = "redrive archive";
    const auto period = DeadLetterArchiver::parsePeriod(
        arguments.olderThan.isEmpty() ? QStringLiteral("90d") : arguments.olderThan);
    if (!period) {
        std::fprintf(stderr, "%s: --older-than takes a number of days of at least 1 (90d, 12w)\n",
                     me);
        return kExitUsage;
    }
    if (arguments.out.isEmpty()) {
        std::fprintf(stderr,
                     "%s: --out FILE.jsonl is required: the archive is written there "
                     "before anything is removed\n",
                     me);
        return kExitUsage;
    }
    auto connection = db::PgConnection::open(settings);
    if (!connection)
        return reportCannotConnect(me, connection.error());
    DeadLetterArchiver archiver(connection.value());
    archiver.setReason(arguments.reason);
    auto summary = archiver.run(*period, arguments.out);
    if (!summary)
        return reportFailure(me, summary.error());
    if (summary->archived == 0)
        std::printf("redrive archive: nothing to archive (resolved and older than %s)\n",
                    qPrintable(*period));
    else
        std::printf(
            "redrive archive: archived %lld dead letters (ids %lld to %lld) with %lld "
            "attempts in %lld audited chunks\n",
            static_cast<long long>(summary->archived), static_cast<long long>(summary->firstId),
            static_cast<long long>(summary->lastId), static_cast<long long>(summary->attempts),
            static_cast<long long>(summary->chunks));
    std::printf("redrive archive: %s sha256 %s\n", qPrintable(arguments.out),
                summary->fileSha256.constData());
    return kExitOk;
}

} // namespace redrive
