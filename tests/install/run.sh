#!/usr/bin/env bash
# tests/install: affine as a user gets it. Installs this build into a scratch
# destdir, checks what is there (libaffine.so.N, libaffine.a, the public
# headers and only those, affine.pc), compiles every installed header on its
# own, builds examples/ out of tree with meson and with CMake against the
# installed affine.pc (never the source tree), links one statically, and runs
# the echo example for a round trip on kernel sockets (127.0.0.1) and, where
# affine has DPDK, on a net_tap port in a network namespace of its own.
#
#   tests/install/run.sh BUILD_DIR SOURCE_DIR
# Prints "install: N passed, 0 failed" and exits 0, or names what failed.
set -uo pipefail
build=$(cd "$1" && pwd) src=$(cd "$2" && pwd)
scratch=$(mktemp -d /tmp/affine-install.XXXXXX)
ns=affine-inst-$$
cleanup() {
  for pid in $(jobs -p); do kill -KILL "$pid" 2>/dev/null; done
  if ip netns list 2>/dev/null | grep -qw "$ns"; then
    for pid in $(ip netns pids "$ns" 2>/dev/null); do kill -KILL "$pid" 2>/dev/null; done
    ip netns del "$ns" 2>/dev/null
  fi
  rm -rf "$scratch"
}
trap cleanup EXIT
passed=0 failed=0
pass() { passed=$((passed + 1)); echo "ok: $*"; }
fail() { failed=$((failed + 1)); echo "FAILED: $*"; }
check() { local what=$1; shift; if "$@" >"$scratch/last.log" 2>&1; then pass "$what"; else fail "$what"; tail -20 "$scratch/last.log"; fi; }

dest=$scratch/dest
if ! meson install -C "$build" --no-rebuild --quiet --destdir "$dest" >"$scratch/install.log" 2>&1; then
  cat "$scratch/install.log"; fail "meson install"; echo "install: $passed passed, $failed failed"; exit 1
