// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/case_view.h"

#include "models/db/database_session.h"
#include "models/display_format.h"
#include "models/logging.h"
#include "models/operator_action.h"
#include "models/owner_only_settings.h"
#include "models/payload_text.h"
#include "views/attempt_timeline_plot.h"
#include "views/case_history_tab.h"
#include "views/case_payload_tab.h"
#include "views/error_presenter.h"
#include "views/reason_dialog.h"
#include "views/result_table_view.h"
#include "views/single_action.h"
#include "views/text_panes.h"

#include <QClipboard>
#include <QFontMetrics>
#include <QFrame>
#include <QGridLayout>
#include <QGuiApplication>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QJsonDocument>
#include <QKeyEvent>
#include <QLabel>
#include <QLocale>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSettings>
#include <QShortcut>
#include <QSplitter>
#include <QStandardItemModel>
#include <QTabWidget>
#include <QTableView>
#include <QToolBar>
#include <QVBoxLayout>
#include <algorithm>

namespace redrive {

namespace {

using panes::ignoreTextWidth;

enum Tab { PayloadTab, HeadersTab, LastErrorTab, HistoryTab, KeyTab, ReconciliationTab, AuditTab };

/// SHA-256 hex fits in full at this width.
constexpr int kHashPixels = 640;

const char *const kNone = "—";

QString noneIfEmpty(const QString &text)
{
    return text.isEmpty() ? QString::fromUtf8(kNone) : text;
}

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
    return isPayloadBusy() || panes::isFeeding(m_headersText) || panes::isFeeding(m_stackTrace)
        || m_historyTab->isTextBusy() || panes::isFeeding(m_keyResult);
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
    addField(grid, 0, 0, tr("Queue"), QStringLiteral("queue"));
    addField(grid, 0, 1, tr("Kind"), QStringLiteral("kind"));
    addField(grid, 0, 2, tr("Status"), QStringLiteral("status"));
    addField(grid, 0, 3, tr("Reason"), QStringLiteral("reason"));
    addField(grid, 1, 0, tr("Error class"), QStringLiteral("errorClass"));
    addField(grid, 1, 1, tr("Error code"), QStringLiteral("errorCode"));
    addField(grid, 1, 2, tr("Attempts"), QStringLiteral("attempts"));
    addField(grid, 1, 3, tr("Failure group"), QStringLiteral("failureGroup"));
    addField(grid, 2, 0, tr("Dead at"), QStringLiteral("deadAt"));
    addField(grid, 2, 1, tr("Age"), QStringLiteral("age"));
    addField(grid, 2, 2, tr("Idempotency key"), QStringLiteral("idempotencyKey"));
    addField(grid, 2, 3, tr("Claimed by"), QStringLiteral("claimedBy"));
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
    m_tabs->addTab(buildHeadersTab(), tr("Headers"));
    m_tabs->addTab(buildLastErrorTab(), tr("Last error"));
    m_historyTab = new CaseHistoryTab(
        m_case, m_showUtc,
        [this](QWidget *parent, const QString &name) { return makeTable(parent, name); }, this);
    m_tabs->addTab(m_historyTab, tr("Retry history"));
    m_tabs->addTab(buildKeyTab(), tr("Idempotency key"));
    m_tabs->addTab(buildReconciliationTab(), tr("Reconciliation"));
    m_tabs->addTab(buildOutboxAuditTab(), tr("Outbox && audit"));
    root->addWidget(m_tabs, 1);

