#!/usr/bin/env node
// Runs pg-boss (10.4 or 12.x) or graphile-worker (0.17 or 0.18) for real against one database, for
// Redrive's source adapter tests; which version is the one installed next to this file
// (tests/support/sources_node.sh installs one folder per version). PGBOSS_SCHEMA and
// GRAPHILE_SCHEMA set the libraries' `schema` option (default pgboss, graphile_worker). The connection comes from PGHOST, PGPORT, PGUSER, PGDATABASE (a Unix
// socket directory in PGHOST works), as node-postgres reads them.
//
//   node workload.js <pgboss|graphile> init       install the library's own schema, then stop
//   node workload.js <pgboss|graphile> fail       enqueue the scenario below and run the
//                                                 library's worker until every job settled
//                                                 (completed, or failed for good)
//   node workload.js <pgboss|graphile> work ID..  run the library's worker until the given jobs
//                                                 settled again (after a requeue from Redrive)
//   node workload.js graphile hold N [MAX]        enqueue N jobs (max_attempts MAX, default 3)
//                                                 whose first attempt never
//                                                 returns, print "HOLDING id,id" once a worker
//                                                 holds them all, and wait to be SIGKILLed
//   node workload.js pgboss redrive [DEST]        pg-boss 12: a refund_payment job fails for good
//                                                 into its dead-letter queue, pg-boss's own
//                                                 redrive() moves the copy back (with DEST: into
//                                                 queue DEST instead, its `destination` option),
//                                                 and the new job succeeds; prints {failed,
//                                                 redriven, payload} (payload: the job's data)
//
// Scenario (queue for pg-boss = task for graphile-worker), every handler throwing a real Error
// with its stack:
//   charge_card      x2  a permanent error ("card declined"), every attempt: fails for good
//   send_receipt     x1  times out on every attempt (pg-boss: the handler outlives
//                        expireInSeconds; graphile-worker: the task's own timeout): fails
//   sync_inventory   x2  ECONNRESET on the first attempt, then succeeds: completes
//   process_webhook  x1  fails while the attempt number is within the retry budget, succeeds on
//                        the first attempt after it (only a requeue gets there)
//   notify_partner   x1  fails on every attempt, also after a requeue; pg-boss: its queue has a
//                        dead-letter queue, which receives a copy when it fails for good
// Exit codes: 0 settled, 2 timed out, 1 any other error. Progress goes to stderr, the result as
// one JSON line to stdout.
'use strict';

const { Pool } = require('pg');

const [, , library, mode, ...rest] = process.argv;
const timeoutMs = Number(process.env.WORKLOAD_TIMEOUT_MS || 90000);
const log = (...a) => console.error(`[workload ${library} ${mode}]`, ...a);

// The libraries' schemas: their `schema` options, default pgboss and graphile_worker.
const PB = process.env.PGBOSS_SCHEMA || 'pgboss';
const GW = process.env.GRAPHILE_SCHEMA || 'graphile_worker';

const QUEUES = ['charge_card', 'send_receipt', 'sync_inventory', 'process_webhook',
  'notify_partner'];

class CardDeclinedError extends Error {
  constructor (message) { super(message); this.name = 'CardDeclinedError'; this.errorClass = 'permanent'; }
}

function resetError (what) {
  const e = new Error(`read ECONNRESET while calling inventory service for ${what}`);
  e.code = 'ECONNRESET';
  return e;
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

async function until (what, check, everyMs = 200) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) {
      log(`timed out waiting for ${what}`);
      process.exit(2);
    }
    await sleep(everyMs);
  }
}

// The behaviour of one attempt, shared by both libraries. `attempt` is 1-based.
async function behave (kind, data, attempt, budget) {
  switch (kind) {
    case 'charge_card':
      throw new CardDeclinedError(`card declined for order ${data.order} (attempt ${attempt})`);
    case 'send_receipt':
      await sleep(data.hangMs || 5000); // pg-boss fails it first; graphile: see its task
      return { sent: true };
    case 'sync_inventory':
      if (attempt < 2) throw resetError(data.sku);
      return { synced: data.sku };
    case 'process_webhook':
      if (attempt <= budget) throw new Error(`webhook ${data.event} rejected: upstream 502 Bad Gateway`);
      return { processed: data.event };
    case 'notify_partner':
      throw new TypeError(`partner endpoint for ${data.partner} returned malformed JSON`);
    default:
      throw new Error(`unknown kind ${kind}`);
  }
}

// ---------------------------------------------------------------------------------------------
// pg-boss 10 and 12
const PGBOSS_RETRY_LIMIT = 1; // two attempts

