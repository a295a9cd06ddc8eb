# tests/attack/probe_data.py: the probe's cases on the data path (probe.py
# has the table): what a receiver does with segments out of order,
# overlapping, unacknowledged, checksummed wrong or sent at a keep-alive's
# sequence number, and how a sender recovers a loss, probes a zero window
# and sizes segments without an MSS option. Each takes an established
# connection (peer.Conn) and returns (answer, details).

import time

from scapy.all import TCP, IPv6, Raw

import peer
from probe_cases import after_probe, alive, case_unacceptable

MOD = 1 << 32


def _sack_blocks(t):
    for kind, value in t.options:
        if kind == "SAck":
            return [(value[i], value[i + 1]) for i in range(0, len(value) - 1, 2)]
    return []


def _wait_echo(c, mark, start, n, timeout=2.0):
    end = time.monotonic() + timeout
    while True:
        got = c.echoed(mark, start)
        if len(got) >= n or time.monotonic() >= end:
            return got
        time.sleep(0.01)


def _take_echo(c, got):
    c.rcv_nxt = (c.rcv_nxt + len(got)) % MOD
    c.ack()


def case_out_of_order(c, fill):
    """200 bytes, the second half first. RFC 5681 4.2: the receiver
    answers a segment out of order with a duplicate ACK at once; RFC 2018
    4: its first SACK block covers that segment. With `fill`, the first
    half follows: the echo must be the 200 bytes in order."""
    start, data = c.snd_nxt, bytes(range(200))
    m = c.p.mark()
    c.send_data(data[100:], seq=(start + 100) % MOD)
    f = c.wait(m, lambda t: t.flags.A or t.flags.R, 1.0)
    if f is None:
        reply, blocks = "silent", []
    else:
        blocks = _sack_blocks(f[TCP])
        reply = "rst" if f[TCP].flags.R else "dup_ack" if f[TCP].ack == start else "ack_of_other"
    first = blocks[0] if blocks else None
    sacked = first == ((start + 100) % MOD, (start + 200) % MOD)
    extra = {"reply": reply, "sack_blocks": len(blocks), "first_block_right": sacked}
    if not fill:
        if reply == "dup_ack":
            return ("dup_ack_with_sack" if sacked else "dup_ack_without_sack"), extra
        return reply, extra
    c.send_data(data[:100], seq=start)
    c.snd_nxt = (start + 200) % MOD
    got = _wait_echo(c, m, c.rcv_nxt, len(data))
    _take_echo(c, got)
    extra["echoed_bytes"] = len(got)
    if not got:
        return "no_echo", extra
    return ("in_order_echo" if got[:len(data)] == data else "corrupted"), extra


def case_dsack(c):
    """After an echo of b"still there?" (12 bytes), the same segment again,
    as a sender whose ACK was lost resends it: the ACK of it reports the
    duplicate in its first SACK block (RFC 2883 4.1.1, D-SACK)."""
    before = c.snd_nxt
    if not alive(c):
        return "no_echo", {}
    m = c.p.mark()
    c.send_data(b"still there?", seq=before)
    f = c.wait(m, lambda t: t.flags.A and not t.flags.R, 1.0)
    if f is None:
        return "silent", {}
    blocks = _sack_blocks(f[TCP])
    extra = {"ack_is_rcv_nxt": f[TCP].ack == c.snd_nxt, "sack_blocks": len(blocks)}
    if not blocks:
        return "ack_without_sack", extra
    return ("dsack" if blocks[0] == (before, (before + 12) % MOD) else "other_block"), extra


