// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/screenshot_harness.h"

#include "models/audit_entry_model.h"
#include "models/cli_commands.h"
#include "models/compensation_model.h"
#include "models/console_reads.h"
#include "models/db/database_session.h"
#include "models/dead_letter_case.h"
#include "models/dead_letter_model.h"
#include "models/failure_group_model.h"
#include "models/mention_search_model.h"
#include "views/audit_log_widget.h"
#include "views/case_view.h"
#include "views/compensation_decision_dialog.h"
#include "views/compensation_request_dialog.h"
#include "views/main_window.h"
#include "views/mention_search_dialog.h"
#include "views/reconciliation_widget.h"

#include <QCoreApplication>
#include <QElapsedTimer>
#include <QHash>
#include <QHeaderView>
#include <QJsonObject>
#include <QLineEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <algorithm>
#include <cstdio>
#include <functional>
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
                                      const QString &file, const QString &submitReason,
                                      const QString &ticket)
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
    if (submitReason.isEmpty())
        return saveDialog(dialog, file, QStringLiteral("compensation request for %1").arg(target));
    dialog.reasonEdit()->setText(submitReason);
    dialog.ticketEdit()->setText(ticket);
    if (const int saved
        = saveDialog(dialog, file, QStringLiteral("compensation request for %1").arg(target));
        saved != cli::kExitOk)
        return saved;
    std::optional<QJsonObject> outcome;
    QObject::connect(&dialog, &CompensationRequestDialog::applied, &dialog,
                     [&outcome](const QJsonObject &o, const QString &) { outcome = o; });
    if (!dialog.confirmButton()->isEnabled()) {
        std::fprintf(stderr, "redrive: the request cannot be made: %s\n",
                     qPrintable(dialog.errorText()));
        return cli::kExitFailed;
    }
    dialog.confirmButton()->click();
    while (clock.elapsed() < 2 * kWaitMs && !outcome && dialog.errorText().isEmpty())
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    if (!outcome) {
        std::fprintf(stderr, "redrive: not requested: %s\n", qPrintable(dialog.errorText()));
        return cli::kExitFailed;
    }
    std::printf(
        "redrive: requested: compensation_id %lld, requires_approval %s\n",
        static_cast<long long>(outcome->value(QStringLiteral("compensation_id")).toInteger()),
        outcome->value(QStringLiteral("requires_approval")).toBool() ? "true" : "false");
    return cli::kExitOk;
}

int takeCompensationApprovalScreenshot(MainWindow &window, qint64 requestId, const QString &file,
                                       const QString &submitReason)
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
    if (submitReason.isEmpty())
        return saveDialog(dialog, file, QStringLiteral("approval of request %1").arg(requestId));
    dialog.setReason(submitReason);
    if (const int saved
        = saveDialog(dialog, file, QStringLiteral("approval of request %1").arg(requestId));
        saved != cli::kExitOk)
        return saved;
    dialog.decide();
    while (clock.elapsed() < 2 * kWaitMs && dialog.isBusy())
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    if (!dialog.isFinished()) {
        std::fprintf(stderr, "redrive: not approved: %s\n", qPrintable(dialog.messageText()));
        return cli::kExitFailed;
    }
    std::printf("redrive: approved: compensation_id %lld, applied %d\n",
                static_cast<long long>(requestId),
                dialog.outcome().value(QStringLiteral("applied")).toInt());
    return cli::kExitOk;
}

