// SPDX-License-Identifier: GPL-3.0-or-later
// The unfinished bulk actions dialog on a real PostgreSQL: it lists the caller's own stopped
// bulk with its progress, offers Resume and Give up to its owner only, Take over only to another
// operator with the role the bulk's action needs, and resuming from it finishes the bulk.
// Renders the dialog to bulk_actions_dialog.png for a look.
#include "models/bulk_action_list_model.h"
#include "models/bulk_action_runner.h"
#include "models/db/database_session.h"
#include "tests/support/test_database.h"
#include "views/bulk_actions_dialog.h"
#include "views/reason_dialog.h"
#include "views/result_table_view.h"

#include <QAbstractItemModelTester>
#include <QApplication>
#include <QCheckBox>
#include <QDialogButtonBox>
#include <QDir>
#include <QItemSelectionModel>
#include <QLabel>
#include <QLineEdit>
#include <QPushButton>
#include <QSignalSpy>
#include <QTest>

using namespace redrive;
using namespace redrive::db;

namespace {

QString outputDir()
{
    const QString dir = QStringLiteral(REDRIVE_TEST_OUTPUT_DIR);
    QDir().mkpath(dir);
    return dir;
}

} // namespace

class TestBulkActionsDialog : public QObject
{
    Q_OBJECT
private:
    std::unique_ptr<test::TestDatabase> m_db;
    PgConnection m_admin;
    QString m_oncall, m_oncall2, m_support;
    QUuid m_bulk;

    void select(BulkActionsDialog &dialog, const QUuid &bulk)
    {
        const int row
            = dialog.model()->rowOf(QStringLiteral("bulk_id"), bulk.toString(QUuid::WithoutBraces));
        QVERIFY(row >= 0);
        dialog.view()->selectionModel()->select(dialog.model()->index(row, 0),
                                                QItemSelectionModel::ClearAndSelect
                                                    | QItemSelectionModel::Rows);
    }

    // A requeue of 250 new dead letters in chunks of 50 started as `login`, then stopped after
    // 2 of 5 chunks (as a console closed mid-bulk leaves it); its bulk id.
    QUuid startAndStop(const QString &login)
    {
        auto r = m_admin.exec(
            "WITH j AS (INSERT INTO redrive.job (queue, kind, payload, state)"
            "           SELECT 'mail', 'send_receipt', '{}', 'dead' FROM generate_series(1, 250)"
            "           RETURNING id, queue, kind)"
            "INSERT INTO redrive.dead_letter (job_id, queue, kind, error_class, error_code,"
            " last_error) SELECT id, queue, kind, 'transient', 'smtp_4xx', '421' FROM j"
            " RETURNING id, version");
        if (!r)
            return {};
        BulkActionRunner::Request request;
        for (int i = 0; i < r->rowCount(); ++i)
            request.targets.append(
                { r->bigInt(i, 0).value_or(0), int(r->bigInt(i, 1).value_or(0)) });
        std::sort(request.targets.begin(), request.targets.end(),
                  [](const auto &a, const auto &b) { return a.id < b.id; });
        request.reason = QStringLiteral("smtp relay back");
        request.osUser = QStringLiteral("alice");
        request.chunkSize = 50;
        // Started, then stopped after 2 of 5 chunks (as a console closed mid-bulk leaves it).
        auto session = m_db->openSession(m_db->consoleSettingsAs(login));
        if (!session)
            return {};
        BulkActionRunner runner(session.get());
        QSignalSpy finished(&runner, &BulkActionRunner::finished);
        connect(&runner, &BulkActionRunner::progress, &runner, [&](int done, int) {
            if (done == 2)
                runner.cancel();
        });
        runner.start(request);
        if (!finished.wait(60000) || runner.chunksDone() != 2)
            return {};
        return runner.bulkId();
    }

private Q_SLOTS:
    void initTestCase()
    {
        m_db = std::make_unique<test::TestDatabase>(QStringLiteral("bulkdlg"));
        QVERIFY2(m_db->isValid(), qPrintable(m_db->error()));
        m_admin = m_db->connect();
        m_oncall
            = m_db->createLogin(QStringLiteral("bd_oncall"), { QStringLiteral("redrive_oncall") });
        m_oncall2
            = m_db->createLogin(QStringLiteral("bd_oncall2"), { QStringLiteral("redrive_oncall") });
        m_support = m_db->createLogin(QStringLiteral("bd_support"),
                                      { QStringLiteral("redrive_support") });
        m_bulk = startAndStop(m_oncall);
        QVERIFY(!m_bulk.isNull());
    }

