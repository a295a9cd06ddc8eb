#!/usr/bin/env python3
# tests/attack/attack.py: the attack suite. affine-echo on the userspace
# stack over net_tap, in a namespace of its own (netns.py); from the tap's
# kernel side, scapy floods it while kernel clients use it. Each case prints
# one JSON line of figures and asserts: the service still serves, the
# packet pool never runs dry and returns to its baseline, the process's
# memory stays bounded, and what the case is about (below).
#
#   tests/attack/attack.py AFFINE_ECHO [CASE...]
#
#   syn_flood     spoofed SYNs (198.18.0.0/15) at the highest rate one
#                 core sends, while a kernel client connects again and
#                 again: every connect succeeds (p50/p99 reported), cookies
#                 are sent, the connections held stay at the SYN queue's bound
#   blind_inject  RST, SYN and data with guessed sequence numbers against a
#                 live kernel connection's 4-tuple: it survives, its bytes
#                 come back right
#   bad_options   SYNs and segments with malformed TCP options
#   fragments     overlapping and tiny IPv4 fragments that never complete
#   out_of_order  in-window segments past a hole, on a live connection:
#                 it still works, and its memory is given back at the reset
#   arp_flood     ARP requests and replies from random addresses
#   bad_checksums TCP segments and IPv4 headers with wrong checksums
#
# ATTACK_SECONDS (default 3; syn_flood twice that) is each flood's length.
# Exit 0 pass, 1 fail, 77 skip (no root, netns or scapy).

import json
import os
import random
import socket
import statistics
import subprocess
import sys
import threading
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import netns  # noqa: E402

SECONDS = float(os.environ.get("ATTACK_SECONDS", "3"))
BACKLOG = 64
GATEWAY = netns.KERNEL_IP  # spoofed sources are off-link: their replies go here, and die
CASES = ["syn_flood", "blind_inject", "bad_options", "fragments", "out_of_order", "arp_flood", "bad_checksums"]


# ---- inside the namespace: floods and kernel clients -------------------------

def spoofed():
    return f"198.{18 + random.randrange(2)}.{random.randrange(256)}.{random.randrange(1, 255)}"


