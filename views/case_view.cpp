// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/case_view.h"

#include "models/db/database_session.h"
#include "models/display_format.h"
#include "models/logging.h"
#include "models/owner_only_settings.h"
#include "views/attempt_timeline_plot.h"
#include "views/case_headers_tab.h"
#include "views/case_history_tab.h"
#include "views/case_key_tab.h"
#include "views/case_last_error_tab.h"
#include "views/case_outbox_audit_tab.h"
#include "views/case_payload_tab.h"
#include "views/case_reconciliation_tab.h"
#include "views/error_presenter.h"
#include "views/result_table_view.h"
#include "views/text_panes.h"

#include <QFrame>
#include <QGridLayout>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QLocale>
#include <QPushButton>
#include <QSettings>
#include <QShortcut>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTableView>
#include <QToolBar>
#include <QVBoxLayout>

namespace redrive {

namespace {

using panes::ignoreTextWidth;

enum Tab { PayloadTab, HeadersTab, LastErrorTab, HistoryTab, KeyTab, ReconciliationTab, AuditTab };

struct SeverityLook
{
    const char *background;
    const char *border;
    const char *accent;
};

SeverityLook lookOf(DeadLetterCase::Severity severity)
{
    switch (severity) {
    case DeadLetterCase::Severity::Block:
        return { "#fdecea", "#e6a8a3", "#b3261e" };
    case DeadLetterCase::Severity::Warn:
        return { "#fff4e0", "#e8c784", "#8a5300" };
    case DeadLetterCase::Severity::Ok:
        return { "#e8f5e9", "#a5d6a7", "#1b5e20" };
    }
    return { "#f2f2f2", "#cccccc", "#333333" };
}

} // namespace

CaseView::CaseView(db::DatabaseSession *session, qint64 deadLetterId, bool showUtc, QWidget *parent)
    : QWidget(parent, Qt::Window)
    , m_session(session)
    , m_case(new DeadLetterCase(session, deadLetterId, this))
    , m_showUtc(showUtc)
{
    setObjectName(QStringLiteral("caseView"));
    setWindowTitle(tr("Dead letter #%1").arg(deadLetterId));
    resize(1200, 860);
    m_case->setShowUtc(showUtc);
    buildUi();
    restoreLayout();

    connect(m_case, &DeadLetterCase::partLoaded, this, &CaseView::onPartLoaded);
    connect(m_case, &DeadLetterCase::failed, this, &CaseView::onFailed);
    connect(m_case, &DeadLetterCase::fullPayloadLoaded, m_payloadTab,
            &CasePayloadTab::showFullPayload);

    // Esc cancels first (as in the main window: every query this session has running or queued
    // ends within DatabaseSession::kCancelTimeoutMs, none left waiting on the server); with
    // nothing running it closes the window.
    auto *close = new QShortcut(QKeySequence(Qt::Key_Escape), this);
    connect(close, &QShortcut::activated, this, [this, session] {
        if (session && session->pendingCount() > 0) {
            session->cancelAll();
            return;
        }
        QWidget::close();
    });
    // F5 alone: QKeySequence::Refresh is also Ctrl+R on GNOME and KDE, which is Requeue.
    auto *refresh = new QShortcut(QKeySequence(Qt::Key_F5), this);
    connect(refresh, &QShortcut::activated, this, &CaseView::reload);

    reload();
}

CaseView::~CaseView()
{
    saveLayout();
}

AttemptTimelinePlot *CaseView::timeline() const
{
    return m_historyTab->timeline();
}

QStandardItemModel *CaseView::payloadTreeModel() const
{
    return m_payloadTab->treeModel();
}

bool CaseView::isPayloadBusy() const
{
    return m_payloadTab->isBusy();
}

bool CaseView::isTextBusy() const
{
    return isPayloadBusy() || m_headersTab->isTextBusy() || m_lastErrorTab->isTextBusy()
        || m_historyTab->isTextBusy() || m_keyTab->isTextBusy();
}

void CaseView::saveLayout() const
{
    QSettings settings;
    // A case view larger than the screen is not saved: one 10 KB kind once made it 80,000 px wide
    // and every later case view opened that wide.
    const QByteArray geometry = panes::geometryWorthSaving(this);
    if (geometry.isEmpty())
        settings.remove(QStringLiteral("case/geometry"));
    else
        settings.setValue(QStringLiteral("case/geometry"), geometry);
    for (const QTableView *table : m_tables)
        if (table->model())
            settings.setValue(QStringLiteral("case/columns/") + table->objectName(),
                              table->horizontalHeader()->saveState());
    syncOwnerOnly(settings);
}

void CaseView::restoreLayout()
{
    // Every case view opens with the size and the column widths and order the operator left.
    QSettings settings;
    // Never larger than the screen, whatever was saved.
    panes::restoreGeometryOnScreen(this,
                                   settings.value(QStringLiteral("case/geometry")).toByteArray());
    for (QTableView *table : m_tables)
        if (table->model())
            table->horizontalHeader()->restoreState(
                settings.value(QStringLiteral("case/columns/") + table->objectName())
                    .toByteArray());
}

// --- Building ----------------------------------------------------------------------------------

void CaseView::buildUi()
{
    auto *root = new QVBoxLayout(this);
    root->setContentsMargins(10, 6, 10, 10);
    root->setSpacing(8);

    m_actions = new QToolBar(this);
    m_actions->setObjectName(QStringLiteral("actions"));
    m_actions->setWindowTitle(tr("Actions"));
    m_actions->setToolButtonStyle(Qt::ToolButtonTextBesideIcon);
    m_actions->hide(); // shown when the first action is added
    m_actions->installEventFilter(this);
    root->addWidget(m_actions);

    m_banner = new QLabel(this);
    m_banner->setObjectName(QStringLiteral("errorBanner"));
    m_banner->setWordWrap(true);
    m_banner->setTextFormat(Qt::PlainText);
    m_banner->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_banner->setStyleSheet(QStringLiteral("QLabel { background: #fdecea; color: #5f1410;"
                                           " border: 1px solid #e6a8a3; padding: 6px; }"));
    ignoreTextWidth(m_banner);
    m_banner->hide();
    root->addWidget(m_banner);

    // Header: what it is, where it stands.
    auto *header = new QFrame(this);
    header->setObjectName(QStringLiteral("header"));
    auto *headerLayout = new QVBoxLayout(header);
    headerLayout->setContentsMargins(0, 0, 0, 0);
    headerLayout->setSpacing(4);
    m_title = new QLabel(header);
    m_title->setObjectName(QStringLiteral("title"));
    m_title->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_title->setTextFormat(Qt::PlainText);
    ignoreTextWidth(m_title);
    QFont titleFont = m_title->font();
    titleFont.setPointSizeF(titleFont.pointSizeF() * 1.35);
    titleFont.setBold(true);
    m_title->setFont(titleFont);
    m_title->setText(windowTitle());
    headerLayout->addWidget(m_title);
    auto *grid = new QGridLayout;
    grid->setHorizontalSpacing(10);
    grid->setVerticalSpacing(3);
    m_fields.add(grid, 0, 0, tr("Queue"), QStringLiteral("queue"));
    m_fields.add(grid, 0, 1, tr("Kind"), QStringLiteral("kind"));
    m_fields.add(grid, 0, 2, tr("Status"), QStringLiteral("status"));
    m_fields.add(grid, 0, 3, tr("Reason"), QStringLiteral("reason"));
    m_fields.add(grid, 1, 0, tr("Error class"), QStringLiteral("errorClass"));
    m_fields.add(grid, 1, 1, tr("Error code"), QStringLiteral("errorCode"));
    m_fields.add(grid, 1, 2, tr("Attempts"), QStringLiteral("attempts"));
    m_fields.add(grid, 1, 3, tr("Failure group"), QStringLiteral("failureGroup"));
    m_fields.add(grid, 2, 0, tr("Dead at"), QStringLiteral("deadAt"));
    m_fields.add(grid, 2, 1, tr("Age"), QStringLiteral("age"));
    m_fields.add(grid, 2, 2, tr("Idempotency key"), QStringLiteral("idempotencyKey"));
    m_fields.add(grid, 2, 3, tr("Claimed by"), QStringLiteral("claimedBy"));
    for (int c = 0; c < 4; ++c)
        grid->setColumnStretch(2 * c + 1, 1);
    headerLayout->addLayout(grid);
    root->addWidget(header);

    // The verdict: the first thing an operator should read before acting.
    m_verdictBox = new QFrame(this);
    m_verdictBox->setObjectName(QStringLiteral("verdictBox"));
    auto *verdictLayout = new QVBoxLayout(m_verdictBox);
    verdictLayout->setContentsMargins(12, 8, 12, 8);
    verdictLayout->setSpacing(4);
    m_verdictLine = new QLabel(m_verdictBox);
    m_verdictLine->setObjectName(QStringLiteral("verdictLine"));
    QFont verdictFont = m_verdictLine->font();
    verdictFont.setPointSizeF(verdictFont.pointSizeF() * 1.2);
    verdictFont.setBold(true);
    m_verdictLine->setFont(verdictFont);
    m_verdictReasons = new QLabel(m_verdictBox);
    m_verdictReasons->setObjectName(QStringLiteral("verdictReasons"));
    m_verdictReasons->setWordWrap(true);
    m_verdictReasons->setTextFormat(Qt::RichText);
    m_verdictReasons->setTextInteractionFlags(Qt::TextSelectableByMouse);
    ignoreTextWidth(m_verdictReasons);
    verdictLayout->addWidget(m_verdictLine);
    verdictLayout->addWidget(m_verdictReasons);
    root->addWidget(m_verdictBox);

    m_tabs = new QTabWidget(this);
    m_tabs->setObjectName(QStringLiteral("tabs"));
    m_payloadTab = new CasePayloadTab(m_case, this);
    m_tabs->addTab(m_payloadTab, tr("Payload"));
    m_headersTab = new CaseHeadersTab(m_case, m_showUtc, this);
    m_tabs->addTab(m_headersTab, tr("Headers"));
    m_lastErrorTab = new CaseLastErrorTab(m_case, m_showUtc, this);
    m_tabs->addTab(m_lastErrorTab, tr("Last error"));
    const panes::TableMaker tableMaker = [this](QWidget *parent, const QString &name) {
        return makeTable(parent, name);
    };
    m_historyTab = new CaseHistoryTab(m_case, m_showUtc, tableMaker, this);
    m_tabs->addTab(m_historyTab, tr("Retry history"));
    m_keyTab = new CaseKeyTab(m_session, m_case, m_showUtc, this);
    connect(m_keyTab, &CaseKeyTab::released, this, &CaseView::reload);
    m_tabs->addTab(m_keyTab, tr("Idempotency key"));
    m_reconciliationTab = new CaseReconciliationTab(m_case, tableMaker, this);
    m_tabs->addTab(m_reconciliationTab, tr("Reconciliation"));
    m_outboxAuditTab = new CaseOutboxAuditTab(m_case, tableMaker, this);
    m_tabs->addTab(m_outboxAuditTab, tr("Outbox && audit"));
    root->addWidget(m_tabs, 1);

    renderVerdict();
}

QTableView *CaseView::makeTable(QWidget *parent, const QString &name)
{
    auto *view = new ResultTableView(parent);
    view->setObjectName(name);
    view->horizontalHeader()->setSectionsMovable(true);
    view->installEventFilter(this);
    m_tables.append(view);
    return view;
}

// --- Loading -----------------------------------------------------------------------------------

void CaseView::reload()
{
    m_bannerLines.clear();
    m_banner->hide();
    m_payloadTab->forgetFullLoad();
    m_case->load();
}

void CaseView::setShowUtc(bool utc)
{
    if (utc == m_showUtc)
        return;
    m_showUtc = utc;
    m_case->setShowUtc(utc);
    m_historyTab->setShowUtc(utc);
    m_keyTab->setShowUtc(utc);
    m_headersTab->setShowUtc(utc); // both shown again by renderDetail()
    m_lastErrorTab->setShowUtc(utc);
    renderDetail();
}

void CaseView::onPartLoaded(DeadLetterCase::Part part)
{
    using P = DeadLetterCase::Part;
    switch (part) {
    case P::Detail:
        renderDetail();
        m_payloadTab->showDetailPayload();
        break;
    case P::Attempts:
        m_historyTab->showRounds();
        renderAttemptsField();
        break;
    case P::Timeline:
        m_historyTab->showTimeline();
        break;
    case P::IdempotencyKey:
        m_keyTab->showRecord();
        break;
    case P::Verdict:
        renderVerdict();
        break;
    case P::Mismatches:
        m_reconciliationTab->showMismatches();
        break;
    case P::Outbox:
        m_outboxAuditTab->showOutbox();
        break;
    case P::Audit:
        m_outboxAuditTab->showAudit();
        break;
    case P::FullPayload:
        break;
    }
    renderCounts();
}

void CaseView::onFailed(DeadLetterCase::Part part, const db::DbError &error)
{
    using P = DeadLetterCase::Part;
    QString what;
    switch (part) {
    case P::Detail:
        what = tr("the dead letter");
        break;
    case P::Attempts:
        what = tr("the retry history");
        m_historyTab->showTimelineFailed(); // the timeline is asked for only after the history
        break;
    case P::Timeline:
        what = tr("the retry timeline");
        m_historyTab->showTimelineFailed();
        break;
    case P::IdempotencyKey:
        what = tr("the idempotency key");
        break;
    case P::Mismatches:
        what = tr("the reconciliation mismatches");
        break;
    case P::Outbox:
        what = tr("the outbox commands");
        break;
    case P::Audit:
        what = tr("the audit entries");
        break;
    case P::Verdict:
        what = tr("the retry verdict");
        renderVerdict();
        break;
    case P::FullPayload:
        what = tr("the full payload");
        m_payloadTab->fullPayloadFailed();
        break;
    }
    m_bannerLines.append(tr("Could not load %1: %2")
                             .arg(what,
                                  display::boundedLines(ErrorPresenter::inlineText(error),
                                                        display::kMaxLabelLines)));
    m_banner->setText(m_bannerLines.join(QLatin1Char('\n')));
    m_banner->show();
}

// --- Rendering ---------------------------------------------------------------------------------

QString CaseView::time(const QDateTime &utc) const
{
    return display::time(utc, m_showUtc);
}

void CaseView::renderDetail()
{
    const auto detail = m_case->detail();
    if (!detail)
        return;
    const DeadLetterCase::Detail &d = *detail;
    // The kind's first line, at most 200 characters: a title is one line (the Kind field and its
    // tooltip have more).
    const qsizetype kindEnd = d.kind.indexOf(QLatin1Char('\n'));
    const QString kind = kindEnd < 0
        ? display::boundedText(d.kind, 200)
        : display::boundedText(d.kind.left(kindEnd), 200) + QStringLiteral(" \u2026");
    setWindowTitle(tr("Dead letter #%1 — %2").arg(QString::number(d.id), kind));
    m_title->setText(windowTitle());

    m_fields.set(QStringLiteral("queue"), d.queue);
    m_fields.set(QStringLiteral("kind"), d.kind);
    m_fields.set(QStringLiteral("status"),
                 d.resolution.isEmpty() ? d.status : tr("%1 (%2)").arg(d.status, d.resolution));
    m_fields.set(QStringLiteral("reason"), d.reason);
    m_fields.set(
        QStringLiteral("errorClass"),
        d.classBecause.isEmpty() ? d.errorClass
                                 : tr("%1 (because: %2)").arg(d.errorClass, d.classBecause),
        d.classBecause.isEmpty() ? QString()
                                 : tr("Classed %1 because: %2").arg(d.errorClass, d.classBecause));
    m_fields.set(QStringLiteral("errorCode"), d.errorCode);
    renderAttemptsField();
    // By the name the groups list gives it; the hash only in the tooltip.
    m_fields.set(QStringLiteral("failureGroup"),
                 d.groupName.isEmpty() ? display::shortHash(d.fingerprint) : d.groupName,
                 d.groupName.isEmpty() ? d.fingerprint
                                       : tr("%1\nfingerprint %2").arg(d.groupName, d.fingerprint),
                 600);
    m_fields.set(QStringLiteral("deadAt"), time(d.deadAt), display::time(d.deadAt, !m_showUtc));
    // Dead since '-infinity': an age with no number (docs/domain.md "Times at the ends of the
    // range"); since 'infinity', not dead yet by the server's clock, as any time ahead of it.
    m_fields.set(QStringLiteral("age"),
                 d.deadAt == display::infinitePast() ? QStringLiteral("\u221E")
                                                     : display::age(d.ageSeconds()),
                 tr("By the server's clock"));
    m_fields.set(QStringLiteral("idempotencyKey"), d.idempotencyKey);
    m_fields.set(QStringLiteral("claimedBy"),
                 d.claimedBy.isEmpty() ? QString()
                                       : tr("%1 since %2").arg(d.claimedBy, time(d.claimedAt)));

    m_headersTab->showDetail();
    m_lastErrorTab->showDetail();
    m_reconciliationTab->showDetail();
}

void CaseView::renderVerdict()
{
    const bool loaded = m_case->isLoaded(DeadLetterCase::Part::Verdict);
    const auto reasons = m_case->verdict();
    const bool failed = m_case->hasFailed(DeadLetterCase::Part::Verdict);
    QString line;
    SeverityLook look { "#f2f2f2", "#cccccc", "#333333" };
    if (!loaded) {
        line = tr("Is it safe to retry? Checking…");
    } else if (failed) {
        look = lookOf(DeadLetterCase::Severity::Warn);
        line = tr("Is it safe to retry? Unknown: the verdict could not be loaded");
    } else {
        const DeadLetterCase::Severity worst = m_case->worstSeverity();
        look = lookOf(worst);
        switch (worst) {
        case DeadLetterCase::Severity::Block:
            line = tr("Is it safe to retry? Not safe to retry as is");
            break;
        case DeadLetterCase::Severity::Warn:
            line = tr("Is it safe to retry? Check first");
            break;
        case DeadLetterCase::Severity::Ok:
            line = tr("Is it safe to retry? Safe to retry");
            break;
        }
    }
    m_verdictBox->setStyleSheet(
        QStringLiteral("QFrame#verdictBox { background: %1; border: 1px solid %2;"
                       " border-left: 6px solid %3; border-radius: 3px; }"
                       " QFrame#verdictBox QLabel { background: transparent; border: none;"
                       " color: #1f1f1f; }"
                       " QLabel#verdictLine { color: %3; }")
            .arg(QLatin1String(look.background), QLatin1String(look.border),
                 QLatin1String(look.accent)));
    m_verdictLine->setText(line);

    QString html;
    if (loaded && !failed && reasons.isEmpty())
        html = tr("No reason against a retry was found: the job is not leased, its key is not"
                  " done or stuck, and no newer event or reconciliation mismatch stands in the"
                  " way.")
                   .toHtmlEscaped();
    for (const DeadLetterCase::VerdictReason &r : reasons) {
        const SeverityLook l = lookOf(r.severity);
        const QString tag = r.severity == DeadLetterCase::Severity::Block ? tr("BLOCK")
            : r.severity == DeadLetterCase::Severity::Warn                ? tr("WARN")
                                                                          : tr("OK");
        html += QStringLiteral("<tr><td style=\"padding-right:8px\"><b style=\"color:%1\">%2</b>"
                               "</td><td>%3 <span style=\"color:#6b6b6b\">(%4)</span></td></tr>")
                    .arg(QLatin1String(l.accent), tag,
                         display::boundedLines(r.explanation, 3).toHtmlEscaped(),
                         display::boundedText(r.code, 200).toHtmlEscaped());
    }
    if (!reasons.isEmpty())
        html = QStringLiteral("<table cellspacing=\"1\">") + html + QStringLiteral("</table>");
    m_verdictReasons->setText(html);
    m_verdictReasons->setVisible(!html.isEmpty());
}

void CaseView::renderAttemptsField()
{
    const auto detail = m_case->detail();
    if (!detail)
        return;
    const DeadLetterCase::Detail &d = *detail;
    const bool roundsLoaded = m_case->isLoaded(DeadLetterCase::Part::Attempts)
        && !m_case->hasFailed(DeadLetterCase::Part::Attempts);
    const qint64 count = roundsLoaded ? m_case->attemptCount() : d.attempts;
    const qsizetype rounds = roundsLoaded ? m_case->rounds().size() : 1;
    const QLocale locale;
    QString text;
    if (rounds > 1)
        text = tr("%1 in %2 rounds").arg(locale.toString(count), QString::number(rounds));
    else if (d.maxAttempts > 0)
        text = tr("%1 of %2").arg(locale.toString(count), QString::number(d.maxAttempts));
    else
        text = locale.toString(count);
    m_fields.set(QStringLiteral("attempts"), text);
}

QPushButton *CaseView::releaseKeyButton() const
{
    return m_keyTab->releaseButton();
}

void CaseView::setRoles(const QStringList &redriveRoles)
{
    m_keyTab->setRoles(redriveRoles);
}

void CaseView::renderCounts()
{
    using P = DeadLetterCase::Part;
    if (m_case->isLoaded(P::Attempts))
        m_tabs->setTabText(
            HistoryTab, tr("Retry history (%1)").arg(QLocale().toString(m_case->attemptCount())));
    if (m_case->isLoaded(P::Mismatches))
        m_tabs->setTabText(ReconciliationTab,
                           tr("Reconciliation (%1)").arg(m_case->mismatchesModel()->rowCount()));
    if (m_case->isLoaded(P::Outbox) && m_case->isLoaded(P::Audit))
        m_tabs->setTabText(AuditTab,
                           tr("Outbox && audit (%1 · %2)")
                               .arg(QString::number(m_case->outboxModel()->rowCount()),
                                    QString::number(m_case->auditModel()->rowCount())));
}

// --- Copy and keys -----------------------------------------------------------------------------

void CaseView::copyRows(QTableView *table)
{
    // Every table here is a ResultTableView: its copy reads cut long values whole first
    // (docs/architecture.md#long-values-in-lists).
    if (auto *view = qobject_cast<ResultTableView *>(table))
        view->copySelectedRows();
}

bool CaseView::eventFilter(QObject *watched, QEvent *event)
{
    if (watched == m_actions && event->type() == QEvent::ActionAdded) {
        m_actions->show();
        return false;
    }
    if ((event->type() == QEvent::ShortcutOverride || event->type() == QEvent::KeyPress)) {
        auto *table = qobject_cast<QTableView *>(watched);
        auto *key = static_cast<QKeyEvent *>(event);
        if (table && m_tables.contains(table) && key->matches(QKeySequence::Copy)) {
            event->accept();
            if (event->type() == QEvent::KeyPress)
                copyRows(table);
            return true;
        }
    }
    return QWidget::eventFilter(watched, event);
}

} // namespace redrive