fi
prefix=$(meson introspect "$build" --buildoptions | python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"]=="prefix"))')
libdir=$(meson introspect "$build" --buildoptions | python3 -c 'import json,sys; print(next(o["value"] for o in json.load(sys.stdin) if o["name"]=="libdir"))')
case "$libdir" in /*) ;; *) libdir=$prefix/$libdir ;; esac
root=$dest$prefix lib=$dest$libdir

# What is installed: the shared library under its soname, the static one, affine.pc.
check "libaffine.so.N with its soname" bash -c "ls '$lib'/libaffine.so.[0-9]* && readelf -d '$lib'/libaffine.so | grep -q 'SONAME.*libaffine.so.[0-9]'"
check "libaffine.a" test -f "$lib/libaffine.a"
check "affine.pc" test -f "$lib/pkgconfig/affine.pc"
# The public headers and only those: include/affine/*.hh of the source tree.
check "the public headers, and only those" diff <(cd "$src/include/affine" && ls ./*.hh | sed 's|^\./||' | sort) \
  <(cd "$root/include/affine" && find . -type f | sed 's|^\./||' | sort)

# affine.pc is relocatable (its prefix is ${pcfiledir}/../../..): used where
# it lies in the scratch tree, as a user would after a --destdir install.
export PKG_CONFIG_PATH=$lib/pkgconfig
export LD_LIBRARY_PATH=$lib
cflags=$(pkg-config --cflags affine) || fail "pkg-config --cflags affine"
check "pkg-config --cflags affine points into the install" bash -c "echo '$cflags' | grep -q -- '-I$root/include\|-I$lib/pkgconfig/../../../include'"
# Only what the public headers need: affine's include directory and fmt's.
check "pkg-config --cflags affine names no private package's flags" bash -c "! echo '$cflags' | grep -q -e dpdk -e rte_config -e march -e TOML"
# Each public header alone, against the installed tree only (-nostdinc++ is
# not wanted: the C++ library is the system's; the project's own source tree
# is never on the path).
for h in "$root"/include/affine/*.hh; do
  name=affine/$(basename "$h")
  check "$name compiles on its own" bash -c "echo '#include <$name>' | c++ -std=c++23 -fsyntax-only -Wall -Wextra -Werror -x c++ - $cflags"
done

# The examples, copied out of the source tree and built there.
cp -r "$src/examples" "$scratch/examples"
for ex in echo-server http-server; do
  check "$ex: meson" bash -c "cd '$scratch/examples/$ex' && meson setup build-meson >/dev/null && ninja -C build-meson"
  check "$ex: cmake" bash -c "cd '$scratch/examples/$ex' && cmake -S . -B build-cmake >/dev/null && cmake --build build-cmake"
done
check "echo-server links libaffine.so" bash -c "ldd '$scratch/examples/echo-server/build-meson/echo-server' | grep -q '$lib/libaffine.so'"
static_libs=$(pkg-config --static --libs affine | sed 's/ -laffine / /')
check "echo-server: static link (libaffine.a, pkg-config --static)" bash -c "c++ -std=c++23 -o '$scratch/echo-static' '$scratch/examples/echo-server/main.cc' $cflags '$lib/libaffine.a' $static_libs && ! ldd '$scratch/echo-static' | grep -q libaffine"

# A round trip through a running echo example: SEND bytes to HOST:PORT, read them back.
round_trip() {  # round_trip [netns] HOST PORT
  local exec=()
  if [ "$1" = "--ns" ]; then exec=(ip netns exec "$ns"); shift; fi
  "${exec[@]}" python3 - "$1" "$2" <<'PY'
import os, socket, sys, time
host, port = sys.argv[1], int(sys.argv[2])
deadline = time.time() + 10
while True:
    try:
        s = socket.create_connection((host, port), timeout=5); break
    except OSError:
        if time.time() > deadline: raise
        time.sleep(0.1)
data = os.urandom(256 * 1024)
s.sendall(data); s.shutdown(socket.SHUT_WR)
got = bytearray()
while True:
    b = s.recv(65536)
    if not b: break
    got += b
sys.exit(0 if bytes(got) == data else 1)
PY
}
wait_listening() {  # wait_listening LOG PID
  for _ in $(seq 200); do grep -q "listening on" "$1" 2>/dev/null && return 0; kill -0 "$2" 2>/dev/null || return 1; sleep 0.05; done
  return 1
}

# Kernel sockets: no [[port]], so io_uring on 127.0.0.1.
port=$((20000 + $$ % 20000))
"$scratch/examples/echo-server/build-cmake/echo-server" "$port" --set 'reactor.cores=1' >"$scratch/uring.log" 2>&1 &
pid=$!
if wait_listening "$scratch/uring.log" "$pid"; then
  check "echo-server on kernel sockets: 256 KiB round trip on 127.0.0.1" round_trip 127.0.0.1 "$port"
else
  fail "echo-server on kernel sockets did not start: $(head -3 "$scratch/uring.log")"
fi
kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null

# The HTTP example on kernel sockets: two pipelined requests answered on one
# connection, then a Connection: close request answered and the connection closed.
http_round_trip() {  # http_round_trip PORT
  python3 - "$1" <<'PY'
import socket, sys, time
port = int(sys.argv[1])
deadline = time.time() + 10
while True:
    try:
        s = socket.create_connection(("127.0.0.1", port), timeout=5); break
    except OSError:
        if time.time() > deadline: raise
        time.sleep(0.1)
req = b"GET / HTTP/1.1\r\nHost: x\r\n\r\n"
s.sendall(req + req + b"GET /last HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n")
got = b""
while True:
    b = s.recv(65536)
    if not b: break  # the server closed after the third
    got += b
ok = got.count(b"HTTP/1.1 200 OK\r\n") == 3 and got.count(b"hello from affine\n") == 3 and b"Connection: close" in got
sys.exit(0 if ok else 1)
PY
}
port=$((port + 1))
"$scratch/examples/http-server/build-meson/http-server" "$port" --set 'reactor.cores=1' >"$scratch/http.log" 2>&1 &
pid=$!
if wait_listening "$scratch/http.log" "$pid"; then
  check "http-server on kernel sockets: keep-alive, pipelining, Connection: close" http_round_trip "$port"
else
  fail "http-server on kernel sockets did not start: $(head -3 "$scratch/http.log")"
fi
kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null

# affine's own stack on a net_tap port, inside a namespace of its own.
if pkg-config --static --libs affine | grep -q rte_; then
  # As docs/api.md shows it: reactors and queues at their defaults ("auto").
  cat >"$scratch/tap.toml" <<TOML
[[port]]
driver = "dpdk"
eal = ["--no-huge", "--no-pci", "--no-shconf", "--no-telemetry", "-m", "256", "--file-prefix=affine-inst-$$", "--vdev=net_tap0,iface=afi0"]
ip = "10.97.0.2/24"
TOML
  ip netns add "$ns" && ip -n "$ns" link set lo up
  ip netns exec "$ns" "$scratch/examples/echo-server/build-meson/echo-server" 7000 --config "$scratch/tap.toml" >"$scratch/tap.log" 2>&1 &
  pid=$!
  for _ in $(seq 200); do ip -n "$ns" link show afi0 >/dev/null 2>&1 && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.05; done
  if ip -n "$ns" addr add 10.97.0.1/24 dev afi0 && ip -n "$ns" link set afi0 up && wait_listening "$scratch/tap.log" "$pid"; then
    check "echo-server on affine's stack (net_tap in a namespace): 256 KiB round trip" round_trip --ns 10.97.0.2 7000
  else
    fail "echo-server on net_tap did not start: $(head -3 "$scratch/tap.log")"
  fi
  kill "$pid" 2>/dev/null; wait "$pid" 2>/dev/null
fi

echo "install: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