def frames(kind, args):
    """The frames a flood cycles through, as bytes."""
    from scapy.all import ARP, IP, TCP, UDP, Ether, Raw
    from peer import link, tcp_bytes
    iface = args[0]
    mac, dmac = link(iface, netns.KERNEL_IP, netns.AFFINE_IP)
    eth = Ether(src=mac, dst=dmac)
    a, port = netns.AFFINE_IP, netns.ECHO_PORT
    r32 = lambda: random.randrange(1 << 32)  # noqa: E731
    out = []
    if kind == "syn":
        for _ in range(8192):
            out.append(eth / IP(src=spoofed(), dst=a) / TCP(
                sport=random.randrange(1024, 65536), dport=port, flags="S", seq=r32(), window=64240,
                options=[("MSS", 1460), ("SAckOK", b""), ("Timestamp", (r32(), 0)), ("WScale", 7)]))
    elif kind == "blind":
        cport = int(args[1])
        for i in range(6144):
            flags = ("R", "S", "PA")[i % 3]
            # With a guessed timestamp (the connection has them): about half
            # pass PAWS and meet RFC 5961's checks.
            ts = [] if flags == "R" else [("Timestamp", (r32(), r32()))]
            t = TCP(sport=cport, dport=port, flags=flags, seq=r32(), ack=r32() if flags == "PA" else 0, window=502,
                    options=ts)
            out.append(eth / IP(src=netns.KERNEL_IP, dst=a) / t / (Raw(b"injected" * 8) if flags == "PA" else b""))
    elif kind == "options":
        bad = [b"\x02\x03\x05", b"\x02\x00", b"\x02\x01", b"\x03\x02", b"\x03\x04\x0e\x00", b"\x04\x03",
               b"\x05\x03\x00", b"\x05\x0b" + b"\x00" * 9, b"\x08\x09" + b"\x00" * 7, b"\x08\xff",
               b"\x02\x28" + b"\x00" * 38, b"\xfe\x01", b"\xfd\x00\x01\x02", b"\x01" * 39 + b"\x02",
               b"\x13\x12" + b"\x00" * 16, b"\x1e\x03\x00", b"\x22\x02"]
        for i in range(4096):
            opts = b"".join(random.choice(bad) for _ in range(random.randrange(1, 4)))[:40]
            syn = i % 2 == 0
            src = spoofed() if syn else netns.KERNEL_IP
            seg = tcp_bytes(src, a, random.randrange(1024, 65536), port, r32(), 0 if syn else r32(),
                            0x02 if syn else 0x18, 65535, opts, b"" if syn else b"x" * 32)
            out.append(eth / IP(src=src, dst=a, proto=6) / Raw(seg))
    elif kind == "fragments":
        for i in range(8192):
            ip_id, src = random.randrange(1 << 16), spoofed()
            if i % 2 == 0:  # tiny: 8 bytes somewhere in a datagram whose end never comes
                out.append(eth / IP(src=src, dst=a, id=ip_id, proto=17, flags="MF",
                                    frag=random.randrange(1, 8000)) / Raw(os.urandom(8)))
            else:  # overlapping: the same bytes offered again, shifted by 8
                off = random.randrange(0, 4000)
                for k in range(2):
                    out.append(eth / IP(src=src, dst=a, id=ip_id, proto=6, flags="MF", frag=off + k) /
                               Raw(os.urandom(24)))
    elif kind == "arp":
        for i in range(8192):
            hw = "02:%02x:%02x:%02x:%02x:%02x" % tuple(random.randrange(256) for _ in range(5))
            who = f"10.88.{random.randrange(1, 255)}.{random.randrange(1, 255)}"
            if i % 3 == 0:
                out.append(Ether(src=hw, dst="ff:ff:ff:ff:ff:ff") / ARP(op=1, hwsrc=hw, psrc=who, pdst=a))
            elif i % 3 == 1:
                out.append(Ether(src=hw, dst="ff:ff:ff:ff:ff:ff") / ARP(op=2, hwsrc=hw, psrc=who, pdst=who))
            else:
                out.append(Ether(src=hw, dst="ff:ff:ff:ff:ff:ff") / ARP(op=1, hwsrc=hw, psrc=who, pdst=spoofed()))
    elif kind == "checksums":
        for i in range(4096):
            src = spoofed()
            if i % 3 == 0:
                seg = tcp_bytes(src, a, random.randrange(1024, 65536), port, r32(), 0, 0x02, 65535,
                                bad_checksum=True)
                out.append(eth / IP(src=src, dst=a, proto=6) / Raw(seg))
            elif i % 3 == 1:
                out.append(eth / IP(src=src, dst=a, chksum=0x1234) / TCP(dport=port, flags="S", seq=r32()))
            else:
                out.append(eth / IP(src=src, dst=a) / UDP(sport=53, dport=9, chksum=0x4321) / Raw(b"q" * 32))
    return [bytes(f) for f in out]


def blast(iface, frames_, seconds):
    """Send the frames round and round for `seconds`, as fast as one core
    can; (sent, when it started, when it ended), CLOCK_MONOTONIC."""
    s = socket.socket(socket.AF_PACKET, socket.SOCK_RAW)
    s.bind((iface, 0))
    sent, start, n = 0, time.monotonic(), len(frames_)
    end = start + seconds
    while time.monotonic() < end:
        for f in frames_[sent % n:sent % n + 512] or frames_[:512]:
            try:
                s.send(f)
                sent += 1
            except OSError:  # the tap's queue is full: the next one
                time.sleep(0)
    s.close()
    return sent, start, time.monotonic()