int takeFindScreenshot(MainWindow &window, const QString &term, const QString &file,
                       const QString &openKind)
{
    using Kind = MentionSearchModel::Kind;
    const QHash<QString, Kind> kinds { { QStringLiteral("dead-letter"), Kind::DeadLetter },
                                       { QStringLiteral("mismatch"), Kind::Mismatch },
                                       { QStringLiteral("compensation"), Kind::Compensation },
                                       { QStringLiteral("audit"), Kind::AuditEntry } };
    if (!openKind.isEmpty() && !kinds.contains(openKind)) {
        std::fprintf(stderr,
                     "redrive: --screenshot-open takes dead-letter, mismatch, "
                     "compensation or audit\n");
        return cli::kExitFailed;
    }
    QElapsedTimer clock;
    clock.start();
    if (const std::optional<int> failed = waitConnected(window, clock))
        return *failed;
    // The tabs a hit opens in are built once the roles are known.
    while (window.redriveRoles().isEmpty() && clock.elapsed() < 5000)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    MentionSearchDialog *dialog = window.openSearch();
    bool done = false;
    bool failedSearch = false;
    QObject::connect(dialog->model(), &ResultTableModel::loaded, dialog, [&done] { done = true; });
    QObject::connect(dialog->model(), &ResultTableModel::failed, dialog,
                     [&done, &failedSearch] { done = failedSearch = true; });
    dialog->search(term);
    while (clock.elapsed() < kWaitMs && !done)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    if (!done || failedSearch) {
        std::fprintf(stderr, "redrive: the search for %s failed: %s\n", qPrintable(term),
                     qPrintable(dialog->statusText()));
        return cli::kExitFailed;
    }
    if (openKind.isEmpty())
        return saveDialog(*dialog, file,
                          QStringLiteral("search for %1: %2").arg(term, dialog->statusText()));
    const MentionSearchModel *model = dialog->model();
    int row = 0;
    while (row < model->rowCount() && model->kindAt(row) != kinds.value(openKind))
        ++row;
    if (row == model->rowCount()) {
        std::fprintf(stderr, "redrive: the search for %s found no %s\n", qPrintable(term),
                     qPrintable(openKind));
        return cli::kExitFailed;
    }
    dialog->openRow(row);
    dialog->hide();
    // Let the tab start loading, then wait until it is in.
    settle();
    while (clock.elapsed() < 2 * kWaitMs
           && ((window.reconciliationTab() && window.reconciliationTab()->isLoading())
               || (window.auditTab() && window.auditTab()->isLoading())))
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    settle();
    if (!window.grab().save(file)) {
        std::fprintf(stderr, "redrive: cannot write %s\n", qPrintable(file));
        return cli::kExitFailed;
    }
    std::printf("redrive: wrote %s (%s %lld of the search for %s)\n", qPrintable(file),
                qPrintable(openKind), static_cast<long long>(model->idAt(row)), qPrintable(term));
    return cli::kExitOk;
}

int takeAuditScreenshot(MainWindow &window, const QString &file)
{
    QElapsedTimer clock;
    clock.start();
    if (const std::optional<int> failed = waitConnected(window, clock))
        return *failed;
    while (!window.auditTab() && clock.elapsed() < kWaitMs)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    AuditLogWidget *audit = window.auditTab();
    if (!audit) {
        std::fprintf(stderr, "redrive: no audit log tab\n");
        return cli::kExitFailed;
    }
    window.tabs()->setCurrentWidget(audit);
    settle();
    while (clock.elapsed() < kWaitMs
           && (audit->isLoading() || audit->entryModel()->rowCount() == 0))
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    if (audit->entryModel()->rowCount() == 0) {
        std::fprintf(stderr, "redrive: the audit log shows no entry\n");
        return cli::kExitFailed;
    }
    audit->selectEntry(0);
    while (clock.elapsed() < kWaitMs && audit->shownEntryId() == 0)
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    settle();
    while (clock.elapsed() < kWaitMs && audit->isLoading())
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    settle();
    if (!window.grab().save(file)) {
        std::fprintf(stderr, "redrive: cannot write %s\n", qPrintable(file));
        return cli::kExitFailed;
    }
    std::printf("redrive: wrote %s (audit entry %lld)\n", qPrintable(file),
                static_cast<long long>(audit->shownEntryId()));
    return cli::kExitOk;
}

