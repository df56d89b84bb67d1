// SPDX-License-Identifier: GPL-3.0-or-later
#include "models/worker/demo_world.h"

#include "models/db/pg_connection.h"
#include "models/worker/job_runner.h"
#include "models/worker/worker_clock.h"

#include <QRandomGenerator>
#include <QStringList>
#include <cmath>

namespace redrive::worker {

using db::DbError;
using db::DbExpected;
using db::ErrorKind;
using db::PgConnection;
using db::QueryParams;

namespace {

const QStringList kFirstNames = {
    QStringLiteral("Ada"),   QStringLiteral("Björn"), QStringLiteral("Chen"),
    QStringLiteral("Dara"),  QStringLiteral("Elif"),  QStringLiteral("Femi"),
    QStringLiteral("Greta"), QStringLiteral("Hiro"),  QStringLiteral("Inês"),
    QStringLiteral("Jonas"), QStringLiteral("Kemal"), QStringLiteral("Lena"),
    QStringLiteral("Mateo"), QStringLiteral("Noor"),  QStringLiteral("Olu"),
    QStringLiteral("Priya"),
};
const QStringList kLastNames = {
    QStringLiteral("Fischer"),  QStringLiteral("García"), QStringLiteral("Ivanova"),
    QStringLiteral("Kowalski"), QStringLiteral("Mensah"), QStringLiteral("Nakamura"),
    QStringLiteral("O'Brien"),  QStringLiteral("Rossi"),  QStringLiteral("Singh"),
    QStringLiteral("Svensson"),
};

QString ts(const QDateTime &t)
{
    return t.toUTC().toString(Qt::ISODateWithMs);
}

} // namespace

FaultInjector DemoWorldGenerator::referenceFaults(quint64 seed, const QDateTime &start)
{
    FaultInjector faults(seed);
    FaultRates provider;
    provider.serverError = 0.06;
    provider.rateLimited = 0.03;
    provider.connectionRefused = 0.02;
    provider.timeoutBeforeSend = 0.02;
    provider.timeoutAfterEffect = 0.015;
    provider.crashAfterEffect = 0.004;
    provider.declined = 0.04;
    provider.validationError = 0.008;
    provider.latencyMinMs = 80;
    provider.latencyMaxMs = 2500;
    provider.retryAfterMs = 20000;
    faults.setRates(QStringLiteral("provider"), provider);

    FaultRates mail;
    mail.serverError = 0.05;
    mail.timeoutBeforeSend = 0.02;
    mail.timeoutAfterEffect = 0.02;
    mail.validationError = 0.01;
    mail.latencyMinMs = 40;
    mail.latencyMaxMs = 1200;
    faults.setRates(QStringLiteral("mail"), mail);

    FaultRates webhook;
    webhook.validationError = 0.01;
    webhook.serializationFailure = 0.03;
    webhook.latencyMinMs = 5;
    webhook.latencyMaxMs = 200;
    faults.setRates(QStringLiteral("webhook"), webhook);

    FaultRates ledger;
    ledger.serverError = 0.12;
    ledger.latencyMinMs = 10;
    ledger.latencyMaxMs = 300;
    faults.setRates(QStringLiteral("ledger"), ledger);

    // A provider incident nine hours in: 50 minutes of 503 for every charge.
    faults.addOutage(QStringLiteral("provider"), start.addSecs(9 * 3600),
                     start.addSecs(9 * 3600 + 50 * 60));
    return faults;
}

DemoWorldGenerator::DemoWorldGenerator(PgConnection &connection, DemoOptions options)
    : m_connection(connection)
    , m_options(options)
{ }

DbExpected<int> DemoWorldGenerator::generate(const Progress &progress)
{
    auto say = [&](const QString &line) {
        if (progress)
            progress(line);
    };
    auto existing = m_connection.exec("SELECT count(*) FROM redrive.job");
    if (!existing)
        return existing.error();
    if (existing->bigInt(0, 0).value_or(0) > 0)
        return DbError(ErrorKind::Other,
                       QStringLiteral("this database already holds jobs; the demo world needs a "
                                      "freshly migrated database"));

    auto nowResult = m_connection.exec("SELECT date_trunc('second', clock_timestamp())");
    if (!nowResult)
        return nowResult.error();
    const QDateTime end = nowResult->timestamp(0, 0);
    const QDateTime start = end.addSecs(-qint64(m_options.hours) * 3600);
    const qint64 spanMs = start.msecsTo(end);
    QRandomGenerator rng(quint32(m_options.seed));

    // Orders and payments, arriving over the day with three bursts (a sale, a newsletter, a
    // retry storm on the client side).
    say(QStringLiteral("creating %1 orders and payments").arg(m_options.orders));
    QStringList orderIds, customers, emails, currencies, created, paymentIds, keys;
    QList<qint64> amounts;
    const double bursts[3] = { 0.18, 0.47, 0.81 };
    for (int i = 0; i < m_options.orders; ++i) {
        double at = rng.generateDouble();
        if (rng.bounded(100) < 30) {
            const double centre = bursts[rng.bounded(3)];
            at = std::clamp(centre + (rng.generateDouble() - 0.5) * 0.02, 0.0, 0.97);
        }
        at = std::min(at, 0.97); // leave the last stretch for retries to play out
        const QDateTime when = start.addMSecs(qint64(at * double(spanMs)));
        const QString first = kFirstNames[rng.bounded(int(kFirstNames.size()))];
        const QString last = kLastNames[rng.bounded(int(kLastNames.size()))];
        orderIds << QStringLiteral("ord_%1").arg(100000 + i);
        paymentIds << QStringLiteral("pay_%1").arg(500000 + i);
        keys << QStringLiteral("charge:pay_%1").arg(500000 + i);
        customers << first + QLatin1Char(' ') + last;
        emails << QStringLiteral("%1.%2@example.com")
                      .arg(first.toLower(), last.toLower().remove(QLatin1Char('\'')));
        // Mostly two-decimal currencies, and some yen (no decimals) and Kuwaiti dinar (three),
        // so the money views show amounts in every ISO 4217 exponent Redrive meets.
        const int roll = rng.bounded(100);
        currencies << (roll < 78       ? QStringLiteral("USD")
                           : roll < 88 ? QStringLiteral("EUR")
                           : roll < 93 ? QStringLiteral("GBP")
                           : roll < 97 ? QStringLiteral("JPY")
                                       : QStringLiteral("KWD"));
        amounts << qint64(std::exp(6.5 + rng.generateDouble() * 3.8)) + 100;
        created << ts(when);
    }
    auto orders = m_connection.exec(
        "INSERT INTO sim.ledger_order (id, customer, email, amount_minor, currency, created_at)"
        " SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::bigint[], $5::text[],"
        "                      $6::text[]::timestamptz[])",
        QueryParams()
            .addTextArray(orderIds)
            .addTextArray(customers)
            .addTextArray(emails)
            .addBigIntArray(amounts)
            .addTextArray(currencies)
            .addTextArray(created));
    if (!orders)
        return orders.error();
    auto payments = m_connection.exec(
        "INSERT INTO sim.ledger_payment (id, order_id, amount_minor, currency, idempotency_key,"
        "                                created_at, updated_at)"
        " SELECT p, o, a, c, k, t::timestamptz, t::timestamptz"
        "   FROM unnest($1::text[], $2::text[], $3::bigint[], $4::text[], $5::text[],"
        "               $6::text[]) AS u(p, o, a, c, k, t)",
        QueryParams()
            .addTextArray(paymentIds)
            .addTextArray(orderIds)
            .addBigIntArray(amounts)
            .addTextArray(currencies)
            .addTextArray(keys)
            .addTextArray(created));
    if (!payments)
        return payments.error();

    // One charge job per payment; about 1 % of them are charged again by a buggy client with
    // the same key and another amount (an idempotency-key reuse).
    auto charges = m_connection.exec(
        "SELECT count(redrive.enqueue_job_received('payments', 'charge_card',"
        "         json_build_object('payment_id', p.id, 'order_id', p.order_id,"
        "                            'amount_minor', p.amount_minor, 'currency', p.currency,"
        "                            'customer', o.customer)::text,"
        "         p.idempotency_key, p.id, NULL, p.created_at, 8, p.created_at))"
        "  FROM sim.ledger_payment p JOIN sim.ledger_order o ON o.id = p.order_id");
    if (!charges)
        return charges.error();
    QStringList reusedPayments;
    QStringList reusedAt;
    for (int i = 0; i < m_options.orders; ++i) {
        if (rng.bounded(100) == 0) {
            reusedPayments << paymentIds[i];
            reusedAt << ts(QDateTime::fromString(created[i], Qt::ISODateWithMs)
                               .addSecs(600 + rng.bounded(3000)));
        }
    }
    auto reused = m_connection.exec(
        "SELECT count(redrive.enqueue_job_received('payments', 'charge_card',"
        "         json_build_object('payment_id', p.id, 'order_id', p.order_id,"
        "                            'amount_minor', p.amount_minor + 100, 'currency', p.currency,"
        "                            'customer', o.customer, 'client_retry', true)::text,"
        "         p.idempotency_key, p.id, NULL, u.t::timestamptz, 8, u.t::timestamptz))"
        "  FROM unnest($1::text[], $2::text[]) AS u(id, t)"
        "  JOIN sim.ledger_payment p ON p.id = u.id JOIN sim.ledger_order o ON o.id = p.order_id",
        QueryParams().addTextArray(reusedPayments).addTextArray(reusedAt));
    if (!reused)
        return reused.error();

    // Ledger sync batches every hour, and some webhook events of a type we do not know.
    auto batches = m_connection.exec(
        "SELECT count(redrive.enqueue_job_received('ledger', 'sync_ledger',"
        "         json_build_object('batch_id', 'batch_' || to_char(h, 'YYYYMMDD_HH24'),"
        "                            'items', (SELECT json_agg(json_build_object("
        "                                          'payment_id', id, 'amount_minor', amount_minor)"
        "                                          ORDER BY id)"
        "                                        FROM (SELECT id, amount_minor"
        "                                                FROM sim.ledger_payment"
        "                                               WHERE created_at < h"
        "                                               ORDER BY created_at DESC, id LIMIT 20) "
        "x))::text,"
        "         'sync:' || to_char(h, 'YYYYMMDD_HH24'), NULL, NULL, h, 6, h))"
        "  FROM generate_series($1::timestamptz + interval '1 hour', $2::timestamptz,"
        "                       interval '1 hour') AS h",
        QueryParams().addTimestamp(start).addTimestamp(end.addSecs(-1800)));
    if (!batches)
        return batches.error();
    QStringList disputes, disputeAt;
    for (int i = 0; i < m_options.orders / 80; ++i) {
        const int p = rng.bounded(m_options.orders);
        disputes << paymentIds[p];
        disputeAt << ts(
            QDateTime::fromString(created[p], Qt::ISODateWithMs).addSecs(3600 + rng.bounded(7200)));
    }
    // Every producer enqueues the payload's text as it wrote it (enqueue_job_received, the json
    // type: member order and duplicate keys kept, docs/domain.md#payloads-are-shown-as-they-are).
    // The provider's dispute events, as it sends them, repeat "reason" (old and new field) and
    // carry its 64-bit network id, beyond what a double holds exactly.
    auto unknownEvents = m_connection.exec(
        "SELECT count(redrive.enqueue_job_received('webhooks', 'process_webhook',"
        "         json_build_object('event_id', 'evt_' || u.id || '_dispute', 'type',"
        "                            'charge.dispute.created', 'payment_id', u.id, 'seq', 3,"
        "                            'order_id', p.order_id, 'customer', o.customer,"
        "                           'reason', 'fraudulent', 'reason', 'general',"
        "                           'network_id', 9007199254740993)::text,"
        "         'evt_' || u.id || '_dispute', u.id, 3, u.t::timestamptz, 8, u.t::timestamptz))"
        "  FROM unnest($1::text[], $2::text[]) AS u(id, t)"
        "  JOIN sim.ledger_payment p ON p.id = u.id JOIN sim.ledger_order o ON o.id = p.order_id"
        " WHERE u.t::timestamptz < $3",
        QueryParams().addTextArray(disputes).addTextArray(disputeAt).addTimestamp(end));
    if (!unknownEvents)
        return unknownEvents.error();

    // Live through the day in virtual time.
    FaultInjector faults = referenceFaults(m_options.seed, start);
    WorkerClock clock = WorkerClock::simulated(start);
    WorkerConfig config = WorkerConfig::referenceDefaults(QStringLiteral("worker-1"));
    config.seed = m_options.seed;
    config.leaseMs = 60000;
    config.keyLeaseMs = 60000;
    JobRunner runner(m_connection, config, &faults, &clock);

    // Two hours in which the provider ignores idempotency keys (a misconfigured deploy on their
    // side): ambiguous timeouts retried then become double charges.
    const QDateTime keysOffFrom = start.addSecs(qint64(m_options.hours) * 3600 * 15 / 24);
    const QDateTime keysOffUntil = keysOffFrom.addSecs(2 * 3600);
    bool keysOff = false;
    QDateTime lastReclaim = start;
    QDateTime lastReconciliation = start;
    int attempts = 0;
    int lastReportedHour = -1;
    say(QStringLiteral("running the reference worker through %1 hours of virtual time")
            .arg(m_options.hours));
    while (true) {
        auto next = runner.nextDueAt();
        if (!next)
            return next.error();
        if (!next->has_value() || **next > end)
            break;
        clock.advanceTo(**next);
        const QDateTime now = clock.now();
        const bool wantKeysOff = now >= keysOffFrom && now < keysOffUntil;
        if (wantKeysOff != keysOff) {
            keysOff = wantKeysOff;
            auto set = m_connection.exec("UPDATE sim.settings SET provider_honours_keys = $1",
                                         QueryParams().addBool(!keysOff));
            if (!set)
                return set.error();
        }
        if (lastReclaim.secsTo(now) >= 60) {
            auto reclaimed = runner.reclaimExpiredLeases();
            if (!reclaimed)
                return reclaimed.error();
            lastReclaim = now;
        }
        if (lastReconciliation.secsTo(now) >= 6 * 3600) {
            auto run = m_connection.exec("SELECT sim.run_reconciliation($1)",
                                         QueryParams().addTimestamp(now));
            if (!run)
                return run.error();
            lastReconciliation = now;
        }
        auto batch = runner.runDueBatch();
        if (!batch)
            return batch.error();
        attempts += int(batch->size());
        const int hour = int(start.secsTo(now) / 3600);
        if (hour != lastReportedHour && hour % 4 == 0) {
            lastReportedHour = hour;
            say(QStringLiteral("  hour %1 of %2: %3 attempts so far")
                    .arg(hour)
                    .arg(m_options.hours)
                    .arg(attempts));
        }
    }
    if (keysOff) {
        auto set = m_connection.exec("UPDATE sim.settings SET provider_honours_keys = true");
        if (!set)
            return set.error();
    }

    // A worker that died a few minutes ago, in the middle of charging: its jobs hold expired
    // leases and their keys are stuck in processing. The side effect happened for each.
    say(QStringLiteral("a worker dies mid-charge; anomalies appear at the provider"));
    {
        clock.advanceTo(end.addSecs(-8 * 60));
        QStringList late;
        for (int i = 0; i < 4; ++i)
            late << QStringLiteral("pay_late_%1").arg(i);
        auto lateJobs = m_connection.exec(
            "WITH o AS (INSERT INTO sim.ledger_order (id, customer, email, amount_minor, currency,"
            "                                         created_at)"
            "           SELECT 'ord_' || u.id, 'Late Customer ' || u.n, 'late' || u.n ||"
            "                  '@example.com', 1999 + u.n * 1000, 'USD', $2"
            "             FROM unnest($1::text[]) WITH ORDINALITY AS u(id, n) RETURNING *),"
            " p AS (INSERT INTO sim.ledger_payment (id, order_id, amount_minor, currency,"
            "                                       idempotency_key, created_at, updated_at)"
            "       SELECT substr(o.id, 5), o.id, o.amount_minor, o.currency,"
            "              'charge:' || substr(o.id, 5), $2, $2 FROM o RETURNING *)"
            "SELECT redrive.enqueue_job_received('payments', 'charge_card',"
            "         json_build_object('payment_id', p.id, 'order_id', p.order_id,"
            "                            'amount_minor', p.amount_minor, 'currency', p.currency,"
            "                            'customer', o.customer)::text,"
            "         p.idempotency_key, p.id, NULL, $2, 8, $2)"
            "  FROM p JOIN o ON o.id = p.order_id ORDER BY p.id",
            QueryParams().addTextArray(late).addTimestamp(clock.now()));
        if (!lateJobs)
            return lateJobs.error();
        for (int row = 0; row < lateJobs->rowCount(); ++row)
            faults.force(QStringLiteral("provider"), lateJobs->bigInt(row, 0).value_or(0), 1,
                         FaultKind::CrashAfterEffect);
        WorkerConfig dying = config;
        dying.workerId = QStringLiteral("worker-3");
        JobRunner doomed(m_connection, dying, &faults, &clock);
        auto ran = doomed.runDueBatch();
        if (!ran)
            return ran.error();
    }

    // Provider-side anomalies a reconciliation must find: refunds made in the provider's
    // dashboard, partial captures, a currency mix-up, and charge ids our ledger made up.
    auto anomalies = m_connection.exec(
        "WITH picked AS (SELECT c.id, row_number() OVER (ORDER BY md5(c.id || $1::text)) AS n"
        "                  FROM sim.provider_charge c"
        "                  JOIN sim.ledger_payment p ON p.provider_charge_id = c.id"
        "                 WHERE c.status = 'succeeded' AND p.status = 'succeeded'),"
        " refunded AS (UPDATE sim.provider_charge c SET status = 'refunded',"
        "                     refunded_minor = c.amount_minor"
        "                FROM picked WHERE picked.id = c.id AND picked.n <= 6 RETURNING 1),"
        " partial AS (UPDATE sim.provider_charge c SET amount_minor = c.amount_minor - 250"
        "               FROM picked WHERE picked.id = c.id AND picked.n BETWEEN 7 AND 11 RETURNING "
        "1),"
        " currency AS (UPDATE sim.provider_charge c SET currency = 'EUR'"
        "                FROM picked WHERE picked.id = c.id AND picked.n BETWEEN 12 AND 14"
        "                 AND c.currency <> 'EUR' RETURNING 1),"
        " invented AS (UPDATE sim.ledger_payment p SET provider_charge_id = 'ch_test_' || p.id"
        "                WHERE p.id IN (SELECT id FROM sim.ledger_payment WHERE status = 'failed'"
        "                                  OR status = 'pending' ORDER BY md5(id || $1::text)"
        "                                  LIMIT 3) RETURNING 1)"
        "SELECT (SELECT count(*) FROM refunded) + (SELECT count(*) FROM partial)"
        "     + (SELECT count(*) FROM currency) + (SELECT count(*) FROM invented)",
        QueryParams().addText(QString::number(m_options.seed)));
    if (!anomalies)
        return anomalies.error();
    // In yen and in Kuwaiti dinar: a double charge (the provider charged a second time, 90 s
    // later) and an overcharge (the provider took more than our ledger says), on payments no
    // anomaly above touched.
    auto moneyAnomalies = m_connection.exec(
        // The double charge is one under the approval threshold when there is one, so that
        // its refund (requested below) is carried out without a second person.
        "WITH clean AS (SELECT c.*, row_number() OVER ("
        "                   PARTITION BY c.currency"
        "                   ORDER BY c.amount_minor < redrive.approval_threshold_minor(c.currency)"
        "                            DESC, md5(c.id || $1::text)) AS n"
        "                 FROM sim.provider_charge c"
        "                 JOIN sim.ledger_payment p ON p.provider_charge_id = c.id"
        "                WHERE c.currency IN ('JPY', 'KWD') AND c.status = 'succeeded'"
        "                  AND p.status = 'succeeded' AND c.amount_minor = p.amount_minor"
        "                  AND c.currency = p.currency"
        "                  AND (SELECT count(*) FROM sim.provider_charge o"
        "                        WHERE o.payment_ref = c.payment_ref) = 1),"
        " doubled AS (INSERT INTO sim.provider_charge (id, idempotency_key, payment_ref,"
        "                                             amount_minor, currency, created_at)"
        "             SELECT 'ch_dup_' || substr(md5(clean.id), 1, 16), clean.idempotency_key,"
        "                    clean.payment_ref, clean.amount_minor, clean.currency,"
        "                    clean.created_at + interval '90 seconds'"
        "               FROM clean WHERE clean.n = 1 RETURNING 1),"
        " overcharged AS (UPDATE sim.provider_charge c"
        "                    SET amount_minor = c.amount_minor"
        "                        + CASE c.currency WHEN 'JPY' THEN 500 ELSE 1250 END"
        "                   FROM clean WHERE clean.id = c.id AND clean.n = 2 RETURNING 1)"
        "SELECT (SELECT count(*) FROM doubled) + (SELECT count(*) FROM overcharged)",
        QueryParams().addText(QString::number(m_options.seed)));
    if (!moneyAnomalies)
        return moneyAnomalies.error();
    auto finalRun
        = m_connection.exec("SELECT sim.run_reconciliation($1)", QueryParams().addTimestamp(end));
    if (!finalRun)
        return finalRun.error();
    // What operators already did: a requeue of part of the outage group (the worker runs it),
    // resolutions of declined cards, and refunds for charges whose key was reused. These go
    // through the same audited action functions as the console's (the demo connection holds
    // every Redrive role), so the audit log is real too.
    say(QStringLiteral("operators requeue, resolve and compensate some dead letters"));
    auto actions = m_connection.execScript(R"sql(
        SELECT redrive.requeue_dead_letters(
                   gen_random_uuid(),
                   (SELECT jsonb_agg(jsonb_build_object('id', id, 'version', version) ORDER BY id)
                      FROM (SELECT id, version FROM redrive.dead_letter
                             WHERE status = 'open' AND error_code = 'provider_unavailable'
                             ORDER BY id LIMIT 12) x),
                   true, 'Provider incident INC-2041 is over; retrying the charges it failed',
                   'INC-2041', 'demo');
        SELECT redrive.resolve_dead_letters(
                   gen_random_uuid(),
                   (SELECT jsonb_agg(jsonb_build_object('id', id, 'version', version) ORDER BY id)
                      FROM (SELECT id, version FROM redrive.dead_letter
                             WHERE status = 'open' AND error_code = 'card_declined'
                             ORDER BY id LIMIT 8) x),
                   'not_needed', 'Customer paid with another card', 'Declined cards, paid again',
                   'SUP-311', 'demo');
        SELECT redrive.request_compensation(gen_random_uuid(), 'dead_letter', d.id, d.version,
                                            'refund', least(p.charged_minor - p.refunded_minor, 5000),
                                            'Client retried the order with a changed amount; refund the difference',
                                            'SUP-' || d.id, 'demo')
          FROM (SELECT dl.id, dl.version, j.entity_id FROM redrive.dead_letter dl
                  JOIN redrive.job j ON j.id = dl.job_id
                 WHERE dl.status = 'open' AND dl.error_code = 'idempotency_key_reuse'
                 ORDER BY dl.id LIMIT 3) d
          JOIN redrive.payment_list p ON p.payment_ref = d.entity_id
         WHERE p.charged_minor > p.refunded_minor;
        -- A refund from a double charge in dinar, requested from the mismatch itself: it
        -- defaults to the duplicate charge (docs/domain.md "Money").
        SELECT redrive.request_mismatch_compensation(
                   gen_random_uuid(), m.id, m.version, NULL,
                   'Customer was charged twice; refund the second charge', 'SUP-' || m.id, 'demo')
          FROM (SELECT mm.id, mm.version FROM redrive.mismatch_charge_list x
                  JOIN redrive.reconciliation_mismatch mm ON mm.id = x.mismatch_id
                 WHERE x.kind = 'duplicate_external' AND x.status = 'open'
                   AND x.other_currency = 'KWD' AND x.suggested_minor > 0
                   AND x.suggested_minor < redrive.approval_threshold_minor('KWD')
                   AND NOT EXISTS (SELECT 1 FROM redrive.compensation_request c
                                    WHERE c.payment_ref = mm.payment_ref
                                      AND c.status IN ('pending_approval', 'approved',
                                                       'executing'))
                 ORDER BY mm.id LIMIT 1) m;)sql");
    if (!actions)
        return actions.error();
    // The worker relays the outbox and runs the requeued jobs, at the server's time now, and
    // stays at that instant: the server caps a worker's "now" at its own clock (a minute ahead
    // at most) and compares leases with it, so a virtual clock running ahead of the server's
    // would make what runs here depend on how fast this machine is, and the same seed give
    // another world. Retries that fall due later are left to `redrive-worker run`.
    auto serverNow = m_connection.exec("SELECT clock_timestamp()");
    if (!serverNow)
        return serverNow.error();
    clock.advanceTo(serverNow->timestamp(0, 0));
    // Only what the operators requeued runs here. Retries of the day that fall due between its
    // end and the server's now are set aside meanwhile: how many of them there are depends on how
    // long this build took (a loaded machine takes minutes longer), never on the seed.
    auto parked = m_connection.exec("UPDATE redrive.job SET run_at = run_at + interval '1000 years'"
                                    " WHERE state = 'queued' AND run_at > $1 RETURNING id",
                                    QueryParams().addTimestamp(end));
    if (!parked)
        return parked.error();
    QList<qint64> parkedIds;
    for (int row = 0; row < parked->rowCount(); ++row)
        parkedIds.append(parked->bigInt(row, 0).value_or(0));
    for (int round = 0; round < 20; ++round) {
        auto relayed = runner.relayOutbox();
        if (!relayed)
            return relayed.error();
        auto batch = runner.runDueBatch();
        if (!batch)
            return batch.error();
        attempts += int(batch->size());
        if (*relayed == 0 && batch->isEmpty())
            break;
    }
    auto unparked = m_connection.exec(
        "UPDATE redrive.job SET run_at = run_at - interval '1000 years' WHERE id = ANY ($1)",
        QueryParams().addBigIntArray(parkedIds));
    if (!unparked)
        return unparked.error();
    say(QStringLiteral("done: %1 attempts").arg(attempts));
    return attempts;
}

DbExpected<QList<QPair<QString, qint64>>> worldCounts(PgConnection &connection)
{
    auto r = connection.exec(R"sql(
        SELECT k, n FROM (
          SELECT 'table redrive.job' AS k, count(*) AS n FROM redrive.job
          UNION ALL SELECT 'table redrive.attempt', count(*) FROM redrive.attempt
          UNION ALL SELECT 'table redrive.dead_letter', count(*) FROM redrive.dead_letter
          UNION ALL SELECT 'table redrive.failure_group', count(*) FROM redrive.failure_group
          UNION ALL SELECT 'table redrive.idempotency_key', count(*) FROM redrive.idempotency_key
          UNION ALL SELECT 'table redrive.outbox', count(*) FROM redrive.outbox
          UNION ALL SELECT 'table redrive.reconciliation_run', count(*) FROM redrive.reconciliation_run
          UNION ALL SELECT 'table redrive.reconciliation_mismatch', count(*) FROM redrive.reconciliation_mismatch
          UNION ALL SELECT 'table sim.ledger_payment', count(*) FROM sim.ledger_payment
          UNION ALL SELECT 'table sim.provider_charge', count(*) FROM sim.provider_charge
          UNION ALL SELECT 'table sim.provider_refund', count(*) FROM sim.provider_refund
          UNION ALL SELECT 'table sim.mail_send', count(*) FROM sim.mail_send
          UNION ALL SELECT 'table sim.webhook_effect', count(*) FROM sim.webhook_effect
          UNION ALL SELECT 'table sim.ledger_sync_item', count(*) FROM sim.ledger_sync_item
          UNION ALL SELECT 'job state ' || state, count(*) FROM redrive.job GROUP BY state
          UNION ALL SELECT 'attempt outcome ' || outcome, count(*) FROM redrive.attempt GROUP BY outcome
          UNION ALL SELECT 'dead letter ' || status, count(*) FROM redrive.dead_letter GROUP BY status
          UNION ALL SELECT 'key state ' || state, count(*) FROM redrive.idempotency_key GROUP BY state
          UNION ALL SELECT 'stuck keys', count(*) FROM redrive.idempotency_key
                     WHERE state = 'processing' AND locked_until < clock_timestamp()
          UNION ALL SELECT 'mismatch ' || kind, count(*) FROM redrive.reconciliation_mismatch GROUP BY kind
          UNION ALL SELECT 'mismatch ' || kind || ' in ' || external_currency, count(*)
                      FROM redrive.reconciliation_mismatch
                     WHERE external_currency IN ('JPY', 'KWD')
                       AND kind IN ('duplicate_external', 'amount_mismatch')
                     GROUP BY kind, external_currency
          UNION ALL SELECT 'payments in ' || currency, count(*) FROM sim.ledger_payment
                     GROUP BY currency
          UNION ALL SELECT 'compensation from a mismatch ' || status, count(*)
                      FROM redrive.compensation_request WHERE target_type = 'mismatch'
                     GROUP BY status
          UNION ALL SELECT 'group ' || g.kind || ' / ' || coalesce(g.error_class, '-') || ' / '
                           || coalesce(g.error_code, '-'), count(d.id)
                      FROM redrive.failure_group g JOIN redrive.dead_letter d USING (fingerprint)
                     GROUP BY g.kind, g.error_class, g.error_code
        ) c ORDER BY k)sql");
    if (!r)
        return r.error();
    QList<QPair<QString, qint64>> out;
    for (int row = 0; row < r->rowCount(); ++row)
        out.append({ r->text(row, 0), r->bigInt(row, 1).value_or(0) });
    return out;
}

} // namespace redrive::worker
