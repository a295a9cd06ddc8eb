# tests/attack/probe_cases.py: the probe's first cases (probe.py has the
# table): RFC 5961's defenses, PAWS, ICMP frag-needed, the closing and
# listening answers, the MSS floor, the window-scale cap, SYN cookies.
# Each runs in the worker, on scapy's side, against one target; it returns
# (answer, details).

import subprocess
import time


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


def icmp_mtu(c):
    """The MTU the ICMP cases report, and the most a TCP segment without
    options may carry under it: 1000 for IPv4, IPv6's minimum 1280 (RFC
    8200 5: a Packet Too Big below it does not lower the path MTU)."""
    from scapy.all import IPv6
    return (1280, 1280 - 60) if c.p.l3 is IPv6 else (1000, 1000 - 40)


def case_icmp(c):
    import peer
    mtu, most = icmp_mtu(c)
    m = c.p.mark()
    for _ in range(3):  # 4200 bytes, echoed in segments of about 1460
        c.send_data(bytes(range(200)) * 7)
    time.sleep(0.5)
    before = c.payloads(m)
    if not before:
        return "no_data", {}
    first = min(before, key=lambda s: (s[0] - c.rcv_nxt) % (1 << 32))
    t = time.monotonic()
    c.p.send(peer.icmp_frag_needed(c, first[0], mtu))
    time.sleep(2.0)
    after = [s for s in c.payloads(m) if s[2] > t]
    sizes_before = sorted({s[1] for s in before})
    sizes_after = sorted({s[1] for s in after})
    extra = {"sizes_before": sizes_before, "sizes_after": sizes_after,
             "first_resend_ms": round((min(s[2] for s in after) - t) * 1000, 1) if after else None}
    if not after:
        return "not_resent", extra
    return ("resegmented" if max(sizes_after) <= most else "not_resegmented"), extra


def case_icmp_not_in_flight(c):
    """A frag-needed quoting a sequence number the server never sent: no
    connection acts on it (the quote is checked first)."""
    import peer
    mtu, most = icmp_mtu(c)
    c.p.send(peer.icmp_frag_needed(c, (c.rcv_nxt + (1 << 30)) % (1 << 32), mtu))
    time.sleep(0.3)
    m = c.p.mark()
    for _ in range(3):
        c.send_data(bytes(range(200)) * 7)
    time.sleep(0.8)
    sizes = sorted({s[1] for s in c.payloads(m)})
    if not sizes:
        return "no_data", {}
    return ("ignored" if max(sizes) > most else "resegmented"), {"sizes_after": sizes}


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
    from scapy.all import TCP
    import random
    before = counter(cookies_cmd)
    for i in range(spoofs):
        c.p.send(c.p.l3(src=c.p.spoofed(i), dst=c.p.dst) / TCP(
            sport=random.randrange(1024, 65535), dport=c.dport, flags="S", seq=random.randrange(1 << 32),
            options=[("MSS", 1460)]))
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
