// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/source_installer.h"

#include "models/cli_commands.h"
#include "models/db/pg_connection.h"
#include "models/display_format.h"
#include "models/logging.h"

#include <QDir>
#include <QFile>
#include <QMap>
#include <QRegularExpression>
#include <QScopeGuard>
#include <QTemporaryDir>
#include <cstdio>
#include <memory>

namespace redrive {

QString SourceDefinition::searchPath() const
{
    return schema + QStringLiteral(", redrive");
}

db::MigrationSet SourceDefinition::migrationSet() const
{
    return { schema, resourceDir, advisoryLockKey };
}

QList<SourceDefinition> SourceDefinition::known()
{
    // Versions read from the libraries in tests/sources/node (one pinned lock file per library
    // version): pg-boss 10.x records its schema version in pgboss.version (21 in 10.0.0 ... 24
    // since 10.1.5), pg-boss 12.38 records 46; graphile-worker 0.17.x has migrations 16 ... 19 in
    // graphile_worker.migrations (16 renamed jobs to _private_jobs, which the adapter reads),
    // 0.18.0 adds 20 (add_job/add_jobs only; its tables and admin functions are unchanged).
    SourceDefinition pgboss { QStringLiteral("pgboss"),
                              QStringLiteral("pg-boss 10.x"),
                              QStringLiteral("redrive_pgboss"),
                              QStringLiteral("pgboss"),
                              QStringLiteral(":/sources/pgboss"),
                              0x52454452495650,
                              "SELECT max(version)::integer FROM pgboss.version",
                              21,
                              24,
                              {},
                              QStringLiteral("pgboss"),
                              false };
    SourceDefinition pgboss12 = pgboss;
    pgboss.queueVersionTable = QStringLiteral("version");
    pgboss.queueEnums = { QStringLiteral("job_state") };
    pgboss12.queueVersionTable = pgboss.queueVersionTable;
    pgboss12.queueEnums = pgboss.queueEnums;
    pgboss12.label = QStringLiteral("pg-boss 12.x");
    pgboss12.resourceDir = QStringLiteral(":/sources/pgboss12");
    pgboss12.minQueueVersion = 46;
    pgboss12.maxQueueVersion = 46;
    pgboss.otherLines = { pgboss12 };
    SourceDefinition graphile { QStringLiteral("graphile-worker"),
                                QStringLiteral("graphile-worker 0.17.x, 0.18.0"),
                                QStringLiteral("redrive_graphile"),
                                QStringLiteral("graphile_worker"),
                                QStringLiteral(":/sources/graphile_worker"),
                                0x52454452495647,
                                "SELECT max(id)::integer FROM graphile_worker.migrations",
                                16,
                                20,
                                {},
                                QStringLiteral("graphile_worker"),
                                false };
    graphile.queueVersionTable = QStringLiteral("migrations");
    return { pgboss, graphile };
}

namespace {

// The tables named $2 in schema $1 and every table that inherits from them, partitions
// included, as the CTE `tree (oid)`: what install-source checks before reading them as the
// installer (the planner, the columns' types, the grants).
const QByteArray kTablesReadTree = "WITH RECURSIVE tree (oid) AS ("
                                   "    SELECT c.oid FROM pg_catalog.pg_class c"
                                   "      JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace"
                                   "     WHERE n.nspname = $1 AND c.relname = ANY ($2)"
                                   "    UNION"
                                   "    SELECT i.inhrelid FROM pg_catalog.pg_inherits i"
                                   "      JOIN tree ON i.inhparent = tree.oid)";

// Every right role $1 holds in this database, as the CTE `rights (what, revoke, on_schema,
// grantor)`, a row a right: what it is on (for a message), the statement that takes it back (a
// column's right goes with its table's REVOKE ALL) and who granted it. What install-source takes
// back from an adapter's confined role before the line it installs grants it what it needs.
const QByteArray kConfinedRoleRights
    = "WITH rights (what, revoke, on_schema, grantor) AS ("
      "    SELECT pg_catalog.format('%I.%I', n.nspname, c.relname),"
      "           'REVOKE ALL ON ' || CASE WHEN c.relkind = 'S' THEN 'SEQUENCE ' ELSE 'TABLE ' END"
      "               || pg_catalog.format('%I.%I', n.nspname, c.relname), false, a.grantor"
      "      FROM pg_catalog.pg_class c"
      "      JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace,"
      "           pg_catalog.aclexplode(c.relacl) a"
      "     WHERE a.grantee = pg_catalog.to_regrole($1)"
      "    UNION ALL"
      "    SELECT pg_catalog.format('%I.%I.%I', n.nspname, c.relname, t.attname),"
      "           'REVOKE ALL ON ' || CASE WHEN c.relkind = 'S' THEN 'SEQUENCE ' ELSE 'TABLE ' END"
      "               || pg_catalog.format('%I.%I', n.nspname, c.relname), false, a.grantor"
      "      FROM pg_catalog.pg_attribute t"
      "      JOIN pg_catalog.pg_class c ON c.oid = t.attrelid"
      "      JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace,"
      "           pg_catalog.aclexplode(t.attacl) a"
      "     WHERE a.grantee = pg_catalog.to_regrole($1)"
      "    UNION ALL"
      "    SELECT 'schema ' || pg_catalog.quote_ident(n.nspname),"
      "           'REVOKE ALL ON SCHEMA ' || pg_catalog.quote_ident(n.nspname), true, a.grantor"
      "      FROM pg_catalog.pg_namespace n, pg_catalog.aclexplode(n.nspacl) a"
      "     WHERE a.grantee = pg_catalog.to_regrole($1))";

// Every qualified reference to the shipped queue schema ("pgboss." but not "redrive_pgboss.").
QByteArray rewriteQueueSchema(const QByteArray &sql, const QString &from, const QString &to)
{
    if (from == to)
        return sql;
    const QRegularExpression reference(
        QStringLiteral("(?<![A-Za-z0-9_\"])%1\\.").arg(QRegularExpression::escape(from)));
    QString quoted = to;
    quoted.replace(QLatin1Char('"'), QStringLiteral("\"\""));
    return QString::fromUtf8(sql)
        .replace(reference, QLatin1Char('"') + quoted + QStringLiteral("\"."))
        .toUtf8();
}

// A cast from or to a type of the queue's own (its schema's types, its tables' column types
// outside pg_catalog) is found whatever the search_path: views created while one exists bind its
// function, and the adapter's code would run it as an operator or as the installer
// (docs/security.md, "The queue's own role"). Refused, naming the casts to drop.
std::optional<db::DbError> castOnTheQueuesTypes(db::PgConnection &connection,
                                                const QString &queueSchema)
{
    auto casts = connection.exec(
        "SELECT string_agg(DISTINCT pg_catalog.format('DROP CAST (%s AS %s);',"
        "                                             k.castsource::pg_catalog.regtype,"
        "                                             k.casttarget::pg_catalog.regtype), ' ')"
        "  FROM pg_catalog.pg_cast k"
        "  JOIN pg_catalog.pg_type t ON t.oid IN (k.castsource, k.casttarget)"
        "  JOIN pg_catalog.pg_namespace n ON n.oid = t.typnamespace"
        " WHERE n.nspname = $1"
        "    OR (n.nspname <> 'pg_catalog'"
        "        AND t.oid IN (SELECT a.atttypid FROM pg_catalog.pg_attribute a"
        "                        JOIN pg_catalog.pg_class c ON c.oid = a.attrelid"
        "                        JOIN pg_catalog.pg_namespace qn ON qn.oid = c.relnamespace"
        "                       WHERE qn.nspname = $1 AND a.attnum > 0))",
        db::QueryParams().addText(queueSchema));
    if (!casts)
        return casts.error();
    if (casts->rowCount() == 1 && !casts->isNull(0, 0))
        return db::DbError(db::ErrorKind::Other,
                           QStringLiteral("a cast on a type of the queue's own exists in this "
                                          "database: the adapter's views and triggers would run "
                                          "its function as an operator or as the installer. As "
                                          "the owner of the type (the queue's application "
                                          "role), run: %1")
                               .arg(casts->text(0, 0)));
    return std::nullopt;
}

// Run inside a READ COMMITTED transaction before the installer reads any of the queue's tables
// (`tables` of `queueSchema`, those that exist): pins the queue's schema (its namespace OID goes
// to `pin`; the installer holds its catalog row until the transaction ends), locks the tables
// in `lockMode` (at least SHARE UPDATE EXCLUSIVE), which holds off every change to what reading
// them runs (a policy, row level security, a table turned into a view, a new index, statistics
// object or child) until the transaction ends, then checks with a snapshot taken after the lock.
// Refused: a relation that is not a plain or partitioned table, for the tables and their
// descendants; an index, statistics object or constraint calling a function or operator outside
// pg_catalog; a column whose type is neither built in nor one of the library's enums `enums` of the
// queue's schema (or an array of one); a row level security policy that applies to the installer
// and is anything but `true`; and a cast on the queue's types (castOnTheQueuesTypes).
// docs/security.md, "The queue's own role". The queue's schema as lockAndCheckTheQueuesTables()
// found it: its namespace OID and the version of its catalog row (xmin), which any ALTER SCHEMA (a
// rename and a rename back too) or GRANT on it replaces.
struct PinnedSchema
{
    quint32 oid = 0;
    QString rowVersion;
};

std::optional<db::DbError>
lockAndCheckTheQueuesTables(db::PgConnection &connection, const QString &queueSchema,
                            const QStringList &tables, const QStringList &enums,
                            const QByteArray &lockMode, PinnedSchema *pin)
{
    using db::DbError;
    using db::ErrorKind;
    // Renaming a schema takes no lock on its tables: the application, which may create schemas,
    // could rename the queue's schema away after these checks and put one of its own under the
    // name, whose views and policies the installer's next statements would then read. The
    // installer holds the schema's catalog row until its transaction ends, which holds off ALTER
    // SCHEMA ... RENAME, OWNER, GRANT and DROP SCHEMA (they wait, then fail with "tuple
    // concurrently updated"): a superuser locks it (FOR SHARE); any other role may not lock a
    // catalog row, so it writes it with a REVOKE that changes no privilege: USAGE from itself,
    // which only removes what it granted itself (PostgreSQL records a role that holds a grant
    // option as the grantor of what it grants; one that does not is refused nothing, only
    // warned). A role with the owner's privileges would act as the owner and could revoke what
    // the owner granted: it writes nothing, and the row's version is compared again before
    // COMMIT (queueSchemaMoved); such an installer is the queue's application itself.
    // docs/security.md, "The queue's own role".
    const auto gone = [&queueSchema] {
        return DbError(ErrorKind::Other,
                       QStringLiteral("schema %1 was renamed or dropped while install-source "
                                      "ran; refusing to continue")
                           .arg(queueSchema));
    };
    auto superuser
        = connection.exec("SELECT pg_catalog.current_setting('is_superuser'),"
                          "       (SELECT pg_catalog.pg_has_role(current_user, n.nspowner, 'USAGE')"
                          "          FROM pg_catalog.pg_namespace n WHERE n.nspname = $1),"
                          "       pg_catalog.quote_ident(current_user::text)",
                          db::QueryParams().addText(queueSchema));
    if (!superuser)
        return superuser.error();
    const bool holdsBySharing = superuser->text(0, 0) == QLatin1String("on");
    if (superuser->isNull(0, 1))
        return gone();
    if (!holdsBySharing && !superuser->boolean(0, 1).value_or(false)) {
        if (auto written
            = connection.exec("REVOKE USAGE ON SCHEMA " + connection.quoteIdentifier(queueSchema)
                              + " FROM " + superuser->text(0, 2).toUtf8());
            !written)
            return written.error();
    }
    const QByteArray pinSql = "SELECT n.oid::pg_catalog.int8, n.xmin::text"
                              "  FROM pg_catalog.pg_namespace n WHERE n.nspname = $1";
    auto pinned = connection.exec(holdsBySharing ? pinSql + " FOR SHARE OF n" : pinSql,
                                  db::QueryParams().addText(queueSchema));
    if (!pinned)
        return pinned.error();
    if (pinned->rowCount() != 1)
        return gone();
    pin->oid = quint32(pinned->bigInt(0, 0).value_or(0));
    pin->rowVersion = pinned->text(0, 1);
    auto present = connection.exec("SELECT c.relname::text, c.relkind IN ('r', 'p')"
                                   "  FROM pg_catalog.pg_class c"
                                   "  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace"
                                   " WHERE n.nspname = $1 AND c.relname = ANY ($2) ORDER BY 1",
                                   db::QueryParams().addText(queueSchema).addTextArray(tables));
    if (!present)
        return present.error();
    QByteArrayList names;
    for (int row = 0; row < present->rowCount(); ++row) {
        if (!present->boolean(row, 1).value_or(false))
            return DbError(ErrorKind::Other,
                           QStringLiteral("%1.%2 is not a table: reading it would run what it "
                                          "is made of as the installer; refusing to continue")
                               .arg(queueSchema, present->text(row, 0)));
        names << connection.quoteIdentifier(queueSchema) + '.'
                + connection.quoteIdentifier(present->text(row, 0));
    }
    if (names.isEmpty())
        return std::nullopt;
    // SHARE UPDATE EXCLUSIVE (the weakest `lockMode` given) holds off, besides what ACCESS SHARE
    // does, a new index, statistics object, inheritance child or partition (each would bring
    // expressions the planner evaluates when it plans a read), and lets the queue's own reads and
    // writes go on. An adapter migration takes SHARE ROW EXCLUSIVE, what its CREATE TRIGGER
    // needs, so that nothing after these checks waits for a lock: the application could hold a
    // lock to keep it waiting while it changes what no table lock protects (a cast, a schema's
    // name). The queue's writers wait for the migration.
    if (auto locked
        = connection.exec("LOCK TABLE " + names.join(", ") + " IN " + lockMode + " MODE");
        !locked)
        return locked.error();
    // The planner evaluates what a table's indexes (expressions and predicates), statistics
    // objects (expressions), partition key (its expressions are folded the first time a
    // session plans a read of the table: a fresh attacker recreated pg-boss's version table
    // partitioned by `version + f(1)`, and f ran as the installer on every install-source) and
    // its descendants' CHECK constraints say when it plans a read, as the reader; a column's
    // default or generated expression runs on every write. A function or an operator of the
    // application's there runs as the installer (an IMMUTABLE one with constant arguments is
    // called while planning). Refused for the tables read and every table that inherits from
    // them, with any relation among those that is not a table.
    auto planned = connection.exec(
        kTablesReadTree
            + QByteArray(
                ","
                " parts (kind, name, rel, classid, objid) AS ("
                "    SELECT 'index', x.indexrelid::pg_catalog.regclass::text, x.indrelid,"
                "           'pg_catalog.pg_class'::pg_catalog.regclass, x.indexrelid"
                "      FROM pg_catalog.pg_index x JOIN tree ON x.indrelid = tree.oid"
                "    UNION ALL"
                "    SELECT 'statistics object', s.stxname::text, s.stxrelid,"
                "           'pg_catalog.pg_statistic_ext'::pg_catalog.regclass, s.oid"
                "      FROM pg_catalog.pg_statistic_ext s JOIN tree ON s.stxrelid = tree.oid"
                "    UNION ALL"
                "    SELECT 'constraint', k.conname::text, k.conrelid,"
                "           'pg_catalog.pg_constraint'::pg_catalog.regclass, k.oid"
                "      FROM pg_catalog.pg_constraint k JOIN tree ON k.conrelid = tree.oid"
                "    UNION ALL"
                "    SELECT 'partition key', t.oid::pg_catalog.regclass::text, t.oid,"
                "           'pg_catalog.pg_class'::pg_catalog.regclass, t.oid"
                "      FROM tree t"
                "    UNION ALL"
                "    SELECT 'column default', pg_catalog.format('%s.%I', "
                "a.adrelid::pg_catalog.regclass,"
                "                                               c.attname),"
                "           a.adrelid, 'pg_catalog.pg_attrdef'::pg_catalog.regclass, a.oid"
                "      FROM pg_catalog.pg_attrdef a JOIN tree ON a.adrelid = tree.oid"
                "      JOIN pg_catalog.pg_attribute c ON c.attrelid = a.adrelid AND c.attnum = "
                "a.adnum)"
                " SELECT pg_catalog.format('%s is not a table', c.oid::pg_catalog.regclass)"
                "   FROM tree JOIN pg_catalog.pg_class c ON c.oid = tree.oid"
                "  WHERE c.relkind NOT IN ('r', 'p')"
                " UNION ALL"
                " SELECT pg_catalog.format('%s %s on %s calls %s', p.kind, p.name,"
                "                          p.rel::pg_catalog.regclass,"
                "                          coalesce(f.oid::pg_catalog.regprocedure::text,"
                "                                   o.oid::pg_catalog.regoperator::text,"
                "                                   'operator class ' || pg_catalog.format('%I.%I',"
                "                                       ocn.nspname, oc.opcname)))"
                "   FROM parts p"
                "   JOIN pg_catalog.pg_depend d ON d.classid = p.classid AND d.objid = p.objid"
                "   LEFT JOIN pg_catalog.pg_proc f"
                "     ON d.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND f.oid = "
                "d.refobjid"
                "   LEFT JOIN pg_catalog.pg_operator o"
                "     ON d.refclassid = 'pg_catalog.pg_operator'::pg_catalog.regclass"
                "    AND o.oid = d.refobjid"
                "   LEFT JOIN pg_catalog.pg_opclass oc"
                "     ON d.refclassid = 'pg_catalog.pg_opclass'::pg_catalog.regclass"
                "    AND oc.oid = d.refobjid"
                "   LEFT JOIN pg_catalog.pg_namespace ocn ON ocn.oid = oc.opcnamespace"
                "  WHERE coalesce(f.pronamespace, o.oprnamespace, oc.opcnamespace)"
                "        <> 'pg_catalog'::pg_catalog.regnamespace"
                " LIMIT 1"),
        db::QueryParams().addText(queueSchema).addTextArray(tables));
    if (!planned)
        return planned.error();
    if (planned->rowCount() == 1)
        return DbError(ErrorKind::Other,
                       QStringLiteral("%1: reading the queue's tables would run it as the "
                                      "installer (the planner evaluates it); refusing to "
                                      "continue. As the owner of schema %2, drop it.")
                           .arg(planned->text(0, 0), queueSchema));
    // A column's type decides which casts and output functions reading it runs: a type of the
    // application's (a domain, an array of its enum, a range, a composite) brings casts that
    // PostgreSQL finds through the domain's base type or the array's element type, which the
    // cast check cannot know of, and json builders look up a cast to json of any such type at run
    // time. Every column of the tables read and their descendants must be of a built-in type
    // (created with the cluster, OID below 16384, whose casts only a superuser can add) or one of
    // the library's own enums of the queue's schema (`enums`, or an array of one), whose casts
    // castOnTheQueuesTypes refuses; an enum the application made there could get a cast in the
    // moment after that check. The libraries use nothing else.
    auto typed = connection.exec(
        kTablesReadTree
            + QByteArray(" SELECT pg_catalog.format('column %I of %s has type %s', a.attname,"
                         "                          a.attrelid::pg_catalog.regclass,"
                         "                          a.atttypid::pg_catalog.regtype)"
                         "   FROM tree"
                         "   JOIN pg_catalog.pg_attribute a ON a.attrelid = tree.oid"
                         "   JOIN pg_catalog.pg_type t ON t.oid = a.atttypid"
                         "   LEFT JOIN pg_catalog.pg_type e ON e.oid = t.typelem"
                         "        AND t.typsubscript = "
                         "'pg_catalog.array_subscript_handler'::pg_catalog.regproc"
                         "  WHERE a.attnum > 0 AND NOT a.attisdropped"
                         "    AND t.oid >= 16384::pg_catalog.oid"
                         "    AND NOT (t.typnamespace = "
                         "pg_catalog.to_regnamespace(pg_catalog.quote_ident($1))"
                         "             AND ((t.typtype = 'e' AND t.typname = ANY ($3))"
                         "                  OR (e.typtype = 'e' AND e.typnamespace = t.typnamespace"
                         "                      AND e.typname = ANY ($3))))"
                         "  ORDER BY 1 LIMIT 1"),
        db::QueryParams().addText(queueSchema).addTextArray(tables).addTextArray(enums));
    if (!typed)
        return typed.error();
    if (typed->rowCount() == 1)
        return DbError(ErrorKind::Other,
                       QStringLiteral("%1, neither a built-in type nor an enum of schema %2 "
                                      "that the library made: "
                                      "reading it would convert it through casts its owner "
                                      "makes, as the installer or an operator; refusing to "
                                      "continue. The adapter reads the library's own column "
                                      "types only: as the owner of schema %2, give the column "
                                      "its type back.")
                           .arg(typed->text(0, 0), queueSchema));
    auto refused = connection.exec(
        "SELECT pg_catalog.format('%I.%I', n.nspname, c.relname),"
        "       pg_catalog.quote_ident(p.polname),"
        "       pg_catalog.concat_ws(' ', 'USING (' || pg_catalog.pg_get_expr(p.polqual,"
        "                                                                p.polrelid) || ')',"
        "                            'WITH CHECK (' || pg_catalog.pg_get_expr(p.polwithcheck,"
        "                                                                 p.polrelid) || ')')"
        "  FROM pg_catalog.pg_class c"
        "  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace"
        "  JOIN pg_catalog.pg_roles r ON r.rolname = current_user"
        "  JOIN pg_catalog.pg_policy p ON p.polrelid = c.oid"
        " WHERE n.nspname = $1 AND c.relname = ANY ($2)"
        "   AND (c.relrowsecurity AND NOT (r.rolsuper OR r.rolbypassrls)"
        "            AND (c.relforcerowsecurity"
        "                 OR NOT pg_catalog.pg_has_role(r.oid, c.relowner, 'USAGE'))"
        "            AND (p.polroles = '{0}'"
        "                 OR EXISTS (SELECT 1 FROM pg_catalog.unnest(p.polroles) pr(role_oid)"
        "                             WHERE pr.role_oid <> 0"
        "                               AND pg_catalog.pg_has_role(r.oid, pr.role_oid,"
        "                                                          'USAGE')))"
        "            AND (coalesce(pg_catalog.pg_get_expr(p.polqual, p.polrelid), 'true')"
        "                     <> 'true'"
        "                 OR coalesce(pg_catalog.pg_get_expr(p.polwithcheck, p.polrelid),"
        "                             'true') <> 'true'))"
        " ORDER BY 1, 2 LIMIT 1",
        db::QueryParams().addText(queueSchema).addTextArray(tables));
    if (!refused)
        return refused.error();
    if (refused->rowCount() == 1) {
        // (A relation that is not a table was refused above, by the check made after the lock.)
        const QString table = refused->text(0, 0);
        return DbError(
            ErrorKind::Other,
            QStringLiteral("row level security policy %1 on %2 applies to the installing role "
                           "and is not simply true (%3): reading the queue's tables would run "
                           "that expression as the installer; refusing to continue. On the "
                           "tables the adapter reads, a policy for the installing role must be "
                           "USING (true) WITH CHECK (true). As the owner of schema %4, drop or "
                           "replace it: DROP POLICY %5 ON %2;")
                .arg(refused->text(0, 1), table, refused->text(0, 2), queueSchema,
                     refused->text(0, 1)));
    }
    return castOnTheQueuesTypes(connection, queueSchema);
}

// Run before a transaction that read the queue's tables commits: its schema is the one `pin`
// names, unchanged. lockAndCheckTheQueuesTables() holds the schema's row from the pin on, so
// nobody else can have written it since; this second look is a guard should that ever not hold
// (a rename away and back would show as another row version, and the transaction, with whatever
// ran in it, rolls back). A version written by this transaction (the pin of an installer that
// is not a superuser, an adapter migration that grants its confined role USAGE on the schema)
// is taken as the same: nobody else can write the row between that write and COMMIT.
std::optional<db::DbError> queueSchemaMoved(db::PgConnection &connection,
                                            const QString &queueSchema, const PinnedSchema &pin)
{
    auto same
        = connection.exec("SELECT count(*) FROM pg_catalog.pg_namespace n"
                          " WHERE n.nspname = $1 AND n.oid = $2::pg_catalog.int8::pg_catalog.oid"
                          "   AND (n.xmin::text = $3"
                          "        OR n.xmin = pg_catalog.pg_current_xact_id()::xid)",
                          db::QueryParams()
                              .addText(queueSchema)
                              .addBigInt(static_cast<qint64>(pin.oid))
                              .addText(pin.rowVersion));
    if (!same)
        return same.error();
    if (same->bigInt(0, 0).value_or(0) != 1)
        return db::DbError(db::ErrorKind::Other,
                           QStringLiteral("schema %1 was renamed, replaced or altered while "
                                          "install-source read it; refusing to continue, nothing "
                                          "of this step is kept. Run install-source again.")
                               .arg(queueSchema));
    return std::nullopt;
}

// Run before an adapter migration commits: the queue's schema still has the namespace that
// lockAndCheckTheQueuesTables() checked (`namespaceOid`), and nothing the adapter's schema holds
// is bound to a relation of another schema than the queue's, the adapter's, Redrive's own and
// pg_catalog: no trigger of the adapter's functions on another table, no view reading another
// relation, no view or SQL-bodied function of the adapter's calling a function or operator of
// another schema (a cast the application made on the library's enum for the moment a view was
// created, then dropped, binds its function into the view: it would run as every operator, and
// as the installer inside the adapter's actions). The application can rename the queue's
// schema away during the migration (a role that is not a superuser cannot hold it) and put one
// of its own under its name; whatever the migration then bound to that schema, or to a function
// of the application's, is refused here and the migration rolls back.
std::optional<db::DbError> pinnedQueueSchemaChanged(db::PgConnection &connection,
                                                    const QString &queueSchema,
                                                    const QString &adapterSchema,
                                                    const PinnedSchema &pin)
{
    if (std::optional<db::DbError> moved = queueSchemaMoved(connection, queueSchema, pin))
        return moved;
    const quint32 namespaceOid = pin.oid;
    auto bound = connection.exec(
        "WITH allowed (oid) AS ("
        "    SELECT $3::pg_catalog.int8::pg_catalog.oid"
        "    UNION ALL SELECT n.oid FROM pg_catalog.pg_namespace n"
        "     WHERE n.nspname IN ($2, 'redrive', 'pg_catalog'))"
        " SELECT pg_catalog.format('schema %I is not the one checked', $1::text)"
        "  WHERE NOT EXISTS (SELECT 1 FROM pg_catalog.pg_namespace n"
        "                     WHERE n.nspname = $1"
        "                       AND n.oid = $3::pg_catalog.int8::pg_catalog.oid)"
        " UNION ALL"
        " SELECT pg_catalog.format('trigger %I calls %s on %s', t.tgname,"
        "                          t.tgfoid::pg_catalog.regprocedure,"
        "                          t.tgrelid::pg_catalog.regclass)"
        "   FROM pg_catalog.pg_trigger t"
        "   JOIN pg_catalog.pg_proc p ON p.oid = t.tgfoid"
        "   JOIN pg_catalog.pg_namespace pn ON pn.oid = p.pronamespace AND pn.nspname = $2"
        "   JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid"
        "  WHERE c.relnamespace NOT IN (SELECT a.oid FROM allowed a)"
        "    AND NOT c.relispartition"
        " UNION ALL"
        " SELECT pg_catalog.format('view %s reads %s', v.oid::pg_catalog.regclass,"
        "                          d.refobjid::pg_catalog.regclass)"
        "   FROM pg_catalog.pg_class v"
        "   JOIN pg_catalog.pg_namespace vn ON vn.oid = v.relnamespace AND vn.nspname = $2"
        "   JOIN pg_catalog.pg_rewrite r ON r.ev_class = v.oid"
        "   JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass"
        "                              AND d.objid = r.oid"
        "                              AND d.refclassid = "
        "'pg_catalog.pg_class'::pg_catalog.regclass"
        "   JOIN pg_catalog.pg_class c ON c.oid = d.refobjid"
        "  WHERE c.relnamespace NOT IN (SELECT a.oid FROM allowed a)"
        " UNION ALL"
        " SELECT pg_catalog.format('%s calls %s',"
        "                          coalesce('view ' || v.oid::pg_catalog.regclass::text,"
        "                                   'function ' || fp.oid::pg_catalog.regprocedure::text),"
        "                          coalesce(f.oid::pg_catalog.regprocedure::text,"
        "                                   o.oid::pg_catalog.regoperator::text))"
        "   FROM pg_catalog.pg_depend d"
        "   LEFT JOIN pg_catalog.pg_rewrite r"
        "     ON d.classid = 'pg_catalog.pg_rewrite'::pg_catalog.regclass AND r.oid = d.objid"
        "   LEFT JOIN pg_catalog.pg_class v ON v.oid = r.ev_class"
        "   LEFT JOIN pg_catalog.pg_proc fp"
        "     ON d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND fp.oid = d.objid"
        "   LEFT JOIN pg_catalog.pg_proc f"
        "     ON d.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND f.oid = d.refobjid"
        "   LEFT JOIN pg_catalog.pg_operator o"
        "     ON d.refclassid = 'pg_catalog.pg_operator'::pg_catalog.regclass"
        "    AND o.oid = d.refobjid"
        "  WHERE coalesce(v.relnamespace, fp.pronamespace)"
        "        = (SELECT n.oid FROM pg_catalog.pg_namespace n WHERE n.nspname = $2)"
        "    AND coalesce(f.pronamespace, o.oprnamespace) NOT IN ("
        "        SELECT n.oid FROM pg_catalog.pg_namespace n"
        "         WHERE n.nspname IN ($2, 'redrive', 'pg_catalog'))"
        " LIMIT 1",
        db::QueryParams()
            .addText(queueSchema)
            .addText(adapterSchema)
            .addBigInt(static_cast<qint64>(namespaceOid)));
    if (!bound)
        return bound.error();
    if (bound->rowCount() == 1)
        return db::DbError(
            db::ErrorKind::Other,
            QStringLiteral("%1: the adapter would be bound to what is not the queue's, "
                           "its own or Redrive's (schema %2 renamed or replaced, "
                           "or a cast or function made while it was installed); "
                           "refusing to continue, nothing of this migration is "
                           "kept")
                .arg(bound->text(0, 0), queueSchema));
    return std::nullopt;
}

} // namespace

SourceDefinition SourceDefinition::withQueueSchema(const QString &schema) const
{
    SourceDefinition copy = *this;
    copy.queueSchema = schema;
    copy.queueVersionSql = rewriteQueueSchema(queueVersionSql, shippedQueueSchema, schema);
    copy.otherLines.clear();
    for (const SourceDefinition &line : otherLines)
        copy.otherLines << line.withQueueSchema(schema);
    return copy;
}

std::optional<SourceDefinition> SourceDefinition::lineFor(int queueVersion) const
{
    if (queueVersion >= minQueueVersion && queueVersion <= maxQueueVersion)
        return *this;
    for (const SourceDefinition &line : otherLines)
        if (queueVersion >= line.minQueueVersion && queueVersion <= line.maxQueueVersion)
            return line;
    return std::nullopt;
}

std::optional<SourceDefinition> SourceDefinition::find(const QString &name)
{
    for (const SourceDefinition &s : known())
        if (s.name == name)
            return s;
    return std::nullopt;
}

SourceInstaller::SourceInstaller(db::PgConnection &connection)
    : m_connection(connection)
{ }

db::DbExpected<SourceInstallReport> SourceInstaller::install(const SourceDefinition &source)
{
    using db::DbError;
    using db::ErrorKind;

    db::SchemaMigrator redrive(m_connection);
    auto redriveVersion = redrive.currentVersion();
    if (!redriveVersion)
        return redriveVersion.error();
    const int expected = db::SchemaMigrator::expectedVersion();
    if (*redriveVersion < expected)
        return DbError(ErrorKind::Other,
                       QStringLiteral("the Redrive schema is at version %1, this build needs %2: "
                                      "run `redrive migrate` first")
                           .arg(*redriveVersion)
                           .arg(expected));

    // An earlier install into a non-default queue schema is kept unless told otherwise.
    SourceDefinition chosen = source;
    if (!source.queueSchemaGiven) {
        auto recorded
            = m_connection.exec("SELECT s.queue_schema FROM redrive.source s WHERE s.name = $1",
                                db::QueryParams().addText(source.name));
        if (!recorded)
            return recorded.error();
        if (recorded->rowCount() == 1 && !recorded->isNull(0, 0)
            && recorded->text(0, 0) != source.queueSchema)
            chosen = source.withQueueSchema(recorded->text(0, 0));
    }
    return installChosen(chosen);
}

db::DbExpected<SourceInstallReport> SourceInstaller::installChosen(const SourceDefinition &source)
{
    using db::DbError;
    using db::ErrorKind;

    // The adapter's SQL names the queue's schema in identifiers, in string literals
    // ('pgboss.job'::regclass), inside dollar-quoted bodies and in comments, and
    // rewriteQueueSchema() puts another schema's name in all of them as a quoted identifier. A
    // character that ends a literal, a body or a line there would change what the statements
    // are, not only the name they use: refused, whether typed (--queue-schema) or recorded by an
    // earlier install. pg-boss refuses the same kinds of characters in its own `schema` option.
    if (source.queueSchema != source.shippedQueueSchema) {
        static const QRegularExpression unsafe(QStringLiteral(R"(["'$%.\\*/]|[\x00-\x1f\x7f])"));
        if (source.queueSchema.isEmpty() || source.queueSchema.toUtf8().size() > 63
            || source.queueSchema.contains(unsafe))
            return DbError(ErrorKind::Other,
                           QStringLiteral("queue schema name %1 cannot be used: a name of at "
                                          "most 63 bytes without quotes, $, %, periods, "
                                          "backslashes, * or / and no control characters is "
                                          "needed, since the adapter's SQL is rewritten with it")
                               .arg(QLatin1Char('"')
                                    + display::revealInvisibleInLine(source.queueSchema)
                                    + QLatin1Char('"')));
    }

    auto present = m_connection.exec("SELECT to_regnamespace($1) IS NOT NULL",
                                     db::QueryParams().addText(source.queueSchema));
    if (!present)
        return present.error();
    if (!present->boolean(0, 0).value_or(false))
        return DbError(ErrorKind::Other,
                       QStringLiteral("schema %1 not found: start %2 once against this database "
                                      "so it installs its own schema, then install the source")
                           .arg(source.queueSchema, source.label));
    // The queue's version is the first thing read of its tables: under a lock, after the
    // checks that keep the application's code from running as the installer.
    SourceInstallReport report;
    {
        auto begun = m_connection.exec("BEGIN ISOLATION LEVEL READ COMMITTED");
        if (!begun)
            return begun.error();
        const auto rollBack = [this](const DbError &error) {
            m_connection.exec("ROLLBACK");
            return error;
        };
        PinnedSchema pin;
        if (std::optional<DbError> refused = lockAndCheckTheQueuesTables(
                m_connection, source.queueSchema, { source.queueVersionTable }, source.queueEnums,
                "SHARE UPDATE EXCLUSIVE", &pin))
            return rollBack(*refused);
        auto queueVersion = m_connection.exec(source.queueVersionSql);
        if (!queueVersion)
            return rollBack(queueVersion.error());
        report.queueVersion = queueVersion->integer(0, 0).value_or(0);
        if (std::optional<DbError> moved = queueSchemaMoved(m_connection, source.queueSchema, pin))
            return rollBack(*moved);
        if (auto committed = m_connection.exec("COMMIT"); !committed)
            return committed.error();
    }
    const std::optional<SourceDefinition> line = source.lineFor(report.queueVersion);
    if (!line) {
        QStringList ranges { QStringLiteral("%1 to %2 (%3)")
                                 .arg(source.minQueueVersion)
                                 .arg(source.maxQueueVersion)
                                 .arg(source.label) };
        for (const SourceDefinition &other : source.otherLines)
            ranges << QStringLiteral("%1 to %2 (%3)")
                          .arg(other.minQueueVersion)
                          .arg(other.maxQueueVersion)
                          .arg(other.label);
        return DbError(ErrorKind::Other,
                       QStringLiteral("%1 schema version %2 is not one this adapter was verified "
                                      "against (%3)")
                           .arg(source.queueSchema, QString::number(report.queueVersion),
                                ranges.join(QStringLiteral(", "))));
    }
    report.label = line->label;
    report.queueSchema = line->queueSchema;

    // graphile-worker enables row level security on its tables and makes no policy (its
    // sql/000001.sql, 000011.sql): only their owner sees a row. The adapter's views and actions
    // run as the installing role, so for any other role without BYPASSRLS they would list
    // nothing and change nothing. Refused, with the commands the queue's owner runs, for the
    // tables the adapter's SQL names.
    QStringList tables;
    {
        const QRegularExpression named(
            QStringLiteral("(?<![A-Za-z0-9_\"])%1\\.([A-Za-z_][A-Za-z0-9_]*)")
                .arg(QRegularExpression::escape(line->shippedQueueSchema)));
        for (const db::Migration &m : db::SchemaMigrator::bundledMigrations(line->migrationSet()))
            for (const QRegularExpressionMatch &match : named.globalMatch(QString::fromUtf8(m.sql)))
                if (!tables.contains(match.captured(1)))
                    tables << match.captured(1);
    }
    // Since adapter versions 9 (pg-boss 10), 5 (pg-boss 12) and 7 (graphile-worker), the adapter
    // reads and changes the queue's tables only as its confined role <schema>_queue
    // (docs/security.md, "The queue's own role"), so that role needs the policies too; it is
    // created here when missing, so that the queue's owner can name it in them (the migration
    // checks it is as confined as it must be).
    const QString confined = line->schema + QStringLiteral("_queue");
    auto exists = m_connection.exec("SELECT to_regrole($1) IS NOT NULL",
                                    db::QueryParams().addText(confined));
    if (!exists)
        return exists.error();
    if (!exists->boolean(0, 0).value_or(false)) {
        auto created = m_connection.exec("CREATE ROLE " + m_connection.quoteIdentifier(confined)
                                         + " NOLOGIN NOINHERIT");
        if (!created && created.error().sqlState() != QLatin1String("42710"))
            return DbError(ErrorKind::Permission,
                           QStringLiteral("permission denied to create role %1 (the role the "
                                          "adapter reads and changes the queue's tables as): the "
                                          "role that installs a source needs CREATEROLE (%2)")
                               .arg(confined, created.error().summary()));
    }
    QStringList hiddenFrom;
    QStringList commands;
    for (const QString &role : { QString(), confined }) {
        db::QueryParams params;
        params.addText(line->queueSchema).addTextArray(tables);
        if (role.isEmpty())
            params.addNull(db::ParamType::Text);
        else
            params.addText(role);
        auto hidden = m_connection.exec(
            "SELECT string_agg(c.relname, ',' ORDER BY c.relname), r.rolname::text"
            "  FROM pg_catalog.pg_roles r"
            "  JOIN pg_catalog.pg_namespace n ON n.nspname = $1"
            "  JOIN pg_catalog.pg_class c ON c.relnamespace = n.oid"
            " WHERE r.rolname = coalesce($3, current_user::text)"
            "   AND c.relname = ANY ($2) AND c.relkind IN ('r', 'p')"
            "   AND c.relrowsecurity"
            "   AND (c.relforcerowsecurity OR NOT pg_catalog.pg_has_role(r.oid, c.relowner, "
            "'USAGE'))"
            "   AND NOT (r.rolsuper OR r.rolbypassrls)"
            "   AND NOT EXISTS (SELECT 1 FROM pg_catalog.pg_policy p"
            "                    WHERE p.polrelid = c.oid AND p.polpermissive AND p.polcmd = '*'"
            "                      AND (p.polroles = '{0}' OR EXISTS ("
            "                           SELECT 1 FROM unnest(p.polroles) pr(role_oid)"
            "                            WHERE pg_catalog.pg_has_role(r.oid, pr.role_oid, "
            "'USAGE'))))"
            " GROUP BY r.rolname",
            params);
        if (!hidden)
            return hidden.error();
        if (hidden->rowCount() == 0 || hidden->isNull(0, 0))
            continue;
        const QString name = hidden->text(0, 1);
        hiddenFrom << name;
        for (const QString &table : hidden->text(0, 0).split(QLatin1Char(',')))
            commands << QStringLiteral("CREATE POLICY %4 ON %1.%2 TO %3 USING (true) "
                                       "WITH CHECK (true);")
                            .arg(QString::fromUtf8(m_connection.quoteIdentifier(line->queueSchema)),
                                 QString::fromUtf8(m_connection.quoteIdentifier(table)),
                                 QString::fromUtf8(m_connection.quoteIdentifier(name)),
                                 name == confined ? QStringLiteral("redrive_queue_role")
                                                  : QStringLiteral("redrive_source"));
    }
    if (!commands.isEmpty())
        return DbError(ErrorKind::Other,
                       QStringLiteral("row level security hides the rows of %1's tables from "
                                      "role %2 (no policy lets it read them): the adapter would "
                                      "list nothing and change nothing. As the owner of schema "
                                      "%1 (the queue's application role), run: %3")
                           .arg(line->queueSchema, hiddenFrom.join(QStringLiteral(" and ")),
                                commands.join(QLatin1Char(' '))));

    // A queue schema other than the shipped one: the adapter's SQL with every qualified
    // reference to it rewritten, applied from a temporary folder (checksums are of that text,
    // the same on every run for this schema).
    db::MigrationSet set = line->migrationSet();
    // One install-source of this adapter at a time, from reading what is installed to the
    // COMMIT of what it decided (SchemaMigrator takes the same lock again): another one, of a
    // newer build, could otherwise install between this one's decision and its drop.
    if (auto locked = m_connection.exec("SELECT pg_advisory_lock($1)",
                                        db::QueryParams().addBigInt(set.advisoryLockKey));
        !locked)
        return locked.error();
    const auto unlock = qScopeGuard([this, key = set.advisoryLockKey] {
        m_connection.exec("SELECT pg_advisory_unlock($1)", db::QueryParams().addBigInt(key));
    });
    // One transaction for the whole install or upgrade: an adapter must never stop between two
    // versions (see the reinstall below).
    set.oneTransaction = true;
    // Each adapter migration reads the queue's tables as the installer (migration 1 imports the
    // failures already there) and creates views over them: the tables are locked and checked
    // before its SQL, and the casts again after it, before COMMIT, with a snapshot taken then, so
    // that a cast made while the migration waited for a lock cannot be bound into its views.
    QStringList guarded = tables;
    if (!guarded.contains(line->queueVersionTable))
        guarded << line->queueVersionTable;
    auto queueNamespace = std::make_shared<PinnedSchema>();
    set.beforeScript = [queueSchema = line->queueSchema, guarded, enums = line->queueEnums,
                        queueNamespace](db::PgConnection &c) {
        return lockAndCheckTheQueuesTables(c, queueSchema, guarded, enums, "SHARE ROW EXCLUSIVE",
                                           queueNamespace.get());
    };
    set.afterScript = [queueSchema = line->queueSchema, adapterSchema = line->schema,
                       queueNamespace](db::PgConnection &c) -> std::optional<db::DbError> {
        if (std::optional<db::DbError> changed
            = pinnedQueueSchemaChanged(c, queueSchema, adapterSchema, *queueNamespace))
            return changed;
        return castOnTheQueuesTypes(c, queueSchema);
    };
    QTemporaryDir rewritten;
    if (line->queueSchema != line->shippedQueueSchema) {
        if (!rewritten.isValid())
            return DbError(ErrorKind::Other, QStringLiteral("cannot create a temporary folder"));
        for (const db::Migration &m : db::SchemaMigrator::bundledMigrations(set)) {
            QFile f(rewritten.filePath(
                QStringLiteral("%1_%2.sql").arg(m.version, 4, 10, QLatin1Char('0')).arg(m.name)));
            const QByteArray sql
                = rewriteQueueSchema(m.sql, line->shippedQueueSchema, line->queueSchema);
            if (!f.open(QIODevice::WriteOnly) || f.write(sql) != sql.size())
                return DbError(ErrorKind::Other,
                               QStringLiteral("cannot write %1").arg(f.fileName()));
        }
        set.resourceDir = rewritten.path();
        set.expandIncludes = false; // expanded above, before the schema's name went in
    }
    // Nothing of the adapter's schema is read before it is known to be the installer's: the
    // queue's application, which may create schemas in this database, can make it first with a
    // view named schema_version, whose functions the reads below would run as the installer.
    if (std::optional<DbError> refused
        = db::SchemaMigrator::foreignSchema(m_connection, line->schema))
        return *refused;
    auto versionTable
        = m_connection.exec("SELECT c.relkind = 'r' AND c.relowner = n.nspowner"
                            "  FROM pg_catalog.pg_class c"
                            "  JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace"
                            " WHERE n.nspname = $1 AND c.relname = 'schema_version'",
                            db::QueryParams().addText(line->schema));
    if (!versionTable)
        return versionTable.error();
    if (versionTable->rowCount() == 1 && !versionTable->boolean(0, 0).value_or(false))
        return DbError(ErrorKind::Other,
                       QStringLiteral("%1.schema_version is not a table of the schema's owner: "
                                      "reading it could run another role's code as the "
                                      "installer; refusing to continue. Check what schema %1 "
                                      "holds and drop it, then run again.")
                           .arg(QString::fromUtf8(m_connection.quoteIdentifier(line->schema))));
    // Capture must stay on: the adapter's triggers live on the queue's tables and its views read
    // them, so dropping the queue's schema drops both while schema_version still says installed.
    auto installed = m_connection.exec(
        "SELECT to_regclass(quote_ident($1) || '.schema_version') IS NOT NULL"
        "   AND to_regclass(quote_ident($1) || '.dead_letter_list') IS NOT NULL,"
        "       to_regclass(quote_ident($1) || '.schema_version') IS NOT NULL,"
        "       EXISTS (SELECT 1 FROM pg_catalog.pg_trigger t"
        "                 JOIN pg_catalog.pg_class c ON c.oid = t.tgrelid"
        "                 JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace"
        "                WHERE n.nspname = $2 AND t.tgname = 'redrive_capture_failure')",
        db::QueryParams().addText(line->schema).addText(line->queueSchema));
    if (!installed)
        return installed.error();
    bool hasViews = installed->boolean(0, 0).value_or(false);
    const bool hasVersions = installed->boolean(0, 1).value_or(false);
    bool hasTrigger = installed->boolean(0, 2).value_or(false);
    // The installed adapter is replaced whole unless its versions are a beginning of this line's:
    // it may be of another line, or made for another queue schema (pg-boss 12 cannot migrate a
    // pg-boss 10 schema, as it refuses anything below schema version 25, so an upgrade runs
    // pg-boss 12 in a schema of its own or in a recreated one, and the adapter made for pg-boss
    // 10's tables has to give way to the 12.x line), or an earlier release's, whose versions were
    // applied one by one before this line's files were squashed into one per line
    // (docs/architecture.md, "Library versions and adapter lines"). An adapter of this line
    // that is newer than this build's (its latest version higher, and either named as this
    // line's file or with every bundled version there as bundled) is left as it is: an older
    // console never downgrades it.
    bool lineChanged = false;
    bool newer = false;
    int installedVersion = 0; // the latest version of the adapter installed
    if (hasVersions) {
        const QList<db::Migration> bundled = db::SchemaMigrator::bundledMigrations(set);
        QStringList bundledVersions;
        QStringList bundledChecksums;
        for (const db::Migration &m : bundled) {
            bundledVersions << QString::number(m.version);
            bundledChecksums << m.checksum;
        }
        auto steps = m_connection.exec(
            "WITH installed AS (SELECT version, name, checksum FROM "
                + m_connection.quoteIdentifier(line->schema)
                + ".schema_version),"
                  " bundled AS (SELECT b.version::integer AS version, b.checksum"
                  "               FROM unnest($1::text[], $2::text[]) b (version, checksum)),"
                  " latest AS (SELECT version, name FROM installed"
                  "             ORDER BY version DESC LIMIT 1),"
                  // Newer: past the bundled versions, and of this line: its latest under the
                  // name of this line's file, or every bundled version there as bundled.
                  " ahead AS (SELECT coalesce((SELECT l.version FROM latest l)"
                  "                           > (SELECT max(version) FROM bundled), false)"
                  "                  AND (coalesce((SELECT l.name = $3 FROM latest l), false)"
                  "                       OR NOT EXISTS (SELECT 1 FROM bundled b"
                  "                                       WHERE NOT EXISTS ("
                  "                                           SELECT 1 FROM installed i"
                  "                                            WHERE i.version = b.version"
                  "                                              AND i.checksum = b.checksum)))"
                  "                  AS newer)"
                  " SELECT coalesce((SELECT version FROM latest), 0),"
                  "        (EXISTS (SELECT 1 FROM installed i"
                  "                  WHERE i.version <= (SELECT max(version) FROM bundled)"
                  "                    AND NOT EXISTS (SELECT 1 FROM bundled b"
                  "                                     WHERE b.version = i.version"
                  "                                       AND b.checksum = i.checksum))"
                  "         OR EXISTS (SELECT 1 FROM bundled b"
                  "                     WHERE b.version <= (SELECT version FROM latest)"
                  "                       AND NOT EXISTS (SELECT 1 FROM installed i"
                  "                                        WHERE i.version = b.version)))"
                  "        AND NOT (SELECT newer FROM ahead),"
                  "        (SELECT newer FROM ahead)",
            db::QueryParams()
                .addTextArray(bundledVersions)
                .addTextArray(bundledChecksums)
                .addText(bundled.isEmpty() ? QString() : bundled.last().name));
        if (!steps)
            return steps.error();
        installedVersion = steps->integer(0, 0).value_or(0);
        lineChanged = !bundled.isEmpty() && steps->boolean(0, 1).value_or(false);
        newer = !bundled.isEmpty() && steps->boolean(0, 2).value_or(false);
        // Every trigger the applied migrations made is there as they made it, firing, and
        // every view and function they made is there: the application can drop or disable a
        // capture trigger (on the table, or its clone on one partition), make it fire only as a
        // replica, put a trigger of the same name on another table or with its own function,
        // or drop a view by dropping a column it reads (the console would then read Redrive's
        // own view of that name further down its path). Otherwise the adapter is installed
        // again (docs/security.md, "The queue's own role").
        static const QRegularExpression createdTrigger(
            QStringLiteral("CREATE\\s+(?:OR\\s+REPLACE\\s+)?TRIGGER\\s+([A-Za-z_][A-Za-z0-9_]*)"
                           "\\s.*?\\sON\\s+(?:\"[^\"]+\"|[A-Za-z_][A-Za-z0-9_]*)\\."
                           "([A-Za-z_][A-Za-z0-9_]*)\\s.*?EXECUTE\\s+(?:FUNCTION|PROCEDURE)\\s+"
                           "[A-Za-z_][A-Za-z0-9_]*\\.([A-Za-z_][A-Za-z0-9_]*)\\s*\\("),
            QRegularExpression::CaseInsensitiveOption
                | QRegularExpression::DotMatchesEverythingOption);
        const QRegularExpression object(
            QStringLiteral("(CREATE\\s+(?:OR\\s+REPLACE\\s+)?|DROP\\s+)(VIEW|FUNCTION)\\s+"
                           "(?:IF\\s+EXISTS\\s+)?%1\\.([A-Za-z_][A-Za-z0-9_]*)")
                .arg(QRegularExpression::escape(line->schema)),
            QRegularExpression::CaseInsensitiveOption);
        // What the migrations granted the confined role on the queue's tables, one privilege a
        // row: the queue's owner can take it back (REVOKE ... CASCADE from the installer takes
        // it from the confined role too), and every read of the console would then fail.
        const QRegularExpression granted(
            QStringLiteral("GRANT\\s+([A-Z]+(?:\\s*,\\s*[A-Z]+)*)\\s+ON\\s+("
                           "(?:(?:\"[^\"]+\"|[A-Za-z_][A-Za-z0-9_]*)\\.[A-Za-z_][A-Za-z0-9_]*"
                           "\\s*,\\s*)*"
                           "(?:\"[^\"]+\"|[A-Za-z_][A-Za-z0-9_]*)\\.[A-Za-z_][A-Za-z0-9_]*)"
                           "\\s+TO\\s+%1\\b")
                .arg(QRegularExpression::escape(confined)),
            QRegularExpression::CaseInsensitiveOption);
        QStringList grantTables;
        QStringList grantPrivileges;
        QStringList triggers;
        QStringList triggerTables;
        QStringList triggerFunctions;
        QMap<QString, QString> objects; // name -> "VIEW" or "FUNCTION", as left by the migrations
        for (const db::Migration &m : bundled) {
            if (m.version > installedVersion)
                continue;
            const QString sql = QString::fromUtf8(m.sql);
            for (const QRegularExpressionMatch &match : createdTrigger.globalMatch(sql)) {
                if (triggers.contains(match.captured(1)))
                    continue;
                triggers << match.captured(1);
                triggerTables << match.captured(2);
                triggerFunctions << match.captured(3);
            }
            for (const QRegularExpressionMatch &match : granted.globalMatch(sql))
                for (const QString &table : match.captured(2).split(QLatin1Char(',')))
                    for (const QString &privilege : match.captured(1).split(QLatin1Char(','))) {
                        static const QStringList kTablePrivileges { "SELECT", "INSERT", "UPDATE",
                                                                    "DELETE", "TRIGGER" };
                        if (!kTablePrivileges.contains(privilege.trimmed().toUpper()))
                            continue;
                        grantTables << table.section(QLatin1Char('.'), -1).trimmed();
                        grantPrivileges << privilege.trimmed().toUpper();
                    }
            for (const QRegularExpressionMatch &match : object.globalMatch(sql)) {
                if (match.captured(1).startsWith(QLatin1String("DROP"), Qt::CaseInsensitive))
                    objects.remove(match.captured(3));
                else
                    objects.insert(match.captured(3), match.captured(2).toUpper());
            }
        }
        auto whole = m_connection.exec(
            "WITH RECURSIVE want (name, rel, fn) AS ("
            "    SELECT w.name, pg_catalog.to_regclass(pg_catalog.quote_ident($1) || '.'"
            "                                          || pg_catalog.quote_ident(w.tab)),"
            "           pg_catalog.to_regprocedure(pg_catalog.quote_ident($2) || '.'"
            "                                      || pg_catalog.quote_ident(w.fn) || '()')"
            "      FROM unnest($3::text[], $4::text[], $5::text[]) w (name, tab, fn)),"
            " top (name, oid, firing) AS ("
            "    SELECT w.name, t.oid, t.tgenabled IN ('O', 'A')"
            "      FROM want w"
            "      JOIN pg_catalog.pg_trigger t ON t.tgrelid = w.rel AND t.tgname = w.name"
            "                                  AND t.tgfoid = w.fn AND t.tgparentid = 0),"
            " clones (name, oid, firing) AS ("
            "    SELECT name, oid, firing FROM top"
            "    UNION ALL"
            "    SELECT c.name, t.oid, t.tgenabled IN ('O', 'A')"
            "      FROM clones c JOIN pg_catalog.pg_trigger t ON t.tgparentid = c.oid)"
            " SELECT (SELECT count(*) FROM top) = cardinality($3::text[])"
            "        AND (SELECT bool_and(firing) FROM clones) IS NOT FALSE,"
            "        (SELECT string_agg(o.name, ', ' ORDER BY o.name)"
            "           FROM unnest($6::text[], $7::text[]) o (name, kind)"
            "          WHERE NOT CASE o.kind"
            "                 WHEN 'VIEW' THEN EXISTS ("
            "                     SELECT 1 FROM pg_catalog.pg_class c"
            "                      WHERE c.relnamespace"
            "                            = pg_catalog.to_regnamespace(pg_catalog.quote_ident($2))"
            "                        AND c.relname = o.name AND c.relkind IN ('v', 'm'))"
            "                 ELSE EXISTS ("
            "                     SELECT 1 FROM pg_catalog.pg_proc p"
            "                      WHERE p.pronamespace"
            "                            = pg_catalog.to_regnamespace(pg_catalog.quote_ident($2))"
            "                        AND p.proname = o.name) END),"
            "        coalesce((SELECT string_agg(pg_catalog.format('%s on %s', g.privilege,"
            "                                                      g.tab),"
            "                                    ', ' ORDER BY g.tab, g.privilege)"
            "           FROM unnest($8::text[], $9::text[]) g (tab, privilege)"
            "          WHERE pg_catalog.to_regclass(pg_catalog.quote_ident($1) || '.'"
            "                                       || pg_catalog.quote_ident(g.tab)) IS NOT NULL"
            "            AND (pg_catalog.to_regrole(pg_catalog.quote_ident($10)) IS NULL"
            "                 OR NOT pg_catalog.has_table_privilege("
            "                        $10, pg_catalog.to_regclass(pg_catalog.quote_ident($1) || '.'"
            "                                                    || pg_catalog.quote_ident(g.tab)),"
            "                        g.privilege))), '')"
            "        || CASE WHEN cardinality($8::text[]) > 0"
            "                 AND (pg_catalog.to_regrole(pg_catalog.quote_ident($10)) IS NULL"
            "                      OR NOT pg_catalog.has_schema_privilege("
            "                             $10, pg_catalog.to_regnamespace("
            "                                      pg_catalog.quote_ident($1))::pg_catalog.oid,"
            "                             'USAGE'))"
            "                THEN ', USAGE on the schema' ELSE '' END",
            db::QueryParams()
                .addText(line->queueSchema)
                .addText(line->schema)
                .addTextArray(triggers)
                .addTextArray(triggerTables)
                .addTextArray(triggerFunctions)
                .addTextArray(objects.keys())
                .addTextArray(objects.values())
                .addTextArray(grantTables)
                .addTextArray(grantPrivileges)
                .addText(confined));
        if (!whole)
            return whole.error();
        hasTrigger = hasTrigger && whole->boolean(0, 0).value_or(false);
        if (!whole->isNull(0, 1)) {
            qCWarning(lcDb) << "source" << source.name
                            << "adapter objects missing:" << whole->text(0, 1);
            hasViews = false;
        }
        // (An adapter installed again below, or replaced by another line, is granted what it
        // needs by its own migrations.)
        if (!lineChanged && hasViews && hasTrigger && !whole->isNull(0, 2)
            && !whole->text(0, 2).isEmpty()) {
            report.rightsMissing = whole->text(0, 2);
            if (report.rightsMissing.startsWith(QLatin1String(", ")))
                report.rightsMissing.remove(0, 2);
            qCWarning(lcDb) << "source" << source.name << confined << "lacks"
                            << report.rightsMissing << "on schema" << line->queueSchema;
            // Granted again as the migrations granted them, nothing dropped: a reinstall would
            // turn capture off, and fail all the same if the installer lost its own grant option.
            // A GRANT runs none of the application's code.
            const QByteArray role = m_connection.quoteIdentifier(confined);
            const QByteArray schema = m_connection.quoteIdentifier(line->queueSchema);
            // One the installer may not make (its grant option gone too) fails alone; what is
            // still missing afterwards is refused below.
            if (auto usage = m_connection.exec("GRANT USAGE ON SCHEMA " + schema + " TO " + role);
                !usage)
                qCWarning(lcDb) << "source" << source.name << usage.error().summary();
            for (qsizetype i = 0; i < grantTables.size(); ++i) {
                const QByteArray table
                    = schema + '.' + m_connection.quoteIdentifier(grantTables.at(i));
                auto exists
                    = m_connection.exec("SELECT pg_catalog.to_regclass($1) IS NOT NULL",
                                        db::QueryParams().addText(QString::fromUtf8(table)));
                if (!exists)
                    return exists.error();
                if (!exists->boolean(0, 0).value_or(false))
                    continue;
                if (auto granted = m_connection.exec("GRANT " + grantPrivileges.at(i).toLatin1()
                                                     + " ON " + table + " TO " + role);
                    !granted)
                    qCWarning(lcDb) << "source" << source.name << granted.error().summary();
            }
            auto again = m_connection.exec(
                "SELECT pg_catalog.has_schema_privilege($1, pg_catalog.to_regnamespace($2)::oid,"
                "                                      'USAGE')"
                "   AND NOT EXISTS (SELECT 1 FROM unnest($3::text[], $4::text[]) g (tab, privilege)"
                "                    WHERE pg_catalog.to_regclass(pg_catalog.quote_ident($2) || '.'"
                "                                       || pg_catalog.quote_ident(g.tab)) IS NOT "
                "NULL"
                "                      AND NOT pg_catalog.has_table_privilege($1,"
                "                              pg_catalog.to_regclass(pg_catalog.quote_ident($2)"
                "                                       || '.' || pg_catalog.quote_ident(g.tab)),"
                "                              g.privilege))",
                db::QueryParams()
                    .addText(confined)
                    .addText(line->queueSchema)
                    .addTextArray(grantTables)
                    .addTextArray(grantPrivileges));
            if (!again)
                return again.error();
            if (!again->boolean(0, 0).value_or(false))
                return DbError(
                    ErrorKind::Permission,
                    QStringLiteral("role %1 lacks %2 on schema %3 and this installer cannot "
                                   "grant them again (the grant option was taken from it too): "
                                   "every read of the console fails meanwhile; capture is left as "
                                   "it is. As the owner of schema %3, give the installer the "
                                   "README's grants WITH GRANT OPTION again, then run "
                                   "install-source again.")
                        .arg(confined, report.rightsMissing, line->queueSchema));
        }
    }
    if (newer) {
        // A later release's adapter: this build's file would be a downgrade, reinstalled or not.
        if (!hasViews || !hasTrigger)
            return DbError(ErrorKind::Other,
                           QStringLiteral("capture of source %1 is not active, and the adapter "
                                          "installed (version %2) is newer than this build's "
                                          "(%3): run install-source of the Redrive release that "
                                          "installed it")
                               .arg(source.name)
                               .arg(installedVersion)
                               .arg(db::SchemaMigrator::expectedVersion(set)));
        report.migrations.fromVersion = installedVersion;
        report.migrations.toVersion = installedVersion;
        return report;
    }
    // Either way the adapter's schema (its views, and with them its triggers on the old queue's
    // tables) is dropped and this line installed from version 0; Redrive's own record of the
    // jobs (redrive.source_job, redrive.source_attempt, the audit log) stays.
    if (hasVersions && (lineChanged || !hasViews || !hasTrigger)) {
        if (lineChanged)
            qCWarning(lcDb) << "source" << source.name << "adapter installed at version"
                            << installedVersion
                            << "is not a beginning of this line's (an earlier release's, or made"
                            << "for another queue version or schema): replacing it with"
                            << line->label;
        else
            qCWarning(lcDb) << "source" << source.name
                            << "capture was not active (a capture trigger dropped, disabled or"
                            << "replaced, an adapter view dropped, or"
                            << "schema" << line->queueSchema
                            << "dropped and recreated?): reinstalling the adapter";
        // The drop and every migration of this line run in one transaction
        // (MigrationSet::oneTransaction): whatever stops the reinstall (a lock held past
        // lock_timeout, a refusal of the checks, a grant missing) rolls the drop back with it,
        // and the adapter stays at the version it had. Stopped between two versions, it would
        // run at one its later versions made safe: before pg-boss adapter version 9 (graphile-
        // worker 7) the actions change the queue's rows as the installer, so a trigger of the
        // application's ran as the installer in an operator's requeue (a fresh attacker did so
        // after a GRANT of its own had held migration 9 past lock_timeout). Checked first, for a
        // message that says what to grant: the migrations read and put triggers on every table
        // the adapter reads and their partitions, also those made since the README's grants.
        auto ungranted = m_connection.exec(
            kTablesReadTree
                + QByteArray(" SELECT string_agg(t.oid::pg_catalog.regclass::text, ', '"
                             "                   ORDER BY t.oid::pg_catalog.regclass::text)"
                             "   FROM tree t"
                             "  WHERE NOT (pg_catalog.has_table_privilege(t.oid, 'SELECT')"
                             "             AND pg_catalog.has_table_privilege(t.oid, 'TRIGGER'))"),
            db::QueryParams().addText(line->queueSchema).addTextArray(tables));
        if (!ungranted)
            return ungranted.error();
        if (!ungranted->isNull(0, 0))
            return DbError(
                ErrorKind::Permission,
                QStringLiteral("the adapter must be installed again, but this role may "
                               "not read or put triggers on %1 (tables of schema %2 "
                               "made since the README's grants were given, such as a "
                               "new queue's partition); nothing was dropped, capture "
                               "is as it was. As the owner of schema %2, give the "
                               "README's grants again (GRANT TRIGGER, SELECT, INSERT, "
                               "UPDATE, DELETE ON ALL TABLES IN SCHEMA %2 TO ... WITH "
                               "GRANT OPTION), then run install-source again.")
                    .arg(display::boundedText(ungranted->text(0, 0), 400), line->queueSchema));
        // The confined role keeps no rights on the queue schema the old adapter read (this line
        // grants it what it needs on its own). Only what this installer granted can be revoked
        // (a failure is only noted, behind a savepoint); a schema already gone has nothing left
        // to revoke.
        // The adapter's settings are the operator's (graphile-worker's stuck_after): read
        // before the drop and written again after the migrations, in the same transaction. The
        // schema's owner is the installer (checked above), so nobody else made the table.
        auto settings = std::make_shared<std::optional<QString>>();
        set.first = [adapterSchema = line->schema, confined, sourceName = source.name,
                     settings](db::PgConnection &c) -> std::optional<DbError> {
            auto kept = c.exec("SELECT pg_catalog.to_regclass(pg_catalog.quote_ident($1)"
                               "                              || '.adapter_settings') IS NOT NULL",
                               db::QueryParams().addText(adapterSchema));
            if (!kept)
                return kept.error();
            if (kept->boolean(0, 0).value_or(false)) {
                auto stuckAfter = c.exec("SELECT stuck_after::text FROM "
                                         + c.quoteIdentifier(adapterSchema) + ".adapter_settings");
                if (!stuckAfter)
                    return stuckAfter.error();
                if (stuckAfter->rowCount() == 1 && !stuckAfter->isNull(0, 0))
                    *settings = stuckAfter->text(0, 0);
            }
            if (auto dropped
                = c.exec("DROP SCHEMA " + c.quoteIdentifier(adapterSchema) + " CASCADE");
                !dropped)
                return dropped.error();
            // Every right the role holds in this database, on any schema and any relation, is
            // taken back (the migrations then grant what this line needs), found by the role's
            // own rights rather than by the queue schema Redrive recorded: the application may
            // have renamed the old queue schema (pg-boss 12 made afresh in "pgboss", pg-boss 10's
            // kept as "pgboss_old"), which left every right on it in place. Table by table:
            // REVOKE ... ON ALL TABLES fails as a whole on one table this installer has no right
            // on (a pg-boss 10 partition of a queue made since the README's grants).
            auto held = c.exec(kConfinedRoleRights
                                   + " SELECT r.revoke FROM rights r GROUP BY r.revoke, r.on_schema"
                                     " ORDER BY r.on_schema, r.revoke",
                               db::QueryParams().addText(confined));
            if (!held)
                return held.error();
            const QByteArray role = c.quoteIdentifier(confined);
            for (int row = 0; row < held->rowCount(); ++row) {
                const QByteArray sql = held->text(row, 0).toUtf8() + " FROM " + role;
                if (auto saved = c.exec("SAVEPOINT redrive_revoke"); !saved)
                    return saved.error();
                if (auto revoked = c.exec(sql); !revoked) {
                    // Only "permission denied" is passed over: an object this installer has no
                    // right on holds no right it granted. Anything else (a lock timeout, "tuple
                    // concurrently updated" while the application keeps the object's catalog row
                    // busy) ends the install, and the drop rolls back with it.
                    if (revoked.error().sqlState() != QLatin1String("42501"))
                        return revoked.error();
                    qCWarning(lcDb) << "source" << sourceName << "could not revoke the rights of"
                                    << confined << "(" << sql << "):" << revoked.error().summary();
                    if (auto back = c.exec("ROLLBACK TO SAVEPOINT redrive_revoke"); !back)
                        return back.error();
                }
                // Released at once: what follows runs in the transaction itself, whose own
                // writes queueSchemaMoved() recognizes by its id (a subtransaction has another).
                if (auto released = c.exec("RELEASE SAVEPOINT redrive_revoke"); !released)
                    return released.error();
            }
            // Nothing this installer granted is left (a superuser's grants are recorded as the
            // owner's, so for one nothing at all): otherwise refused, the drop rolled back.
            auto left = c.exec(kConfinedRoleRights
                                   + " SELECT pg_catalog.string_agg(DISTINCT r.what, ', ')"
                                     "   FROM rights r"
                                     "   JOIN pg_catalog.pg_roles me ON me.rolname = current_user"
                                     "  WHERE me.rolsuper OR r.grantor = me.oid",
                               db::QueryParams().addText(confined));
            if (!left)
                return left.error();
            if (!left->isNull(0, 0))
                return DbError(ErrorKind::Other,
                               QStringLiteral("role %1 still holds rights this installer granted "
                                              "(%2): they could not be taken back, and nothing "
                                              "was changed. Run install-source again once no "
                                              "other session is changing those objects.")
                                   .arg(confined, display::boundedText(left->text(0, 0), 400)));
            return std::nullopt;
        };
        set.afterScript = [checks = set.afterScript, adapterSchema = line->schema,
                           settings](db::PgConnection &c) -> std::optional<DbError> {
            if (std::optional<DbError> refused = checks(c))
                return refused;
            if (!settings->has_value())
                return std::nullopt;
            auto made = c.exec("SELECT pg_catalog.to_regclass(pg_catalog.quote_ident($1)"
                               "                              || '.adapter_settings') IS NOT NULL",
                               db::QueryParams().addText(adapterSchema));
            if (!made)
                return made.error();
            if (!made->boolean(0, 0).value_or(false))
                return std::nullopt;
            auto restored = c.exec("UPDATE " + c.quoteIdentifier(adapterSchema)
                                       + ".adapter_settings SET stuck_after = $1::interval",
                                   db::QueryParams().addText(**settings));
            if (!restored)
                return restored.error();
            settings->reset();
            return std::nullopt;
        };
        report.replaced = lineChanged;
        report.replacedVersion = lineChanged ? installedVersion : 0;
        report.reinstalled = !lineChanged;
    }

    db::SchemaMigrator adapter(m_connection, set);
    auto migrated = adapter.migrate();
    if (!migrated)
        return migrated.error();
    auto recordSchema
        = m_connection.exec("UPDATE redrive.source SET queue_schema = $2 WHERE name = $1"
                            "   AND queue_schema IS DISTINCT FROM $2",
                            db::QueryParams().addText(line->name).addText(line->queueSchema));
    if (!recordSchema)
        return recordSchema.error();
    report.migrations = *migrated;
    qCInfo(lcDb) << "source" << source.name << "at adapter version" << migrated->toVersion;
    return report;
}

QString installRoleHint(const SourceDefinition &source)
{
    return QStringLiteral(
               "install-source must run as the role that owns Redrive's schema (the one that ran "
               "`redrive migrate`: it creates schema %1 and writes redrive.source), and that role "
               "needs CREATEROLE (it creates the NOLOGIN role %1_queue, the only role that reads "
               "and changes the queue's tables), USAGE on schema %2 and TRIGGER, SELECT, INSERT, "
               "UPDATE, DELETE on its tables, both WITH GRANT OPTION (or to own them)%3; the "
               "queue's application role needs nothing from Redrive. See the README, \"Other job "
               "queues as sources\".")
        .arg(source.schema, source.queueSchema,
             source.name == QLatin1String("graphile-worker")
                 ? QStringLiteral(", and a row level security policy on the tables the adapter "
                                  "reads (graphile-worker enables it with no policy)")
                 : QString());
}

int runInstallSource(const QString &name, const QString &connInfo, const QString &queueSchema)
{
    std::optional<SourceDefinition> source = SourceDefinition::find(name);
    if (source && !queueSchema.isEmpty()) {
        source = source->withQueueSchema(queueSchema);
        source->queueSchemaGiven = true;
    }
    if (!source) {
        QStringList names;
        for (const SourceDefinition &s : SourceDefinition::known())
            names << s.name;
        std::fprintf(stderr, "redrive install-source: unknown source '%s' (one of: %s)\n",
                     qPrintable(name), qPrintable(names.join(QStringLiteral(", "))));
        return cli::kExitUsage;
    }
    db::ConnectionSettings settings;
    settings.connInfo = connInfo;
    // pg_catalog, pg_temp: the default path starts with "$user", a schema the queue's application
    // may create under the installing role's name, whose operators and functions the adapter's
    // views and history import would otherwise bind (docs/security.md, "The queue's own role").
    settings.searchPath = QStringLiteral("pg_catalog");
    auto connection = db::PgConnection::open(settings);
    if (!connection)
        return cli::reportCannotConnect("redrive install-source", connection.error());
    // Every statement that waits for a lock waits at most lock_timeout: the queue's application
    // can hold a lock install-source needs (an open transaction on the queue's tables or
    // schema) for as long as it likes, and a reinstall that waits has already dropped the
    // adapter's schema, so capture is off meanwhile. 30 s unless the session already has one
    // (`options='-c lock_timeout=...'` in the connection string, PGOPTIONS, or the role's own
    // setting).
    auto timeout = connection->exec("SELECT pg_catalog.current_setting('lock_timeout')");
    if (timeout && timeout->text(0, 0) == QLatin1String("0"))
        timeout = connection->exec("SELECT pg_catalog.set_config('lock_timeout', '30s', false)");
    if (!timeout) {
        std::fprintf(stderr, "redrive install-source: %s\n", qPrintable(timeout.error().summary()));
        return cli::kExitUnavailable;
    }
    SourceInstaller installer(connection.value());
    auto report = installer.install(*source);
    if (!report) {
        const db::DbError &e = report.error();
        std::fprintf(stderr, "redrive install-source %s: failed: %s\n", qPrintable(name),
                     qPrintable(e.summary()));
        if (e.sqlState() == QLatin1String("55P03")) {
            auto waited = connection->exec("SELECT pg_catalog.current_setting('lock_timeout')");
            std::fprintf(stderr,
                         "  another session held a lock install-source needs (an open transaction "
                         "on schema %s or its tables, another install-source, an advisory lock) "
                         "for longer than lock_timeout (%s); nothing of the step that waited is "
                         "kept. End that session's transaction (pg_stat_activity and pg_locks "
                         "name it), then run install-source again: until it completes, the "
                         "console's Sources say whether capture is active.\n",
                         qPrintable(source->queueSchema),
                         waited ? qPrintable(waited->text(0, 0)) : "?");
        }
        if (!e.detail().isEmpty())
            std::fprintf(stderr, "  detail: %s\n", qPrintable(e.detail()));
        if (!e.hint().isEmpty())
            std::fprintf(stderr, "  hint: %s\n", qPrintable(e.hint()));
        if (e.kind() == db::ErrorKind::Permission
            || e.summary().contains(QLatin1String("permission denied"))
            || e.summary().contains(QLatin1String("must be owner")))
            std::fprintf(stderr, "  %s\n", qPrintable(installRoleHint(*source)));
        return cli::kExitFailed;
    }
    if (report->replaced)
        std::printf("redrive install-source %s: the adapter installed (version %d) was an earlier "
                    "release's, or made for another version of the queue or another queue "
                    "schema; replaced by the %s line over schema %s. Redrive's record of the jobs "
                    "(history, audit, resolutions) and the adapter's settings are kept.\n",
                    qPrintable(name), report->replacedVersion, qPrintable(report->label),
                    qPrintable(report->queueSchema));
    if (!report->rightsMissing.isEmpty())
        std::printf("redrive install-source %s: role %s_queue had lost %s (revoked by the "
                    "owner of schema %s?), which every read of the console needs; granted "
                    "again.\n",
                    qPrintable(name), qPrintable(source->schema), qPrintable(report->rightsMissing),
                    qPrintable(source->queueSchema));
    if (report->reinstalled)
        std::printf("redrive install-source %s: capture was not active (the trigger on schema %s "
                    "was gone: was the queue's schema dropped and recreated?); reinstalled. "
                    "Failures between the drop and now were not captured.\n",
                    qPrintable(name), qPrintable(source->queueSchema));
    if (report->migrations.applied.isEmpty())
        std::printf("redrive install-source %s: up to date (adapter version %d)\n",
                    qPrintable(name), report->migrations.toVersion);
    else
        std::printf("redrive install-source %s: adapter version %d -> %d (%s) over %s schema "
                    "version %d; search_path for the console: %s\n",
                    qPrintable(name), report->migrations.fromVersion, report->migrations.toVersion,
                    qPrintable(report->label), qPrintable(source->queueSchema),
                    report->queueVersion, qPrintable(source->searchPath()));
    return cli::kExitOk;
}

} // namespace redrive
