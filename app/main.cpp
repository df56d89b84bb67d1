// SPDX-License-Identifier: GPL-3.0-or-later
// redrive: the operator console, and its command-line modes (`redrive migrate`, ...).
// The composition root: parses the command line and calls the library: a command's body lives
// in models/ (cli_commands.h, audit_export.h, audit_chain_verifier.h, source_installer.h), the
// --screenshot harness in views/screenshot_harness.h; here only the main window is put together.

#include "models/audit_chain_verifier.h"
#include "models/audit_export.h"
#include "models/audit_month_detacher.h"
#include "models/cli_commands.h"
#include "models/dead_letter_archiver.h"
#include "models/source_installer.h"
#include "views/main_window.h"
#include "views/screenshot_harness.h"

#include <QApplication>
#include <QCommandLineParser>
#include <QCoreApplication>
#include <QTimer>
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <iterator>
#include <memory>
#include <string_view>
#include <tuple>

using namespace redrive;

namespace {

using cli::kExitOk;
using cli::kExitUsage;

void describeOptions(QCommandLineParser &parser)
{
    parser.setApplicationDescription(QStringLiteral(
        "Redrive: operator console for dead letters, retries, idempotency keys and "
        "reconciliation.\n\n"
        "Commands:\n"
        "  (none)    open the console\n"
        "  migrate   create or upgrade the Redrive schema in the database\n"
        "  maintain  create the coming months' partitions (--months-ahead N, default 3;\n"
        "            run it monthly; docs/architecture.md \"Partitions\")\n"
        "  install-source pgboss|graphile-worker  install or upgrade a job queue's adapter\n"
        "            (--queue-schema NAME when the library's schema is not its default)\n"
        "  verify-audit  recompute the audit hash chain in this program, trusting no server\n"
        "            function (exit 1 names the first broken entry; --head-id/--head-hash\n"
        "            check against an exported head; see docs/audit-chain.md)\n"
        "  export-audit  write audit entries (--actor/--action/--target/--from/--until) as\n"
        "            --format csv|jsonl to --output or stdout, with the chain head\n\n"
        "The connection follows libpq: --conninfo takes a connection string or URI; anything it\n"
        "leaves out comes from PGHOST, PGPORT, PGDATABASE, PGUSER, PGSERVICE, ~/.pgpass."));
    parser.addHelpOption();
    parser.addVersionOption();
    parser.addOption({ QStringLiteral("conninfo"),
                       QStringLiteral("libpq connection string or URI, e.g. "
                                      "\"host=db dbname=app sslmode=require\"."),
                       QStringLiteral("string") });
    parser.addOption(
        { QStringLiteral("screenshot"),
          QStringLiteral("Render the main window to a PNG once the dead letters are "
                         "loaded, then exit (works offscreen: QT_QPA_PLATFORM=offscreen)."),
          QStringLiteral("file") });
    parser.addOption({ QStringLiteral("screenshot-case"),
                       QStringLiteral("With --screenshot: render the case view of this dead "
                                      "letter instead of the main window."),
                       QStringLiteral("id") });
    parser.addOption({ QStringLiteral("screenshot-request"),
                       QStringLiteral("With --screenshot: render the compensation request dialog "
                                      "for dead-letter:ID or mismatch:ID instead."),
                       QStringLiteral("target") });
    parser.addOption({ QStringLiteral("screenshot-approval"),
                       QStringLiteral("With --screenshot: render the approval dialog of this "
                                      "compensation request instead."),
                       QStringLiteral("id") });
    parser.addOption({ QStringLiteral("screenshot-find"),
                       QStringLiteral("With --screenshot: search for this term as Ctrl+K does "
                                      "and render the search dialog with its hits instead."),
                       QStringLiteral("term") });
    parser.addOption({ QStringLiteral("screenshot-open"),
                       QStringLiteral("With --screenshot-find: open the first hit of this kind "
                                      "(dead-letter, mismatch, compensation, audit) and render "
                                      "the main window."),
                       QStringLiteral("kind") });
    parser.addOption({ QStringLiteral("screenshot-audit"),
                       QStringLiteral("With --screenshot: render the audit log tab with the "
                                      "newest entry selected instead.") });
    parser.addOption({ QStringLiteral("screenshot-case-tab"),
                       QStringLiteral("With --screenshot-case: show the case view's tab whose "
                                      "title starts with this text (\"Retry history\")."),
                       QStringLiteral("title") });
    parser.addOption({ QStringLiteral("screenshot-groups"),
                       QStringLiteral("With --screenshot: render the main window wide, its failure "
                                      "groups panel widened to show every column.") });
    parser.addOption({ QStringLiteral("screenshot-search"),
                       QStringLiteral("With --screenshot-groups: search the dead letters for this "
                                      "text first, as typed into the list's search field."),
                       QStringLiteral("text") });
    parser.addOption({ QStringLiteral("submit"),
                       QStringLiteral("With --screenshot-request or --screenshot-approval: type "
                                      "this reason, render, then press Request or Approve."),
                       QStringLiteral("reason") });
    parser.addOption({ QStringLiteral("ticket"),
                       QStringLiteral("With --screenshot-request and --submit: the ticket."),
                       QStringLiteral("ticket") });
    parser.addOption({ QStringLiteral("source"),
                       QStringLiteral("Open this source's dead letters: native (default), pgboss "
                                      "or graphile-worker (installed with install-source)."),
                       QStringLiteral("name") });
    parser.addOption({ QStringLiteral("queue-schema"),
                       QStringLiteral("install-source: the queue's schema when the library was "
                                      "given another one than its default (pgboss, "
                                      "graphile_worker) with its `schema` option."),
                       QStringLiteral("schema") });
    parser.addOption({ QStringLiteral("months-ahead"),
                       QStringLiteral("maintain: months after this one to create partitions "
                                      "for (0 to 120, default 3)."),
                       QStringLiteral("n"), QStringLiteral("3") });
    parser.addOption({ QStringLiteral("head-id"),
                       QStringLiteral("verify-audit: the id of an exported chain head."),
                       QStringLiteral("id") });
    parser.addOption({ QStringLiteral("head-hash"),
                       QStringLiteral("verify-audit: the hash (hex) of that exported head."),
                       QStringLiteral("hex") });
    for (const auto &[name, help, value] :
         { std::tuple("format", "export-audit: csv or jsonl.", "format"),
           std::tuple("actor", "export-audit: only entries by this login role.", "role"),
           std::tuple("action", "export-audit: only this action (requeue, note, ...).", "action"),
           std::tuple("target",
                      "export-audit: only entries naming this target (42, "
                      "dead_letter:42, scope:key).",
                      "target"),
           std::tuple("from", "export-audit: entries at or after this ISO 8601 time.", "time"),
           std::tuple("until", "export-audit: entries before this ISO 8601 time.", "time"),
           std::tuple("output", "export-audit: write to this file instead of stdout.", "file"),
           std::tuple("older-than", "archive: the retention period (90d, 12w; default 90d).",
                      "period"),
           std::tuple("out", "archive: the JSON Lines file appended to.", "file"),
           std::tuple("reason", "archive, audit-detach: the audit entry's reason.", "text"),
           std::tuple("month", "audit-detach: the UTC month to detach (YYYY-MM).", "month"),
           std::tuple("export", "audit-detach: that month's JSON Lines export.", "file") })
        parser.addOption(
            { QString::fromLatin1(name), QString::fromLatin1(help), QString::fromLatin1(value) });
    parser.addPositionalArgument(
        QStringLiteral("command"),
        QStringLiteral("migrate | maintain | verify-audit | export-audit | archive | "
                       "audit-detach"),
        QStringLiteral("[command]"));
}

// The options that take a value: the word after one is its value, never a command.
constexpr std::string_view kOptionsWithValue[] = {
    "--conninfo",
    "--screenshot",
    "--screenshot-case",
    "--screenshot-case-tab",
    "--source",
    "--screenshot-request",
    "--screenshot-approval",
    "--screenshot-find",
    "--screenshot-open",
    "--screenshot-search",
    "--submit",
    "--ticket",
    "--head-id",
    "--head-hash",
    "--format",
    "--actor",
    "--action",
    "--target",
    "--from",
    "--until",
    "--output",
    "--queue-schema",
    "--months-ahead",
    "--older-than",
    "--out",
    "--reason",
    "--month",
    "--export",
};

// Decides before any QApplication exists whether this run needs a display.
bool wantsConsoleOnly(int argc, char **argv)
{
    // Any command (a word that is not an option or an option's value), --help or --version.
    for (int i = 1; i < argc; ++i) {
        const char *a = argv[i];
        const auto takesValue = [a](std::string_view option) {
            return option == a;
        };
        if (std::any_of(std::begin(kOptionsWithValue), std::end(kOptionsWithValue), takesValue)) {
            ++i;
            continue;
        }
        if (a[0] != '-' || !std::strcmp(a, "--version") || !std::strcmp(a, "-v")
            || !std::strcmp(a, "--help") || !std::strcmp(a, "-h") || !std::strcmp(a, "--help-all"))
            return true;
    }
    return false;
}

} // namespace