def flood(kind, seconds, args):
    fs = frames(kind, args)
    sent, start, end = blast(args[0], fs, seconds)
    netns.json_line(flood=kind, sent=sent, seconds=round(end - start, 2), pps=round(sent / (end - start)),
                    start=start, end=end)


def until(stop_file):
    """Whether to go on: no stop file yet (a minute at the most)."""
    limit = time.monotonic() + 60
    return lambda: not os.path.exists(stop_file) and time.monotonic() < limit


def connects(stop_file, seconds=None):
    """A kernel client connecting again and again (a few bytes echoed each
    time), until the stop file appears (or `seconds` have passed)."""
    times, failures, first_error = [], 0, None
    go = until(stop_file) if seconds is None else (lambda end=time.monotonic() + seconds: time.monotonic() < end)
    first = time.monotonic()
    while go():
        t = time.monotonic()
        try:
            with socket.create_connection((netns.AFFINE_IP, netns.ECHO_PORT), timeout=10) as c:
                times.append(time.monotonic() - t)
                c.settimeout(10)
                c.sendall(b"ping-pong-16byte")
                got = b""
                while len(got) < 16:
                    b = c.recv(16 - len(got))
                    if not b:
                        break
                    got += b
                if got != b"ping-pong-16byte":
                    raise OSError(f"echo came back as {got!r}")
        except OSError as e:
            failures += 1
            first_error = first_error or f"{e!r} after {(time.monotonic() - t) * 1000:.1f} ms, connect {len(times) + failures}"
    q = statistics.quantiles(times, n=100) if len(times) >= 2 else [0] * 99
    netns.json_line(connects=len(times) + failures, ok=len(times), failures=failures,
                    p50_ms=round(q[49] * 1000, 2), p99_ms=round(q[98] * 1000, 2),
                    max_ms=round(max(times, default=0) * 1000, 2), first_error=first_error,
                    start=first, end=time.monotonic())


def stream(stop_file, port_file):
    """One kernel connection kept busy: a pattern written and read back,
    compared byte for byte, until the stop file appears."""
    c = socket.create_connection((netns.AFFINE_IP, netns.ECHO_PORT), timeout=10)
    c.settimeout(10)
    with open(port_file + ".tmp", "w") as f:
        f.write(str(c.getsockname()[1]))
    os.rename(port_file + ".tmp", port_file)
    moved, error, i = 0, None, 0
    go, first = until(stop_file), time.monotonic()
    try:
        while go():
            chunk = bytes((i + k) % 251 for k in range(4096))
            i += 1
            c.sendall(chunk)
            got = b""
            while len(got) < len(chunk):
                b = c.recv(len(chunk) - len(got))
                if not b:
                    raise OSError("closed by the server")
                got += b
            if got != chunk:
                raise OSError("echoed bytes differ")
            moved += len(chunk)
    except OSError as e:
        error = repr(e)
    c.close()
    netns.json_line(stream_bytes=moved, error=error, start=first, end=time.monotonic())


def out_of_order(iface, seconds):
    """A scapy connection, then segments past RCV.NXT that never meet it."""
    from scapy.all import IP, Raw
    from peer import Conn, Peer
    p = Peer(iface, netns.KERNEL_IP, netns.AFFINE_IP)
    c = Conn(p, netns.ECHO_PORT)
    if not c.open():
        netns.json_line(ooo="no handshake")
        return
    base = c.snd_nxt
    segs = []
    for _ in range(4096):
        off = random.randrange(1, 200_000)
        segs.append(p.frame(IP(src=p.src, dst=p.dst) / c.tcp("A", seq=(base + off) % (1 << 32)) /
                            Raw(b"o" * random.randrange(1, 1400))))
    sent, start, end = blast(iface, segs, seconds)
    works = c.echo(b"in order after the flood")
    m = p.mark()
    c.reset()  # at RCV.NXT: the connection ends, its out-of-order bytes go
    time.sleep(0.2)
    p.close()
    netns.json_line(flood="ooo", sent=sent, seconds=round(end - start, 2), pps=round(sent / (end - start)),
                    still_works=works,
                    replies_to_reset=len(c.mine(p.since(m))))


