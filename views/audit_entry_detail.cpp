// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/audit_entry_detail.h"

#include "models/audit_diff_model.h"
#include "models/audit_entry_diff.h"
#include "models/audit_entry_model.h"
#include "models/db/result_set.h"
#include "models/display_format.h"
#include "views/text_panes.h"

#include <QHeaderView>
#include <QLabel>
#include <QPlainTextEdit>
#include <QSplitter>
#include <QTabWidget>
#include <QTableView>
#include <QVBoxLayout>

namespace redrive {

namespace {

/// How many characters of one field the details pane shows.
constexpr qsizetype kMaxFieldChars = 500;

QString orDash(const QString &text)
{
    return text.isEmpty() ? QString(QChar(0x2014)) : text;
}

/// The first line of `text`, at most kMaxFieldChars characters, for the one-line title.
QString oneLine(const QString &text)
{
    return display::boundedLines(text, 1, kMaxFieldChars)
        .replace(QLatin1Char('\n'), QLatin1Char(' '));
}

} // namespace

AuditEntryDetail::AuditEntryDetail(QWidget *parent)
    : QWidget(parent)
    , m_diffModel(new AuditDiffModel(this))
{
    m_title = new QLabel(this);
    QFont bold = m_title->font();
    bold.setBold(true);
    m_title->setFont(bold);
    m_title->setTextFormat(Qt::PlainText);

    m_fields = new QLabel(this);
    m_fields->setObjectName(QStringLiteral("entryFields"));
    m_fields->setTextFormat(Qt::PlainText);
    m_fields->setTextInteractionFlags(Qt::TextSelectableByMouse);
    m_fields->setAlignment(Qt::AlignLeft | Qt::AlignTop);
    m_fields->setWordWrap(true);
    m_fields->setMinimumWidth(360);
    // Each field is bounded (a reason of 100,000 lines once made this pane 32,767 px tall and every
    // click took 25 s); the whole entry is on the "Entry (raw)" tab.
    panes::ignoreTextWidth(m_fields);
    m_title->setSizePolicy(QSizePolicy::Ignored, m_title->sizePolicy().verticalPolicy());

    m_diffView = new QTableView(this);
    m_diffView->setObjectName(QStringLiteral("entryDiff"));
    m_diffView->setModel(m_diffModel);
    m_diffView->setSelectionBehavior(QAbstractItemView::SelectRows);
    m_diffView->setEditTriggers(QAbstractItemView::NoEditTriggers);
    m_diffView->setWordWrap(false);
    m_diffView->verticalHeader()->hide();
    m_diffView->verticalHeader()->setSectionResizeMode(QHeaderView::Fixed);
    m_diffView->verticalHeader()->setDefaultSectionSize(fontMetrics().height() + 8);
    m_diffView->horizontalHeader()->setStretchLastSection(true);
    m_diffView->horizontalHeader()->resizeSection(AuditDiffModel::Field, 220);
    m_diffView->horizontalHeader()->resizeSection(AuditDiffModel::Change, 80);
    m_diffView->horizontalHeader()->resizeSection(AuditDiffModel::Before, 200);
    m_diffNote = new QLabel(this);
    m_diffNote->setTextFormat(Qt::PlainText);
    m_diffNote->setWordWrap(true);
    auto *diffPage = new QWidget(this);
    auto *diffLayout = new QVBoxLayout(diffPage);
    diffLayout->setContentsMargins(0, 0, 0, 0);
    diffLayout->setSpacing(2);
    diffLayout->addWidget(m_diffNote);
    diffLayout->addWidget(m_diffView, 1);

    m_beforeRaw = panes::readOnlyText(this, QStringLiteral("beforeRaw"));
    m_afterRaw = panes::readOnlyText(this, QStringLiteral("afterRaw"));
    m_targetsRaw = panes::readOnlyText(this, QStringLiteral("targetsRaw"));
    m_entryRaw = panes::readOnlyText(this, QStringLiteral("entryRaw"));
    m_tabs = new QTabWidget(this);
    m_tabs->addTab(diffPage, tr("Before → after"));
    m_tabs->addTab(m_beforeRaw, tr("Before (raw)"));
    m_tabs->addTab(m_afterRaw, tr("After (raw)"));
    m_tabs->addTab(m_targetsRaw, tr("Targets (raw)"));
    m_tabs->addTab(m_entryRaw, tr("Entry (raw)"));

    auto *split = new QSplitter(Qt::Horizontal, this);
    split->setChildrenCollapsible(false);
    split->addWidget(m_fields);
    split->addWidget(m_tabs);
    split->setStretchFactor(0, 2);
    split->setStretchFactor(1, 3);
    split->setSizes({ 480, 720 });
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 4, 0, 0);
    layout->setSpacing(4);
    layout->addWidget(m_title);
    layout->addWidget(split, 1);
}

