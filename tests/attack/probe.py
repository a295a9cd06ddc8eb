#!/usr/bin/env python3
# tests/attack/probe.py: a wire-level conformance probe. The same cases,
# crafted with scapy, against (a) affine's stack on net_tap and (b) Linux in
# a namespace (a veth pair, a kernel echo listener); one JSON line per case
# per target, then a summary line. It fails when affine does not give the
# RFC's answer in a case where Linux does; a case where Linux differs from
# the RFC is reported, not failed.
#
#   tests/attack/probe.py AFFINE_ECHO [CASE...]
#
# Exit 0 pass, 1 fail, 77 skip (no root, netns or scapy).
#
# Inside, `probe.py --worker TARGET IFACE SRC DST PORT COOKIES-CMD` runs the
# cases from the scapy side's namespace (netns.py sets them up).

import json
import os
import shlex
import subprocess
import sys
import time

sys.dont_write_bytecode = True  # nothing written into the source tree
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import netns  # noqa: E402

# case: (what it sends, the RFC's answer)
CASES = {
    "rst_exact": ("RST with SEQ = RCV.NXT (RFC 5961 3.2)", "aborted"),
    "rst_in_window": ("RST in the window, not RCV.NXT (RFC 5961 3.2)", "challenge_ack"),
    "rst_outside_window": ("RST outside the window (RFC 5961 3.2)", "dropped"),
    "syn_established": ("SYN in ESTABLISHED, in the window (RFC 5961 4.2)", "challenge_ack"),
    "syn_established_outside": ("SYN in ESTABLISHED, outside the window (RFC 5961 4.2)", "challenge_ack"),
    "ack_too_old": ("data, ACK older than SND.UNA - MAX.SND.WND (RFC 5961 5.2)", "dropped_with_ack"),
    "ack_beyond_snd_nxt": ("data, ACK beyond SND.NXT (RFC 5961 5.2, RFC 9293 3.10.7.4)", "dropped_with_ack"),
    # Before icmp_frag_needed: that one lowers the path MTU for every later
    # connection from the same address.
    "icmp_not_in_flight": ("ICMP frag needed, MTU 1000, quoting a seq not in flight (RFC 5927 4.1)", "ignored"),
    "icmp_frag_needed": ("ICMP frag needed, MTU 1000, quoting a seq in flight (RFC 1191, RFC 5927)",
                         "resegmented"),
    "data_outside_window": ("data beyond the receive window (RFC 9293 3.10.7.4)", "dropped_with_ack"),
    "paws_old_timestamp": ("data with a TSval older than TS.Recent (RFC 7323 5.3 R1)", "dropped_with_ack"),
    "fin": ("FIN in ESTABLISHED: acknowledged, the server closes too (RFC 9293 3.10.7.4)", "fin_acked"),
    "closed_port_syn": ("SYN to a port nobody listens on (RFC 9293 3.10.7.1)", "rst_ack"),
    "listen_bare_ack": ("an ACK to a listener, no connection (RFC 9293 3.10.7.2)", "rst_seq_of_ack"),
    "mss_1": ("SYN with MSS 1: echoed data comes in segments of the MSS floor (CVE-2019-11479)", "floor"),
    "wscale_15": ("SYN with window scale 15: taken as 14 (RFC 7323 2.3)", "shift_14"),
    # Last: a full SYN queue answers later SYNs with cookies, which carry
    # neither an MSS of 1 nor a window scale without timestamps.
    "syn_cookie": ("a fresh SYN while spoofed SYNs fill the SYN queue (RFC 4987)", "cookie_connection"),
}
BACKLOG = 8  # the listeners' SYN queue, small so that a few SYNs fill it


# ---- the cases (worker side, in the scapy namespace) ------------------------

def alive(c):
    return c.echo(b"still there?")


