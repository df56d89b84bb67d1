// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/action_confirmation_dialog.h"

#include "models/action_preview_model.h"
#include "models/display_format.h"
#include "views/result_table_view.h"
#include "views/text_panes.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QHeaderView>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QTableView>
#include <QVBoxLayout>

namespace redrive {

namespace {

QString summarize(const QMap<QString, int> &counts, int limit)
{
    QStringList parts;
    for (auto it = counts.cbegin(); it != counts.cend() && parts.size() < limit; ++it)
        // One arg() call: a queue named "pq%1%2%3" is shown as it is, never rewritten.
        parts << QStringLiteral("%1 (%2)").arg(
            it.key().isEmpty() ? QStringLiteral("—") : display::boundedLines(it.key(), 1, 200),
            QLocale().toString(it.value()));
    if (counts.size() > limit)
        parts << ActionConfirmationDialog::tr("and %n more", nullptr, int(counts.size() - limit));
    return parts.join(QStringLiteral(", "));
}

} // namespace

ActionConfirmationDialog::ActionConfirmationDialog(Kind kind, const QString &scope, QWidget *parent)
    : QDialog(parent)
    , m_kind(kind)
{
    setWindowTitle(tr("%1 — confirm").arg(verb()));
    resize(980, 620);
    panes::restoreGeometryOnScreen(this, {}); // never larger than the screen
    auto *layout = new QVBoxLayout(this);

    m_title = new QLabel(this);
    m_title->setTextFormat(Qt::PlainText);
    m_title->setStyleSheet(QStringLiteral("QLabel { font-size: 15px; font-weight: bold; }"));
    m_title->setText(tr("%1: loading the preview of %2…").arg(verb(), scope));
    layout->addWidget(m_title);

    m_summary = new QLabel(this);
    m_summary->setTextFormat(Qt::RichText); // the database's parts escaped
    m_summary->setWordWrap(true);
    m_summary->setTextInteractionFlags(Qt::TextSelectableByMouse);
    // A queue name of 200 characters without a space once made this dialog 1,910 px wide: the
    // labels take the width the dialog gives them (docs/security.md#text-from-the-database-is-
    // plain-text).
    panes::ignoreTextWidth(m_summary);
    panes::ignoreTextWidth(m_title);
    layout->addWidget(m_summary);

    m_effect = new QLabel(this);
    m_effect->setWordWrap(true);
    m_effect->setStyleSheet(
        QStringLiteral("QLabel { background: #eef3fa; border: 1px solid #c4d3e8; padding: 6px; }"));
    switch (m_kind) {
    case Kind::Requeue:
        m_effect->setText(tr("Each open dead letter goes back to its queue through an outbox "
                             "command; the reference worker runs it again. Earlier attempts are "
                             "kept. A target that changed since this preview, or whose job is "
                             "still leased, is reported and not requeued."));
        break;
    case Kind::Resolve:
        m_effect->setText(tr("Each open dead letter is marked resolved with the resolution below "
                             "and leaves the open list. Nothing is run again. A target that "
                             "changed since this preview is reported and left alone."));
        break;
    case Kind::Claim:
        m_effect->setText(tr("You become the owner of these dead letters; others see that you "
                             "are on them."));
        break;
    case Kind::ReleaseClaim:
        m_effect->setText(tr("Your claim on these dead letters is released."));
        break;
    case Kind::ReleaseStuck:
        m_effect->setText(tr("These jobs are locked by a worker that stopped answering. Releasing "
                             "records the lost attempt and unlocks them so the queue runs them "
                             "again: their side effect may run twice. Jobs no longer stuck are "
                             "reported and left alone."));
        break;
    }
    layout->addWidget(m_effect);

    m_table = new ResultTableView(this);
    m_table->verticalHeader()->setDefaultSectionSize(m_table->fontMetrics().height() + 6);
    layout->addWidget(m_table, 1);

    auto *form = new QFormLayout;
    if (m_kind == Kind::Requeue) {
        m_reset = new QCheckBox(tr("Reset the attempt counter (the job gets its full retry budget "
                                   "again); unchecked keeps the count"),
                                this);
        m_reset->setChecked(true);
        form->addRow(tr("Attempts:"), m_reset);
        m_acknowledge = new QCheckBox(this);
        m_acknowledge->hide();
        form->addRow(QString(), m_acknowledge);
        connect(m_acknowledge, &QCheckBox::toggled, this, &ActionConfirmationDialog::updateConfirm);
    }
    if (m_kind == Kind::Resolve) {
        m_resolution = new QComboBox(this);
        m_resolution->addItem(tr("Fixed by hand"), QStringLiteral("fixed_by_hand"));
        m_resolution->addItem(tr("Duplicate"), QStringLiteral("duplicate"));
        m_resolution->addItem(tr("Not needed"), QStringLiteral("not_needed"));
        form->addRow(tr("Resolution:"), m_resolution);
        m_note = new QLineEdit(this);
        m_note->setPlaceholderText(tr("What was done, for whoever looks next (optional)"));
        form->addRow(tr("Note:"), m_note);
    }
    m_reason = new QLineEdit(this);
    m_reason->setPlaceholderText(tr("Why — required; it goes into the audit log"));
    form->addRow(tr("&Reason:"), m_reason);
    m_ticket = new QLineEdit(this);
    m_ticket->setPlaceholderText(tr("e.g. INC-1234 (optional)"));
    form->addRow(tr("&Ticket:"), m_ticket);
    layout->addLayout(form);

    m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    confirmButton()->setEnabled(false);
    confirmButton()->setDefault(false);
    connect(m_buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(m_buttons);

    connect(m_reason, &QLineEdit::textChanged, this, &ActionConfirmationDialog::updateConfirm);
    m_reason->setFocus();
    updateConfirm();
}

void ActionConfirmationDialog::setPreview(ActionPreviewModel *preview)
{
    m_preview = preview;
    m_loaded = false;
    m_table->setModel(preview);
    const int widths[] = { 80, 110, 110, 100, 130, 170, 110, 60 };
    for (int c = 0; c < int(std::size(widths)); ++c)
        m_table->setColumnWidth(c, widths[c]);
    m_table->setColumnHidden(ActionPreviewModel::Verdict,
                             m_kind != Kind::Requeue); // the verdict is about retrying
    connect(preview, &ActionPreviewModel::loaded, this, &ActionConfirmationDialog::onPreviewLoaded);
    connect(preview, &ActionPreviewModel::failed, this,
            [this] { m_title->setText(tr("%1: the preview could not be loaded").arg(verb())); });
    if (preview->rowCount() > 0 && !preview->isLoading())
        onPreviewLoaded();
    updateConfirm();
}

QString ActionConfirmationDialog::verb() const
{
    switch (m_kind) {
    case Kind::Requeue:
        return tr("Requeue");
    case Kind::Resolve:
        return tr("Mark resolved");
    case Kind::Claim:
        return tr("Claim");
    case Kind::ReleaseClaim:
        return tr("Release claim");
    case Kind::ReleaseStuck:
        return tr("Release stuck");
    }
    return {};
}

void ActionConfirmationDialog::onPreviewLoaded()
{
    m_loaded = true;
    const int count = m_preview->rowCount();
    const QMap<QString, int> verdicts = m_preview->countByVerdict();
    m_title->setText(tr("%1 %Ln dead letter(s)", nullptr, count).arg(verb()));
    QString summary = tr("<b>Queues:</b> %1<br><b>Failure groups:</b> %Ln", nullptr,
                         int(m_preview->countByFailureGroup().size()))
                          .arg(summarize(m_preview->countByQueue(), 6).toHtmlEscaped());
    if (m_kind == Kind::Requeue)
        summary += tr("<br><b>Safe to retry:</b> %L1 yes · <span style='color:%4'>%L2 check "
                      "first</span> · <span style='color:%5'>%L3 blocked</span>")
                       .arg(verdicts.value(QStringLiteral("ok")))
                       .arg(verdicts.value(QStringLiteral("warn")))
                       .arg(verdicts.value(QStringLiteral("block")))
                       .arg(display::colorName(display::Tone::Warning),
                            display::colorName(display::Tone::Error));
    const int notOpen = m_preview->countNotOpen();
    if (notOpen > 0 && (m_kind == Kind::Requeue || m_kind == Kind::Resolve))
        summary += tr("<br><span style='color:%1'>%Ln target(s) are no longer open: they "
                      "will be reported as conflicts, not changed.</span>",
                      nullptr, notOpen)
                       .arg(display::colorName(display::Tone::Error));
    if (count == 0)
        summary = tr("Nothing to act on: no dead letter matches.");
    m_summary->setText(summary);
    if (m_acknowledge) {
        const int risky
            = verdicts.value(QStringLiteral("warn")) + verdicts.value(QStringLiteral("block"));
        m_acknowledge->setText(
            tr("I have read the verdicts of the %Ln dead letter(s) marked \"check first\" or "
               "\"blocked\" and still want them requeued",
               nullptr, risky));
        m_acknowledge->setVisible(risky > 0);
        m_acknowledge->setChecked(false);
    }
    confirmButton()->setText(tr("%1 %L2").arg(verb()).arg(count));
    updateConfirm();
}

void ActionConfirmationDialog::updateConfirm()
{
    bool ok = m_loaded && m_preview && m_preview->rowCount() > 0 && !reason().isEmpty();
    if (m_acknowledge && m_acknowledge->isVisible() && !m_acknowledge->isChecked())
        ok = false;
    confirmButton()->setEnabled(ok);
    if (!m_loaded)
        confirmButton()->setToolTip(tr("Waiting for the preview"));
    else if (reason().isEmpty())
        confirmButton()->setToolTip(tr("A reason is required"));
    else
        confirmButton()->setToolTip({});
}

QString ActionConfirmationDialog::reason() const
{
    return m_reason->text().trimmed();
}

QString ActionConfirmationDialog::ticket() const
{
    return m_ticket->text().trimmed();
}

bool ActionConfirmationDialog::resetAttempts() const
{
    return m_reset && m_reset->isChecked();
}

QString ActionConfirmationDialog::resolution() const
{
    return m_resolution ? m_resolution->currentData().toString() : QString();
}

QString ActionConfirmationDialog::note() const
{
    return m_note ? m_note->text().trimmed() : QString();
}

QString ActionConfirmationDialog::summaryText() const
{
    return m_title->text() + QLatin1Char('\n') + m_summary->text();
}

QPushButton *ActionConfirmationDialog::confirmButton() const
{
    return m_buttons->button(QDialogButtonBox::Ok);
}

} // namespace redrive
