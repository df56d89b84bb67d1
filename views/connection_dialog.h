// SPDX-License-Identifier: GPL-3.0-or-later
#pragma once

#include "models/db/connection_settings.h"

#include <QDialog>

class QComboBox;
class QLineEdit;
class QRadioButton;
class QSpinBox;
class QLabel;

namespace redrive {

/// Where to connect: a connection string, URI or service name, or host,
/// port, database, user and sslmode; an optional password (left empty, libpq uses ~/.pgpass or
/// PGPASSWORD). Named profiles are kept in QSettings without any password, ever.
class ConnectionDialog : public QDialog
{
    Q_OBJECT
public:
    explicit ConnectionDialog(QWidget *parent = nullptr);

    /// The settings chosen; searchPath and applicationName are the console's.
    db::ConnectionSettings settings() const;
    /// Pre-fills from `settings` (e.g. the current connection) and an optional message to show,
    /// such as why the last attempt failed.
    void setInitial(const db::ConnectionSettings &settings, const QString &message = {});

    /// A libpq connection string from key/value pairs, each value quoted as libpq requires
    /// (single quotes, backslash escapes); empty values are left out.
    static QString buildConnInfo(const QList<std::pair<QString, QString>> &pairs);
    /// Saves the current choice as profile `name`, without any password (redactedConnInfo);
    /// false, with a message in the dialog, when the string cannot be parsed.
    bool saveProfileAs(const QString &name);
    /// Asks for a password for `what` (e.g. "alice@db:5432/payments"); empty when cancelled.
    static QString askPassword(QWidget *parent, const QString &what, const QString &reason);

private:
    void loadProfile(int index);
    void saveProfile();
    void updateEnabled();

    QComboBox *m_profiles = nullptr;
    QRadioButton *m_useString = nullptr;
    QRadioButton *m_useFields = nullptr;
    QLineEdit *m_connInfo = nullptr;
    QLineEdit *m_host = nullptr;
    QSpinBox *m_port = nullptr;
    QLineEdit *m_database = nullptr;
    QLineEdit *m_user = nullptr;
    QComboBox *m_sslMode = nullptr;
    QLineEdit *m_password = nullptr;
    QLabel *m_message = nullptr;
};

} // namespace redrive