def after_probe(c, m, timeout=1.0, rcv_nxt=None):
    """What came back to a probe segment: an ACK of the server's RCV.NXT
    (our snd_nxt, unless said), a RST, or nothing."""
    f = c.wait(m, lambda t: t.flags.R or t.flags.A, timeout)
    if f is None:
        return "silent"
    want = c.snd_nxt if rcv_nxt is None else rcv_nxt
    return "rst" if f["TCP"].flags.R else ("ack" if f["TCP"].ack == want else "ack_of_other")


def case_rst(c, offset):
    m = c.p.mark()
    c.p.send(c.ip() / c.tcp("R", seq=(c.snd_nxt + offset) % (1 << 32)))
    reply = after_probe(c, m)
    if offset == 0:
        m = c.p.mark()
        c.send_data(b"x")
        f = c.wait(m, lambda t: True, 1.0)
        gone = f is not None and f["TCP"].flags.R
        return ("aborted" if gone else "alive"), {"reply": reply}
    ok = alive(c)
    answer = {"ack": "challenge_ack", "silent": "dropped"}.get(reply, reply) if ok else "aborted"
    return answer, {"reply": reply, "alive_after": ok}


def case_syn(c, offset):
    m = c.p.mark()
    c.p.send(c.ip() / c.tcp("S", seq=(c.snd_nxt + offset) % (1 << 32), ack=0))
    reply = after_probe(c, m)
    ok = alive(c)
    answer = "challenge_ack" if reply == "ack" and ok else (reply if ok else "aborted")
    return answer, {"reply": reply, "alive_after": ok}


def case_unacceptable(c, data, **how):
    """Data the server must not take (`how`: a bad seq, ack or tsval): it
    answers with an ACK of its RCV.NXT or nothing, and the connection
    lives."""
    m, before = c.p.mark(), c.snd_nxt
    c.send_data(data, **how)
    c.snd_nxt = before  # if it was dropped, the server's RCV.NXT is still here
    reply = after_probe(c, m)
    time.sleep(0.2)
    if any(c.payloads(m)):
        return "accepted", {"reply": reply}
    ok = alive(c)
    answer = {"ack": "dropped_with_ack", "silent": "dropped"}.get(reply, reply) if ok else "aborted"
    return answer, {"reply": reply, "alive_after": ok}


def case_icmp(c):
    import peer
    m = c.p.mark()
    for _ in range(3):  # 4200 bytes, echoed in segments of about 1460
        c.send_data(bytes(range(200)) * 7)
    time.sleep(0.5)
    before = c.payloads(m)
    if not before:
        return "no_data", {}
    first = min(before, key=lambda s: (s[0] - c.rcv_nxt) % (1 << 32))
    t = time.monotonic()
    c.p.send(peer.icmp_frag_needed(c, first[0], 1000))
    time.sleep(2.0)
    after = [s for s in c.payloads(m) if s[2] > t]
    sizes_before = sorted({s[1] for s in before})
    sizes_after = sorted({s[1] for s in after})
    extra = {"sizes_before": sizes_before, "sizes_after": sizes_after,
             "first_resend_ms": round((min(s[2] for s in after) - t) * 1000, 1) if after else None}
    if not after:
        return "not_resent", extra
    return ("resegmented" if max(sizes_after) <= 1000 - 40 else "not_resegmented"), extra


def case_icmp_not_in_flight(c):
    """A frag-needed quoting a sequence number the server never sent: no
    connection acts on it (the quote is checked first)."""
    import peer
    c.p.send(peer.icmp_frag_needed(c, (c.rcv_nxt + (1 << 30)) % (1 << 32), 1000))
    time.sleep(0.3)
    m = c.p.mark()
    for _ in range(3):
        c.send_data(bytes(range(200)) * 7)
    time.sleep(0.8)
    sizes = sorted({s[1] for s in c.payloads(m)})
    if not sizes:
        return "no_data", {}
    return ("ignored" if max(sizes) > 1000 - 40 else "resegmented"), {"sizes_after": sizes}


def case_paws(c):
    if not alive(c):  # TS.Recent is now our tsval
        return "no_echo", {}
    return case_unacceptable(c, b"an old timestamp", tsval=(c.tsval - 100000) % (1 << 32))


