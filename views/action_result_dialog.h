// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include <QDialog>
#include <QJsonArray>
#include <QJsonObject>

class QPushButton;
class QTableWidget;

namespace redrive {

namespace db {
class DatabaseSession;
}

/// The result of an operator action (docs/domain.md#bulk-actions-act-on-the-frozen-set): how many
/// targets were confirmed, applied, in conflict (changed since the preview) and refused, the
/// per-target outcome of every one not applied, and for a bulk action whether it ran to the end.
/// "Copy" puts the whole report on the clipboard as text with the per-target outcomes as JSON; a
/// cancelled bulk action offers "Resume", which finishes the same frozen set.
class ActionResultDialog : public QDialog
{
    Q_OBJECT
public:
    /// What the action reported; counts come from the database's outcome JSON.
    struct Outcome
    {
        QString action; ///< e.g. "Requeue"
        int confirmed = 0;
        int applied = 0;
        int conflicts = 0;
        int refused = 0;
        QJsonArray notApplied; ///< objects with id, result, detail
        bool canceled = false; ///< a bulk action stopped between chunks
        int chunksDone = 0;
        int chunkCount = 0;
        /// The action's audit trail as the Audit log shows it (display::auditReference: entry
        /// and action id; for a bulk action every chunk's entry, and the bulk id).
        QString reference;
        QString headline; ///< what happened, in words, when the counts alone would mislead

        /// From an action function's outcome JSON (confirmed, applied, conflicts, refused, its
        /// audit_id and action_id, and per-target "results", of which only those not applied are
        /// kept). `reference` is used only when the outcome names no audit entry.
        static Outcome fromJson(const QString &action, const QJsonObject &outcome,
                                const QString &reference);
    };

    explicit ActionResultDialog(const Outcome &outcome, QWidget *parent = nullptr);

    /// The report "Copy" puts on the clipboard.
    QString reportText() const;
    /// Adds to each conflict who changed that dead letter last and when, from its newest audit
    /// entry ("resolved by demo_support 2 min ago"), read through `session` (which must outlive
    /// the call's answer or the dialog). Does nothing when there is no conflict.
    void explainConflicts(db::DatabaseSession *session);
    QPushButton *resumeButton() const { return m_resume; }

Q_SIGNALS:
    /// The operator asked to finish a cancelled bulk action.
    void resumeRequested();

private:
    Outcome m_outcome;
    QPushButton *m_resume = nullptr;
    QTableWidget *m_notApplied = nullptr;
};

} // namespace redrive
