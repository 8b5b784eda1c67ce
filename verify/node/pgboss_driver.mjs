// pgboss_driver.mjs drives the real pg-boss (npm, pinned by package-lock.json,
// or the copy PGBOSS_DIR names) against a real PostgreSQL, for retrykit's
// pg_boss profile.
//
// Request on stdin: {"url": "postgres://…", "schema": "…",
//   "cases": [{"op": "job", "attempt": K}, …],
//   "jobs": [{"queue": {…createQueue options…}, "opts": {…send options…},
//             "seed": true|false, "rands": [r1, …]}, …]}
// (jobs[i] belongs to cases[i]). For each case the driver creates a queue,
// sends one job with opts, then K times: claims it with boss.fetch (after
// moving a pending start_after to now, so the next attempt need not wait)
// and fails it with boss.fail, on the driver's own connection inside a
// transaction, so that job_now() — now(), the transaction's timestamp — is
// known. With "seed", setseed() is called before the fail and the first
// random() it yields is read first and reported as r: the one draw pg-boss's
// SQL takes is then that r. With "rands", random() is replaced for the fail
// (a function of that name in a schema of the driver's, searched before
// pg_catalog) by one returning rands[n-1] (the last one for later attempts).
// Otherwise random() is the server's own.
//
// The schema is dropped at the end.
//
// Answer on stdout: {"system", "version", "file", "results": [{"failures":
// [{"attempt", "retry_count", "state", "delay_us", "r"}, …]}, …]} where
// delay_us is start_after − now() in microseconds, read from pg-boss's own
// job table after the fail (null once the job is failed for good).
import { readFileSync } from 'node:fs'
import { createRequire } from 'node:module'
import path from 'node:path'
import { pathToFileURL } from 'node:url'

const dir = process.env.PGBOSS_DIR || path.resolve('node_modules/pg-boss')
const pkg = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'))
const main = path.join(dir, pkg.main || 'dist/index.js')
const { PgBoss } = await import(pathToFileURL(main).href)
// pg is pg-boss's own dependency: resolve it from pg-boss's directory.
const pg = createRequire(path.join(dir, 'package.json'))('pg')

const req = JSON.parse(readFileSync(0, 'utf8'))
const schema = req.schema
if (!/^[a-z_][a-z0-9_]*$/.test(schema)) throw new Error('bad schema ' + schema)

const boss = new PgBoss({ connectionString: req.url, schema, supervise: false, schedule: false, migrate: true })
boss.on('error', (e) => process.stderr.write('pg-boss error: ' + (e && e.stack) + '\n'))
await boss.start()

// Two connections: setseed() leaves its backend's random() on a known
// sequence, so the jobs that keep the server's own random() fail on a
// connection that never calls it.
const drawn = new pg.Client({ connectionString: req.url })
const plain = new pg.Client({ connectionString: req.url })
await drawn.connect()
await plain.connect()
await drawn.query(`CREATE SCHEMA IF NOT EXISTS ${schema}_draw`)

async function one (i, k, job) {
  const client = job.seed || job.rands ? drawn : plain
  const db = { executeSql: (text, values) => client.query(text, values) }
  const name = `rk_${i}_${process.pid}`
  await boss.createQueue(name, job.queue || {})
  const id = await boss.send(name, { case: i }, job.opts || {})
  if (!id) throw new Error(`case ${i}: send returned no id`)
  const failures = []
  for (let n = 1; n <= k; n++) {
    if (n > 1) {
      // The retry waits until start_after; move it to now so the claim is at once.
      await client.query(`UPDATE ${schema}.job SET start_after = now() WHERE id = $1 AND state = 'retry'`, [id])
    }
    const got = await boss.fetch(name)
    if (!got || got.length !== 1 || got[0].id !== id) {
      throw new Error(`case ${i}: attempt ${n}: fetch gave ${JSON.stringify(got)}`)
    }
    await client.query('BEGIN')
    let r = null
    if (job.rands) {
      // Injected draw: pg_catalog named last in search_path lets the
      // schema's own random() shadow the built-in one for the unqualified
      // random() in pg-boss's fail statement.
      r = String(job.rands[Math.min(n, job.rands.length) - 1])
      await client.query(`CREATE OR REPLACE FUNCTION ${schema}_draw.random() RETURNS double precision LANGUAGE sql AS 'SELECT ${Number(r)}::double precision'`)
      await client.query(`SET LOCAL search_path = ${schema}_draw, pg_catalog, public`)
      r = (await client.query('SELECT random()::text AS r')).rows[0].r
    } else if (job.seed) {
      const seed = ((i * 7919 + n * 104729) % 2000000) / 1000000 - 1 // in [-1, 1)
      await client.query('SELECT setseed($1)', [seed])
      r = (await client.query('SELECT random()::text AS r')).rows[0].r
      await client.query('SELECT setseed($1)', [seed])
    }
    await boss.fail(name, id, { message: `attempt ${n}` }, { db })
    const row = (await client.query(
      `SELECT state::text AS state, retry_count,
              ((extract(epoch FROM start_after) - extract(epoch FROM now())) * 1000000)::text AS delay_us
         FROM ${schema}.job WHERE id = $1`, [id])).rows[0]
    await client.query('COMMIT')
    if (!row) throw new Error(`case ${i}: attempt ${n}: the job is gone after fail`)
    failures.push({
      attempt: n,
      retry_count: row.retry_count,
      state: row.state,
      delay_us: row.state === 'retry' ? row.delay_us : null,
      r
    })
    if (row.state !== 'retry') break
  }
  return { failures }
}

const results = []
try {
  for (let i = 0; i < req.cases.length; i++) {
    results.push(await one(i, req.cases[i].attempt, req.jobs[i] || {}))
  }
} finally {
  await drawn.end()
  await plain.end()
  await boss.stop({ graceful: false, close: true })
}
// The schema is the run's own: drop it, so a shared database keeps nothing.
const server = await (async () => {
  const c = new pg.Client({ connectionString: req.url })
  await c.connect()
  try {
    await c.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`)
    await c.query(`DROP SCHEMA IF EXISTS ${schema}_draw CASCADE`)
    return (await c.query('SHOW server_version')).rows[0].server_version
  } finally { await c.end() }
})()
process.stdout.write(JSON.stringify({
  system: `pg-boss ${pkg.version} on PostgreSQL ${server}`,
  version: pkg.version,
  file: main,
  results
}) + '\n')
