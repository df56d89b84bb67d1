// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/compensation_widget.h"

#include "models/db/db_error.h"
#include "models/display_format.h"
#include "views/compensation_decision_dialog.h"
#include "views/compensation_request_dialog.h"
#include "views/error_presenter.h"
#include "views/result_table_view.h"
#include "views/text_panes.h"

#include <QComboBox>
#include <QHBoxLayout>
#include <QItemSelectionModel>
#include <QLabel>
#include <QPushButton>
#include <QScrollArea>
#include <QSplitter>
#include <QVBoxLayout>

namespace redrive {

namespace {

constexpr int kTime = ResultTableView::kTimeWidth;
const QString kApproverRole = QStringLiteral("redrive_approver");

} // namespace

CompensationWidget::CompensationWidget(db::DatabaseSession *session, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_model(new CompensationModel(session, this))
{
    m_osUser = qEnvironmentVariable("USER", qEnvironmentVariable("USERNAME"));

    m_show = new QComboBox(this);
    m_show->setObjectName(QStringLiteral("showFilter"));
    m_show->addItem(tr("All requests"), false);
    m_show->addItem(tr("Pending approval only"), true);
    connect(m_show, &QComboBox::activated, this, [this] {
        m_model->setStatuses(m_show->currentData().toBool()
                                 ? QStringList { QStringLiteral("pending_approval") }
                                 : QStringList());
        reload();
    });
    m_approve = new QPushButton(tr("Approve…"), this);
    m_approve->setObjectName(QStringLiteral("approve"));
    m_reject = new QPushButton(tr("Reject…"), this);
    m_reject->setObjectName(QStringLiteral("reject"));
    connect(m_approve, &QPushButton::clicked, this, [this] {
        if (auto *dialog = openDecisionDialog(true))
            dialog->open();
    });
    connect(m_reject, &QPushButton::clicked, this, [this] {
        if (auto *dialog = openDecisionDialog(false))
            dialog->open();
    });
    auto *refresh = new QPushButton(tr("Refresh"), this);
    refresh->setToolTip(tr("Load the requests again"));
    connect(refresh, &QPushButton::clicked, this, &CompensationWidget::reload);
    m_roleNote = new QLabel(this);
    m_roleNote->setTextFormat(Qt::PlainText);
    m_activity = new QLabel(this);
    m_activity->setTextFormat(Qt::PlainText);

    auto *bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Show:"), this));
    bar->addWidget(m_show);
    bar->addSpacing(12);
    bar->addWidget(m_approve);
    bar->addWidget(m_reject);
    bar->addWidget(refresh);
    bar->addSpacing(12);
    bar->addWidget(m_roleNote);
    bar->addStretch(1);
    bar->addWidget(m_activity);

    m_view = new ResultTableView(this);
    m_view->setObjectName(QStringLiteral("compensations"));
    m_view->setModel(m_model);
    m_view->setRowKey(QStringLiteral("id")); // live re-reads keep the place
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->setColumnWidths({ 130, kTime, 120, 130, 70, 140, 110, 300, 110, kTime });
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this, [this] {
        updateButtons();
        showDetail();
    });
    connect(m_view, &QAbstractItemView::doubleClicked, this, [this] {
        if (canApprove())
            m_approve->click();
    });

    m_title = panes::title(this);
    m_detail = new QLabel(this);
    m_detail->setObjectName(QStringLiteral("requestDetail"));
    m_detail->setTextFormat(Qt::PlainText);
    m_detail->setWordWrap(true);
    panes::ignoreTextWidth(m_detail);
    m_detail->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_detail->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_detail->setMargin(4);

    auto *list = new QWidget(this);
    auto *listLayout = new QVBoxLayout(list);
    listLayout->setContentsMargins(0, 4, 0, 0);
    listLayout->addWidget(m_title);
    listLayout->addWidget(m_view, 1);
    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->setChildrenCollapsible(false);
    splitter->addWidget(list);
    // The detail scrolls: a long reason never pushes the provider reference or the error out
    // of reach.
    auto *detailScroll = new QScrollArea(this);
    detailScroll->setObjectName(QStringLiteral("requestDetailScroll"));
    detailScroll->setWidget(m_detail);
    detailScroll->setWidgetResizable(true);
    detailScroll->setFrameShape(QFrame::NoFrame);
    detailScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    splitter->addWidget(detailScroll);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 1);
    splitter->setSizes({ 420, 160 });