def case_overlap(c):
    """After an echo of b"still there?", a segment starting 4 bytes back
    (the same 4 bytes, then 4 new ones): the receiver takes the new bytes
    only (RFC 9293 3.10.7.4: a segment that starts before RCV.NXT is
    trimmed), so the echo is those 4."""
    if not alive(c):
        return "no_echo", {}
    m, start = c.p.mark(), c.rcv_nxt
    c.send_data(b"ere?NEW!", seq=(c.snd_nxt - 4) % MOD)
    c.snd_nxt = (c.snd_nxt + 4) % MOD
    _wait_echo(c, m, start, 4, timeout=1.0)
    time.sleep(0.2)  # and whatever more would come: a stack that took the old bytes again
    got = c.echoed(m, start)
    _take_echo(c, got)
    extra = {"echo": got.decode(errors="replace")}
    if not got:
        return "no_echo", extra
    return ("trimmed" if got == b"NEW!" else "not_trimmed"), extra


def case_no_ack_flag(c):
    """Data without the ACK bit in ESTABLISHED (RFC 9293 3.10.7.4, fifth
    step: if the ACK bit is off, drop the segment)."""
    return case_unacceptable(c, b"no ACK bit", flags="P")


def case_bad_checksum(c):
    """Data whose TCP checksum is wrong (RFC 9293 3.1, RFC 1122 4.2.2.7):
    dropped without a word; the connection lives."""
    m = c.p.mark()
    seg = peer.tcp_bytes(c.p.src, c.p.dst, c.sport, c.dport, c.snd_nxt, c.rcv_nxt, 0x18, c.window,
                         payload=b"a bad checksum", bad_checksum=True)
    c.p.send(c.p.raw_tcp(seg))
    reply = after_probe(c, m)
    time.sleep(0.2)
    if any(c.payloads(m)):
        return "accepted", {"reply": reply}
    ok = alive(c)
    answer = ("dropped" if reply == "silent" else reply) if ok else "aborted"
    return answer, {"reply": reply, "alive_after": ok}


def case_keepalive(c):
    """A keep-alive (RFC 1122 4.2.3.6): SEQ = SND.NXT - 1 with one octet
    already sent. The receiver answers with an ACK of RCV.NXT and takes
    nothing."""
    if not alive(c):
        return "no_echo", {}
    return case_unacceptable(c, b"?", seq=(c.snd_nxt - 1) % MOD)


def _echo_sizes(c, segments):
    """Sends `segments`, takes their echo: the sizes its segments had."""
    m, start = c.p.mark(), c.rcv_nxt
    for data in segments:
        c.send_data(data)
    got = _wait_echo(c, m, start, sum(len(d) for d in segments))
    _take_echo(c, got)
    return sorted({n for _, n, _ in c.payloads(m)})


def case_mss_absent(c):
    """A SYN without an MSS option: the server's segments carry at most the
    default, 536 bytes over IPv4 and 1220 over IPv6 (RFC 9293 3.7.1, RFC
    6691, RFC 8200 5)."""
    sizes = _echo_sizes(c, [bytes(range(200)) * 7] * 2)  # each over 1220 bytes, within the link's MTU
    if not sizes:
        return "no_echo", {}
    default = 1220 if c.p.l3 is IPv6 else 536
    return ("default_mss" if max(sizes) == default else f"segments_of_{max(sizes)}"), {"sizes": sizes}


def _copies(c, mark, seq):
    """When each data segment of ours at `seq` was seen since `mark`."""
    return [f.time_seen for f in c.mine(c.p.since(mark)) if f[TCP].seq == seq and Raw in f]


def case_rto_backoff(c):
    """100 bytes echoed and never acknowledged: the server sends them again
    and again, each wait twice the last (RFC 6298 5.5; a tail loss probe
    may come first)."""
    m, start = c.p.mark(), c.rcv_nxt
    c.send_data(b"r" * 100)
    time.sleep(2.5)
    times = _copies(c, m, start)
    gaps = [round((b - a) * 1000) for a, b in zip(times, times[1:])]
    got = c.echoed(m, start)
    _take_echo(c, got)
    extra = {"copies": len(times), "gaps_ms": gaps}
    if not times:
        return "no_echo", extra
    if len(gaps) < 3:
        return "not_retransmitted" if not gaps else "too_few_retransmissions", extra
    return ("backed_off" if gaps[-1] >= 1.5 * gaps[-2] else "no_backoff"), extra


