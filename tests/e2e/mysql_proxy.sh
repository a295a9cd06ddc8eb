#!/usr/bin/env bash
# End to end: affine-mysql-proxy between sysbench / the mariadb client and a
# real MariaDB, all inside a network namespace this script creates
# (scripts/mysql/lib.sh).
#
#   tests/e2e/mysql_proxy.sh uring|dpdk[-backend-down]|dpdk-ipv6 [PROXY]
#
#   uring, dpdk    the proxy on kernel sockets / on affine's stack over a
#                  net_tap port: mariadb client queries come back right,
#                  sysbench oltp_read_only runs with zero errors, SIGTERM
#                  ends the proxy with status 0 and a stats line.
#   dpdk-ipv6      dpdk over IPv6 only: the tap's kernel side holds
#                  fd88::1 and no IPv4, sysbench and the client reach the
#                  proxy at [fd88::2], the proxy MariaDB at [fd88::1]
#                  (issue 21).
#   *-backend-down two MariaDBs behind the proxy; one is killed while
#                  sysbench runs: sysbench sees errors, the proxy keeps
#                  running, new sessions go to the other one, SIGTERM
#                  exits 0 and the stats line lists the dead one down.
#
# PROXY defaults to build/apps/mysql-proxy/affine-mysql-proxy. E2E_SECONDS
# (5) is the length of a sysbench run. Exit 0 pass, 1 fail, 77 not root.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
mode=${1:-}
[ -n "${2:-}" ] && export MYSQL_PROXY_EXE=$2
# shellcheck source=scripts/mysql/lib.sh
. "$here/../../scripts/mysql/lib.sh"
seconds=${E2E_SECONDS:-5}
failures=0

pass() { echo "PASS: $*"; }
fail() { echo "FAIL: $*"; failures=$((failures + 1)); }
check() {  # description command...: pass when the command succeeds
  local what=$1
  shift
  if "$@"; then pass "$what"; else fail "$what"; fi
}
field() { python3 -c 'import json, sys; print(json.loads(sys.argv[1]).get(sys.argv[2], ""))' "$1" "$2"; }

case "$mode" in
  uring | dpdk | uring-backend-down | dpdk-backend-down | dpdk-ipv6) ;;
  *) echo "usage: $0 uring|dpdk[-backend-down]|dpdk-ipv6 [PROXY]" >&2; exit 2 ;;
esac
rc=0
[ "$mode" = dpdk-ipv6 ] && export MYSQL_DB_BIND=0.0.0.0,::  # MariaDB makes :: IPv6 only
mysql_setup "e2e-$mode" || rc=$?
[ "$rc" -eq 77 ] && { echo "SKIP: not root"; exit 77; }

proxy_mode=${mode%-backend-down}
mysql_endpoints "$proxy_mode"
db_host=$mysql_db_host listen=$mysql_listen host=$mysql_host port=$mysql_port

# zero errors, exit status 0 and at least one transaction
sysbench_clean() { [ "$(field "$1" errors)" = 0 ] && [ "$(field "$1" exit_status)" = 0 ] &&
  [ "$(field "$1" transactions)" != "" ] && [ "$(field "$1" transactions)" != 0 ]; }
stats_line_present() { grep -q 'sessions open=' "$mysql_proxy_out"; }
proxy_failed() {  # the proxy did not start serving: its stderr, exit 1
  echo "FAIL: $mode: the proxy ($proxy_mode) does not serve on $listen; its stderr:"
  [ -n "$mysql_proxy_err" ] && sed 's/^/  /' "$mysql_proxy_err" | tail -20
  exit 1
}

mysql_db_start db1 3306
db1_pid=$mysql_db_pid
mysql_sysbench_prepare 127.0.0.1 3306

