// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/reconciliation_widget.h"

#include "models/db/db_error.h"
#include "models/display_format.h"
#include "models/mismatch_count_model.h"
#include "models/mismatch_model.h"
#include "models/reconciliation_run_model.h"
#include "views/action_result_dialog.h"
#include "views/checked_values_button.h"
#include "views/compensation_request_dialog.h"
#include "views/dead_letter_actions.h"
#include "views/error_presenter.h"
#include "views/reason_dialog.h"
#include "views/result_table_view.h"
#include "views/single_action.h"
#include "views/text_panes.h"

#include <QAction>
#include <QCoreApplication>
#include <QFutureWatcher>
#include <QHBoxLayout>
#include <QHeaderView>
#include <QItemSelectionModel>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPlainTextEdit>
#include <QPushButton>
#include <QSplitter>
#include <QTextBlock>
#include <QToolButton>
#include <QUuid>
#include <QVBoxLayout>
#include <QtConcurrent/QtConcurrentRun>

namespace redrive {

namespace {

constexpr int kTime = ResultTableView::kTimeWidth;
/// How many characters of a payment or order reference the detail title shows.
constexpr qsizetype kMaxTitleValueChars = 120;

// Shows `json` pretty-printed in `edit`, marking the top-level fields whose value differs from
// the same field of `other` (nothing is marked when `other` is missing: everything would be).
// Most lines of a record marked as differing: each mark is a selection the pane paints again on
// every repaint (100,000 of them froze the console for a minute).
constexpr int kMaxMarkedLines = 1000;
// Records (ours and the provider's together) up to this many characters are prepared at once;
// a longer pair is parsed and laid out as text on a pool thread.
constexpr qsizetype kPrepareAtOnceChars = 64 * 1024;
// The pane's dynamic properties: which record it waits for, and whether one is being prepared.
constexpr const char *kRecordGeneration = "redrive_recordGeneration";
constexpr const char *kRecordPending = "redrive_recordPending";

// What a record pane shows: the text (pretty-printed JSON as stored; for a big record, lines
// longer than 2,000 characters in pieces) and the numbers of the lines to mark as differing.
struct PreparedRecord
{
    QString text;
    QList<int> marked;
};

PreparedRecord prepareRecord(const QString &json, const QString &other, const QString &missingNote,
                             bool inPieces)
{
    const auto shown = [inPieces](const QString &text) {
        return inPieces ? display::inPieces(text) : text;
    };
    if (json.isNull())
        return { missingNote, {} };
    const QJsonDocument doc = QJsonDocument::fromJson(json.toUtf8());
    if (!doc.isObject())
        return { shown(json), {} }; // not an object: shown exactly as stored
    const QJsonObject mine = doc.object();
    PreparedRecord r { shown(display::prettyJsonText(json)), {} };
    if (other.isNull())
        return r;
    const QJsonObject theirs = QJsonDocument::fromJson(other.toUtf8()).object();
    bool marking = false;
    int number = 0;
    for (QStringView line : QStringView(r.text).split(QLatin1Char('\n'))) {
        // prettyJson indents by 4 per level: a top-level field starts with exactly 4 spaces.
        if (line.startsWith(QLatin1String("    \""))) {
            const qsizetype end = line.indexOf(QLatin1String("\": "), 5);
            const QString key = end > 5 ? line.mid(5, end - 5).toString() : QString();
            marking = !key.isEmpty() && mine.value(key) != theirs.value(key);
        } else if (!line.startsWith(QLatin1String("     "))) {
            marking = false; // the closing brace
        }
        if (marking && r.marked.size() < kMaxMarkedLines)
            r.marked << number;
        ++number;
    }
    return r;
}

void applyRecord(QPlainTextEdit *edit, const PreparedRecord &r)
{
    const QList<int> marked = r.marked;
    panes::setPlainTextInSlices(edit, r.text, {}, [edit, marked] {
        QTextCharFormat format;
        format.setBackground(QColor(0xff, 0xe0, 0xa8));
        format.setForeground(QColor(0x5c, 0x2b, 0x00));
        format.setProperty(QTextFormat::FullWidthSelection, true);
        QList<QTextEdit::ExtraSelection> marks;
        for (int n : marked) {
            QTextEdit::ExtraSelection mark;
            mark.cursor = QTextCursor(edit->document()->findBlockByNumber(n));
            mark.format = format;
            marks << mark;
        }
        edit->setExtraSelections(marks);
    });
}

// Shows one side of a mismatch in `edit`, marking the top-level fields that differ from `other`
// (docs/architecture.md#long-text-in-panes): small records at once; bigger ones prepared on a
// pool thread and fed into the pane in slices, so a 100,000-field or a 3 MB record never blocks
// the GUI thread. A record asked for later replaces one still being prepared.
void showRecord(QPlainTextEdit *edit, const QString &json, const QString &other,
                const QString &missingNote)
{
    edit->setExtraSelections({});
    const int generation = edit->property(kRecordGeneration).toInt() + 1;
    edit->setProperty(kRecordGeneration, generation);
    if (json.size() + other.size() <= kPrepareAtOnceChars) {
        edit->setProperty(kRecordPending, false);
        applyRecord(edit, prepareRecord(json, other, missingNote, false));
        return;
    }
    edit->setProperty(kRecordPending, true);
    panes::setPlainTextInSlices(
        edit, QCoreApplication::translate("ReconciliationWidget", "Loading the record…"));
    auto *watcher = new QFutureWatcher<PreparedRecord>(edit);
    QObject::connect(watcher, &QFutureWatcher<PreparedRecord>::finished, edit,
                     [edit, watcher, generation] {
                         watcher->deleteLater();
                         if (edit->property(kRecordGeneration).toInt() != generation)
                             return;
                         edit->setProperty(kRecordPending, false);
                         applyRecord(edit, watcher->result());
                     });
    watcher->setFuture(QtConcurrent::run(prepareRecord, json, other, missingNote, true));
}

} // namespace

ReconciliationWidget::ReconciliationWidget(db::DatabaseSession *session, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_runModel(new ReconciliationRunModel(session, this))
    , m_countModel(new MismatchCountModel(session, this))
    , m_mismatchModel(new MismatchModel(session, this))
{
    // Filter bar.
    m_statusButton = new CheckedValuesButton(MismatchModel::allStatuses(), this);
    m_statusButton->setObjectName(QStringLiteral("statusFilter"));
    m_statusButton->setToolTip(tr("Show only mismatches in the checked statuses (none: any)"));
    connect(m_statusButton, &CheckedValuesButton::checkedValuesChanged, this,
            &ReconciliationWidget::applyFilter);

    m_allRunsButton = new QPushButton(tr("All runs"), this);
    m_allRunsButton->setToolTip(tr("Show the mismatches of every run"));
    m_allRunsButton->setEnabled(false);
    connect(m_allRunsButton, &QPushButton::clicked, this, [this] { setRunFilter(0); });

    auto *refreshButton = new QPushButton(tr("Refresh"), this);
    refreshButton->setToolTip(tr("Load runs, counts and mismatches again"));
    connect(refreshButton, &QPushButton::clicked, this, &ReconciliationWidget::refresh);

    m_activity = new QLabel(this);
    m_activity->setTextFormat(Qt::PlainText);

    auto *bar = new QHBoxLayout;
    bar->addWidget(new QLabel(tr("Status:"), this));
    bar->addWidget(m_statusButton);
    bar->addSpacing(8);
    bar->addWidget(m_allRunsButton);
    bar->addSpacing(8);
    bar->addWidget(refreshButton);
    bar->addStretch(1);
    bar->addWidget(m_activity);

    // Runs and counts per kind, side by side.
    m_runView = new ResultTableView(this);
    m_runView->setObjectName(QStringLiteral("runs"));
    m_runView->setModel(m_runModel);
    m_runView->setRowKey(QStringLiteral("id")); // live re-reads keep the place
    m_runView->setSelectionMode(QAbstractItemView::SingleSelection);
    m_runView->showServerOrder(ReconciliationRunModel::StartedAt, Qt::DescendingOrder);
    m_runView->setColumnWidths({ 60, kTime, 90, 85, 70, 90, kTime });
    connect(m_runView->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &ReconciliationWidget::onRunSelectionChanged);

    m_countView = new ResultTableView(this);
    m_countView->setObjectName(QStringLiteral("mismatchKinds"));
    m_countView->setModel(m_countModel);
    m_countView->showServerOrder(MismatchCountModel::Kind, Qt::AscendingOrder);
    m_countView->setToolTip(tr("Check kinds to show only those (none checked: every kind)"));
    m_countView->setColumnWidths({ 170, 60, 60 });

    m_runTitle = panes::title(this);
    m_countTitle = panes::title(this);
    auto *top = new QSplitter(Qt::Horizontal, this);
    top->setChildrenCollapsible(false);
    top->addWidget(panes::titled(m_runTitle, m_runView, top));
    top->addWidget(panes::titled(m_countTitle, m_countView, top));
    top->setStretchFactor(0, 3);
    top->setStretchFactor(1, 1);
    top->setSizes({ 880, 360 });

    // The mismatch list.
    m_mismatchView = new ResultTableView(this);
    m_mismatchView->setObjectName(QStringLiteral("mismatches"));
    m_mismatchView->setModel(m_mismatchModel);
    m_mismatchView->setRowKey(QStringLiteral("id")); // live re-reads keep the place
    m_mismatchView->showServerOrder(MismatchModel::DetectedAt, Qt::DescendingOrder);
    // Payment and order wide enough for a whole reference ("pay_500254", "ord_100254").
    m_mismatchView->setColumnWidths({ kTime, 42, 128, 120, 110, 98, 102, 100, 108, 88, 95, 120 });
    connect(m_mismatchView->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &ReconciliationWidget::showDetail);
    m_mismatchTitle = panes::title(this);

    // The detail pane: our record next to the provider's.
    m_internal = panes::readOnlyText(this, QStringLiteral("internalRecord"));
    m_external = panes::readOnlyText(this, QStringLiteral("externalRecord"));
    auto *records = new QSplitter(Qt::Horizontal, this);
    records->setChildrenCollapsible(false);
    auto *oursTitle = new QLabel(tr("Ours (internal_record)"), this);
    auto *theirsTitle = new QLabel(tr("The provider's (external_record)"), this);
    records->addWidget(panes::titled(oursTitle, m_internal, records));
    records->addWidget(panes::titled(theirsTitle, m_external, records));
    m_detailTitle = panes::title(this);
    m_detailTitle->setObjectName(QStringLiteral("detailTitle"));
    // It names database text (the payment and order references): never as wide as that text, or
    // a 10,000-character reference pushes the refund and resolve buttons off the screen.
    panes::ignoreTextWidth(m_detailTitle);
    auto *detail = new QWidget(this);
    auto *detailLayout = new QVBoxLayout(detail);
    detailLayout->setContentsMargins(0, 6, 0, 0);
    detailLayout->setSpacing(2);
    // Resolve a mismatch: support only; the database re-checks role and version.
    m_resolveMismatch = new QAction(tr("Resolve mismatch…"), this);
    connect(m_resolveMismatch, &QAction::triggered, this, &ReconciliationWidget::resolveMismatch);
    m_mismatchView->addAction(m_resolveMismatch);
    // Refund what a double charge or an amount mismatch owes: support only, on the mismatch
    // selected here (never on a dead letter selected on another tab).
    m_refundMismatch = new QAction(tr("Request refund…"), this);
    m_refundMismatch->setObjectName(QStringLiteral("refundMismatch"));
    connect(m_refundMismatch, &QAction::triggered, this, &ReconciliationWidget::refundMismatch);
    m_mismatchView->addAction(m_refundMismatch);
    auto *resolveButton = new QToolButton(this);
    resolveButton->setDefaultAction(m_resolveMismatch);
    auto *refundButton = new QToolButton(this);
    refundButton->setDefaultAction(m_refundMismatch);
    auto *detailHeader = new QHBoxLayout;
    detailHeader->addWidget(m_detailTitle, 1);
    detailHeader->addWidget(refundButton);
    detailHeader->addWidget(resolveButton);
    detailLayout->addLayout(detailHeader);
    detailLayout->addWidget(records, 1);
    connect(m_mismatchView->selectionModel(), &QItemSelectionModel::selectionChanged, this,
            &ReconciliationWidget::updateResolveAction);
    connect(m_mismatchModel, &QAbstractItemModel::modelReset, this,
            &ReconciliationWidget::updateResolveAction);
    updateResolveAction();

    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->setChildrenCollapsible(false);
    splitter->addWidget(top);
    splitter->addWidget(panes::titled(m_mismatchTitle, m_mismatchView, splitter));
    splitter->addWidget(detail);
    splitter->setStretchFactor(0, 2);
    splitter->setStretchFactor(1, 4);
    splitter->setStretchFactor(2, 3);
    splitter->setSizes({ 200, 330, 230 });

    auto *layout = new QVBoxLayout(this);
    layout->addLayout(bar);
    layout->addWidget(splitter, 1);

    auto loading = [this] {
        m_activity->setText(isLoading() ? tr("Loading…") : QString());
        updateTitles();
        Q_EMIT loadingChanged(isLoading());
    };
    connect(m_runModel, &ResultTableModel::loadingChanged, this, loading);
    connect(m_countModel, &ResultTableModel::loadingChanged, this, loading);
    connect(m_mismatchModel, &KeysetPageModel::loadingChanged, this, loading);
    connect(m_runModel, &ResultTableModel::loaded, this, &ReconciliationWidget::selectRunRow);
    connect(m_countModel, &MismatchCountModel::checkedKindsChanged, this,
            &ReconciliationWidget::applyFilter);
    connect(m_runModel, &ResultTableModel::failed, this,
            [this](const db::DbError &e) { reportError(e, tr("Loading reconciliation runs")); });
    connect(m_countModel, &ResultTableModel::failed, this,
            [this](const db::DbError &e) { reportError(e, tr("Counting mismatches")); });
    connect(m_mismatchModel, &KeysetPageModel::failed, this,
            [this](const db::DbError &e) { reportError(e, tr("Loading mismatches")); });
    connect(m_mismatchModel, &KeysetPageModel::pageLoaded, this, [this] {
        if (m_showAfterLoad <= 0)
            return;
        const int row = m_mismatchModel->rowOf(QStringLiteral("id"), m_showAfterLoad);
        if (row >= 0) {
            m_showAfterLoad = 0;
            selectMismatch(row);
            m_mismatchView->scrollTo(m_mismatchModel->index(row, 0));
        } else if (m_mismatchModel->canFetchMore({})) {
            m_mismatchModel->fetchMore({});
        } else {
            m_showAfterLoad = 0;
        }
    });
    updateTitles();
    showDetail();
}

bool ReconciliationWidget::isLoading() const
{
    return m_runModel->isLoading() || m_countModel->isLoading() || m_mismatchModel->isLoading();
}

void ReconciliationWidget::refresh()
{
    m_runModel->reload();
    m_countModel->reload();
    applyFilter();
}

void ReconciliationWidget::setShowUtc(bool utc)
{
    m_runModel->setShowUtc(utc);
    m_countModel->setShowUtc(utc);
    m_mismatchModel->setShowUtc(utc);
}

void ReconciliationWidget::setRunFilter(qint64 runId)
{
    if (runId == m_runId)
        return;
    m_runId = runId;
    selectRunRow();
    applyFilter();
}

void ReconciliationWidget::setStatusFilter(const QStringList &statuses)
{
    m_statusButton->setCheckedValues(statuses);
    applyFilter();
}

QStringList ReconciliationWidget::statusFilter() const
{
    return m_statusButton->checkedValues();
}

void ReconciliationWidget::selectMismatch(int row)
{
    m_mismatchView->selectRow(row);
}

void ReconciliationWidget::showMismatch(qint64 id, qint64 runId)
{
    m_showAfterLoad = id;
    m_runId = runId;
    selectRunRow();
    m_countModel->setCheckedKinds({}); // every kind
    setStatusFilter({}); // every status; applies the filter
}

bool ReconciliationWidget::isShowingRecords() const
{
    for (const QPlainTextEdit *edit : { m_internal, m_external }) {
        if (edit->property(kRecordPending).toBool() || panes::isFeeding(edit))
            return true;
    }
    return false;
}

QString ReconciliationWidget::internalRecordText() const
{
    return m_internal->toPlainText();
}

QString ReconciliationWidget::externalRecordText() const
{
    return m_external->toPlainText();
}

void ReconciliationWidget::applyFilter()
{
    m_allRunsButton->setEnabled(m_runId > 0);
    const MismatchFilter filter { m_countModel->checkedKinds(), statusFilter(), m_runId };
    m_mismatchModel->setFilter(filter);
    showDetail();
    updateTitles();
}

void ReconciliationWidget::onRunSelectionChanged()
{
    if (m_selectingRun)
        return;
    const QModelIndexList rows = m_runView->selectionModel()->selectedRows();
    setRunFilter(rows.isEmpty() ? 0 : m_runModel->runIdAt(rows.first().row()));
}

void ReconciliationWidget::selectRunRow()
{
    // Mirrors the run filter in the runs table, without filtering again.
    m_selectingRun = true;
    const int row = m_runId > 0 ? m_runModel->rowOfRun(m_runId) : -1;
    if (row >= 0)
        m_runView->selectRow(row);
    else
        m_runView->clearSelection();
    m_selectingRun = false;
}

void ReconciliationWidget::setRoles(const QStringList &redriveRoles)
{
    m_roles = redriveRoles;
    updateResolveAction();
}

void ReconciliationWidget::updateResolveAction()
{
    const bool permitted = m_roles.contains(QStringLiteral("redrive_support"));
    const QModelIndexList rows = m_mismatchView->selectionModel()
        ? m_mismatchView->selectionModel()->selectedRows()
        : QModelIndexList();
    const bool open = rows.size() == 1
        && m_mismatchModel->text(rows.first().row(), QStringLiteral("status"))
            == QLatin1String("open");
    m_resolveMismatch->setEnabled(permitted && open);
    m_resolveMismatch->setText(permitted ? tr("Resolve mismatch…")
                                         : tr("Resolve mismatch… (needs role redrive_support)"));
    m_resolveMismatch->setToolTip(!permitted ? tr("Needs role redrive_support")
                                      : open ? tr("Record how this mismatch was settled (audited)")
                                             : tr("Select one open mismatch first"));
    const qint64 refundable = refundableMismatch();
    m_refundMismatch->setEnabled(permitted && refundable > 0);
    m_refundMismatch->setText(permitted ? tr("Request refund…")
                                        : tr("Request refund… (needs role redrive_support)"));
    m_refundMismatch->setToolTip(
        !permitted       ? tr("Needs role redrive_support")
            : refundable ? tr("Refund the duplicate charge, or the difference the provider "
                              "charged too much (a second person approves it at or above the "
                              "threshold)")
                         : tr("Select one open duplicate_external or amount_mismatch mismatch "
                              "first"));
}

qint64 ReconciliationWidget::refundableMismatch() const
{
    const QModelIndexList rows = m_mismatchView->selectionModel()
        ? m_mismatchView->selectionModel()->selectedRows()
        : QModelIndexList();
    if (rows.size() != 1)
        return 0;
    const int row = rows.first().row();
    const QString kind = m_mismatchModel->text(row, QStringLiteral("kind"));
    if (m_mismatchModel->text(row, QStringLiteral("status")) != QLatin1String("open")
        || (kind != QLatin1String("duplicate_external")
            && kind != QLatin1String("amount_mismatch")))
        return 0;
    return m_mismatchModel->idAt(row);
}

void ReconciliationWidget::refundMismatch()
{
    const qint64 id = refundableMismatch();
    if (id <= 0)
        return;
    auto *dialog = new CompensationRequestDialog(m_session, CompensationTarget::mismatch(id), this);
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowModality(Qt::WindowModal);
    connect(dialog, &CompensationRequestDialog::applied, this,
            [this](const QJsonObject &outcome, const QString &reference) {
                ActionResultDialog::Outcome o = ActionResultDialog::Outcome::fromJson(
                    tr("Request refund"), outcome, reference);
                if (outcome.value(QStringLiteral("applied")).toInt() > 0)
                    o.headline = outcome.value(QStringLiteral("requires_approval")).toBool()
                        ? tr("Requested: it waits for approval by a second person (an "
                             "approver who is not you)")
                        : tr("Requested: below the approval threshold, the worker executes it "
                             "now");
                auto *result = new ActionResultDialog(o, this);
                result->setAttribute(Qt::WA_DeleteOnClose);
                result->setWindowModality(Qt::WindowModal);
                result->show();
                Q_EMIT dialogShown(result);
                refresh();
                Q_EMIT compensationRequested();
            });
    dialog->show();
    Q_EMIT dialogShown(dialog);
}

void ReconciliationWidget::resolveMismatch()
{
    const QModelIndexList rows = m_mismatchView->selectionModel()->selectedRows();
    if (rows.size() != 1)
        return;
    const int row = rows.first().row();
    const qint64 id = m_mismatchModel->text(row, QStringLiteral("id")).toLongLong();
    const int version = m_mismatchModel->text(row, QStringLiteral("version")).toInt();
    auto *dialog = new ReasonDialog(
        tr("Resolve mismatch"),
        tr("Resolve the <b>%1</b> mismatch #%2 for payment <b>%3</b>. Nothing is sent to the "
           "provider: request a compensation for a refund.")
            .arg(m_mismatchModel->text(row, QStringLiteral("kind")).toHtmlEscaped(),
                 QString::number(id),
                 display::boundedLines(m_mismatchModel->text(row, QStringLiteral("payment_ref")), 1,
                                       300)
                     .toHtmlEscaped()),
        tr("Resolve"), this);
    dialog->setChoices(tr("Resolution:"),
                       { { tr("Corrected in our ledger"), QStringLiteral("corrected_internal") },
                         { tr("Settled at the provider"), QStringLiteral("settled_external") },
                         { tr("Confirmed: no action needed"), QStringLiteral("no_action") },
                         { tr("Duplicate report"), QStringLiteral("duplicate") } });
    dialog->setAttribute(Qt::WA_DeleteOnClose);
    dialog->setWindowModality(Qt::WindowModal);
    connect(dialog, &QDialog::accepted, this, [this, dialog, id, version] {
        runSingleAction(m_session, this, tr("Resolve mismatch"),
                        OperatorAction::resolveMismatch(id, version, dialog->choice(),
                                                        dialog->reason(), dialog->ticket()),
                        [this] { refresh(); });
    });
    dialog->show();
}

void ReconciliationWidget::showDetail()
{
    const QModelIndex current = m_mismatchView->selectionModel()->currentIndex();
    if (!current.isValid()) {
        m_detailTitle->setText(tr("Select a mismatch to compare our record with the provider's"));
        m_internal->clear();
        m_external->clear();
        return;
    }
    const QModelIndex first = current.siblingAtColumn(0);
    // The stored references, not the cells' text (already cut to display::kMaxCellChars).
    const QString payment = m_mismatchModel->text(current.row(), QStringLiteral("payment_ref"));
    const QString order = m_mismatchModel->text(current.row(), QStringLiteral("order_ref"));
    // One line, each value bounded (the records below have them whole), in one arg() call so a
    // "%1" inside a reference is shown as it is.
    auto oneLine = [this](const QString &value) {
        return value.isEmpty() ? tr("none") : display::boundedLines(value, 1, kMaxTitleValueChars);
    };
    m_detailTitle->setText(
        tr("Mismatch %1 · %2 · payment %3 · order %4 · run %5")
            .arg(QString::number(first.data(MismatchModel::IdRole).toLongLong()),
                 oneLine(first.data(MismatchModel::KindRole).toString()), oneLine(payment),
                 oneLine(order),
                 QString::number(first.data(MismatchModel::RunIdRole).toLongLong())));
    m_detailTitle->setToolTip(
        display::plainToolTip(tr("payment %1\norder %2").arg(payment, order)));
    const QString internal = first.data(MismatchModel::InternalRecordRole).toString();
    const QString external = first.data(MismatchModel::ExternalRecordRole).toString();
    showRecord(m_internal, internal, external, tr("(no record on our side)"));
    showRecord(m_external, external, internal, tr("(no record at the provider)"));
}

void ReconciliationWidget::updateTitles()
{
    m_runTitle->setText(tr("Reconciliation runs: latest %n, newest first; select one to narrow "
                           "the list",
                           nullptr, m_runModel->rowCount()));
    m_countTitle->setText(tr("Mismatches by kind (all runs); check to filter"));
    QStringList narrowed;
    if (m_runId > 0)
        narrowed << tr("run %1").arg(m_runId);
    const QStringList kinds = m_countModel->checkedKinds();
    if (!kinds.isEmpty())
        narrowed << kinds.join(QStringLiteral(", "));
    const QStringList statuses = statusFilter();
    if (!statuses.isEmpty())
        narrowed << statuses.join(QStringLiteral(", "));
    const QString scope
        = narrowed.isEmpty() ? tr("all") : narrowed.join(QStringLiteral(" \u00b7 "));
    const int rows = m_mismatchModel->rowCount();
    if (m_mismatchModel->isAtEnd())
        m_mismatchTitle->setText(tr("Mismatches (%1): %n, newest first", nullptr, rows).arg(scope));
    else
        m_mismatchTitle->setText(
            tr("Mismatches (%1): %n loaded, newest first; scroll for more", nullptr, rows)
                .arg(scope));
}

void ReconciliationWidget::reportError(const db::DbError &error, const QString &what)
{
    m_activity->setText(tr("%1 failed").arg(what));
    ErrorPresenter::report(this, error, what);
}

} // namespace redrive