def case_fin(c):
    m = c.p.mark()
    c.p.send(c.ip() / c.tcp("FA"))
    c.snd_nxt = (c.snd_nxt + 1) % (1 << 32)
    acked = c.wait(m, lambda t: t.flags.A and t.ack == c.snd_nxt, 2.0)
    theirs = c.wait(m, lambda t: t.flags.F, 2.0)
    if theirs is not None:  # ACK their FIN: the server's side ends, not in TIME-WAIT here
        c.rcv_nxt = (theirs["TCP"].seq + 1) % (1 << 32)
        c.ack()
    answer = "fin_acked" if acked is not None and theirs is not None else (
        "fin_not_acked" if acked is None else "no_fin_back")
    return answer, {"server_fin": theirs is not None}


def case_closed_port_syn(p, port):
    from peer import Conn
    c = Conn(p, port)
    m = p.mark()
    p.send(c.ip() / c.tcp("S", seq=c.iss, ack=0, options=c.options))
    f = c.wait(m, lambda t: True, 1.0)
    if f is None:
        return "silent", {}
    t = f["TCP"]
    good = t.flags.R and t.flags.A and t.seq == 0 and t.ack == (c.iss + 1) % (1 << 32)
    return ("rst_ack" if good else "other"), {"flags": str(t.flags), "seq": t.seq, "ack": t.ack}


def case_listen_bare_ack(p, port):
    from peer import Conn
    import random
    c = Conn(p, port)
    c.rcv_nxt = random.randrange(1 << 32)  # an ACK of something never sent
    m = p.mark()
    p.send(c.ip() / c.tcp("A", seq=c.iss))
    f = c.wait(m, lambda t: True, 1.0)
    if f is None:
        return "silent", {}
    t = f["TCP"]
    good = t.flags.R and not t.flags.A and t.seq == c.rcv_nxt
    return ("rst_seq_of_ack" if good else "other"), {"flags": str(t.flags), "seq": t.seq}


def case_mss_1(c):
    m = c.p.mark()
    c.send_data(b"m" * 300)
    time.sleep(0.8)
    sizes = [s[1] for s in c.payloads(m)]
    if not sizes:
        return "no_data", {}
    biggest = max(sizes)
    return ("floor" if 1 < biggest <= 88 else f"segments_of_{biggest}"), {"segment_bytes": biggest,
                                                                           "segments": len(sizes)}


def case_wscale_15(c):
    """Our window field is 1 in every segment after the SYN: 16384 bytes at
    shift 14, 32768 at 15. ACKing the first 8000 echoed bytes segment by
    segment grows the server's cwnd past 16384 (slow start); then, with
    ACKs held back, the bytes it has in flight are what our window lets it
    send. 39,200 bytes in all: within both servers' receive windows."""
    start = acked = c.rcv_nxt
    mark = c.p.mark()
    for _ in range(28):
        c.send_data(b"w" * 1400, window=1)

    def ends():  # the echo seen so far: offsets from start
        return {(seq - start) % (1 << 32): n for seq, n, _ in c.payloads(mark)}

    def top():  # the end of its contiguous part
        e, off = ends(), 0
        while off in e:
            off += e[off]
        return off

    end = time.monotonic() + 5
    while (acked - start) % (1 << 32) < 8000 and time.monotonic() < end:
        t = top()
        if t > (acked - start) % (1 << 32):
            acked = c.rcv_nxt = (start + t) % (1 << 32)
            c.ack(window=1)
        time.sleep(0.002)
    time.sleep(0.3)
    # The furthest byte sent (a segment the sniffer missed leaves a hole
    # in the contiguous part, not in this).
    flight = max((o + n for o, n in ends().items()), default=0) - (acked - start) % (1 << 32)
    c.rcv_nxt = (start + top()) % (1 << 32)
    c.ack(window=1)
    answer = "shift_15" if flight > 16384 else ("shift_14" if flight > 14600 else "inconclusive")
    return answer, {"server_syn_window": c.synack.window, "acked_first": (acked - start) % (1 << 32), "flight_bytes": flight}