    void ownerResumesFromTheDialog()
    {
        auto session = m_db->openSession(m_db->consoleSettingsAs(m_oncall));
        QVERIFY(session);
        BulkActionsDialog dialog(session.get(), { QStringLiteral("redrive_oncall") }, true);
        QAbstractItemModelTester tester(dialog.model());
        QSignalSpy loaded(dialog.model(), &ResultTableModel::loaded);
        dialog.show();
        QVERIFY(loaded.wait(10000));
        QCOMPARE(dialog.model()->rowCount(), 1);
        QCOMPARE(dialog.model()
                     ->data(dialog.model()->index(0, BulkActionListModel::Progress))
                     .toString(),
                 QStringLiteral("2 of 5 chunks"));
        QCOMPARE(
            dialog.model()->data(dialog.model()->index(0, BulkActionListModel::Applied)).toString(),
            QStringLiteral("100"));
        QVERIFY(!dialog.resumeButton()->isEnabled()); // nothing selected
        select(dialog, m_bulk);
        QVERIFY(dialog.resumeButton()->isEnabled());
        QVERIFY(dialog.abandonButton()->isEnabled());
        QVERIFY(!dialog.takeOverButton()->isEnabled()); // already the owner's
        // The summary is whole as soon as the list is in (it used to show one clipped line of
        // two until the next layout pass), at the dialog's size and narrower: it wraps, never
        // clips.
        auto *summary = dialog.findChild<QLabel *>(QStringLiteral("summary"));
        QVERIFY(summary);
        QVERIFY2(summary->height() >= summary->heightForWidth(summary->width()),
                 qPrintable(QStringLiteral("%1 px high, needs %2")
                                .arg(summary->height())
                                .arg(summary->heightForWidth(summary->width()))));
        QVERIFY(dialog.grab().save(outputDir() + QStringLiteral("/bulk_actions_dialog.png")));
        for (const int width : { 1000, 640 }) {
            dialog.resize(width, 360);
            QTest::qWait(50);
            QVERIFY2(summary->height() >= summary->heightForWidth(summary->width()),
                     qPrintable(QStringLiteral("%1 px wide: %2 px high, needs %3")
                                    .arg(width)
                                    .arg(summary->height())
                                    .arg(summary->heightForWidth(summary->width()))));
            QVERIFY(summary->heightForWidth(summary->width()) > summary->fontMetrics().height());
            QVERIFY(dialog.grab().save(outputDir()
                                       + QStringLiteral("/bulk_actions_dialog_%1.png").arg(width)));
        }

        QSignalSpy resume(&dialog, &BulkActionsDialog::resumeRequested);
        dialog.resumeButton()->click();
        QCOMPARE(resume.size(), 1);
        QCOMPARE(resume.first().at(0).value<QUuid>(), m_bulk);
        QCOMPARE(resume.first().at(1).toString(), QStringLiteral("requeue"));
    }

