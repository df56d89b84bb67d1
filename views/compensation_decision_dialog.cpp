// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/compensation_decision_dialog.h"

#include "models/console_reads.h"
#include "models/db/database_session.h"
#include "models/db/db_error.h"
#include "models/dead_letter_case.h"
#include "models/display_format.h"
#include "models/logging.h"
#include "models/mismatch_model.h"
#include "models/operator_action.h"
#include "views/compensation_request_dialog.h"
#include "views/error_presenter.h"
#include "views/result_table_view.h"
#include "views/text_panes.h"

#include <QDialogButtonBox>
#include <QHeaderView>
#include <QJsonDocument>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QResizeEvent>
#include <QScrollArea>
#include <QTableView>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>

namespace redrive {

namespace {

// The server's rule (redrive.require_reason): at least three characters that are not blank.
constexpr int kMinReason = 3;

QTableView *historyTable(QAbstractItemModel *model, const QString &name, QWidget *parent)
{
    auto *view = new ResultTableView(parent);
    view->setObjectName(name);
    view->setModel(model);
    view->setMinimumHeight(110);
    return view;
}

} // namespace

CompensationDecisionDialog::CompensationDecisionDialog(db::DatabaseSession *session,
                                                       const CompensationRequest &request,
                                                       Decision decision, const QString &osUser,
                                                       QWidget *parent)
    : QDialog(parent)
    , m_session(session)
    , m_request(request)
    , m_decision(decision)
    , m_osUser(osUser)
{
    const bool approve = decision == Decision::Approve;
    setWindowTitle(approve ? tr("Approve compensation %1").arg(request.id)
                           : tr("Reject compensation %1").arg(request.id));
    setObjectName(QStringLiteral("compensationDecisionDialog"));

    using F = ResultColumn::Format;
    m_attempts
        = new ResultTableModel(nullptr,
                               ResultColumnSet({
                                   { QStringLiteral("attempt_no"), tr("Attempt"), F::Integer },
                                   { QStringLiteral("started_at"), tr("Started"), F::Time },
                                   { QStringLiteral("outcome"), tr("Outcome"), F::Text },
                                   { QStringLiteral("error_class"), tr("Error class"), F::Text },
                                   { QStringLiteral("error_code"), tr("Code"), F::Text },
                                   { QStringLiteral("message"), tr("Message"), F::OneLine },
                               }),
                               this);
    // A dead letter's mismatches come from DeadLetterMismatches; a mismatch target is the
    // context row itself, whose mismatch columns carry an "m_" prefix.
    const QString p
        = request.targetType == QLatin1String("mismatch") ? QStringLiteral("m_") : QString();
    m_mismatches = new ResultTableModel(
        nullptr,
        ResultColumnSet({
            { p + QStringLiteral("kind"), tr("Kind"), F::Text },
            { QStringLiteral("payment_ref"), tr("Payment"), F::Text },
            { p + QStringLiteral("internal_amount_minor"), tr("Our amount"), F::Integer,
              ResultColumn::moneyIn(p + QStringLiteral("internal_currency")) },
            { p + QStringLiteral("internal_currency"), tr("Our currency"), F::Text },
            { p + QStringLiteral("internal_status"), tr("Our status"), F::Text },
            { p + QStringLiteral("external_amount_minor"), tr("Provider amount"), F::Integer,
              ResultColumn::moneyIn(p + QStringLiteral("external_currency")) },
            { p + QStringLiteral("external_currency"), tr("Provider currency"), F::Text },
            { p + QStringLiteral("external_status"), tr("Provider status"), F::Text },
            { p + QStringLiteral("status"), tr("Status"), F::Text },
            { p + QStringLiteral("detected_at"), tr("Detected"), F::Time },
        }),
        this);

    m_first = panes::title(this);
    m_first->setObjectName(QStringLiteral("target"));
    m_first->setWordWrap(true);
    m_first->setTextInteractionFlags(Qt::TextSelectableByMouse);
    panes::ignoreTextWidth(m_first);
    m_threshold = new QLabel(this);
    m_threshold->setObjectName(QStringLiteral("approval"));
    m_threshold->setTextFormat(Qt::PlainText);
    m_threshold->setWordWrap(true);
    panes::ignoreTextWidth(m_threshold);
    m_others = new QLabel(this);
    m_others->setObjectName(QStringLiteral("otherCompensations"));
    m_others->setTextFormat(Qt::PlainText);
    m_others->setWordWrap(true);
    m_others->setTextInteractionFlags(Qt::TextSelectableByMouse);
    panes::ignoreTextWidth(m_others);
    m_title = panes::title(this);
    m_title->setText(approve ? tr("Approve compensation request %1?").arg(request.id)
                             : tr("Reject compensation request %1?").arg(request.id));
    m_amount = new QLabel(this);
    m_amount->setObjectName(QStringLiteral("amount"));
    m_amount->setTextFormat(Qt::PlainText);
    panes::ignoreTextWidth(m_amount);
    QFont big = m_amount->font();
    big.setBold(true);
    big.setPointSizeF(big.pointSizeF() * 1.5);
    m_amount->setFont(big);
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("summary"));
    m_summary->setTextFormat(Qt::PlainText);
    m_summary->setWordWrap(true);
    panes::ignoreTextWidth(m_summary);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);

    m_historyTitle = panes::title(this);
    m_attemptsView = historyTable(m_attempts, QStringLiteral("attempts"), this);
    m_attemptsView->horizontalHeader()->resizeSection(1, 190);
    m_mismatchesTitle = panes::title(this);
    m_mismatchesTitle->setObjectName(QStringLiteral("mismatchesTitle"));
    m_mismatchesView = historyTable(m_mismatches, QStringLiteral("mismatches"), this);
    const bool deadLetter = request.targetType == QLatin1String("dead_letter");
    m_historyTitle->setVisible(deadLetter);
    m_attemptsView->setVisible(deadLetter);
    panes::ignoreTextWidth(m_mismatchesTitle);
    m_mismatchesTitle->setText(deadLetter ? tr("Reconciliation mismatches for payment %1")
                                                .arg(display::oneLine(request.paymentRef))
                                          : tr("The mismatch (ours against the provider's)"));
    m_historyTitle->setText(tr("Attempts of dead letter %1").arg(request.targetId));

    auto *reasonLabel = panes::title(this);
    reasonLabel->setText(approve ? tr("Why do you approve it? (required; goes into the audit log)")
                                 : tr("Why do you reject it? (required; goes into the audit log)"));
    m_reason = new QPlainTextEdit(this);
    m_reason->setObjectName(QStringLiteral("decisionReason"));
    m_reason->setPlaceholderText(tr("e.g. checked the provider dashboard: the customer was "
                                    "charged twice"));
    m_reason->setMaximumHeight(80);
    m_reason->setTabChangesFocus(true);
    connect(m_reason, &QPlainTextEdit::textChanged, this,
            &CompensationDecisionDialog::updateButtons);

    m_message = new QLabel(this);
    m_message->setObjectName(QStringLiteral("message"));
    m_message->setTextFormat(Qt::PlainText);
    m_message->setWordWrap(true);
    m_message->setTextInteractionFlags(Qt::TextSelectableByMouse);
    panes::ignoreTextWidth(m_message);

    m_buttons = new QDialogButtonBox(this);
    m_decide = m_buttons->addButton(approve ? tr("Approve") : tr("Reject"),
                                    QDialogButtonBox::AcceptRole);
    m_decide->setObjectName(QStringLiteral("decide"));
    m_decide->setDefault(false);
    m_decide->setAutoDefault(false);
    m_close = m_buttons->addButton(QDialogButtonBox::Cancel);
    connect(m_decide, &QPushButton::clicked, this, &CompensationDecisionDialog::decide);
    connect(m_close, &QPushButton::clicked, this, [this] { m_finished ? accept() : reject(); });

    // What the request is, in a scroll area: however tall the values make it, nothing below it
    // is pushed out of the dialog and none of it is cut off.
    m_requestBox = new QWidget;
    auto *requestLayout = new QVBoxLayout(m_requestBox);
    requestLayout->setContentsMargins(0, 0, 0, 0);
    requestLayout->addWidget(m_first);
    requestLayout->addWidget(m_title);
    requestLayout->addWidget(m_amount);
    requestLayout->addWidget(m_summary);
    requestLayout->addWidget(m_threshold);
    requestLayout->addWidget(m_others);
    requestLayout->addStretch();
    m_requestScroll = new QScrollArea(this);
    m_requestScroll->setObjectName(QStringLiteral("requestScroll"));
    m_requestScroll->setWidget(m_requestBox);
    m_requestScroll->setWidgetResizable(true);
    m_requestScroll->setFrameShape(QFrame::NoFrame);
    m_requestScroll->setHorizontalScrollBarPolicy(Qt::ScrollBarAlwaysOff);
    m_requestBox->installEventFilter(this);

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_requestScroll, 3);
    layout->addSpacing(6);
    layout->addWidget(m_historyTitle);
    layout->addWidget(m_attemptsView, 2);
    layout->addWidget(m_mismatchesTitle);
    layout->addWidget(m_mismatchesView, 1);
    layout->addSpacing(6);
    layout->addWidget(reasonLabel);
    layout->addWidget(m_reason);
    layout->addWidget(m_message);
    layout->addWidget(m_buttons);
    resize(900, 680);
    // Never larger than the screen, whatever the data (docs/security.md#text-from-the-database-
    // is-plain-text).
    panes::restoreGeometryOnScreen(this, {});

    showRequest();
    updateButtons();
    loadContext();
}