qint64 AuditEntryDetail::show(const db::ResultSet &rows, bool utc, const QString &chainBreak)
{
    auto text = [&rows](const char *name) {
        return rows.text(0, QLatin1String(name));
    };
    const qint64 id = rows.bigInt(0, rows.columnIndex(QStringLiteral("id"))).value_or(0);
    const QDateTime at = rows.timestamp(0, rows.columnIndex(QStringLiteral("at")));
    m_title->setText(tr("Entry %1 · %2 by %3 at %4")
                         .arg(QString::number(id), oneLine(text("action")),
                              oneLine(text("db_user")), display::time(at, utc)));
    const QString targets = text("targets_text");
    const auto targetCount = qsizetype(targets.count(QLatin1String("\"id\"")));
    // Every field twice: bounded in the pane (`shown`), whole on the "Entry (raw)" tab (`whole`).
    QStringList shown;
    QStringList whole;
    auto field
        = [&shown, &whole](const QString &format, const QStringList &values, qsizetype maxLines) {
              QStringList bounded;
              for (const QString &v : values)
                  bounded << display::boundedLines(v, maxLines, kMaxFieldChars);
              auto fill = [&format](const QStringList &args) {
                  QString out = format;
                  switch (args.size()) {
                  case 1:
                      return out.arg(args.at(0));
                  case 2:
                      return out.arg(args.at(0), args.at(1));
                  default:
                      return out.arg(args.at(0), args.at(1), args.at(2));
                  }
              };
              shown << fill(bounded);
              whole << fill(values);
          };
    if (!chainBreak.isEmpty())
        field(tr("THE CHAIN BREAKS HERE: %1"), { chainBreak }, display::kMaxLabelLines);
    field(tr("At: %1 (%2)"), { display::time(at, utc), display::time(at, !utc) }, 1);
    field(tr("Actor: %1 · from %2 · OS user (reported by client): %3"),
          { text("db_user"),
            text("client_addr").isEmpty() ? tr("a local socket") : text("client_addr"),
            orDash(text("os_user")) },
          1);
    field(tr("Action: %1 · action id %2"), { text("action"), text("action_id") }, 1);
    field(tr("Reason: %1"), { text("reason") }, display::kMaxLabelLines);
    field(tr("Ticket: %1"), { orDash(text("ticket")) }, 1);
    field(tr("Outcome: %1"), { orDash(AuditEntryModel::describeOutcome(text("outcome_text"))) },
          display::kMaxLabelLines);
    field(tr("Targets: %1"), { QString::number(targetCount) }, 1);
    field(tr("Hash: %1"), { text("hash") }, 1);
    field(tr("Previous hash: %1"),
          { text("prev_hash").isEmpty() ? tr("none (the first entry)") : text("prev_hash") }, 1);
    m_fields->setText(shown.join(QLatin1Char('\n')));
    m_entryRaw->setPlainText(
        display::inPieces(m_title->text() + QLatin1Char('\n') + whole.join(QLatin1Char('\n'))));

    const QString before = text("before_text");
    const QString after = text("after_text");
    const AuditEntryDiff diff = AuditEntryDiff::compute(before, after);
    m_diffModel->setDiff(diff);
    QStringList summary;
    if (!diff.lines().isEmpty()) {
        const int changed = diff.count(AuditDiffLine::Change::Changed);
        const int added = diff.count(AuditDiffLine::Change::Added);
        const int removed = diff.count(AuditDiffLine::Change::Removed);
        summary << tr("%1 changed · %2 added · %3 removed").arg(changed).arg(added).arg(removed);
    }
    if (!diff.note().isEmpty())
        summary << diff.note();
    m_diffNote->setText(summary.join(QStringLiteral("  ")));
    m_beforeRaw->setPlainText(before.isNull() ? tr("(no before state)")
                                              : display::prettyJsonText(before));
    m_afterRaw->setPlainText(after.isNull() ? tr("(no after state)")
                                            : display::prettyJsonText(after));
    m_targetsRaw->setPlainText(display::prettyJsonText(targets) + QLatin1Char('\n')
                               + QLatin1Char('\n') + tr("outcome: ")
                               + display::prettyJsonText(text("outcome_text")));
    return id;
}

void AuditEntryDetail::clear(const QString &title)
{
    m_title->setText(title);
    m_fields->clear();
    m_diffNote->clear();
    m_diffModel->setDiff(AuditEntryDiff());
    m_beforeRaw->clear();
    m_afterRaw->clear();
    m_targetsRaw->clear();
    m_entryRaw->clear();
}

void AuditEntryDetail::setTitle(const QString &title)
{
    m_title->setText(title);
}

QString AuditEntryDetail::text() const
{
    return m_title->text() + QLatin1Char('\n') + m_fields->text();
}

} // namespace redrive
