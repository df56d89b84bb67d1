// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/audit_chain_verifier.h"

#include "models/cli_commands.h"
#include "models/db/pg_connection.h"
#include "models/db/sql_statement.h"
#include "models/logging.h"

#include <QCoreApplication>
#include <QThread>
#include <QThreadPool>
#include <QtConcurrent/QtConcurrentRun>
#include <cstdio>
#include <cstring>
#include <deque>
#include <libpq-fe.h>
#include <limits>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <vector>

#ifdef REDRIVE_SHA256_OPENSSL
#include <openssl/evp.h>
#else
#include <QCryptographicHash>
#endif

namespace redrive {

namespace {

QString tr(const char *text)
{
    return QCoreApplication::translate("AuditChainVerifier", text);
}

// --- SHA-256 ---------------------------------------------------------------------------------

constexpr int kHashSize = 32;

// SHA-256 of a || b. One per hashing thread, reused for every entry (no allocation per entry).
// With OpenSSL's libcrypto (SHA extensions where the CPU has them) when the build found it;
// otherwise QCryptographicHash. Both compute the same digest; tst_audit_chain_verifier checks the
// result against the server's sha256().
class Sha256
{
public:
#ifdef REDRIVE_SHA256_OPENSSL
    Sha256()
        : m_md(EVP_MD_fetch(nullptr, "SHA256", nullptr))
        , m_ctx(EVP_MD_CTX_new())
    { }
    ~Sha256()
    {
        EVP_MD_CTX_free(m_ctx);
        EVP_MD_free(m_md);
    }
    void hash(const char *a, size_t aSize, const char *b, size_t bSize, unsigned char *out)
    {
        unsigned int size = 0;
        EVP_DigestInit_ex2(m_ctx, m_md, nullptr);
        EVP_DigestUpdate(m_ctx, a, aSize);
        EVP_DigestUpdate(m_ctx, b, bSize);
        EVP_DigestFinal_ex(m_ctx, out, &size);
    }

private:
    EVP_MD *m_md;
    EVP_MD_CTX *m_ctx;
#else
    void hash(const char *a, size_t aSize, const char *b, size_t bSize, unsigned char *out)
    {
        m_hash.reset();
        m_hash.addData(QByteArrayView(a, qsizetype(aSize)));
        m_hash.addData(QByteArrayView(b, qsizetype(bSize)));
        std::memcpy(out, m_hash.resultView().data(), kHashSize);
    }

private:
    QCryptographicHash m_hash { QCryptographicHash::Sha256 };
#endif
    Q_DISABLE_COPY(Sha256)
};

// --- The canonical form (docs/audit-chain.md) ------------------------------------------------

struct Span
{
    const char *data = nullptr; // nullptr: SQL NULL
    qsizetype size = 0;
};

Span spanOf(const QByteArray &bytes)
{
    return bytes.isNull() ? Span() : Span { bytes.constData(), bytes.size() };
}

// The pieces of an entry as the canonical form needs them: strings as their UTF-8 text, jsonb
// as its text output.
struct Pieces
{
    qint64 id = 0;
    Span at, dbUser, clientAddr, osUser, action, targets, reason, ticket, before, after, actionId,
        outcome;
};

// PostgreSQL's escape_json(): " \ and the control characters with a short form are escaped
// with a backslash, other bytes below 0x20 as \u00xx (lower-case hex), all else as it is.
void appendJsonString(std::string &out, Span s)
{
    if (!s.data) {
        out += "null";
        return;
    }
    static const char kHex[] = "0123456789abcdef";
    out += '"';
    const char *p = s.data;
    const char *end = s.data + s.size;
    const char *run = p;
    for (; p < end; ++p) {
        const auto c = static_cast<unsigned char>(*p);
        if (c >= 0x20 && c != '"' && c != '\\')
            continue;
        out.append(run, size_t(p - run));
        run = p + 1;
        switch (c) {
        case '"':
            out += "\\\"";
            break;
        case '\\':
            out += "\\\\";
            break;
        case '\b':
            out += "\\b";
            break;
        case '\f':
            out += "\\f";
            break;
        case '\n':
            out += "\\n";
            break;
        case '\r':
            out += "\\r";
            break;
        case '\t':
            out += "\\t";
            break;
        default: {
            const char u[6] = { '\\', 'u', '0', '0', kHex[c >> 4], kHex[c & 15] };
            out.append(u, 6);
        }
        }
    }
    out.append(run, size_t(end - run));
    out += '"';
}

void appendJson(std::string &out, Span s)
{
    if (s.data)
        out.append(s.data, size_t(s.size));
    else
        out += "null";
}

void appendInt(std::string &out, qint64 value)
{
    char buffer[24];
    const int n = std::snprintf(buffer, sizeof buffer, "%lld", static_cast<long long>(value));
    out.append(buffer, size_t(n));
}

// The text of jsonb_build_object(...) over the entry: keys ordered as jsonb orders them (by
// length, then bytewise), ", " between members, ": " after each key.
void appendCanonical(std::string &out, const Pieces &p)
{
    out += "{\"at\": ";
    appendJsonString(out, p.at);
    out += ", \"id\": ";
    appendInt(out, p.id);
    out += ", \"after\": ";
    appendJson(out, p.after);
    out += ", \"action\": ";
    appendJsonString(out, p.action);
    out += ", \"before\": ";
    appendJson(out, p.before);
    out += ", \"reason\": ";
    appendJsonString(out, p.reason);
    out += ", \"ticket\": ";
    appendJsonString(out, p.ticket);
    out += ", \"db_user\": ";
    appendJsonString(out, p.dbUser);
    out += ", \"os_user\": ";
    appendJsonString(out, p.osUser);
    out += ", \"outcome\": ";
    appendJson(out, p.outcome);
    out += ", \"targets\": ";
    appendJson(out, p.targets);
    out += ", \"action_id\": ";
    appendJsonString(out, p.actionId);
    out += ", \"client_addr\": ";
    appendJsonString(out, p.clientAddr);
    out += '}';
}

// --- Binary column values --------------------------------------------------------------------

quint16 be16(const char *p)
{
    const auto *u = reinterpret_cast<const unsigned char *>(p);
    return quint16((u[0] << 8) | u[1]);
}

quint32 be32(const char *p)
{
    const auto *u = reinterpret_cast<const unsigned char *>(p);
    return (quint32(u[0]) << 24) | (quint32(u[1]) << 16) | (quint32(u[2]) << 8) | quint32(u[3]);
}

qint64 be64(const char *p)
{
    return qint64((quint64(be32(p)) << 32) | be32(p + 4));
}

char *putDigits(char *out, qint64 value, int width)
{
    for (int i = width - 1; i >= 0; --i) {
        out[i] = char('0' + value % 10);
        value /= 10;
    }
    return out + width;
}

// timestamptz (microseconds since 2000-01-01 UTC) as to_char(at AT TIME ZONE 'UTC',
// 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'): the year at least four digits, BC years without a sign;
// infinity has no text (to_char gives NULL). Returns the length written, 0 for NULL.
int formatTimestamp(qint64 micros, char *out)
{
    if (micros == std::numeric_limits<qint64>::max()
        || micros == std::numeric_limits<qint64>::min())
        return 0;
    constexpr qint64 kDay = 86400000000LL;
    qint64 days = micros / kDay;
    qint64 rest = micros % kDay;
    if (rest < 0) {
        rest += kDay;
        --days;
    }
    // Civil date from days since 1970-01-01 (proleptic Gregorian, year 0 = 1 BC).
    const qint64 z = days + 10957 + 719468;
    const qint64 era = (z >= 0 ? z : z - 146096) / 146097;
    const qint64 doe = z - era * 146097;
    const qint64 yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
    const qint64 doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    const qint64 mp = (5 * doy + 2) / 153;
    const qint64 day = doy - (153 * mp + 2) / 5 + 1;
    const qint64 month = mp < 10 ? mp + 3 : mp - 9;
    qint64 year = yoe + era * 400 + (month <= 2 ? 1 : 0);
    if (year <= 0)
        year = 1 - year;
    char *p = out;
    int yearWidth = 4;
    for (qint64 y = year; y >= 10000; y /= 10)
        ++yearWidth;
    p = putDigits(p, year, yearWidth);
    *p++ = '-';
    p = putDigits(p, month, 2);
    *p++ = '-';
    p = putDigits(p, day, 2);
    *p++ = 'T';
    const qint64 seconds = rest / 1000000;
    p = putDigits(p, seconds / 3600, 2);
    *p++ = ':';
    p = putDigits(p, seconds / 60 % 60, 2);
    *p++ = ':';
    p = putDigits(p, seconds % 60, 2);
    *p++ = '.';
    p = putDigits(p, rest % 1000000, 6);
    *p++ = 'Z';
    return int(p - out);
}

// uuid (16 bytes) as uuid_out prints it: lower-case hex, 8-4-4-4-12.
int formatUuid(const char *bytes, char *out)
{
    static const char kHex[] = "0123456789abcdef";
    char *p = out;
    for (int i = 0; i < 16; ++i) {
        if (i == 4 || i == 6 || i == 8 || i == 10)
            *p++ = '-';
        const auto c = static_cast<unsigned char>(bytes[i]);
        *p++ = kHex[c >> 4];
        *p++ = kHex[c & 15];
    }
    return int(p - out);
}

// inet in binary (family, bits, is_cidr, size, address) as host() prints it: the address
// without /bits. IPv4 dotted; IPv6 in PostgreSQL's inet_net_ntop form: lower-case hex groups,
// the first longest run of two or more zero groups as "::", and an IPv4 tail for ::a.b.c.d and
// ::ffff:a.b.c.d. Returns the length, or -1 when the value is not an inet.
int formatInet(const char *data, int size, char *out)
{
    if (size < 4)
        return -1;
    const auto *u = reinterpret_cast<const unsigned char *>(data);
    const int family = u[0];
    const int n = u[3];
    if (size != 4 + n)
        return -1;
    const unsigned char *a = u + 4;
    char *p = out;
    auto dotted = [&p](const unsigned char *v) {
        p += std::sprintf(p, "%u.%u.%u.%u", v[0], v[1], v[2], v[3]);
    };
    if (family == 2 && n == 4) {
        dotted(a);
        return int(p - out);
    }
    if (family != 3 || n != 16)
        return -1;
    unsigned words[8];
    for (int i = 0; i < 8; ++i)
        words[i] = (unsigned(a[2 * i]) << 8) | a[2 * i + 1];
    int bestBase = -1, bestLen = 0, curBase = -1, curLen = 0;
    for (int i = 0; i < 8; ++i) {
        if (words[i] == 0) {
            if (curBase == -1) {
                curBase = i;
                curLen = 1;
            } else {
                ++curLen;
            }
        } else if (curBase != -1) {
            if (bestBase == -1 || curLen > bestLen) {
                bestBase = curBase;
                bestLen = curLen;
            }
            curBase = -1;
        }
    }
    if (curBase != -1 && (bestBase == -1 || curLen > bestLen)) {
        bestBase = curBase;
        bestLen = curLen;
    }
    if (bestBase != -1 && bestLen < 2)
        bestBase = -1;
    for (int i = 0; i < 8; ++i) {
        if (bestBase != -1 && i >= bestBase && i < bestBase + bestLen) {
            if (i == bestBase)
                *p++ = ':';
            continue;
        }
        if (i != 0)
            *p++ = ':';
        if (i == 6 && bestBase == 0 && (bestLen == 6 || (bestLen == 5 && words[5] == 0xffff))) {
            dotted(a + 12);
            break;
        }
        p += std::sprintf(p, "%x", words[i]);
    }
    if (bestBase != -1 && bestBase + bestLen == 8)
        *p++ = ':';
    return int(p - out);
}

// --- Rows of the binary COPY -----------------------------------------------------------------

// The columns of resources/sql/audit_chain_rows.sql, in its order.
enum Column {
    kId,
    kAt,
    kDbUser,
    kClientAddr,
    kOsUser,
    kAction,
    kTargets,
    kReason,
    kTicket,
    kBefore,
    kAfter,
    kActionId,
    kOutcome,
    kPrevHash,
    kHash,
    kColumnCount
};

struct Field
{
    const char *data = nullptr;
    qint32 size = -1; // -1: NULL
};

// One entry as COPY sent it: the fields point into libpq's buffer, which the batch owns.
struct Row
{
    Field f[kColumnCount];
    qint64 id = 0;
    qint64 previousId = 0; // 0 for the first entry read
    bool linkHolds = true; // prev_hash is the stored hash of the entry before
    bool hashHolds = false; // set by a hashing thread
};

struct Batch
{
    std::vector<Row> rows;
    std::vector<char *> buffers;
    QString error; // a value that is not what the column's type sends