void CompensationDecisionDialog::resizeEvent(QResizeEvent *event)
{
    QDialog::resizeEvent(event);
    fitRequest();
}

bool CompensationDecisionDialog::eventFilter(QObject *watched, QEvent *event)
{
    // A label's text changed (the context arrived): fit once the box has laid it out.
    if (watched == m_requestBox && event->type() == QEvent::LayoutRequest)
        QTimer::singleShot(0, this, &CompensationDecisionDialog::fitRequest);
    return QDialog::eventFilter(watched, event);
}

void CompensationDecisionDialog::fitRequest()
{
    const int width = m_requestScroll->viewport()->width();
    const int content = m_requestBox->hasHeightForWidth() ? m_requestBox->heightForWidth(width)
                                                          : m_requestBox->sizeHint().height();
    // At least 8 lines of it (or all, when shorter), at most all: the layout shares what is
    // left with the tables by their stretch.
    const int least = std::min(content, fontMetrics().lineSpacing() * 8);
    if (m_requestScroll->minimumHeight() != least)
        m_requestScroll->setMinimumHeight(least);
    if (m_requestScroll->maximumHeight() != content)
        m_requestScroll->setMaximumHeight(content);
}

QString CompensationDecisionDialog::reason() const
{
    return m_reason->toPlainText();
}

