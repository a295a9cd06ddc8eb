<?php
// tests/e2e/clients/mysqli_battery.php: PHP's mysqli on mysqlnd (PHP's own
// client, not libmariadb) through what the server offers: server-side
// prepared statements (the binary protocol) of every common type,
// COM_STMT_SEND_LONG_DATA, a read-only cursor (COM_STMT_FETCH),
// COM_STMT_RESET and COM_STMT_CLOSE, a procedure's result sets through a
// prepared CALL, multi_query, unbuffered reads, COM_CHANGE_USER,
// COM_STATISTICS, LOAD DATA LOCAL INFILE, errors.
//
//   php -d mysqli.allow_local_infile=1 mysqli_battery.php HOST PORT
//
// One line per check, "name: value"; tests/e2e/mysql_clients.sh runs it
// against MariaDB and through the proxy and compares the two outputs.

mysqli_report(MYSQLI_REPORT_OFF);
[$host, $port] = [$argv[1], (int)$argv[2]];
if (str_contains($host, ":")) $host = "[$host]";  // mysqlnd takes an IPv6 literal in brackets

function out(string $name, $value): void { echo $name, ": ", json_encode($value, JSON_INVALID_UTF8_SUBSTITUTE), "\n"; }
function connect(string $password = "sbtest", string $db = "sbtest") {
  global $host, $port;
  $m = mysqli_init();
  $m->options(MYSQLI_OPT_CONNECT_TIMEOUT, 10);
  $m->options(MYSQLI_OPT_READ_TIMEOUT, 30);  // a response that never comes fails the run, not hangs it
  $m->options(MYSQLI_OPT_LOCAL_INFILE, true);
  if (!@$m->real_connect($host, "sbtest", $password, $db, $port)) return $m->connect_errno;
  $m->set_charset("utf8mb4");
  return $m;
}

$m = connect();
if (!($m instanceof mysqli)) { out("connect", $m); exit(1); }
out("server_version", $m->server_info);
$m->query("DROP TABLE IF EXISTS php_t");
$m->query("CREATE TABLE php_t (id INT PRIMARY KEY AUTO_INCREMENT, s VARCHAR(255), b LONGBLOB, d DECIMAL(20,6), "
          . "f DOUBLE, dt DATETIME(6), n BIGINT NULL, t TINYINT) CHARACTER SET utf8mb4");

// Prepared INSERT: i, d, s and b (the blob sent as long data, in pieces).
$st = $m->prepare("INSERT INTO php_t (s, b, d, f, dt, n, t) VALUES (?, ?, ?, ?, ?, ?, ?)");
$null = null;
$rows = [["plain", "12345.678901", 1.5e300, "2026-12-06 10:11:12.123456", PHP_INT_MAX, 127],
         ["ünïcödé ✓ 𝄞", "-0.000001", -2.5, "1970-01-01 00:00:01", null, -128],
         ["quote ' and \\ backslash", "0", M_PI, "9999-12-31 23:59:59.999999", -1, 0]];
foreach ($rows as $i => [$s, $d, $f, $dt, $n, $t]) {
  $st->bind_param("sbsdsii", $s, $null, $d, $f, $dt, $n, $t);
  $blob = str_repeat(chr($i) . chr(255 - $i), 3 * 1024 * 1024);  // 6 MiB in 1 MiB pieces
  foreach (str_split($blob, 1024 * 1024) as $piece) $st->send_long_data(1, $piece);
  out("insert_$i", [$st->execute(), $st->affected_rows, $st->insert_id]);
}
$st->close();

// Prepared SELECT: every type back in the binary protocol.
$st = $m->prepare("SELECT id, s, LENGTH(b), MD5(b), d, f, dt, n, t FROM php_t WHERE id >= ? ORDER BY id");
$from = 1;
$st->bind_param("i", $from);
$st->execute();
$r = $st->get_result();
while ($row = $r->fetch_row()) out("binary_row", $row);
out("fields", array_map(fn($f) => [$f->name, $f->type], $r->fetch_fields()));
// The same statement again after COM_STMT_RESET, bound to variables.
$st->reset();
$from = 2;
$st->execute();
$st->bind_result($id, $s, $len, $md5, $d, $f, $dt, $n, $t);
while ($st->fetch()) out("bound_row", [$id, $s, $len, $md5, $d, $f, $dt, $n, $t]);
$st->close();

