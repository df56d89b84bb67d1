// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "views/field_grid.h"

#include <QStringList>
#include <QWidget>

class QLabel;
class QPlainTextEdit;
class QPushButton;

namespace redrive {

class DeadLetterCase;

namespace db {
class DatabaseSession;
}

/// The case view's Idempotency key tab: the key's record (scope, key, state, version, lease,
/// request and conflicting hashes, conflicts, error, times, stored result), a note when the job
/// has no key or the key has no record, a warning when it is stuck (processing past its lease),
/// and "Release stuck key…", the same audited, role-checked action as the Keys tab's. Times are
/// local with their UTC offset, or UTC. It reads the record from the DeadLetterCase it is given.
class CaseKeyTab : public QWidget
{
    Q_OBJECT
public:
    /// `session` runs the release and must outlive the tab.
    CaseKeyTab(db::DatabaseSession *session, DeadLetterCase *deadLetterCase, bool showUtc,
               QWidget *parent = nullptr);

    /// "Release stuck key…": shown while the key is stuck, enabled for redrive_oncall or
    /// redrive_support (the database checks again).
    QPushButton *releaseButton() const { return m_release; }
    /// The caller's Redrive roles.
    void setRoles(const QStringList &redriveRoles);
    /// Local time with offset (false) or UTC (true).
    void setShowUtc(bool utc);
    /// True while a long text is still going into the tab's pane.
    bool isTextBusy() const;
    /// The record arrived (DeadLetterCase::Part::IdempotencyKey), or the times changed: shows it.
    void showRecord();

signals:
    /// A release went through: the case should be loaded again.
    void released();

private:
    void updateReleaseButton();
    void releaseStuckKey();
    QString time(const QDateTime &utc) const;

    db::DatabaseSession *m_session;
    DeadLetterCase *m_case;
    bool m_showUtc;
    QStringList m_roles;
    FieldGrid m_fields;
    QLabel *m_note = nullptr;
    QWidget *m_form = nullptr;
    QPlainTextEdit *m_result = nullptr;
    QPushButton *m_release = nullptr;
};

} // namespace redrive