void CompensationDecisionDialog::setReason(const QString &reason)
{
    m_reason->setPlainText(reason);
}

QString CompensationDecisionDialog::messageText() const
{
    return m_message->text();
}

QString CompensationDecisionDialog::targetText() const
{
    return m_first->text();
}

QString CompensationDecisionDialog::approvalText() const
{
    return m_threshold->text();
}

QString CompensationDecisionDialog::otherCompensationsText() const
{
    return m_others->text();
}

QString CompensationDecisionDialog::summaryText() const
{
    return m_amount->text() + QLatin1Char('\n') + m_summary->text();
}

void CompensationDecisionDialog::loadContext()
{
    auto track = [this] {
        ++m_pending;
        return [this] {
            finishRequest();
        };
    };
    auto done = track();
    reads::compensationContext(
        m_session, this, m_request.id, [this, done](const db::DbExpected<db::ResultSet> &rows) {
            done();
            if (!rows) {
                showMessage(tr("The request's details could not be loaded: %1")
                                .arg(ErrorPresenter::inlineText(rows.error())),
                            true);
                Q_EMIT contextLoaded();
                return;
            }
            showContext(rows.value());
            Q_EMIT contextLoaded();
        });
    auto othersDone = track();
    reads::paymentCompensations(
        m_session, this, m_request.paymentRef,
        [this, othersDone](const db::DbExpected<db::ResultSet> &rows) {
            othersDone();
            if (!rows) {
                m_others->setText(tr("Other compensations on this payment could not be loaded: %1")
                                      .arg(ErrorPresenter::inlineText(rows.error())));
                return;
            }
            const QStringList lines
                = CompensationRequestDialog::otherCompensationLines(rows.value(), m_request.id);
            const QString payment = display::oneLine(m_request.paymentRef);
            m_others->setText(lines.isEmpty()
                                  ? tr("Other compensations on payment %1: none").arg(payment)
                                  : tr("Other compensations on payment %1:\n%2")
                                        .arg(payment, lines.join(QLatin1Char('\n'))));
        });
    if (m_request.targetType != QLatin1String("dead_letter"))
        return;
    auto attemptsDone = track();
    reads::attemptHistory(m_session, this, m_request.targetId,
                          [this, attemptsDone](const db::DbExpected<db::ResultSet> &rows) {
                              attemptsDone();
                              if (rows)
                                  m_attempts->setResult(rows.value());
                              m_historyTitle->setText(
                                  rows ? tr("Attempts of dead letter %1: %2")
                                             .arg(m_request.targetId)
                                             .arg(rows->rowCount())
                                       : tr("Attempts of dead letter %1 could not be loaded: %2")
                                             .arg(m_request.targetId)
                                             .arg(rows.error().message()));
                          });
    auto mismatchesDone = track();
    reads::deadLetterMismatches(m_session, this, m_request.targetId,
                                [this, mismatchesDone](const db::DbExpected<db::ResultSet> &rows) {
                                    mismatchesDone();
                                    if (rows)
                                        m_mismatches->setResult(rows.value());
                                    if (rows && rows->rowCount() == 0)
                                        m_mismatchesTitle->setText(
                                            tr("Reconciliation mismatches for payment %1: none")
                                                .arg(display::oneLine(m_request.paymentRef)));
                                });
}

