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

/// `redrive --screenshot FILE --screenshot-case ID`: once `window` is connected, opens the case
/// view of dead letter `deadLetterId` as the console would, waits until every part is in (at most
/// 30 s) and renders it to `file`. Exit statuses as takeMainWindowScreenshot(); kExitFailed also
/// when there is no such dead letter.
int takeCaseScreenshot(MainWindow &window, qint64 deadLetterId, const QString &file);

/// `redrive --screenshot FILE --screenshot-request dead-letter:ID|mismatch:ID`: once connected,
/// opens the compensation request dialog for that target as the console would (nothing is
/// requested), waits until its payment and the payment's other compensations are in (at most
/// 30 s) and renders it to `file`. kExitFailed also for a target that is not understood or found.
int takeCompensationRequestScreenshot(MainWindow &window, const QString &target,
                                      const QString &file);

/// `redrive --screenshot FILE --screenshot-approval ID`: the approval dialog of compensation
/// request `requestId` (nothing is decided), rendered once its context is in.
int takeCompensationApprovalScreenshot(MainWindow &window, qint64 requestId, const QString &file);

} // namespace redrive
