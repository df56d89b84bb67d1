// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/audit_filter_bar.h"

#include "models/display_format.h"

#include <QCheckBox>
#include <QComboBox>
#include <QDateTimeEdit>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalBlocker>
#include <QVBoxLayout>

namespace redrive {

AuditFilterBar::AuditFilterBar(QWidget *parent)
    : QWidget(parent)
{
    m_actor = new QComboBox(this);
    m_actor->setObjectName(QStringLiteral("actorFilter"));
    m_actor->setEditable(true);
    m_actor->setInsertPolicy(QComboBox::NoInsert);
    m_actor->addItem(QString());
    m_actor->lineEdit()->setPlaceholderText(tr("any"));
    m_actor->setMinimumWidth(150);
    m_actor->setToolTip(tr("The login role that acted (the audit entry's session user)"));

    m_action = new QComboBox(this);
    m_action->setObjectName(QStringLiteral("actionFilter"));
    m_action->setEditable(true);
    m_action->setInsertPolicy(QComboBox::NoInsert);
    m_action->addItem(QString());
    m_action->addItems(AuditFilter::knownActions());
    m_action->lineEdit()->setPlaceholderText(tr("any"));
    m_action->setMinimumWidth(170);

    m_target = new QLineEdit(this);
    m_target->setObjectName(QStringLiteral("targetFilter"));
    m_target->setPlaceholderText(tr("any target"));
    m_target->setClearButtonEnabled(true);
    m_target->setMinimumWidth(170);
    m_target->setToolTip(tr("An id (42), a type and id (dead_letter:42, mismatch:7, "
                            "compensation:3), or an idempotency key (scope:key); Enter applies"));

    const QDateTime now = QDateTime::currentDateTime();
    auto makeTime = [this](const QString &name, const QDateTime &value) {
        auto *edit = new QDateTimeEdit(value, this);
        edit->setObjectName(name);
        edit->setDisplayFormat(QStringLiteral("yyyy-MM-dd HH:mm"));
        edit->setCalendarPopup(true);
        edit->setEnabled(false);
        return edit;
    };
    m_fromEnabled = new QCheckBox(tr("From"), this);
    m_from = makeTime(QStringLiteral("fromFilter"), QDateTime(now.date(), QTime(0, 0)));
    m_from->setToolTip(tr("Entries at or after this time (local)"));
    m_untilEnabled = new QCheckBox(tr("until"), this);
    m_until
        = makeTime(QStringLiteral("untilFilter"), QDateTime(now.date().addDays(1), QTime(0, 0)));
    m_until->setToolTip(tr("Entries before this time (local)"));

    auto *apply = new QPushButton(tr("Apply"), this);
    apply->setToolTip(tr("List the entries that match the filter"));
    auto *clear = new QPushButton(tr("Clear"), this);
    clear->setToolTip(tr("Show every entry"));
    auto *refresh = new QPushButton(tr("Refresh"), this);
    refresh->setToolTip(tr("Load the list again (new entries appear at the top)"));
    m_activity = new QLabel(this);
    m_activity->setTextFormat(Qt::PlainText);

    auto *filterRow = new QHBoxLayout;
    filterRow->addWidget(new QLabel(tr("Actor:"), this));
    filterRow->addWidget(m_actor);
    filterRow->addWidget(new QLabel(tr("Action:"), this));
    filterRow->addWidget(m_action);
    filterRow->addWidget(new QLabel(tr("Target:"), this));
    filterRow->addWidget(m_target, 1);
    // The time range and the buttons on a row of their own: in one row the filters made the
    // window wider than 1024 px (docs/architecture.md "Keyboard" has the sizes tested).
    auto *timeRow = new QHBoxLayout;
    timeRow->addWidget(m_fromEnabled);
    timeRow->addWidget(m_from);
    timeRow->addWidget(m_untilEnabled);
    timeRow->addWidget(m_until);
    timeRow->addSpacing(6);
    timeRow->addWidget(apply);
    timeRow->addWidget(clear);
    timeRow->addWidget(refresh);
    timeRow->addStretch(1);
    timeRow->addWidget(m_activity);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->addLayout(filterRow);
    layout->addLayout(timeRow);

    connect(apply, &QPushButton::clicked, this, &AuditFilterBar::applyRequested);
    connect(clear, &QPushButton::clicked, this, &AuditFilterBar::clearRequested);
    connect(refresh, &QPushButton::clicked, this, &AuditFilterBar::refreshRequested);
    connect(m_actor, &QComboBox::activated, this, &AuditFilterBar::applyRequested);
    connect(m_action, &QComboBox::activated, this, &AuditFilterBar::applyRequested);
    connect(m_actor->lineEdit(), &QLineEdit::returnPressed, this, &AuditFilterBar::applyRequested);
    connect(m_action->lineEdit(), &QLineEdit::returnPressed, this, &AuditFilterBar::applyRequested);
    connect(m_target, &QLineEdit::returnPressed, this, &AuditFilterBar::applyRequested);
    connect(m_fromEnabled, &QCheckBox::toggled, this, [this](bool on) {
        m_from->setEnabled(on);
        Q_EMIT applyRequested();
    });
    connect(m_untilEnabled, &QCheckBox::toggled, this, [this](bool on) {
        m_until->setEnabled(on);
        Q_EMIT applyRequested();
    });
    connect(m_from, &QDateTimeEdit::editingFinished, this, &AuditFilterBar::timeEdited);
    connect(m_until, &QDateTimeEdit::editingFinished, this, &AuditFilterBar::timeEdited);
}

AuditFilter AuditFilterBar::filter() const
{
    AuditFilter f;
    // A name picked from the list is filtered on as the database has it (the item's data), not
    // as shown; a typed one as typed.
    const QString actor = m_actor->currentText();
    const int picked = actor.isEmpty() ? -1 : m_actor->findText(actor, Qt::MatchExactly);
    const QVariant raw = picked >= 0 ? m_actor->itemData(picked) : QVariant();
    f.actor = raw.isValid() ? raw.toString() : actor.trimmed();
    f.action = m_action->currentText().trimmed();
    f.setTargetText(m_target->text());
    if (m_fromEnabled->isChecked())
        f.from = m_from->dateTime();
    if (m_untilEnabled->isChecked())
        f.until = m_until->dateTime();
    return f;
}

void AuditFilterBar::setFilter(const AuditFilter &filter)
{
    const QSignalBlocker b1(m_actor), b2(m_action), b3(m_target), b4(m_fromEnabled),
        b5(m_untilEnabled), b6(m_from), b7(m_until);
    m_actor->setEditText(filter.actor);
    m_action->setEditText(filter.action);
    m_target->setText(filter.targetText());
    m_fromEnabled->setChecked(filter.from.isValid());
    m_from->setEnabled(filter.from.isValid());
    if (filter.from.isValid())
        m_from->setDateTime(filter.from.toLocalTime());
    m_untilEnabled->setChecked(filter.until.isValid());
    m_until->setEnabled(filter.until.isValid());
    if (filter.until.isValid())
        m_until->setDateTime(filter.until.toLocalTime());
}

void AuditFilterBar::setActors(const QStringList &actors)
{
    const QString typed = m_actor->currentText();
    const QSignalBlocker block(m_actor);
    m_actor->clear();
    m_actor->addItem(QString());
    // Login names from the database: shown bounded with invisible controls as markers, the
    // name itself kept as the item's data and filtered on when picked
    // (docs/security.md#text-from-the-database-is-plain-text).
    for (const QString &actor : actors)
        m_actor->addItem(display::boundedLines(actor, 1, 200), actor);
    m_actor->setEditText(typed);
}

void AuditFilterBar::setActivity(const QString &text)
{
    m_activity->setText(text);
}

} // namespace redrive
