// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/mention_search_dialog.h"

#include "models/db/db_error.h"
#include "models/display_format.h"
#include "views/error_presenter.h"
#include "views/result_table_view.h"

#include <QHBoxLayout>
#include <QHeaderView>
#include <QKeyEvent>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QVBoxLayout>

namespace redrive {

namespace {

// Enter on the table opens the current hit (the table's own Enter only moves the cursor).
class OpenOnEnter : public QObject
{
public:
    OpenOnEnter(MentionSearchDialog *dialog, ResultTableView *table)
        : QObject(table)
        , m_dialog(dialog)
        , m_table(table)
    { }

protected:
    bool eventFilter(QObject *watched, QEvent *event) override
    {
        if (watched == m_table && event->type() == QEvent::KeyPress) {
            const int key = static_cast<QKeyEvent *>(event)->key();
            if ((key == Qt::Key_Return || key == Qt::Key_Enter)
                && m_table->currentIndex().isValid()) {
                m_dialog->openRow(m_table->currentIndex().row());
                return true;
            }
        }
        return QObject::eventFilter(watched, event);
    }

private:
    MentionSearchDialog *m_dialog;
    ResultTableView *m_table;
};

} // namespace

MentionSearchDialog::MentionSearchDialog(db::DatabaseSession *session, QWidget *parent)
    : QDialog(parent)
    , m_model(new MentionSearchModel(session, this))
{
    setWindowTitle(tr("Find customer"));
    resize(1100, 520);

    m_box = new QLineEdit(this);
    m_box->setObjectName(QStringLiteral("mentionSearchBox"));
    m_box->setPlaceholderText(
        tr("Order number, payment reference, e-mail address or provider charge id"));
    m_box->setClearButtonEnabled(true);
    m_searchButton = new QPushButton(tr("Search"), this);
    m_searchButton->setAutoDefault(false);
    m_status = new QLabel(tr("Every character counts as typed (no wildcards), upper and lower "
                             "case alike; at least %1 characters.")
                              .arg(MentionSearchModel::kMinimumLength),
                          this);
    m_status->setObjectName(QStringLiteral("mentionSearchStatus"));
    m_status->setTextFormat(Qt::PlainText); // it repeats the term, pasted from anywhere
    m_status->setWordWrap(true);
    m_status->setTextInteractionFlags(Qt::TextSelectableByMouse);

    m_table = new ResultTableView(this);
    m_table->setObjectName(QStringLiteral("mentionSearchTable"));
    m_table->setModel(m_model);
    m_table->setSelectionMode(QAbstractItemView::SingleSelection);
    m_table->setColumnWidths({ 95, 50, ResultTableView::kTimeWidth, 90, 110, 110, 100, 400 });
    m_table->horizontalHeader()->setStretchLastSection(true);
    m_table->installEventFilter(new OpenOnEnter(this, m_table));

    auto *boxRow = new QHBoxLayout;
    boxRow->addWidget(m_box, 1);
    boxRow->addWidget(m_searchButton);
    auto *layout = new QVBoxLayout(this);
    layout->addLayout(boxRow);
    layout->addWidget(m_status);
    layout->addWidget(m_table, 1);

    connect(m_box, &QLineEdit::returnPressed, this, &MentionSearchDialog::startSearch);
    connect(m_searchButton, &QPushButton::clicked, this, &MentionSearchDialog::startSearch);
    connect(m_table, &QAbstractItemView::doubleClicked, this,
            [this](const QModelIndex &index) { openRow(index.row()); });
    connect(m_model, &ResultTableModel::loaded, this, &MentionSearchDialog::onLoaded);
    connect(m_model, &ResultTableModel::failed, this, &MentionSearchDialog::onFailed);
    connect(m_model, &ResultTableModel::loadingChanged, this, [this](bool loading) {
        m_searchButton->setEnabled(!loading);
        if (loading)
            m_status->setText(tr("Searching for “%1”…").arg(display::oneLine(m_model->term(), 80)));
    });
}

QString MentionSearchDialog::statusText() const
{
    return m_status->text();
}

void MentionSearchDialog::search(const QString &term)
{
    m_box->setText(term);
    startSearch();
}

void MentionSearchDialog::startSearch()
{
    if (!m_model->search(m_box->text()))
        m_status->setText(tr("Type at least %1 characters: shorter terms would match almost "
                             "everything.")
                              .arg(MentionSearchModel::kMinimumLength));
}

void MentionSearchDialog::onLoaded()
{
    using K = MentionSearchModel::Kind;
    QString text = tr("“%1”: %2").arg(display::oneLine(m_model->term(), 80), m_model->countsText());
    for (K kind : { K::DeadLetter, K::Mismatch, K::Compensation, K::AuditEntry }) {
        if (m_model->totalOf(kind) > MentionSearchModel::kRowsPerKind) {
            text += tr(" — showing the newest %1 of each kind: add more of the term to narrow it")
                        .arg(MentionSearchModel::kRowsPerKind);
            break;
        }
    }
    m_status->setText(text);
    if (m_model->rowCount() > 0) {
        m_table->selectRow(0);
        m_table->setFocus();
    }
}

void MentionSearchDialog::onFailed(const db::DbError &error)
{
    m_status->setText(ErrorPresenter::inlineText(error));
    if (error.kind() != db::ErrorKind::Constraint && error.kind() != db::ErrorKind::Permission
        && error.sqlState() != QLatin1String("22023"))
        ErrorPresenter::report(this, error, tr("Searching"));
}

void MentionSearchDialog::openRow(int row)
{
    if (row < 0 || row >= m_model->rowCount())
        return;
    Q_EMIT openRequested(m_model->kindAt(row), m_model->idAt(row), m_model->runIdAt(row),
                         m_model->atOf(row));
}

void MentionSearchDialog::setShowUtc(bool utc)
{
    m_model->setShowUtc(utc);
}

} // namespace redrive