    renderVerdict();
}

QLabel *CaseView::addField(QGridLayout *grid, int row, int column, const QString &label,
                           const QString &key)
{
    auto *name = new QLabel(label, grid->parentWidget());
    name->setStyleSheet(QStringLiteral("color: #555555;"));
    name->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    auto *value = new QLabel(QString::fromUtf8(kNone), grid->parentWidget());
    value->setObjectName(QStringLiteral("field_") + key);
    value->setTextInteractionFlags(Qt::TextSelectableByMouse);
    value->setTextFormat(Qt::PlainText);
    grid->addWidget(name, row, 2 * column);
    grid->addWidget(value, row, 2 * column + 1);
    m_fields.insert(key, value);
    return value;
}

void CaseView::setField(const QString &key, const QString &text, const QString &toolTip,
                        int maxPixels)
{
    QLabel *label = m_fields.value(key);
    if (!label)
        return;
    // A field is one line: the first line, at most kMaxCellChars characters of it (eliding shapes
    // all of the text it gets; invisible controls shown as markers). What is left out, the lines
    // after the first included, is counted in a suffix that is never elided, so "(9,240 more
    // characters)" stays readable; the prefix before it is elided in the middle.
    const QString shown = noneIfEmpty(text);
    const qsizetype lineEnd = shown.indexOf(QLatin1Char('\n'));
    display::BoundedText parts
        = display::boundedParts(lineEnd < 0 ? shown : shown.left(lineEnd), display::kMaxCellChars);
    if (lineEnd >= 0) // the lines after the first are left out too
        parts.suffix = display::moreCharacters(
            display::characterCount(QStringView(shown).sliced(parts.sourceUnits)));
    const QFontMetrics metrics = label->fontMetrics();
    QString elided;
    if (parts.suffix.isEmpty()) {
        elided = metrics.elidedText(parts.shown, Qt::ElideMiddle, maxPixels);
    } else {
        const int room = std::max(maxPixels - metrics.horizontalAdvance(parts.suffix), 0);
        elided = metrics.elidedText(parts.shown, Qt::ElideMiddle, room) + parts.suffix;
    }
    label->setText(elided);
    label->setToolTip(display::plainToolTip(
        !toolTip.isEmpty() ? toolTip : (elided != shown ? shown : QString())));
}

QTableView *CaseView::makeTable(QWidget *parent, const QString &name)
{
    auto *view = new ResultTableView(parent);
    view->setObjectName(name);
    view->setSelectionBehavior(QAbstractItemView::SelectRows);
    view->setSelectionMode(QAbstractItemView::ExtendedSelection);
    view->setEditTriggers(QAbstractItemView::NoEditTriggers);
    view->setAlternatingRowColors(true);
    view->setWordWrap(false);
    view->setTextElideMode(Qt::ElideRight);
    view->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    view->verticalHeader()->setDefaultSectionSize(view->fontMetrics().height() + 8);
    view->verticalHeader()->hide();
    view->horizontalHeader()->setHighlightSections(false);
    view->horizontalHeader()->setSectionsMovable(true);
    view->horizontalHeader()->setStretchLastSection(true);
    view->installEventFilter(this);
    m_tables.append(view);
    return view;
}

QWidget *CaseView::buildHeadersTab()
{
    auto *page = new QWidget(this);
    auto *layout = new QVBoxLayout(page);
    auto *grid = new QGridLayout;
    grid->setHorizontalSpacing(10);
    addField(grid, 0, 0, tr("Entity id"), QStringLiteral("entityId"));
    addField(grid, 0, 1, tr("Event seq"), QStringLiteral("eventSeq"));
    addField(grid, 0, 2, tr("Event at"), QStringLiteral("eventAt"));
    addField(grid, 1, 0, tr("Job"), QStringLiteral("jobRef"));
    addField(grid, 1, 1, tr("Job state"), QStringLiteral("jobState"));
    addField(grid, 1, 2, tr("Job attempt"), QStringLiteral("jobAttempt"));
    addField(grid, 2, 0, tr("Leased by"), QStringLiteral("lockedBy"));
    addField(grid, 2, 1, tr("Lease until"), QStringLiteral("lockedUntil"));
    addField(grid, 2, 2, tr("Deadline"), QStringLiteral("deadlineAt"));
    addField(grid, 3, 0, tr("Run at"), QStringLiteral("runAt"));
    addField(grid, 3, 1, tr("Job created"), QStringLiteral("jobCreatedAt"));
    addField(grid, 3, 2, tr("Source"), QStringLiteral("source"));
    for (int c = 0; c < 3; ++c)
        grid->setColumnStretch(2 * c + 1, 1);
    layout->addLayout(grid);
    layout->addWidget(new QLabel(tr("Headers"), page));
    m_headersText = panes::readOnlyText(page, QStringLiteral("headersText"));
    layout->addWidget(m_headersText, 1);
    return page;
}

QWidget *CaseView::buildLastErrorTab()
{
    auto *page = new QWidget(this);
    auto *layout = new QVBoxLayout(page);
    auto *bar = new QHBoxLayout;
    m_errorSummary = new QLabel(page);
    m_errorSummary->setObjectName(QStringLiteral("errorSummary"));
    m_errorSummary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_errorSummary->setWordWrap(true);
    m_errorSummary->setTextFormat(Qt::PlainText);
    ignoreTextWidth(m_errorSummary);
    auto *copy = new QPushButton(tr("Copy"), page);
    copy->setObjectName(QStringLiteral("copyLastError"));
    copy->setToolTip(tr("Copy the message and the whole stack trace"));
    connect(copy, &QPushButton::clicked, this, &CaseView::copyLastError);
    bar->addWidget(m_errorSummary, 1);
    bar->addWidget(copy);
    layout->addLayout(bar);
    m_longLineNote = panes::note(page, QStringLiteral("longLineNote"));
    m_longLineNote->setText(tr("Lines longer than %1 characters are shown in pieces; Copy copies"
                               " them whole.")
                                .arg(QLocale().toString(display::kMaxLineChars)));
    m_longLineNote->hide();
    layout->addWidget(m_longLineNote);
    m_stackTrace = panes::readOnlyText(page, QStringLiteral("stackTrace"));
    layout->addWidget(m_stackTrace, 1);
    return page;
}

QWidget *CaseView::buildKeyTab()
{
    auto *page = new QWidget(this);
    auto *layout = new QVBoxLayout(page);
    m_keyEmpty = panes::note(page, QStringLiteral("keyEmpty"));
    ignoreTextWidth(m_keyEmpty);
    layout->addWidget(m_keyEmpty);
    m_keyForm = new QWidget(page);
    auto *formLayout = new QVBoxLayout(m_keyForm);
    formLayout->setContentsMargins(0, 0, 0, 0);
    auto *grid = new QGridLayout;
    grid->setHorizontalSpacing(10);
    addField(grid, 0, 0, tr("Scope"), QStringLiteral("key.scope"));
    addField(grid, 0, 1, tr("Key"), QStringLiteral("key.key"));
    addField(grid, 1, 0, tr("State"), QStringLiteral("key.state"));
    addField(grid, 1, 1, tr("Version"), QStringLiteral("key.version"));
    addField(grid, 2, 0, tr("Leased by"), QStringLiteral("key.lockedBy"));
    addField(grid, 2, 1, tr("Lease until"), QStringLiteral("key.lockedUntil"));
    addField(grid, 3, 0, tr("Request hash"), QStringLiteral("key.requestHash"))
        ->setFont(panes::monospace());
    addField(grid, 3, 1, tr("Conflicting hash"), QStringLiteral("key.conflictingHash"))
        ->setFont(panes::monospace());
    addField(grid, 4, 0, tr("Conflicts"), QStringLiteral("key.conflicts"));
    addField(grid, 4, 1, tr("Error"), QStringLiteral("key.error"));
    addField(grid, 5, 0, tr("Created"), QStringLiteral("key.createdAt"));
    addField(grid, 5, 1, tr("Updated"), QStringLiteral("key.updatedAt"));
    addField(grid, 6, 0, tr("Expires"), QStringLiteral("key.expiresAt"));
    grid->setColumnStretch(1, 1);
    grid->setColumnStretch(3, 1);
    formLayout->addLayout(grid);
    // Release a stuck key here too (the same audited, role-checked function as the Keys tab).
    m_releaseKey = new QPushButton(tr("Release stuck key…"), m_keyForm);
    m_releaseKey->setObjectName(QStringLiteral("releaseKey"));
    connect(m_releaseKey, &QPushButton::clicked, this, &CaseView::releaseStuckKey);
    auto *releaseRow = new QHBoxLayout;
    releaseRow->addWidget(m_releaseKey);
    releaseRow->addStretch(1);
    formLayout->addLayout(releaseRow);
    formLayout->addWidget(new QLabel(tr("Stored result"), m_keyForm));
    m_keyResult = panes::readOnlyText(m_keyForm, QStringLiteral("keyResult"));
    formLayout->addWidget(m_keyResult, 1);
    layout->addWidget(m_keyForm, 1);
    m_keyForm->hide();
    m_keyEmpty->setText(tr("Loading…"));
    layout->addStretch(0);
    return page;
}

QWidget *CaseView::buildReconciliationTab()
{
    auto *page = new QWidget(this);
    auto *layout = new QVBoxLayout(page);
    m_mismatchNote = panes::note(page, QStringLiteral("mismatchNote"));
    ignoreTextWidth(m_mismatchNote);
    m_mismatchesTable = makeTable(page, QStringLiteral("mismatchesTable"));
    m_mismatchesTable->setModel(m_case->mismatchesModel());
    layout->addWidget(m_mismatchNote);
    layout->addWidget(m_mismatchesTable, 1);
    return page;
}

QWidget *CaseView::buildOutboxAuditTab()
{
    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->setChildrenCollapsible(false);
    auto *outboxPage = new QWidget(splitter);
    auto *outboxLayout = new QVBoxLayout(outboxPage);
    outboxLayout->setContentsMargins(0, 0, 0, 0);
    m_outboxNote = new QLabel(outboxPage);
    m_outboxNote->setTextFormat(Qt::PlainText);
    m_outboxNote->setObjectName(QStringLiteral("outboxNote"));
    m_outboxTable = makeTable(outboxPage, QStringLiteral("outboxTable"));
    m_outboxTable->setModel(m_case->outboxModel());
    static_cast<ResultTableView *>(m_outboxTable)
        ->setRowKey(QStringLiteral("id")); // live re-reads keep the place
    outboxLayout->addWidget(m_outboxNote);
    outboxLayout->addWidget(m_outboxTable, 1);
    auto *auditPage = new QWidget(splitter);
    auto *auditLayout = new QVBoxLayout(auditPage);
    auditLayout->setContentsMargins(0, 0, 0, 0);
    m_auditNote = new QLabel(auditPage);
    m_auditNote->setTextFormat(Qt::PlainText);
    m_auditNote->setObjectName(QStringLiteral("auditNote"));
    m_auditTable = makeTable(auditPage, QStringLiteral("auditTable"));
    m_auditTable->setModel(m_case->auditModel());
    static_cast<ResultTableView *>(m_auditTable)
        ->setRowKey(QStringLiteral("id")); // live re-reads keep the place
    auditLayout->addWidget(m_auditNote);
    auditLayout->addWidget(m_auditTable, 1);
    splitter->addWidget(outboxPage);
    splitter->addWidget(auditPage);
    return splitter;
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
    renderDetail();
    renderKeyRecord();
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
        renderKeyRecord();
        break;
    case P::Verdict:
        renderVerdict();
        break;
    case P::Mismatches:
    case P::Outbox:
    case P::Audit:
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

    setField(QStringLiteral("queue"), d.queue);
    setField(QStringLiteral("kind"), d.kind);
    setField(QStringLiteral("status"),
             d.resolution.isEmpty() ? d.status : tr("%1 (%2)").arg(d.status, d.resolution));
    setField(QStringLiteral("reason"), d.reason);
    setField(QStringLiteral("errorClass"),
             d.classBecause.isEmpty() ? d.errorClass
                                      : tr("%1 (because: %2)").arg(d.errorClass, d.classBecause),
             d.classBecause.isEmpty()
                 ? QString()
                 : tr("Classed %1 because: %2").arg(d.errorClass, d.classBecause));
    setField(QStringLiteral("errorCode"), d.errorCode);
    renderAttemptsField();
    // By the name the groups list gives it; the hash only in the tooltip.
    setField(QStringLiteral("failureGroup"),
             d.groupName.isEmpty() ? display::shortHash(d.fingerprint) : d.groupName,
             d.groupName.isEmpty() ? d.fingerprint
                                   : tr("%1\nfingerprint %2").arg(d.groupName, d.fingerprint),
             600);
    setField(QStringLiteral("deadAt"), time(d.deadAt), display::time(d.deadAt, !m_showUtc));
    // Dead since '-infinity': an age with no number (docs/domain.md "Times at the ends of the
    // range"); since 'infinity', not dead yet by the server's clock, as any time ahead of it.
    setField(QStringLiteral("age"),
             d.deadAt == display::infinitePast() ? QStringLiteral("\u221E")
                                                 : display::age(d.ageSeconds()),
             tr("By the server's clock"));
    setField(QStringLiteral("idempotencyKey"), d.idempotencyKey);
    setField(QStringLiteral("claimedBy"),
             d.claimedBy.isEmpty() ? QString()
                                   : tr("%1 since %2").arg(d.claimedBy, time(d.claimedAt)));

    // Headers tab.
    setField(QStringLiteral("entityId"), d.entityId);
    setField(QStringLiteral("eventSeq"), d.eventSeq ? QString::number(*d.eventSeq) : QString());
    setField(QStringLiteral("eventAt"), time(d.eventAt));
    setField(QStringLiteral("jobRef"), d.jobRef);
    setField(QStringLiteral("jobState"), d.jobState);
    setField(QStringLiteral("jobAttempt"),
             tr("%1 of %2").arg(QString::number(d.jobAttempt), QString::number(d.maxAttempts)));
    setField(QStringLiteral("lockedBy"), d.lockedBy);
    QString lease = time(d.lockedUntil);
    if (d.lockedUntil.isValid() && d.serverNow.isValid()) {
        lease += d.lockedUntil > d.serverNow ? tr(" (live)") : tr(" (expired)");
    }
    setField(QStringLiteral("lockedUntil"), lease);
    setField(QStringLiteral("deadlineAt"), time(d.deadlineAt));
    setField(QStringLiteral("runAt"), time(d.runAt));
    setField(QStringLiteral("jobCreatedAt"), time(d.jobCreatedAt));
    setField(QStringLiteral("source"), d.source);
    // Lines over 2,000 characters in pieces: a 10 MB header value fed as one line was laid out
    // again after every slice.
    panes::setPlainTextInSlices(
        m_headersText,
        display::inPieces(QString::fromUtf8(PayloadText::indentJson(d.headersText.toUtf8()))));

    // Last error tab: the message and the whole stack, nothing cut.
    QStringList summary;
    for (const QString &part : { d.errorClass, d.errorCode })
        if (!part.isEmpty())
            summary << part;
    // One arg() call: a "%1" inside the error class or reason is shown as it is, never replaced.
    m_errorSummary->setText(tr("%1 — dead-lettered (%2) after %3 attempts, %4")
                                .arg(display::boundedLines(summary.join(QStringLiteral(" · ")), 2),
                                     display::boundedLines(d.reason, 2),
                                     QString::number(d.attempts), time(d.deadAt)));
    QString text = d.lastError.isEmpty() ? tr("(no error message recorded)") : d.lastError;
    text += QStringLiteral("\n\n");
    text += d.stackTrace.isEmpty() ? tr("(no stack trace recorded)") : d.stackTrace;
    // A megabyte-long line is shown in pieces (a text view shapes a whole line at once), a long
    // text goes in in slices (100,000 lines took 800 ms at once); Copy copies the original.
    bool broken = false;
    panes::setPlainTextInSlices(m_stackTrace,
                                display::inPieces(text, display::kMaxLineChars, &broken));
    m_longLineNote->setVisible(broken);

    if (d.entityId.isEmpty())
        m_mismatchNote->setText(tr("This job names no payment (ordering key), so there is nothing"
                                   " to reconcile it with."));
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
    setField(QStringLiteral("attempts"), text);
}

void CaseView::setRoles(const QStringList &redriveRoles)
{
    m_roles = redriveRoles;
    updateReleaseKey();
}

void CaseView::updateReleaseKey()
{
    const auto record = m_case->keyRecord();
    const bool stuck = record && record->stuck;
    const bool permitted = m_roles.contains(QStringLiteral("redrive_oncall"))
        || m_roles.contains(QStringLiteral("redrive_support"));
    m_releaseKey->setVisible(stuck);
    m_releaseKey->setEnabled(stuck && permitted);
    m_releaseKey->setToolTip(permitted ? tr("Mark this stuck key failed so its job can be retried "
                                            "(audited)")
                                       : tr("Needs role redrive_oncall or redrive_support"));
}

void CaseView::releaseStuckKey()
{
    const auto record = m_case->keyRecord();
    if (!record || !record->stuck)
        return;
    const DeadLetterCase::KeyRecord k = *record;
    auto *dialog = new ReasonDialog(
        tr("Release stuck key"),
        tr("Release idempotency key <b>%1</b> in scope <b>%2</b>, held by %3 whose lease "
           "expired. The key becomes <i>failed</i>, so a retry of its job may run the side "
           "effect again: check the provider first (reconciliation, the provider's dashboard).")
            .arg(display::boundedLines(display::revealLookAlikes(k.key), 3, 300).toHtmlEscaped(),
                 display::boundedLines(k.scope, 1, 300).toHtmlEscaped(),
                 display::boundedLines(k.lockedBy, 1, 300).toHtmlEscaped()),
        tr("Release"), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowModality(Qt::WindowModal);
    connect(dialog, &QDialog::accepted, this, [this, dialog, k] {
        runSingleAction(m_session, this, tr("Release stuck key"),
                        OperatorAction::releaseKey(k.scope, k.key, k.version, dialog->reason(),
                                                   dialog->ticket()),
                        [this] { reload(); });
    });
    dialog->show();
}

void CaseView::renderKeyRecord()
{
    if (!m_case->isLoaded(DeadLetterCase::Part::IdempotencyKey))
        return;
    const auto record = m_case->keyRecord();
    if (!record) {
        const auto detail = m_case->detail();
        const QString key = detail ? detail->idempotencyKey : QString();
        // Bounded: a 10 KB kind or a key of 1,100 lines once sized the whole case view.
        m_keyEmpty->setText(
            key.isEmpty()
                ? tr("This job has no idempotency key.")
                : tr("No idempotency-key record for key %1 (scope %2).")
                      .arg(display::boundedLines(key, 3, 300),
                           display::boundedLines(detail ? detail->kind : QString(), 1, 300)));
        m_keyEmpty->show();
        m_keyForm->hide();
        updateReleaseKey();
        return;
    }
    const DeadLetterCase::KeyRecord &k = *record;
    updateReleaseKey();
    m_keyEmpty->setVisible(k.stuck);
    if (k.stuck) {
        m_keyEmpty->setText(tr("Stuck: the key is in processing past its lease. The side effect may"
                               " have happened; check the receiving side before releasing it."));
        m_keyEmpty->setStyleSheet(QStringLiteral("color: #8a5300; font-weight: bold;"));
    }
    m_keyForm->show();
    setField(QStringLiteral("key.scope"), k.scope);
    setField(QStringLiteral("key.key"), k.key);
    setField(QStringLiteral("key.state"), k.stuck ? tr("%1 (stuck)").arg(k.state) : k.state);
    setField(QStringLiteral("key.version"), QString::number(k.version));
    setField(QStringLiteral("key.lockedBy"), k.lockedBy);
    setField(QStringLiteral("key.lockedUntil"), time(k.lockedUntil));
    setField(QStringLiteral("key.requestHash"), k.requestHash, {}, kHashPixels);
    setField(QStringLiteral("key.conflictingHash"), k.conflictingHash, {}, kHashPixels);
    setField(
        QStringLiteral("key.conflicts"),
        k.conflictCount > 0
            ? tr("%1, last at %2").arg(QString::number(k.conflictCount), time(k.lastConflictAt))
            : QStringLiteral("0"));
    setField(QStringLiteral("key.error"), k.errorMessage);
    setField(QStringLiteral("key.createdAt"), time(k.createdAt));
    setField(QStringLiteral("key.updatedAt"), time(k.updatedAt));
    setField(QStringLiteral("key.expiresAt"), time(k.expiresAt));
    panes::setPlainTextInSlices(
        m_keyResult,
        k.resultText.isEmpty()
            ? tr("(no stored result)")
            : display::inPieces(QString::fromUtf8(PayloadText::indentJson(k.resultText.toUtf8()))));
}

void CaseView::renderCounts()
{
    using P = DeadLetterCase::Part;
    const qint64 attempts = m_case->attemptCount();
    const int mismatches = m_case->mismatchesModel()->rowCount();
    const int outbox = m_case->outboxModel()->rowCount();
    const int audit = m_case->auditModel()->rowCount();
    if (m_case->isLoaded(P::Attempts))
        m_tabs->setTabText(HistoryTab, tr("Retry history (%1)").arg(QLocale().toString(attempts)));
    if (m_case->isLoaded(P::Mismatches)) {
        m_tabs->setTabText(ReconciliationTab, tr("Reconciliation (%1)").arg(mismatches));
        const auto detail = m_case->detail();
        if (detail && !detail->entityId.isEmpty())
            m_mismatchNote->setText(
                mismatches == 0
                    ? tr("No reconciliation mismatch for payment %1.")
                          .arg(display::boundedLines(detail->entityId, 1, 300))
                    : tr("Mismatches the reconciliation found for payment %1, newest first.")
                          .arg(display::boundedLines(detail->entityId, 1, 300)));
    }
    if (m_case->isLoaded(P::Outbox) && m_case->isLoaded(P::Audit))
        m_tabs->setTabText(
            AuditTab,
            tr("Outbox && audit (%1 · %2)").arg(QString::number(outbox), QString::number(audit)));
    if (m_case->isLoaded(P::Outbox))
        m_outboxNote->setText(outbox == 0 ? tr("Outbox commands: none.")
                                          : tr("Outbox commands, newest first:"));
    if (m_case->isLoaded(P::Audit))
        m_auditNote->setText(audit == 0
                                 ? tr("Audit entries: none.")
                                 : tr("Audit entries naming this dead letter, newest first:"));
    for (QTableView *table : { m_mismatchesTable, m_outboxTable, m_auditTable }) {
        if (table->model()->rowCount() == 0)
            continue;
        QHeaderView *header = table->horizontalHeader();
        table->resizeColumnsToContents();
        for (int c = 0; c < header->count(); ++c)
            header->resizeSection(c, std::min(header->sectionSize(c) + 12, 320));
    }
}

// --- Copy and keys -----------------------------------------------------------------------------

void CaseView::copyLastError()
{
    const auto detail = m_case->detail();
    if (!detail)
        return;
    const DeadLetterCase::Detail &d = *detail;
    QString text = tr("Dead letter #%1 (%2, queue %3), dead at %4\nError class: %5\nError code: %6"
                      "\nReason: %7\nAttempts: %8\n\n")
                       .arg(QString::number(d.id), d.kind, d.queue, time(d.deadAt), d.errorClass,
                            d.errorCode, d.reason, QString::number(d.attempts));
    text += d.lastError + QStringLiteral("\n\n") + d.stackTrace;
    QGuiApplication::clipboard()->setText(text);
}

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