int main(int argc, char **argv)
{
    std::unique_ptr<QCoreApplication> app;
    if (wantsConsoleOnly(argc, argv))
        app = std::make_unique<QCoreApplication>(argc, argv);
    else
        app = std::make_unique<QApplication>(argc, argv);
    QCoreApplication::setApplicationName(QStringLiteral("redrive"));
    QCoreApplication::setOrganizationName(QStringLiteral("Redrive"));
    QCoreApplication::setApplicationVersion(QStringLiteral(REDRIVE_VERSION));
    QGuiApplication::setDesktopFileName(QStringLiteral("redrive")); // matches redrive.desktop

    QCommandLineParser parser;
    describeOptions(parser);
    if (!parser.parse(app->arguments())) {
        std::fprintf(stderr, "redrive: %s (see redrive --help)\n", qPrintable(parser.errorText()));
        return kExitUsage;
    }
    if (parser.isSet(QStringLiteral("help")))
        parser.showHelp(kExitOk);
    if (parser.isSet(QStringLiteral("version")))
        parser.showVersion();

    db::ConnectionSettings settings;
    settings.connInfo = parser.value(QStringLiteral("conninfo"));

    const QStringList args = parser.positionalArguments();
    if (!args.isEmpty()) {
        // Migrations, the audit chain's verification and export run on the primary when the
        // string names a standby too (docs/architecture.md#reading-from-a-standby).
        const db::ConnectionSettings primary = db::primarySettings(settings);
        if (args.first() == QLatin1String("migrate") && args.size() == 1)
            return cli::runMigrateCommand(primary);
        if (args.first() == QLatin1String("maintain") && args.size() == 1) {
            bool ok = false;
            const int months = parser.value(QStringLiteral("months-ahead")).toInt(&ok);
            if (!ok || months < 0 || months > 120) {
                std::fprintf(stderr, "redrive: --months-ahead takes 0 to 120\n");
                return kExitUsage;
            }
            return cli::runMaintainCommand(primary, months);
        }
        if (args.first() == QLatin1String("install-source") && args.size() == 2)
            return runInstallSource(args.at(1), settings.connInfo,
                                    parser.value(QStringLiteral("queue-schema")));
        if (args.first() == QLatin1String("verify-audit") && args.size() == 1)
            return runVerifyAuditCommand(primary,
                                         { parser.value(QStringLiteral("head-id")),
                                           parser.value(QStringLiteral("head-hash")) });
        if (args.first() == QLatin1String("export-audit") && args.size() == 1) {
            auto value = [&parser](const char *name) {
                return parser.value(QString::fromLatin1(name));
            };
            return runExportAuditCommand(primary,
                                         { cli::exportAuditFormat(value("format"), value("output")),
                                           value("actor"), value("action"), value("target"),
                                           value("from"), value("until"), value("output") });
        }
        if (args.first() == QLatin1String("archive") && args.size() == 1)
            return runArchiveCommand(primary,
                                     { parser.value(QStringLiteral("older-than")),
                                       parser.value(QStringLiteral("out")),
                                       parser.value(QStringLiteral("reason")) });
        if (args.first() == QLatin1String("audit-detach") && args.size() == 1)
            return runAuditDetachCommand(primary,
                                         { parser.value(QStringLiteral("month")),
                                           parser.value(QStringLiteral("export")),
                                           parser.value(QStringLiteral("reason")) });
        std::fprintf(stderr, "redrive: unknown command '%s' (see redrive --help)\n",
                     qPrintable(args.join(QLatin1Char(' '))));
        return kExitUsage;
    }

    settings.searchPath = QStringLiteral("redrive");
    const QString source = parser.value(QStringLiteral("source"));
    if (!source.isEmpty() && source != QLatin1String("native")) {
        const auto definition = SourceDefinition::find(source);
        if (!definition) {
            std::fprintf(stderr, "redrive: unknown source '%s' (native, pgboss, graphile-worker)\n",
                         qPrintable(source));
            return kExitUsage;
        }
        settings.searchPath = definition->searchPath();
    }
    MainWindow window;
    window.show();
    // --conninfo or any PG* variable connects at once; otherwise ask where to connect.
    const bool hasEnvironment = qEnvironmentVariableIsSet("PGHOST")
        || qEnvironmentVariableIsSet("PGDATABASE") || qEnvironmentVariableIsSet("PGSERVICE")
        || qEnvironmentVariableIsSet("PGPORT") || qEnvironmentVariableIsSet("PGUSER");
    if (parser.isSet(QStringLiteral("screenshot"))) {
        window.setPromptsAllowed(false); // nobody could answer a prompt
        window.connectTo(settings);
        const QString submit = parser.value(QStringLiteral("submit"));
        if (parser.isSet(QStringLiteral("screenshot-request")))
            return takeCompensationRequestScreenshot(
                window, parser.value(QStringLiteral("screenshot-request")),
                parser.value(QStringLiteral("screenshot")), submit,
                parser.value(QStringLiteral("ticket")));
        if (parser.isSet(QStringLiteral("screenshot-approval")))
            return takeCompensationApprovalScreenshot(
                window, parser.value(QStringLiteral("screenshot-approval")).toLongLong(),
                parser.value(QStringLiteral("screenshot")), submit);
        if (parser.isSet(QStringLiteral("screenshot-find")))
            return takeFindScreenshot(window, parser.value(QStringLiteral("screenshot-find")),
                                      parser.value(QStringLiteral("screenshot")),
                                      parser.value(QStringLiteral("screenshot-open")));
        if (parser.isSet(QStringLiteral("screenshot-audit")))
            return takeAuditScreenshot(window, parser.value(QStringLiteral("screenshot")));
        if (parser.isSet(QStringLiteral("screenshot-groups")))
            return takeFailureGroupsScreenshot(window, parser.value(QStringLiteral("screenshot")),
                                               parser.value(QStringLiteral("screenshot-search")));
        if (parser.isSet(QStringLiteral("screenshot-case")))
            return takeCaseScreenshot(window,
                                      parser.value(QStringLiteral("screenshot-case")).toLongLong(),
                                      parser.value(QStringLiteral("screenshot")),
                                      parser.value(QStringLiteral("screenshot-case-tab")));
        return takeMainWindowScreenshot(window, parser.value(QStringLiteral("screenshot")));
    }
    if (parser.isSet(QStringLiteral("conninfo")) || hasEnvironment)
        window.connectTo(settings);
    else
        QTimer::singleShot(0, &window, [&window] { window.showConnectionDialog(); });
    return app->exec();
}
