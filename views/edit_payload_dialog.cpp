// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/edit_payload_dialog.h"

#include "models/console_reads.h"
#include "models/db/database_session.h"
#include "models/display_format.h"
#include "models/operator_action.h"
#include "models/payload_text.h"
#include "views/dead_letter_actions.h"
#include "views/error_presenter.h"
#include "views/single_action.h"
#include "views/text_panes.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QFontDatabase>
#include <QFormLayout>
#include <QFutureWatcher>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QTextDocument>
#include <QThread>
#include <QTimer>
#include <QUuid>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>
#include <algorithm>
#include <memory>
#include <utility>

namespace redrive {

namespace {

// The payload made ready for the editor, on a worker.
struct Prepared
{
    QByteArray stored;
    QByteArray shown; ///< what the editor is given, as UTF-8
    QString text; ///< `shown` as the editor takes it
    bool fits = false; ///< false: too large for the editor (`text` is empty)
    qsizetype longestLine = 0; ///< UTF-8 bytes, once indented
    QString problem; ///< the check of `shown` (checkText()), empty when it is JSON
};

QString checkText(const QString &text);

Prepared prepare(const db::ResultSet &rows)
{
    Prepared p;
    p.stored = rows.raw(0, 0);
    if (p.stored.size() > EditPayloadDialog::kMaxEditBytes)
        return p;
    // Indented token by token: big numbers and key order stay as stored.
    const bool isJson = PayloadText::checkJson(p.stored) < 0;
    p.shown = isJson ? display::prettyJson(p.stored) : p.stored;
    const QByteArray &shown = p.shown;
    for (qsizetype start = 0; start <= shown.size();) {
        qsizetype end = shown.indexOf('\n', start);
        if (end < 0)
            end = shown.size();
        p.longestLine = std::max(p.longestLine, end - start);
        start = end + 1;
    }
    QString text = QString::fromUtf8(shown);
    // A line's UTF-16 length is at most its UTF-8 length: only a line this long in bytes can be
    // too long in characters.
    if (p.longestLine > EditPayloadDialog::kMaxEditLineChars) {
        p.longestLine = 0;
        for (const QStringView line : QStringView(text).split(QLatin1Char('\n')))
            p.longestLine = std::max(p.longestLine, line.size());
        if (p.longestLine > EditPayloadDialog::kMaxEditLineChars)
            return p;
    }
    // The first check of the text on screen, here rather than from the editor's text on the
    // GUI thread (QPlainTextEdit::toPlainText() of 9 MB costs it about 40 ms).
    if (!isJson)
        p.problem = checkText(text);
    p.text = std::move(text);
    p.fits = true;
    return p;
}

// The problem with `text` as JSON, with its line and column (from 1; the column in characters),
// or empty when it is JSON. On a worker.
QString checkText(const QString &text)
{
    const QByteArray utf8 = text.toUtf8();
    QString what;
    const qsizetype at = PayloadText::checkJson(utf8, &what);
    if (at < 0)
        return {};
    const QByteArrayView before(utf8.constData(), at);
    qsizetype lineStart = at;
    while (lineStart > 0 && before[lineStart - 1] != '\n')
        --lineStart;
    const qsizetype line = std::count(before.begin(), before.end(), '\n') + 1;
    const qsizetype column = QString::fromUtf8(before.sliced(lineStart)).size() + 1;
    return EditPayloadDialog::tr("Not valid JSON at line %1, column %2: %3")
        .arg(QLocale().toString(qlonglong(line)), QLocale().toString(qlonglong(column)), what);
}

} // namespace

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
    // Always there, so the viewport's width does not change when a long payload arrives: a new
    // width makes QPlainTextEdit relay out every line on the GUI thread.
    m_editor->setVerticalScrollBarPolicy(Qt::ScrollBarAlwaysOn);
    m_editor->setEnabled(false);
    layout->addWidget(m_editor, 1);
    m_validation = new QLabel(this);
    m_validation->setObjectName(QStringLiteral("validation"));
    m_validation->setTextFormat(Qt::PlainText);
    m_validation->setWordWrap(true);
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
    m_error->setObjectName(QStringLiteral("actionError"));
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

