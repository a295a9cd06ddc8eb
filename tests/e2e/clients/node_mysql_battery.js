// tests/e2e/clients/node_mysql_battery.js: Node.js's mysqljs/mysql (a
// client written in JavaScript, Debian's node-mysql) through what the
// server offers: the text protocol with its own escaping, every byte value
// and utf8mb4, multi-statements and a procedure's result sets, a 17 MiB
// blob (split packets both ways), 10,000 rows streamed, LOAD DATA LOCAL
// INFILE, COM_CHANGE_USER, COM_PING, COM_STATISTICS, transactions, errors,
// a pool of four connections with 200 queries in flight, and a connection
// destroyed in the middle of a result.
//
//   NODE_PATH=/usr/share/nodejs node node_mysql_battery.js HOST PORT
//
// (Debian's modules live in /usr/share/nodejs, which a Node.js not built
// by Debian does not search by itself.)
//
// One line per check, "name: value", values that do not depend on which
// connection or when; tests/e2e/mysql_clients.sh runs it against MariaDB
// and through the proxy and compares the two outputs.

'use strict';
const crypto = require('crypto');
const fs = require('fs');
const os = require('os');
const path = require('path');
const mysql = require('mysql');

const [host, port] = [process.argv[2], Number(process.argv[3])];
const out = (name, value) => console.log(`${name}: ${JSON.stringify(value)}`);
const settings = (extra) => Object.assign({
  host, port, user: 'sbtest', password: 'sbtest', database: 'sbtest', charset: 'UTF8MB4_GENERAL_CI',
  connectTimeout: 10000, dateStrings: true, supportBigNumbers: true, bigNumberStrings: true,
}, extra);
const sha256 = (data) => crypto.createHash('sha256').update(data).digest('hex');

// The callback API as promises: [rows or result, fields].
function query(c, sql, values) {
  return new Promise((resolve, reject) => {
    c.query({ sql, values, timeout: 30000 }, (err, rows, fields) => (err ? reject(err) : resolve([rows, fields])));
  });
}
const call = (c, method, ...args) => new Promise((resolve, reject) => {
  c[method](...args, (err, result) => (err ? reject(err) : resolve(result)));
});
async function errorOf(fn) {
  try {
    await fn();
    return 'no error';
  } catch (e) {
    return e.errno !== undefined ? e.errno : e.code;
  }
}
function connect(extra) {
  const c = mysql.createConnection(settings(extra));
  return call(c, 'connect').then(() => c);
}

