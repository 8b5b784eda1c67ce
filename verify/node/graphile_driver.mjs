// Drive graphile-worker's real worker loop on a real PostgreSQL for retrykit's verify module.
//
// Reads one JSON request on stdin:
//   {"database_url": "postgres://...", "max_attempts": [N | null, ...],
//    "cases": [{"op": "job"}, ...]}
// (one case per entry of max_attempts: null adds the job without maxAttempts,
// so graphile-worker's default applies) and writes {"system", "version",
// "file", "algorithm", "results"} on stdout, one result per job:
//   {"max_attempts": stored max_attempts, "runs": how often the task ran,
//    "failures": [{"attempt": attempts after the failure, "delay_us":
//      run_at - the failure transaction's now(), in microseconds, "retry":
//      is_available after the failure}],
//    "attempts": final attempts, "permanently_failed": attempts >= max_attempts,
//    "is_available": final is_available, "last_error": final last_error}
//
// GRAPHILE_DIR, when set, is the directory whose node_modules holds
// graphile-worker (the drift watch installs another release there with npm
// install --prefix); else the one npm ci installed beside this file.
//
// The jobs live in a fresh schema (dropped at the end). runMigrations
// installs graphile-worker's own schema; the jobs are added with its
// WorkerUtils.addJob; they fail through its own worker loop (runOnce with a
// task that always throws), so its failJob SQL computes run_at. The failure
// time is that transaction's now(): an AFTER UPDATE trigger on the jobs table
// (an observer only: it writes to a side table, never to the job) records
// now() and the row each time a locked job is unlocked by a failure. Between
// rounds (each begins once no job is locked), graphile-worker's own
// reschedule_jobs moves every job's run_at one second into the past, standing
// for the wait, so the next runOnce takes every job that is still available;
// a job that used up its attempts is not available and must not run again
// (one more round after all are used up checks it).
import { createRequire } from 'node:module';
import fs from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const root = process.env.GRAPHILE_DIR
  ? path.resolve(process.env.GRAPHILE_DIR)
  : path.dirname(new URL(import.meta.url).pathname);
const pkgDir = path.join(root, 'node_modules', 'graphile-worker');
if (!fs.existsSync(path.join(pkgDir, 'package.json'))) {
  throw new Error(`graphile_driver: graphile-worker is not installed in ${root}/node_modules`);
}
const pkg = JSON.parse(fs.readFileSync(path.join(pkgDir, 'package.json'), 'utf8'));
const gwRequire = createRequire(path.join(pkgDir, 'package.json'));
const gwMain = gwRequire.resolve('graphile-worker');
const gw = await import(pathToFileURL(gwMain).href);
// pg as graphile-worker itself resolves it.
const pg = gwRequire('pg');

const req = JSON.parse(fs.readFileSync(0, 'utf8'));
if (!req.database_url) throw new Error('graphile_driver: database_url is missing');
const maxes = req.max_attempts ?? [];
if (maxes.length !== (req.cases ?? []).length) {
  throw new Error(`graphile_driver: ${maxes.length} max_attempts for ${(req.cases ?? []).length} cases`);
}

const schema = `rk_verify_gw_${process.pid}_${Date.now()}`;
const S = `"${schema}"`;
const quiet = new gw.Logger(() => () => {});
const pgPool = new pg.Pool({ connectionString: req.database_url, max: 4 });
const opts = { pgPool, schema, logger: quiet, noHandleSignals: true };
const runs = new Map();
const taskList = {
  rk_verify_always_fails: async (payload) => {
    runs.set(payload.i, (runs.get(payload.i) ?? 0) + 1);
    throw new Error(`retrykit verify: job ${payload.i} always fails`);
  },
};

