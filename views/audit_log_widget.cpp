// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/audit_log_widget.h"

#include "models/audit_entry_model.h"
#include "models/audit_export_job.h"
#include "models/audit_verify_job.h"
#include "models/console_reads.h"
#include "models/db/database_session.h"
#include "models/db/db_error.h"
#include "models/display_format.h"
#include "views/audit_entry_detail.h"
#include "views/audit_filter_bar.h"
#include "views/error_presenter.h"
#include "views/result_table_view.h"
#include "views/text_panes.h"

#include <QDir>
#include <QElapsedTimer>
#include <QFileDialog>
#include <QFileInfo>
#include <QHBoxLayout>
#include <QItemSelectionModel>
#include <QLabel>
#include <QProgressBar>
#include <QPushButton>
#include <QSplitter>
#include <QTimeZone>
#include <QTimer>
#include <QVBoxLayout>
#include <algorithm>

namespace redrive {

namespace {

constexpr int kTime = ResultTableView::kTimeWidth;
constexpr int kActorLimit = 500;

} // namespace

AuditLogWidget::AuditLogWidget(db::DatabaseSession *session, QWidget *parent)
    : QWidget(parent)
    , m_session(session)
    , m_model(new AuditEntryModel(session, this))
    , m_exportJob(new AuditExportJob(session, this))
    , m_verifyJob(new AuditVerifyJob(this))
    , m_verifyClock(std::make_unique<QElapsedTimer>())
{
    m_filterBar = new AuditFilterBar(this);
    connect(m_filterBar, &AuditFilterBar::applyRequested, this, &AuditLogWidget::applyFilter);
    connect(m_filterBar, &AuditFilterBar::clearRequested, this, &AuditLogWidget::clearFilter);
    connect(m_filterBar, &AuditFilterBar::refreshRequested, this, &AuditLogWidget::reload);
    connect(m_filterBar, &AuditFilterBar::timeEdited, this, [this] {
        if (filter() != m_model->filter())
            applyFilter();
    });

    auto *layout = new QVBoxLayout(this);
    layout->addWidget(m_filterBar);
    layout->addLayout(buildVerifyBar());
    layout->addLayout(buildExportBar());
    layout->addWidget(buildListAndDetail(), 1);

    connect(m_model, &KeysetPageModel::loadingChanged, this, [this] {
        m_filterBar->setActivity(isLoading() ? tr("Loading…") : QString());
        updateTitle();
        Q_EMIT loadingChanged(isLoading());
    });
    connect(m_model, &AuditEntryModel::totalChanged, this, &AuditLogWidget::updateTitle);
    connect(m_model, &KeysetPageModel::failed, this,
            [this](const db::DbError &e) { reportError(e, tr("Loading audit entries")); });
    connect(m_model, &QAbstractItemModel::modelReset, this,
            [this] { clearDetail(tr("Select an entry to see its details")); });
    connect(m_model, &KeysetPageModel::pageLoaded, this, [this] {
        const int row = m_selectAfterLoad > 0 ? m_model->rowOfId(m_selectAfterLoad) : -1;
        if (row >= 0)
            selectEntry(row);
        m_selectAfterLoad = 0;
    });

    setVerifyState(m_verify);
    updateTitle();
    clearDetail(tr("Select an entry to see its details"));
}

AuditLogWidget::~AuditLogWidget() = default;

// "Verify chain", its progress, result, Cancel and "Show entry", and "Export…".
QHBoxLayout *AuditLogWidget::buildVerifyBar()
{
    m_verifyButton = new QPushButton(tr("Verify chain"), this);
    m_verifyButton->setObjectName(QStringLiteral("verifyChain"));
    m_verifyButton->setToolTip(tr("Read the raw audit log and recompute every entry's hash in this "
                                  "console, trusting no server function; name the first entry "
                                  "that does not hold (runs on its own connection)"));
    m_verifyProgress = new QProgressBar(this);
    m_verifyProgress->setObjectName(QStringLiteral("verifyProgress"));
    m_verifyProgress->setRange(0, 0); // busy until the entries are counted
    m_verifyProgress->setMaximumWidth(120);
    m_verifyProgress->setTextVisible(false);
    m_verifyProgress->hide();
    m_verifyLabel = new QLabel(this);
    m_verifyLabel->setObjectName(QStringLiteral("verifyResult"));
    m_verifyLabel->setTextFormat(Qt::PlainText);
    m_verifyLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_verifyCancel = new QPushButton(tr("Cancel"), this);
    m_verifyCancel->setObjectName(QStringLiteral("verifyCancel"));
    m_verifyCancel->setToolTip(tr("Stop the verification"));
    m_verifyCancel->hide();
    m_showBroken = new QPushButton(this);
    m_showBroken->hide();
    m_exportButton = new QPushButton(tr("Export…"), this);
    m_exportButton->setObjectName(QStringLiteral("export"));
    m_exportButton->setToolTip(tr("Write the entries of the current filter to CSV or JSON Lines, "
                                  "with the chain head"));
    m_verifyTicker = new QTimer(this);
    m_verifyTicker->setInterval(1000);
    connect(m_verifyTicker, &QTimer::timeout, this, [this] { setVerifyState(m_verify); });
    connect(m_verifyJob, &AuditVerifyJob::progress, this, &AuditLogWidget::onVerifyProgress);
    connect(m_verifyJob, &AuditVerifyJob::finished, this, &AuditLogWidget::onVerifyFinished);
    connect(m_verifyJob, &AuditVerifyJob::failed, this, &AuditLogWidget::onVerifyFailed);
    connect(m_verifyButton, &QPushButton::clicked, this, &AuditLogWidget::verifyChain);
    connect(m_verifyCancel, &QPushButton::clicked, this, &AuditLogWidget::cancelVerify);
    connect(m_showBroken, &QPushButton::clicked, this, [this] {
        if (m_verify.brokenId <= 0)
            return;
        const int row = m_model->rowOfId(m_verify.brokenId);
        if (row >= 0)
            selectEntry(row);
        else
            showEntry(m_verify.brokenId);
    });
    connect(m_exportButton, &QPushButton::clicked, this, &AuditLogWidget::exportWithDialog);

    auto *verifyBar = new QHBoxLayout;
    verifyBar->addWidget(m_verifyButton);
    verifyBar->addWidget(m_verifyProgress);
    verifyBar->addWidget(m_verifyLabel, 1);
    verifyBar->addWidget(m_verifyCancel);
    verifyBar->addWidget(m_showBroken);
    verifyBar->addSpacing(12);
    verifyBar->addWidget(m_exportButton);
    return verifyBar;
}

// The export's progress, result and Cancel, hidden until an export runs.
QHBoxLayout *AuditLogWidget::buildExportBar()
{
    m_exportProgress = new QProgressBar(this);
    m_exportProgress->setMaximumWidth(160);
    m_exportProgress->hide();
    m_exportLabel = new QLabel(this);
    m_exportLabel->setObjectName(QStringLiteral("exportResult"));
    m_exportLabel->setTextFormat(Qt::PlainText);
    m_exportLabel->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_exportLabel->setWordWrap(true);
    m_exportLabel->hide();
    m_exportCancel = new QPushButton(tr("Cancel export"), this);
    m_exportCancel->hide();
    connect(m_exportCancel, &QPushButton::clicked, m_exportJob, &AuditExportJob::cancel);
    connect(m_exportJob, &AuditExportJob::progress, this, &AuditLogWidget::onExportProgress);
    connect(m_exportJob, &AuditExportJob::finished, this, &AuditLogWidget::onExportFinished);
    connect(m_exportJob, &AuditExportJob::failed, this, [this](const db::DbError &error) {
        m_exportProgress->hide();
        m_exportCancel->hide();
        m_exportButton->setEnabled(true);
        m_exportLabel->setText(tr("Export failed; no file was written: %1").arg(error.message()));
        ErrorPresenter::report(this, error, tr("Exporting audit entries"));
        Q_EMIT exportFinished(false);
    });
    auto *exportBar = new QHBoxLayout;
    exportBar->addWidget(m_exportProgress);
    exportBar->addWidget(m_exportLabel, 1);
    exportBar->addWidget(m_exportCancel);
    return exportBar;
}

// The entries (newest first) over the selected entry's details.
QSplitter *AuditLogWidget::buildListAndDetail()
{
    m_view = new ResultTableView(this);
    m_view->setObjectName(QStringLiteral("auditEntries"));
    m_view->setModel(m_model);
    m_view->setRowKey(QStringLiteral("id")); // live re-reads keep the place
    m_view->setSelectionMode(QAbstractItemView::SingleSelection);
    m_view->showServerOrder(AuditEntryModel::Id, Qt::DescendingOrder);
    m_view->setColumnWidths({ 64, kTime, 120, 190, 140, 190, 280, 80, 150 });
    connect(m_view->selectionModel(), &QItemSelectionModel::currentRowChanged, this,
            &AuditLogWidget::onCurrentRowChanged);
    m_title = panes::title(this);
    auto *list = new QWidget(this);
    auto *listLayout = new QVBoxLayout(list);
    listLayout->setContentsMargins(0, 4, 0, 0);
    listLayout->setSpacing(4);
    listLayout->addWidget(m_title);
    listLayout->addWidget(m_view, 1);

    // The details of one entry.
    m_detail = new AuditEntryDetail(this);

    auto *splitter = new QSplitter(Qt::Vertical, this);
    splitter->setChildrenCollapsible(false);
    splitter->addWidget(list);
    splitter->addWidget(m_detail);
    splitter->setStretchFactor(0, 3);
    splitter->setStretchFactor(1, 2);
    splitter->setSizes({ 360, 300 });
    return splitter;
}

AuditDiffModel *AuditLogWidget::diffModel() const
{
    return m_detail->diffModel();
}

bool AuditLogWidget::isLoading() const
{
    return m_model->isLoading() || m_detailLoading;
}

AuditFilter AuditLogWidget::filter() const
{
    return m_filterBar->filter();
}

void AuditLogWidget::setFilter(const AuditFilter &filter)
{
    m_filterBar->setFilter(filter);
    // The time edits hold minutes; a filter with seconds is applied exactly as given.
    AuditFilter applied = this->filter();
    applied.from = filter.from;
    applied.until = filter.until;
    m_model->setFilter(applied);
    updateTitle();
}

void AuditLogWidget::reload()
{
    loadActors();
    applyFilter();
}

void AuditLogWidget::applyFilter()
{
    m_model->setFilter(filter());
    updateTitle();
}

void AuditLogWidget::clearFilter()
{
    setFilter(AuditFilter());
}

void AuditLogWidget::setShowUtc(bool utc)
{
    m_showUtc = utc;
    m_model->setShowUtc(utc);
    if (m_shownId > 0)
        showEntry(m_shownId);
}

void AuditLogWidget::loadActors()
{
    reads::auditActors(m_session, this, kActorLimit,
                       [this](const db::DbExpected<QStringList> &actors) {
                           if (!actors)
                               return; // the list's own request reports what is wrong
                           m_filterBar->setActors(*actors);
                       });
}

void AuditLogWidget::selectEntry(int row)
{
    m_view->selectRow(row);
    m_view->setCurrentIndex(m_model->index(row, 0));
}

void AuditLogWidget::showEntryInList(qint64 id, const QDateTime &at)
{
    const int row = m_model->rowOfId(id);
    if (row >= 0) {
        selectEntry(row);
        return;
    }
    if (!at.isValid()) {
        m_view->clearSelection(); // the pane must not show one entry with another selected
        showEntry(id);
        return;
    }
    AuditFilter narrowed;
    narrowed.from = QDateTime::fromMSecsSinceEpoch(at.toMSecsSinceEpoch(), QTimeZone::utc());
    narrowed.until = narrowed.from.addMSecs(1);
    m_selectAfterLoad = id;
    setFilter(narrowed);
}

void AuditLogWidget::onCurrentRowChanged()
{
    const QModelIndex current = m_view->selectionModel()->currentIndex();
    if (!current.isValid())
        return;
    const qint64 id = m_model->idAt(current.row());
    if (id > 0 && id != m_shownId)
        showEntry(id);
}

void AuditLogWidget::showEntry(qint64 id)
{
    const quint64 generation = ++m_detailGeneration;
    m_detailLoading = true;
    Q_EMIT loadingChanged(true);
    m_detail->setTitle(tr("Entry %1: loading…").arg(id));
    reads::auditEntryDetail(m_session, this, id,
                            [this, generation, id](const db::DbExpected<db::ResultSet> &rows) {
                                if (generation != m_detailGeneration)
                                    return;
                                m_detailLoading = false;
                                Q_EMIT loadingChanged(isLoading());
                                if (!rows) {
                                    clearDetail(tr("Entry %1 could not be loaded").arg(id));
                                    reportError(rows.error(), tr("Loading audit entry %1").arg(id));
                                    return;
                                }
                                if (rows->rowCount() == 0) {
                                    clearDetail(tr("Entry %1 does not exist (any more)").arg(id));
                                    return;
                                }
                                showDetail(rows.value());
                            });
}

void AuditLogWidget::showDetail(const db::ResultSet &rows)
{
    const qint64 id = rows.bigInt(0, rows.columnIndex(QStringLiteral("id"))).value_or(0);
    const bool breaksHere
        = m_verify.state == VerifyResult::State::Broken && m_verify.brokenId == id;
    m_shownId = m_detail->show(rows, m_showUtc, breaksHere ? m_verify.problem : QString());
}

void AuditLogWidget::clearDetail(const QString &title)
{
    ++m_detailGeneration;
    if (m_detailLoading) {
        m_detailLoading = false;
        Q_EMIT loadingChanged(isLoading());
    }
    m_shownId = 0;
    m_detail->clear(title);
}

QString AuditLogWidget::detailText() const
{
    return m_detail->text();
}

void AuditLogWidget::updateTitle()
{
    const AuditFilter &f = m_model->filter();
    const int rows = m_model->rowCount();
    const qint64 total = m_model->total();
    QString count;
    if (m_model->isAtEnd())
        count = tr("%n entries", nullptr, rows);
    else if (total < 0)
        count = tr("%n loaded (counting…)", nullptr, rows);
    else
        count = tr("%1 of %2%3 loaded")
                    .arg(rows)
                    .arg(total)
                    .arg(m_model->totalIsCapped() ? tr("+") : QString());
    m_title->setText(
        tr("Audit entries (%1): %2, newest first%3")
            .arg(f.describe(), count, m_model->isAtEnd() ? QString() : tr("; scroll for more")));
}

// --- Verification ---------------------------------------------------------------------------

void AuditLogWidget::verifyChain()
{
    if (isVerifying())
        return;
    // The verifier reads the raw audit log on a connection of its own, in a worker thread, and
    // recomputes the chain here, trusting no server function (docs/audit-chain.md).
    if (!m_verifyJob->start(m_session->primarySettings()))
        return;
    VerifyResult running;
    running.state = VerifyResult::State::Running;
    m_verifyChecked = 0;
    m_verifyTotal = -1;
    m_verifyClock->start();
    m_verifyTicker->start();
    setVerifyState(running);
}

void AuditLogWidget::cancelVerify()
{
    if (!isVerifying())
        return;
    m_verifyJob->cancel(); // finished(true) follows once the worker has stopped
    m_verifyLabel->setText(tr("Canceling the verification…"));
}

void AuditLogWidget::onVerifyProgress(qint64 checked, qint64 total)
{
    if (!isVerifying())
        return;
    m_verifyChecked = checked;
    m_verifyTotal = total;
    setVerifyState(m_verify);
}

void AuditLogWidget::onVerifyFinished(bool canceled)
{
    VerifyResult result;
    if (canceled) {
        result.state = VerifyResult::State::Canceled;
        finishVerify(result);
        return;
    }
    const AuditChainReport &report = m_verifyJob->report();
    result.problems = report.problems;
    result.head.id = report.headId;
    result.head.hash = QString::fromLatin1(report.headHash);
    result.head.entries = report.checked;
    result.startText = report.startText();
    if (report.holds()) {
        result.state = VerifyResult::State::Ok;
        result.checked = report.checked;
    } else {
        result.state = VerifyResult::State::Broken;
        result.brokenId = report.first().id;
        result.problem = report.first().message();
        result.checked = report.first().checkedBefore;
    }
    finishVerify(result);
}

void AuditLogWidget::onVerifyFailed(const db::DbError &error)
{
    VerifyResult failed;
    failed.state = VerifyResult::State::Failed;
    failed.problem = error.message();
    finishVerify(failed);
    reportError(error, tr("Verifying the audit chain"));
}

void AuditLogWidget::finishVerify(const VerifyResult &result)
{
    m_verifyTicker->stop();
    setVerifyState(result);
    if (m_shownId > 0)
        showEntry(m_shownId); // its "the chain breaks here" line follows the new result
    Q_EMIT verifyFinished();
}

void AuditLogWidget::setVerifyState(const VerifyResult &result)
{
    m_verify = result;
    const bool running = result.state == VerifyResult::State::Running;
    m_verifyButton->setEnabled(!running);
    m_verifyProgress->setVisible(running);
    m_verifyCancel->setVisible(running);
    m_showBroken->setVisible(result.state == VerifyResult::State::Broken);
    QString style;
    QString text;
    switch (result.state) {
    case VerifyResult::State::NotRun:
        text = tr("The chain has not been verified in this session.");
        break;
    case VerifyResult::State::Running:
        if (m_verifyTotal >= 0) {
            m_verifyProgress->setRange(0, 1000);
            m_verifyProgress->setValue(m_verifyTotal > 0 ? int(std::min<qint64>(
                                           1000, m_verifyChecked * 1000 / m_verifyTotal))
                                                         : 0);
            text = tr("Verifying the audit chain… %1 of %2 entries checked, %3 s")
                       .arg(locale().toString(m_verifyChecked), locale().toString(m_verifyTotal))
                       .arg(m_verifyClock->elapsed() / 1000);
        } else {
            m_verifyProgress->setRange(0, 0); // busy until the entries are counted
            text = tr("Verifying the audit chain… %1 s").arg(m_verifyClock->elapsed() / 1000);
        }
        break;
    case VerifyResult::State::Ok:
        text = tr("Chain OK: %n entries verified in this console; head: entry %1, hash %2", nullptr,
                  int(result.checked))
                   .arg(result.head.id)
                   .arg(result.head.hash);
        if (!result.startText.isEmpty())
            text += QStringLiteral(";\n") + result.startText; // its own line: too long for one
        style = QStringLiteral("color: %1; font-weight: bold;")
                    .arg(display::colorName(display::Tone::Ok));
        break;
    case VerifyResult::State::Broken:
        text = tr("Chain BROKEN at entry %1: %2 (%3 entries verified before it)")
                   .arg(QString::number(result.brokenId), result.problem,
                        QString::number(result.checked));
        if (result.problems.size() > 1)
            text += tr("; %n more problem(s), the next: %1", nullptr,
                       int(result.problems.size() - 1))
                        .arg(result.problems.at(1).message());
        style = QStringLiteral("color: %1; font-weight: bold;")
                    .arg(display::colorName(display::Tone::Error));
        m_showBroken->setText(tr("Show entry %1").arg(result.brokenId));
        break;
    case VerifyResult::State::Canceled:
        text = tr("Verification canceled; the chain was not checked to the end.");
        break;
    case VerifyResult::State::Failed:
        text = tr("Verification failed: %1").arg(result.problem);
        style = QStringLiteral("color: %1;").arg(display::colorName(display::Tone::Error));
        break;
    }
    m_verifyLabel->setStyleSheet(style);
    m_verifyLabel->setText(text);
}

QString AuditLogWidget::verifyText() const
{
    return m_verifyLabel->text();
}

// --- Export ---------------------------------------------------------------------------------

void AuditLogWidget::exportWithDialog()
{
    const QString csv = tr("CSV (*.csv)");
    const QString jsonl = tr("JSON Lines (*.jsonl)");
    QString selected = csv;
    const QString suggested = QDir::home().filePath(
        QStringLiteral("audit-%1.csv")
            .arg(QDateTime::currentDateTime().toString(QStringLiteral("yyyyMMdd-HHmm"))));
    QString path = QFileDialog::getSaveFileName(this, tr("Export audit entries"), suggested,
                                                csv + QStringLiteral(";;") + jsonl, &selected);
    if (path.isEmpty())
        return;
    const QString suffix = QFileInfo(path).suffix().toLower();
    const bool wantsJsonl = selected == jsonl || suffix == QLatin1String("jsonl");
    if (wantsJsonl && suffix == QLatin1String("csv")) {
        path.chop(3); // the suggested name's suffix: take the chosen format's
        path += QStringLiteral("jsonl");
    } else if (suffix.isEmpty()) {
        path += wantsJsonl ? QStringLiteral(".jsonl") : QStringLiteral(".csv");
    }
    exportTo(path, wantsJsonl ? AuditExportFormat::JsonLines : AuditExportFormat::Csv);
}

bool AuditLogWidget::exportTo(const QString &path, AuditExportFormat format)
{
    m_exportLabel->show();
    if (!m_exportJob->start(m_model->filter(), format, path)) {
        m_exportLabel->setText(
            tr("Cannot export to %1: %2")
                .arg(QDir::toNativeSeparators(path), m_exportJob->errorString()));
        return false;
    }
    m_exportButton->setEnabled(false);
    m_exportProgress->setRange(0, 0);
    m_exportProgress->show();
    m_exportCancel->show();
    onExportProgress(0, -1);
    return true;
}

void AuditLogWidget::onExportProgress(qint64 written, qint64 total)
{
    if (total > 0) {
        // QProgressBar takes int; a per-mille scale never overflows.
        m_exportProgress->setRange(0, 1000);
        m_exportProgress->setValue(int(std::min<qint64>(1000, written * 1000 / total)));
    }
    const QString where = QDir::toNativeSeparators(m_exportJob->path());
    m_exportLabel->setText(
        total >= 0 ? tr("Exporting to %1: %2 of %3 entries…")
                         .arg(where, QString::number(written), QString::number(total))
                   : tr("Exporting to %1: %2 entries…").arg(where, QString::number(written)));
}

void AuditLogWidget::onExportFinished(bool canceled)
{
    m_exportProgress->hide();
    m_exportCancel->hide();
    m_exportButton->setEnabled(true);
    if (canceled) {
        m_exportLabel->setText(tr("Export canceled; no file was written."));
        Q_EMIT exportFinished(false);
        return;
    }
    const AuditExportSummary &summary = m_exportJob->summary();
    const QString where = QDir::toNativeSeparators(m_exportJob->path());
    QString text = summary.describe() + QLatin1Char('\n');
    text += summary.format == AuditExportFormat::Csv
        ? tr("Written to %1; the chain head to %1.head.json.").arg(where)
        : tr("Written to %1; its last line is the chain head.").arg(where);
    m_exportLabel->setText(text);
    Q_EMIT exportFinished(true);
}

QString AuditLogWidget::exportText() const
{
    return m_exportLabel->text();
}

void AuditLogWidget::reportError(const db::DbError &error, const QString &what)
{
    m_filterBar->setActivity(tr("%1 failed").arg(what));
    ErrorPresenter::report(this, error, what);
}

} // namespace redrive
