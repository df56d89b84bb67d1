// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/edit_payload_dialog.h"

#include "models/console_reads.h"
#include "models/db/database_session.h"
#include "models/display_format.h"
#include "models/operator_action.h"
#include "views/dead_letter_actions.h"
#include "views/error_presenter.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QFormLayout>
#include <QJsonDocument>
#include <QJsonParseError>
#include <QLabel>
#include <QLineEdit>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QUuid>
#include <QVBoxLayout>

namespace redrive {

EditPayloadDialog::EditPayloadDialog(db::DatabaseSession *session, qint64 deadLetterId,
                                     QWidget *parent)
    : QDialog(parent)
    , m_session(session)
    , m_id(deadLetterId)
{
    setWindowTitle(tr("Edit payload and requeue — dead letter %1").arg(deadLetterId));
    resize(820, 640);
    auto *layout = new QVBoxLayout(this);
    m_header = new QLabel(tr("Loading the payload…"), this);
    m_header->setTextFormat(Qt::RichText); // the database's parts escaped
    m_header->setWordWrap(true);
    layout->addWidget(m_header);
    m_editor = new QPlainTextEdit(this);
    m_editor->setFont(QFontDatabase::systemFont(QFontDatabase::FixedFont));
    m_editor->setLineWrapMode(QPlainTextEdit::NoWrap);
    m_editor->setEnabled(false);
    layout->addWidget(m_editor, 1);
    m_validation = new QLabel(this);
    m_validation->setTextFormat(Qt::PlainText);
    layout->addWidget(m_validation);

    auto *form = new QFormLayout;
    m_reset = new QCheckBox(tr("Reset the attempt counter"), this);
    m_reset->setChecked(true);
    form->addRow(tr("Attempts:"), m_reset);
    m_reason = new QLineEdit(this);
    m_reason->setPlaceholderText(tr("Why — required; the audit entry keeps the payload before "
                                    "and after"));
    form->addRow(tr("&Reason:"), m_reason);
    m_ticket = new QLineEdit(this);
    m_ticket->setPlaceholderText(tr("e.g. INC-1234 (optional)"));
    form->addRow(tr("&Ticket:"), m_ticket);
    layout->addLayout(form);
    m_error = new QLabel(this);
    m_error->setTextFormat(Qt::PlainText);
    m_error->setWordWrap(true);
    m_error->setStyleSheet(
        QStringLiteral("QLabel { color: %1; }").arg(display::colorName(display::Tone::Error)));
    m_error->hide();
    layout->addWidget(m_error);

    m_buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    confirmButton()->setText(tr("Requeue with this payload"));
    connect(m_buttons, &QDialogButtonBox::accepted, this, &EditPayloadDialog::submit);
    connect(m_buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(m_buttons);
    connect(m_editor, &QPlainTextEdit::textChanged, this, &EditPayloadDialog::validate);
    connect(m_reason, &QLineEdit::textChanged, this, &EditPayloadDialog::validate);
    validate();
    load();
}

QPushButton *EditPayloadDialog::confirmButton() const
{
    return m_buttons->button(QDialogButtonBox::Ok);
}

QString EditPayloadDialog::validationMessage() const
{
    return m_validationMessage;
}

void EditPayloadDialog::load()
{
    reads::deadLetterPreview(
        m_session, this, m_id, [this](const db::DbExpected<db::ResultSet> &preview) {
            if (!preview || preview->rowCount() == 0) {
                m_header->setText(tr("Dead letter %1 was not found.").arg(m_id));
                return;
            }
            m_version = preview->integer(0, QStringLiteral("version")).value_or(-1);
            const QString status = preview->text(0, QStringLiteral("status"));
            QString header = tr("Dead letter <b>%1</b> · %2 · %3 · status <b>%4</b> · version %5")
                                 .arg(QString::number(m_id),
                                      preview->text(0, QStringLiteral("queue")).toHtmlEscaped(),
                                      preview->text(0, QStringLiteral("kind")).toHtmlEscaped(),
                                      status.toHtmlEscaped(), QString::number(m_version));
            const QString reasons = preview->text(0, QStringLiteral("verdict_reasons"));
            if (!reasons.isEmpty())
                header += QStringLiteral("<br><span style='color:%1'>%2</span>")
                              .arg(display::colorName(display::Tone::Warning),
                                   reasons.toHtmlEscaped());
            if (status != QLatin1String("open"))
                header += tr("<br><span style='color:%1'>Only an open dead letter can be "
                             "requeued; this one will be reported as a conflict.</span>")
                              .arg(display::colorName(display::Tone::Error));
            m_header->setText(header);
            reads::deadLetterPayload(
                m_session, this, m_id, [this](const db::DbExpected<db::ResultSet> &payload) {
                    if (!payload || payload->rowCount() == 0) {
                        if (!payload)
                            ErrorPresenter::report(this, payload.error(),
                                                   tr("Loading the payload"));
                        return;
                    }
                    if (payload->isNull(0, 0)) {
                        m_validation->setText(tr("This payload is bytes, not JSON: it cannot be "
                                                 "edited here. Requeue it unchanged instead."));
                        return;
                    }
                    // Indented token by token: big numbers and key order stay as stored.
                    const QString stored = payload->text(0, 0);
                    const bool isJson = !QJsonDocument::fromJson(stored.toUtf8()).isNull();
                    m_editor->setPlainText(isJson ? display::prettyJsonText(stored) : stored);
                    m_editor->setEnabled(true);
                    m_editable = true;
                    validate();
                });
        });
}

void EditPayloadDialog::validate()
{
    QJsonParseError error;
    const QByteArray text = m_editor->toPlainText().toUtf8();
    QJsonDocument::fromJson(text, &error);
    if (!m_editable)
        m_validationMessage = tr("The payload is not loaded yet.");
    else if (error.error != QJsonParseError::NoError) {
        const QByteArray before = text.left(error.offset);
        const int line = int(before.count('\n')) + 1;
        const int column = int(error.offset - (before.lastIndexOf('\n') + 1)) + 1;
        m_validationMessage = tr("Not valid JSON at line %1, column %2: %3")
                                  .arg(line)
                                  .arg(column)
                                  .arg(error.errorString());
    } else {
        m_validationMessage.clear();
    }
    m_validation->setText(m_validationMessage.isEmpty() && m_editable ? tr("✓ valid JSON")
                                                                      : m_validationMessage);
    m_validation->setStyleSheet(
        m_validationMessage.isEmpty()
            ? QStringLiteral("QLabel { color: %1; }").arg(display::colorName(display::Tone::Ok))
            : QStringLiteral("QLabel { color: %1; }")
                  .arg(display::colorName(display::Tone::Error)));
    confirmButton()->setEnabled(m_validationMessage.isEmpty() && m_version >= 0
                                && !m_reason->text().trimmed().isEmpty());
}

void EditPayloadDialog::submit()
{
    // Compacted token by token (validate() has checked it is JSON): numbers are sent as typed,
    // never through a double, and members keep the order the operator left them in.
    const QByteArray payload = display::compactJson(m_editor->toPlainText().toUtf8());
    const OperatorAction action = OperatorAction::editAndRequeue(
        m_id, m_version, payload, m_reset->isChecked(), m_reason->text(), m_ticket->text());
    confirmButton()->setEnabled(false);
    runOperatorAction(
        m_session, this, action,
        [this, reference = action.reference()](const db::DbExpected<QJsonObject> &outcome) {
            if (!outcome) {
                m_error->setText(ErrorPresenter::inlineText(outcome.error()));
                m_error->show();
                validate();
                return;
            }
            Q_EMIT applied(*outcome, reference);
            accept();
        });
}

} // namespace redrive