// A read-only cursor: the rows come by COM_STMT_FETCH, 1000 at a time.
$st = $m->prepare("SELECT id, k, c FROM sbtest1 ORDER BY id");
$st->attr_set(MYSQLI_STMT_ATTR_CURSOR_TYPE, MYSQLI_CURSOR_TYPE_READ_ONLY);
$st->attr_set(MYSQLI_STMT_ATTR_PREFETCH_ROWS, 1000);
$st->execute();
$st->bind_result($id, $k, $c);
$h = hash_init("sha256");
$count = 0;
while ($st->fetch()) { hash_update($h, "$id,$k,$c;"); $count++; }
out("cursor_rows", [$count, hash_final($h)]);
$st->close();

// A procedure with two result sets, called through a prepared statement.
$m->query("DROP PROCEDURE IF EXISTS php_p");
$m->query("CREATE PROCEDURE php_p(IN x INT) BEGIN SELECT x * 2; SELECT COUNT(*) FROM php_t; END");
$st = $m->prepare("CALL php_p(?)");
$x = 21;
$st->bind_param("i", $x);
$st->execute();
$sets = [];
do {
  if ($r = $st->get_result()) { $sets[] = $r->fetch_all(); $r->free(); }
} while ($st->more_results() && $st->next_result());
out("prepared_call_sets", $sets);
$st->close();

// multi_query; an unbuffered read of 10,000 rows.
$m->multi_query("SELECT 1; SELECT 'two', 2; DO 0");
$sets = [];
do {
  if ($r = $m->store_result()) { $sets[] = $r->fetch_all(); $r->free(); } else { $sets[] = $m->affected_rows; }
} while ($m->more_results() && $m->next_result());
out("multi_query_sets", $sets);
$r = $m->query("SELECT id, k, c, pad FROM sbtest2 ORDER BY id", MYSQLI_USE_RESULT);
$h = hash_init("sha256");
$count = 0;
while ($row = $r->fetch_row()) { hash_update($h, implode(",", $row) . ";"); $count++; }
$r->free();
out("unbuffered_rows", [$count, hash_final($h)]);

// LOAD DATA LOCAL INFILE, and the info line of a multi-row INSERT.
$path = tempnam(sys_get_temp_dir(), "php_load");
$lines = "";
for ($i = 0; $i < 500; $i++) $lines .= "local-$i\t$i\n";
file_put_contents($path, $lines);
out("load_data_local", $m->query("LOAD DATA LOCAL INFILE '$path' INTO TABLE php_t (s, n)"));
unlink($path);
out("load_data_rows", $m->query("SELECT COUNT(*), SUM(n) FROM php_t WHERE s LIKE 'local-%'")->fetch_row());
$m->query("INSERT INTO php_t (s) VALUES ('a'), ('b'), ('c')");
out("info", $m->info);

// COM_STATISTICS, COM_PING, COM_INIT_DB, COM_CHANGE_USER.
out("stat", substr($m->stat(), 0, 7));
out("ping", $m->ping());
out("select_db", [$m->select_db("information_schema"), $m->query("SELECT DATABASE()")->fetch_row()]);
$m->query("SET @kept = 1");
out("change_user", $m->change_user("sbtest", "sbtest", "sbtest"));
out("after_change_user", $m->query("SELECT DATABASE(), @kept IS NULL")->fetch_row());
out("change_user_wrong", [$m->change_user("sbtest", "wrong", "sbtest"), $m->errno]);
$m->close();

// Errors: in a statement, in a prepare, at the handshake.
$m = connect();
out("syntax_error", [$m->query("SELEC 1"), $m->errno]);
out("prepare_error", [$m->prepare("SELECT * FROM no_such_table"), $m->errno]);
$st = $m->prepare("INSERT INTO php_t (id) VALUES (?)");
$one = 1;
$st->bind_param("i", $one);
out("execute_error", [$st->execute(), $st->errno]);
$st->close();
out("after_errors", $m->query("SELECT 'still usable'")->fetch_row());
$m->query("DROP PROCEDURE php_p");
$m->query("DROP TABLE php_t");
$m->close();
out("wrong_password", connect("wrong"));
out("unknown_database", connect("sbtest", "no_such_db"));
