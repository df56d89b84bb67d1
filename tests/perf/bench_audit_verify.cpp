// SPDX-License-Identifier: GPL-3.0-or-later
// bench_audit_verify: how fast the client-side audit chain verifier is (docs/audit-chain.md),
// against the floor of reading the same rows with COPY and nothing else. Built with the tests,
// not run by ctest:
//
//   bench_audit_verify CONNINFO [--fill 1000000] [--runs 3] [--server]
//
// CONNINFO names a database with the Redrive schema that may be written to (a copy of the test
// template). --fill appends entries (through the chain trigger, 50,000 per statement) until the
// audit log holds that many. Each row of the table is the median wall time of --runs runs:
// COPY alone; the verifier in this process; `redrive verify-audit` as a process (start-up
// included); with --server also the server's own redrive.verify_audit_chain, for comparison.

#include "models/audit_chain_verifier.h"
#include "models/db/pg_connection.h"

#include <QCommandLineParser>
#include <QCoreApplication>
#include <QElapsedTimer>
#include <QProcess>
#include <QThread>
#include <algorithm>
#include <cstdio>
#include <functional>
#include <libpq-fe.h>
#include <vector>

using namespace redrive;

namespace {

qint64 medianMs(int runs, const std::function<bool()> &run)
{
    std::vector<qint64> times;
    for (int i = 0; i < runs; ++i) {
        QElapsedTimer clock;
        clock.start();
        if (!run())
            return -1;
        times.push_back(clock.elapsed());
    }
    std::sort(times.begin(), times.end());
    return times[times.size() / 2];
}

void row(const char *what, qint64 entries, qint64 ms)
{
    if (ms < 0) {
        std::printf("%-40s %12s\n", what, "failed");
        return;
    }
    std::printf("%-40s %10lld ms %12.0f entries/s\n", what, static_cast<long long>(ms),
                ms > 0 ? double(entries) * 1000.0 / double(ms) : 0.0);
}

} // namespace

int main(int argc, char **argv)
{
    QCoreApplication app(argc, argv);
    QCommandLineParser parser;
    parser.addPositionalArgument(QStringLiteral("conninfo"), QStringLiteral("the database"));
    parser.addOption({ QStringLiteral("fill"), QStringLiteral("entries to have"),
                       QStringLiteral("n"), QStringLiteral("0") });
    parser.addOption(
        { QStringLiteral("runs"), QStringLiteral("runs per row"), QStringLiteral("n"), "3" });
    parser.addOption({ QStringLiteral("server"), QStringLiteral("also time the server check") });
    parser.process(app);
    db::ConnectionSettings settings;
    settings.connInfo = parser.positionalArguments().value(0);
    auto connection = db::PgConnection::open(settings);
    if (!connection) {
        std::fprintf(stderr, "cannot connect: %s\n", qPrintable(connection.error().summary()));
        return 1;
    }
    db::PgConnection &c = connection.value();
    auto count = [&c] {
        return c.exec("SELECT count(*) FROM redrive.audit_log")->bigInt(0, 0).value_or(0);
    };
    const qint64 want = parser.value(QStringLiteral("fill")).toLongLong();
    QElapsedTimer fillClock;
    fillClock.start();
    for (qint64 have = count(); have < want; have = count()) {
        const qint64 n = std::min<qint64>(50000, want - have);
        auto filled = c.exec("INSERT INTO redrive.audit_log (action, reason, action_id, targets)"
                             " SELECT 'note', 'bench entry ' || g, gen_random_uuid(),"
                             "        jsonb_build_array(jsonb_build_object('id', g))"
                             "   FROM generate_series(1, $1::bigint) g",
                             db::QueryParams().addBigInt(n));
        if (!filled) {
            std::fprintf(stderr, "fill: %s\n", qPrintable(filled.error().summary()));
            return 1;
        }
        std::fprintf(stderr, "\rfilled %lld entries (%lld s)", static_cast<long long>(have + n),
                     static_cast<long long>(fillClock.elapsed() / 1000));
    }
    std::fprintf(stderr, "\n");
    c.execScript("VACUUM ANALYZE redrive.audit_log");
    const qint64 entries = count();
    const int runs = std::max(1, parser.value(QStringLiteral("runs")).toInt());
    std::printf("audit log: %lld entries, %d hashing threads, median of %d runs\n",
                static_cast<long long>(entries), QThread::idealThreadCount(), runs);

    row("COPY (FORMAT binary) alone", entries, medianMs(runs, [&c] {
            PGresult *r = PQexec(c.handle(),
                                 "COPY (SELECT e.id, e.at, e.db_user, e.client_addr, e.os_user,"
                                 " e.action, e.targets, e.reason, e.ticket, e.before, e.after,"
                                 " e.action_id, e.outcome, e.prev_hash, e.hash"
                                 " FROM redrive.audit_log e ORDER BY e.id) TO STDOUT"
                                 " (FORMAT binary)");
            const bool ok = PQresultStatus(r) == PGRES_COPY_OUT;
            PQclear(r);
            char *buffer = nullptr;
            while (PQgetCopyData(c.handle(), &buffer, 0) > 0)
                PQfreemem(buffer);
            while ((r = PQgetResult(c.handle())))
                PQclear(r);
            return ok;
        }));
    row("AuditChainVerifier (in process)", entries, medianMs(runs, [&c, entries] {
            AuditChainVerifier verifier;
            auto report = verifier.verify(c);
            return report && report->holds() && report->checked == entries;
        }));
    row("redrive verify-audit (a process)", entries, medianMs(runs, [&settings] {
            QProcess process;
            process.start(QStringLiteral(REDRIVE_EXE),
                          { QStringLiteral("verify-audit"), QStringLiteral("--conninfo"),
                            settings.connInfo });
            return process.waitForFinished(600000) && process.exitCode() == 0;
        }));
    if (parser.isSet(QStringLiteral("server")))
        row("redrive.verify_audit_chain (server)", entries, medianMs(1, [&c] {
                auto r = c.exec("SELECT * FROM redrive.verify_audit_chain()");
                return r && r->rowCount() == 0;
            }));
    return 0;
}
