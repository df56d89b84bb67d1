// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/bulk_actions_dialog.h"

#include "models/bulk_action_list_model.h"
#include "models/display_format.h"
#include "models/operator_action.h"
#include "views/error_presenter.h"
#include "views/reason_dialog.h"
#include "views/result_table_view.h"
#include "views/single_action.h"

#include <QCheckBox>
#include <QDialogButtonBox>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLayout>
#include <QPushButton>
#include <QVBoxLayout>

namespace redrive {

namespace {

// The roles that may run a bulk of `action`, as the database checks them (redrive.bulk_roles).
QStringList rolesFor(const QString &action)
{
    return action == QLatin1String("requeue")
        ? QStringList { QStringLiteral("redrive_oncall") }
        : QStringList { QStringLiteral("redrive_oncall"), QStringLiteral("redrive_support") };
}

} // namespace

BulkActionsDialog::BulkActionsDialog(db::DatabaseSession *session, const QStringList &redriveRoles,
                                     bool mineOnly, QWidget *parent)
    : QDialog(parent)
    , m_session(session)
    , m_roles(redriveRoles)
    , m_model(new BulkActionListModel(session, this))
{
    setWindowTitle(tr("Unfinished bulk actions"));
    m_model->setMineOnly(mineOnly);
    m_summary = new QLabel(this);
    m_summary->setObjectName(QStringLiteral("summary"));
    m_summary->setTextFormat(Qt::PlainText);
    m_summary->setWordWrap(true);
    m_view = new ResultTableView(this);
    m_view->setObjectName(QStringLiteral("bulkActions"));
    m_view->setModel(m_model);
    m_view->setColumnWidths({ 80, 130, 80, 140, 150, 260, 170, 170 });
    m_everyone = new QCheckBox(tr("Show every operator's"), this);
    m_everyone->setChecked(!mineOnly);
    m_resume = new QPushButton(tr("Resume"), this);
    m_takeOver = new QPushButton(tr("Take over…"), this);
    m_abandon = new QPushButton(tr("Give up…"), this);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    buttons->addButton(m_resume, QDialogButtonBox::ActionRole);
    buttons->addButton(m_takeOver, QDialogButtonBox::ActionRole);
    buttons->addButton(m_abandon, QDialogButtonBox::ActionRole);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_summary);
    layout->addWidget(m_view, 1);
    layout->addWidget(m_everyone);
    layout->addWidget(buttons);
    resize(1000, 360);

    connect(m_everyone, &QCheckBox::toggled, this, [this](bool everyone) {
        m_model->setMineOnly(!everyone);
        reload();
    });
    connect(m_model, &ResultTableModel::loaded, this, [this] {
        m_summary->setText(
            m_model->rowCount() == 0
                ? tr("No unfinished bulk actions.")
                : tr("%n bulk action(s) stopped before every chunk was applied. Each chunk is "
                     "applied at most once: resuming runs only the chunks not applied yet, on "
                     "the list frozen when it was confirmed.",
                     nullptr, m_model->rowCount()));
        // Lay out again now: the new text may need a second line, and until the next layout
        // pass the label kept the height of the old one and showed the middle of two clipped
        // lines.
        QDialog::layout()->activate();
        updateButtons();
    });
    connect(m_model, &ResultTableModel::failed, this, [this](const db::DbError &e) {
        ErrorPresenter::report(this, e, tr("Loading bulk actions"));
    });
    connect(m_view->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &BulkActionsDialog::updateButtons);
    connect(m_resume, &QPushButton::clicked, this, [this] {
        const int row = selectedRow();
        if (row < 0)
            return;
        Q_EMIT resumeRequested(m_model->bulkId(row), m_model->text(row, QStringLiteral("action")));
        accept();
    });
    connect(m_takeOver, &QPushButton::clicked, this, &BulkActionsDialog::takeOver);
    connect(m_abandon, &QPushButton::clicked, this, &BulkActionsDialog::abandon);
    updateButtons();
    reload();
}

void BulkActionsDialog::reload()
{
    m_model->reload();
}

