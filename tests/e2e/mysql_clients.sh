#!/usr/bin/env bash
# End to end: client libraries other than libmariadb through
# affine-mysql-proxy, each against a real MariaDB directly and through the
# proxy, with the two outputs compared line for line (scripts/mysql/lib.sh
# makes the namespace).
#
#   tests/e2e/mysql_clients.sh uring|dpdk|dpdk-ipv6 [PROXY]
#
# The batteries (tests/e2e/clients/): PyMySQL (pure Python), PHP's
# mysqli on mysqlnd (PHP's own protocol code) and Node.js's mysqljs/mysql
# (pure JavaScript). What they send: the text and the binary protocol,
# long data, cursors, multi-statements, a procedure's result sets, a 17 MiB
# blob, LOAD DATA LOCAL INFILE, COM_CHANGE_USER, COM_STATISTICS, errors, a
# pool with queries in flight and a connection dropped mid-result; each
# file's header has the list. The mariadb client and sysbench (libmariadb) are in mysql_proxy.sh.
#
# PROXY defaults to build/apps/mysql-proxy/affine-mysql-proxy. Exit 0 pass,
# 1 fail, 77 not root or a client missing (scripts/install-deps has them).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mode=${1:-}
[ -n "${2:-}" ] && export MYSQL_PROXY_EXE=$2
# shellcheck source=scripts/mysql/lib.sh
. "$here/../../scripts/mysql/lib.sh"
case "$mode" in
  uring | dpdk | dpdk-ipv6) ;;
  *) echo "usage: $0 uring|dpdk|dpdk-ipv6 [PROXY]" >&2; exit 2 ;;
esac
# Debian's interpreters: python3-pymysql lives in /usr/bin/python3's path.
python=/usr/bin/python3
if ! "$python" -c 'import pymysql' 2>/dev/null || ! php -r 'exit(extension_loaded("mysqli") ? 0 : 1);' 2>/dev/null ||
  ! NODE_PATH=/usr/share/nodejs node -e 'require("mysql").createConnection({})' 2>/dev/null; then
  echo "SKIP: needs python3-pymysql, php-cli, php-mysql and node-mysql (scripts/install-deps)"
  exit 77
fi
batteries=(
  "pymysql|$python $here/clients/pymysql_battery.py"
  "mysqli|php -d mysqli.allow_local_infile=1 $here/clients/mysqli_battery.php"
  "node-mysql|env NODE_PATH=/usr/share/nodejs node $here/clients/node_mysql_battery.js"
)
failures=0

rc=0
[ "$mode" = dpdk-ipv6 ] && export MYSQL_DB_BIND=0.0.0.0,::  # MariaDB makes :: IPv6 only
mysql_setup "clients-$mode" || rc=$?
[ "$rc" -eq 77 ] && { echo "SKIP: not root"; exit 77; }
mysql_endpoints "$mode"
mysql_db_start db1 3306
# The 17 MiB blob needs a bigger packet than MariaDB's 16 MiB default.
mysql_client --socket="$mysql_scratch/db1/sock" -uroot -e "SET GLOBAL max_allowed_packet = 64 * 1024 * 1024" ||
  mysql_die "cannot raise max_allowed_packet"
mysql_sysbench_prepare 127.0.0.1 3306
mysql_proxy_start "$mode" "$mysql_listen" "$mysql_db_host:3306" -- --stats-interval-s 0 || {
  echo "FAIL: $mode: the proxy does not serve on $mysql_listen; its stderr:"
  [ -n "$mysql_proxy_err" ] && sed 's/^/  /' "$mysql_proxy_err" | tail -20
  exit 1
}

for b in "${batteries[@]}"; do
  name=${b%%|*} cmd=${b#*|}
  direct=$mysql_scratch/$name.direct proxied=$mysql_scratch/$name.proxied
  brc=0
  # shellcheck disable=SC2086
  timeout -k 5 120 ip netns exec "$mysql_ns" $cmd 127.0.0.1 3306 >"$direct" 2>&1 || brc=$?
  prc=0
  # shellcheck disable=SC2086
  timeout -k 5 120 ip netns exec "$mysql_ns" $cmd "$mysql_host" "$mysql_port" >"$proxied" 2>&1 || prc=$?
  checks=$(wc -l <"$direct")
  if [ "$brc" -ne 0 ]; then
    echo "FAIL: $name against MariaDB itself exited $brc:"
    tail -5 "$direct" | sed 's/^/  /'
    failures=$((failures + 1))
  elif [ "$prc" -ne 0 ] || ! cmp -s "$direct" "$proxied"; then
    echo "FAIL: $name through the proxy ($mode) differs from MariaDB directly (exit $prc):"
    diff "$direct" "$proxied" | cut -c1-300 | head -20 | sed 's/^/  /'
    failures=$((failures + 1))
  else
    echo "PASS: $name: $checks checks, the same through the proxy ($mode) as from MariaDB"
  fi
done

kill -0 "$mysql_proxy_pid" 2>/dev/null || { echo "FAIL: the proxy died"; failures=$((failures + 1)); }
prc=0
mysql_proxy_stop || prc=$?
[ "$prc" = 0 ] || { echo "FAIL: the proxy exited $prc on SIGTERM"; failures=$((failures + 1)); }
if [ "$failures" -ne 0 ]; then
  echo "FAIL: $mode: $failures check(s) failed; proxy stderr:"
  sed 's/^/  /' "$mysql_proxy_err" | tail -20
  exit 1
fi
echo "PASS: $mode: all client batteries"