def case_fast_retransmit(c, mss=1400):
    """Four full segments echoed; scapy acknowledges none and SACKs the
    last three, one more in each of three duplicate ACKs. The server
    sends the first again at once, not after its RTO (RFC 6675 5, RFC 8985;
    the RTO is at least 200 ms in both)."""
    start, after = c.rcv_nxt, (c.snd_nxt + 4 * mss) % MOD
    dupacks = [c.p.frame(c.ip() / c.tcp("A", seq=after, options=[("SAck", ((start + mss) % MOD, (start + k * mss) % MOD))]))
               for k in (2, 3, 4)]  # made before, so that they go out as soon as the echo is in
    m = c.p.mark()
    for i in range(4):
        c.send_data(bytes([65 + i]) * mss)
    end = time.monotonic() + 1.0
    while len(c.echoed(m, start)) < 4 * mss and time.monotonic() < end:
        time.sleep(0.002)
    first = _copies(c, m, start)
    for f in dupacks:
        c.p.sock.send(f)
    sent = time.monotonic()
    time.sleep(0.4)
    times = _copies(c, m, start)
    got = c.echoed(m, start)
    _take_echo(c, got)
    extra = {"echoed_bytes": len(got), "copies": len(times)}
    if not first:
        return "no_echo", extra
    extra["dupacks_after_ms"] = round((sent - first[0]) * 1000, 1)
    if len(first) > 1:
        return "inconclusive", extra  # resent before the duplicate ACKs went
    if len(times) < 2:
        return "not_retransmitted", extra
    extra["resent_after_ms"] = round((times[1] - first[0]) * 1000, 1)
    return ("fast_retransmit" if times[1] - first[0] < 0.19 else "after_rto"), extra


def case_zero_window(c):
    """1000 bytes sent with a window of 0: the server may not echo them, so
    it probes the window (RFC 9293 3.8.6.1, RFC 1122 4.2.2.17) and sends
    at most one byte; when the window opens, the echo comes whole."""
    m, start = c.p.mark(), c.rcv_nxt
    data = bytes(range(250)) * 4
    c.send_data(data, window=0)
    sent = time.monotonic()
    time.sleep(1.5)
    early = [f for f in c.mine(c.p.since(m))]
    biggest = max((len(f[Raw].load) for f in early if Raw in f), default=0)
    probes = sum(1 for f in early if f.time_seen > sent + 0.1)
    c.ack(window=65535)
    got = _wait_echo(c, m, start, len(data))
    _take_echo(c, got)
    extra = {"probes_in_1_5_s": probes, "biggest_before_open": biggest, "echoed_bytes": len(got)}
    if biggest > 1:
        return "window_ignored", extra
    if not probes:
        return "no_probes", extra
    if len(got) < len(data):
        return "stalled", extra
    return ("probes_then_data" if got[:len(data)] == data else "corrupted"), extra


def case_mss_honored(c):
    """A SYN with MSS 1000: no segment of the server's carries more (RFC
    9293 3.7.1), and full ones carry that much."""
    sizes = _echo_sizes(c, [bytes(range(250)) * 5])
    if not sizes:
        return "no_echo", {}
    return f"segments_of_{max(sizes)}", {"sizes": sizes}


def case_ip_fragments(c):
    """A data segment in IP fragments of 20-32 bytes, the last one first:
    reassembled and taken (RFC 791, RFC 1122 3.3.2; RFC 8200 4.5)."""
    from scapy.all import IPv6ExtHdrFragment, fragment, fragment6
    m, start = c.p.mark(), c.rcv_nxt
    data = b"in fragments, the last one first; " * 2 + b"0123456789ab"  # 80 bytes
    if c.p.l3 is IPv6:  # fragments of 32 bytes behind the 48 of IPv6 and its Fragment header
        frags = fragment6(c.ip() / IPv6ExtHdrFragment() / c.tcp("PA") / Raw(data), 80)
    else:
        frags = fragment(c.ip() / c.tcp("PA") / Raw(data), fragsize=40)
    for f in reversed(frags):
        c.p.send(f)
    c.snd_nxt = (c.snd_nxt + len(data)) % MOD
    got = _wait_echo(c, m, start, len(data))
    _take_echo(c, got)
    extra = {"fragments": len(frags), "echoed_bytes": len(got)}
    if not got:
        return "dropped", extra
    return ("reassembled" if got == data else "corrupted"), extra