# ---- the orchestration ------------------------------------------------------

class Sampler:
    """The affine process's metrics every half second, while a case runs."""

    def __init__(self, aff):
        self.aff, self.samples, self.stop = aff, [], threading.Event()
        self.t = threading.Thread(target=self.run, daemon=True)
        self.t.start()

    def run(self):
        while not self.stop.is_set():
            try:
                self.samples.append(self.aff.metrics())
            except OSError:
                pass
            self.stop.wait(0.5)

    def done(self):
        self.stop.set()
        self.t.join()
        return self.samples


def inside(lab, ns, *args):
    return lab.spawn(ns, sys.executable, os.path.abspath(__file__), *args, stdout=subprocess.PIPE, text=True)


def result(p):
    out, _ = p.communicate(timeout=120)
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    return lines[-1] if lines else {"error": f"no result (exit {p.returncode})"}


def serves(lab, ns):
    return result(inside(lab, ns, "--connects", "-", "0.5"))


def beside(lab, ns, client, flood_args):
    """The flood, while the client runs; then the client stopped. Both
    results, and whether the client ran all through the flood."""
    stop = os.path.join(lab.scratch, "stop")
    f = result(inside(lab, ns, "--flood", *flood_args))
    open(stop, "w").close()
    c = result(client)
    os.remove(stop)
    c["through_the_flood"] = c.get("start", 1e18) < f.get("start", 0) and c.get("end", 0) > f.get("end", 1e18)
    return f, c