if [ "$mode" = "$proxy_mode" ]; then
  mysql_proxy_start "$proxy_mode" "$listen" "$db_host:3306" -- --stats-interval-s 0 --metrics "${listen%:*}:9104" ||
    proxy_failed
  pass "proxy ($proxy_mode) on $listen answers a query"
  got=$(mysql_query "$host" "$port" 'SELECT @@port, COUNT(*) FROM sbtest1' 2>&1 || true)
  check "mariadb client: SELECT @@port, COUNT(*) = '3306 10000' (got '${got//$'\t'/ }')" \
    test "$got" = $'3306\t10000'
  got=$(mysql_query "$host" "$port" 'SHOW TABLES; SELECT 42' 2>&1 | tr '\n' ' ' || true)
  check "mariadb client: two result sets in one query (got '$got')" \
    test "$got" = "sbtest1 sbtest2 sbtest3 sbtest4 42 "
  got=$(mysql_query "$host" "$port" \
    "PREPARE s FROM 'SELECT k FROM sbtest2 WHERE id = ?'; SET @i = 7; EXECUTE s USING @i; DEALLOCATE PREPARE s" \
    2>&1 || true)
  want=$(mysql_query 127.0.0.1 3306 'SELECT k FROM sbtest2 WHERE id = 7')
  check "mariadb client: PREPARE/EXECUTE through the proxy matches MariaDB ($got)" test "$got" = "$want"
  got=$(mysql_client -h "$host" -P "$port" -usbtest -pwrong --connect-timeout=10 -e 'SELECT 1' 2>&1 || true)
  check "mariadb client: a wrong password gets MariaDB's 1045 through the proxy" \
    grep -q 'ERROR 1045' <<<"$got"

  result=$(mysql_sysbench_run "$host" "$port" 4 "$seconds" "$mysql_scratch/sysbench.out")
  echo "sysbench oltp_read_only 4 threads ${seconds}s through the proxy ($proxy_mode): $result"
  check "sysbench through the proxy ($proxy_mode): zero errors, exit 0" sysbench_clean "$result"
  [ "$failures" -eq 0 ] || sed 's/^/  sysbench: /' "$mysql_scratch/sysbench.out" | tail -15

  metrics=$(mysql_ns_exec curl -g -s --max-time 5 "http://${listen%:*}:9104/metrics" 2>&1 || true)
  sessions=$(sed -n 's/^affine_mysql_sessions_opened_total \([0-9]*\)$/\1/p' <<<"$metrics")
  check "Prometheus endpoint $host:9104/metrics counts at least the 9 sessions opened (got '${sessions:-no such line}')" \
    test "${sessions:-0}" -ge 9
  check "proxy still running after sysbench" kill -0 "$mysql_proxy_pid"
  prc=0
  mysql_proxy_stop || prc=$?
  check "proxy exits 0 on SIGTERM (status $prc)" test "$prc" = 0
  check "proxy printed a stats line at exit" stats_line_present
  echo "proxy: $(mysql_proxy_stats)"
else
  mysql_db_start db2 3316
  mysql_sysbench_prepare 127.0.0.1 3316
  mysql_proxy_start "$proxy_mode" "$listen" "$db_host:3306" "$db_host:3316" -- \
    --stats-interval-s 0 --health-interval-ms 200 || proxy_failed
  pass "proxy ($proxy_mode) on $listen with backends :3306 and :3316 answers a query"
  mysql_sysbench_run "$host" "$port" 4 $((seconds + 3)) "$mysql_scratch/sysbench.out" >"$mysql_scratch/result" &
  sb=$!
  sleep 2
  kill -KILL "$db1_pid" 2>/dev/null || true
  wait "$db1_pid" 2>/dev/null || true
  mysql_forget "$db1_pid"
  echo "killed MariaDB :3306 while sysbench runs"
  wait "$sb" || true
  result=$(cat "$mysql_scratch/result")
  echo "sysbench across the kill: $result"
  check "sysbench sees errors when its backend dies (errors=$(field "$result" errors))" \
    test "$(field "$result" errors)" != 0
  check "proxy still running after its backend died" kill -0 "$mysql_proxy_pid"
  sleep 0.5  # a health check (200 ms) marks :3306 down
  ports=$(for _ in 1 2 3 4 5 6; do mysql_query "$host" "$port" 'SELECT @@port' 2>&1 || true; done | tr '\n' ' ')
  check "six new sessions all go to the live backend (got '$ports')" \
    test "$ports" = "3316 3316 3316 3316 3316 3316 "
  result=$(mysql_sysbench_run "$host" "$port" 2 2 "$mysql_scratch/sysbench2.out")
  echo "sysbench after the kill: $result"
  check "sysbench after the kill: zero errors" sysbench_clean "$result"
  prc=0
  mysql_proxy_stop || prc=$?
  check "proxy exits 0 on SIGTERM (status $prc)" test "$prc" = 0
  stats=$(mysql_proxy_stats)
  echo "proxy: $stats"
  check "stats line lists :3306 down" grep -q ':3306 primary down' <<<"$stats"
fi

if [ "$failures" -ne 0 ]; then
  echo "FAIL: $mode: $failures check(s) failed; proxy stderr:"
  sed 's/^/  /' "$mysql_proxy_err" | tail -20
  exit 1
fi
echo "PASS: $mode: all checks"
