#pragma once

#include <QMainWindow>
#include <QStringList>

class QLabel;

namespace redrive {

namespace db {
class DatabaseSession;
class DbError;
struct ServerInfo;
} // namespace db

/// The console's main window. Shows the connection state in the status bar (server, database,
/// login role, the Redrive roles it holds, last round-trip time) and a banner while the
/// connection is lost; the triage views are added by the console issue.
class MainWindow : public QMainWindow
{
    Q_OBJECT
public:
    /// `session` must outlive the window; the window only reads from it and posts requests.
    explicit MainWindow(db::DatabaseSession *session, QWidget *parent = nullptr);

private:
    void onConnected(const db::ServerInfo &info);
    void onConnectionLost(const db::DbError &error);
    void onReconnectScheduled(int attempt, int delayMs);
    void loadRoles();
    void updateStatus();

    db::DatabaseSession *m_session;
    QLabel *m_banner = nullptr;
    QLabel *m_serverLabel = nullptr;
    QLabel *m_rolesLabel = nullptr;
    QLabel *m_stateLabel = nullptr;
    QLabel *m_roundTripLabel = nullptr;
    QString m_loginRole;
    QStringList m_redriveRoles;
};

} // namespace redrive