    void othersSeeItAndOnlyTheRightRoleMayTakeItOver()
    {
        auto session = m_db->openSession(m_db->consoleSettingsAs(m_support));
        QVERIFY(session);
        BulkActionsDialog dialog(session.get(), { QStringLiteral("redrive_support") }, true);
        QSignalSpy loaded(dialog.model(), &ResultTableModel::loaded);
        QVERIFY(loaded.wait(10000));
        QCOMPARE(dialog.model()->rowCount(), 0); // not support's own
        dialog.everyoneCheck()->setChecked(true);
        QVERIFY(loaded.wait(10000));
        QCOMPARE(dialog.model()->rowCount(), 1);
        select(dialog, m_bulk);
        QVERIFY(!dialog.takeOverButton()->isEnabled()); // a requeue needs redrive_oncall
        QVERIFY2(dialog.takeOverButton()->toolTip().contains(QLatin1String("redrive_oncall")),
                 qPrintable(dialog.takeOverButton()->toolTip()));
        QVERIFY(!dialog.resumeButton()->isEnabled());

        auto session2 = m_db->openSession(m_db->consoleSettingsAs(m_oncall2));
        QVERIFY(session2);
        BulkActionsDialog other(session2.get(), { QStringLiteral("redrive_oncall") }, false);
        QSignalSpy loaded2(other.model(), &ResultTableModel::loaded);
        QVERIFY(loaded2.wait(10000));
        select(other, m_bulk);
        QVERIFY(other.takeOverButton()->isEnabled());
        QVERIFY(!other.resumeButton()->isEnabled());
        QVERIFY(!other.abandonButton()->isEnabled());

        // Take over…: the dialog says whose bulk action it is and how far it got, the owner
        // in bold, each value escaped; the confirm button waits for a reason.
        other.takeOverButton()->click();
        auto *ask = other.findChild<ReasonDialog *>();
        QVERIFY(ask);
        QTRY_VERIFY(ask->isVisible());
        QCOMPARE(ask->windowTitle(), QStringLiteral("Take over bulk action"));
        const QLabel *description = nullptr;
        for (const QLabel *label : ask->findChildren<QLabel *>())
            if (label->text().startsWith(QLatin1String("Take over the ")))
                description = label;
        QVERIFY(description);
        QCOMPARE(description->text(),
                 QStringLiteral("Take over the requeue of 250 targets started by <b>%1</b> (2 of 5 "
                                "chunks applied). You become its owner and resume the rest; %1 can "
                                "no longer run it.")
                     .arg(m_oncall));
        QCOMPARE(description->textFormat(), Qt::AutoText); // rich: the owner is bold
        auto *confirm = ask->findChild<QDialogButtonBox *>()->button(QDialogButtonBox::Ok);
        QCOMPARE(confirm->text(), QStringLiteral("Take over"));
        QVERIFY(!confirm->isEnabled());
        ask->reasonEdit()->setText(QStringLiteral("alice is off shift"));
        QVERIFY(confirm->isEnabled());
        QVERIFY(ask->grab().save(outputDir() + QStringLiteral("/take_over_dialog.png")));
        ask->reject();
    }

    // A role name that looks like markup is shown as text in the take-over dialog: escaped in
    // the rich description, never a tag.
    void takeOverDialogEscapesTheOwner()
    {
        const QString marked
            = m_db->createLogin(QStringLiteral("<i>bd</i>"), { QStringLiteral("redrive_oncall") });
        const QUuid bulk = startAndStop(marked);
        QVERIFY(!bulk.isNull());
        auto session = m_db->openSession(m_db->consoleSettingsAs(m_oncall2));
        QVERIFY(session);
        BulkActionsDialog dialog(session.get(), { QStringLiteral("redrive_oncall") }, false);
        QSignalSpy loaded(dialog.model(), &ResultTableModel::loaded);
        QVERIFY(loaded.wait(10000));
        select(dialog, bulk);
        dialog.takeOverButton()->click();
        auto *ask = dialog.findChild<ReasonDialog *>();
        QVERIFY(ask);
        const QString escaped = marked.toHtmlEscaped();
        bool found = false;
        for (const QLabel *label : ask->findChildren<QLabel *>())
            if (label->text().startsWith(QLatin1String("Take over the "))) {
                found = true;
                QVERIFY2(label->text().contains(QStringLiteral("<b>%1</b>").arg(escaped)),
                         qPrintable(label->text()));
                QVERIFY(!label->text().contains(QLatin1String("<i>")));
            }
        QVERIFY(found);
        ask->reject();
    }
};

QTEST_MAIN(TestBulkActionsDialog)
#include "tst_bulk_actions_dialog.moc"