void CompensationDecisionDialog::showContext(const db::ResultSet &rows)
{
    if (rows.rowCount() == 0) {
        showMessage(tr("Compensation request %1 does not exist.").arg(m_request.id), true);
        m_contextStale = true;
        updateButtons();
        return;
    }
    const CompensationRequest fresh = CompensationModel::requestFrom(rows, 0);
    const bool changed = fresh.version != m_request.version || fresh.status != m_request.status;
    m_request = fresh; // the version shown, and sent, is the one just read
    auto text = [&rows](const char *name) {
        return rows.text(0, QLatin1String(name));
    };
    const QString what = m_request.targetType == QLatin1String("dead_letter")
        ? tr("Request %1 for dead letter %2").arg(m_request.id).arg(m_request.targetId)
        : tr("Request %1 for mismatch %2 (%3)")
              .arg(m_request.id)
              .arg(m_request.targetId)
              .arg(display::oneLine(text("m_kind")));
    m_first->setText(CompensationRequestDialog::targetLine(
        what, m_request.paymentRef, text("order_ref"), text("customer"),
        tr("%1 %2").arg(m_request.kind,
                        display::money(m_request.amountMinor, m_request.currency))));
    const qint64 threshold = rows.bigInt(0, QStringLiteral("threshold_minor")).value_or(0);
    const qint64 compensated = rows.bigInt(0, QStringLiteral("compensated_minor")).value_or(0);
    const QString charge = text("charge_ref");
    m_threshold->setText(
        tr("Approval threshold for %1: %2. Open and executed compensations on this payment, this "
           "one included: %3.%4")
            .arg(m_request.currency, display::money(threshold, m_request.currency),
                 display::money(compensated, m_request.currency),
                 charge.isEmpty() ? QString()
                                  : tr(" Refunds provider charge %1.")
                                        .arg(display::oneLine(display::revealLookAlikes(charge)))));
    const int refundable = rows.columnIndex(QStringLiteral("refundable_minor"));
    m_refundableMinor = rows.isNull(0, refundable) ? std::nullopt : rows.bigInt(0, refundable);
    // Every value on one line and bounded; of the last error its first line, of which at most
    // 300 characters are read (a 1 MB error was laid out whole: 18.5 s).
    auto one = [&text](const char *name) {
        return display::oneLine(text(name));
    };
    if (m_request.targetType == QLatin1String("dead_letter")) {
        bool shortened = false;
        const QString error = display::firstLine(
            rows.textPrefix(0, rows.columnIndex(QStringLiteral("dl_last_error")),
                            display::kMaxCellChars * 4),
            &shortened);
        m_targetLine = tr("%1 · %2 · status %3 · %4 attempts · %5 %6: %7")
                           .arg(one("dl_queue"), one("dl_kind"), one("dl_status"),
                                one("dl_attempts"), one("dl_error_class"), one("dl_error_code"),
                                display::revealInvisible(error)
                                    + (shortened ? QStringLiteral(" \u2026") : QString()));
    } else {
        m_targetLine = tr("%1 · status %2 · order %3")
                           .arg(one("m_kind"), one("m_status"), one("m_order_ref"));
        m_mismatches->setResult(rows);
    }
    showRequest();
    if (!m_request.isPendingApproval()) {
        m_contextStale = true;
        showMessage(
            m_request.decidedBy.isEmpty()
                ? tr("This request is %1: there is nothing to decide.").arg(m_request.status)
                : tr("This request is %1 (%2 by %3): there is nothing to decide.")
                      .arg(m_request.status, display::oneLine(m_request.decision),
                           display::oneLine(m_request.decidedBy)),
            true);
    } else if (changed) {
        showMessage(tr("The request changed since the list was loaded; the dialog shows it as it "
                       "is now (version %1).")
                        .arg(m_request.version),
                    false);
    }
    updateButtons();
}

