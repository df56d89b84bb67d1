// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QByteArray>
#include <QDialog>
#include <QJsonObject>

class QCheckBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QTimer;

namespace redrive {

namespace db {
class DatabaseSession;
}

/// Edit and requeue one dead letter (docs/domain.md#requeue-never-runs-a-running-job): loads the
/// full payload and the version off the GUI thread, lets the operator edit it as JSON (checked
/// as they type; the database checks again), asks whether to reset the attempt counter, a
/// required reason and an optional ticket, then calls edit_and_requeue with a fresh action id.
/// The audit entry keeps the payload before and after. A payload that is not JSON (bytes)
/// cannot be edited here, and the dialog says so.
///
/// Nothing heavy runs on the GUI thread (docs/architecture.md#the-edit-dialog): the payload is
/// indented and checked on a worker, then fed to the editor in slices (panes::setPlainTextInSlices)
/// ("Loading the payload into the editor… n %", no confirm button until the whole
/// payload is in), and each edit is checked on a worker
/// kDebounceMs after the last keystroke, the newest text winning (a check still running for
/// older text is let finish and its answer dropped). The check is PayloadText::checkJson, which
/// never goes through a double: 1e400 and a 401-digit integer are JSON. An unedited payload is
/// sent back exactly as stored. A payload above kMaxEditBytes, or with a line longer than
/// kMaxEditLineChars once indented, is not put in the editor (laying out a 50 MB line takes
/// gigabytes); the dialog says so and offers no confirm button, as for bytes.
class EditPayloadDialog : public QDialog
{
    Q_OBJECT
public:
    /// Quiet time after the last keystroke before the text is checked.
    static constexpr int kDebounceMs = 150;
    /// Largest payload (UTF-8 bytes as stored) the editor takes.
    static constexpr qsizetype kMaxEditBytes = 16 * 1024 * 1024;
    /// Longest line (UTF-16 units, once indented) the editor takes.
    static constexpr qsizetype kMaxEditLineChars = 100'000;

    /// `session` must outlive the dialog.
    EditPayloadDialog(db::DatabaseSession *session, qint64 deadLetterId, QWidget *parent = nullptr);
    ~EditPayloadDialog() override;

    QPlainTextEdit *editor() const { return m_editor; }
    QLineEdit *reasonEdit() const { return m_reason; }
    QPushButton *confirmButton() const;
    /// The problem with the edited text, or empty when it is valid JSON. While a check runs it
    /// says so ("Checking…"); wait for validated() to read the answer for the newest text.
    QString validationMessage() const;
    /// True while the text on screen has not been checked yet (a check is pending or running).
    bool isChecking() const;
    /// True once the whole payload is in the editor (loaded() was emitted).
    bool isLoaded() const;

Q_SIGNALS:
    /// The database answered; `outcome` is its JSON, `reference` the action id.
    void applied(const QJsonObject &outcome, const QString &reference);
    /// The whole payload is in the editor, which is enabled; validationMessage() holds the
    /// check made on the worker.
    void loaded();
    /// A check of the newest text started on a worker.
    void validationStarted();
    /// The newest text was checked; validationMessage() holds the answer.
    void validated();

private:
    void load();
    void loadPayload();
    void startFeeding(QString text, QString problem);
    void finishFeeding();
    void scheduleCheck();
    void startCheck();
    void finishCheck(quint64 generation, const QString &message);
    void updateState();
    void submit();

    db::DatabaseSession *m_session;
    qint64 m_id;
    int m_version = -1;
    bool m_editable = false;
    QByteArray m_stored; ///< the payload as loaded, sent back when the text is not edited
    QByteArray m_shown; ///< the text the editor was given (UTF-8), to tell whether it was edited
    quint64 m_generation = 0; ///< of the text on screen
    quint64 m_checked = 0; ///< generation of the last answer
    bool m_checkRunning = false;
    bool m_feeding = false; ///< the payload is being fed to the editor in slices
    QString m_pendingProblem; ///< the worker's check of the text being fed
    QTimer *m_debounce = nullptr;
    QLabel *m_header = nullptr;
    QPlainTextEdit *m_editor = nullptr;
    QLabel *m_validation = nullptr;
    QCheckBox *m_reset = nullptr;
    QLineEdit *m_reason = nullptr;
    QLineEdit *m_ticket = nullptr;
    QLabel *m_error = nullptr;
    QDialogButtonBox *m_buttons = nullptr;
    QString m_validationMessage;
};

} // namespace redrive
