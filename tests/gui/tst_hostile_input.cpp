// SPDX-License-Identifier: GPL-3.0-or-later
// Hostile input in the case view, on a real PostgreSQL (docs/security.md#text-from-the-database-
// is-plain-text, docs/domain.md#a-requeues-story):
// - a dead letter with 50,000 attempts opens with one page of its history (keyset, newest first,
//   with the exact count), pages as it scrolls, and its timeline is drawn from server-side
//   buckets, while the GUI thread never works more than 100 ms between two ticks of a 4 ms timer;
// - JSON nested thousands of levels deep and a megabyte-long single-line error open under the
//   same bound; cells and tooltips get a bounded prefix, Copy copies the whole error;
// - resuming a 100,000-target bulk parses its frozen list off the GUI thread: the GUI thread
//   never works 20 ms between two ticks;
// - markup and an image tag from the database show literally in every label, tooltip and cell,
//   of the case view and of every tab of the main window;
// - a requeued dead letter tells its story by round, with a marker row for the requeue;
// - an unedited edit-and-requeue, made in the dialog by an on-call login over TCP, writes the
//   payload byte for byte, and an edit changes only what was typed; numbers beyond a double
//   (1e400, 401 digits) are JSON to the dialog;
// - the edit dialog opens a big payload (9 MB, 400,000 lines), fed to the editor in slices, with
//   the GUI thread never working 100 ms between two ticks while it opens and scrolls to the end
//   and back, the editor's text equal to the payload byte for byte; it checks each edit off the
//   GUI thread (a timer ticks while the check runs), and refuses to lay out a 50 MB payload;
// - BiDi overrides and zero-width characters are shown as markers in cells, labels, titles and
//   the Ctrl+K summary, never applied; copy keeps them;
// - a kind of 5,000 combining marks counts the same "more characters" in the title and field;
// - long database text (a 10 KB kind, a key of 1,100 lines) never sizes the case view, a saved
//   geometry larger than the screen is clamped, "%1" in database text stays literal, and 1,000
//   queues in the filter are narrowed by typing.
#include "models/action_preview_model.h"
#include "models/attempt_history_model.h"
#include "models/bulk_action_runner.h"
#include "models/compensation_model.h"
#include "models/db/database_session.h"
#include "models/dead_letter_case.h"
#include "models/dead_letter_model.h"
#include "models/display_format.h"
#include "models/failure_group_model.h"
#include "models/mismatch_model.h"
#include "tests/support/test_database.h"
#include "views/action_confirmation_dialog.h"
#include "views/attempt_timeline_plot.h"
#include "views/audit_filter_bar.h"
#include "views/case_view.h"
#include "views/compensation_decision_dialog.h"
#include "views/compensation_request_dialog.h"
#include "views/dead_letter_actions.h"
#include "views/dead_letter_filter_bar.h"
#include "views/edit_payload_dialog.h"
#include "views/error_presenter.h"
#include "views/idempotency_keys_widget.h"
#include "views/main_window.h"
#include "views/mention_search_dialog.h"
#include "views/overview_plot.h"
#include "views/reconciliation_widget.h"
#include "views/result_table_view.h"
#include "views/text_panes.h"

#include <QAbstractItemModelTester>
#include <QAbstractItemView>
#include <QApplication>
#include <QCheckBox>
#include <QClipboard>
#include <QComboBox>
#include <QDir>
#include <QElapsedTimer>
#include <QGuiApplication>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QLabel>
#include <QLineEdit>
#include <QMainWindow>
#include <QMenu>
#include <QMessageBox>
#include <QPlainTextEdit>
#include <QPointer>
#include <QPushButton>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QScreen>
#include <QScrollArea>
#include <QScrollBar>
#include <QSettings>
#include <QSignalSpy>
#include <QStatusBar>
#include <QTabWidget>
#include <QTableView>
#include <QTest>
#include <QTextBlock>
#include <QTextDocument>
#include <QTimer>
#include <QToolButton>
#include <QUuid>
#include <QWidgetAction>
#include <QtEndian>
#include <arpa/inet.h>
#include <cerrno>
#include <cstring>
#include <ctime>
#include <netinet/in.h>
#include <sys/socket.h>
#include <thread>
#include <unistd.h>

using namespace redrive;
using namespace redrive::db;

namespace {

// Markup that Qt would render as rich text (bold, and an image fetched from a path), if any
// label or tooltip let it.
const QString kMarkup = QStringLiteral("<b>x</b><img src=\"file:///etc/hostname\">");

// Milliseconds of CPU the calling thread has used.
double threadCpuMs()
{
    timespec ts {};
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return double(ts.tv_sec) * 1e3 + double(ts.tv_nsec) / 1e6;
}

// The longest gap in the GUI thread's event loop, measured with a timer ticking every 4 ms:
// the most CPU the GUI thread spent between two ticks (what blocks the window; the machine's
// other load, which preempts the thread, does not count) and, for the record, the wall time.
class GapMeter : public QObject
{
public:
    GapMeter()
    {
        m_timer.setInterval(4);
        m_timer.setTimerType(Qt::PreciseTimer);
        connect(&m_timer, &QTimer::timeout, this, [this] { tick(); });
    }
    void start()
    {
        m_wall.start();
        m_lastWall = 0;
        m_lastCpu = threadCpuMs();
        m_timer.start();
    }
    void stop()
    {
        tick();
        m_timer.stop();
    }
    double maxCpuMs() const { return m_maxCpu; }
    double maxWallMs() const { return m_maxWall; }

private:
    void tick()
    {
        const double wall = double(m_wall.nsecsElapsed()) / 1e6;
        const double cpu = threadCpuMs();
        m_maxWall = std::max(m_maxWall, wall - m_lastWall);
        m_maxCpu = std::max(m_maxCpu, cpu - m_lastCpu);
        m_lastWall = wall;
        m_lastCpu = cpu;
    }
    QTimer m_timer;
    QElapsedTimer m_wall;
    double m_lastWall = 0;
    double m_lastCpu = 0;
    double m_maxWall = 0;
    double m_maxCpu = 0;
};

constexpr double kMaxGapMs = 100;

template<class T>
T *child(QWidget *parent, const char *name)
{
    T *w = parent->findChild<T *>(QString::fromLatin1(name));
    if (!w)
        qFatal("no child %s", name);
    return w;
}

// A server that answers every connection's startup packet with an ErrorResponse (SQLSTATE 28000,
// the message given): what a hostile or broken server can put in the connection banner. Serves
// on 127.0.0.1, on a port of its own, from a thread of its own, until destroyed.
class RefusingServer
{
public:
    explicit RefusingServer(QByteArray message)
        : m_message(std::move(message))
    {
        m_fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr {};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof addr;
        if (m_fd < 0 || ::bind(m_fd, reinterpret_cast<sockaddr *>(&addr), sizeof addr) != 0
            || ::listen(m_fd, 8) != 0
            || ::getsockname(m_fd, reinterpret_cast<sockaddr *>(&addr), &len) != 0)
            qFatal("fake server: %s", strerror(errno));
        m_port = ntohs(addr.sin_port);
        m_thread = std::thread([this] { serve(); });
    }
    ~RefusingServer()
    {
        ::shutdown(m_fd, SHUT_RDWR);
        ::close(m_fd);
        m_thread.join();
    }
    int port() const { return m_port; }

private:
    static bool readAll(int fd, char *to, size_t n)
    {
        while (n > 0) {
            const ssize_t got = ::recv(fd, to, n, 0);
            if (got <= 0)
                return false;
            to += got;
            n -= size_t(got);
        }
        return true;
    }
    void serve()
    {
        for (;;) {
            const int c = ::accept(m_fd, nullptr, nullptr);
            if (c < 0)
                return;
            answer(c);
            ::close(c);
        }
    }
    void answer(int c)
    {
        for (;;) {
            unsigned char header[8];
            if (!readAll(c, reinterpret_cast<char *>(header), 8))
                return;
            const quint32 len = qFromBigEndian<quint32>(header);
            const quint32 code = qFromBigEndian<quint32>(header + 4);
            if (code == 80877103 || code == 80877104) { // SSLRequest, GSSENCRequest: no
                ::send(c, "N", 1, MSG_NOSIGNAL);
                continue;
            }
            QByteArray rest(qsizetype(len) - 8, '\0');
            if (!readAll(c, rest.data(), size_t(rest.size())))
                return;
            QByteArray body;
            body += QByteArray("SFATAL\0VFATAL\0C28000\0M", 22) + m_message + '\0' + '\0';
            QByteArray packet("E");
            char size[4];
            qToBigEndian<quint32>(quint32(body.size() + 4), size);
            packet += QByteArray(size, 4) + body;
            ::send(c, packet.constData(), size_t(packet.size()), MSG_NOSIGNAL);
            return;
        }
    }
    QByteArray m_message;
    int m_fd = -1;
    int m_port = 0;
    std::thread m_thread;
};

} // namespace

class TestHostileInput : public QObject
{
    Q_OBJECT
private:
    std::unique_ptr<test::TestDatabase> m_db;
    PgConnection m_admin;
    std::unique_ptr<DatabaseSession> m_session;
    QString m_oncall;
    QString m_password = QStringLiteral("oncall-pw-1");

    ResultSet q(const QByteArray &sql, const QueryParams &params = {})
    {
        auto r = m_admin.exec(sql, params);
        if (!r)
            qFatal("%s: %s", sql.constData(), qPrintable(r.error().summary()));
        return r.value();
    }
    qint64 id(const QByteArray &sql, const QueryParams &params = {})
    {
        return q(sql, params).bigInt(0, 0).value_or(0);
    }
    qint64 job(const QByteArray &payloadSql = "'{\"n\": 1}'::jsonb")
    {
        return id("INSERT INTO redrive.job (queue, kind, payload, state, attempt, max_attempts)"
                  " VALUES ('payments', 'charge_card', "
                  + payloadSql + ", 'dead', 8, 8) RETURNING id");
    }
    qint64 deadLetter(qint64 jobId, const QString &code, const QString &message, int attempts)
    {
        return id("INSERT INTO redrive.dead_letter (job_id, queue, kind, reason, error_class,"
                  " error_code, last_error, stack_trace, attempts, dead_at)"
                  " SELECT id, queue, kind, 'exhausted', 'transient', $2, $3, 'at x (x.py:1)',"
                  " $4, clock_timestamp() FROM redrive.job WHERE id = $1 RETURNING id",
                  QueryParams().addBigInt(jobId).addText(code).addText(message).addInt(attempts));
    }
    // `n` failed transient attempts, one a minute, ending an hour ago.
    void attempts(qint64 jobId, int n, const QString &message = QStringLiteral("503"))
    {
        q("INSERT INTO redrive.attempt (job_id, attempt_no, started_at, finished_at, outcome,"
          " error_class, error_code, message, worker_id, backoff_ms)"
          " SELECT $1, g, clock_timestamp() - interval '1 hour' - (($2 - g) * interval '1 minute'),"
          " clock_timestamp() - interval '1 hour' - (($2 - g) * interval '1 minute')"
          " + interval '80 milliseconds', 'failed', 'transient', 'http_503', $3, 'worker-1', 1000"
          " FROM generate_series(1, $2) g",
          QueryParams().addBigInt(jobId).addInt(n).addText(message));
    }

    static bool waitLoaded(CaseView &view)
    {
        return QTest::qWaitFor(
            [&] { return view.deadLetterCase()->isComplete() && !view.isTextBusy(); }, 30000);
    }

private Q_SLOTS:
    void initTestCase()
    {
        QLocale::setDefault(QLocale(QLocale::English, QLocale::UnitedStates));
        m_db = std::make_unique<test::TestDatabase>(QStringLiteral("hostile_input"));
        QVERIFY2(m_db->isValid(), qPrintable(m_db->error()));
        m_admin = m_db->connect();
        m_oncall = m_db->createLogin(QStringLiteral("oncall_hostile"),
                                     { QStringLiteral("redrive_oncall") }, m_password);
        m_session = m_db->openSession(m_db->consoleTcpSettingsAs(m_oncall, m_password));
        QVERIFY2(m_session, qPrintable(m_db->error()));
    }

    void cleanupTestCase()
    {
        m_session.reset();
        m_admin = PgConnection();
        m_db.reset();
    }

    // A 100,000-target bulk frozen by one console and resumed by another: the frozen list
    // (about 3 MB of JSON) is read and parsed while the GUI thread never works 20 ms between two
    // ticks; the run goes on from chunk 0 with every target (docs/reliability.md).
    void resumingAHugeBulkKeepsTheGuiThreadFree()
    {
        constexpr int kTargets = 100000;
        // A database of its own: 100,000 more dead letters would slow every case view after it.
        test::TestDatabase db(QStringLiteral("hostile_bulk"));
        QVERIFY2(db.isValid(), qPrintable(db.error()));
        PgConnection admin = db.connect();
        const QString oncall = db.createLogin(QStringLiteral("oncall_bulk"),
                                              { QStringLiteral("redrive_oncall") }, m_password);
        auto first = db.openSession(db.consoleTcpSettingsAs(oncall, m_password));
        QVERIFY2(first, qPrintable(db.error()));
        auto seeded = admin.exec(
            "WITH j AS (INSERT INTO redrive.job (queue, kind, payload, state)"
            "           SELECT 'huge_bulk', 'send_receipt', jsonb_build_object('n', g), 'dead'"
            "             FROM generate_series(1, $1) g RETURNING id, queue, kind)"
            "INSERT INTO redrive.dead_letter (job_id, queue, kind, error_class, error_code,"
            "                                 last_error)"
            "SELECT id, queue, kind, 'transient', 'smtp_4xx', '421 try later' FROM j"
            " RETURNING id, version",
            QueryParams().addInt(kTargets));
        QVERIFY2(seeded, seeded ? "" : qPrintable(seeded.error().summary()));
        const ResultSet rows = seeded.value();
        QList<BulkActionRunner::Target> targets;
        for (int i = 0; i < rows.rowCount(); ++i)
            targets.append({ rows.bigInt(i, 0).value_or(0), rows.integer(i, 1).value_or(0) });
        std::sort(targets.begin(), targets.end(),
                  [](const auto &a, const auto &b) { return a.id < b.id; });
        BulkActionRunner::Request request;
        request.action = BulkActionRunner::Action::Resolve;
        request.targets = targets;
        request.resolution = QStringLiteral("not_needed");
        request.reason = QStringLiteral("receipts resent by hand");
        request.osUser = QStringLiteral("alice");
        request.chunkSize = 1000;
        QUuid bulkId;
        {
            // Frozen, then stopped before its first chunk, as a console closed at once would.
            BulkActionRunner freezer(first.get());
            QSignalSpy finished(&freezer, &BulkActionRunner::finished);
            freezer.start(request);
            freezer.cancel();
            QVERIFY(finished.wait(120000));
            QCOMPARE(finished.first().first().toBool(), true);
            bulkId = freezer.bulkId();
        }
        first.reset();
        auto done
            = admin.exec("SELECT chunks_done FROM redrive.bulk_action_list WHERE bulk_id = $1",
                         QueryParams().addUuid(bulkId));
        QVERIFY(done);
        QCOMPARE(done->integer(0, 0), std::optional<int>(0));

        auto session = db.openSession(db.consoleTcpSettingsAs(oncall, m_password));
        QVERIFY2(session, qPrintable(db.error()));
        BulkActionRunner runner(session.get());
        QSignalSpy chunks(&runner, &BulkActionRunner::chunkFinished);
        GapMeter meter;
        meter.start();
        runner.resumeFrozen(bulkId);
        QVERIFY(chunks.wait(120000));
        meter.stop();
        runner.cancel();
        QTRY_VERIFY_WITH_TIMEOUT(!runner.isRunning(), 60000);
        qInfo("resuming 100,000 targets: longest GUI-thread gap %.1f ms CPU (%.1f ms wall)",
              meter.maxCpuMs(), meter.maxWallMs());
        // Tighter than kMaxGapMs: parsing the list on the GUI thread took 67 ms of its CPU here
        // (1.5 ms with the parse on a pool thread), under the general bound.
        constexpr double kMaxResumeGapMs = 20;
        QVERIFY2(meter.maxCpuMs() < kMaxResumeGapMs, qPrintable(QString::number(meter.maxCpuMs())));
        QCOMPARE(runner.targetCount(), kTargets);
        QCOMPARE(runner.chunkCount(), 100);
        QCOMPARE(chunks.first().at(0).toInt(), 0);
        QCOMPARE(chunks.first().at(1).toJsonObject().value(QStringLiteral("applied")).toInt(),
                 1000);
        QCOMPARE(runner.totals().appliedIds.first(), targets.first().id);
    }

