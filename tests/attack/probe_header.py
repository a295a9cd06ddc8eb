# tests/attack/probe_header.py: the probe's cases on the TCP header itself
# (probe.py has the table): data on a SYN, reserved bits, an ECN-setup SYN,
# an option nobody knows and one with an illegal length, the urgent
# pointer, a segment without the timestamps both sides agreed on. Each
# takes a fresh peer.Conn and returns (answer, details).

import time

import peer
from probe_cases import alive
from scapy.all import IP, TCP, IPv6, Raw

MOD = 1 << 32


def _echoed_for(c, m, start, want, timeout):
    """The bytes echoed since `m` from `start`, once `want` of them came or
    `timeout` passed, and then a quiet half second more (a second copy of
    anything would show in it)."""
    end = time.monotonic() + timeout
    while time.monotonic() < end and len(c.echoed(m, start)) < want:
        time.sleep(0.02)
    time.sleep(0.5)
    return c.echoed(m, start)


def case_syn_with_data(c):
    """Data on a SYN (RFC 9293 3.10.7.2: "any other control or text should
    be queued for processing later"; a server may also drop it, as Linux
    without a TFO cookie and RFC 4987 3.6 do, and ACK the SYN alone, and
    the client sends it again): either way it is delivered, once."""
    data = b"data on the SYN"
    m = c.p.mark()
    c.p.send(c.ip() / c.tcp("S", seq=c.iss, ack=0, options=c.options) / Raw(data))
    f = c.wait(m, lambda t: t.flags.S and t.flags.A, 3.0)
    if f is None:
        return "no_synack", {}
    t = f[TCP]
    taken = (t.ack - c.iss - 1) % MOD
    if taken not in (0, len(data)):
        return "other", {"synack_acks": taken}
    c.synack, c.rcv_nxt = t, (t.seq + 1) % MOD
    c.snd_nxt = (c.iss + 1 + taken) % MOD
    m = c.p.mark()
    c.ack()
    if not taken:
        c.send_data(data)
    have = _echoed_for(c, m, c.rcv_nxt, len(data), 3.0)
    answer = "echoed_once" if have == data else ("echoed_twice" if have == data * 2 else "other")
    return answer, {"taken_on_syn": bool(taken), "echoed": len(have)}


def _synack_then_alive(c, syn):
    """Sends `syn` (a TCP layer); "synack" when a SYN-ACK answers it and the
    connection then echoes, with the SYN-ACK's flags."""
    m = c.p.mark()
    c.p.send(c.ip() / syn)
    f = c.wait(m, lambda t: t.flags.S and t.flags.A, 3.0)
    if f is None:
        return "silent", {}
    flags = str(f[TCP].flags)
    return ("synack" if c.complete(f[TCP]) and alive(c) else "synack_then_dead"), {"flags": flags}


def case_reserved_bits(c):
    """A SYN with the three reserved bits set: "must be ignored in received
    segments" (RFC 9293 3.1)."""
    syn = c.tcp("S", seq=c.iss, ack=0, options=c.options)
    syn.reserved = 7
    return _synack_then_alive(c, syn)


def case_ecn_setup(c):
    """An ECN-setup SYN (ECE and CWR, RFC 3168 6.1.1): a host that does ECN
    answers with ECE alone, one that does not with neither; never both.
    Either way the connection works."""
    answer, extra = _synack_then_alive(c, c.tcp("SEC", seq=c.iss, ack=0, options=c.options))
    if answer == "synack" and "E" in extra["flags"] and "C" in extra["flags"]:
        answer = "ece_and_cwr"
    return answer, extra


def case_unknown_option(c):
    """A SYN with an option of kind 253 (RFC 6994's experimental kind) among
    the known ones: "a TCP implementation MUST ignore without error any TCP
    option it does not implement" (RFC 9293 3.1, MUST-6)."""
    options = [("MSS", 1460), (253, b"\xfe\xed\x12\x34"), ("NOP", None), ("NOP", None)]
    return _synack_then_alive(c, c.tcp("S", seq=c.iss, ack=0, options=options))


def case_bad_option_length(c):
    """A SYN whose second option claims a length of zero (RFC 9293 3.1,
    MUST-7: "handle an illegal option length ... without crashing"; a
    reset or a drop are both allowed): whatever the answer, the listener
    still serves the next connection."""
    options = b"\x02\x04\x05\xb4" + b"\x63\x00\x00\x00"  # MSS 1460; kind 99, length 0
    seg = peer.tcp_bytes(c.p.src, c.p.dst, c.sport, c.dport, c.iss, 0, 0x02, c.window, options=options)
    m = c.p.mark()
    c.p.send(c.p.raw_tcp(seg))
    f = c.wait(m, lambda t: True, 1.0)
    reply = "silent" if f is None else str(f[TCP].flags)
    if f is not None and f[TCP].flags.S:  # taken as a SYN: it must not linger half open
        c.p.send(c.ip() / c.tcp("R", seq=(c.iss + 1) % MOD, ack=0))
    fresh = peer.Conn(c.p, c.dport)
    ok = fresh.open() and alive(fresh)
    return ("survives" if ok else "dead"), {"reply": reply}


