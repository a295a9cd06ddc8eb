# tests/attack/probe_addresses.py: the probe's cases on the IP layer
# (probe.py has the table): ping, a SYN to a broadcast or multicast
# address or from a multicast one, IP options and IPv6 extension headers
# before TCP. Each takes a fresh peer.Conn and returns (answer, details).

import random
import time

from probe_cases import alive
from scapy.all import (ICMP, IP, TCP, ICMPv6EchoReply, ICMPv6EchoRequest, IPOption_NOP, IPv6,
                       IPv6ExtHdrDestOpt, IPv6ExtHdrHopByHop, PadN, Raw)


def case_ping(c):
    """An echo request, 56 bytes of data: the reply carries the same
    identifier, sequence number and data (RFC 792; RFC 4443 4.2)."""
    ident, seq, data = random.randrange(1 << 16), 7, bytes(range(56))
    v6 = c.p.l3 is IPv6
    request = ICMPv6EchoRequest(id=ident, seq=seq, data=data) if v6 else ICMP(type=8, id=ident, seq=seq) / Raw(data)
    m = c.p.mark()
    c.p.send(c.ip() / request)
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        for f in c.p.since(m):
            r = f.getlayer(ICMPv6EchoReply) if v6 else (f[ICMP] if ICMP in f and f[ICMP].type == 0 else None)
            if r is not None and r.id == ident and r.seq == seq:
                body = bytes(r.data) if v6 else (bytes(r[Raw].load) if Raw in r else b"")
                return ("echo_reply" if body == data else "reply_other_data"), {}
        time.sleep(0.01)
    return "silent", {}


def _synack_to(c, l3, dmac=None):
    """Our SYN behind `l3`; the SYN-ACK that answers it, or None."""
    m = c.p.mark()
    c.p.send(l3 / c.tcp("S", seq=c.iss, ack=0, options=c.options), dmac=dmac)
    return c.wait(m, lambda t: t.flags.S and t.flags.A, 1.0)


def _any_answer(c, l3, dmac=None):
    """Our SYN behind `l3`: "ignored" when nothing at all comes back to our
    port in a second (no SYN-ACK, no RST), else the reply's flags."""
    m = c.p.mark()
    c.p.send(l3 / c.tcp("S", seq=c.iss, ack=0, options=c.options), dmac=dmac)
    time.sleep(1.0)
    replies = [str(f[TCP].flags) for f in c.p.since(m) if TCP in f and f[TCP].dport == c.sport]
    return ("ignored" if not replies else "answered"), {"replies": replies}


def case_syn_to_group(c):
    """A SYN to the subnet's broadcast address (IPv4) or to all-nodes
    ff02::1 (IPv6), in a frame to the broadcast or group MAC: ignored, not
    even a RST (RFC 9293 3.10.7.2, RFC 1122 4.2.3.10)."""
    if c.p.l3 is IPv6:
        return _any_answer(c, IPv6(src=c.p.src, dst="ff02::1"), dmac="33:33:00:00:00:01")
    return _any_answer(c, IP(src=c.p.src, dst=c.p.dst.rsplit(".", 1)[0] + ".255"), dmac="ff:ff:ff:ff:ff:ff")


def case_syn_from_group(c):
    """A SYN from a multicast source address: no host answers one (RFC 1122
    3.2.1.3, RFC 4291 2.7: a multicast address is never a source)."""
    src = "ff02::5" if c.p.l3 is IPv6 else "224.0.0.5"
    return _any_answer(c, c.p.l3(src=src, dst=c.p.dst))


def case_ip_options(c):
    """A SYN with IPv4 options (four NOPs: IHL 6) or, over IPv6, behind a
    Hop-by-Hop and a Destination Options header (PadN only): the SYN-ACK
    comes, and the connection works (RFC 1122 3.2.1.8, RFC 8200 4)."""
    if c.p.l3 is IPv6:
        l3 = c.ip() / IPv6ExtHdrHopByHop(options=[PadN(optdata=b"\x00" * 4)]) / IPv6ExtHdrDestOpt(
            options=[PadN(optdata=b"\x00" * 4)])
    else:
        l3 = c.p.ip(options=[IPOption_NOP()] * 4)
    f = _synack_to(c, l3)
    if f is None:
        return "dropped", {}
    return ("synack" if c.complete(f[TCP]) and alive(c) else "synack_then_dead"), {}
