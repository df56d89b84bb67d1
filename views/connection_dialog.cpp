// SPDX-License-Identifier: GPL-3.0-or-later
#include "views/connection_dialog.h"

#include "models/display_format.h"
#include "models/owner_only_settings.h"

#include <QComboBox>
#include <QDialogButtonBox>
#include <QFormLayout>
#include <QInputDialog>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QRadioButton>
#include <QSettings>
#include <QSpinBox>
#include <QVBoxLayout>

namespace redrive {

namespace {
const QString kProfilesGroup = QStringLiteral("connection-profiles");
}

ConnectionDialog::ConnectionDialog(QWidget *parent)
    : QDialog(parent)
{
    setWindowTitle(tr("Connect to PostgreSQL"));
    auto *layout = new QVBoxLayout(this);

    auto *profileRow = new QHBoxLayout;
    m_profiles = new QComboBox(this);
    m_profiles->addItem(tr("(new connection)"));
    QSettings settings;
    settings.beginGroup(kProfilesGroup);
    bool scrubbed = false;
    for (const QString &name : settings.childKeys()) {
        // A profile never holds a password; one saved by an older version loses it here.
        QString connInfo = settings.value(name).toString();
        if (db::connInfoHasPassword(connInfo)) {
            connInfo = db::redactedConnInfo(connInfo);
            settings.setValue(name, connInfo);
            scrubbed = true;
        }
        m_profiles->addItem(name, connInfo);
    }
    settings.endGroup();
    if (scrubbed)
        syncOwnerOnly(settings);
    auto *saveButton = new QPushButton(tr("Save as profile…"), this);
    profileRow->addWidget(new QLabel(tr("Profile"), this));
    profileRow->addWidget(m_profiles, 1);
    profileRow->addWidget(saveButton);
    layout->addLayout(profileRow);

    m_useString = new QRadioButton(tr("Connection string, URI or service"), this);
    m_connInfo = new QLineEdit(this);
    m_connInfo->setPlaceholderText(
        QStringLiteral("host=db.internal dbname=payments sslmode=require  ·  service=prod  ·  "
                       "postgresql://alice@db/payments"));
    m_useFields = new QRadioButton(tr("Host and database"), this);
    m_useString->setChecked(true);
    layout->addWidget(m_useString);
    layout->addWidget(m_connInfo);
    layout->addWidget(m_useFields);

    auto *form = new QFormLayout;
    m_host = new QLineEdit(this);
    m_host->setPlaceholderText(tr("from PGHOST, or the local socket"));
    m_port = new QSpinBox(this);
    m_port->setRange(1, 65535);
    m_port->setValue(5432);
    m_database = new QLineEdit(this);
    m_user = new QLineEdit(this);
    m_sslMode = new QComboBox(this);
    m_sslMode->addItems({ QStringLiteral("prefer"), QStringLiteral("require"),
                          QStringLiteral("verify-ca"), QStringLiteral("verify-full"),
                          QStringLiteral("allow"), QStringLiteral("disable") });
    form->addRow(tr("Host"), m_host);
    form->addRow(tr("Port"), m_port);
    form->addRow(tr("Database"), m_database);
    form->addRow(tr("User"), m_user);
    form->addRow(tr("SSL mode"), m_sslMode);
    layout->addLayout(form);

    auto *passwordForm = new QFormLayout;
    m_password = new QLineEdit(this);
    m_password->setEchoMode(QLineEdit::Password);
    m_password->setPlaceholderText(tr("empty: use ~/.pgpass or PGPASSWORD; never saved"));
    passwordForm->addRow(tr("Password"), m_password);
    layout->addLayout(passwordForm);

    m_message = new QLabel(this);
    m_message->setTextFormat(Qt::PlainText);
    m_message->setWordWrap(true);
    m_message->setStyleSheet(
        QStringLiteral("color: %1;").arg(display::colorName(display::Tone::Error)));
    m_message->hide();
    layout->addWidget(m_message);

    auto *buttons = new QDialogButtonBox(QDialogButtonBox::Ok | QDialogButtonBox::Cancel, this);
    buttons->button(QDialogButtonBox::Ok)->setText(tr("Connect"));
    layout->addWidget(buttons);
    connect(buttons, &QDialogButtonBox::accepted, this, &QDialog::accept);
    connect(buttons, &QDialogButtonBox::rejected, this, &QDialog::reject);
    connect(m_useString, &QRadioButton::toggled, this, &ConnectionDialog::updateEnabled);
    connect(m_profiles, &QComboBox::currentIndexChanged, this, &ConnectionDialog::loadProfile);
    connect(saveButton, &QPushButton::clicked, this, &ConnectionDialog::saveProfile);
    updateEnabled();
    resize(620, sizeHint().height());
}

void ConnectionDialog::updateEnabled()
{
    const bool string = m_useString->isChecked();
    m_connInfo->setEnabled(string);
    for (QWidget *w : { static_cast<QWidget *>(m_host), static_cast<QWidget *>(m_port),
                        static_cast<QWidget *>(m_database), static_cast<QWidget *>(m_user),
                        static_cast<QWidget *>(m_sslMode) })
        w->setEnabled(!string);
}

QString ConnectionDialog::buildConnInfo(const QList<std::pair<QString, QString>> &pairs)
{
    QStringList parts;
    for (const auto &[key, value] : pairs) {
        if (value.isEmpty())
            continue;
        QString quoted = value;
        quoted.replace(QLatin1Char('\\'), QStringLiteral("\\\\"))
            .replace(QLatin1Char('\''), QStringLiteral("\\'"));
        parts << QStringLiteral("%1='%2'").arg(key, quoted);
    }
    return parts.join(QLatin1Char(' '));
}

db::ConnectionSettings ConnectionDialog::settings() const
{
    db::ConnectionSettings s;
    if (m_useString->isChecked()) {
        s.connInfo = m_connInfo->text().trimmed();
    } else {
        s.connInfo = buildConnInfo({ { QStringLiteral("host"), m_host->text().trimmed() },
                                     { QStringLiteral("port"), QString::number(m_port->value()) },
                                     { QStringLiteral("dbname"), m_database->text().trimmed() },
                                     { QStringLiteral("user"), m_user->text().trimmed() },
                                     { QStringLiteral("sslmode"), m_sslMode->currentText() } });
    }
    s.password = m_password->text();
    s.searchPath = QStringLiteral("redrive");
    return s;
}

void ConnectionDialog::setInitial(const db::ConnectionSettings &settings, const QString &message)
{
    m_useString->setChecked(true);
    // A password in the string moves to the (masked) password field: nothing shows it.
    m_connInfo->setText(db::redactedConnInfo(settings.connInfo));
    m_password->setText(settings.password.isEmpty() ? db::connInfoPassword(settings.connInfo)
                                                    : settings.password);
    m_message->setText(message);
    m_message->setVisible(!message.isEmpty());
}

void ConnectionDialog::loadProfile(int index)
{
    if (index <= 0)
        return;
    m_useString->setChecked(true);
    m_connInfo->setText(db::redactedConnInfo(m_profiles->itemData(index).toString()));
}

void ConnectionDialog::saveProfile()
{
    bool ok = false;
    const QString name = QInputDialog::getText(this, tr("Save profile"), tr("Profile name"),
                                               QLineEdit::Normal, QString(), &ok)
                             .trimmed();
    if (!ok || name.isEmpty())
        return;
    saveProfileAs(name);
}

bool ConnectionDialog::saveProfileAs(const QString &name)
{
    const db::ConnectionSettings s = settings();
    // Never a password: not the password field, not one typed into the string or URI.
    bool parsed = true;
    const QString connInfo = db::redactedConnInfo(s.connInfo, &parsed);
    if (!parsed) {
        m_message->setText(tr("The connection string cannot be parsed, so it was not saved."));
        m_message->show();
        return false;
    }
    QSettings store;
    store.beginGroup(kProfilesGroup);
    store.setValue(name, connInfo);
    store.endGroup();
    syncOwnerOnly(store);
    if (m_profiles->findText(name) < 0)
        m_profiles->addItem(name, connInfo);
    // Selecting the profile shows its redacted string; a password typed into the string moves
    // to the masked password field, so connecting now still uses it.
    if (m_password->text().isEmpty())
        m_password->setText(db::connInfoPassword(s.connInfo));
    const int index = int(m_profiles->findText(name));
    {
        const QSignalBlocker block(m_profiles);
        m_profiles->setCurrentIndex(index);
    }
    loadProfile(index);
    if (db::connInfoHasPassword(s.connInfo) || !s.password.isEmpty()) {
        m_message->setText(tr("Profile \"%1\" saved without the password (profiles never keep "
                              "one: use ~/.pgpass or type it when asked).")
                               .arg(name));
        m_message->show();
    }
    return true;
}

QString ConnectionDialog::askPassword(QWidget *parent, const QString &what, const QString &reason)
{
    bool ok = false;
    const QString password = QInputDialog::getText(parent, tr("Password"),
                                                   tr("%1\n\nPassword for %2:").arg(reason, what),
                                                   QLineEdit::Password, QString(), &ok);
    return ok ? password : QString();
}

} // namespace redrive