void CompensationDecisionDialog::showRequest()
{
    const CompensationRequest &r = m_request;
    // Every value from the database bounded (docs/security.md#text-from-the-database-is-plain-
    // text): a reference on one line, a reason on a few.
    auto one = [](const QString &value) {
        return display::oneLine(value);
    };
    m_amount->setText(
        tr("%1 %2 of payment %3")
            .arg(display::money(r.amountMinor, r.currency), one(r.kind), one(r.paymentRef)));
    QStringList lines;
    lines
        << tr("Requested by %1 at %2").arg(one(r.requestedBy), display::time(r.requestedAt, false));
    lines << tr("Target: %1%2")
                 .arg(r.targetText(),
                      m_targetLine.isEmpty() ? QString() : QStringLiteral(" — ") + m_targetLine);
    if (m_refundableMinor && *m_refundableMinor < 0)
        lines << tr("The payment no longer covers this amount (%1 over): an approval will be "
                    "refused.")
                     .arg(display::money(-*m_refundableMinor, r.currency));
    else if (m_refundableMinor)
        lines << tr("Still refundable for %1 beyond this request: %2")
                     .arg(one(r.paymentRef), display::money(*m_refundableMinor, r.currency));
    // Ticket and status before the reason: a reason of many lines never pushes them out of sight.
    lines << tr("Ticket: %1").arg(r.ticket.isEmpty() ? QString(QChar(0x2014)) : one(r.ticket));
    lines << tr("Status: %1 · version %2%3")
                 .arg(QString(r.status).replace(QLatin1Char('_'), QLatin1Char(' ')),
                      QString::number(r.version),
                      r.requiresApproval ? tr(" · at or above the approval threshold") : QString());
    lines << tr("Reason given: %1").arg(display::boundedLines(r.reason, display::kMaxLabelLines));
    m_summary->setText(lines.join(QLatin1Char('\n')));
}