int BulkActionsDialog::selectedRow() const
{
    const QModelIndexList rows = m_view->selectionModel()->selectedRows();
    return rows.size() == 1 ? rows.first().row() : -1;
}

void BulkActionsDialog::updateButtons()
{
    const int row = selectedRow();
    bool permitted = false;
    if (row >= 0)
        for (const QString &role : rolesFor(m_model->text(row, QStringLiteral("action"))))
            permitted = permitted || m_roles.contains(role);
    const bool mine = row >= 0 && m_model->isMine(row);
    const bool running = row >= 0 && m_model->isRunning(row);
    m_resume->setEnabled(permitted && mine && !running);
    m_abandon->setEnabled(permitted && mine && !running);
    m_takeOver->setEnabled(permitted && row >= 0 && !mine && !running);
    const QString why = row < 0 ? tr("Select one bulk action first")
        : running               ? tr("A console is running it now")
        : !permitted
        ? tr("Needs a role that may run its action: %1")
              .arg(rolesFor(m_model->text(row, QStringLiteral("action"))).join(tr(" or ")))
        : QString();
    for (QPushButton *button : { m_resume, m_abandon, m_takeOver })
        button->setToolTip(why);
    if (why.isEmpty()) {
        m_resume->setToolTip(mine ? tr("Run the chunks not applied yet")
                                  : tr("Not yours: take it over first"));
        m_abandon->setToolTip(mine ? tr("Never apply the remaining chunks")
                                   : tr("Only its owner gives it up"));
        m_takeOver->setToolTip(mine ? tr("Already yours") : tr("Become its owner, then resume it"));
    }
}

void BulkActionsDialog::takeOver()
{
    const int row = selectedRow();
    if (row < 0)
        return;
    const QUuid bulkId = m_model->bulkId(row);
    const QString owner = m_model->text(row, QStringLiteral("actor"));
    // The dialog's text is rich (the owner in bold): each value bounded, its invisible controls
    // shown as markers, then escaped (docs/security.md#text-from-the-database-is-plain-text).
    auto shown = [](const QString &value) {
        return display::boundedLines(value, 1, 200).toHtmlEscaped();
    };
    auto *dialog = new ReasonDialog(
        tr("Take over bulk action"),
        tr("Take over the %1 of %2 targets started by <b>%3</b> (%4 of %5 chunks applied). "
           "You become its owner and resume the rest; %3 can no longer run it.")
            .arg(shown(m_model->text(row, QStringLiteral("action"))),
                 shown(m_model->text(row, QStringLiteral("target_count"))), shown(owner),
                 shown(m_model->text(row, QStringLiteral("chunks_done"))),
                 shown(m_model->text(row, QStringLiteral("chunk_count")))),
        tr("Take over"), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowModality(Qt::WindowModal);
    connect(dialog, &QDialog::accepted, this, [this, dialog, bulkId, owner] {
        runSingleAction(
            m_session, this, tr("Take over bulk action"),
            OperatorAction::takeOverBulk(bulkId, owner, dialog->reason(), dialog->ticket()),
            [this] { reload(); });
    });
    dialog->show();
}

void BulkActionsDialog::abandon()
{
    const int row = selectedRow();
    if (row < 0)
        return;
    const QUuid bulkId = m_model->bulkId(row);
    auto *dialog = new ReasonDialog(
        tr("Give up bulk action"),
        tr("Give up this %1: the %2 of %3 chunks applied stay applied, the others are never "
           "applied.")
            .arg(m_model->text(row, QStringLiteral("action")).toHtmlEscaped(),
                 m_model->text(row, QStringLiteral("chunks_done")).toHtmlEscaped(),
                 m_model->text(row, QStringLiteral("chunk_count")).toHtmlEscaped()),
        tr("Give up"), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowModality(Qt::WindowModal);
    connect(dialog, &QDialog::accepted, this, [this, dialog, bulkId] {
        runSingleAction(m_session, this, tr("Give up bulk action"),
                        OperatorAction::abandonBulk(bulkId, dialog->reason(), dialog->ticket()),
                        [this] { reload(); });
    });
    dialog->show();
}

} // namespace redrive
