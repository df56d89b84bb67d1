// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/audit_filter.h"

#include <QWidget>

class QCheckBox;
class QComboBox;
class QDateTimeEdit;
class QLabel;
class QLineEdit;

namespace redrive {

/// The audit view's filter controls, two rows: actor, action and target; then the time range
/// (local time, whole minutes), Apply, Clear, Refresh and an activity note. It holds no model:
/// filter() reads the controls, setFilter() fills them without emitting, and the signals say
/// what the operator asked for. The actor list comes from the caller (setActors()).
class AuditFilterBar : public QWidget
{
    Q_OBJECT
public:
    explicit AuditFilterBar(QWidget *parent = nullptr);

    /// The filter the controls hold now (times local, to the minute).
    AuditFilter filter() const;
    /// Puts `filter` into the controls without emitting any signal.
    void setFilter(const AuditFilter &filter);
    /// Replaces the actor choices (login roles), keeping what is typed.
    void setActors(const QStringList &actors);
    /// The note at the right of the time row ("Loading…", or empty).
    void setActivity(const QString &text);

Q_SIGNALS:
    /// Apply, Enter in a field, a choice from a list, or a time range switched on or off.
    void applyRequested();
    /// A time was edited: apply when filter() differs from what the list shows.
    void timeEdited();
    void clearRequested();
    void refreshRequested();

private:
    QComboBox *m_actor = nullptr;
    QComboBox *m_action = nullptr;
    QLineEdit *m_target = nullptr;
    QCheckBox *m_fromEnabled = nullptr;
    QDateTimeEdit *m_from = nullptr;
    QCheckBox *m_untilEnabled = nullptr;
    QDateTimeEdit *m_until = nullptr;
    QLabel *m_activity = nullptr;
};

} // namespace redrive
