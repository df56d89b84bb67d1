// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/money_edit.h"

#include "models/display_format.h"

#include <QHBoxLayout>
#include <QLabel>
#include <QLineEdit>
#include <QVBoxLayout>

namespace redrive {

MoneyEdit::MoneyEdit(QWidget *parent)
    : QWidget(parent)
{
    m_edit = new QLineEdit(this);
    m_edit->setObjectName(QStringLiteral("amount"));
    m_edit->setAlignment(Qt::AlignRight | Qt::AlignVCenter);
    m_edit->setMaximumWidth(220);
    m_code = new QLabel(this);
    m_code->setObjectName(QStringLiteral("currency"));
    m_refusal = new QLabel(this);
    m_refusal->setObjectName(QStringLiteral("refusal"));
    m_refusal->setWordWrap(true);
    m_refusal->setTextFormat(Qt::PlainText);
    m_refusal->setStyleSheet(
        QStringLiteral("QLabel { color: %1; }").arg(display::colorName(display::Tone::Error)));
    m_refusal->hide();
    auto *row = new QHBoxLayout;
    row->setContentsMargins(0, 0, 0, 0);
    row->addWidget(m_edit);
    row->addWidget(m_code);
    row->addStretch(1);
    auto *layout = new QVBoxLayout(this);
    layout->setContentsMargins(0, 0, 0, 0);
    layout->setSpacing(2);
    layout->addLayout(row);
    layout->addWidget(m_refusal);
    setFocusProxy(m_edit);
    connect(m_edit, &QLineEdit::textChanged, this, &MoneyEdit::recheck);
    recheck();
}

void MoneyEdit::setCurrency(const QString &currency)
{
    m_currency = currency.trimmed().toUpper();
    m_code->setText(m_currency);
    recheck();
}

void MoneyEdit::setMaximum(std::optional<qint64> maximumMinor)
{
    m_maximum = maximumMinor;
    recheck();
}

void MoneyEdit::setValue(qint64 minorUnits)
{
    m_edit->setText(display::moneyAmount(minorUnits, m_currency).value_or(QString()));
}

QString MoneyEdit::text() const
{
    return m_edit->text();
}

QString MoneyEdit::refusalText() const
{
    return m_entry.isAcceptable() ? QString() : m_entry.message();
}

void MoneyEdit::recheck()
{
    m_entry = MoneyEntry::check(m_edit->text(), m_currency, m_maximum);
    // An empty field is not an error to shout about; everything else says why.
    const bool show = !m_entry.isAcceptable() && m_entry.refusal() != MoneyEntry::Refusal::Empty;
    m_refusal->setText(show ? m_entry.message() : QString());
    m_refusal->setVisible(show);
    m_edit->setStyleSheet(show ? QStringLiteral("QLineEdit { border: 1px solid %1; }")
                                     .arg(display::colorName(display::Tone::Error))
                               : QString());
    Q_EMIT changed();
}

} // namespace redrive
