// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/action_result_dialog.h"

#include "models/console_reads.h"
#include "models/display_format.h"

#include <QApplication>
#include <QClipboard>
#include <QDialogButtonBox>
#include <QHeaderView>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QPushButton>
#include <QTableWidget>
#include <QVBoxLayout>

namespace redrive {

ActionResultDialog::Outcome ActionResultDialog::Outcome::fromJson(const QString &action,
                                                                  const QJsonObject &outcome,
                                                                  const QString &reference)
{
    Outcome o;
    o.action = action;
    o.confirmed = outcome.value(QStringLiteral("confirmed")).toInt(1);
    o.applied = outcome.value(QStringLiteral("applied")).toInt();
    o.conflicts = outcome.value(QStringLiteral("conflicts")).toInt();
    o.refused = outcome.value(QStringLiteral("refused")).toInt();
    for (const QJsonValue &v : outcome.value(QStringLiteral("results")).toArray())
        if (v.toObject().value(QStringLiteral("result")).toString() != QLatin1String("applied"))
            o.notApplied.append(v);
    const qint64 auditId = outcome.value(QStringLiteral("audit_id")).toInteger();
    o.reference = auditId > 0 ? display::auditReference(
                      { auditId }, { outcome.value(QStringLiteral("action_id")).toString() })
                              : reference;
    return o;
}

ActionResultDialog::ActionResultDialog(const Outcome &outcome, QWidget *parent)
    : QDialog(parent)
    , m_outcome(outcome)
{
    setWindowTitle(tr("%1 — result").arg(outcome.action));
    resize(820, outcome.notApplied.isEmpty() ? 220 : 480);
    auto *layout = new QVBoxLayout(this);

    auto *headline = new QLabel(this);
    headline->setTextFormat(Qt::PlainText);
    headline->setStyleSheet(QStringLiteral("QLabel { font-size: 15px; font-weight: bold; }"));
    const bool clean = outcome.applied == outcome.confirmed && !outcome.canceled;
    const int notRun
        = std::max(0, outcome.confirmed - outcome.applied - outcome.conflicts - outcome.refused);
    if (!outcome.headline.isEmpty())
        headline->setText(outcome.headline);
    else if (clean)
        headline->setText(tr("%1: all %L2 applied").arg(outcome.action).arg(outcome.applied));
    else if (outcome.canceled)
        headline->setText(tr("%1 cancelled: %L2 of %L3 applied, %L4 not run yet")
                              .arg(outcome.action)
                              .arg(outcome.applied)
                              .arg(outcome.confirmed)
                              .arg(notRun));
    else
        headline->setText(tr("%1: %L2 of %L3 applied")
                              .arg(outcome.action)
                              .arg(outcome.applied)
                              .arg(outcome.confirmed));
    layout->addWidget(headline);

    auto *details = new QLabel(this);
    details->setTextFormat(Qt::RichText); // the database's parts escaped
    details->setWordWrap(true);
    details->setTextInteractionFlags(Qt::TextSelectableByMouse);
    QString text = tr("Confirmed %L1 · applied %L2 · conflicts %L3 · refused %L4")
                       .arg(outcome.confirmed)
                       .arg(outcome.applied)
                       .arg(outcome.conflicts)
                       .arg(outcome.refused);
    if (outcome.chunkCount > 1 || outcome.canceled)
        text += tr("<br>Chunks done: %1 of %2").arg(outcome.chunksDone).arg(outcome.chunkCount);
    if (outcome.canceled)
        text += tr("<br><span style='color:%1'><b>Cancelled between chunks.</b> The rest of "
                   "the confirmed set was not touched. Resume finishes exactly the same set; "
                   "chunks already applied are not applied again.</span>")
                    .arg(display::colorName(display::Tone::Warning));
    if (!outcome.reference.isEmpty())
        text += tr("<br>Audit log: <code>%1</code>").arg(outcome.reference.toHtmlEscaped());
    details->setText(text);
    layout->addWidget(details);

    if (!outcome.notApplied.isEmpty()) {
        layout->addWidget(new QLabel(tr("Not applied:"), this));
        auto *table = new QTableWidget(int(outcome.notApplied.size()), 3, this);
        m_notApplied = table;
        table->setHorizontalHeaderLabels({ tr("Dead letter"), tr("Result"), tr("Detail") });
        table->verticalHeader()->hide();
        table->setEditTriggers(QAbstractItemView::NoEditTriggers);
        table->horizontalHeader()->setStretchLastSection(true);
        table->setColumnWidth(0, 100);
        table->setColumnWidth(1, 100);
        for (int r = 0; r < outcome.notApplied.size(); ++r) {
            const QJsonObject o = outcome.notApplied.at(r).toObject();
            table->setItem(
                r, 0, new QTableWidgetItem(o.value(QStringLiteral("id")).toVariant().toString()));
            table->setItem(r, 1,
                           new QTableWidgetItem(o.value(QStringLiteral("result")).toString()));
            table->setItem(r, 2,
                           new QTableWidgetItem(o.value(QStringLiteral("detail")).toString()));
            table->item(r, 2)->setToolTip(
                display::plainToolTip(o.value(QStringLiteral("detail")).toString()));
        }
        layout->addWidget(table, 1);
    }

    if (outcome.notApplied.isEmpty())
        layout->addStretch(1);
    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Close, this);
    QPushButton *copy = buttons->addButton(tr("&Copy report"), QDialogButtonBox::ActionRole);
    connect(copy, &QPushButton::clicked, this,
            [this] { QApplication::clipboard()->setText(reportText()); });
    if (outcome.canceled) {
        m_resume = buttons->addButton(tr("&Resume"), QDialogButtonBox::AcceptRole);
        connect(m_resume, &QPushButton::clicked, this, [this] {
            Q_EMIT resumeRequested();
            accept();
        });
    }
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    layout->addWidget(buttons);
}