const results = [];
try {
  await gw.runMigrations(opts);
  await pgPool.query(`
    create table ${S}.rk_verify_failures (
      seq bigserial primary key, job_id bigint not null, failed_at timestamptz not null,
      run_at timestamptz not null, attempts int not null, max_attempts int not null,
      is_available boolean not null, last_error text);
    create function ${S}.rk_verify_record_failure() returns trigger language plpgsql as $$
    begin
      insert into ${S}.rk_verify_failures (job_id, failed_at, run_at, attempts, max_attempts, is_available, last_error)
        values (new.id, now(), new.run_at, new.attempts, new.max_attempts, new.is_available, new.last_error);
      return null;
    end $$;
    create trigger rk_verify_record_failure after update on ${S}._private_jobs for each row
      when (old.locked_by is not null and new.locked_by is null and new.last_error is not null)
      execute procedure ${S}.rk_verify_record_failure();`);

  const utils = await gw.makeWorkerUtils(opts);
  const ids = [];
  try {
    for (let i = 0; i < maxes.length; i++) {
      const spec = maxes[i] === null ? {} : { maxAttempts: maxes[i] };
      const job = await utils.addJob('rk_verify_always_fails', { i }, spec);
      ids.push(job.id);
    }
  } finally {
    await utils.release();
  }

  // runOnce can return before the failing update of its last job has
  // committed (dist/worker.js:262 calls failJob without awaiting it): every
  // round first waits until no job is locked.
  const settle = async () => {
    for (const deadline = Date.now() + 60000; ;) {
      const { rows } = await pgPool.query(`select count(*)::int as n from ${S}._private_jobs where locked_by is not null`);
      if (rows[0].n === 0) return;
      if (Date.now() > deadline) throw new Error(`graphile_driver: ${rows[0].n} jobs still locked after 60 s`);
      await new Promise((r) => setTimeout(r, 10));
    }
  };
  const stored = await pgPool.query(`select max(max_attempts)::int as m from ${S}._private_jobs`);
  // Rounds until every job has used up its attempts, then one more, in
  // which none may run; bounded, so a job that never exhausts ends the run.
  const limit = 2 * (stored.rows[0].m ?? 0) + 10;
  let extra = false;
  for (let round = 0; round < limit; round++) {
    await settle();
    const { rows } = await pgPool.query(`select count(*)::int as n from ${S}._private_jobs where is_available`);
    if (rows[0].n === 0) {
      if (extra) break;
      extra = true;
    }
    // The wait: every job's run_at one second in the past.
    await pgPool.query(`select count(*) from ${S}.reschedule_jobs($1::bigint[], run_at := now() - interval '1 second')`, [ids]);
    await gw.runOnce({ ...opts, taskList });
  }
  await settle();

  for (let i = 0; i < ids.length; i++) {
    const f = await pgPool.query(
      `select attempts, is_available,
              (extract(epoch from (run_at - failed_at)) * 1000000)::bigint::text as delay_us
         from ${S}.rk_verify_failures where job_id = $1 order by seq`, [ids[i]]);
    const j = await pgPool.query(
      `select v.attempts, v.max_attempts, v.last_error, p.is_available
         from ${S}.jobs v join ${S}._private_jobs p on p.id = v.id where v.id = $1`, [ids[i]]);
    const row = j.rows[0];
    results.push({
      max_attempts: row.max_attempts,
      runs: runs.get(i) ?? 0,
      failures: f.rows.map((r) => ({ attempt: r.attempts, delay_us: Number(r.delay_us), retry: r.is_available })),
      attempts: row.attempts,
      permanently_failed: row.attempts >= row.max_attempts,
      is_available: row.is_available,
      last_error: row.last_error,
    });
  }
} finally {
  await pgPool.query(`drop schema if exists ${S} cascade`).catch(() => {});
  await pgPool.end();
}

process.stdout.write(JSON.stringify({
  system: 'graphile-worker',
  version: pkg.version,
  file: gwMain,
  algorithm: "runOnce with a task that always throws; failJob: run_at = greatest(now(), run_at) + exp(least(attempts, 10)) * interval '1 second'",
  results,
}) + '\n');