async function pgboss () {
  // pg-boss 10 is CommonJS (module.exports = PgBoss); 12 is an ES module exporting { PgBoss }.
  const mod = await import('pg-boss');
  const PgBoss = mod.PgBoss || mod.default;
  const boss = new PgBoss({
    host: process.env.PGHOST,
    port: Number(process.env.PGPORT || 5432),
    user: process.env.PGUSER,
    database: process.env.PGDATABASE,
    schedule: false,
    schema: PB,
    max: 4
  });
  boss.on('error', (e) => log('pg-boss error:', e.message));
  await boss.start();
  const pool = new Pool({ max: 1 });
  const stop = async () => {
    await boss.stop({ graceful: true, wait: true, timeout: 5000 });
    await pool.end();
  };

  if (mode === 'init') {
    await stop();
    console.log(JSON.stringify({ ok: true }));
    return;
  }

  if (mode === 'redrive') {
    // A failure pg-boss itself redrives: the original stays failed, its dead-letter copy becomes
    // a new job (source_root_id = the original) that succeeds.
    const destination = rest[0];
    await boss.createQueue('refund_payment_dlq');
    await boss.createQueue('refund_payment',
      { retryLimit: 0, retryDelay: 0, deadLetter: 'refund_payment_dlq' });
    if (destination) await boss.createQueue(destination, { retryLimit: 0, retryDelay: 0 });
    const payload = { refund: destination ? 'rf_10' : 'rf_9', amount_minor: 1250, currency: 'EUR' };
    const failed = await boss.send('refund_payment', payload);
    let redriven = false;
    const handler = async ([job]) => {
      if (!redriven) throw new Error(`refund ${job.data.refund}: bank said 503 Service Unavailable`);
      return { refunded: job.data.refund };
    };
    await boss.work('refund_payment', { pollingIntervalSeconds: 0.5 }, handler);
    if (destination) await boss.work(destination, { pollingIntervalSeconds: 0.5 }, handler);
    await until('the original to fail', async () => {
      const { rows } = await pool.query(
        `SELECT count(*)::int AS n FROM ${PB}.job WHERE name = 'refund_payment_dlq' AND source_id = $1`,
        [failed]);
      return rows[0].n === 1;
    });
    redriven = true;
    const moved = await boss.redrive('refund_payment_dlq', destination ? { destination } : {});
    if (moved !== 1) throw new Error(`redrive() moved ${moved} jobs`);
    let again = null;
    await until('the redriven job to complete', async () => {
      const { rows } = await pool.query(
        `SELECT id::text FROM ${PB}.job WHERE name = $2 AND source_root_id = $1 AND state = 'completed'`,
        [failed, destination || 'refund_payment']);
      again = rows.length ? rows[0].id : null;
      return again !== null;
    });
    await stop();
    console.log(JSON.stringify({ failed, redriven: again, payload }));
    return;
  }

  await boss.createQueue('notify_partner_dlq');
  for (const q of QUEUES) {
    const options = { retryLimit: PGBOSS_RETRY_LIMIT, retryDelay: 0, expireInSeconds: q === 'send_receipt' ? 1 : 30 };
    if (q === 'notify_partner') options.deadLetter = 'notify_partner_dlq';
    await boss.createQueue(q, options);
  }
  const handlers = {};
  for (const q of QUEUES) {
    handlers[q] = async ([job]) => behave(q, job.data, job.retryCount + 1, PGBOSS_RETRY_LIMIT + 1);
  }

  const startWorkers = async () => {
    for (const q of QUEUES) {
      await boss.work(q, { includeMetadata: true, pollingIntervalSeconds: 0.5 }, handlers[q]);
    }
  };

  let ids = [];
  if (mode === 'fail') {
    const send = (q, data) => boss.send(q, data).then((id) => { ids.push(id); return id; });
    await send('charge_card', { order: 'ord_1001', amount_minor: 4200 });
    await send('charge_card', { order: 'ord_1002', amount_minor: 990 });
    await send('send_receipt', { order: 'ord_1001', hangMs: 3000 });
    await send('sync_inventory', { sku: 'sku_77' });
    await send('sync_inventory', { sku: 'sku_78' });
    await send('process_webhook', { event: 'evt_1' });
    await send('notify_partner', { partner: 'acme' });
  } else if (mode === 'work') {
    ids = rest;
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
  await startWorkers();
  // Settled: completed, cancelled or failed; pg-boss's own states (plans.js JOB_STATES).
  await until('jobs to settle', async () => {
    const { rows } = await pool.query(
      `SELECT count(*)::int AS n FROM ${PB}.job WHERE id = ANY($1::uuid[]) AND state < 'completed'`,
      [ids]);
    return rows[0].n === 0;
  });
  const { rows } = await pool.query(
    `SELECT id, name, state::text, retry_count FROM ${PB}.job WHERE id = ANY($1::uuid[]) ORDER BY name, id`,
    [ids]);
  await stop();
  console.log(JSON.stringify({ jobs: rows }));
}

// ---------------------------------------------------------------------------------------------
// graphile-worker 0.17 and 0.18
const GRAPHILE_MAX_ATTEMPTS = 2;

async function graphile () {
  // graphile-worker 0.17 is CommonJS, 0.18 an ES module: import() loads either.
  const { run, runMigrations, makeWorkerUtils, Logger } = await import('graphile-worker');
  const pool = new Pool({ max: 6 });
  pool.on('error', (e) => log('pool error:', e.message));
  const quiet = new Logger(() => (level, message) => {
    if (level === 'error' || level === 'warning') log(`graphile-worker ${level}: ${message.split('\n')[0]}`);
  });
  await runMigrations({ pgPool: pool, logger: quiet, schema: GW });
  if (mode === 'init') {
    await pool.end();
    console.log(JSON.stringify({ ok: true }));
    return;
  }

  const taskList = {};
  for (const q of QUEUES) {
    taskList[q] = async (payload, helpers) => {
      if (q === 'send_receipt') {
        // graphile-worker has no handler timeout of its own: the task races its own deadline.
        const deadline = sleep(payload.timeoutMs || 300).then(() => {
          throw new Error(`send_receipt timed out after ${payload.timeoutMs || 300} ms`);
        });
        return Promise.race([behave(q, payload, helpers.job.attempts, GRAPHILE_MAX_ATTEMPTS), deadline]);
      }
      return behave(q, payload, helpers.job.attempts, GRAPHILE_MAX_ATTEMPTS);
    };
  }
  taskList.hold_forever = async (payload, helpers) => {
    if (helpers.job.attempts === 1) await new Promise(() => {}); // a worker that will be killed
    return { held: false };
  };

  const utils = await makeWorkerUtils({ pgPool: pool, logger: quiet, schema: GW });
  let ids = [];
  const add = async (task, payload, options = {}) => {
    const job = await utils.addJob(task, payload, { maxAttempts: GRAPHILE_MAX_ATTEMPTS, ...options });
    ids.push(String(job.id));
  };
  if (mode === 'fail') {
    await add('charge_card', { order: 'ord_1001', amount_minor: 4200 });
    await add('charge_card', { order: 'ord_1002', amount_minor: 990 }, { queueName: 'payments' });
    await add('send_receipt', { order: 'ord_1001', hangMs: 5000, timeoutMs: 300 });
    await add('sync_inventory', { sku: 'sku_77' });
    await add('sync_inventory', { sku: 'sku_78' });
    await add('process_webhook', { event: 'evt_1' });
    await add('notify_partner', { partner: 'acme' });
  } else if (mode === 'work') {
    ids = rest;
  } else if (mode === 'hold') {
    const n = Number(rest[0] || 2);
    const maxAttempts = Number(rest[1] || 3);
    for (let i = 0; i < n; ++i) await add('hold_forever', { n: i }, { maxAttempts });
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
  await utils.release();

  const runner = await run({
    pgPool: pool,
    taskList,
    concurrency: 4,
    pollInterval: 200,
    noHandleSignals: true,
    schema: GW,
    logger: quiet
  });

  if (mode === 'hold') {
    await until('the jobs to be held', async () => {
      const { rows } = await pool.query(
        `SELECT count(*)::int AS n FROM ${GW}._private_jobs WHERE id = ANY($1::bigint[]) AND locked_at IS NOT NULL`,
        [ids]);
      return rows[0].n === ids.length;
    }, 100);
    console.log(`HOLDING ${ids.join(',')}`);
    await new Promise(() => {}); // until SIGKILL
  }

  // Settled: deleted (graphile-worker deletes a job that succeeded) or failed for good, i.e.
  // attempts >= max_attempts and not locked (the complement of its is_available column, minus
  // jobs a worker holds right now).
  await until('jobs to settle', async () => {
    const { rows } = await pool.query(
      `SELECT count(*)::int AS n FROM ${GW}._private_jobs
        WHERE id = ANY($1::bigint[]) AND (attempts < max_attempts OR locked_at IS NOT NULL)`,
      [ids]);
    return rows[0].n === 0;
  });
  await runner.stop();
  const { rows } = await pool.query(
    `SELECT j.id::text, t.identifier AS task, j.attempts, j.max_attempts, j.last_error
       FROM ${GW}._private_jobs j JOIN ${GW}._private_tasks t ON t.id = j.task_id
      WHERE j.id = ANY($1::bigint[]) ORDER BY j.id`, [ids]);
  await pool.end();
  console.log(JSON.stringify({ ids, remaining: rows }));
}

const main = library === 'pgboss' ? pgboss : library === 'graphile' ? graphile : null;
if (!main) {
  console.error('usage: workload.js <pgboss|graphile> <init|fail|work|hold> [args]');
  process.exit(64);
}
main().then(() => process.exit(0), (e) => {
  console.error(e);
  process.exit(1);
});
