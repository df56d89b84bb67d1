// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/dead_letter_filter.h"

#include <QHash>
#include <QWidget>

class QComboBox;
class QLineEdit;
class QMenu;
class QTimer;
class QToolButton;

namespace redrive {

/// The row of filters above the dead-letter table: status, queue, kind and
/// error class as checkable menus, a time range (1 h, 24 h, 7 d, custom), a literal search over
/// error message and idempotency key, and the failure group chosen in the groups panel.
/// Emits filterChanged() once per change (typing is debounced by 300 ms).
class DeadLetterFilterBar : public QWidget
{
    Q_OBJECT
public:
    explicit DeadLetterFilterBar(QWidget *parent = nullptr);

    DeadLetterFilter filter() const;
    /// Offers these queues and kinds in their menus (from the database), keeping checked ones:
    /// in natural order (QCollator numeric mode: q2 before q10), kMaxMenuValues at a time under a
    /// field that narrows them as one types; long values are shown bounded, filtered on whole.
    void setFacets(const QStringList &queues, const QStringList &kinds);
    /// Narrows to one failure group (empty clears it); `label` names it on the chip.
    void setFailureGroup(const QString &fingerprint, const QString &label);
    /// How the chosen failure group is named (empty when none is chosen).
    QString failureGroupLabel() const { return m_fingerprint.isEmpty() ? QString() : m_groupLabel; }
    /// Moves keyboard focus to the search field and selects its text (Ctrl+F).
    void focusSearch();
    /// Back to the defaults (open dead letters, any time, no search, no group).
    void clear();
    /// Every dead letter, whatever its status, queue, kind, class, time and group, whose error
    /// message or idempotency key contains `text` (literally): the link from a key to the dead
    /// letters holding it.
    void showSearch(const QString &text);

    /// How many values a queue or kind menu shows at once (besides the checked ones).
    static constexpr qsizetype kMaxMenuValues = 30;

Q_SIGNALS:
    void filterChanged(const redrive::DeadLetterFilter &filter);

private:
    QToolButton *makeMenuButton(const QString &title, QMenu **menu);
    /// Puts a field named `name` at the top of `menu` that narrows its values as one types.
    void addFacetSearch(QMenu *menu, const QString &name);
    /// Shows the values of `menu` that contain its field's text (any case), the checked ones
    /// always and at most kMaxMenuValues others; counts the rest in a disabled last entry.
    void narrowMenu(QMenu *menu);
    void fillMenu(QMenu *menu, const QStringList &values, const QStringList &checked);
    static QStringList checkedIn(const QMenu *menu);
    void updateButtonTexts();
    void emitChanged();
    void onTimeRangeChosen(int index);

    QHash<QMenu *, QLineEdit *> m_facetSearch; ///< The queue and kind menus' narrowing fields.
    QToolButton *m_statusButton = nullptr;
    QToolButton *m_queueButton = nullptr;
    QToolButton *m_kindButton = nullptr;
    QToolButton *m_classButton = nullptr;
    QMenu *m_statusMenu = nullptr;
    QMenu *m_queueMenu = nullptr;
    QMenu *m_kindMenu = nullptr;
    QMenu *m_classMenu = nullptr;
    QComboBox *m_timeRange = nullptr;
    QLineEdit *m_search = nullptr;
    QToolButton *m_groupChip = nullptr;
    QString m_groupLabel;
    QTimer *m_searchDebounce = nullptr;
    QDateTime m_customFrom;
    QDateTime m_customUntil;
    QString m_fingerprint;
    int m_lastTimeIndex = 0;
};

} // namespace redrive