    // 50,000 attempts: one page of 200 newest first, the exact count, paging on scroll, the
    // timeline from buckets (no item per attempt); the GUI thread never blocked 100 ms.
    void tensOfThousandsOfAttempts()
    {
        constexpr int kAttempts = 50000;
        const qint64 j = job();
        attempts(j, kAttempts);
        const qint64 dl
            = deadLetter(j, QStringLiteral("http_503"), QStringLiteral("503"), kAttempts);

        GapMeter meter;
        meter.start();
        auto view = std::make_unique<CaseView>(m_session.get(), dl, false);
        QAbstractItemModelTester tester(view->deadLetterCase()->attemptsModel(),
                                        QAbstractItemModelTester::FailureReportingMode::QtTest);
        view->show();
        child<QTabWidget>(view.get(), "tabs")->setCurrentIndex(3);
        QVERIFY(waitLoaded(*view));
        AttemptHistoryModel *history = view->deadLetterCase()->attemptsModel();
        QTRY_COMPARE_WITH_TIMEOUT(history->total(), qint64(kAttempts), 15000);
        QVERIFY(history->totalIsExact());
        // One page, or two when the view (or the model tester) asked for more to fill itself.
        QVERIFY(history->rowCount() % AttemptHistoryModel::kPageSize == 0);
        QVERIFY(history->rowCount() <= 2 * AttemptHistoryModel::kPageSize);
        // Newest first: the first row is attempt 50,000 of round 1.
        QCOMPARE(history->index(0, AttemptHistoryModel::JobAttempt).data().toLongLong(),
                 qint64(kAttempts));
        QCOMPARE(history->index(0, AttemptHistoryModel::Round).data().toLongLong(), 1);
        QCOMPARE(view->deadLetterCase()->attemptCount(), qint64(kAttempts));
        QCOMPARE(child<QLabel>(view.get(), "field_attempts")->text(),
                 QStringLiteral("50,000 of 8"));
        QCOMPARE(child<QTabWidget>(view.get(), "tabs")->tabText(3),
                 QStringLiteral("Retry history (50,000)"));

        // Scrolling to the end pages through the keyset, one page per request.
        auto *table = child<QTableView>(view.get(), "attemptsTable");
        for (int page = 2; page <= 6; ++page) {
            table->scrollToBottom();
            QTRY_VERIFY_WITH_TIMEOUT(history->rowCount() >= page * AttemptHistoryModel::kPageSize,
                                     15000);
        }
        QCOMPARE(
            history->index(6 * AttemptHistoryModel::kPageSize - 1, AttemptHistoryModel::JobAttempt)
                .data()
                .toLongLong(),
            qint64(kAttempts - 6 * AttemptHistoryModel::kPageSize + 1));

        // The timeline: buckets, at most one per pixel it was given, summing to every attempt.
        AttemptTimelinePlot *plot = view->timeline();
        QVERIFY(plot->isBucketed());
        qint64 sum = 0;
        for (const auto &b : view->deadLetterCase()->attemptBuckets())
            sum += b.attempts;
        QCOMPARE(sum, qint64(kAttempts));
        QVERIFY(plot->pointCount() <= view->deadLetterCase()->timelineBuckets());
        QVERIFY(plot->itemsDrawn() < 10);
        QTest::qWait(50);
        view.reset(); // closing is part of it
        QTest::qWait(20);
        meter.stop();
        qInfo("50,000 attempts: longest GUI-thread gap %.1f ms CPU (%.1f ms wall)",
              meter.maxCpuMs(), meter.maxWallMs());
        QVERIFY2(meter.maxCpuMs() < kMaxGapMs, qPrintable(QString::number(meter.maxCpuMs())));
    }

    // JSON nested 3,400 levels deep (about 20 KB): opens within the bound, the Raw text is
    // indented 32 levels and flat beyond (with a note), about the size of the payload.
    void deeplyNestedJson()
    {
        constexpr int kDepth = 3400;
        const qint64 j = job("(repeat('{\"k\":', 3400) || '1' || repeat('}', 3400))::jsonb");
        const qint64 size = id("SELECT octet_length(payload::text) FROM redrive.job WHERE id = $1",
                               QueryParams().addBigInt(j));
        QVERIFY(size > 20000);
        const qint64 dl = deadLetter(j, QStringLiteral("deep"), QStringLiteral("deep"), 1);

        GapMeter meter;
        meter.start();
        CaseView view(m_session.get(), dl, false);
        view.show();
        QVERIFY(waitLoaded(view));
        auto *raw = child<QPlainTextEdit>(&view, "rawPayload");
        child<QTabWidget>(&view, "payloadViews")->setCurrentIndex(1);
        for (int i = 0; i < 20; ++i) {
            raw->verticalScrollBar()->setValue(raw->verticalScrollBar()->maximum() * i / 19);
            QTest::qWait(5);
        }
        meter.stop();
        qInfo("JSON %d levels deep: longest GUI-thread gap %.1f ms CPU (%.1f ms wall)", kDepth,
              meter.maxCpuMs(), meter.maxWallMs());
        QVERIFY2(meter.maxCpuMs() < kMaxGapMs, qPrintable(QString::number(meter.maxCpuMs())));

        const QString text = raw->toPlainText();
        QVERIFY(child<QLabel>(&view, "depthNote")->isVisibleTo(&view));
        // 32 levels indented (4 spaces each), the rest flat: about the payload's own size,
        // where indenting every level would have made 23 million characters.
        QVERIFY2(text.size() < 3 * size, qPrintable(QString::number(text.size())));
        QVERIFY(text.contains(QString(4 * display::kMaxIndentDepth, QLatin1Char(' '))
                              + QStringLiteral("\"k\": {\"k\":")));
        QVERIFY(!text.contains(QString(4 * (display::kMaxIndentDepth + 1), QLatin1Char(' '))));
        // Every token is still there.
        QCOMPARE(text.count(QStringLiteral("\"k\"")), kDepth);
    }

    // A megabyte-long single-line error: cells and tooltips show a bounded prefix, the Last
    // error tab lays it out in pieces, Copy copies it whole; within the bound.
    void megabyteSingleLineError()
    {
        const QString error
            = QStringLiteral("Provider said: ") + QString(1000000, QLatin1Char('y'));
        const qint64 j = job();
        attempts(j, 3, error);
        const qint64 dl = deadLetter(j, QStringLiteral("huge"), error, 3);

        GapMeter meter;
        meter.start();
        CaseView view(m_session.get(), dl, false);
        view.show();
        auto *tabs = child<QTabWidget>(&view, "tabs");
        QVERIFY(waitLoaded(view));
        for (int tab : { 2, 3, 2, 3 }) {
            tabs->setCurrentIndex(tab);
            QTest::qWait(20);
        }
        auto *table = child<QTableView>(&view, "attemptsTable");
        for (int row = 0; row < 3; ++row) {
            table->setCurrentIndex(table->model()->index(row, 0));
            QTest::qWait(10);
        }
        auto *trace = child<QPlainTextEdit>(&view, "stackTrace");
        tabs->setCurrentIndex(2);
        for (int i = 0; i < 10; ++i) {
            trace->verticalScrollBar()->setValue(trace->verticalScrollBar()->maximum() * i / 9);
            QTest::qWait(5);
        }
        meter.stop();
        qInfo("1 MB error: longest GUI-thread gap %.1f ms CPU (%.1f ms wall)", meter.maxCpuMs(),
              meter.maxWallMs());
        QVERIFY2(meter.maxCpuMs() < kMaxGapMs, qPrintable(QString::number(meter.maxCpuMs())));

        const QModelIndex message = table->model()->index(0, AttemptHistoryModel::Message);
        QCOMPARE(message.data().toString(), error.left(300) + QStringLiteral(" …"));
        // The tooltip: what the page sent, bounded, and how much it did not send.
        const QString tip = message.data(Qt::ToolTipRole).toString();
        QVERIFY(tip.size() < 2300);
        QVERIFY(tip.endsWith(QStringLiteral("yyy<br>… and 974.62 KiB more not loaded: Ctrl+C "
                                            "copies the row whole</p></qt>")));
        // Laid out in pieces of 2,000 characters, with a note.
        QVERIFY(trace->document()->blockCount() > 500);
        QVERIFY(child<QLabel>(&view, "longLineNote")->isVisibleTo(&view));
        // Copy keeps it whole.
        QApplication::clipboard()->clear();
        child<QPushButton>(&view, "copyLastError")->click();
        QVERIFY(QApplication::clipboard()->text().contains(error));
    }

    // A 100,000-line error message with a 100,000-line stack trace, on the dead letter and on
    // every attempt: the case view opens, its tabs switch, the attempts are selected and the
    // Last error pane scrolls to its end while the GUI thread never works 100 ms between two
    // ticks; the pane holds every line, Copy copies it whole.
    void hundredThousandLineError()
    {
        QStringList lines;
        lines.reserve(100000);
        for (int i = 0; i < 100000; ++i)
            lines << QStringLiteral("line %1 of the upstream's answer").arg(i);
        const QString error = lines.join(QLatin1Char('\n'));
        const qint64 j = job();
        attempts(j, 3, error);
        const qint64 dl = deadLetter(j, QStringLiteral("tall"), error, 3);

        GapMeter meter;
        meter.start();
        CaseView view(m_session.get(), dl, false);
        view.show();
        auto *tabs = child<QTabWidget>(&view, "tabs");
        QVERIFY(waitLoaded(view));
        for (int tab : { 2, 3, 2, 3 }) {
            tabs->setCurrentIndex(tab);
            QTest::qWait(20);
        }
        auto *table = child<QTableView>(&view, "attemptsTable");
        for (int row = 0; row < 3; ++row) {
            table->setCurrentIndex(table->model()->index(row, 0));
            QTest::qWait(10);
        }
        auto *trace = child<QPlainTextEdit>(&view, "stackTrace");
        tabs->setCurrentIndex(2);
        QVERIFY(QTest::qWaitFor([&] { return trace->document()->blockCount() > 100000; }, 30000));
        for (int i = 0; i < 10; ++i) {
            trace->verticalScrollBar()->setValue(trace->verticalScrollBar()->maximum() * i / 9);
            QTest::qWait(5);
        }
        meter.stop();
        qInfo("100,000-line error: longest GUI-thread gap %.1f ms CPU (%.1f ms wall)",
              meter.maxCpuMs(), meter.maxWallMs());
        QVERIFY2(meter.maxCpuMs() < kMaxGapMs, qPrintable(QString::number(meter.maxCpuMs())));

        // The cell shows the first line and how many follow.
        const QModelIndex message = table->model()->index(0, AttemptHistoryModel::Message);
        QVERIFY2(
            message.data().toString().startsWith(QStringLiteral("line 0 of the upstream's answer")),
            qPrintable(message.data().toString().left(200)));
        QVERIFY(message.data().toString().size() < 400);
        // Every line is in the Last error pane: the error, a blank line, the stack trace.
        QVERIFY(trace->document()->toPlainText().startsWith(error + QStringLiteral("\n\n")));
        // The attempt's pane shows the page's 2,000 characters at once, then reads the first
        // 1,000,000 of the message for it: its first 5,000 lines (a heading, a blank line, 4,998
        // lines of the message) and how many more there are (28,090 lines in all: the heading,
        // the blank, 28,087 lines read, the note of the 2.59 MB not read).
        auto *detail = child<QPlainTextEdit>(&view, "attemptDetail");
        QTRY_VERIFY_WITH_TIMEOUT(
            !panes::isFeeding(detail)
                && !detail->toPlainText().contains(QStringLiteral("reading it")),
            15000);
        const QStringList shown = detail->toPlainText().split(QLatin1Char('\n'));
        QCOMPARE(shown.size(), 5001);
        QCOMPARE(shown.at(2), QStringLiteral("line 0 of the upstream's answer"));
        QCOMPARE(shown.at(4999), QStringLiteral("line 4997 of the upstream's answer"));
        QCOMPARE(shown.at(5000),
                 QStringLiteral("… (23,090 more lines not shown here: Copy as JSON (Ctrl+C) on "
                                "the attempt's row copies it whole)"));
        QApplication::clipboard()->clear();
        table->setFocus();
        table->selectRow(2);
        QTest::keySequence(table, QKeySequence::Copy);
        QTRY_VERIFY(!QApplication::clipboard()->text().isEmpty());
        const QJsonObject copied
            = QJsonDocument::fromJson(QApplication::clipboard()->text().toUtf8())
                  .array()
                  .at(0)
                  .toObject();
        QCOMPARE(copied.value(QStringLiteral("message")).toString(), error);
        QVERIFY(!copied.contains(QStringLiteral("message_cut_bytes")));
        QApplication::clipboard()->clear();
        child<QPushButton>(&view, "copyLastError")->click();
        QVERIFY(QApplication::clipboard()->text().contains(error));
    }