    Batch() { rows.reserve(kBatchRows); }
    ~Batch() { clear(); }
    Q_DISABLE_COPY(Batch)
    void clear()
    {
        for (char *b : buffers)
            PQfreemem(b);
        buffers.clear();
        rows.clear();
        error.clear();
    }
    static constexpr size_t kBatchRows = 2048;
};

Span jsonbText(const Field &f, QString *error)
{
    if (f.size < 0)
        return {};
    if (f.size < 1 || f.data[0] != 1) {
        *error = tr("a jsonb column is not in jsonb's binary format version 1");
        return { "", 0 };
    }
    return { f.data + 1, f.size - 1 };
}

Span textOf(const Field &f)
{
    return f.size < 0 ? Span() : Span { f.data, f.size };
}

// Recomputes each row's hash from its stored prev_hash and its contents (a hashing thread).
void hashBatch(Batch *batch)
{
    thread_local Sha256 sha;
    thread_local std::string canonical;
    for (Row &row : batch->rows) {
        const Field *f = row.f;
        Pieces p;
        p.id = row.id;
        char at[40];
        char uuid[40];
        char addr[64];
        if (f[kAt].size == 8) {
            const int n = formatTimestamp(be64(f[kAt].data), at);
            if (n > 0)
                p.at = { at, n };
        } else if (f[kAt].size >= 0) {
            batch->error = tr("the column at is not a timestamptz");
        }
        if (f[kActionId].size == 16)
            p.actionId = { uuid, formatUuid(f[kActionId].data, uuid) };
        else if (f[kActionId].size >= 0)
            batch->error = tr("the column action_id is not a uuid");
        if (f[kClientAddr].size >= 0) {
            const int n = formatInet(f[kClientAddr].data, f[kClientAddr].size, addr);
            if (n < 0)
                batch->error = tr("the column client_addr is not an inet");
            else
                p.clientAddr = { addr, n };
        }
        p.dbUser = textOf(f[kDbUser]);
        p.osUser = textOf(f[kOsUser]);
        p.action = textOf(f[kAction]);
        p.reason = textOf(f[kReason]);
        p.ticket = textOf(f[kTicket]);
        p.targets = jsonbText(f[kTargets], &batch->error);
        p.before = jsonbText(f[kBefore], &batch->error);
        p.after = jsonbText(f[kAfter], &batch->error);
        p.outcome = jsonbText(f[kOutcome], &batch->error);
        canonical.clear();
        appendCanonical(canonical, p);
        unsigned char digest[kHashSize];
        const Field &prev = f[kPrevHash];
        sha.hash(prev.size > 0 ? prev.data : "", size_t(std::max(prev.size, 0)), canonical.data(),
                 canonical.size(), digest);
        row.hashHolds
            = f[kHash].size == kHashSize && std::memcmp(digest, f[kHash].data, kHashSize) == 0;
    }
}

db::DbError copyError(PGconn *conn)
{
    PGresult *result = PQgetResult(conn);
    db::DbError error
        = result ? db::DbError::fromResult(result, conn) : db::DbError::fromConnection(conn);
    while (result) {
        PQclear(result);
        result = PQgetResult(conn);
    }
    return error;
}

const char kCopySignature[] = "PGCOPY\n\377\r\n";

} // namespace

// --- AuditChainProblem -----------------------------------------------------------------------

QString AuditChainProblem::message() const
{
    switch (kind) {
    case Kind::Changed:
        return tr("entry %1 was changed: its hash does not match its contents").arg(id);
    case Kind::MissingBetween:
        return tr("missing entries between id %1 and id %2: the prev_hash of entry %2 is not "
                  "the hash of entry %1 (entries were deleted)")
            .arg(previousId)
            .arg(id);
    case Kind::StartCut:
        return tr("entry %1 is the first entry but has a prev_hash: the entries before it were "
                  "deleted")
            .arg(id);
    case Kind::HeadNotReached:
        return tr("the exported head %1 was not reached: entries were deleted (tail cut)").arg(id);
    case Kind::HeadHashDiffers:
        return tr("entry %1: hash differs from the exported head").arg(id);
    case Kind::TableReplaced:
        return tr("redrive.audit_log is not the trigger-guarded table the console and audit "
                  "exports read: it was replaced, or given other triggers, rules, row-level "
                  "security or a partition that is not Redrive's");
    case Kind::ViewAltered:
        return tr("the audit view the console and exports read (redrive.audit_entry_list) is not "
                  "Redrive's definition: what it shows may differ from the table");
    case Kind::RecordedHeadDiffers:
        return tr("entry %1 is the first entry kept but its prev_hash is not the head recorded "
                  "when the entries up to %2 were detached: the recorded head or the entries "
                  "after it were changed")
            .arg(id)
            .arg(previousId);
    case Kind::ViewHidesEntries:
        return tr("the audit view the console and exports read (redrive.audit_entry_list) shows "
                  "%1 entries, the table holds %2: the view was altered")
            .arg(id)
            .arg(checkedBefore);
    }
    return {};
}

QString AuditChainReport::startText() const
{
    if (recordedHeadId == 0)
        return {};
    return QCoreApplication::translate("redrive::AuditChainReport",
                                       "verified from the head recorded on %1 at entry %2 "
                                       "(audit months up to %3 detached)")
        .arg(recordedHeadAt)
        .arg(recordedHeadId)
        .arg(recordedMonth);
}

// --- AuditChainVerifier ----------------------------------------------------------------------

AuditChainVerifier::AuditChainVerifier() = default;

void AuditChainVerifier::setExpectedHead(qint64 id, const QByteArray &hashHex)
{
    m_expectedId = id;
    m_expectedHash = QByteArray::fromHex(hashHex);
}

void AuditChainVerifier::setHashThreads(int threads)
{
    m_threads = threads;
}

void AuditChainVerifier::setProgress(Progress progress, int entries)
{
    m_progress = std::move(progress);
    m_progressEvery = std::max(1, entries);
}

db::DbExpected<qint64> AuditChainVerifier::countEntries(db::PgConnection &connection)
{
    auto rows = connection.exec(db::statementSql(db::Statement::AuditChainCount));
    if (!rows)
        return rows.error();
    return rows->bigInt(0, 0).value_or(0);
}

QByteArray AuditChainVerifier::canonicalForm(const TextEntry &e)
{
    Pieces p;
    p.id = e.id;
    p.at = spanOf(e.atUtc);
    p.dbUser = spanOf(e.dbUser);
    p.clientAddr = spanOf(e.clientAddr);
    p.osUser = spanOf(e.osUser);
    p.action = spanOf(e.action);
    p.targets = spanOf(e.targets);
    p.reason = spanOf(e.reason);
    p.ticket = spanOf(e.ticket);
    p.before = spanOf(e.before);
    p.after = spanOf(e.after);
    p.actionId = spanOf(e.actionId);
    p.outcome = spanOf(e.outcome);
    std::string out;
    appendCanonical(out, p);
    return QByteArray(out.data(), qsizetype(out.size()));
}

db::DbExpected<AuditChainReport> AuditChainVerifier::verify(db::PgConnection &connection)
{
    PGconn *conn = connection.handle();
    if (!conn)
        return db::DbError(db::ErrorKind::Connection, tr("connection is not open"));
    // One snapshot for the whole read; plain names only (pg_catalog first, no redrive.*
    // function); text columns in UTF-8, as the canonical form hashes them.
    auto begun = connection.execScript(
        "BEGIN ISOLATION LEVEL REPEATABLE READ, READ ONLY;"
        " SET LOCAL search_path = pg_catalog, pg_temp; SET LOCAL client_encoding = 'UTF8'");
    if (!begun)
        return begun.error();
    auto rollback = [&connection] {
        std::ignore = connection.execScript("ROLLBACK");
    };
    // What is read must be what everyone else reads: the table named redrive.audit_log that
    // the audit views (the console's and the export's source) are built on. Renaming the real
    // table and putting a copy or a view in its place would otherwise verify a decoy.
    // Since version 30 it is partitioned by month on `at` (docs/architecture.md "Partitions");
    // an older schema's plain table passes too.
    auto genuine = connection.exec(
        "SELECT c.relkind IN ('r', 'p') AND EXISTS ("
        "         SELECT 1 FROM pg_depend d JOIN pg_rewrite r ON r.oid = d.objid"
        "          WHERE d.classid = 'pg_rewrite'::regclass AND d.refobjid = c.oid"
        "            AND r.ev_class = (SELECT v.oid FROM pg_class v JOIN pg_namespace vn"
        "                                 ON vn.oid = v.relnamespace"
        "                              WHERE vn.nspname = 'redrive'"
        "                                AND v.relname = 'audit_entry_list'))"
        // ... with no rule, no row-level security and exactly Redrive's own triggers: any other
        // could drop or rewrite entries before they are chained, or hide rows from a reader.
        "   AND NOT c.relrowsecurity AND NOT c.relforcerowsecurity"
        "   AND NOT EXISTS (SELECT 1 FROM pg_rewrite w WHERE w.ev_class = c.oid)"
        "   AND (SELECT array_agg(t.tgname::text ORDER BY t.tgname) FROM pg_trigger t"
        "         WHERE t.tgrelid = c.oid AND NOT t.tgisinternal)"
        "       = ARRAY['audit_log_chain', 'audit_log_no_truncate', 'audit_log_no_update_delete']"
        // A plain table inherits nothing and has no children. A partitioned one is split by
        // month on `at`, and each partition is Redrive's: a plain table (no foreign table, no
        // sub-partitions, no inheritance below it) in the schema, of the same owner, with no
        // rule or row-level security, exactly the parent's two row triggers cloned plus its
        // own TRUNCATE refusal, named for the UTC month it holds and bounded by exactly that
        // month (or the default partition). A partition attached under another name or bound,
        // or stripped of a trigger, is reported.
        "   AND (c.relkind = 'r'"
        "        AND NOT EXISTS (SELECT 1 FROM pg_inherits i WHERE i.inhparent = c.oid)"
        "        OR c.relkind = 'p'"
        "        AND EXISTS (SELECT 1 FROM pg_partitioned_table pt JOIN pg_attribute a"
        "                        ON a.attrelid = pt.partrelid AND a.attnum = pt.partattrs[0]"
        "                     WHERE pt.partrelid = c.oid AND pt.partstrat = 'r'"
        "                       AND pt.partnatts = 1 AND a.attname = 'at')"
        "        AND NOT EXISTS ("
        "            SELECT 1 FROM pg_inherits i JOIN pg_class p ON p.oid = i.inhrelid"
        "             WHERE i.inhparent = c.oid"
        "               AND NOT (p.relkind = 'r' AND p.relispartition"
        "                        AND p.relnamespace = c.relnamespace AND p.relowner = c.relowner"
        "                        AND NOT p.relrowsecurity AND NOT p.relforcerowsecurity"
        "                        AND NOT EXISTS (SELECT 1 FROM pg_rewrite w"
        "                                         WHERE w.ev_class = p.oid)"
        "                        AND NOT EXISTS (SELECT 1 FROM pg_inherits s"
        "                                         WHERE s.inhparent = p.oid)"
        "                        AND (SELECT array_agg(t.tgname::text || (t.tgparentid <> 0)::text"
        "                                              ORDER BY t.tgname)"
        "                               FROM pg_trigger t"
        "                              WHERE t.tgrelid = p.oid AND NOT t.tgisinternal)"
        "                            = ARRAY['audit_log_chaintrue', 'audit_log_no_truncatefalse',"
        "                                    'audit_log_no_update_deletetrue']"
        "                        AND CASE WHEN p.relname = 'audit_log_default'"
        "                                 THEN pg_get_expr(p.relpartbound, p.oid) = 'DEFAULT'"
        "                                 WHEN p.relname ~ '^audit_log_[0-9]{4}_(0[1-9]|1[0-2])$'"
        "                                 THEN pg_get_expr(p.relpartbound, p.oid)"
        "                                      = format('FOR VALUES FROM (%L) TO (%L)',"
        "                                               to_date(right(p.relname, 7), 'YYYY_MM')"
        "                                                   ::timestamp AT TIME ZONE 'UTC',"
        "                                               (to_date(right(p.relname, 7), 'YYYY_MM')"
        "                                                + interval '1 month')"
        "                                                   AT TIME ZONE 'UTC')"
        "                                 ELSE false END)))"
        "  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace"
        " WHERE n.nspname = 'redrive' AND c.relname = 'audit_log'");
    if (!genuine) {
        rollback();
        return genuine.error();
    }
    const bool tableIsGenuine = genuine->rowCount() == 1 && genuine->boolean(0, 0).value_or(false);

    // Since version 36 the oldest months may have been detached after their export
    // (docs/audit-chain.md, "Detached months"): the chain kept then starts at the newest head
    // recorded at their end, which the first entry kept holds as its prev_hash.
    qint64 recordedId = 0;
    QByteArray recordedHash; // raw bytes
    QString recordedAt;
    QString recordedMonth;
    auto hasRecorded
        = connection.exec("SELECT to_regclass('redrive.audit_detached_month') IS NOT NULL");
    if (!hasRecorded) {
        rollback();
        return hasRecorded.error();
    }
    if (hasRecorded->boolean(0, 0).value_or(false)) {
        auto recorded = connection.exec(
            "SELECT m.last_id, encode(m.head_hash, 'hex'),"
            "       to_char(m.recorded_at AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS \"UTC\"'),"
            "       to_char(m.month, 'YYYY-MM')"
            "  FROM redrive.audit_detached_month m ORDER BY m.last_id DESC LIMIT 1");
        if (!recorded) {
            rollback();
            return recorded.error();
        }
        if (recorded->rowCount() == 1) {
            recordedId = recorded->bigInt(0, 0).value_or(0);
            recordedHash = QByteArray::fromHex(recorded->text(0, 1).toLatin1());
            recordedAt = recorded->text(0, 2);
            recordedMonth = recorded->text(0, 3);
        }
    }
    bool fromRecordedHead = false;

    const QByteArray copy = "COPY (" + db::statementSql(db::Statement::AuditChainRows)
        + "\n) TO STDOUT (FORMAT binary)";
    PGresult *started = PQexec(conn, copy.constData());
    if (PQresultStatus(started) != PGRES_COPY_OUT) {
        db::DbError error = db::DbError::fromResult(started, conn);
        PQclear(started);
        rollback();
        return error;
    }
    PQclear(started);

    const int threads = m_threads > 0 ? m_threads : std::max(1, QThread::idealThreadCount());
    QThreadPool pool;
    pool.setMaxThreadCount(threads);
    const size_t maxInFlight = size_t(threads) * 2;
    std::deque<std::pair<std::unique_ptr<Batch>, QFuture<void>>> inFlight;
    std::vector<std::unique_ptr<Batch>> spare;

    AuditChainReport report;
    report.headCompared = m_expectedId > 0;
    bool headReached = false;
    QString formatError;
    std::string lastHash; // the stored hash of the entry read last
    qint64 lastId = 0;
    qint64 classified = 0;
    qint64 nextProgress = m_progressEvery;

    auto addProblem = [&report](AuditChainProblem problem) {
        if (report.problems.size() < AuditChainReport::kMaxProblems)
            report.problems << problem;
        else
            report.truncated = true;
    };
    // In id order, once a batch is hashed: name what does not hold.
    auto classify = [&](Batch &batch) {
        if (!batch.error.isEmpty() && formatError.isEmpty())
            formatError = batch.error;
        for (const Row &row : batch.rows) {
            if (!row.hashHolds)
                addProblem({ AuditChainProblem::Kind::Changed, row.id, 0, classified });
            else if (!row.linkHolds && row.previousId == 0 && recordedId > 0)
                addProblem({ AuditChainProblem::Kind::RecordedHeadDiffers, row.id, recordedId,
                             classified });
            else if (!row.linkHolds)
                addProblem({ row.previousId == 0 ? AuditChainProblem::Kind::StartCut
                                                 : AuditChainProblem::Kind::MissingBetween,
                             row.id, row.previousId, classified });
            if (report.headCompared && row.id == m_expectedId) {
                headReached = true;
                if (row.f[kHash].size != m_expectedHash.size()
                    || std::memcmp(row.f[kHash].data, m_expectedHash.constData(),
                                   size_t(m_expectedHash.size()))
                        != 0)
                    addProblem({ AuditChainProblem::Kind::HeadHashDiffers, row.id, 0, classified });
            }
            ++classified;
        }
    };
    auto finishOldest = [&] {
        auto &[batch, future] = inFlight.front();
        future.waitForFinished();
        classify(*batch);
        batch->clear();
        spare.push_back(std::move(batch));
        inFlight.pop_front();
    };
    auto waitAll = [&] {
        while (!inFlight.empty())
            finishOldest();
    };

    std::unique_ptr<Batch> current = std::make_unique<Batch>();
    auto dispatch = [&] {
        if (current->rows.empty() && current->buffers.empty())
            return;
        Batch *raw = current.get();
        inFlight.emplace_back(std::move(current), QtConcurrent::run(&pool, hashBatch, raw));
        while (inFlight.size() >= maxInFlight)
            finishOldest();
        if (!spare.empty()) {
            current = std::move(spare.back());
            spare.pop_back();
        } else {
            current = std::make_unique<Batch>();
        }
        if (m_progress && classified >= nextProgress) {
            m_progress(classified);
            nextProgress = classified + m_progressEvery;
        }
    };

    bool first = true;
    bool trailer = false;
    bool canceled = false;
    std::optional<db::DbError> failure;
    for (;;) {
        if (m_cancel && m_cancel->load(std::memory_order_relaxed) && !canceled) {
            canceled = true;
            connection.cancelHandle().cancel();
        }
        char *buffer = nullptr;
        const int size = PQgetCopyData(conn, &buffer, 0);
        if (size == -1)
            break;
        if (size == -2) {
            failure = copyError(conn);
            break;
        }
        if (canceled || failure) {
            PQfreemem(buffer);
            continue;
        }
        current->buffers.push_back(buffer);
        const char *p = buffer;
        const char *end = buffer + size;
        if (first) {
            first = false;
            if (size < 19 || std::memcmp(p, kCopySignature, 11) != 0) {
                failure = db::DbError(db::ErrorKind::Other, tr("COPY did not send binary rows"));
                continue;
            }
            p += 15;
            p += 4 + be32(p);
        }
        while (p + 2 <= end && !failure) {
            const auto fields = qint16(be16(p));
            p += 2;
            if (fields == -1) {
                trailer = true;
                break;
            }
            if (fields != kColumnCount) {
                failure = db::DbError(
                    db::ErrorKind::Other,
                    tr("COPY sent %1 columns, not %2").arg(fields).arg(int(kColumnCount)));
                break;
            }
            Row &row = current->rows.emplace_back();
            for (Field &f : row.f) {
                if (p + 4 > end) {
                    failure = db::DbError(db::ErrorKind::Other, tr("a COPY row was cut short"));
                    break;
                }
                f.size = qint32(be32(p));
                p += 4;
                f.data = p;
                if (f.size > 0)
                    p += f.size;
                if (p > end) {
                    failure = db::DbError(db::ErrorKind::Other, tr("a COPY row was cut short"));
                    break;
                }
            }
            if (failure)
                break;
            if (row.f[kId].size != 8) {
                failure = db::DbError(db::ErrorKind::Other, tr("an entry has no id"));
                break;
            }
            row.id = be64(row.f[kId].data);
            row.previousId = lastId;
            const Field &prev = row.f[kPrevHash];
            if (lastId == 0 && prev.size >= 0 && recordedId > 0) {
                // After detached months: the first entry kept follows the recorded head.
                row.linkHolds = row.id > recordedId && prev.size == recordedHash.size()
                    && std::memcmp(prev.data, recordedHash.constData(), size_t(prev.size)) == 0;
                fromRecordedHead = row.linkHolds;
            } else if (lastId == 0)
                row.linkHolds = prev.size < 0;
            else
                row.linkHolds = prev.size >= 0 && size_t(prev.size) == lastHash.size()
                    && std::memcmp(prev.data, lastHash.data(), lastHash.size()) == 0;
            const Field &hash = row.f[kHash];
            lastHash.assign(hash.size > 0 ? hash.data : "", size_t(std::max(hash.size, 0)));
            lastId = row.id;
            ++report.checked;
        }
        if (current->rows.size() >= Batch::kBatchRows)
            dispatch();
    }
    if (!failure && !canceled)
        dispatch(); // a row cut short by a failure is never hashed
    waitAll();
    if (!failure) {
        PGresult *result = PQgetResult(conn);
        if (PQresultStatus(result) != PGRES_COMMAND_OK)
            failure = db::DbError::fromResult(result, conn);
        while (result) {
            PQclear(result);
            result = PQgetResult(conn);
        }
    } else {
        while (PGresult *result = PQgetResult(conn))
            PQclear(result);
    }
    if (canceled) {
        rollback();
        return db::DbError(db::ErrorKind::Canceled, tr("the verification was canceled"),
                           QStringLiteral("57014"));
    }
    if (failure) {
        rollback();
        return *failure;
    }
    // In the same snapshot: the view everyone reads must show exactly the entries read here.
    qint64 viewEntries = -1;
    bool viewAltered = false;
    // The view's definition as migration 4 made it, as PostgreSQL 15 prints it (compared with
    // white space collapsed; other server versions print differently and are not compared).
    static const QString kAuditViewDefinition = QStringLiteral(
        "SELECT e.id, e.at, e.db_user, host(e.client_addr) AS client_addr, e.os_user, e.action, "
        "(e.targets)::text AS targets_text, e.targets, e.reason, e.ticket, "
        "(e.before)::text AS before_text, (e.after)::text AS after_text, e.action_id, "
        "(e.outcome)::text AS outcome_text, encode(e.prev_hash, 'hex'::text) AS prev_hash, "
        "encode(e.hash, 'hex'::text) AS hash FROM redrive.audit_log e;");
    if (trailer && formatError.isEmpty() && PQserverVersion(conn) / 10000 == 15) {
        auto definition
            = connection.exec("SELECT pg_get_viewdef(v.oid) FROM pg_class v JOIN pg_namespace n"
                              "    ON n.oid = v.relnamespace"
                              " WHERE n.nspname = 'redrive' AND v.relname = 'audit_entry_list'");
        viewAltered = !definition || definition->rowCount() != 1
            || definition->text(0, 0).simplified() != kAuditViewDefinition;
    }
    if (trailer && formatError.isEmpty()) {
        auto view = connection.exec("SELECT count(*), coalesce(max(id), 0)"
                                    "  FROM redrive.audit_entry_list");
        if (view && view->bigInt(0, 0).value_or(-1) == report.checked
            && view->bigInt(0, 1).value_or(-1) == lastId)
            viewEntries = report.checked;
        else if (view)
            viewEntries = view->bigInt(0, 0).value_or(-1);
    }
    std::ignore = connection.execScript("COMMIT");
    if (!trailer)
        return db::DbError(db::ErrorKind::Other, tr("COPY ended without its trailer"));
    if (!formatError.isEmpty())
        return db::DbError(db::ErrorKind::Other, formatError);
    if (report.headCompared && !headReached)
        addProblem({ AuditChainProblem::Kind::HeadNotReached, m_expectedId, 0, report.checked });
    // What the reader looks at comes first: a replaced table, then an altered view.
    QList<AuditChainProblem> front;
    if (!tableIsGenuine)
        front.append({ AuditChainProblem::Kind::TableReplaced, 0, 0, 0 });
    if (viewAltered)
        front.append({ AuditChainProblem::Kind::ViewAltered, 0, 0, 0 });
    if (viewEntries != report.checked)
        front.append({ AuditChainProblem::Kind::ViewHidesEntries, viewEntries, 0, report.checked });
    report.problems = front + report.problems;
    if (fromRecordedHead) {
        report.recordedHeadId = recordedId;
        report.recordedHeadAt = recordedAt;
        report.recordedMonth = recordedMonth;
    }
    report.headId = lastId;
    report.headHash = QByteArray(lastHash.data(), qsizetype(lastHash.size())).toHex();
    if (m_progress)
        m_progress(report.checked);
    return report;
}

// --- redrive verify-audit --------------------------------------------------------------------

int runVerifyAuditCommand(const db::ConnectionSettings &settings,
                          const AuditVerifyArguments &arguments)
{
    using namespace cli;
    const char *me = "redrive verify-audit";
    AuditChainVerifier verifier;
    if (!arguments.headId.isEmpty() || !arguments.headHash.isEmpty()) {
        bool ok = false;
        const qint64 id = arguments.headId.toLongLong(&ok);
        const QByteArray hex = arguments.headHash.trimmed().toLatin1().toLower();
        static const QByteArray kHexDigits = "0123456789abcdef";
        bool hexOk = hex.size() == 2 * kHashSize;
        for (char c : hex)
            hexOk = hexOk && kHexDigits.contains(c);
        if (!ok || id <= 0 || !hexOk) {
            std::fprintf(stderr,
                         "%s: --head-id takes an entry id and --head-hash its SHA-256 in hex "
                         "(64 digits); give both\n",
                         me);
            return kExitUsage;
        }
        verifier.setExpectedHead(id, hex);
    }
    auto connection = db::PgConnection::open(settings);
    if (!connection)
        return reportCannotConnect(me, connection.error());
    auto report = verifier.verify(connection.value());
    if (!report)
        return reportFailure(me, report.error());
    if (report->headId > 0)
        std::printf("chain head: id %lld hash %s (%lld entries)\n",
                    static_cast<long long>(report->headId), report->headHash.constData(),
                    static_cast<long long>(report->checked));
    else
        std::printf("chain head: none (the audit log is empty)\n");
    if (report->recordedHeadId > 0)
        std::printf("%s\n", qPrintable(report->startText()));
    if (!report->holds()) {
        const AuditChainProblem &first = report->first();
        std::printf("BROKEN at entry %lld: %s (%lld entries verified before it)\n",
                    static_cast<long long>(first.id), qPrintable(first.message()),
                    static_cast<long long>(first.checkedBefore));
        for (qsizetype i = 1; i < report->problems.size(); ++i)
            std::printf("also broken at entry %lld: %s\n",
                        static_cast<long long>(report->problems.at(i).id),
                        qPrintable(report->problems.at(i).message()));
        if (report->truncated)
            std::printf("(more problems were found; the first %d are listed)\n",
                        AuditChainReport::kMaxProblems);
        return kExitFailed;
    }
    std::printf("audit chain OK: %lld entries verified in the client%s\n",
                static_cast<long long>(report->checked),
                report->headCompared ? ", and it matches the exported head" : "");
    return kExitOk;
}

} // namespace redrive