QString ActionResultDialog::reportText() const
{
    QString out = tr("%1: confirmed %2, applied %3, conflicts %4, refused %5")
                      .arg(m_outcome.action)
                      .arg(m_outcome.confirmed)
                      .arg(m_outcome.applied)
                      .arg(m_outcome.conflicts)
                      .arg(m_outcome.refused);
    if (m_outcome.canceled)
        out += tr(" (cancelled after chunk %1 of %2)")
                   .arg(m_outcome.chunksDone)
                   .arg(m_outcome.chunkCount);
    if (!m_outcome.reference.isEmpty())
        out += QStringLiteral("\naudit log: ") + m_outcome.reference;
    for (const QJsonValue &v : m_outcome.notApplied)
        out += QLatin1Char('\n')
            + QString::fromUtf8(QJsonDocument(v.toObject()).toJson(QJsonDocument::Compact));
    return out + QLatin1Char('\n');
}

void ActionResultDialog::explainConflicts(db::DatabaseSession *session)
{
    QList<qint64> ids;
    for (const QJsonValue &v : std::as_const(m_outcome.notApplied)) {
        const QJsonObject o = v.toObject();
        if (o.value(QStringLiteral("result")).toString() == QLatin1String("conflict"))
            ids << o.value(QStringLiteral("id")).toInteger();
    }
    if (ids.isEmpty() || !session || !m_notApplied)
        return;
    reads::lastChanges(
        session, this, ids, [this](const db::DbExpected<QList<reads::LastChange>> &changes) {
            if (!changes)
                return; // the version numbers still say what happened
            for (const reads::LastChange &c : *changes) {
                const QString who = display::lastChange(c.action, c.login, c.ageSeconds);
                for (int r = 0; r < m_outcome.notApplied.size(); ++r) {
                    QJsonObject o = m_outcome.notApplied.at(r).toObject();
                    if (o.value(QStringLiteral("id")).toInteger() != c.id
                        || o.value(QStringLiteral("result")).toString()
                            != QLatin1String("conflict"))
                        continue;
                    const QString detail = who + QStringLiteral(" \u2014 ")
                        + o.value(QStringLiteral("detail")).toString();
                    o.insert(QStringLiteral("detail"), detail);
                    m_outcome.notApplied[r] = o;
                    m_notApplied->item(r, 2)->setText(detail);
                    m_notApplied->item(r, 2)->setToolTip(detail);
                }
            }
        });
}

} // namespace redrive
