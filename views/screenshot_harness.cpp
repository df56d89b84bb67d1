// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/screenshot_harness.h"

#include "models/cli_commands.h"
#include "models/compensation_model.h"
#include "models/console_reads.h"
#include "models/db/database_session.h"
#include "models/dead_letter_case.h"
#include "models/dead_letter_model.h"
#include "models/failure_group_model.h"
#include "views/case_view.h"
#include "views/compensation_decision_dialog.h"
#include "views/compensation_request_dialog.h"
#include "views/main_window.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <cstdio>
#include <optional>

namespace redrive {

namespace {

constexpr qint64 kWaitMs = 30000; // at most this long for the data to arrive

// A headless run whose login the server refused: one line on stderr (the server's reason and the
// redacted connection string, never a password) and EX_UNAVAILABLE, instead of waiting for a
// password nobody can type.
int reportLoginRefused(const MainWindow &window, const db::ConnectionSettings &settings)
{
    const QString where = settings.connInfo.trimmed().isEmpty()
        ? QStringLiteral("the default connection")
        : db::redactedConnInfo(settings.connInfo);
    std::fprintf(stderr, "redrive: login refused (%s): %s\n", qPrintable(where),
                 qPrintable(window.loginRefusedReason()));
    return cli::kExitUnavailable;
}

// Runs what is queued (queued replots, layout) before a grab.
void settle()
{
    for (int i = 0; i < 10; ++i)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 20);
}

// Waits until `window` is connected with its roles known; an exit status when it never is.
std::optional<int> waitConnected(MainWindow &window, QElapsedTimer &clock)
{
    while (!window.schemaReady() && !window.isLoginRefused() && clock.elapsed() < kWaitMs)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    if (window.isLoginRefused())
        return reportLoginRefused(window, window.session()->settings());
    if (!window.schemaReady()) {
        std::fprintf(stderr, "redrive: not connected: %s\n", qPrintable(window.bannerText()));
        return cli::kExitFailed;
    }
    return std::nullopt;
}

int saveDialog(QWidget &dialog, const QString &file, const QString &what)
{
    settle();
    if (!dialog.grab().save(file)) {
        std::fprintf(stderr, "redrive: cannot write %s\n", qPrintable(file));
        return cli::kExitFailed;
    }
    std::printf("redrive: wrote %s (%s)\n", qPrintable(file), qPrintable(what));
    return cli::kExitOk;
}

} // namespace

int takeCompensationRequestScreenshot(MainWindow &window, const QString &target,
                                      const QString &file)
{
    const QString type = target.section(QLatin1Char(':'), 0, 0);
    bool ok = false;
    const qint64 id = target.section(QLatin1Char(':'), 1).toLongLong(&ok);
    if (!ok || (type != QLatin1String("dead-letter") && type != QLatin1String("mismatch"))) {
        std::fprintf(stderr, "redrive: --screenshot-request takes dead-letter:ID or mismatch:ID\n");
        return cli::kExitFailed;
    }
    QElapsedTimer clock;
    clock.start();
    if (const std::optional<int> failed = waitConnected(window, clock))
        return *failed;
    CompensationRequestDialog dialog(window.session(),
                                     type == QLatin1String("mismatch")
                                         ? CompensationTarget::mismatch(id)
                                         : CompensationTarget::deadLetter(id),
                                     &window);
    dialog.show();
    while (clock.elapsed() < kWaitMs
           && !(dialog.isLoaded()
                && !dialog.otherCompensationsText().startsWith(QStringLiteral("Loading"))))
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    if (!dialog.isLoaded()) {
        std::fprintf(stderr, "redrive: the payment of %s did not load\n", qPrintable(target));
        return cli::kExitFailed;
    }
    return saveDialog(dialog, file, QStringLiteral("compensation request for %1").arg(target));
}

int takeCompensationApprovalScreenshot(MainWindow &window, qint64 requestId, const QString &file)
{
    QElapsedTimer clock;
    clock.start();
    if (const std::optional<int> failed = waitConnected(window, clock))
        return *failed;
    std::optional<CompensationRequest> request;
    bool answered = false;
    reads::compensationContext(window.session(), &window, requestId,
                               [&](const db::DbExpected<db::ResultSet> &rows) {
                                   answered = true;
                                   if (rows && rows->rowCount() > 0)
                                       request = CompensationModel::requestFrom(rows.value(), 0);
                               });
    while (!answered && clock.elapsed() < kWaitMs)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    if (!request) {
        std::fprintf(stderr, "redrive: no compensation request %lld\n",
                     static_cast<long long>(requestId));
        return cli::kExitFailed;
    }
    CompensationDecisionDialog dialog(window.session(), *request,
                                      CompensationDecisionDialog::Decision::Approve,
                                      QStringLiteral("screenshot"), &window);
    dialog.show();
    QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    while (clock.elapsed() < kWaitMs && dialog.isBusy())
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    return saveDialog(dialog, file, QStringLiteral("approval of request %1").arg(requestId));
}

int takeMainWindowScreenshot(MainWindow &window, const QString &file)
{
    QElapsedTimer clock;
    clock.start();
    bool groupsLoaded = false;
    QObject::connect(window.failureGroupModel(), &FailureGroupModel::loaded, &window,
                     [&groupsLoaded] { groupsLoaded = true; });
    while (clock.elapsed() < kWaitMs) {
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
        const bool loaded = window.schemaReady() && !window.deadLetterModel()->isLoading()
            && window.deadLetterModel()->total() >= 0 && groupsLoaded;
        if (loaded || window.isLoginRefused()
            || (!window.bannerText().isEmpty() && clock.elapsed() > 3000))
            break;
    }
    if (window.isLoginRefused())
        return reportLoginRefused(window, window.session()->settings());
    settle();
    if (!window.grab().save(file)) {
        std::fprintf(stderr, "redrive: cannot write %s\n", qPrintable(file));
        return cli::kExitFailed;
    }
    std::printf("redrive: wrote %s (%lld dead letters shown)\n", qPrintable(file),
                static_cast<long long>(window.deadLetterModel()->rowCount()));
    return window.schemaReady() ? cli::kExitOk : cli::kExitFailed;
}

int takeCaseScreenshot(MainWindow &window, qint64 deadLetterId, const QString &file)
{
    QElapsedTimer clock;
    clock.start();
    while (!window.schemaReady() && !window.isLoginRefused() && clock.elapsed() < kWaitMs)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    if (window.isLoginRefused())
        return reportLoginRefused(window, window.session()->settings());
    if (!window.schemaReady()) {
        std::fprintf(stderr, "redrive: not connected: %s\n", qPrintable(window.bannerText()));
        return cli::kExitFailed;
    }
    // The login's roles decide which actions the case view offers: wait for them briefly.
    while (window.redriveRoles().isEmpty() && clock.elapsed() < 5000)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    CaseView &view = *window.openCase(deadLetterId);
    while (clock.elapsed() < kWaitMs
           && !(view.deadLetterCase()->isComplete() && !view.isPayloadBusy()))
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    settle();
    if (!view.grab().save(file)) {
        std::fprintf(stderr, "redrive: cannot write %s\n", qPrintable(file));
        return cli::kExitFailed;
    }
    const bool found = view.deadLetterCase()->detail().has_value();
    std::printf("redrive: wrote %s (case view of dead letter %lld%s)\n", qPrintable(file),
                static_cast<long long>(deadLetterId), found ? "" : ", not found");
    return found ? cli::kExitOk : cli::kExitFailed;
}

} // namespace redrive