def case_syn_cookie(c, cookies_cmd, spoofs):
    """Fill the SYN queue with SYNs from addresses nobody answers for, then
    a fresh SYN: its SYN-ACK must be a cookie and its ACK a connection."""
    from scapy.all import IP, TCP
    import random
    before = counter(cookies_cmd)
    for i in range(spoofs):
        src = f"{netns.PREFIX}{100 + i}" if c.p.dst.startswith(netns.PREFIX) else f"10.89.0.{100 + i}"
        c.p.send(IP(src=src, dst=c.p.dst) / TCP(sport=random.randrange(1024, 65535), dport=c.dport, flags="S",
                                                seq=random.randrange(1 << 32), options=[("MSS", 1460)]))
    time.sleep(0.3)
    if not c.open():
        return "dropped", {"cookies_sent": counter(cookies_cmd) - before}
    ok = alive(c)
    sent = counter(cookies_cmd) - before
    answer = "cookie_connection" if sent > 0 and ok else ("queued_connection" if ok else "no_connection")
    return answer, {"cookies_sent": sent}


def counter(cmd):
    out = subprocess.run(cmd, shell=True, capture_output=True, text=True).stdout.split()
    nums = [int(w) for w in out if w.isdigit()]
    return nums[0] if nums else 0


def run_case(name, peer_obj, port, cookies_cmd):
    from peer import Conn
    if name == "mss_1":
        c = Conn(peer_obj, port, options=[("MSS", 1)])
    elif name == "wscale_15":
        c = Conn(peer_obj, port, options=[("MSS", 1460), ("WScale", 15)])
    else:
        c = Conn(peer_obj, port)
    if name == "syn_cookie":
        return case_syn_cookie(c, cookies_cmd, spoofs=4 * BACKLOG)
    if name == "closed_port_syn":
        return case_closed_port_syn(peer_obj, port + 1)
    if name == "listen_bare_ack":
        return case_listen_bare_ack(peer_obj, port)
    if name == "paws_old_timestamp":
        c = Conn(peer_obj, port, timestamps=True)
    if not c.open():
        return "no_handshake", {}
    una = c.rcv_nxt  # the server's SND.UNA: it has sent nothing yet
    if name == "rst_exact":
        return case_rst(c, 0)
    if name == "rst_in_window":
        return case_rst(c, 1000)
    if name == "rst_outside_window":
        return case_rst(c, 1 << 30)
    if name == "syn_established":
        return case_syn(c, 1000)
    if name == "syn_established_outside":
        return case_syn(c, 1 << 30)
    if name == "ack_too_old":
        return case_unacceptable(c, b"must not be taken", ack=(una - 65535 - 100000) % (1 << 32))
    if name == "ack_beyond_snd_nxt":
        return case_unacceptable(c, b"must not be taken", ack=(una + 100000) % (1 << 32))
    if name == "icmp_frag_needed":
        return case_icmp(c)
    if name == "icmp_not_in_flight":
        return case_icmp_not_in_flight(c)
    if name == "data_outside_window":
        return case_unacceptable(c, b"far beyond the window", seq=(c.snd_nxt + (1 << 30)) % (1 << 32))
    if name == "paws_old_timestamp":
        return case_paws(c)
    if name == "fin":
        return case_fin(c)
    if name == "mss_1":
        return case_mss_1(c)
    if name == "wscale_15":
        return case_wscale_15(c)
    raise ValueError(name)


def worker(target, iface, src, dst, port, cookies_cmd, names):
    from peer import Peer
    p = Peer(iface, src, dst)
    for name in names:
        try:
            answer, extra = run_case(name, p, int(port), cookies_cmd)
        except Exception as e:  # a case that breaks is reported as such
            answer, extra = "error", {"error": repr(e)}
        netns.json_line(target=target, case=name, answer=answer, rfc=CASES[name][1], **extra)
    p.close()


# ---- the orchestration (root namespace: sets up, sends nothing) -------------

