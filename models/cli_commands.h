// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/connection_settings.h"

#include <QString>

namespace redrive::db {
class DbError;
}

namespace redrive::cli {

/// Exit statuses of `redrive`'s command-line modes (README, "Exit status"; sysexits.h values):
/// the same for migrate, maintain, verify-audit, export-audit, audit-detach, archive,
/// install-source and --screenshot.
constexpr int kExitOk = 0;
constexpr int kExitFailed = 1; ///< failed, or the audit chain is broken
constexpr int kExitUsage = 64; ///< EX_USAGE: bad command line
constexpr int kExitUnavailable = 69; ///< EX_UNAVAILABLE: the database could not be reached

/// Prints that the command `me` ("redrive migrate") failed with `error`, on stderr, as every
/// command-line mode says it: "<me>: failed: <summary>", then the server's detail and hint on
/// lines of their own when it gave them, each with invisible and control characters shown
/// (display::revealInvisible). Returns kExitFailed.
int reportFailure(const char *me, const db::DbError &error);

/// Prints "<me>: cannot connect: <summary of error>" on stderr. Returns kExitUnavailable.
int reportCannotConnect(const char *me, const db::DbError &error);

/// `redrive migrate`: connects with `settings` and applies the numbered migrations compiled into
/// the binary (db::SchemaMigrator; README "Pointing Redrive at your own database"). Prints the
/// versions applied, or that the schema is up to date, on stdout; the server's error with its
/// detail and hint on stderr. Connects with search_path pg_catalog, pg_temp whatever `settings`
/// say; refuses a `redrive` schema that belongs to another role than the one migrating or a
/// superuser, or that another role may create in (docs/security.md, "Who owns Redrive's
/// schemas"). Returns kExitOk, kExitFailed or kExitUnavailable.
int runMigrateCommand(const db::ConnectionSettings &settings);

/// `redrive maintain`: connects with `settings` and runs redrive.maintain_partitions(monthsAhead),
/// which creates this UTC month's and the next `monthsAhead` months' partitions of the attempts
/// (docs/architecture.md "Partitions"); needs the schema's owner or redrive_admin. Prints each
/// partition created, or that none was needed, on stdout; the server's error on stderr. Returns
/// kExitOk, kExitFailed or kExitUnavailable.
int runMaintainCommand(const db::ConnectionSettings &settings, int monthsAhead);

/// export-audit's --format: `format` as given, or else from the --output file's extension
/// (".csv" -> "csv", ".jsonl"/".json" -> "jsonl", any case), as the console's Export… does;
/// empty when neither says, which runExportAuditCommand() reports as a usage error.
QString exportAuditFormat(const QString &format, const QString &output);

} // namespace redrive::cli
