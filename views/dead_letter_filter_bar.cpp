// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/dead_letter_filter_bar.h"

#include "models/display_format.h"

#include <QCollator>
#include <QComboBox>
#include <QDateTimeEdit>
#include <QDialog>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QLocale>
#include <QMenu>
#include <QRegularExpression>
#include <QRegularExpressionValidator>
#include <QTimer>
#include <QToolButton>
#include <QWidgetAction>
#include <algorithm>

namespace redrive {

namespace {

const QStringList kStatuses
    = { QStringLiteral("open"),         QStringLiteral("requeued"),
        QStringLiteral("resolved"),     QStringLiteral("compensation_pending"),
        QStringLiteral("compensating"), QStringLiteral("compensated") };
const QStringList kErrorClasses
    = { QStringLiteral("transient"), QStringLiteral("permanent"), QStringLiteral("ambiguous") };

/// How many characters of a queue or kind a menu entry or the button shows (the value filtered on
/// is the whole one).
constexpr qsizetype kMaxEntryChars = 120;

/// How wide the failure group's name in its chip is at most, in pixels (elided beyond).
constexpr int kMaxChipTextWidth = 320;

/// `value` as a menu entry or button text: its first line, bounded, with "&" kept literal (a menu
/// would take it for a mnemonic).
QString entryText(const QString &value, qsizetype maxChars = kMaxEntryChars)
{
    return display::boundedLines(value, 1, maxChars)
        .replace(QLatin1Char('\n'), QLatin1Char(' '))
        .replace(QLatin1Char('&'), QLatin1String("&&"));
}

enum TimeRange { AnyTime, LastHour, LastDay, LastWeek, Custom };

} // namespace

DeadLetterFilterBar::DeadLetterFilterBar(QWidget *parent)
    : QWidget(parent)
{
    auto *layout = new QHBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(6);

    m_statusButton = makeMenuButton(tr("Status"), &m_statusMenu);
    m_queueButton = makeMenuButton(tr("Queue"), &m_queueMenu);
    m_kindButton = makeMenuButton(tr("Kind"), &m_kindMenu);
    m_classButton = makeMenuButton(tr("Error class"), &m_classMenu);
    addFacetSearch(m_queueMenu, QStringLiteral("queueSearch"));
    addFacetSearch(m_kindMenu, QStringLiteral("kindSearch"));
    fillMenu(m_statusMenu, kStatuses, { QStringLiteral("open") });
    fillMenu(m_classMenu, kErrorClasses, {});

    m_timeRange = new QComboBox(this);
    m_timeRange->addItems(
        { tr("Any time"), tr("Last hour"), tr("Last 24 hours"), tr("Last 7 days"), tr("Custom…") });
    m_timeRange->setToolTip(tr("When the dead letters died"));
    connect(m_timeRange, &QComboBox::activated, this, &DeadLetterFilterBar::onTimeRangeChosen);

    m_search = new QLineEdit(this);
    m_search->setObjectName(QStringLiteral("deadLetterSearch"));
    m_search->setClearButtonEnabled(true);
    m_search->setPlaceholderText(
        tr("Search error message or idempotency key (literal text)  Ctrl+F"));
    m_search->setMinimumWidth(280);
    // A NUL cannot reach the server in a text parameter (libpq cuts the value there, so the
    // search would quietly be for less): a paste holding one is refused whole.
    m_search->setValidator(new QRegularExpressionValidator(
        QRegularExpression(QStringLiteral("[^\\x{0}]*")), m_search));
    m_searchDebounce = new QTimer(this);
    m_searchDebounce->setSingleShot(true);
    m_searchDebounce->setInterval(300);
    connect(m_search, &QLineEdit::textChanged, m_searchDebounce, qOverload<>(&QTimer::start));
    connect(m_searchDebounce, &QTimer::timeout, this, &DeadLetterFilterBar::emitChanged);
    connect(m_search, &QLineEdit::returnPressed, this, [this] {
        m_searchDebounce->stop();
        emitChanged();
    });

    m_groupChip = new QToolButton(this);
    m_groupChip->setObjectName(QStringLiteral("groupChip"));
    m_groupChip->setToolButtonStyle(Qt::ToolButtonTextOnly);
    m_groupChip->setToolTip(tr("Showing one failure group; click to show all"));
    m_groupChip->setStyleSheet(QStringLiteral(
        "QToolButton { background: #e8eefc; border: 1px solid #9fb4e8; border-radius: 9px;"
        " padding: 2px 8px; }"));
    m_groupChip->hide();
    connect(m_groupChip, &QToolButton::clicked, this, [this] { setFailureGroup({}, {}); });

    auto *clearButton = new QToolButton(this);
    clearButton->setText(tr("Reset filters"));
    connect(clearButton, &QToolButton::clicked, this, &DeadLetterFilterBar::clear);

    for (QWidget *w :
         { static_cast<QWidget *>(m_statusButton), static_cast<QWidget *>(m_queueButton),
           static_cast<QWidget *>(m_kindButton), static_cast<QWidget *>(m_classButton),
           static_cast<QWidget *>(m_timeRange) })
        layout->addWidget(w);
    layout->addWidget(m_search, 1);
    layout->addWidget(m_groupChip);
    layout->addWidget(clearButton);
    updateButtonTexts();
}

QToolButton *DeadLetterFilterBar::makeMenuButton(const QString &title, QMenu **menu)
{
    auto *button = new QToolButton(this);
    button->setProperty("filterTitle", title);
    button->setPopupMode(QToolButton::InstantPopup);
    *menu = new QMenu(button);
    button->setMenu(*menu);
    return button;
}

void DeadLetterFilterBar::addFacetSearch(QMenu *menu, const QString &name)
{
    // A thousand queues once filled the screen in columns with about 430 of them reachable: the
    // menu shows kMaxMenuValues entries and a field that narrows them as one types.
    auto *search = new QLineEdit;
    search->setObjectName(name);
    search->setPlaceholderText(tr("Type to narrow…"));
    search->setClearButtonEnabled(true);
    search->setMinimumWidth(240);
    auto *action = new QWidgetAction(menu);
    action->setDefaultWidget(search);
    menu->addAction(action);
    m_facetSearch.insert(menu, search);
    connect(search, &QLineEdit::textChanged, this, [this, menu] { narrowMenu(menu); });
    connect(menu, &QMenu::aboutToShow, search, [search] { search->setFocus(); });
}

void DeadLetterFilterBar::fillMenu(QMenu *menu, const QStringList &values,
                                   const QStringList &checked)
{
    const bool searchable = m_facetSearch.contains(menu);
    for (QAction *a : menu->actions()) {
        if (qobject_cast<QWidgetAction *>(a))
            continue;
        menu->removeAction(a);
        delete a;
    }
    QStringList sorted = values;
    if (searchable) {
        // Natural order: q2 before q10, case aside.
        QCollator collator;
        collator.setNumericMode(true);
        collator.setCaseSensitivity(Qt::CaseInsensitive);
        std::stable_sort(sorted.begin(), sorted.end(), collator);
    }
    for (const QString &value : std::as_const(sorted)) {
        QAction *action = menu->addAction(entryText(value));
        action->setData(value);
        action->setCheckable(true);
        action->setChecked(checked.contains(value));
        connect(action, &QAction::toggled, this, &DeadLetterFilterBar::emitChanged);
    }
    if (values.isEmpty())
        menu->addAction(tr("(none yet)"))->setEnabled(false);
    if (searchable) {
        QAction *more = menu->addAction(QString());
        more->setObjectName(QStringLiteral("moreValues"));
        more->setEnabled(false);
        narrowMenu(menu);
    }
}

void DeadLetterFilterBar::narrowMenu(QMenu *menu)
{
    const QLineEdit *search = m_facetSearch.value(menu);
    const QString needle = search ? search->text() : QString();
    qsizetype shown = 0;
    qsizetype hidden = 0;
    QAction *more = nullptr;
    for (QAction *a : menu->actions()) {
        if (a->objectName() == QLatin1String("moreValues"))
            more = a;
        if (!a->isCheckable())
            continue;
        const bool matches
            = needle.isEmpty() || a->data().toString().contains(needle, Qt::CaseInsensitive);
        // Checked values stay in view whatever is typed.
        const bool visible = a->isChecked() || (matches && shown < kMaxMenuValues);
        if (visible && !a->isChecked())
            ++shown;
        if (matches && !visible)
            ++hidden;
        a->setVisible(visible);
    }
    if (more) {
        more->setText(tr("%1 more: type to narrow").arg(QLocale().toString(hidden)));
        more->setVisible(hidden > 0);
    }
}

QStringList DeadLetterFilterBar::checkedIn(const QMenu *menu)
{
    QStringList out;
    for (const QAction *a : menu->actions())
        if (a->isCheckable() && a->isChecked())
            out << a->data().toString();
    return out;
}

void DeadLetterFilterBar::setFacets(const QStringList &queues, const QStringList &kinds)
{
    const QSignalBlocker b1(m_queueMenu);
    fillMenu(m_queueMenu, queues, checkedIn(m_queueMenu));
    fillMenu(m_kindMenu, kinds, checkedIn(m_kindMenu));
    updateButtonTexts();
}

void DeadLetterFilterBar::updateButtonTexts()
{
    for (auto [button, menu] :
         { std::pair { m_statusButton, m_statusMenu }, std::pair { m_queueButton, m_queueMenu },
           std::pair { m_kindButton, m_kindMenu }, std::pair { m_classButton, m_classMenu } }) {
        const QString title = button->property("filterTitle").toString();
        const QStringList checked = checkedIn(menu);
        button->setText(checked.isEmpty() ? tr("%1: any").arg(title)
                            : checked.size() == 1
                            ? tr("%1: %2").arg(title, entryText(checked.first(), 60))
                            : tr("%1: %2 selected").arg(title, QString::number(checked.size())));
    }
}

DeadLetterFilter DeadLetterFilterBar::filter() const
{
    DeadLetterFilter f;
    f.statuses = checkedIn(m_statusMenu);
    f.queues = checkedIn(m_queueMenu);
    f.kinds = checkedIn(m_kindMenu);
    f.errorClasses = checkedIn(m_classMenu);
    const QDateTime now = QDateTime::currentDateTimeUtc();
    switch (m_timeRange->currentIndex()) {
    case LastHour:
        f.from = now.addSecs(-3600);
        break;
    case LastDay:
        f.from = now.addDays(-1);
        break;
    case LastWeek:
        f.from = now.addDays(-7);
        break;
    case Custom:
        f.from = m_customFrom;
        f.until = m_customUntil;
        break;
    default:
        break;
    }
    f.search = m_search->text();
    f.fingerprint = m_fingerprint;
    return f;
}

void DeadLetterFilterBar::setFailureGroup(const QString &fingerprint, const QString &label)
{
    if (fingerprint == m_fingerprint)
        return;
    m_fingerprint = fingerprint;
    m_groupLabel = label;
    // A bounded prefix, elided to a chip's width, invisible controls as markers: the whole
    // name made the main window 19,873 px wide (docs/security.md#text-from-the-database-is-plain-
    // text). The tooltip holds more of it.
    const QString shown = display::boundedLines(label, 1, kMaxEntryChars)
                              .replace(QLatin1Char('\n'), QLatin1Char(' '));
    m_groupChip->setText(tr("Group: %1  \u2715")
                             .arg(m_groupChip->fontMetrics()
                                      .elidedText(shown, Qt::ElideRight, kMaxChipTextWidth)
                                      .replace(QLatin1Char('&'), QLatin1String("&&"))));
    m_groupChip->setToolTip(
        display::plainToolTip(tr("Showing one failure group: %1\nClick to show all.").arg(label),
                              display::kMaxCellChars));
    m_groupChip->setVisible(!fingerprint.isEmpty());
    emitChanged();
}

void DeadLetterFilterBar::focusSearch()
{
    m_search->setFocus(Qt::ShortcutFocusReason);
    m_search->selectAll();
}

void DeadLetterFilterBar::clear()
{
    {
        const QSignalBlocker block(this);
        for (QMenu *menu : { m_statusMenu, m_queueMenu, m_kindMenu, m_classMenu })
            for (QAction *a : menu->actions()) {
                const QSignalBlocker actionBlock(a);
                a->setChecked(menu == m_statusMenu
                              && a->data().toString() == QLatin1String("open"));
            }
        m_timeRange->setCurrentIndex(AnyTime);
        m_lastTimeIndex = AnyTime;
        const QSignalBlocker searchBlock(m_search);
        m_search->clear();
        m_fingerprint.clear();
        m_groupChip->hide();
    }
    emitChanged();
}

void DeadLetterFilterBar::showSearch(const QString &text)
{
    {
        const QSignalBlocker block(this);
        for (QMenu *menu : { m_statusMenu, m_queueMenu, m_kindMenu, m_classMenu })
            for (QAction *a : menu->actions()) {
                const QSignalBlocker actionBlock(a);
                a->setChecked(false);
            }
        m_timeRange->setCurrentIndex(AnyTime);
        m_lastTimeIndex = AnyTime;
        const QSignalBlocker searchBlock(m_search);
        m_search->setText(text);
        m_fingerprint.clear();
        m_groupChip->hide();
    }
    emitChanged();
}

void DeadLetterFilterBar::onTimeRangeChosen(int index)
{
    if (index == Custom) {
        QDialog dialog(this);
        dialog.setWindowTitle(tr("Custom time range"));
        auto *form = new QFormLayout(&dialog);
        auto *from
            = new QDateTimeEdit(m_customFrom.isValid() ? m_customFrom.toLocalTime()
                                                       : QDateTime::currentDateTime().addDays(-1),
                                &dialog);
        auto *until = new QDateTimeEdit(m_customUntil.isValid() ? m_customUntil.toLocalTime()
                                                                : QDateTime::currentDateTime(),
                                        &dialog);
        for (QDateTimeEdit *e : { from, until }) {
            e->setCalendarPopup(true);
            e->setDisplayFormat(QStringLiteral("yyyy-MM-dd HH:mm:ss"));
        }
        form->addRow(tr("From (local time)"), from);
        form->addRow(tr("Until (local time)"), until);
        auto *buttons
            = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, &dialog);
        connect(buttons, &QDialogButtonBox::accepted, &dialog, &QDialog::accept);
        connect(buttons, &QDialogButtonBox::rejected, &dialog, &QDialog::reject);
        form->addRow(buttons);
        if (dialog.exec() != QDialog::Accepted) {
            m_timeRange->setCurrentIndex(m_lastTimeIndex);
            return;
        }
        m_customFrom = from->dateTime().toUTC();
        m_customUntil = until->dateTime().toUTC();
        m_timeRange->setItemText(
            Custom,
            tr("%1 – %2").arg(from->dateTime().toString(QStringLiteral("MM-dd HH:mm")),
                              until->dateTime().toString(QStringLiteral("MM-dd HH:mm"))));
    }
    m_lastTimeIndex = index;
    emitChanged();
}

void DeadLetterFilterBar::emitChanged()
{
    updateButtonTexts();
    Q_EMIT filterChanged(filter());
}

} // namespace redrive