    m_debounce = new QTimer(this);
    m_debounce->setSingleShot(true);
    m_debounce->setInterval(kDebounceMs);
    connect(m_debounce, &QTimer::timeout, this, &EditPayloadDialog::startCheck);
    connect(m_editor, &QPlainTextEdit::textChanged, this, &EditPayloadDialog::scheduleCheck);
    connect(m_reason, &QLineEdit::textChanged, this, &EditPayloadDialog::updateState);
    m_validationMessage = tr("The payload is not loaded yet.");
    updateState();
    load();
}

EditPayloadDialog::~EditPayloadDialog() = default;

QPushButton *EditPayloadDialog::confirmButton() const
{
    return m_buttons->button(QDialogButtonBox::Ok);
}

QString EditPayloadDialog::validationMessage() const
{
    return isChecking() ? tr("Checking…") : m_validationMessage;
}

bool EditPayloadDialog::isChecking() const
{
    return m_editable && m_checked != m_generation;
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
            // Bounded, and BiDi overrides shown as markers, before escaping; one arg() call, so a
            // "%1" in a queue or kind stays as it is.
            auto shown = [](const QString &text) {
                return display::boundedText(text, 200).toHtmlEscaped();
            };
            QString header
                = tr("Dead letter <b>%1</b> · %2 · %3 · status <b>%4</b> · version %5")
                      .arg(QString::number(m_id), shown(preview->text(0, QStringLiteral("queue"))),
                           shown(preview->text(0, QStringLiteral("kind"))), shown(status),
                           QString::number(m_version));
            const QString reasons = preview->text(0, QStringLiteral("verdict_reasons"));
            if (!reasons.isEmpty())
                header += QStringLiteral("<br><span style='color:%1'>%2</span>")
                              .arg(display::colorName(display::Tone::Warning),
                                   display::boundedText(reasons, display::kMaxCellChars)
                                       .toHtmlEscaped());
            if (status != QLatin1String("open"))
                header += tr("<br><span style='color:%1'>Only an open dead letter can be "
                             "requeued; this one will be reported as a conflict.</span>")
                              .arg(display::colorName(display::Tone::Error));
            m_header->setText(header);
            loadPayload();
        });
}

void EditPayloadDialog::loadPayload()
{
    reads::deadLetterPayload(
        m_session, this, m_id, [this](const db::DbExpected<db::ResultSet> &payload) {
            if (!payload || payload->rowCount() == 0) {
                if (!payload)
                    ErrorPresenter::report(this, payload.error(), tr("Loading the payload"));
                return;
            }
            if (payload->isNull(0, 0)) {
                m_validationMessage = tr("This payload is bytes, not JSON: it cannot be edited "
                                         "here. Requeue it unchanged instead.");
                updateState();
                return;
            }
            m_validationMessage = tr("Preparing the payload for editing…");
            updateState();
            // Copying, indenting and laying out a big payload would block the window: a worker
            // does it, and the editor gets the finished document.
            auto *watcher = new QFutureWatcher<Prepared>(this);
            connect(watcher, &QFutureWatcher<Prepared>::finished, this, [this, watcher] {
                watcher->deleteLater();
                Prepared p = watcher->result();
                m_stored = std::move(p.stored);
                m_shown = std::move(p.shown);
                if (!p.fits) {
                    m_validationMessage = m_stored.size() > kMaxEditBytes
                        ? tr("This payload is %1: payloads above %2 cannot be edited here "
                             "without freezing the console. Requeue it unchanged instead.")
                              .arg(PayloadText::formatSize(m_stored.size()),
                                   PayloadText::formatSize(kMaxEditBytes))
                        : tr("This payload has a line of %1 characters once indented: lines "
                             "above %2 characters cannot be edited here without freezing the "
                             "console. Requeue it unchanged instead.")
                              .arg(QLocale().toString(qlonglong(p.longestLine)),
                                   QLocale().toString(qlonglong(kMaxEditLineChars)));
                    updateState();
                    return;
                }
                startFeeding(std::move(p.text), std::move(p.problem));
            });
            watcher->setFuture(QtConcurrent::run(prepare, *payload));
        });
}