def case_urgent(c):
    """Data with URG and an urgent pointer past its last byte: RFC 6093 5
    asks that urgent data be delivered inline (SO_OOBINLINE); Linux's
    default takes the last urgent byte out of the stream."""
    data = b"urgent at the end!"
    m = c.p.mark()
    start = c.rcv_nxt
    c.p.send(c.ip() / TCP(sport=c.sport, dport=c.dport, flags="PAU", seq=c.snd_nxt, ack=c.rcv_nxt,
                          window=c.window, urgptr=len(data)) / Raw(data))
    c.snd_nxt = (c.snd_nxt + len(data)) % MOD
    have = _echoed_for(c, m, start, len(data), 2.0)
    answer = "inline" if have == data else ("urgent_byte_removed" if have == data[:-1] else "other")
    return answer, {"echoed": len(have)}


def case_timestamp_missing(c):
    """Timestamps agreed, then data without a TSopt: "a TCP SHOULD silently
    drop the segment" (RFC 7323 3.2); the connection goes on."""
    data = b"no timestamp"
    after = (c.snd_nxt + len(data)) % MOD
    m = c.p.mark()
    c.p.send(c.ip() / TCP(sport=c.sport, dport=c.dport, flags="PA", seq=c.snd_nxt, ack=c.rcv_nxt,
                          window=c.window) / Raw(data))
    taken = c.wait(m, lambda t: t.ack == after or Raw in t, 1.0) is not None
    if taken:
        return "accepted", {}
    return ("dropped" if alive(c) else "dead"), {}


def _ecn_open(c):
    """An ECN-setup SYN (RFC 3168 6.1.1) and the handshake: None when the
    SYN-ACK agreed (ECE without CWR), else the case's answer."""
    m = c.p.mark()
    c.p.send(c.ip() / c.tcp("SEC", seq=c.iss, ack=0, options=c.options))
    f = c.wait(m, lambda t: t.flags.S and t.flags.A, 3.0)
    if f is None or not c.complete(f[TCP]):
        return "no_handshake", {}
    return None if f[TCP].flags.E and not f[TCP].flags.C else ("no_ecn", {})


def _ip_ecn(f):
    return (f[IPv6].tc if IPv6 in f else f[IP].tos) & 3


def _marked(c, data, ecn=0, flags="PA"):
    """Our data with the IP header's ECN field set to `ecn`."""
    tos = {"tc": ecn} if c.p.l3 is IPv6 else {"tos": ecn}
    c.p.send(c.p.ip(**tos) / c.tcp(flags) / Raw(data))
    c.snd_nxt = (c.snd_nxt + len(data)) % MOD


def _acks_of(c, m, upto):
    """The segments since `m` that acknowledge our data up to `upto`."""
    return [f[TCP] for f in c.mine(c.p.since(m)) if (f[TCP].ack - upto) % MOD < 1 << 31]


def case_ecn_ce(c):
    """ECN agreed; data marked CE on the way: the ACKs carry ECE until our
    next segment with CWR, and not after it (RFC 3168 6.1.3)."""
    if (refused := _ecn_open(c)) is not None:
        return refused
    m = c.p.mark()
    _marked(c, b"marked on the way", ecn=3)
    first = c.snd_nxt
    time.sleep(0.3)
    _marked(c, b"not marked", ecn=2)
    time.sleep(0.3)
    echoed = [bool(t.flags.E) for t in _acks_of(c, m, first)]
    m = c.p.mark()
    _marked(c, b"window reduced", ecn=2, flags="PAC")
    after = c.snd_nxt
    time.sleep(0.3)
    later = [bool(t.flags.E) for t in _acks_of(c, m, after)]
    extra = {"ece_before_cwr": echoed, "ece_after_cwr": later}
    if not echoed or not all(echoed):
        return "no_echo", extra
    return ("ece_until_cwr" if later and not any(later) else "echo_not_ended"), extra


def case_ecn_echo(c):
    """ECN agreed; the server's new data goes ECT(0) (RFC 3168 6.1.2); an
    ACK of it with ECE: the next new data carries CWR (6.1.2)."""
    if (refused := _ecn_open(c)) is not None:
        return refused
    m = c.p.mark()
    start = c.rcv_nxt
    c.send_data(b"echo me, ECT please")
    time.sleep(0.5)
    data = [f for f in c.mine(c.p.since(m)) if Raw in f]
    if not data:
        return "no_echo", {}
    first = _ip_ecn(data[0])  # what follows unacknowledged are resends: never ECT
    c.rcv_nxt = (start + len(c.echoed(m, start))) % MOD
    m = c.p.mark()
    c.p.send(c.ip() / c.tcp("AE"))  # the ACK of the echo, with ECE
    time.sleep(0.2)
    c.send_data(b"and again")
    time.sleep(0.5)
    more = [f[TCP] for f in c.mine(c.p.since(m)) if Raw in f]
    extra = {"ecn_field": first, "cwr": [bool(t.flags.C) for t in more]}
    if first != 2:
        return "not_ect0", extra
    return ("cwr_after_ece" if more and more[0].flags.C else "no_cwr"), extra
