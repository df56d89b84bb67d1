// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QDialog>
#include <QList>
#include <QPair>

class QComboBox;
class QFormLayout;
class QLineEdit;
class QPushButton;

namespace redrive {

/// Asks for what a single operator action needs besides its target
/// (docs/domain.md#operator-action-and-action-id): a required reason, an optional ticket and, when
/// the action takes one, a choice (e.g. a mismatch's resolution). `description` (rich text) says
/// what will happen to what. The confirm button carries `confirmText` and stays disabled until a
/// reason is typed.
class ReasonDialog : public QDialog
{
    Q_OBJECT
public:
    using Choices = QList<QPair<QString, QString>>; ///< (shown text, value)

    ReasonDialog(const QString &title, const QString &description, const QString &confirmText,
                 QWidget *parent = nullptr);

    /// Adds a choice with `label` (e.g. "Resolution:"); choice() returns the chosen value.
    void setChoices(const QString &label, const Choices &choices);
    QString reason() const;
    QString ticket() const;
    QString choice() const;
    QLineEdit *reasonEdit() const { return m_reason; }
    QPushButton *confirmButton() const { return m_confirm; }

private:
    QComboBox *m_choices = nullptr;
    QLineEdit *m_reason = nullptr;
    QLineEdit *m_ticket = nullptr;
    QPushButton *m_confirm = nullptr;
    QFormLayout *m_form = nullptr;
};

} // namespace redrive
