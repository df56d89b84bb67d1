// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QString>

namespace redrive {

class MainWindow;

/// `redrive --screenshot FILE`: waits until `window` (already connecting, with prompts off) shows
/// its first page of dead letters and the failure groups, or a banner explains why not, or 30 s
/// passed, then renders it to the PNG `file` and prints what it wrote. Works offscreen
/// (QT_QPA_PLATFORM=offscreen). Returns an exit status of models/cli_commands.h: kExitOk,
/// kExitFailed (no schema, or the file could not be written) or kExitUnavailable after a refused
/// login (one line on stderr naming the login, never a password).
int takeMainWindowScreenshot(MainWindow &window, const QString &file);

/// `redrive --screenshot FILE --screenshot-groups`: the main window at 2000×900 pixels with the
/// Dead letters tab's failure-groups panel widened to show every column (counts by status, the
/// safe-to-retry verdicts, the 24-hour trend, what tells look-alikes apart, first and last seen),
/// once the groups are in. With `search` (`--screenshot-search TEXT`), the list and the groups
/// of that search, typed into the list's search field once the first page is in. Exit statuses
/// as takeMainWindowScreenshot().
int takeFailureGroupsScreenshot(MainWindow &window, const QString &file,
                                const QString &search = {});

/// `redrive --screenshot FILE --screenshot-case ID`: once `window` is connected, opens the case
/// view of dead letter `deadLetterId` as the console would, waits until every part is in (at most
/// 30 s) and renders it to `file`. Exit statuses as takeMainWindowScreenshot(); kExitFailed also
/// when there is no such dead letter. With `tab` (`--screenshot-case-tab`, e.g. "Retry history"),
/// the case view's tab whose title starts with it is shown first (kExitFailed when none does).
int takeCaseScreenshot(MainWindow &window, qint64 deadLetterId, const QString &file,
                       const QString &tab = {});

/// `redrive --screenshot FILE --screenshot-request dead-letter:ID|mismatch:ID`: once connected,
/// opens the compensation request dialog for that target as the console would, waits until its
/// payment and the payment's other compensations are in (at most 30 s) and renders it to `file`.
/// Without `submitReason` nothing is requested. With it (`--submit REASON`, and `ticket` from
/// `--ticket`), the reason and ticket are typed into the dialog before the picture, and then its
/// Request button is pressed as a person would: the request runs through the same operator
/// action, and the outcome's compensation id is printed ("compensation_id N"). kExitFailed also
/// for a target that is not understood or found, or a request the database refused (its message
/// on stderr).
int takeCompensationRequestScreenshot(MainWindow &window, const QString &target,
                                      const QString &file, const QString &submitReason = {},
                                      const QString &ticket = {});

/// `redrive --screenshot FILE --screenshot-approval ID`: the approval dialog of compensation
/// request `requestId`, rendered once its context is in. Without `submitReason` nothing is
/// decided; with it (`--submit REASON`) the reason is typed before the picture and the dialog's
/// Approve button pressed, and the outcome is printed. kExitFailed when the approval is refused.
int takeCompensationApprovalScreenshot(MainWindow &window, qint64 requestId, const QString &file,
                                       const QString &submitReason = {});

/// `redrive --screenshot FILE --screenshot-find TERM`: once connected, opens View ▸ Find
/// customer… (Ctrl+K) as the console would, searches for `term` and renders the dialog with its
/// hits. With `openKind` (`--screenshot-open dead-letter|mismatch|compensation|audit`), opens the
/// first hit of that kind where it lives, as Enter on it would, and renders the main window
/// instead once that tab has loaded. kExitFailed when the search fails or has no such hit.
int takeFindScreenshot(MainWindow &window, const QString &term, const QString &file,
                       const QString &openKind = {});

/// `redrive --screenshot FILE --screenshot-audit`: the main window on its Audit log tab with the
/// newest entry selected, so its details and before/after diff show.
int takeAuditScreenshot(MainWindow &window, const QString &file);

} // namespace redrive
