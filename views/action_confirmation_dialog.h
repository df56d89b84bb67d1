// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QDialog>

class QCheckBox;
class QComboBox;
class QDialogButtonBox;
class QLabel;
class QLineEdit;
class QPlainTextEdit;
class QPushButton;
class QTableView;

namespace redrive {

class ActionPreviewModel;

/// Confirms an operator action on dead letters
/// (docs/architecture.md#an-action-from-click-to-audit-entry): shows the exact number of targets,
/// the queues and failure groups they belong to, what will happen, and per target the safe-to-retry
/// verdict with its reasons; asks for a required reason and an optional ticket. For a requeue the
/// operator chooses whether the attempt counter is reset, and must acknowledge warnings when any
/// target has them; for a resolve they choose the resolution and may add a note. The confirm button
/// names the count ("Requeue 37") and stays disabled until the preview has loaded and a reason is
/// given. The targets confirmed are the preview's rows (ActionPreviewModel::targets()), which the
/// caller freezes.
class ActionConfirmationDialog : public QDialog
{
    Q_OBJECT
public:
    enum class Kind { Requeue, Resolve, Claim, ReleaseClaim, ReleaseStuck };

    /// `scope` names what is previewed ("3 selected dead letters"); call setPreview() next.
    ActionConfirmationDialog(Kind kind, const QString &scope, QWidget *parent = nullptr);

    /// The preview (loading or loaded) whose rows are the targets; it must outlive the dialog
    /// (typically a child of it).
    void setPreview(ActionPreviewModel *preview);
    ActionPreviewModel *preview() const { return m_preview; }

    Kind kind() const { return m_kind; }
    /// The reason, trimmed (never empty once accepted).
    QString reason() const;
    /// The ticket reference, trimmed; empty when none.
    QString ticket() const;
    /// Requeue: reset the attempt counter (true) or keep it.
    bool resetAttempts() const;
    /// Resolve: fixed_by_hand, duplicate or not_needed (the values the database accepts).
    QString resolution() const;
    /// Resolve: an optional note kept with the resolution.
    QString note() const;
    /// The summary line shown above the table (for tests and the result dialog).
    QString summaryText() const;
    /// The confirm button (tests click it).
    QPushButton *confirmButton() const;
    QLineEdit *reasonEdit() const { return m_reason; }
    QCheckBox *acknowledgeBox() const { return m_acknowledge; }

private:
    void onPreviewLoaded();
    void updateConfirm();
    QString verb() const;

    Kind m_kind;
    ActionPreviewModel *m_preview = nullptr;
    QLabel *m_title = nullptr;
    QLabel *m_summary = nullptr;
    QLabel *m_effect = nullptr;
    QTableView *m_table = nullptr;
    QCheckBox *m_reset = nullptr;
    QComboBox *m_resolution = nullptr;
    QLineEdit *m_note = nullptr;
    QCheckBox *m_acknowledge = nullptr;
    QLineEdit *m_reason = nullptr;
    QLineEdit *m_ticket = nullptr;
    QDialogButtonBox *m_buttons = nullptr;
    bool m_loaded = false;
};

} // namespace redrive
