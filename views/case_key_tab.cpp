// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/case_key_tab.h"

#include "models/dead_letter_case.h"
#include "models/display_format.h"
#include "models/operator_action.h"
#include "models/payload_text.h"
#include "views/reason_dialog.h"
#include "views/single_action.h"
#include "views/text_panes.h"

#include <QGridLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace redrive {

namespace {

/// SHA-256 hex fits in full at this width.
constexpr int kHashPixels = 640;

} // namespace

CaseKeyTab::CaseKeyTab(db::DatabaseSession *session, DeadLetterCase *deadLetterCase, bool showUtc,
                       QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_case(deadLetterCase)
    , m_showUtc(showUtc)
{
    auto *layout = new QVBoxLayout(this);
    m_note = panes::note(this, QStringLiteral("keyEmpty"));
    panes::ignoreTextWidth(m_note);
    layout->addWidget(m_note);
    m_form = new QWidget(this);
    auto *formLayout = new QVBoxLayout(m_form);
    formLayout->setContentsMargins(0, 0, 0, 0);
    auto *grid = new QGridLayout;
    grid->setHorizontalSpacing(10);
    m_fields.add(grid, 0, 0, tr("Scope"), QStringLiteral("key.scope"));
    m_fields.add(grid, 0, 1, tr("Key"), QStringLiteral("key.key"));
    m_fields.add(grid, 1, 0, tr("State"), QStringLiteral("key.state"));
    m_fields.add(grid, 1, 1, tr("Version"), QStringLiteral("key.version"));
    m_fields.add(grid, 2, 0, tr("Leased by"), QStringLiteral("key.lockedBy"));
    m_fields.add(grid, 2, 1, tr("Lease until"), QStringLiteral("key.lockedUntil"));
    m_fields.add(grid, 3, 0, tr("Request hash"), QStringLiteral("key.requestHash"))
        ->setFont(panes::monospace());
    m_fields.add(grid, 3, 1, tr("Conflicting hash"), QStringLiteral("key.conflictingHash"))
        ->setFont(panes::monospace());
    m_fields.add(grid, 4, 0, tr("Conflicts"), QStringLiteral("key.conflicts"));
    m_fields.add(grid, 4, 1, tr("Error"), QStringLiteral("key.error"));
    m_fields.add(grid, 5, 0, tr("Created"), QStringLiteral("key.createdAt"));
    m_fields.add(grid, 5, 1, tr("Updated"), QStringLiteral("key.updatedAt"));
    m_fields.add(grid, 6, 0, tr("Expires"), QStringLiteral("key.expiresAt"));
    grid->setColumnStretch(1, 1);
    grid->setColumnStretch(3, 1);
    formLayout->addLayout(grid);
    m_release = new QPushButton(tr("Release stuck key…"), m_form);
    m_release->setObjectName(QStringLiteral("releaseKey"));
    connect(m_release, &QPushButton::clicked, this, &CaseKeyTab::releaseStuckKey);
    auto *releaseRow = new QHBoxLayout;
    releaseRow->addWidget(m_release);
    releaseRow->addStretch(1);
    formLayout->addLayout(releaseRow);
    formLayout->addWidget(new QLabel(tr("Stored result"), m_form));
    m_result = panes::readOnlyText(m_form, QStringLiteral("keyResult"));
    formLayout->addWidget(m_result, 1);
    layout->addWidget(m_form, 1);
    m_form->hide();
    m_note->setText(tr("Loading…"));
    layout->addStretch(0);
}

QString CaseKeyTab::time(const QDateTime &utc) const
{
    return display::time(utc, m_showUtc);
}

bool CaseKeyTab::isTextBusy() const
{
    return panes::isFeeding(m_result);
}

void CaseKeyTab::setShowUtc(bool utc)
{
    m_showUtc = utc;
    showRecord();
}

void CaseKeyTab::setRoles(const QStringList &redriveRoles)
{
    m_roles = redriveRoles;
    updateReleaseButton();
}

void CaseKeyTab::updateReleaseButton()
{
    const auto record = m_case->keyRecord();
    const bool stuck = record && record->stuck;
    const bool permitted = m_roles.contains(QStringLiteral("redrive_oncall"))
        || m_roles.contains(QStringLiteral("redrive_support"));
    m_release->setVisible(stuck);
    m_release->setEnabled(stuck && permitted);
    m_release->setToolTip(permitted ? tr("Mark this stuck key failed so its job can be retried "
                                         "(audited)")
                                    : tr("Needs role redrive_oncall or redrive_support"));
}

void CaseKeyTab::releaseStuckKey()
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
                        [this] { emit released(); });
    });
    dialog->show();
}

void CaseKeyTab::showRecord()
{
    if (!m_case->isLoaded(DeadLetterCase::Part::IdempotencyKey))
        return;
    const auto record = m_case->keyRecord();
    updateReleaseButton();
    if (!record) {
        const auto detail = m_case->detail();
        const QString key = detail ? detail->idempotencyKey : QString();
        // Bounded: a 10 KB kind or a key of 1,100 lines once sized the whole case view.
        m_note->setText(key.isEmpty() ? tr("This job has no idempotency key.")
                                      : tr("No idempotency-key record for key %1 (scope %2).")
                                            .arg(display::boundedLines(key, 3, 300),
                                                 display::boundedLines(
                                                     detail ? detail->kind : QString(), 1, 300)));
        m_note->show();
        m_form->hide();
        return;
    }
    const DeadLetterCase::KeyRecord &k = *record;
    m_note->setVisible(k.stuck);
    if (k.stuck) {
        m_note->setText(tr("Stuck: the key is in processing past its lease. The side effect may"
                           " have happened; check the receiving side before releasing it."));
        m_note->setStyleSheet(QStringLiteral("color: #8a5300; font-weight: bold;"));
    }
    m_form->show();
    m_fields.set(QStringLiteral("key.scope"), k.scope);
    m_fields.set(QStringLiteral("key.key"), k.key);
    m_fields.set(QStringLiteral("key.state"), k.stuck ? tr("%1 (stuck)").arg(k.state) : k.state);
    m_fields.set(QStringLiteral("key.version"), QString::number(k.version));
    m_fields.set(QStringLiteral("key.lockedBy"), k.lockedBy);
    m_fields.set(QStringLiteral("key.lockedUntil"), time(k.lockedUntil));
    m_fields.set(QStringLiteral("key.requestHash"), k.requestHash, {}, kHashPixels);
    m_fields.set(QStringLiteral("key.conflictingHash"), k.conflictingHash, {}, kHashPixels);
    m_fields.set(
        QStringLiteral("key.conflicts"),
        k.conflictCount > 0
            ? tr("%1, last at %2").arg(QString::number(k.conflictCount), time(k.lastConflictAt))
            : QStringLiteral("0"));
    m_fields.set(QStringLiteral("key.error"), k.errorMessage);
    m_fields.set(QStringLiteral("key.createdAt"), time(k.createdAt));
    m_fields.set(QStringLiteral("key.updatedAt"), time(k.updatedAt));
    m_fields.set(QStringLiteral("key.expiresAt"), time(k.expiresAt));
    panes::setPlainTextInSlices(
        m_result,
        k.resultText.isEmpty()
            ? tr("(no stored result)")
            : display::inPieces(QString::fromUtf8(PayloadText::indentJson(k.resultText.toUtf8()))));
}

} // namespace redrive