    // Ten attempts of 4 MB each (a 100,000-line message and a 100,000-line stack trace): the
    // retry history's page carries the first 100,000 characters of each, so moving through the
    // attempts never decodes megabytes on the GUI thread (it did: 224-571 ms a step), and the
    // row copied is the attempt whole, as the server has it.
    void tenHugeAttemptsMoveFreely()
    {
        const qint64 j = job();
        q("INSERT INTO redrive.attempt (job_id, attempt_no, started_at, finished_at, outcome,"
          " error_class, message, stack_trace)"
          " SELECT $1, g, clock_timestamp() - interval '50 min' + g * interval '1 min',"
          " clock_timestamp() - interval '50 min' + g * interval '1 min', 'failed', 'transient',"
          " (SELECT string_agg('attempt ' || g || ' line ' || h, E'\n')"
          "    FROM generate_series(1, 100000) h),"
          " repeat(E'at frame\n', 100000) FROM generate_series(1, 10) g",
          QueryParams().addBigInt(j));
        const qint64 dl = deadLetter(j, QStringLiteral("ten"), QStringLiteral("boom"), 10);

        GapMeter meter;
        meter.start();
        CaseView view(m_session.get(), dl, false);
        view.show();
        QVERIFY(waitLoaded(view));
        auto *table = child<QTableView>(&view, "attemptsTable");
        auto *detail = child<QPlainTextEdit>(&view, "attemptDetail");
        QTRY_COMPARE(table->model()->rowCount(), 10);
        table->setFocus();
        for (int step = 0; step < 19; ++step) {
            table->setCurrentIndex(table->model()->index(step < 10 ? step : 18 - step, 0));
            QTRY_VERIFY(!panes::isFeeding(detail));
        }
        meter.stop();
        qInfo("ten 4 MB attempts: longest GUI-thread gap %.1f ms CPU (%.1f ms wall)",
              meter.maxCpuMs(), meter.maxWallMs());
        QVERIFY2(meter.maxCpuMs() < kMaxGapMs, qPrintable(QString::number(meter.maxCpuMs())));

        // The page holds 2,000 characters of each, and the bytes it left out.
        auto *history = view.deadLetterCase()->attemptsModel();
        QCOMPARE(history->text(0, QStringLiteral("message")).size(), 2000);
        const qint64 messageBytes
            = id("SELECT octet_length(message) FROM redrive.attempt WHERE job_id = $1"
                 " AND attempt_no = 10",
                 QueryParams().addBigInt(j));
        QCOMPARE(messageBytes, qint64(2188894));
        QCOMPARE(history->cutBytes(0, QStringLiteral("message")), messageBytes - 2000);
        QCOMPARE(history->cutBytes(0, QStringLiteral("stack_trace")), 900000 - 2000);
        // The pane (attempt 10, the newest, at the top) reads 1,000,000 characters of the message
        // and the whole 900,000 of the stack trace, and shows the first 5,000 lines of them.
        table->setCurrentIndex(table->model()->index(0, 0));
        QTRY_VERIFY_WITH_TIMEOUT(
            !panes::isFeeding(detail)
                && !detail->toPlainText().contains(QStringLiteral("reading it")),
            15000);
        const QString shown = detail->toPlainText();
        QVERIFY(shown.contains(QStringLiteral("\n\nattempt 10 line 1\nattempt 10 line 2\n")));
        QVERIFY(shown.endsWith(QStringLiteral(
            "\n… (140,964 more lines not shown here: Copy as JSON (Ctrl+C) on the attempt's row "
            "copies it whole)")));

        // Two rows copied: both whole, byte for byte the server's, in the table's order.
        table->selectionModel()->select(
            QItemSelection(table->model()->index(3, 0), table->model()->index(4, 0)),
            QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        QApplication::clipboard()->clear();
        QTest::keySequence(table, QKeySequence::Copy);
        QTRY_VERIFY_WITH_TIMEOUT(!QApplication::clipboard()->text().isEmpty(), 15000);
        const QJsonArray rows
            = QJsonDocument::fromJson(QApplication::clipboard()->text().toUtf8()).array();
        QCOMPARE(rows.size(), 2);
        for (int i = 0; i < 2; ++i) {
            const QJsonObject row = rows.at(i).toObject();
            const ResultSet whole = q("SELECT message, stack_trace FROM redrive.attempt"
                                      " WHERE job_id = $1 AND attempt_no = $2",
                                      QueryParams().addBigInt(j).addInt(7 - i));
            QCOMPARE(row.value(QStringLiteral("attempt_no")).toInteger(), 7 - i);
            QVERIFY(row.value(QStringLiteral("message")).toString() == whole.text(0, 0));
            QVERIFY(row.value(QStringLiteral("stack_trace")).toString() == whole.text(0, 1));
            QVERIFY(!row.contains(QStringLiteral("message_cut_bytes")));
            QVERIFY(!row.contains(QStringLiteral("stack_trace_cut_bytes")));
        }
    }

    // An attempt id repeated by another job's attempt (the attempt table's key is the id with
    // the start, so a restore or a superuser's insert can repeat one): the pane and the copy of
    // each dead letter's attempt show its own text, never the other's (the pane showed the other
    // job's text, and a copied row mixed the two).
    void repeatedAttemptIdsStayApart()
    {
        const qint64 first = job(), second = job();
        const QString own = QString(1999, QLatin1Char('a'))
            + QString::fromUtf8("\xF0\x9F\x91\xA9\xE2\x80\x8D\xF0\x9F\x91\xA9\xE2\x80\x8D"
                                "\xF0\x9F\x91\xA7")
            + QStringLiteral("TAIL-OF-A1");
        const QString other = QStringLiteral("WRONG ROW ") + QString(3000, QLatin1Char('w'));
        const qint64 attempt
            = id("INSERT INTO redrive.attempt (job_id, attempt_no, started_at, finished_at,"
                 " outcome, error_class, message, stack_trace, worker_id)"
                 " VALUES ($1, 1, clock_timestamp() - interval '3 min',"
                 " clock_timestamp() - interval '3 min', 'failed', 'permanent', $2, 'st1', 'w1')"
                 " RETURNING id",
                 QueryParams().addBigInt(first).addText(own));
        q("INSERT INTO redrive.attempt (id, job_id, attempt_no, started_at, finished_at, outcome,"
          " error_class, message, worker_id) OVERRIDING SYSTEM VALUE"
          " VALUES ($1, $2, 1, clock_timestamp() - interval '2 min',"
          " clock_timestamp() - interval '1 min', 'failed', 'permanent', $3, 'w-dup')",
          QueryParams().addBigInt(attempt).addBigInt(second).addText(other));
        struct Case
        {
            qint64 deadLetter;
            QString message;
            QJsonValue stackTrace;
            QString notShown;
        };
        const QList<Case> cases {
            { deadLetter(first, QStringLiteral("one"), QStringLiteral("boom"), 1), own,
              QStringLiteral("st1"), QStringLiteral("WRONG ROW") },
            { deadLetter(second, QStringLiteral("two"), QStringLiteral("boom"), 1), other,
              QJsonValue(QJsonValue::Null), QStringLiteral("TAIL-OF-A1") },
        };
        for (const Case &c : cases) {
            CaseView view(m_session.get(), c.deadLetter, false);
            view.show();
            QVERIFY(waitLoaded(view));
            auto *table = child<QTableView>(&view, "attemptsTable");
            auto *detail = child<QPlainTextEdit>(&view, "attemptDetail");
            QTRY_COMPARE(table->model()->rowCount(), 1);
            QCOMPARE(view.deadLetterCase()->attemptsModel()->bigInt(0, QStringLiteral("id")),
                     attempt);
            table->setCurrentIndex(table->model()->index(0, 0));
            QTRY_VERIFY_WITH_TIMEOUT(
                !panes::isFeeding(detail)
                    && !detail->toPlainText().contains(QStringLiteral("reading it")),
                15000);
            const QString shown = detail->toPlainText();
            QVERIFY2(shown.contains(c.message.right(10)) && !shown.contains(c.notShown),
                     qPrintable(shown.left(300)));

            QApplication::clipboard()->clear();
            table->selectRow(0);
            QTest::keySequence(table, QKeySequence::Copy);
            QTRY_VERIFY_WITH_TIMEOUT(!QApplication::clipboard()->text().isEmpty(), 15000);
            const QJsonObject row
                = QJsonDocument::fromJson(QApplication::clipboard()->text().toUtf8())
                      .array()
                      .at(0)
                      .toObject();
            QVERIFY(row.value(QStringLiteral("message")).toString() == c.message);
            QCOMPARE(row.value(QStringLiteral("stack_trace")), c.stackTrace);
            QVERIFY(!row.contains(QStringLiteral("message_cut_bytes")));
        }
    }

    // The read-only panes show hidden characters as markers, as cells do: a BiDi override in
    // an attempt message, a last error or a payload turned "1234-5678" into "8765-4321" and
    // "0001" into "1000", and a zero-width space vanished.
    void panesShowHiddenCharacters()
    {
        const qint64 j = job("'{\"amount\": \"\u202E0001\u202C\", \"note\": \"a\u200Bb\"}'::jsonb");
        q("INSERT INTO redrive.attempt (job_id, attempt_no, started_at, finished_at, outcome,"
          " error_class, message, stack_trace) VALUES ($1, 1, clock_timestamp(),"
          " clock_timestamp(), 'failed', 'permanent', $2, $3)",
          QueryParams()
              .addBigInt(j)
              .addText(QStringLiteral("refund to account \u202E1234-5678\u202C zero\u200Bwidth"))
              .addText(QStringLiteral("at \u202Eevil.js\u202C:1 \U000E0020tag")));
        const qint64 dl = deadLetter(j, QStringLiteral("bidi"),
                                     QStringLiteral("last error \u202Eeulav\u202C"), 1);
        CaseView view(m_session.get(), dl, false);
        view.show();
        QVERIFY(waitLoaded(view));
        auto *table = child<QTableView>(&view, "attemptsTable");
        auto *detail = child<QPlainTextEdit>(&view, "attemptDetail");
        QTRY_COMPARE(table->model()->rowCount(), 1);
        table->setCurrentIndex(table->model()->index(0, 0));
        QTRY_VERIFY(!panes::isFeeding(detail));
        const QString attempt = detail->toPlainText();
        QVERIFY2(attempt.contains(QStringLiteral("refund to account ⟨U+202E⟩1234-5678⟨U+202C⟩ "
                                                 "zero⟨U+200B⟩width")),
                 qPrintable(attempt));
        QVERIFY2(attempt.contains(QStringLiteral("at ⟨U+202E⟩evil.js⟨U+202C⟩:1 ⟨U+E0020⟩tag")),
                 qPrintable(attempt));
        QCOMPARE(child<QPlainTextEdit>(&view, "stackTrace")->toPlainText().section(u'\n', 0, 0),
                 QStringLiteral("last error ⟨U+202E⟩eulav⟨U+202C⟩"));
        auto *raw = child<QPlainTextEdit>(&view, "rawPayload");
        QTRY_VERIFY(raw->toPlainText().contains(QStringLiteral("⟨U+202E⟩0001⟨U+202C⟩")));
        QVERIFY(raw->toPlainText().contains(QStringLiteral("a⟨U+200B⟩b")));
    }

    // A last error of 100,000 CRLF lines, ten of them a megabyte long: the case view opens and
    // shows it while the GUI thread never works 100 ms between two ticks (353 ms at open before).
    void crlfErrorWithMegabyteLines()
    {
        QString error;
        for (int i = 0; i < 100000; ++i) {
            error += QStringLiteral("line %1").arg(i);
            if (i % 10000 == 5000)
                error += QString(1000000, QLatin1Char('w'));
            error += QStringLiteral("\r\n");
        }
        const qint64 j = job();
        const qint64 dl = deadLetter(j, QStringLiteral("crlf"), error, 1);
        GapMeter meter;
        meter.start();
        CaseView view(m_session.get(), dl, false);
        view.show();
        QVERIFY(waitLoaded(view));
        auto *tabs = child<QTabWidget>(&view, "tabs");
        auto *trace = child<QPlainTextEdit>(&view, "stackTrace");
        tabs->setCurrentIndex(2);
        QTest::qWait(50);
        meter.stop();
        qInfo("CRLF error with megabyte lines: longest GUI-thread gap %.1f ms CPU (%.1f ms wall)",
              meter.maxCpuMs(), meter.maxWallMs());
        QVERIFY2(meter.maxCpuMs() < kMaxGapMs, qPrintable(QString::number(meter.maxCpuMs())));
        QVERIFY(trace->document()->blockCount() > 100000);
    }

    // A provider's record of 100,000 fields that all differ from ours, and one of a single 3 MB
    // line: selecting each froze the console for up to a minute (the record went into its pane at
    // once, then one full-width mark per differing line). Now the panes are fed in slices, long
    // lines in pieces, and at most 1,000 lines are marked. Both sides big (400,000 lines each, or
    // a 5 MB line each): leaving such a record cleared its documents on the GUI thread (77 ms
    // here, 450 ms on a loaded machine); a big document is now replaced and deleted off it.
    void reconciliationRecordsDoNotFreeze()
    {
        const qint64 run = id("INSERT INTO redrive.reconciliation_run (provider, status)"
                              " VALUES ('stripe', 'succeeded') RETURNING id");
        const qint64 lines
            = id("INSERT INTO redrive.reconciliation_mismatch (run_id, kind, payment_ref,"
                 " internal_record, external_record, detected_at) VALUES ($1, 'status_mismatch',"
                 " 'pay-lines', '{\"a\": 1}', (SELECT jsonb_object_agg('k' || g, g)"
                 " FROM generate_series(1, 100000) g), clock_timestamp() + interval '2 minutes')"
                 " RETURNING id",
                 QueryParams().addBigInt(run));
        const qint64 big
            = id("INSERT INTO redrive.reconciliation_mismatch (run_id, kind, payment_ref,"
                 " internal_record, external_record, detected_at) VALUES ($1, 'status_mismatch',"
                 " 'pay-big', '{\"a\": 1}', jsonb_build_object('big', repeat('x', 3000000)),"
                 " clock_timestamp() + interval '1 minute') RETURNING id",
                 QueryParams().addBigInt(run));
        // Both sides big: 100,000 differing lines of 9.7 MB each, and a single 5 MB line each.
        const qint64 bothLines = id(
            "INSERT INTO redrive.reconciliation_mismatch (run_id, kind, payment_ref,"
            " internal_record, external_record, detected_at) SELECT $1, 'status_mismatch',"
            " 'pay-both-lines', (SELECT jsonb_build_object('lines', jsonb_agg(jsonb_build_object("
            "'n', g, 'v', 'internal-' || g || repeat('x', 60)))) FROM generate_series(1, 100000) "
            "g),"
            " (SELECT jsonb_build_object('lines', jsonb_agg(jsonb_build_object('n', g, 'v',"
            " 'external-' || g || repeat('y', 60)))) FROM generate_series(1, 100000) g),"
            " clock_timestamp() + interval '3 minutes' RETURNING id",
            QueryParams().addBigInt(run));
        const qint64 bothLine
            = id("INSERT INTO redrive.reconciliation_mismatch (run_id, kind, payment_ref,"
                 " internal_record, external_record, detected_at) VALUES ($1, 'status_mismatch',"
                 " 'pay-both-line', jsonb_build_object('blob', repeat('I', 5000000)),"
                 " jsonb_build_object('blob', repeat('E', 5000000)),"
                 " clock_timestamp() + interval '4 minutes') RETURNING id",
                 QueryParams().addBigInt(run));
        ReconciliationWidget widget(m_session.get());
        widget.resize(1280, 800);
        widget.show();
        widget.refresh();
        QTRY_VERIFY_WITH_TIMEOUT(!widget.isLoading(), 15000);
        QCOMPARE(widget.mismatchModel()->idAt(0), bothLine);
        QCOMPARE(widget.mismatchModel()->idAt(1), bothLines);
        QCOMPARE(widget.mismatchModel()->idAt(2), lines);
        QCOMPARE(widget.mismatchModel()->idAt(3), big);
        auto *external = child<QPlainTextEdit>(&widget, "externalRecord");
        GapMeter meter;
        meter.start();
        for (int row : { 0, 1, 3, 2 }) {
            widget.selectMismatch(row);
            QTRY_VERIFY_WITH_TIMEOUT(!widget.isShowingRecords(), 30000);
            QTest::qWait(20);
        }
        meter.stop();
        qInfo("reconciliation records: longest GUI-thread gap %.1f ms CPU (%.1f ms wall)",
              meter.maxCpuMs(), meter.maxWallMs());
        QVERIFY2(meter.maxCpuMs() < kMaxGapMs, qPrintable(QString::number(meter.maxCpuMs())));
        // Every field shown ("{", 100,000 fields, "}"), the first 1,000 marked.
        QCOMPARE(external->document()->blockCount(), 100002);
        QCOMPARE(external->extraSelections().size(), 1000);
        QCOMPARE(external->extraSelections().first().cursor.block().text(),
                 QStringLiteral("    \"k1\": 1,"));
    }

    // The dead-letter list carries the first 4,096 characters of each last error: a cell shows
    // its first line and " …" when there is more; Ctrl+C copies the error whole (it copied the
    // first line only); a row gone before the copy keeps its prefix and says what is missing.
    void listCopiesTheWholeLastError()
    {
        const QString error = QStringLiteral("Upstream said no\r\n")
            + QString(20000, QLatin1Char('z')) + QStringLiteral("\nthe end");
        const qint64 dl = deadLetter(job(), QStringLiteral("whole"), error, 1);
        const qint64 gone = deadLetter(job(), QStringLiteral("gone"), error, 1);
        DeadLetterModel model(m_session.get());
        model.setFilter({});
        QTRY_VERIFY_WITH_TIMEOUT(model.rowCount() >= 2 && !model.isLoading(), 15000);
        const int row = model.rowOf(QStringLiteral("id"), dl);
        const int goneRow = model.rowOf(QStringLiteral("id"), gone);
        QVERIFY(row >= 0 && goneRow >= 0);
        QCOMPARE(model.index(row, DeadLetterModel::column(QStringLiteral("last_error")))
                     .data()
                     .toString(),
                 QStringLiteral("Upstream said no …"));
        const qint64 cut = QString(error).toUtf8().size() - 4096;
        QCOMPARE(model.cutBytes(row), cut);

        q("DELETE FROM redrive.dead_letter WHERE id = $1", QueryParams().addBigInt(gone));
        std::optional<db::DbExpected<QJsonArray>> answer;
        model.wholeRowsAsJson({ row, goneRow }, this,
                              [&](const db::DbExpected<QJsonArray> &json) { answer = json; });
        QTRY_VERIFY_WITH_TIMEOUT(answer.has_value(), 15000);
        QVERIFY(answer->ok());
        const QJsonObject whole = answer->value().at(0).toObject();
        QCOMPARE(whole.value(QStringLiteral("last_error")).toString(), error);
        QVERIFY(!whole.contains(QStringLiteral("last_error_cut_bytes")));
        const QJsonObject prefix = answer->value().at(1).toObject();
        QCOMPARE(prefix.value(QStringLiteral("last_error")).toString(), error.left(4096));
        QCOMPARE(prefix.value(QStringLiteral("last_error_cut_bytes")).toString(),
                 QString::number(cut));
    }

    // Forty rows of a 10 MB last error copied at once held 1.4 GB and stopped the GUI thread for
    // 576 ms (the text decoded and set there). A copy reads at most 64 MiB again: seven such
    // rows (66.8 MiB to read) are refused with a note and the clipboard stays; six (57.2 MiB)
    // are copied whole while the GUI thread never works 100 ms between two ticks.
    void copyReadsAtMostSixtyFourMebibytes()
    {
        QList<qint64> ids;
        for (int i = 0; i < 7; ++i)
            ids << id("INSERT INTO redrive.dead_letter (job_id, queue, kind, reason, error_class,"
                      " error_code, last_error, attempts, dead_at)"
                      " SELECT id, queue, kind, 'exhausted', 'transient', 'big-copy',"
                      " 'row ' || id || ' ' || repeat('0123456789', 1000000), 1,"
                      " clock_timestamp() FROM redrive.job WHERE id = $1 RETURNING id",
                      QueryParams().addBigInt(job()));
        const auto removeRows = qScopeGuard(
            [&] { q("DELETE FROM redrive.dead_letter WHERE error_code = 'big-copy'"); });
        QMainWindow window;
        auto *view = new ResultTableView(&window);
        window.setCentralWidget(view);
        DeadLetterModel model(m_session.get());
        view->setModel(&model);
        model.setFilter({});
        QTRY_VERIFY_WITH_TIMEOUT(
            !model.isLoading() && model.rowOf(QStringLiteral("id"), ids.last()) >= 0, 15000);
        window.show();
        const auto select = [&](int count) {
            QItemSelection selection;
            qint64 cut = 0;
            for (int i = 0; i < count; ++i) {
                const int row = model.rowOf(QStringLiteral("id"), ids.at(i));
                selection.select(model.index(row, 0), model.index(row, 0));
                cut += model.cutBytes(row);
            }
            view->selectionModel()->select(
                selection, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
            return cut;
        };
        QSignalSpy copied(view, &ResultTableView::copied);

        const qint64 tooMuch = select(7);
        qint64 expected = 0;
        for (qint64 dl : std::as_const(ids))
            expected += 10000005 + QString::number(dl).size() - 4096; // "row <id> " + 10 MB
        QCOMPARE(tooMuch, expected);
        QApplication::clipboard()->setText(QStringLiteral("before"));
        view->copySelectedRows();
        QCOMPARE(window.statusBar()->currentMessage(),
                 QStringLiteral("Not copied: the 7 selected row(s) hold %1 of text, more than a "
                                "copy takes (%2). Select fewer rows.")
                     .arg(QLocale().formattedDataSize(tooMuch),
                          QLocale().formattedDataSize(ResultTableView::kMaxCopyBytes)));
        QTest::qWait(500);
        QCOMPARE(copied.count(), 0);
        QCOMPARE(QApplication::clipboard()->text(), QStringLiteral("before"));

        select(6);
        GapMeter meter;
        meter.start();
        view->copySelectedRows();
        QTRY_COMPARE_WITH_TIMEOUT(copied.count(), 1, 60000);
        meter.stop();
        qInfo("six 10 MB rows copied: longest GUI-thread gap %.1f ms CPU (%.1f ms wall)",
              meter.maxCpuMs(), meter.maxWallMs());
        QVERIFY2(meter.maxCpuMs() < kMaxGapMs, qPrintable(QString::number(meter.maxCpuMs())));
        QCOMPARE(copied.at(0).at(0).toInt(), 6);
        const QJsonArray rows
            = QJsonDocument::fromJson(QApplication::clipboard()->text().toUtf8()).array();
        QCOMPARE(rows.size(), 6);
        for (const QJsonValue &row : rows)
            QCOMPARE(
                row.toObject().value(QStringLiteral("last_error")).toString().size(),
                qsizetype(10000000 + 5
                          + QString::number(row.toObject().value(QStringLiteral("id")).toInteger())
                                .size()));
    }

    // A 2 MB single-line header value and a 2 MB single-line stored key result: both panes get
    // them in pieces (fed as one line, the headers were laid out again after every slice, for
    // minutes), while the GUI thread never works 100 ms between two ticks.
    void megabyteHeaderValueIsShownInPieces()
    {
        const QString value(2000000, QLatin1Char('H'));
        const qint64 j = job();
        q("UPDATE redrive.job SET headers = jsonb_build_object('h', $2::text),"
          " idempotency_key = 'hdr-key' WHERE id = $1",
          QueryParams().addBigInt(j).addText(value));
        q("INSERT INTO redrive.idempotency_key (scope, key, request_hash, state, result, job_id)"
          " SELECT kind, 'hdr-key', repeat('c', 64), 'done', jsonb_build_object('r', $2::text), id"
          " FROM redrive.job WHERE id = $1",
          QueryParams().addBigInt(j).addText(value));
        const qint64 dl = deadLetter(j, QStringLiteral("hdr"), QStringLiteral("boom"), 1);
        q("UPDATE redrive.dead_letter SET idempotency_key = 'hdr-key' WHERE id = $1",
          QueryParams().addBigInt(dl));
        GapMeter meter;
        meter.start();
        CaseView view(m_session.get(), dl, false);
        view.show();
        QVERIFY(waitLoaded(view));
        auto *tabs = child<QTabWidget>(&view, "tabs");
        for (int tab = 0; tab < tabs->count(); ++tab) {
            tabs->setCurrentIndex(tab);
            QTest::qWait(20);
        }
        meter.stop();
        qInfo("2 MB header line: longest GUI-thread gap %.1f ms CPU (%.1f ms wall)",
              meter.maxCpuMs(), meter.maxWallMs());
        QVERIFY2(meter.maxCpuMs() < kMaxGapMs, qPrintable(QString::number(meter.maxCpuMs())));
        for (const char *name : { "headersText", "keyResult" }) {
            auto *pane = child<QPlainTextEdit>(&view, name);
            QVERIFY2(pane->document()->blockCount() > 1000, name);
            QVERIFY2(pane->toPlainText().remove(QLatin1Char('\n')).contains(value), name);
        }
    }

    // Markup and an image tag in every text the database gives the case view: every label
    // shows it as plain text (or escaped), every tooltip escaped, every cell's tooltip escaped.
    void markupIsPlainTextEverywhere()
    {
        const qint64 j = id("INSERT INTO redrive.job (queue, kind, payload, state,"
                            " idempotency_key, entity_id, locked_by)"
                            " VALUES ($1, $1, jsonb_build_object($1, $1), 'dead', $1, $1, $1)"
                            " RETURNING id",
                            QueryParams().addText(kMarkup));
        q("INSERT INTO redrive.attempt (job_id, attempt_no, started_at, finished_at, outcome,"
          " error_class, error_code, message, stack_trace, worker_id)"
          " VALUES ($1, 1, clock_timestamp() - interval '1 minute', clock_timestamp(), 'failed',"
          " 'transient', $2, $2, $2, $2)",
          QueryParams().addBigInt(j).addText(kMarkup));
        const qint64 dl = deadLetter(j, kMarkup, kMarkup, 1);
        q("INSERT INTO redrive.failure_group (fingerprint, kind, error_class, error_code,"
          " sample_message, first_seen) VALUES ($1, $1, 'transient', $1, $1, clock_timestamp())",
          QueryParams().addText(kMarkup));
        q("UPDATE redrive.dead_letter SET claimed_by = $2, claimed_at = clock_timestamp(),"
          " fingerprint = $2 WHERE id = $1",
          QueryParams().addBigInt(dl).addText(kMarkup));
        q("INSERT INTO redrive.idempotency_key (scope, key, request_hash, state, job_id,"
          " locked_by, error_message) VALUES ('charge_card', $2, repeat('ab', 32), 'failed', $1, "
          "$2, $2)",
          QueryParams().addBigInt(j).addText(kMarkup));
        q("INSERT INTO redrive.outbox (command, target_type, target_id, payload, dedupe_key,"
          " last_error) VALUES ('notify', 'dead_letter', $1::text, jsonb_build_object('m', $2),"
          " 'markup:' || $1::text, $2)",
          QueryParams().addBigInt(dl).addText(kMarkup));
        q("INSERT INTO redrive.audit_log (os_user, action, targets, reason, ticket, action_id)"
          " VALUES ($2, 'claim', jsonb_build_array(jsonb_build_object('type', 'dead_letter',"
          " 'id', $1::bigint)), $2, $2, gen_random_uuid())",
          QueryParams().addBigInt(dl).addText(kMarkup));

        CaseView view(m_session.get(), dl, false);
        view.show();
        QVERIFY(waitLoaded(view));
        auto *tabs = child<QTabWidget>(&view, "tabs");
        for (int t = 0; t < tabs->count(); ++t) {
            tabs->setCurrentIndex(t);
            QTest::qWait(10);
        }
        const QString escapedImg = QStringLiteral("&lt;img");
        int labelsWithMarkup = 0;
        for (QLabel *label : view.findChildren<QLabel *>()) {
            const QString what = label->objectName() + QStringLiteral(": ") + label->text();
            if (label->text().contains(QStringLiteral("<img"))) {
                ++labelsWithMarkup;
                QVERIFY2(label->textFormat() == Qt::PlainText, qPrintable(what));
            }
            QVERIFY2(label->textFormat() == Qt::PlainText
                         || !label->text().contains(QStringLiteral("<img")),
                     qPrintable(what));
            QVERIFY2(!label->toolTip().contains(QStringLiteral("<img")), qPrintable(what));
        }
        // The header (queue, kind, error code, claimed by, key), the error summary, the key tab.
        QVERIFY2(labelsWithMarkup >= 6, qPrintable(QString::number(labelsWithMarkup)));
        QVERIFY(child<QLabel>(&view, "field_errorCode")->text().contains(kMarkup));
        QCOMPARE(child<QLabel>(&view, "errorSummary")->textFormat(), Qt::PlainText);
        QVERIFY(child<QLabel>(&view, "errorSummary")->text().contains(kMarkup));
        QVERIFY(child<QLabel>(&view, "field_failureGroup")->toolTip().contains(escapedImg));

        // Every cell of every table: the text as is, the tooltip escaped.
        DeadLetterCase *c = view.deadLetterCase();
        int escapedTips = 0;
        for (QAbstractItemModel *m : std::initializer_list<QAbstractItemModel *> {
                 c->attemptsModel(), c->mismatchesModel(), c->outboxModel(), c->auditModel() }) {
            for (int r = 0; r < m->rowCount(); ++r) {
                for (int col = 0; col < m->columnCount(); ++col) {
                    const QString tip = m->index(r, col).data(Qt::ToolTipRole).toString();
                    QVERIFY2(!tip.contains(QStringLiteral("<img")), qPrintable(tip));
                    escapedTips += tip.contains(escapedImg) ? 1 : 0;
                }
            }
        }
        // Attempts: code, message, worker; outbox: last error, payload; audit: OS user, reason,
        // ticket.
        QVERIFY2(escapedTips >= 8, qPrintable(QString::number(escapedTips)));
        QCOMPARE(c->attemptsModel()->index(0, AttemptHistoryModel::Code).data().toString(),
                 kMarkup);
        // The tree's values: their tooltips escaped too.
        QCOMPARE(view.payloadTreeModel()->index(0, 1).data().toString(), kMarkup);
        QVERIFY(view.payloadTreeModel()
                    ->index(0, 1)
                    .data(Qt::ToolTipRole)
                    .toString()
                    .contains(escapedImg));
        QVERIFY(view.grab().save(QStringLiteral(REDRIVE_TEST_OUTPUT_DIR) + "/markup_case.png"));
    }

    // The same markup in every tab of the main window (after markupIsPlainTextEverywhere left
    // its dead letter, failure group, key, outbox command and audit entry): a reconciliation run
    // and mismatch and a compensation request with markup in every text field too. Every label
    // showing it is plain text, no tooltip of a widget, cell or header carries an unescaped tag,
    // and each tab shows the markup literally in its cells.
    void markupIsPlainTextInEveryTab()
    {
        const qint64 dl = id("SELECT id FROM redrive.dead_letter WHERE error_code = $1",
                             QueryParams().addText(kMarkup));
        QVERIFY(dl > 0);
        const qint64 run = id("INSERT INTO redrive.reconciliation_run (provider, status,"
                              " finished_at, error_message) VALUES ($1, 'failed',"
                              " clock_timestamp(), $1) RETURNING id",
                              QueryParams().addText(kMarkup));
        q("INSERT INTO redrive.reconciliation_mismatch (run_id, kind, payment_ref, order_ref,"
          " internal_amount_minor, external_amount_minor, internal_currency, external_currency,"
          " internal_status, external_status) VALUES ($1, 'status_mismatch', $2, $2, 100, 100,"
          " 'USD', 'USD', $2, $2)",
          QueryParams().addBigInt(run).addText(kMarkup));
        q("INSERT INTO redrive.compensation_request (target_type, target_id, kind, payment_ref,"
          " amount_minor, currency, status, requires_approval, requested_by, reason, ticket,"
          " action_id, error_message) VALUES ('dead_letter', $1, 'refund', $2, 100, 'USD',"
          " 'failed', false, $2, $2, $2, gen_random_uuid(), $2)",
          QueryParams().addBigInt(dl).addText(kMarkup));

        MainWindow window;
        window.resize(1400, 860);
        window.show();
        window.connectTo(m_db->settings());
        QTRY_VERIFY_WITH_TIMEOUT(window.schemaReady(), 15000);
        QTabWidget *tabs = window.tabs();
        QCOMPARE(tabs->count(), 6);
        // Each tab's cells that show the markup as it is (after the tab loaded).
        QList<int> literalCells(tabs->count(), 0);
        auto countLiteral = [&](int t) {
            int n = 0;
            for (QAbstractItemView *view : tabs->widget(t)->findChildren<QAbstractItemView *>()) {
                QAbstractItemModel *m = view->model();
                if (!m)
                    continue;
                for (int r = 0; r < std::min(m->rowCount(), 500); ++r)
                    for (int c = 0; c < m->columnCount(); ++c)
                        n += m->index(r, c).data().toString().contains(kMarkup) ? 1 : 0;
            }
            return n;
        };
        // Dead letters (list and failure groups), keys, reconciliation (run and mismatch),
        // overview (charts only), compensations, audit log. Waited for, not sampled: each tab's
        // lists arrive in their own time, the more so on a busy machine.
        const QList<int> expectedCells({ 18, 9, 18, 0, 9, 9 });
        for (int t = 0; t < tabs->count(); ++t) {
            tabs->setCurrentIndex(t);
            QTRY_COMPARE_WITH_TIMEOUT(countLiteral(t), expectedCells.at(t), 20000);
            QTest::qWait(200);
            literalCells[t] = countLiteral(t);
            // The row with the markup selected in every list, so detail panes show it too.
            for (QAbstractItemView *view : tabs->widget(t)->findChildren<QAbstractItemView *>()) {
                QAbstractItemModel *m = view->model();
                if (!m || !view->selectionModel())
                    continue;
                for (int r = 0; r < std::min(m->rowCount(), 500); ++r) {
                    bool hit = false;
                    for (int c = 0; c < m->columnCount() && !hit; ++c)
                        hit = m->index(r, c).data().toString().contains(kMarkup);
                    if (!hit)
                        continue;
                    view->selectionModel()->setCurrentIndex(m->index(r, 0),
                                                            QItemSelectionModel::ClearAndSelect
                                                                | QItemSelectionModel::Rows);
                    // A failure group filters the list when chosen: click it.
                    if (view->objectName() == QStringLiteral("failureGroups")) {
                        view->scrollTo(m->index(r, 0));
                        QTest::mouseClick(view->viewport(), Qt::LeftButton, {},
                                          view->visualRect(m->index(r, 0)).center());
                    }
                    break;
                }
            }
            QTest::qWait(500);
            QVERIFY(window.grab().save(QStringLiteral(REDRIVE_TEST_OUTPUT_DIR)
                                       + QStringLiteral("/markup_tab_%1.png").arg(t)));
        }
        QCOMPARE(literalCells, expectedCells);

        int labelsWithMarkup = 0;
        for (QLabel *label : window.findChildren<QLabel *>()) {
            const QString what = label->objectName() + QStringLiteral(": ") + label->text();
            if (label->text().contains(QStringLiteral("<img"))) {
                ++labelsWithMarkup;
                QVERIFY2(label->textFormat() == Qt::PlainText, qPrintable(what));
            }
            // A label in rich text shows the database's text escaped, never as markup.
            if (label->textFormat() != Qt::PlainText)
                QVERIFY2(!label->text().contains(QStringLiteral("<img")), qPrintable(what));
        }
        for (QWidget *w : window.findChildren<QWidget *>())
            QVERIFY2(
                !w->toolTip().contains(QStringLiteral("<img")),
                qPrintable(w->metaObject()->className() + QStringLiteral(": ") + w->toolTip()));
        for (QAbstractItemView *view : window.findChildren<QAbstractItemView *>()) {
            QAbstractItemModel *m = view->model();
            if (!m)
                continue;
            for (int c = 0; c < m->columnCount(); ++c)
                QVERIFY(!m->headerData(c, Qt::Horizontal, Qt::ToolTipRole)
                             .toString()
                             .contains(QStringLiteral("<img")));
            for (int r = 0; r < std::min(m->rowCount(), 500); ++r)
                for (int c = 0; c < m->columnCount(); ++c) {
                    const QString tip = m->index(r, c).data(Qt::ToolTipRole).toString();
                    QVERIFY2(!tip.contains(QStringLiteral("<img")),
                             qPrintable(view->objectName() + QStringLiteral(": ") + tip));
                }
        }
        // The dead-letter count naming the selected failure group (it was rich text), the
        // selected key's, compensation request's and audit entry's details.
        QCOMPARE(labelsWithMarkup, 4);
    }

    // The dialogs opened on hostile data show it as text too: the requeue confirmation (its
    // preview of the targets) and Ctrl+K's hits and status line (which repeats the term: it was
    // rich text, so a pasted "<img src=file:…>" was rendered). Runs after
    // markupIsPlainTextEverywhere, which wrote the dead letter, key, outbox row and audit entry
    // that carry the markup.
    void markupIsPlainTextInDialogs()
    {
        const qint64 dl = id("SELECT id FROM redrive.dead_letter WHERE error_code = $1",
                             QueryParams().addText(kMarkup));
        QVERIFY(dl > 0);
        q("UPDATE redrive.dead_letter SET claimed_by = NULL, claimed_at = NULL WHERE id = $1",
          QueryParams().addBigInt(dl));
        MainWindow window;
        window.resize(1400, 860);
        window.show();
        window.connectTo(m_db->settings());
        QTRY_VERIFY_WITH_TIMEOUT(window.schemaReady(), 15000);
        QTRY_VERIFY_WITH_TIMEOUT(window.deadLetterModel()->rowCount() > 0, 15000);
        QTRY_VERIFY_WITH_TIMEOUT(!window.redriveRoles().isEmpty(), 10000);

        // Cells and labels that show the markup as it is, and none that renders it.
        auto literalShown = [](QWidget *root) {
            int n = 0;
            for (QLabel *label : root->findChildren<QLabel *>()) {
                const QString what = label->objectName() + QStringLiteral(": ") + label->text();
                if (label->text().contains(kMarkup)) {
                    ++n;
                    if (label->textFormat() != Qt::PlainText) {
                        qWarning("rich text label with markup: %s", qPrintable(what));
                        return -1;
                    }
                }
                if (label->textFormat() != Qt::PlainText
                    && label->text().contains(QStringLiteral("<img")))
                    return -1;
            }
            for (QWidget *w : root->findChildren<QWidget *>())
                if (w->toolTip().contains(QStringLiteral("<img")))
                    return -1;
            for (QAbstractItemView *view : root->findChildren<QAbstractItemView *>()) {
                QAbstractItemModel *m = view->model();
                if (!m)
                    continue;
                for (int r = 0; r < std::min(m->rowCount(), 200); ++r)
                    for (int c = 0; c < m->columnCount(); ++c) {
                        n += m->index(r, c).data().toString().contains(kMarkup) ? 1 : 0;
                        if (m->index(r, c)
                                .data(Qt::ToolTipRole)
                                .toString()
                                .contains(QStringLiteral("<img")))
                            return -1;
                    }
            }
            return n;
        };

        // Requeue the markup dead letter: the confirmation previews it.
        auto rowOf = [&window](qint64 id) {
            for (int r = 0; r < window.deadLetterModel()->rowCount(); ++r)
                if (window.deadLetterModel()->idAt(r) == id)
                    return r;
            return -1;
        };
        int row = -1;
        QTRY_VERIFY_WITH_TIMEOUT((row = rowOf(dl)) >= 0, 10000);
        QTableView *list = window.deadLetterView();
        list->setFocus();
        list->selectionModel()->setCurrentIndex(window.deadLetterModel()->index(row, 0),
                                                QItemSelectionModel::ClearAndSelect
                                                    | QItemSelectionModel::Rows);
        QList<QPointer<QDialog>> shown;
        connect(window.actions(), &DeadLetterActions::dialogShown, this,
                [&shown](QDialog *d) { shown << d; });
        QVERIFY(window.actions()->requeueAction()->isEnabled());
        window.actions()->requeueAction()->trigger();
        QTRY_VERIFY_WITH_TIMEOUT(!shown.isEmpty() && shown.last(), 10000);
        QDialog *confirm = shown.last();
        QTRY_VERIFY_WITH_TIMEOUT(literalShown(confirm) > 0, 10000);
        QTest::qWait(300);
        const int inConfirm = literalShown(confirm);
        QVERIFY2(inConfirm > 0, qPrintable(QString::number(inConfirm)));
        QVERIFY(confirm->grab().save(QStringLiteral(REDRIVE_TEST_OUTPUT_DIR)
                                     + QStringLiteral("/markup_confirm.png")));
        confirm->reject();

        // Ctrl+K: the hits that mention the markup.
        QAction *find = window.findChild<QAction *>(QStringLiteral("findCustomerAction"));
        QVERIFY(find);
        find->trigger();
        QLineEdit *box = nullptr;
        QTRY_VERIFY_WITH_TIMEOUT(
            (box = window.findChild<QLineEdit *>(QStringLiteral("mentionSearchBox"))), 5000);
        QWidget *dialog = box->window();
        box->setText(kMarkup);
        QTest::keyClick(box, Qt::Key_Return);
        QTRY_VERIFY_WITH_TIMEOUT(literalShown(dialog) > 0, 15000);
        QTest::qWait(300);
        QVERIFY(literalShown(dialog) > 0);
        QVERIFY(dialog->grab().save(QStringLiteral(REDRIVE_TEST_OUTPUT_DIR)
                                    + QStringLiteral("/markup_find.png")));
        dialog->close();
    }

    // A word of 10 KB in the queue, kind, idempotency key and error (the key is named in the
    // verdict, the kind in the title) must not widen the case view: it came out 80,531 px wide,
    // and that size was saved for every later case view.
    void longWordsDoNotWidenTheCaseView()
    {
        const QString word(10240, QLatin1Char('K'));
        const qint64 j = id("INSERT INTO redrive.job (queue, kind, payload, state, idempotency_key)"
                            " VALUES ($1, $1, '{}', 'dead', $1) RETURNING id",
                            QueryParams().addText(word));
        const qint64 dl = deadLetter(j, word, word, 1);
        q("UPDATE redrive.dead_letter SET idempotency_key = $2 WHERE id = $1",
          QueryParams().addBigInt(dl).addText(word));
        q("INSERT INTO redrive.idempotency_key (scope, key, request_hash, state, job_id, result)"
          " VALUES ($1, $1, repeat('a', 64), 'done', $2, '{}')",
          QueryParams().addText(word).addBigInt(j));
        CaseView view(m_session.get(), dl, false);
        view.resize(1200, 800);
        view.show();
        QVERIFY(waitLoaded(view));
        QTest::qWait(100);
        // The verdict names the key (so the long word is really there, a bounded prefix of it),
        // and the view asks for no more than its header's fields take (about 1,900 px; it was
        // 80,531).
        const QString verdict = child<QLabel>(&view, "verdictReasons")->text();
        QVERIFY(verdict.contains(QString(900, QLatin1Char('K'))));
        QVERIFY(!verdict.contains(word));
        QVERIFY2(view.minimumSizeHint().width() < 2500,
                 qPrintable(QString::number(view.minimumSizeHint().width())));
        QVERIFY2(view.width() < 2500, qPrintable(QString::number(view.width())));
    }

    // A NUL cannot reach the server in a text parameter (libpq cuts the value at it), so a search
    // box that took one searched for less than shown: a paste holding a NUL is refused whole, in
    // the dead-letter search, the keys search and the scope filter.
    void nulInASearchIsRefused()
    {
        const QString pasted = QStringLiteral("line 100000") + QChar(0) + QStringLiteral("zzz");
        DeadLetterFilterBar bar;
        auto *search = bar.findChild<QLineEdit *>(QStringLiteral("deadLetterSearch"));
        QVERIFY(search);
        search->insert(QStringLiteral("timeout"));
        search->insert(pasted);
        QCOMPARE(search->text(), QStringLiteral("timeout"));
        IdempotencyKeysWidget keys(m_session.get());
        for (const char *name : { "keySearch", "scopeFilter" }) {
            auto *edit = keys.findChild<QLineEdit *>(QString::fromLatin1(name));
            QVERIFY2(edit, name);
            edit->insert(pasted);
            QCOMPARE(edit->text(), QString());
            edit->insert(QStringLiteral("tab\there"));
            QCOMPARE(edit->text(), QStringLiteral("tab\there")); // other characters stay literal
        }
    }

    // A requeued dead letter reads by round: the story, the marker row (who, when, action id,
    // reset), attempts numbered in their round, and the header's count agreeing with the
    // history's. The requeue is made by an on-call login over TCP with a password.
    void requeueStory()
    {
        const qint64 j = job();
        attempts(j, 8);
        const qint64 dl = deadLetter(j, QStringLiteral("http_503"), QStringLiteral("503"), 8);
        const QUuid action = QUuid::createUuid();
        {
            PgConnection oncall
                = test::TestDatabase::connectWith(m_db->consoleTcpSettingsAs(m_oncall, m_password));
            auto r = oncall.exec(
                "SELECT requeue_dead_letters($1::uuid, jsonb_build_array("
                "jsonb_build_object('id', $2::bigint, 'version', 1)), true,"
                " 'provider is back')::text",
                QueryParams().addText(action.toString(QUuid::WithoutBraces)).addBigInt(dl));
            QVERIFY2(r, qPrintable(r ? QString() : r.error().summary()));
            QVERIFY2(r->text(0, 0).contains(QStringLiteral("\"applied\": 1")),
                     qPrintable(r->text(0, 0)));
        }
        // The worker runs it again: attempt 1 of round 2 succeeds.
        q("INSERT INTO redrive.attempt (job_id, attempt_no, started_at, finished_at, outcome,"
          " worker_id) VALUES ($1, 1, clock_timestamp(), clock_timestamp(), 'succeeded', 'w-2')",
          QueryParams().addBigInt(j));
        const QDateTime requeuedAt
            = q("SELECT at FROM redrive.audit_log WHERE action_id = $1::uuid",
                QueryParams().addText(action.toString(QUuid::WithoutBraces)))
                  .timestamp(0, 0);
        QVERIFY(requeuedAt.isValid());

        CaseView view(m_session.get(), dl, false);
        view.show();
        QVERIFY(waitLoaded(view));
        const QString story
            = QStringLiteral("round 1: 8 attempts, exhausted; requeued by %1 at %2 (attempt "
                             "counter reset); round 2: attempt 1 succeeded")
                  .arg(m_oncall, display::time(requeuedAt, false));
        QCOMPARE(view.deadLetterCase()->story(false), story);
        QCOMPARE(child<QLabel>(&view, "historyStory")->text(), story);

        AttemptHistoryModel *h = view.deadLetterCase()->attemptsModel();
        QTRY_COMPARE(h->total(), qint64(9));
        QCOMPARE(h->rowCount(), 10); // 9 attempts and 1 marker
        auto cell = [&](int row, int column) {
            return h->index(row, column).data().toString();
        };
        // Newest first: round 2's attempt 1, the requeue, then round 1 from attempt 8 down.
        QCOMPARE(cell(0, AttemptHistoryModel::Round), QStringLiteral("2"));
        QCOMPARE(cell(0, AttemptHistoryModel::Attempt), QStringLiteral("1"));
        QCOMPARE(cell(0, AttemptHistoryModel::Outcome), QStringLiteral("succeeded"));
        QVERIFY(h->isRequeueMarker(1));
        QCOMPARE(cell(1, AttemptHistoryModel::Round), QStringLiteral("2"));
        QCOMPARE(cell(1, AttemptHistoryModel::Outcome), QStringLiteral("requeued"));
        QCOMPARE(cell(1, AttemptHistoryModel::Message),
                 QStringLiteral("Requeued by %1 · attempt counter reset · action %2")
                     .arg(m_oncall, action.toString(QUuid::WithoutBraces)));
        QCOMPARE(cell(1, AttemptHistoryModel::Started), display::time(requeuedAt, false));
        QCOMPARE(cell(2, AttemptHistoryModel::Round), QStringLiteral("1"));
        QCOMPARE(cell(2, AttemptHistoryModel::Attempt), QStringLiteral("8"));
        QCOMPARE(cell(9, AttemptHistoryModel::Attempt), QStringLiteral("1"));
        QVERIFY(!h->isRequeueMarker(9));
        // The header agrees with the history.
        QCOMPARE(child<QLabel>(&view, "field_attempts")->text(), QStringLiteral("9 in 2 rounds"));
        QCOMPARE(child<QTabWidget>(&view, "tabs")->tabText(3), QStringLiteral("Retry history (9)"));
        // The timeline marks the requeue; 9 attempts are drawn one by one.
        QVERIFY(!view.timeline()->isBucketed());
        QCOMPARE(view.timeline()->pointCount(), 9);
        child<QTabWidget>(&view, "tabs")->setCurrentIndex(3);
        QTest::qWait(50);
        QVERIFY(
            view.grab().save(QStringLiteral(REDRIVE_TEST_OUTPUT_DIR) + "/requeue_story_case.png"));
    }

    // A payload with a duplicate key, enqueued with its text: shown exactly as received (the
    // jsonb kept only the last "b"), with a note naming the merged key; one enqueued as jsonb
    // says that duplicates and order were not kept; a changed payload drops the stale text.
    void duplicateKeysShownAsReceived()
    {
        const QString sent
            = QStringLiteral("{\"b\": 1, \"a\": 2, \"b\": 3, \"big\": 9007199254740993}");
        const qint64 j = id("SELECT redrive.enqueue_job_received('payments', 'charge_card', $1,"
                            " NULL)",
                            QueryParams().addText(sent));
        q("UPDATE redrive.job SET state = 'dead' WHERE id = $1", QueryParams().addBigInt(j));
        QCOMPARE(
            q("SELECT payload::text FROM redrive.job WHERE id = $1", QueryParams().addBigInt(j))
                .text(0, 0),
            QStringLiteral("{\"a\": 2, \"b\": 3, \"big\": 9007199254740993}"));
        const qint64 dl = deadLetter(j, QStringLiteral("dup"), QStringLiteral("dup"), 1);

        CaseView view(m_session.get(), dl, false);
        view.show();
        QVERIFY(waitLoaded(view));
        QCOMPARE(child<QLabel>(&view, "receivedNote")->text(),
                 QStringLiteral("Shown as received. Keys merged: b sent more than once; the stored"
                                " jsonb (what queries read and a requeue sends) kept only the last"
                                " value of each."));
        QCOMPARE(view.payloadTreeModel()->rowCount(), 4); // b, a, b, big
        QCOMPARE(view.payloadTreeModel()->index(2, 1).data().toString(), QStringLiteral("3"));
        child<QCheckBox>(&view, "indentJson")->setChecked(false);
        QTRY_COMPARE(child<QPlainTextEdit>(&view, "rawPayload")->toPlainText(), sent);

        // Enqueued as jsonb: said so.
        const qint64 plain = deadLetter(job(), QStringLiteral("x"), QStringLiteral("x"), 1);
        CaseView other(m_session.get(), plain, false);
        other.show();
        QVERIFY(waitLoaded(other));
        QCOMPARE(child<QLabel>(&other, "receivedNote")->text(),
                 QStringLiteral("Shown as stored (jsonb): this job was enqueued as jsonb, so"
                                " duplicate keys and the key order as sent were not kept."));

        // A changed payload (an applied edit) no longer claims to be the one received.
        q("UPDATE redrive.job SET payload = '{\"a\": 9}' WHERE id = $1",
          QueryParams().addBigInt(j));
        QVERIFY(
            q("SELECT payload_received FROM redrive.job WHERE id = $1", QueryParams().addBigInt(j))
                .isNull(0, 0));
    }

    // Edit and requeue through the dialog as an on-call login over TCP: unedited, the payload
    // written (outbox command and audit after) is byte for byte the stored one, big integers and
    // long decimals included; edited, only what was typed differs.
    void editKeepsUntouchedTokens()
    {
        const QByteArray stored
            = "{\"amount\": 9007199254740993, \"rate\": 0.10000000000000000000000000001, "
              "\"big\": 123456789012345678901234567890, \"note\": \"a\", \"nested\": {\"x\": "
              "[1.50, -0, 1E+2]}}";
        for (const bool edit : { false, true }) {
            const qint64 j = job();
            q("UPDATE redrive.job SET payload = $2::jsonb WHERE id = $1",
              QueryParams().addBigInt(j).addText(QString::fromUtf8(stored)));
            const qint64 dl = deadLetter(j, QStringLiteral("bad_amount"), QStringLiteral("x"), 1);
            const QByteArray before = q("SELECT payload::text FROM redrive.job WHERE id = $1",
                                        QueryParams().addBigInt(j))
                                          .raw(0, 0);
            QVERIFY(before.contains("9007199254740993"));
            QVERIFY(before.contains("0.10000000000000000000000000001"));

            EditPayloadDialog dialog(m_session.get(), dl);
            dialog.show();
            QTRY_VERIFY_WITH_TIMEOUT(dialog.editor()->isEnabled(), 15000);
            if (edit) {
                QString text = dialog.editor()->toPlainText();
                QVERIFY(text.contains(QStringLiteral("\"note\": \"a\"")));
                text.replace(QStringLiteral("\"note\": \"a\""), QStringLiteral("\"note\": \"b\""));
                dialog.editor()->setPlainText(text);
            }
            dialog.reasonEdit()->setText(QStringLiteral("fix the note"));
            QSignalSpy applied(&dialog, &EditPayloadDialog::applied);
            QTRY_VERIFY(dialog.confirmButton()->isEnabled());
            dialog.confirmButton()->click();
            QVERIFY(applied.wait(15000));
            const QString reference = applied.at(0).at(1).toString();
            const ResultSet audit
                = q("SELECT (before -> 'payload')::text, (after -> 'payload')::text"
                    " FROM redrive.audit_log WHERE action_id = $1::uuid",
                    QueryParams().addText(reference));
            QCOMPARE(audit.rowCount(), 1);
            const QByteArray outbox = q("SELECT (payload -> 'payload')::text FROM redrive.outbox"
                                        " WHERE action_id = $1::uuid",
                                        QueryParams().addText(reference))
                                          .raw(0, 0);
            QByteArray expected = before;
            if (edit)
                expected.replace("\"note\": \"a\"", "\"note\": \"b\"");
            QCOMPARE(audit.raw(0, 0), before);
            QCOMPARE(audit.raw(0, 1), expected);
            QCOMPARE(outbox, expected);
        }
    }

    // The key note ("No idempotency-key record for key %1 (scope %2).") had no bound: a 10 KB kind
    // made the case view 80,531 px wide, a key of 1,100 lines 15,685 px tall. The note shows the
    // key's first three lines and the kind's first 300 characters, each with what was left out;
    // the fields keep their "(N more characters)" whole (it was elided to "…240 more
    // characters)").
    void keyNoteAndFieldsAreBounded()
    {
        const QString kind(10240, QLatin1Char('K'));
        QString key = QStringLiteral("<b>K</b>\n");
        for (int i = 0; i < 1100; ++i)
            key += QStringLiteral("key\tpart\n");
        key += QStringLiteral("END");
        const qint64 j = id("INSERT INTO redrive.job (queue, kind, payload, state, idempotency_key)"
                            " VALUES ('payments', $1, '{}', 'dead', $2) RETURNING id",
                            QueryParams().addText(kind).addText(key));
        const qint64 dl = deadLetter(j, QStringLiteral("code"), QStringLiteral("message"), 1);
        q("UPDATE redrive.dead_letter SET idempotency_key = $2 WHERE id = $1",
          QueryParams().addBigInt(dl).addText(key));
        CaseView view(m_session.get(), dl, false);
        view.resize(1200, 800);
        view.show();
        QVERIFY(waitLoaded(view));
        QTest::qWait(100);
        QCOMPARE(child<QLabel>(&view, "keyEmpty")->text(),
                 QStringLiteral("No idempotency-key record for key <b>K</b>\nkey\tpart\nkey\tpart\n"
                                "\u2026 (1,099 more lines) (scope ")
                     + QString(300, QLatin1Char('K'))
                     + QStringLiteral(" \u2026 (9,940 more characters))."));
        QCOMPARE(child<QLabel>(&view, "field_idempotencyKey")->text(),
                 QStringLiteral("<b>K</b> \u2026 (9,904 more characters)"));
        const QString kindField = child<QLabel>(&view, "field_kind")->text();
        QVERIFY2(kindField.endsWith(QStringLiteral("K \u2026 (9,240 more characters)")),
                 qPrintable(kindField));
        QVERIFY2(view.minimumSizeHint().width() < 2500,
                 qPrintable(QString::number(view.minimumSizeHint().width())));
        QVERIFY2(view.minimumSizeHint().height() < 800,
                 qPrintable(QString::number(view.minimumSizeHint().height())));
        QCOMPARE(view.size(), QSize(1200, 800));
        child<QTabWidget>(&view, "tabs")->setCurrentIndex(4); // the idempotency key
        QTest::qWait(50);
        QVERIFY(QDir().mkpath(QStringLiteral(REDRIVE_TEST_OUTPUT_DIR)));
        QVERIFY(view.grab().save(QStringLiteral(REDRIVE_TEST_OUTPUT_DIR)
                                 + QStringLiteral("/case_view_long_kind.png")));
    }

    // A case view's saved size is restored no larger than the screen (80,000 px was saved once
    // and every later case view opened that wide), and a size larger than the screen is not
    // saved.
    void savedGeometryIsClampedToTheScreen()
    {
        const qint64 dl = deadLetter(job(), QStringLiteral("code"), QStringLiteral("message"), 1);
        QWidget poisoned;
        poisoned.setGeometry(0, 0, 80000, 3000);
        QSettings().setValue(QStringLiteral("case/geometry"), poisoned.saveGeometry());
        const QRect screen = QGuiApplication::primaryScreen()->availableGeometry();
        {
            CaseView view(m_session.get(), dl, false);
            view.show();
            QVERIFY(waitLoaded(view));
            QVERIFY2(
                view.width() <= screen.width() && view.height() <= screen.height(),
                qPrintable(QStringLiteral("%1x%2 on %3x%4")
                               .arg(QString::number(view.width()), QString::number(view.height()),
                                    QString::number(screen.width()),
                                    QString::number(screen.height()))));
            view.resize(screen.width() + 500, screen.height());
        } // closing saves the layout
        QVERIFY(!QSettings().contains(QStringLiteral("case/geometry")));
        {
            CaseView view(m_session.get(), dl, false);
            view.resize(screen.width() / 2, screen.height() / 2);
        }
        QVERIFY(QSettings().contains(QStringLiteral("case/geometry")));
    }

    // tr("… %1 … %2").arg(text).arg(n) rewrites a "%1" inside the text: a queue "pq%1%2%L1" was
    // shown as "pq1%2%3 (%L2)". Database text is substituted in one arg() call everywhere.
    void percentSignsInDatabaseTextStayLiteral()
    {
        const QString queue = QStringLiteral("pq%1%2%L1");
        const QString kind = QStringLiteral("k%1%2");
        const QString code = QStringLiteral("c%1%2%L1");
        const qint64 j = id("INSERT INTO redrive.job (queue, kind, payload, state)"
                            " VALUES ($1, $2, '{\"n\": 1}', 'dead') RETURNING id",
                            QueryParams().addText(queue).addText(kind));
        const qint64 dl = deadLetter(j, code, QStringLiteral("m%1"), 3);
        const QDateTime deadAt = q("SELECT dead_at FROM redrive.dead_letter WHERE id = $1",
                                   QueryParams().addBigInt(dl))
                                     .timestamp(0, 0);
        {
            CaseView view(m_session.get(), dl, false);
            view.show();
            QVERIFY(waitLoaded(view));
            QCOMPARE(child<QLabel>(&view, "errorSummary")->text(),
                     QStringLiteral("transient · c%1%2%L1 — dead-lettered (exhausted) after 3 "
                                    "attempts, ")
                         + display::time(deadAt, false));
            QCOMPARE(child<QLabel>(&view, "title")->text(),
                     QStringLiteral("Dead letter #") + QString::number(dl)
                         + QStringLiteral(" — k%1%2"));
            QCOMPARE(child<QLabel>(&view, "field_queue")->text(), queue);
        }
        {
            ActionConfirmationDialog dialog(ActionConfirmationDialog::Kind::Requeue,
                                            QStringLiteral("1 selected dead letter"));
            auto *preview = new ActionPreviewModel(m_session.get(), &dialog);
            dialog.setPreview(preview);
            preview->loadIds({ dl });
            QTRY_VERIFY_WITH_TIMEOUT(dialog.summaryText().contains(QStringLiteral("Queues:")),
                                     10000);
            QVERIFY2(
                dialog.summaryText().contains(QStringLiteral("<b>Queues:</b> pq%1%2%L1 (1)<br>")),
                qPrintable(dialog.summaryText()));
        }
        {
            EditPayloadDialog dialog(m_session.get(), dl);
            auto findHeader = [&dialog]() -> QLabel * {
                for (QLabel *label : dialog.findChildren<QLabel *>())
                    if (label->text().startsWith(QStringLiteral("Dead letter <b>")))
                        return label;
                return nullptr;
            };
            QLabel *header = nullptr;
            QTRY_VERIFY_WITH_TIMEOUT((header = findHeader()) != nullptr, 10000);
            QVERIFY2(header->text().startsWith(
                         QStringLiteral("Dead letter <b>") + QString::number(dl)
                         + QStringLiteral("</b> · pq%1%2%L1 · k%1%2 · status <b>open</b> · "
                                          "version 1")),
                     qPrintable(header->text()));
        }
    }

    void thousandQueuesAreNarrowedByTyping()
    {
        QStringList queues;
        for (int i = 1; i <= 1000; ++i)
            queues << QStringLiteral("q%1").arg(i);
        queues.sort(); // as the database sends them: q1, q10, q100, q1000, q101, …
        DeadLetterFilterBar bar;
        bar.setFacets(queues, { QStringLiteral("charge_card") });
        QToolButton *button = nullptr;
        for (QToolButton *b : bar.findChildren<QToolButton *>())
            if (b->text() == QStringLiteral("Queue: any"))
                button = b;
        QVERIFY(button && button->menu());
        QMenu *menu = button->menu();
        QLineEdit *search = nullptr;
        auto visibleValues = [menu, &search] {
            QStringList out;
            for (QAction *a : menu->actions()) {
                if (auto *w = qobject_cast<QWidgetAction *>(a))
                    search = qobject_cast<QLineEdit *>(w->defaultWidget());
                if (a->isCheckable() && a->isVisible())
                    out << a->data().toString();
            }
            return out;
        };
        auto moreText = [menu] {
            for (QAction *a : menu->actions())
                if (a->objectName() == QLatin1String("moreValues"))
                    return a->isVisible() ? a->text() : QString();
            return QStringLiteral("(no entry)");
        };
        QStringList first30;
        for (int i = 1; i <= 30; ++i)
            first30 << QStringLiteral("q%1").arg(i);
        QCOMPARE(visibleValues(), first30);
        QCOMPARE(moreText(), QStringLiteral("970 more: type to narrow"));
        QVERIFY(search);
        search->setText(QStringLiteral("Q99"));
        QCOMPARE(
            visibleValues(),
            QStringList({ QStringLiteral("q99"), QStringLiteral("q990"), QStringLiteral("q991"),
                          QStringLiteral("q992"), QStringLiteral("q993"), QStringLiteral("q994"),
                          QStringLiteral("q995"), QStringLiteral("q996"), QStringLiteral("q997"),
                          QStringLiteral("q998"), QStringLiteral("q999") }));
        QCOMPARE(moreText(), QString());
        QSignalSpy changed(&bar, &DeadLetterFilterBar::filterChanged);
        for (QAction *a : menu->actions())
            if (a->data().toString() == QLatin1String("q995"))
                a->setChecked(true);
        QCOMPARE(changed.size(), 1);
        QCOMPARE(bar.filter().queues, QStringList { QStringLiteral("q995") });
        QCOMPARE(button->text(), QStringLiteral("Queue: q995"));
        // The checked queue stays in view whatever is typed.
        search->setText(QStringLiteral("q1"));
        QCOMPARE(visibleValues().first(), QStringLiteral("q1"));
        QVERIFY(visibleValues().contains(QStringLiteral("q995")));
        QCOMPARE(visibleValues().size(), 31);
        // "q1" matches q1, q10–q19, q100–q199 and q1000: 112, of which 30 are shown.
        QCOMPARE(moreText(), QStringLiteral("82 more: type to narrow"));
        QVERIFY2(menu->sizeHint().height()
                     <= QGuiApplication::primaryScreen()->availableGeometry().height(),
                 qPrintable(QString::number(menu->sizeHint().height())));
    }

    // Numbers a double cannot hold: Qt's JSON parser refused the payload, so an untouched
    // requeue was impossible. The dialog checks without a double; unedited, the payload goes
    // back byte for byte; typed, such numbers are valid JSON.
    void editDialogTakesNumbersBeyondADouble()
    {
        const QByteArray digits401 = "9" + QByteArray(400, '7');
        const QByteArray stored = "{\"huge\": 1e400, \"digits\": " + digits401
            + ", \"neg0\": -0, \"typed\": 1.0E+2, \"tiny\": 1e-400}";
        const qint64 j = job();
        q("UPDATE redrive.job SET payload = $2::jsonb WHERE id = $1",
          QueryParams().addBigInt(j).addText(QString::fromUtf8(stored)));
        const qint64 dl = deadLetter(j, QStringLiteral("big_number"), QStringLiteral("x"), 1);
        const QByteArray before
            = q("SELECT payload::text FROM redrive.job WHERE id = $1", QueryParams().addBigInt(j))
                  .raw(0, 0);
        // jsonb keeps numeric: 1e400 as 401 digits, the 401-digit integer as is.
        QVERIFY(before.contains("\"huge\": 1" + QByteArray(400, '0') + ","));
        QVERIFY(before.contains("\"digits\": " + digits401));

        EditPayloadDialog dialog(m_session.get(), dl);
        dialog.show();
        QSignalSpy validated(&dialog, &EditPayloadDialog::validated);
        QTRY_VERIFY_WITH_TIMEOUT(dialog.editor()->isEnabled(), 15000);
        QTRY_VERIFY_WITH_TIMEOUT(!dialog.isChecking(), 15000);
        QCOMPARE(dialog.validationMessage(), QString());
        QCOMPARE(child<QLabel>(&dialog, "validation")->text(), QStringLiteral("✓ valid JSON"));
        QVERIFY(dialog.editor()->toPlainText().contains(QStringLiteral("\"digits\": ")
                                                        + QString::fromLatin1(digits401)));

        // Typed as the operator would: still JSON, whatever a double makes of it.
        const QString original = dialog.editor()->toPlainText();
        dialog.editor()->setPlainText(
            QStringLiteral("{\"a\": 1e400, \"b\": -0, \"c\": 1.0E+2, \"d\": %1}")
                .arg(QString::fromLatin1(digits401)));
        QTRY_VERIFY_WITH_TIMEOUT(!dialog.isChecking(), 15000);
        QCOMPARE(dialog.validationMessage(), QString());
        dialog.editor()->setPlainText(QStringLiteral("{\"a\": 1e400,\n  \"b\": -}"));
        QTRY_VERIFY_WITH_TIMEOUT(!dialog.isChecking(), 15000);
        QCOMPARE(dialog.validationMessage(),
                 QStringLiteral("Not valid JSON at line 2, column 9: expected a value"));
        QVERIFY(!dialog.confirmButton()->isEnabled());

        // Back to the payload as loaded, never edited: a fresh dialog, requeued untouched.
        Q_UNUSED(original);
        dialog.reject();
        EditPayloadDialog untouched(m_session.get(), dl);
        untouched.show();
        QTRY_VERIFY_WITH_TIMEOUT(untouched.editor()->isEnabled(), 15000);
        untouched.reasonEdit()->setText(QStringLiteral("requeue as is"));
        QTRY_VERIFY_WITH_TIMEOUT(untouched.confirmButton()->isEnabled(), 15000);
        QSignalSpy applied(&untouched, &EditPayloadDialog::applied);
        untouched.confirmButton()->click();
        QVERIFY(applied.wait(15000));
        const QString reference = applied.at(0).at(1).toString();
        const ResultSet audit = q("SELECT (before -> 'payload')::text, (after -> 'payload')::text"
                                  " FROM redrive.audit_log WHERE action_id = $1::uuid",
                                  QueryParams().addText(reference));
        QCOMPARE(audit.rowCount(), 1);
        QCOMPARE(audit.raw(0, 0), before);
        QCOMPARE(audit.raw(0, 1), before);
        QCOMPARE(q("SELECT (payload -> 'payload')::text FROM redrive.outbox"
                   " WHERE action_id = $1::uuid",
                   QueryParams().addText(reference))
                     .raw(0, 0),
                 before);
    }

    // Edit and requeue on a big payload (about 9 MB, 400,000 lines once indented): opening it
    // and checking an edit run on workers; the GUI thread never works 100 ms between two ticks,
    // and a timer ticks while the check of the edited text runs.
    void editDialogChecksABigPayloadOffTheGuiThread()
    {
        const qint64 j = job("jsonb_build_object('items', (SELECT jsonb_agg(jsonb_build_object("
                             "'id', g, 'note', repeat('x', 40))) FROM generate_series(1, 100000) "
                             "g))");
        const qint64 dl = deadLetter(j, QStringLiteral("big_payload"), QStringLiteral("x"), 1);
        const QByteArray shown = display::prettyJson(
            q("SELECT payload::text FROM redrive.job WHERE id = $1", QueryParams().addBigInt(j))
                .raw(0, 0));
        GapMeter meter;
        meter.start();
        QElapsedTimer opening;
        opening.start();
        EditPayloadDialog dialog(m_session.get(), dl);
        dialog.show();
        QSignalSpy loaded(&dialog, &EditPayloadDialog::loaded);
        // While it is fed to the editor in slices, the dialog says how far it got and offers no
        // confirm button.
        dialog.reasonEdit()->setText(QStringLiteral("fix the payload"));
        QTRY_VERIFY_WITH_TIMEOUT(dialog.validationMessage().startsWith(
                                     QStringLiteral("Loading the payload into the editor… ")),
                                 60000);
        QVERIFY(!dialog.confirmButton()->isEnabled());
        QVERIFY(!dialog.editor()->isEnabled());
        QVERIFY(dialog.grab().save(QStringLiteral(REDRIVE_TEST_OUTPUT_DIR)
                                   + QStringLiteral("/edit_big_payload_loading.png")));
        QVERIFY(loaded.wait(60000));
        qInfo("9 MB payload in the editor after %lld ms", opening.elapsed());
        QVERIFY(dialog.isLoaded());
        QVERIFY(dialog.editor()->isEnabled());
        QVERIFY(!dialog.isChecking());
        QCOMPARE(dialog.validationMessage(), QString());
        QCOMPARE(dialog.editor()->document()->blockCount(), 400004);
        // Scrolled to the end and back, as a person reading it would.
        QScrollBar *bar = dialog.editor()->verticalScrollBar();
        QCOMPARE(bar->maximum() > 399000, true);
        bar->setValue(bar->maximum());
        QTest::qWait(20);
        QCOMPARE(dialog.editor()->cursorForPosition(QPoint(2, 2)).blockNumber() > 399000, true);
        bar->setValue(0);
        QTest::qWait(20);
        QCOMPARE(dialog.editor()->cursorForPosition(QPoint(2, 2)).blockNumber(), 0);
        meter.stop();
        qInfo("9 MB payload opened: longest GUI-thread gap %.1f ms CPU (%.1f ms wall)",
              meter.maxCpuMs(), meter.maxWallMs());
        QVERIFY2(meter.maxCpuMs() < kMaxGapMs, qPrintable(QString::number(meter.maxCpuMs())));
        // The editor holds the payload as indented, every byte of it, and nothing to undo.
        const QByteArray inEditor = dialog.editor()->toPlainText().toUtf8();
        QCOMPARE(inEditor.size(), shown.size());
        QVERIFY(inEditor == shown);
        QVERIFY(!dialog.editor()->document()->isUndoAvailable());
        QVERIFY(dialog.confirmButton()->isEnabled());
        dialog.reasonEdit()->clear();
        GapMeter checking;
        checking.start();

        int ticks = 0;
        int ticksWhileChecking = -1;
        QTimer ticker;
        ticker.setInterval(1);
        connect(&ticker, &QTimer::timeout, this, [&ticks] { ++ticks; });
        connect(&dialog, &EditPayloadDialog::validationStarted, this, [&ticks] { ticks = 0; });
        connect(&dialog, &EditPayloadDialog::validated, this, [&] { ticksWhileChecking = ticks; });
        ticker.start();
        QTextCursor cursor(dialog.editor()->document());
        cursor.movePosition(QTextCursor::End);
        cursor.insertText(QStringLiteral(","));
        QTRY_VERIFY_WITH_TIMEOUT(ticksWhileChecking >= 0, 60000);
        checking.stop();
        qInfo("9 MB payload edited: %d ticks while checked; longest GUI-thread gap %.1f ms CPU "
              "(%.1f ms wall)",
              ticksWhileChecking, checking.maxCpuMs(), checking.maxWallMs());
        QVERIFY2(ticksWhileChecking >= 1, qPrintable(QString::number(ticksWhileChecking)));
        QCOMPARE(dialog.validationMessage(),
                 QStringLiteral("Not valid JSON at line 400,004, column 2: unexpected text after "
                                "the document"));
        QVERIFY2(checking.maxCpuMs() < kMaxGapMs, qPrintable(QString::number(checking.maxCpuMs())));
        QVERIFY(!dialog.confirmButton()->isEnabled());
        QVERIFY(dialog.grab().save(QStringLiteral(REDRIVE_TEST_OUTPUT_DIR)
                                   + QStringLiteral("/edit_big_payload.png")));
    }

    // The payload goes to the editor in slices of about 16,000 characters: a line of 80,000
    // (characters outside the BMP, each a surrogate pair, cut across slices) arrives whole and
    // unchanged.
    void editDialogFeedsLongLinesWhole()
    {
        const qint64 j = job("jsonb_build_object('s', repeat(U&'\\+01F600', 40001), 'e',"
                             " repeat(U&'\\00E9', 30000))");
        const qint64 dl = deadLetter(j, QStringLiteral("long_line"), QStringLiteral("x"), 1);
        const QByteArray shown = display::prettyJson(
            q("SELECT payload::text FROM redrive.job WHERE id = $1", QueryParams().addBigInt(j))
                .raw(0, 0));
        EditPayloadDialog dialog(m_session.get(), dl);
        dialog.show();
        QSignalSpy loaded(&dialog, &EditPayloadDialog::loaded);
        QVERIFY(loaded.wait(60000));
        QCOMPARE(dialog.validationMessage(), QString());
        const QString text = dialog.editor()->toPlainText();
        QCOMPARE(text.count(QChar(0xD83D)), 40001);
        QCOMPARE(dialog.editor()->document()->blockCount(), 4);
        QCOMPARE(text.toUtf8().size(), shown.size());
        QVERIFY(text.toUtf8() == shown);
    }

    // A queue named "\u202Eevil" read "live"; a zero-width space hid inside a kind; an unclosed
    // override in a Ctrl+K term turned its summary line around. Shown as markers everywhere,
    // copied whole.
    void bidiAndZeroWidthAreShownNotApplied()
    {
        const QString queue = QStringLiteral("\u202Eevil");
        const QString kind = QStringLiteral("a\u200Bb");
        const qint64 j = id("INSERT INTO redrive.job (queue, kind, payload, state, attempt,"
                            " max_attempts) VALUES ($1, $2, '{\"n\": 1}', 'dead', 1, 8)"
                            " RETURNING id",
                            QueryParams().addText(queue).addText(kind));
        const qint64 dl = deadLetter(j, QStringLiteral("bidi"), QStringLiteral("x\u2067y"), 1);

        CaseView view(m_session.get(), dl, false);
        view.resize(1400, 860);
        view.show();
        QVERIFY(waitLoaded(view));
        QCOMPARE(child<QLabel>(&view, "field_queue")->text(), QStringLiteral("⟨U+202E⟩evil"));
        QCOMPARE(child<QLabel>(&view, "field_kind")->text(), QStringLiteral("a⟨U+200B⟩b"));
        QCOMPARE(view.windowTitle(), QStringLiteral("Dead letter #%1 — a⟨U+200B⟩b").arg(dl));
        QVERIFY(view.grab().save(QStringLiteral(REDRIVE_TEST_OUTPUT_DIR)
                                 + QStringLiteral("/bidi_case.png")));

        // The dead-letter list: the cell shows the marker, Copy copies the name itself.
        MainWindow window;
        window.resize(1400, 860);
        window.show();
        window.connectTo(m_db->settings());
        QTRY_VERIFY_WITH_TIMEOUT(window.schemaReady(), 15000);
        auto cellOf = [&window](qint64 id) -> QModelIndex {
            DeadLetterModel *m = window.deadLetterModel();
            for (int r = 0; r < m->rowCount(); ++r)
                if (m->idAt(r) == id)
                    for (int c = 0; c < m->columnCount(); ++c)
                        if (m->index(r, c).data().toString().contains(QStringLiteral("evil")))
                            return m->index(r, c);
            return {};
        };
        QModelIndex cell;
        QTRY_VERIFY_WITH_TIMEOUT((cell = cellOf(dl)).isValid(), 15000);
        QCOMPARE(cell.data().toString(), QStringLiteral("⟨U+202E⟩evil"));
        QTableView *list = window.deadLetterView();
        list->setFocus();
        list->selectionModel()->setCurrentIndex(
            cell, QItemSelectionModel::ClearAndSelect | QItemSelectionModel::Rows);
        QApplication::clipboard()->clear();
        QTest::keySequence(list, QKeySequence::Copy);
        QVERIFY(QApplication::clipboard()->text().contains(queue));
        QVERIFY(!QApplication::clipboard()->text().contains(QStringLiteral("⟨U+202E⟩")));
        QVERIFY(window.grab().save(QStringLiteral(REDRIVE_TEST_OUTPUT_DIR)
                                   + QStringLiteral("/bidi_main.png")));

        // Ctrl+K with an override that is never closed: the summary reads left to right.
        MentionSearchDialog find(m_session.get());
        find.resize(1100, 520);
        find.show();
        find.search(QStringLiteral("\u202Enothing mentions this"));
        QTRY_COMPARE_WITH_TIMEOUT(find.statusText(),
                                  QStringLiteral("“⟨U+202E⟩nothing mentions this”: 0 dead letters"
                                                 " · 0 mismatches · 0 compensations · 0 audit "
                                                 "entries"),
                                  15000);
        QVERIFY(find.grab().save(QStringLiteral(REDRIVE_TEST_OUTPUT_DIR)
                                 + QStringLiteral("/bidi_find.png")));
    }

    // "comb" followed by 5,000 combining accents: the title (200) said 4,804 more characters
    // and the Kind field (1,000) 4,004. Counted in user-perceived characters, both say one.
    void combiningMarksCountTheSameEverywhere()
    {
        const QString kind = QStringLiteral("comb") + QString(5000, QChar(0x0301));
        const qint64 j = id("INSERT INTO redrive.job (queue, kind, payload, state, attempt,"
                            " max_attempts) VALUES ('q', $1, jsonb_build_object('s', $1), 'dead',"
                            " 1, 8) RETURNING id",
                            QueryParams().addText(kind));
        const qint64 dl = deadLetter(j, QStringLiteral("combining"), QStringLiteral("x"), 1);
        CaseView view(m_session.get(), dl, false);
        view.resize(1400, 860);
        view.show();
        QVERIFY(waitLoaded(view));
        QCOMPARE(view.windowTitle(),
                 QStringLiteral("Dead letter #%1 — com … (1 more character)").arg(dl));
        QCOMPARE(child<QLabel>(&view, "field_kind")->text(),
                 QStringLiteral("com … (1 more character)"));
        // The payload tree's value counts the same way.
        QCOMPARE(view.payloadTreeModel()->index(0, 1).data().toString(),
                 QStringLiteral("com … (1 more character)"));
        QVERIFY(view.grab().save(QStringLiteral(REDRIVE_TEST_OUTPUT_DIR)
                                 + QStringLiteral("/combining_case.png")));
    }

    // 50 MB in one JSON string (one line of 52 million characters): laying it out took 2.4 GB
    // and half a minute. The dialog opens without blocking and says it cannot edit it here.
    void editDialogRefusesToLayOutFiftyMegabytes()
    {
        const qint64 j = job("jsonb_build_object('blob', repeat('<b>x</b>', 6553600))");
        const qint64 dl = deadLetter(j, QStringLiteral("huge_payload"), QStringLiteral("x"), 1);
        GapMeter meter;
        meter.start();
        EditPayloadDialog dialog(m_session.get(), dl);
        dialog.show();
        dialog.reasonEdit()->setText(QStringLiteral("try"));
        const QString expected = QStringLiteral(
            "This payload is 50.0 MiB: payloads above 16.0 MiB cannot be edited here without "
            "freezing the console. Requeue it unchanged instead.");
        QTRY_COMPARE_WITH_TIMEOUT(dialog.validationMessage(), expected, 60000);
        meter.stop();
        qInfo("50 MB payload: longest GUI-thread gap %.1f ms CPU (%.1f ms wall)", meter.maxCpuMs(),
              meter.maxWallMs());
        QVERIFY2(meter.maxCpuMs() < kMaxGapMs, qPrintable(QString::number(meter.maxCpuMs())));
        QCOMPARE(child<QLabel>(&dialog, "validation")->text(), expected);
        QVERIFY(!dialog.editor()->isEnabled());
        QCOMPARE(dialog.editor()->document()->characterCount(), 1);
        QVERIFY(!dialog.confirmButton()->isEnabled());
        QVERIFY(dialog.grab().save(QStringLiteral(REDRIVE_TEST_OUTPUT_DIR)
                                   + QStringLiteral("/edit_50mb_payload.png")));
    }

    // A failure group named after a 1 MB single-line error: its cell in the Failure groups panel
    // shows the bounded prefix every text cell shows (it returned the whole name, and each
    // repaint elided a megabyte: gaps of 2.9 s), the Overview chart's label is bounded before it
    // is elided (its kind's U+202E shown as a marker), and choosing the group puts a bounded,
    // elided name in the filter chip (the whole name made the main window 19,873 px wide).
    void megabyteFailureGroupName()
    {
        const QString error
            = QStringLiteral("Upstream said ") + QStringLiteral("abcdefghij ").repeated(100000);
        deadLetter(job(), QStringLiteral("huge_group"), error, 3);

        OverviewPlot plot(OverviewPlot::Chart::TopFailureGroups);
        plot.resize(900, 400);
        plot.show();
        const ResultSet rows
            = q("SELECT $1::text AS kind, 'transient'::text AS error_class,"
                " $2::text AS sample_message, 3::bigint AS dead_letters,"
                " 1::bigint AS open_dead_letters",
                QueryParams().addText(QStringLiteral("<b>K</b>\u202Eevil")).addText(error));
        GapMeter meter;
        meter.start();
        plot.setFailureGroups(rows);
        for (int w : { 700, 1200, 500, 900 }) {
            plot.resize(w, 400);
            QTest::qWait(20);
        }
        meter.stop();
        qInfo("1 MB group label: longest GUI-thread gap %.1f ms CPU", meter.maxCpuMs());
        QVERIFY2(meter.maxCpuMs() < kMaxGapMs, qPrintable(QString::number(meter.maxCpuMs())));
        QCOMPARE(plot.groupTexts(),
                 QStringList { QStringLiteral("<b>K</b>⟨U+202E⟩evil: ") + error.left(300)
                               + QStringLiteral(" …") });

        MainWindow window;
        window.resize(1400, 860);
        window.show();
        window.connectTo(m_db->settings());
        QTRY_VERIFY_WITH_TIMEOUT(window.schemaReady(), 15000);
        auto *groups = window.findChild<QTableView *>(QStringLiteral("failureGroups"));
        QVERIFY(groups);
        auto groupRow = [groups] {
            auto *m = qobject_cast<FailureGroupModel *>(groups->model());
            if (!m)
                return -1;
            for (int r = 0; r < m->rowCount(); ++r)
                if (m->nameAt(r).startsWith(QStringLiteral("huge_group: ")))
                    return r;
            return -1;
        };
        int row = -1;
        QTRY_VERIFY_WITH_TIMEOUT((row = groupRow()) >= 0, 30000);
        auto *model = qobject_cast<FailureGroupModel *>(groups->model());
        const QString name = model->nameAt(row);
        QVERIFY2(name.size() > 1000000, qPrintable(QString::number(name.size())));
        const QModelIndex cell = model->index(row, FailureGroupModel::Name);
        QCOMPARE(cell.data().toString(), name.left(1000) + QStringLiteral(" …"));

        GapMeter clickMeter;
        clickMeter.start();
        groups->scrollTo(cell);
        QTest::mouseClick(groups->viewport(), Qt::LeftButton, {},
                          groups->visualRect(cell).center());
        QTest::qWait(500);
        for (int i = 0; i < 5; ++i) {
            groups->viewport()->update();
            QTest::qWait(20);
        }
        clickMeter.stop();
        qInfo("1 MB group chosen: longest GUI-thread gap %.1f ms CPU", clickMeter.maxCpuMs());
        QVERIFY2(clickMeter.maxCpuMs() < kMaxGapMs,
                 qPrintable(QString::number(clickMeter.maxCpuMs())));

        auto *chip = window.findChild<QToolButton *>(QStringLiteral("groupChip"));
        QVERIFY(chip);
        QTRY_VERIFY_WITH_TIMEOUT(chip->isVisible(), 5000);
        // The chip: 300 characters of the name and the count, elided to 320 px.
        const QString label = name.left(300)
            + QStringLiteral(" … (%1 more characters) · charge_card")
                  .arg(QLocale().toString(name.size() - 300));
        QCOMPARE(chip->text(),
                 QStringLiteral("Group: %1  \u2715")
                     .arg(chip->fontMetrics().elidedText(label, Qt::ElideRight, 320)));
        QVERIFY2(chip->sizeHint().width() < 500,
                 qPrintable(QString::number(chip->sizeHint().width())));
        QCOMPARE(window.width(), 1400);
        QVERIFY(window.grab().save(QStringLiteral(REDRIVE_TEST_OUTPUT_DIR)
                                   + QStringLiteral("/huge_group.png")));
    }

    // The approval dialog on a request whose dead letter has a 1 MB last error (laid out whole
    // in the target line: 18.5 s), whose payment reference holds U+202E and U+200B, whose
    // requester's name holds a line break ("Requested by eve" broke the sentence), and whose
    // payment has another request by a 5,000-character login (the dialog came out 51,741 px
    // wide): every value bounded, on one line, with its invisible controls as markers, the GUI
    // thread never stalls and the dialog stays within the screen.
    void approvalDialogBoundsEveryValue()
    {
        const QString error
            = QStringLiteral("Upstream said ") + QStringLiteral("abcdefghij ").repeated(100000);
        const qint64 dl = deadLetter(job(), QStringLiteral("provider_5xx"), error, 3);
        const QString payment = QStringLiteral("pay\u202Eevil\u200B");
        const qint64 request = id(
            "INSERT INTO redrive.compensation_request (target_type, target_id, kind, payment_ref,"
            " amount_minor, currency, status, requires_approval, requested_by, reason,"
            " action_id, ticket) VALUES ('dead_letter', $1, 'refund', $2, 100, 'USD',"
            " 'pending_approval', true, $3,"
            " (SELECT string_agg('double charge, line ' || g, E'\n') FROM generate_series(1, 20) "
            "g),"
            " gen_random_uuid(), 'INC-4242') RETURNING id",
            QueryParams().addBigInt(dl).addText(payment).addText(QStringLiteral("eve\nnewline")));
        // A 10 KB queue name too: the target line wraps over several lines.
        q("UPDATE redrive.dead_letter SET queue = 'payments' || repeat(' q', 5000) WHERE id = $1",
          QueryParams().addBigInt(dl));
        const qint64 other = id(
            "INSERT INTO redrive.compensation_request (target_type, target_id, kind, payment_ref,"
            " amount_minor, currency, status, requires_approval, requested_by, reason,"
            " action_id) VALUES ('dead_letter', $1, 'refund', $2, 1, 'USD', 'done', true,"
            " repeat('M', 5000), 'x', gen_random_uuid()) RETURNING id",
            QueryParams().addBigInt(dl).addText(payment));
        CompensationRequest r;
        r.id = request;
        r.targetType = QStringLiteral("dead_letter");
        r.targetId = dl;
        r.paymentRef = payment;
        r.status = QStringLiteral("pending_approval");

        GapMeter meter;
        meter.start();
        CompensationDecisionDialog dialog(m_session.get(), r,
                                          CompensationDecisionDialog::Decision::Approve,
                                          QStringLiteral("tester"));
        dialog.show();
        QVERIFY(QTest::qWaitFor([&] { return !dialog.isBusy(); }, 30000));
        QTest::qWait(200);
        meter.stop();
        qInfo("approval dialog: longest GUI-thread gap %.1f ms CPU", meter.maxCpuMs());
        QVERIFY2(meter.maxCpuMs() < kMaxGapMs, qPrintable(QString::number(meter.maxCpuMs())));

        const QString shownPayment = QStringLiteral("pay⟨U+202E⟩evil⟨U+200B⟩");
        QCOMPARE(dialog.otherCompensationsText(),
                 QStringLiteral("Other compensations on payment %1:\nrequest %2 · refund 0.01 USD"
                                " · done · by %3 … (4,700 more characters)")
                     .arg(shownPayment)
                     .arg(other)
                     .arg(QString(300, QLatin1Char('M'))));
        const QStringList summary = dialog.summaryText().split(QLatin1Char('\n'));
        const qsizetype requested
            = summary.indexOf(QRegularExpression(QStringLiteral("^Requested by .*")));
        QVERIFY2(requested > 0, qPrintable(dialog.summaryText().left(2000)));
        QCOMPARE(summary.value(requested).section(QStringLiteral(" at "), 0, 0),
                 QStringLiteral("Requested by eve\u23CEnewline"));
        QCOMPARE(summary.value(requested + 1),
                 QStringLiteral("Target: dead letter %1 — %2 … (9,708 more characters) ·"
                                " charge_card · status open"
                                " · 3 attempts · transient provider_5xx: %3 …")
                     .arg(dl)
                     .arg(QStringLiteral("payments") + QStringLiteral(" q").repeated(146))
                     .arg(error.left(300)));
        // Ticket and status come before the reason (6 of its 20 lines), and the request scrolls:
        // nothing of it is cut off however small the screen.
        QCOMPARE(summary.value(requested + 2),
                 QStringLiteral("The payment no longer covers this amount (1.01 USD over): an "
                                "approval will be refused."));
        QCOMPARE(summary.value(requested + 3), QStringLiteral("Ticket: INC-4242"));
        QCOMPARE(summary.value(requested + 4),
                 QStringLiteral("Status: pending approval · version 1 · at or above the approval "
                                "threshold"));
        QCOMPARE(summary.value(requested + 5),
                 QStringLiteral("Reason given: double charge, line 1"));
        QCOMPARE(summary.value(requested + 11), QStringLiteral("… (14 more lines)"));
        dialog.resize(780, 420);
        QTest::qWait(50);
        auto *summaryLabel = dialog.findChild<QLabel *>(QStringLiteral("summary"));
        QVERIFY(summaryLabel->height() >= summaryLabel->heightForWidth(summaryLabel->width()));
        auto *scroll = dialog.findChild<QScrollArea *>(QStringLiteral("requestScroll"));
        QVERIFY(scroll->verticalScrollBar()->maximum() > 0);
        QVERIFY(child<QPlainTextEdit>(&dialog, "decisionReason")->isVisible());
        auto *mismatches = dialog.findChild<QLabel *>(QStringLiteral("mismatchesTitle"));
        QVERIFY(mismatches);
        QCOMPARE(
            mismatches->text(),
            QStringLiteral("Reconciliation mismatches for payment %1: none").arg(shownPayment));
        const QRect screen = dialog.screen()->availableGeometry();
        QVERIFY2(dialog.width() <= screen.width() && dialog.height() <= screen.height(),
                 qPrintable(QStringLiteral("%1 x %2").arg(dialog.width()).arg(dialog.height())));
        QVERIFY2(dialog.minimumSizeHint().width() < 1000,
                 qPrintable(QString::number(dialog.minimumSizeHint().width())));
        QVERIFY(dialog.grab().save(QStringLiteral(REDRIVE_TEST_OUTPUT_DIR)
                                   + QStringLiteral("/hostile_approval.png")));
        q("DELETE FROM redrive.compensation_request WHERE id IN ($1, $2)",
          QueryParams().addBigInt(request).addBigInt(other));
    }

    // The request-refund dialog for a mismatch whose order reference is 50,000 characters and
    // whose payment reference holds markup and U+202E: it came out 594,554 px wide. The header
    // shows each bounded on one line, the dialog stays within the screen.
    void refundDialogBoundsTheMismatchHeader()
    {
        const qint64 run = id("INSERT INTO redrive.reconciliation_run (provider, status,"
                              " finished_at) VALUES ('stripe', 'succeeded', clock_timestamp())"
                              " RETURNING id");
        const qint64 mismatch = id(
            "INSERT INTO redrive.reconciliation_mismatch (run_id, kind, payment_ref, order_ref,"
            " internal_amount_minor, external_amount_minor, internal_currency, external_currency,"
            " internal_status, external_status) VALUES ($1, 'amount_mismatch', $2,"
            " repeat('O', 50000), 100, 250, 'USD', 'USD', 'captured', $3) RETURNING id",
            QueryParams()
                .addBigInt(run)
                .addText(QStringLiteral("<b>PAYREF</b>\u202Eevil"))
                .addText(QStringLiteral("<b>st</b>\nline2")));
        GapMeter meter;
        meter.start();
        CompensationRequestDialog dialog(m_session.get(), CompensationTarget::mismatch(mismatch));
        dialog.show();
        QVERIFY(QTest::qWaitFor(
            [&] {
                return dialog.isLoaded()
                    && !dialog.otherCompensationsText().startsWith(QStringLiteral("Loading"));
            },
            15000));
        QTest::qWait(200);
        meter.stop();
        QVERIFY2(meter.maxCpuMs() < kMaxGapMs, qPrintable(QString::number(meter.maxCpuMs())));
        QCOMPARE(dialog.targetText(),
                 QStringLiteral("Mismatch %1 (amount_mismatch) · payment <b>PAYREF</b>⟨U+202E⟩evil"
                                " · order %2 … (49,700 more characters) · customer unknown"
                                " · difference 1.50 USD")
                     .arg(mismatch)
                     .arg(QString(300, QLatin1Char('O'))));
        const QRect screen = dialog.screen()->availableGeometry();
        QVERIFY2(dialog.width() <= screen.width() && dialog.height() <= screen.height(),
                 qPrintable(QStringLiteral("%1 x %2").arg(dialog.width()).arg(dialog.height())));
        QVERIFY2(dialog.minimumSizeHint().width() < 1000,
                 qPrintable(QString::number(dialog.minimumSizeHint().width())));
        QVERIFY(dialog.grab().save(QStringLiteral(REDRIVE_TEST_OUTPUT_DIR)
                                   + QStringLiteral("/hostile_refund.png")));
    }

    // A server error of 1.2 MB with markup, U+202E, a 100,000-character detail and an ESC in
    // its hint: the error dialog laid it out whole (920 x 32,767 px, 18 s of CPU). It shows a
    // bounded prefix of each, the invisible control as a marker, stays within the screen, and
    // "Copy details" copies the whole text and leaves the dialog open.
    void errorDialogShowsABoundedPrefix()
    {
        q("CREATE OR REPLACE FUNCTION public.hostile_raise(m text, d text) RETURNS void"
          " LANGUAGE plpgsql AS $$ BEGIN RAISE EXCEPTION '%', m USING DETAIL = d,"
          " HINT = E'<i>hint</i>\\x1b[31m'; END $$");
        const QString message = QStringLiteral("<h1>TRIGGER</h1> \u202Eevil ")
            + QStringLiteral("raise ").repeated(200000) + QStringLiteral("end");
        const QString detail = QStringLiteral("<b>detail</b> ") + QString(100000, QLatin1Char('d'));
        auto r = m_admin.exec("SELECT public.hostile_raise($1, $2)",
                              QueryParams().addText(message).addText(detail));
        QVERIFY(!r);
        const DbError error = r.error();
        QCOMPARE(error.message(), message);
        const QString what = QStringLiteral("Adding a note");

        GapMeter meter;
        meter.start();
        std::unique_ptr<QMessageBox> box(ErrorPresenter::errorBox(nullptr, error, what));
        box->show();
        QTest::qWait(200);
        meter.stop();
        qInfo("error dialog: longest GUI-thread gap %.1f ms CPU", meter.maxCpuMs());
        QVERIFY2(meter.maxCpuMs() < kMaxGapMs, qPrintable(QString::number(meter.maxCpuMs())));
        QCOMPARE(box->text(),
                 QStringLiteral("Adding a note failed.\n\n<h1>TRIGGER</h1> ⟨U+202E⟩evil %1 … "
                                "(1,199,026 more characters)\n\nSQLSTATE: P0001 (%2)\nDetail: "
                                "<b>detail</b> %3 … (99,714 more characters)\nHint: "
                                "<i>hint</i>\u241B[31m")
                     .arg(message.mid(23, 1000 - 23), DbError::kindName(error.kind()),
                          QString(300 - 14, QLatin1Char('d'))));
        QCOMPARE(box->textFormat(), Qt::PlainText);
        const QRect screen = box->screen()->availableGeometry();
        QVERIFY2(box->width() <= screen.width() && box->height() <= screen.height(),
                 qPrintable(QStringLiteral("%1 x %2").arg(box->width()).arg(box->height())));
        QVERIFY(box->grab().save(QStringLiteral(REDRIVE_TEST_OUTPUT_DIR)
                                 + QStringLiteral("/hostile_error_box.png")));
        QApplication::clipboard()->clear();
        auto *copy = box->findChild<QPushButton *>(QStringLiteral("copyDetails"));
        QVERIFY(copy);
        copy->click();
        QCOMPARE(QApplication::clipboard()->text(), ErrorPresenter::fullText(error, what));
        QVERIFY(QApplication::clipboard()->text().contains(message));
        QVERIFY(box->isVisible());
        q("DROP FUNCTION public.hostile_raise(text, text)");
    }

    // A server that refuses the login with a 20,000-character word after U+202E: the banner
    // made the main window 32,767 px wide and applied the override. It shows 300 characters,
    // the override as a marker, and the window keeps its width.
    void connectionBannerIsBounded()
    {
        RefusingServer server(QByteArray("\xE2\x80\xAE"
                                         "evil ")
                              + QByteArray(20000, 'M'));
        ConnectionSettings settings;
        settings.connInfo = QStringLiteral("host=127.0.0.1 port=%1 dbname=x user=y sslmode=disable"
                                           " gssencmode=disable")
                                .arg(server.port());
        MainWindow window;
        window.setPromptsAllowed(false);
        window.resize(1400, 860);
        window.show();
        window.connectTo(settings);
        QTRY_VERIFY_WITH_TIMEOUT(!window.bannerText().isEmpty(), 15000);
        QTest::qWait(100);
        const QString banner = window.bannerText();
        qInfo("banner: %s", qPrintable(banner.left(200)));
        QVERIFY2(banner.contains(QStringLiteral("⟨U+202E⟩evil ") + QString(200, QLatin1Char('M'))),
                 qPrintable(banner.left(300)));
        QVERIFY(!banner.contains(QChar(0x202E)));
        QVERIFY(!banner.contains(QString(1000, QLatin1Char('M'))));
        QVERIFY(banner.contains(QStringLiteral(" … (19,")));
        QCOMPARE(window.width(), 1400);
        QVERIFY2(window.minimumSizeHint().width() <= 1400,
                 qPrintable(QString::number(window.minimumSizeHint().width())));
        QVERIFY(window.grab().save(QStringLiteral(REDRIVE_TEST_OUTPUT_DIR)
                                   + QStringLiteral("/hostile_banner.png")));
    }

    // A login named with markup, U+202E and U+200B: the window title and the status bar's server
    // line showed the override applied. Both show the markers; the login still works.
    void serverNamesShowInvisibleControls()
    {
        const QString login = m_db->createLogin(QStringLiteral("<b>r</b>\u202Eevil\u200B"),
                                                { QStringLiteral("redrive_oncall") }, m_password);
        MainWindow window;
        window.resize(1400, 860);
        window.show();
        window.connectTo(m_db->consoleTcpSettingsAs(login, m_password));
        QTRY_VERIFY_WITH_TIMEOUT(window.schemaReady(), 15000);
        const QString shown = QStringLiteral("<b>r</b>⟨U+202E⟩evil⟨U+200B⟩_%1")
                                  .arg(QCoreApplication::applicationPid());
        QCOMPARE(window.windowTitle().section(QLatin1Char('@'), 0, 0),
                 QStringLiteral("Redrive — ") + shown);
        QVERIFY(!window.windowTitle().contains(QChar(0x202E)));
        bool serverLine = false;
        for (QLabel *label : window.statusBar()->findChildren<QLabel *>())
            if (label->text().startsWith(shown + QLatin1Char('@'))) {
                serverLine = true;
                QVERIFY(!label->text().contains(QChar(0x200B)));
            }
        QVERIFY(serverLine);
    }

    // The audit tab's Actor list showed a login named with U+202E applied. It shows the markers,
    // and the name picked is filtered on as the database has it.
    void auditActorListShowsMarkers()
    {
        AuditFilterBar bar;
        const QString actor = QStringLiteral("<b>r</b>\u202Eevil\u200B");
        bar.setActors({ QStringLiteral("alice"), actor });
        auto *box = child<QComboBox>(&bar, "actorFilter");
        QCOMPARE(box->count(), 3);
        QCOMPARE(box->itemText(2), QStringLiteral("<b>r</b>⟨U+202E⟩evil⟨U+200B⟩"));
        box->setCurrentIndex(2);
        QCOMPARE(bar.filter().actor, actor);
        box->setCurrentIndex(1);
        QCOMPARE(bar.filter().actor, QStringLiteral("alice"));
        box->setEditText(QStringLiteral(" typed "));
        QCOMPARE(bar.filter().actor, QStringLiteral("typed"));
    }
};

QTEST_MAIN(TestHostileInput)
#include "tst_hostile_input.moc"