def run_case(name, lab, ns, aff, iface):
    base = aff.metrics()
    sampler = Sampler(aff)
    fig = {"case": name}
    stop = os.path.join(lab.scratch, "stop")
    if name == "syn_flood":
        f, fig["client"] = beside(lab, ns, inside(lab, ns, "--connects", stop), ["syn", 2 * SECONDS, iface])
    elif name == "blind_inject":
        port_file = os.path.join(lab.scratch, "stream.port")
        client = inside(lab, ns, "--stream", stop, port_file)
        for _ in range(100):
            if os.path.exists(port_file):
                break
            time.sleep(0.05)
        with open(port_file) as pf:
            f, fig["client"] = beside(lab, ns, client, ["blind", SECONDS, iface, pf.read()])
    elif name == "out_of_order":
        f = result(inside(lab, ns, "--ooo", SECONDS, iface))
    else:
        kind = {"bad_options": "options", "fragments": "fragments", "arp_flood": "arp",
                "bad_checksums": "checksums"}[name]
        f = result(inside(lab, ns, "--flood", kind, SECONDS, iface))
    samples = sampler.done()
    fig.update({k: v for k, v in f.items() if k not in ("flood", "start", "end")})
    for k in ("start", "end"):
        fig.get("client", {}).pop(k, None)
    fig["serves_after"] = {k: v for k, v in serves(lab, ns).items() if k not in ("start", "end")}
    # The pool back to its baseline: give the stack a few seconds (ARP's
    # pending queue and TCP's timers let go of what they hold).
    limit = base["affine_packet_pool_in_use"] + 64
    after = aff.metrics()
    for _ in range(40):
        if after["affine_packet_pool_in_use"] <= limit:
            break
        time.sleep(0.25)
        after = aff.metrics()
    peak = max([s["affine_packet_pool_in_use"] for s in samples] + [after["affine_packet_pool_in_use"]])
    rx = after["affine_stack_rx_packets_total"] - base["affine_stack_rx_packets_total"]
    fig.update({
        "stack_rx_packets": rx,
        "pool_in_use": {"before": base["affine_packet_pool_in_use"], "peak": peak,
                        "after": after["affine_packet_pool_in_use"], "size": after["affine_packet_pool_size"]},
        "connections": {"before": base["affine_stack_tcp_connections"],
                        "peak": max([s["affine_stack_tcp_connections"] for s in samples] +
                                    [after["affine_stack_tcp_connections"]]),
                        "after": after["affine_stack_tcp_connections"]},
        "syn_received": {"before": base["affine_stack_tcp_syn_received"],
                         "peak": max([s["affine_stack_tcp_syn_received"] for s in samples] +
                                     [after["affine_stack_tcp_syn_received"]]),
                         "after": after["affine_stack_tcp_syn_received"]},
        "rss_mib": {"before": round(base["rss_bytes"] / 2**20, 1), "after": round(after["rss_bytes"] / 2**20, 1)},
        "drops": {k: v - base["drops"].get(k, 0) for k, v in after["drops"].items() if v != base["drops"].get(k, 0)},
        "syn_cookies_sent": after["affine_stack_tcp_syn_cookies_sent_total"] -
        base["affine_stack_tcp_syn_cookies_sent_total"],
    })
    checks = {
        "affine alive": aff.alive(),
        "serves after": fig["serves_after"].get("failures", 1) == 0 and fig["serves_after"].get("ok", 0) > 0,
        "pool never ran dry": peak < after["affine_packet_pool_size"] and "no_mbuf" not in fig["drops"],
        "pool back to baseline (+64)": after["affine_packet_pool_in_use"] <= limit,
        "memory bounded (+64 MiB)": after["rss_bytes"] - base["rss_bytes"] <= 64 << 20,
    }
    if name == "syn_flood":
        c = fig["client"]
        checks["every connect succeeded"] = c.get("failures", 1) == 0 and c.get("ok", 0) > 0
        checks["client connected all through the flood"] = c["through_the_flood"]
        checks["cookies sent"] = fig["syn_cookies_sent"] > 0
        # SYN-RECEIVED (the backlog), plus the client's and the metrics'.
        checks["SYN queue at its bound"] = fig["syn_received"]["peak"] <= BACKLOG
    if name == "blind_inject":
        checks["connection survived, bytes right"] = fig["client"].get("error") is None and \
            fig["client"].get("stream_bytes", 0) > 0
        checks["stream ran all through the flood"] = fig["client"]["through_the_flood"]
        # The guesses met the connection (RFC 5961 3.2's unacceptable RSTs),
        # not the listener.
        checks["injection reached the connection"] = fig["drops"].get("tcp.rst_unacceptable", 0) > 0
    if name == "out_of_order":
        checks["connection works after"] = fig.get("still_works") is True
    fig["failed"] = [k for k, ok in checks.items() if not ok]
    netns.json_line(**fig)
    return not fig["failed"]


def main():
    a = sys.argv[1:]
    if a and a[0] == "--flood":
        return flood(a[1], float(a[2]), a[3:])
    if a and a[0] == "--connects":  # STOP-FILE [SECONDS]
        return connects(a[1], float(a[2]) if len(a) > 2 else None)
    if a and a[0] == "--stream":  # STOP-FILE PORT-FILE
        return stream(a[1], a[2])
    if a and a[0] == "--ooo":
        return out_of_order(a[2], float(a[1]))
    if not a:
        print("usage: attack.py AFFINE_ECHO [CASE...]", file=sys.stderr)
        return 2
    netns.skip_unless_able()
    exe, names = os.path.abspath(a[0]), a[1:] or CASES
    ok = True
    start = time.monotonic()
    with netns.Lab("suite") as lab:
        ns = lab.namespace("s")
        netns.no_kernel_resets(ns)
        aff = lab.affine(ns, exe, sets=['tcp.syn_cookies="auto"'], backlog=BACKLOG, gateway=GATEWAY)
        for name in names:
            ok = run_case(name, lab, ns, aff, aff.iface) and ok
        if not aff.alive():
            netns.log(f"affine-echo died: {aff.stderr()}")
            ok = False
    netns.json_line(summary="attack", cases=len(names), passed=ok, seconds=round(time.monotonic() - start, 1))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main() or 0)