namespace {

// Waits for the first page and the failure groups with their verdicts (or a banner, or kWaitMs),
// then with `search` types it into the list's search field and waits for them again, runs
// `arrange` and renders the window: the body of takeMainWindowScreenshot() and
// takeFailureGroupsScreenshot().
int grabMainWindow(MainWindow &window, const QString &file, const std::function<void()> &arrange,
                   const QString &search = {})
{
    QElapsedTimer clock;
    clock.start();
    bool groupsLoaded = false;
    // The verdicts come after the groups (FailureGroupModel): the picture shows them.
    QObject::connect(window.failureGroupModel(), &FailureGroupModel::verdictsLoaded, &window,
                     [&groupsLoaded] { groupsLoaded = true; });
    QObject::connect(window.failureGroupModel(), &FailureGroupModel::verdictsFailed, &window,
                     [&groupsLoaded] { groupsLoaded = true; });
    auto waitForLoads = [&] {
        while (clock.elapsed() < kWaitMs) {
            QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
            const bool loaded = window.schemaReady() && !window.deadLetterModel()->isLoading()
                && window.deadLetterModel()->total() >= 0 && groupsLoaded;
            if (loaded || window.isLoginRefused()
                || (!window.bannerText().isEmpty() && clock.elapsed() > 3000))
                break;
        }
    };
    waitForLoads();
    auto *searchField = window.findChild<QLineEdit *>(QStringLiteral("deadLetterSearch"));
    if (!search.isEmpty() && searchField && window.schemaReady()) {
        groupsLoaded = false;
        clock.restart();
        searchField->setText(search);
        Q_EMIT searchField->returnPressed();
        waitForLoads();
    }
    if (window.isLoginRefused())
        return reportLoginRefused(window, window.session()->settings());
    settle();
    arrange();
    settle();
    if (!window.grab().save(file)) {
        std::fprintf(stderr, "redrive: cannot write %s\n", qPrintable(file));
        return cli::kExitFailed;
    }
    std::printf("redrive: wrote %s (%lld dead letters shown)\n", qPrintable(file),
                static_cast<long long>(window.deadLetterModel()->rowCount()));
    return window.schemaReady() ? cli::kExitOk : cli::kExitFailed;
}

} // namespace

int takeMainWindowScreenshot(MainWindow &window, const QString &file)
{
    return grabMainWindow(window, file, [] {});
}

int takeFailureGroupsScreenshot(MainWindow &window, const QString &file, const QString &search)
{
    window.resize(2000, 900);
    return grabMainWindow(
        window, file,
        [&window] {
            auto *groups = window.findChild<QTableView *>(QStringLiteral("failureGroups"));
            QWidget *parent = groups ? groups->parentWidget() : nullptr;
            while (parent && !qobject_cast<QSplitter *>(parent))
                parent = parent->parentWidget();
            auto *splitter = qobject_cast<QSplitter *>(parent);
            if (!splitter)
                return;
            // Every column of the groups table wide enough for its contents, the rest of the
            // window for the dead letters beside it.
            groups->resizeColumnsToContents();
            for (int c = 0; c < groups->model()->columnCount(); ++c)
                groups->setColumnWidth(c, std::min(groups->columnWidth(c), 380));
            int wanted
                = groups->verticalHeader()->isVisible() ? groups->verticalHeader()->width() : 0;
            for (int c = 0; c < groups->model()->columnCount(); ++c)
                wanted += groups->isColumnHidden(c) ? 0 : groups->columnWidth(c);
            const int total = splitter->width();
            const int left = std::min(wanted + 30, total - 300);
            splitter->setSizes({ left, total - left });
        },
        search);
}

int takeCaseScreenshot(MainWindow &window, qint64 deadLetterId, const QString &file,
                       const QString &tab)
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
           && !(view.deadLetterCase()->isComplete() && !view.isTextBusy()))
        QCoreApplication::processEvents(QEventLoop::AllEvents, 50);
    if (!tab.isEmpty()) {
        bool shown = false;
        for (QTabWidget *tabs : view.findChildren<QTabWidget *>()) {
            for (int i = 0; i < tabs->count() && !shown; ++i) {
                if (tabs->tabText(i).remove(QLatin1Char('&')).startsWith(tab)) {
                    tabs->setCurrentIndex(i);
                    shown = true;
                }
            }
        }
        if (!shown) {
            std::fprintf(stderr, "redrive: the case view has no tab '%s'\n", qPrintable(tab));
            return cli::kExitFailed;
        }
    }
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