void EditPayloadDialog::startFeeding(QString text, QString problem)
{
    // Handing the editor a finished document of 400,000 lines costs the GUI thread a pass of
    // QPlainTextDocumentLayout over every line (about 100 ms of CPU for 9 MB on a loaded
    // machine, docs/architecture.md#the-edit-dialog), whatever was prepared beforehand: the
    // text goes into the editor's own document in slices (panes::setPlainTextInSlices), while
    // the editor stays disabled and the confirm button off.
    m_pendingProblem = std::move(problem);
    m_feeding = true;
    panes::setPlainTextInSlices(
        m_editor, std::move(text),
        [this](int percent) {
            const QString message = tr("Loading the payload into the editor… %1 %").arg(percent);
            if (message != m_validationMessage) {
                m_validationMessage = message;
                updateState();
            }
        },
        [this] { finishFeeding(); });
}

void EditPayloadDialog::finishFeeding()
{
    m_feeding = false;
    // The feed gave undo back as it found it (panes::setPlainTextInSlices): the operator's edits
    // from here on are undoable, loading the payload is not a step.
    m_editor->document()->setModified(false);
    m_editor->setEnabled(true);
    m_editable = true;
    // The text on screen is the one checked on the worker.
    m_debounce->stop();
    ++m_generation;
    m_checked = m_generation;
    m_validationMessage = std::exchange(m_pendingProblem, QString());
    updateState();
    Q_EMIT validated();
    Q_EMIT loaded();
}

bool EditPayloadDialog::isLoaded() const
{
    return m_editable;
}

void EditPayloadDialog::scheduleCheck()
{
    if (m_feeding)
        return; // the text being fed was checked on the worker

    ++m_generation;
    updateState();
    m_debounce->start();
}

void EditPayloadDialog::startCheck()
{
    // One check at a time: a newer text waits for the running one, whose answer is dropped.
    if (!m_editable || m_checkRunning || m_checked == m_generation)
        return;
    m_checkRunning = true;
    const quint64 generation = m_generation;
    auto *watcher = new QFutureWatcher<QString>(this);
    connect(watcher, &QFutureWatcher<QString>::finished, this, [this, watcher, generation] {
        watcher->deleteLater();
        finishCheck(generation, watcher->result());
    });
    watcher->setFuture(QtConcurrent::run(checkText, m_editor->toPlainText()));
    Q_EMIT validationStarted();
}

void EditPayloadDialog::finishCheck(quint64 generation, const QString &message)
{
    m_checkRunning = false;
    if (generation != m_generation) {
        if (!m_debounce->isActive())
            startCheck();
        return;
    }
    m_checked = generation;
    m_validationMessage = message;
    updateState();
    Q_EMIT validated();
}

void EditPayloadDialog::updateState()
{
    const QString message = validationMessage();
    const bool valid = m_editable && message.isEmpty();
    m_validation->setText(valid ? tr("✓ valid JSON") : message);
    const display::Tone tone = valid ? display::Tone::Ok
        : isChecking() || m_feeding  ? display::Tone::Warning
                                     : display::Tone::Error;
    m_validation->setStyleSheet(
        QStringLiteral("QLabel { color: %1; }").arg(display::colorName(tone)));
    confirmButton()->setEnabled(valid && m_version >= 0 && !m_reason->text().trimmed().isEmpty());
}

void EditPayloadDialog::submit()
{
    // Not edited: the payload goes back exactly as stored. Edited: compacted token by token
    // (the check has passed): numbers are sent as typed, never through a double, and members
    // keep the order the operator left them in.
    const QByteArray typed = m_editor->toPlainText().toUtf8();
    const QByteArray payload = typed == m_shown ? m_stored : display::compactJson(typed);
    const OperatorAction action = OperatorAction::editAndRequeue(
        m_id, m_version, payload, m_reset->isChecked(), m_reason->text(), m_ticket->text());
    confirmButton()->setEnabled(false);
    runFormAction(
        m_session, this, action, m_error, [this] { updateState(); },
        [this](const QJsonObject &outcome, const QString &reference) {
            Q_EMIT applied(outcome, reference);
        });
}

} // namespace redrive
