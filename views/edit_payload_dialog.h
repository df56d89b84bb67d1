// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QDialog>
#include <QJsonObject>

class QCheckBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;

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
class EditPayloadDialog : public QDialog
{
    Q_OBJECT
public:
    /// `session` must outlive the dialog.
    EditPayloadDialog(db::DatabaseSession *session, qint64 deadLetterId, QWidget *parent = nullptr);

    QPlainTextEdit *editor() const { return m_editor; }
    QLineEdit *reasonEdit() const { return m_reason; }
    QPushButton *confirmButton() const;
    /// The problem with the edited text, or empty when it is valid JSON.
    QString validationMessage() const;

Q_SIGNALS:
    /// The database answered; `outcome` is its JSON, `reference` the action id.
    void applied(const QJsonObject &outcome, const QString &reference);

private:
    void load();
    void validate();
    void submit();

    db::DatabaseSession *m_session;
    qint64 m_id;
    int m_version = -1;
    bool m_editable = false;
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