    // The policy in force, from the server: who decides is not a secret the UI keeps.
    m_policy = new QLabel(this);
    m_policy->setObjectName(QStringLiteral("approvalPolicy"));
    m_policy->setTextFormat(Qt::PlainText);
    m_policy->setWordWrap(true);
    connect(m_model, &CompensationModel::policyLoaded, this, [this](qint64 cents) {
        m_policy->setText(
            tr("Approval policy: a request of %1 or more in minor units (%2 in a "
               "two-decimal currency such as USD or EUR) waits for a second "
               "person. Only an administrator changes it, and every change is in "
               "the audit log.")
                .arg(cents)
                .arg(display::moneyAmount(cents, QStringLiteral("USD")).value_or(QString())));
    });

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(m_policy);
    layout->addWidget(splitter, 1);

    connect(m_model, &ResultTableModel::loadingChanged, this, [this](bool loading) {
        m_activity->setText(loading ? tr("Loading…") : QString());
        Q_EMIT loadingChanged(loading);
    });
    connect(m_model, &ResultTableModel::loaded, this, [this] {
        if (m_selectAfterLoad > 0) {
            const int row = m_model->rowOfRequest(m_selectAfterLoad);
            m_selectAfterLoad = 0;
            if (row >= 0)
                selectRequest(row);
        }
        updateTitle();
        updateButtons();
        showDetail();
    });
    connect(m_model, &ResultTableModel::failed, this,
            [this](const db::DbError &e) { reportError(e, tr("Loading compensation requests")); });
    setRoles(QString(), QStringList());
    updateTitle();
    showDetail();
}

bool CompensationWidget::isLoading() const
{
    return m_model->isLoading();
}

void CompensationWidget::reload()
{
    const CompensationRequest current = currentRequest();
    if (current.isValid())
        m_selectAfterLoad = current.id; // keep the operator's selection across the reload
    m_model->reload();
    m_model->loadPolicy();
}

void CompensationWidget::setShowUtc(bool utc)
{
    m_model->setShowUtc(utc);
    showDetail();
}

void CompensationWidget::setRoles(const QString &loginRole, const QStringList &redriveRoles)
{
    m_loginRole = loginRole;
    m_roles = redriveRoles;
    if (loginRole.isEmpty())
        m_roleNote->setText(tr("Roles not known yet"));
    else if (redriveRoles.contains(kApproverRole))
        m_roleNote->setText(
            tr("Signed in as %1: you may decide requests others made").arg(loginRole));
    else
        m_roleNote->setText(
            tr("Signed in as %1: viewing only (deciding needs redrive_approver)").arg(loginRole));
    updateButtons();
}

void CompensationWidget::setPendingOnly(bool pendingOnly)
{
    m_show->setCurrentIndex(pendingOnly ? 1 : 0);
    m_model->setStatuses(pendingOnly ? QStringList { QStringLiteral("pending_approval") }
                                     : QStringList());
    reload();
}

void CompensationWidget::showRequest(qint64 id)
{
    m_show->setCurrentIndex(0);
    m_model->setStatuses({});
    m_selectAfterLoad = id;
    m_model->reload();
}

void CompensationWidget::selectRequest(int row)
{
    m_view->selectRow(row);
    m_view->setCurrentIndex(m_model->index(row, 0));
}

CompensationRequest CompensationWidget::currentRequest() const
{
    const QModelIndex current = m_view->selectionModel()->currentIndex();
    return current.isValid() ? m_model->requestAt(current.row()) : CompensationRequest();
}

QString CompensationWidget::decideBlockedReason() const
{
    if (!m_roles.contains(kApproverRole))
        return tr("needs role redrive_approver");
    const CompensationRequest r = currentRequest();
    if (!r.isValid())
        return tr("select a compensation request first");
    if (r.requestedBy == m_loginRole)
        return tr("you requested this; a different approver must decide");
    if (!r.isPendingApproval())
        return tr("only a request pending approval can be decided; this one is %1")
            .arg(QString(r.status).replace(QLatin1Char('_'), QLatin1Char(' ')));
    return {};
}

bool CompensationWidget::canApprove() const
{
    return m_approve->isEnabled();
}

bool CompensationWidget::canReject() const
{
    return m_reject->isEnabled();
}

