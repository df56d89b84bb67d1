#include "views/main_window.h"

#include "models/db/database_session.h"
#include "models/db/sql_statement.h"

#include <QLabel>
#include <QStatusBar>
#include <QVBoxLayout>

namespace redrive {

MainWindow::MainWindow(db::DatabaseSession *session, QWidget *parent)
    : QMainWindow(parent)
    , m_session(session)
{
    setWindowTitle(tr("Redrive"));
    resize(1200, 760);

    auto *central = new QWidget(this);
    auto *layout = new QVBoxLayout(central);
    m_banner = new QLabel(central);
    m_banner->setWordWrap(true);
    m_banner->setStyleSheet(QStringLiteral("QLabel { background: #fde2e1; color: #7a1512; padding: "
                                           "8px; border: 1px solid #e0a09c; }"));
    m_banner->hide();
    layout->addWidget(m_banner);
    layout->addStretch(1);
    setCentralWidget(central);

    m_serverLabel = new QLabel(tr("Not connected"), this);
    m_rolesLabel = new QLabel(this);
    m_stateLabel = new QLabel(tr("Connecting…"), this);
    m_roundTripLabel = new QLabel(this);
    statusBar()->addWidget(m_serverLabel);
    statusBar()->addWidget(m_rolesLabel);
    statusBar()->addPermanentWidget(m_stateLabel);
    statusBar()->addPermanentWidget(m_roundTripLabel);

    connect(m_session, &db::DatabaseSession::connected, this, &MainWindow::onConnected);
    connect(m_session, &db::DatabaseSession::connectionLost, this, &MainWindow::onConnectionLost);
    connect(m_session, &db::DatabaseSession::reconnectScheduled, this,
            &MainWindow::onReconnectScheduled);
    connect(m_session, &db::DatabaseSession::activityChanged, this, &MainWindow::updateStatus);
}

void MainWindow::onConnected(const db::ServerInfo &info)
{
    m_banner->hide();
    m_serverLabel->setText(tr("%1 · %2:%3 · PostgreSQL %4")
                               .arg(info.database, info.host, info.port, info.serverVersion));
    m_stateLabel->setText(tr("Connected"));
    loadRoles();
}

void MainWindow::onConnectionLost(const db::DbError &error)
{
    m_banner->setText(tr("Connection lost: %1 — reconnecting…").arg(error.message()));
    m_banner->show();
    m_stateLabel->setText(tr("Disconnected"));
}

void MainWindow::onReconnectScheduled(int attempt, int delayMs)
{
    m_stateLabel->setText(tr("Reconnecting (attempt %1 in %2 s)")
                              .arg(attempt)
                              .arg(double(delayMs) / 1000.0, 0, 'f', 1));
}

void MainWindow::loadRoles()
{
    m_session->execute(
        db::statementSql(db::Statement::SessionRoles), {}, this,
        [this](const db::DbExpected<db::ResultSet> &rows) {
            if (!rows || rows->rowCount() == 0)
                return;
            m_loginRole = rows->text(0, 0);
            const QString roles = rows->text(0, 1);
            m_redriveRoles
                = roles.mid(1, roles.size() - 2).split(QLatin1Char(','), Qt::SkipEmptyParts);
            updateStatus();
        });
}

void MainWindow::updateStatus()
{
    if (!m_loginRole.isEmpty()) {
        m_rolesLabel->setText(tr("%1 (%2)").arg(m_loginRole,
                                                m_redriveRoles.isEmpty()
                                                    ? tr("no Redrive role")
                                                    : m_redriveRoles.join(QStringLiteral(", "))));
    }
    if (m_session->lastRoundTripMs() >= 0)
        m_roundTripLabel->setText(tr("%1 ms").arg(m_session->lastRoundTripMs()));
}

} // namespace redrive