def case_sack_order(c):
    """Two holes: 100 bytes at +300, then 100 at +100. The ACK of the
    second reports its block first, the earlier one second (RFC 2018 4:
    the most recently received block first)."""
    start = c.snd_nxt
    c.send_data(b"s" * 100, seq=(start + 300) % MOD)
    time.sleep(0.2)
    m = c.p.mark()
    c.send_data(b"t" * 100, seq=(start + 100) % MOD)
    f = c.wait(m, lambda t: t.flags.A and not t.flags.R, 1.0)
    if f is None:
        return "silent", {}
    blocks = _sack_blocks(f[TCP])
    want = [((start + 100) % MOD, (start + 200) % MOD), ((start + 300) % MOD, (start + 400) % MOD)]
    extra = {"blocks": [[(a - start) % MOD, (b - start) % MOD] for a, b in blocks]}
    return ("most_recent_first" if blocks[:2] == want else "other_order"), extra


def case_fin_out_of_order(c):
    """The last 100 of 200 bytes with FIN first, then the first 100: the
    FIN waits for the hole (RFC 9293 3.10.7.4 eighth: a FIN is processed in
    sequence), so the echo is whole and the echo server's own FIN follows
    it."""
    start, data = c.snd_nxt, bytes(i % 251 for i in range(200))
    m = c.p.mark()
    c.p.send(c.ip() / c.tcp("FPA", seq=(start + 100) % MOD) / Raw(data[100:]))
    time.sleep(0.2)
    early = c.echoed(m, c.rcv_nxt)
    c.send_data(data[:100], seq=start)
    c.snd_nxt = (start + 201) % MOD
    got = _wait_echo(c, m, c.rcv_nxt, len(data))
    end = (c.rcv_nxt + len(got)) % MOD
    fin = c.wait(m, lambda t: t.flags.F and (t.seq + (len(t[Raw].load) if Raw in t else 0)) % MOD == end, 2.0)
    acked = c.wait(m, lambda t: t.flags.A and t.ack == c.snd_nxt, 1.0)
    c.rcv_nxt = (end + (1 if fin is not None else 0)) % MOD
    c.ack()
    extra = {"echoed_before_fill": len(early), "echoed_bytes": len(got), "our_fin_acked": acked is not None,
             "server_fin": fin is not None}
    if early or got[:len(data)] != data:
        return "out_of_sequence", extra
    return ("fin_after_data" if fin is not None and acked is not None else "no_fin"), extra


def case_timestamp_echo(c):
    """With timestamps negotiated, data carrying TSval T: the segment that
    acknowledges it echoes T in TSecr (RFC 7323 4.3)."""
    m = c.p.mark()
    c.send_data(b"echo my timestamp")
    sent = c.tsval
    f = c.wait(m, lambda t: t.flags.A and t.ack == c.snd_nxt, 1.0)
    got = c.echoed(m, c.rcv_nxt)
    c.rcv_nxt = (c.rcv_nxt + len(got)) % MOD
    c.ack()
    if f is None:
        return "no_ack", {}
    ts = dict(o for o in f[TCP].options if isinstance(o, tuple) and len(o) == 2).get("Timestamp")
    if ts is None:
        return "no_timestamp", {}
    return ("echoed" if ts[1] == sent else "other_tsecr"), {"tsecr_minus_tsval": (ts[1] - sent) % MOD}