void CompensationWidget::updateButtons()
{
    const QString why = decideBlockedReason();
    const bool open = !m_dialog.isNull();
    m_approve->setEnabled(why.isEmpty() && !open);
    m_reject->setEnabled(why.isEmpty() && !open);
    m_approve->setToolTip(why.isEmpty() ? tr("Approve the selected request: the worker then "
                                             "executes it through the outbox")
                                        : why);
    m_reject->setToolTip(why.isEmpty() ? tr("Reject the selected request: its target opens "
                                            "again")
                                       : why);
}

CompensationDecisionDialog *CompensationWidget::openDecisionDialog(bool approve)
{
    if (!decideBlockedReason().isEmpty() || m_dialog)
        return nullptr;
    auto *dialog
        = new CompensationDecisionDialog(m_session, currentRequest(),
                                         approve ? CompensationDecisionDialog::Decision::Approve
                                                 : CompensationDecisionDialog::Decision::Reject,
                                         m_osUser, this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    m_dialog = dialog;
    connect(dialog, &CompensationDecisionDialog::decided, this,
            [this](qint64 requestId, bool approved, const QJsonObject &outcome) {
                m_selectAfterLoad = requestId;
                m_model->reload();
                Q_EMIT compensationDecided(requestId, approved, outcome);
            });
    connect(dialog, &QDialog::finished, this, [this] {
        m_dialog = nullptr;
        updateButtons();
    });
    updateButtons();
    return dialog;
}

void CompensationWidget::showDetail()
{
    const CompensationRequest r = currentRequest();
    if (!r.isValid()) {
        m_detail->setText(tr("Select a request to see its details. Requests at or above the "
                             "approval threshold wait for a second person."));
        return;
    }
    const bool utc = m_model->showUtc();
    // Every value from the database bounded (docs/security.md#text-from-the-database-is-plain-
    // text): a reference on one line (a line break in it shown as "⏎"), a reason on a few.
    auto one = [](const QString &value) {
        return display::oneLine(value);
    };
    auto few = [](const QString &value) {
        return display::boundedLines(value, display::kMaxLabelLines);
    };
    QStringList lines;
    lines << tr("Request %1: %2 %3 of payment %4 for %5")
                 .arg(QString::number(r.id), one(r.kind), display::money(r.amountMinor, r.currency),
                      one(r.paymentRef), one(r.targetText()));
    lines << tr("Requested by %1 at %2 · status %3%4")
                 .arg(one(r.requestedBy), display::time(r.requestedAt, utc),
                      QString(r.status).replace(QLatin1Char('_'), QLatin1Char(' ')),
                      r.requiresApproval ? tr(" · at or above the approval threshold: a second "
                                              "person decides")
                                         : tr(" · below the approval threshold"));
    lines << tr("Reason: %1").arg(few(r.reason));
    if (!r.ticket.isEmpty())
        lines << tr("Ticket: %1").arg(one(r.ticket));
    if (!r.decidedBy.isEmpty())
        lines << tr("%1 by %2 at %3: %4")
                     .arg(r.decision == QLatin1String("approved") ? tr("Approved") : tr("Rejected"),
                          one(r.decidedBy), display::time(r.decidedAt, utc), few(r.decisionReason));
    if (!r.providerRef.isEmpty())
        lines << tr("Provider reference: %1").arg(one(r.providerRef));
    if (!r.errorMessage.isEmpty())
        lines << tr("Error: %1").arg(few(r.errorMessage));
    const QString why = decideBlockedReason();
    if (r.isPendingApproval() && !why.isEmpty())
        lines << tr("You cannot decide it: %1.").arg(why);
    m_detail->setText(lines.join(QLatin1Char('\n')));
}

QString CompensationWidget::detailText() const
{
    return m_detail->text();
}

void CompensationWidget::updateTitle()
{
    int pending = 0;
    for (int row = 0; row < m_model->rowCount(); ++row) {
        if (m_model->index(row, 0).data(CompensationModel::StatusRole).toString()
            == QLatin1String("pending_approval"))
            ++pending;
    }
    m_title->setText(tr("Compensation requests: %1 shown, %2 pending approval (listed first)%3")
                         .arg(m_model->rowCount())
                         .arg(pending)
                         .arg(m_model->reachedLimit() ? tr("; more exist") : QString()));
}

void CompensationWidget::reportError(const db::DbError &error, const QString &what)
{
    m_activity->setText(tr("%1 failed").arg(what));
    ErrorPresenter::report(this, error, what);
}

} // namespace redrive