LINUX_ECHO = r"""
import socket, sys, threading
l = socket.socket(); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("0.0.0.0", int(sys.argv[1]))); l.listen(int(sys.argv[2]))
def serve(c):
    try:
        with c:
            while (b := c.recv(65536)):
                c.sendall(b)
    except OSError:
        pass
while True:
    c, _ = l.accept()
    threading.Thread(target=serve, args=(c,), daemon=True).start()
"""


def run_worker(lab, ns, target, iface, src, dst, cookies_cmd, names):
    here = os.path.abspath(__file__)
    cmd = ["timeout", "-k", "5", "240", sys.executable, here, "--worker", target, iface, src, dst, netns.ECHO_PORT,
           cookies_cmd] + names
    out = netns.sh(*cmd, ns=ns, check=False)
    if out.returncode != 0:
        netns.log(f"{target} worker exited {out.returncode}: {out.stderr[-2000:]}")
    return [json.loads(line) for line in out.stdout.splitlines() if line.startswith("{")]


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        return worker(*sys.argv[2:8], sys.argv[8:])
    if len(sys.argv) < 2:
        print(__doc__ or "usage: probe.py AFFINE_ECHO [CASE...]", file=sys.stderr)
        return 2
    netns.skip_unless_able()
    exe, names = os.path.abspath(sys.argv[1]), sys.argv[2:] or list(CASES)
    results = {}
    with netns.Lab("probe") as lab:
        # (a) affine on net_tap; scapy on the tap's kernel side.
        a = lab.namespace("a")
        netns.no_kernel_resets(a)
        aff = lab.affine(a, exe, sets=['tcp.syn_cookies="auto"'], backlog=BACKLOG)
        metric = f"{sys.executable} {shlex.quote(netns.__file__)} metrics {netns.AFFINE_IP} {netns.METRICS_PORT}"
        cookies = f"{metric} | {sys.executable} -c \"import json,sys; print(sum(json.loads(l)['value'] for l in sys.stdin " \
                  f"if 'syn_cookies_sent' in l))\""
        results["affine"] = run_worker(lab, a, "affine", aff.iface, netns.KERNEL_IP, netns.AFFINE_IP, cookies, names)
        if not aff.alive():
            netns.log(f"affine-echo died: {aff.stderr()}")
        # (b) Linux: a kernel echo listener behind a veth pair.
        p, l = lab.namespace("p"), lab.namespace("l")
        netns.no_kernel_resets(p)
        pi, _ = lab.veth(p, "10.89.0.1/24", l, "10.89.0.2/24")
        netns.sh("sysctl", "-q", "-w", "net.ipv4.tcp_syncookies=1", ns=l)
        lab.spawn(l, sys.executable, "-c", LINUX_ECHO, netns.ECHO_PORT, BACKLOG)
        time.sleep(0.5)
        cookies = f"ip netns exec {l} nstat -az TcpExtSyncookiesSent | awk '/TcpExtSyncookiesSent/ {{print $2}}'"
        results["linux"] = run_worker(lab, p, "linux", pi, "10.89.0.1", "10.89.0.2", cookies, names)
        kernel = os.uname().release
    for r in results["affine"] + results["linux"]:
        print(json.dumps(r, separators=(",", ":")))
    by = {(r["target"], r["case"]): r["answer"] for t in results.values() for r in t}
    failed, differs, table = [], [], []
    for name in names:
        want, la, aa = CASES[name][1], by.get(("linux", name)), by.get(("affine", name))
        table.append({"case": name, "rfc": want, "linux": la, "affine": aa})
        if la != want:
            differs.append(name)
        if la == want and aa != want:
            failed.append(name)
    netns.json_line(summary="probe", linux_kernel=kernel, cases=len(names),
                    affine_rfc=sum(1 for n in names if by.get(("affine", n)) == CASES[n][1]),
                    linux_rfc=sum(1 for n in names if by.get(("linux", n)) == CASES[n][1]),
                    failed=failed, linux_differs_from_rfc=differs)
    for name in failed:
        netns.log(f"FAIL: {name}: affine answers {by.get(('affine', name))}, Linux and the RFC {CASES[name][1]}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