void CompensationDecisionDialog::decide()
{
    if (m_finished || m_pending > 0)
        return;
    const QString reason = m_reason->toPlainText().trimmed();
    if (reason.size() < kMinReason) {
        showMessage(tr("Give a reason for the decision (a few words); it goes into the audit "
                       "log."),
                    true);
        m_reason->setFocus();
        return;
    }
    // Made when the operator confirms, kept for a retry: the database returns the first outcome
    // for a repeated id, so a retry after a lost reply cannot decide twice.
    if (m_actionId.isNull())
        m_actionId = QUuid::createUuid();
    const bool approve = m_decision == Decision::Approve;
    const OperatorAction action = OperatorAction::decideCompensation(
        m_actionId, m_request.id, m_request.version, approve, reason, m_osUser);
    ++m_pending;
    updateButtons();
    showMessage(approve ? tr("Approving…") : tr("Rejecting…"), false);
    qCInfo(lcUi) << "deciding compensation request" << m_request.id
                 << (approve ? "approve" : "reject");
    runOperatorAction(
        m_session, this, action, [this, approve](const db::DbExpected<QJsonObject> &outcome) {
            finishRequest();
            if (!outcome) {
                const db::DbError &e = outcome.error();
                // Permission and constraint refusals belong beside the form; anything
                // unexpected also gets the full dialog.
                showMessage(tr("Not %1: %2")
                                .arg(approve ? tr("approved") : tr("rejected"),
                                     ErrorPresenter::inlineText(e)),
                            true);
                if (e.kind() != db::ErrorKind::Permission && e.kind() != db::ErrorKind::Constraint)
                    ErrorPresenter::report(this, e,
                                           tr("Deciding compensation %1").arg(m_request.id));
                updateButtons();
                return;
            }
            m_outcome = *outcome;
            m_finished = true;
            const int applied = m_outcome.value(QStringLiteral("applied")).toInt();
            const bool replayed = m_outcome.value(QStringLiteral("replayed")).toBool();
            const qint64 audit = qint64(m_outcome.value(QStringLiteral("audit_id")).toDouble());
            if (applied > 0) {
                const QString money = display::money(m_request.amountMinor, m_request.currency);
                QString text = approve
                    ? tr("Approved: the worker will execute the %1 of %2 through the outbox "
                         "(audit entry %3).")
                          .arg(m_request.kind, money, QString::number(audit))
                    : tr("Rejected: the %1 of %2 will not happen and the target is open again "
                         "(audit entry %3).")
                          .arg(m_request.kind, money, QString::number(audit));
                if (replayed)
                    text += tr(" This decision had already been made.");
                showMessage(text, false);
            } else {
                showMessage(tr("Not applied: the request changed after it was shown (it is no "
                               "longer version %1 pending approval). Close, reload and look "
                               "again (audit entry %2).")
                                .arg(m_request.version)
                                .arg(audit),
                            true);
            }
            updateButtons();
            Q_EMIT decided(m_request.id, approve, m_outcome);
        });
}

void CompensationDecisionDialog::showMessage(const QString &text, bool error)
{
    m_message->setStyleSheet(
        error ? QStringLiteral("color: %1;").arg(display::colorName(display::Tone::Error))
              : QStringLiteral("color: %1;").arg(display::colorName(display::Tone::Ok)));
    // Messages repeat the server's words: bounded, invisible controls shown as markers.
    m_message->setText(display::boundedLines(text, display::kMaxLabelLines));
}

void CompensationDecisionDialog::finishRequest()
{
    if (m_pending > 0)
        --m_pending;
    updateButtons();
}

void CompensationDecisionDialog::updateButtons()
{
    const bool ready = !m_finished && !m_contextStale && m_pending == 0;
    m_decide->setEnabled(ready && m_reason->toPlainText().trimmed().size() >= kMinReason);
    m_decide->setToolTip(m_decide->isEnabled() ? QString()
                             : m_finished      ? tr("Already decided")
                             : m_contextStale  ? tr("This request cannot be decided now")
                             : m_pending > 0   ? tr("Waiting for the server")
                                               : tr("Give a reason first"));
    m_decide->setVisible(!m_finished);
    m_reason->setReadOnly(m_finished);
    m_close->setText(m_finished ? tr("Close") : tr("Cancel"));
}

} // namespace redrive