async function main() {
  const c = await connect({ multipleStatements: true });
  out('version', (await query(c, 'SELECT VERSION() AS v'))[0][0].v);
  await query(c, 'DROP TABLE IF EXISTS js_t');
  await query(c, 'CREATE TABLE js_t (id INT PRIMARY KEY AUTO_INCREMENT, s VARCHAR(255), b LONGBLOB, ' +
    'd DECIMAL(20,6), f DOUBLE, dt DATETIME(6), n INT NULL) CHARACTER SET utf8mb4');

  // Every byte value, Unicode beyond the BMP, quotes, NULLs: escaped by the client.
  const all = Buffer.from(Array.from({ length: 256 }, (_, i) => i));
  const rows = [['plain', all, '12345.678901', 1.5e300, '2026-12-06 10:11:12.123456', null],
    ['ünïcödé ✓ 𝄞', Buffer.alloc(200, 0xff), '-0.000001', -0.5, '1970-01-01 00:00:01.000000', 7],
    ["quote ' and \\ backslash", Buffer.alloc(0), '0', Math.PI, '9999-12-31 23:59:59.999999', -1]];
  const [ins] = await query(c, 'INSERT INTO js_t (s, b, d, f, dt, n) VALUES ?', [rows]);
  out('bulk_insert', [ins.affectedRows, ins.insertId]);
  const [sel, fields] = await query(c, 'SELECT id, s, HEX(b) AS hb, d, f, dt, n FROM js_t ORDER BY id');
  for (const r of sel) out('row', r);
  out('fields', fields.map((f) => [f.name, f.type]));
  const [back] = await query(c, 'SELECT b FROM js_t WHERE s = ?', ['plain']);
  out('bytes_back', back[0].b.equals(all));

  // Two statements in one query, and a procedure with two result sets.
  out('multi_statement', (await query(c, "SELECT 1 AS one; SELECT 'two' AS t, 2 AS n"))[0]);
  await query(c, 'DROP PROCEDURE IF EXISTS js_p');
  await query(c, 'CREATE PROCEDURE js_p(IN x INT) BEGIN SELECT x * 2 AS doubled; SELECT COUNT(*) AS c FROM js_t; END');
  const [sets] = await query(c, 'CALL js_p(21)');
  out('procedure_sets', sets.slice(0, 2));

  // 17 MiB: more than one protocol packet (2^24 - 1 bytes) each way (as
  // hex in the query: 34 MiB of text).
  const seed = crypto.createHash('sha256').update('seed').digest();
  const big = Buffer.concat(Array(17 * 1024 * 1024 / 32).fill(seed));
  await query(c, "INSERT INTO js_t (s, b) VALUES ('big', ?)", [big]);
  out('big_on_server', (await query(c, "SELECT LENGTH(b) AS n, SHA2(b, 256) AS h FROM js_t WHERE s = 'big'"))[0][0]);
  const [bigBack] = await query(c, "SELECT b FROM js_t WHERE s = 'big'");
  out('big_back', [bigBack[0].b.length, sha256(bigBack[0].b) === sha256(big)]);

  // 10,000 rows as a stream of row events.
  const streamed = await new Promise((resolve, reject) => {
    const h = crypto.createHash('sha256');
    let n = 0;
    c.query('SELECT id, k, c FROM sbtest1 ORDER BY id')
      .on('error', reject)
      .on('result', (r) => { h.update(JSON.stringify(r)); n += 1; })
      .on('end', () => resolve([n, h.digest('hex')]));
  });
  out('streamed_rows', streamed);

  // LOAD DATA LOCAL INFILE: the server asks, the client sends the file.
  const file = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'affine-js-')), 'local.tsv');
  fs.writeFileSync(file, Array.from({ length: 500 }, (_, i) => `local-${i}\t${i}\n`).join(''));
  await query(c, `LOAD DATA LOCAL INFILE ${mysql.escape(file)} INTO TABLE js_t (s, n)`);
  fs.rmSync(path.dirname(file), { recursive: true });
  out('load_data_local', (await query(c, "SELECT COUNT(*) AS n, SUM(n) AS s FROM js_t WHERE s LIKE 'local-%'"))[0][0]);

  // COM_CHANGE_USER, COM_PING, COM_STATISTICS.
  await call(c, 'changeUser', { database: 'information_schema' });
  out('change_user', (await query(c, 'SELECT DATABASE() AS db, CURRENT_USER() AS u'))[0][0]);
  await call(c, 'changeUser', { database: 'sbtest' });
  await call(c, 'ping');
  out('ping', 'ok');
  const stats = await call(c, 'statistics');
  out('statistics', typeof stats === 'object' && 'uptime' in stats && 'threads' in stats);

  // Transactions, errors.
  await call(c, 'beginTransaction');
  await query(c, "INSERT INTO js_t (s) VALUES ('rolled back')");
  await call(c, 'rollback');
  await call(c, 'beginTransaction');
  await query(c, "INSERT INTO js_t (s) VALUES ('committed')");
  await call(c, 'commit');
  out('transactions', (await query(c, "SELECT s FROM js_t WHERE s IN ('rolled back', 'committed')"))[0]);
  out('syntax_error', await errorOf(() => query(c, 'SELEC 1')));
  out('duplicate_key', await errorOf(() => query(c, 'INSERT INTO js_t (id) VALUES (1)')));
  out('unknown_table', await errorOf(() => query(c, 'SELECT * FROM no_such_table')));
  out('after_errors', (await query(c, "SELECT 'still usable' AS s"))[0][0]);

  // A pool of four connections, 200 queries in flight at once.
  const pool = mysql.createPool(settings({ connectionLimit: 4 }));
  const sums = await Promise.all(Array.from({ length: 200 }, (_, i) => new Promise((resolve, reject) => {
    pool.query('SELECT ? + SUM(k) AS s FROM sbtest1 WHERE id <= 100', [i], (err, r) => (err ? reject(err) : resolve(r[0].s)));
  })));
  out('pool', [sums.length, sha256(sums.join(','))]);
  await call(pool, 'end');

  // A connection destroyed while its result is still coming: the next one works.
  const d = await connect({});
  await new Promise((resolve) => {
    const q = d.query('SELECT a.id FROM sbtest1 a JOIN sbtest1 b LIMIT 5000000');
    q.on('result', () => { d.destroy(); resolve(); });
    q.on('error', resolve);
    q.on('end', resolve);
  });
  const after = await connect({});
  out('after_destroy', (await query(after, 'SELECT COUNT(*) AS n FROM sbtest1'))[0][0]);
  await call(after, 'end');

  await query(c, 'DROP PROCEDURE js_p');
  await query(c, 'DROP TABLE js_t');
  await call(c, 'end');

  // Sessions that fail at the handshake.
  out('wrong_password', await errorOf(() => connect({ password: 'wrong' })));
  out('unknown_database', await errorOf(() => connect({ database: 'no_such_db' })));
}

main().catch((e) => {
  console.log(`fatal: ${e.code || ''} ${e.errno || ''} ${e.message}`);
  process.exit(1);
});
