# tests/attack/peer.py: scapy's side of a TCP connection, segment by
# segment, for the probe and the attack suite, over IPv4 or IPv6 (the
# addresses say which). Runs inside the namespace whose kernel has the
# source address (netns.no_kernel_resets keeps that kernel from resetting
# what it did not open); frames go out and come in on one interface (the
# tap's kernel side, or a veth end).

import random
import socket
import struct
import threading
import time

from scapy.all import (ARP, ICMP, IP, TCP, AsyncSniffer, Ether, ICMPv6ND_NA, ICMPv6ND_NS,  # noqa: E402
                       ICMPv6NDOptSrcLLAddr, ICMPv6PacketTooBig, IPv6, Raw, conf, get_if_hwaddr, in6_getnsma,
                       in6_getnsmac, srp1)
from scapy.utils import checksum

from netns import SCAPY_PORTS

conf.verb = 0


def is_v6(address):
    return ":" in address


def link(iface, src, dst):
    """(our MAC, dst's MAC from its ARP reply or Neighbor Advertisement) on
    iface. An IPv6 address still tentative (DAD) answers nothing yet: the
    tries wait it out."""
    mac = get_if_hwaddr(iface)
    for _ in range(8):
        if is_v6(dst):
            group = in6_getnsma(socket.inet_pton(socket.AF_INET6, dst))
            ns = Ether(src=mac, dst=in6_getnsmac(group)) / IPv6(
                src=src, dst=socket.inet_ntop(socket.AF_INET6, group), hlim=255) / ICMPv6ND_NS(
                tgt=dst) / ICMPv6NDOptSrcLLAddr(lladdr=mac)
            na = srp1(ns, iface=iface, timeout=1)  # an NA answers an NS for its target
            if na is not None and ICMPv6ND_NA in na:
                return mac, na[Ether].src
        else:
            arp = srp1(Ether(dst="ff:ff:ff:ff:ff:ff") / ARP(pdst=dst, psrc=src), iface=iface, timeout=1)
            if arp is not None:
                return mac, arp[ARP].hwsrc
    raise RuntimeError(f"{dst} answers no ARP or NS on {iface}")


def tcp_bytes(ip_src, ip_dst, sport, dport, seq, ack, flags, window, options=b"", payload=b"", bad_checksum=False):
    """A TCP segment as bytes, options taken as they are (malformed ones
    too), the checksum right unless asked otherwise."""
    options += b"\x00" * (-len(options) % 4)
    head = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, (5 + len(options) // 4) << 4, flags, window, 0, 0)
    seg = head + options + payload
    if is_v6(ip_src):  # RFC 8200 8.1
        pseudo = socket.inet_pton(socket.AF_INET6, ip_src) + socket.inet_pton(socket.AF_INET6, ip_dst) + \
            struct.pack("!IxxxB", len(seg), 6)
    else:
        pseudo = socket.inet_aton(ip_src) + socket.inet_aton(ip_dst) + struct.pack("!BBH", 0, 6, len(seg))
    csum = checksum(pseudo + seg) ^ (0x5555 if bad_checksum else 0)
    return seg[:16] + struct.pack("!H", csum) + seg[18:]


class Peer:
    """Frames from `dst` on `iface`, collected as they come, and a sender."""

    def __init__(self, iface, src, dst):
        self.iface, self.src, self.dst = iface, src, dst
        self.l3 = IPv6 if is_v6(dst) else IP
        self.mac, self.dmac = link(iface, src, dst)
        self.sock = conf.L2socket(iface=iface)
        self.frames = []
        self.lock = threading.Lock()
        started = threading.Event()
        self.sniffer = AsyncSniffer(iface=iface, store=False, prn=self._take, started_callback=started.set,
                                    lfilter=lambda p: self.l3 in p and p[self.l3].src == dst)
        self.sniffer.start()
        started.wait(5)
        time.sleep(0.1)

    def _take(self, p):
        p.time_seen = time.monotonic()
        with self.lock:
            self.frames.append(p)

    def mark(self):
        with self.lock:
            return len(self.frames)

    def since(self, mark):
        with self.lock:
            return self.frames[mark:]

    def ip(self, **fields):
        """The IP header from us to dst (IPv4 or IPv6)."""
        return self.l3(src=self.src, dst=self.dst, **fields)

    def raw_tcp(self, segment):
        """`segment` (bytes, from tcp_bytes) behind our IP header as it is."""
        return self.ip(nh=6) / Raw(segment) if self.l3 is IPv6 else self.ip(proto=6) / Raw(segment)

    def spoofed(self, i):
        """The i-th address on dst's subnet that nobody holds."""
        if self.l3 is IPv6:
            return self.dst.rsplit(":", 1)[0] + f":{0x100 + i:x}"
        return self.dst.rsplit(".", 1)[0] + f".{100 + i}"

    def send(self, l3, dmac=None):
        self.sock.send(Ether(src=self.mac, dst=dmac or self.dmac) / l3)

    def frame(self, l3):
        return bytes(Ether(src=self.mac, dst=self.dmac) / l3)

    def close(self):
        self.sniffer.stop()
        self.sock.close()


_ports = iter(random.sample(range(SCAPY_PORTS[0], SCAPY_PORTS[1] + 1), SCAPY_PORTS[1] - SCAPY_PORTS[0] + 1))


class Conn:
    """One connection scapy opens to dst:dport. snd_nxt and rcv_nxt are
    scapy's; the server's RCV.NXT is our snd_nxt."""

    def __init__(self, peer, dport, window=65535, options=None, timestamps=False):
        self.p, self.dport, self.window = peer, dport, window
        self.sport = next(_ports)
        self.iss = random.randrange(1 << 32)
        self.snd_nxt = self.iss
        self.rcv_nxt = None
        self.options = options if options is not None else [("MSS", 1460)]
        self.synack = None
        # RFC 7323: with timestamps every segment after the SYN carries
        # (tsval, tsecr); tsval steps by one a segment, tsecr echoes the
        # SYN-ACK's.
        self.tsval = random.randrange(1 << 31) if timestamps else None
        self.tsecr = 0
        if timestamps:
            self.options = self.options + [("Timestamp", (self.tsval, 0))]

    def ip(self):
        return self.p.ip()

    def tcp(self, flags, seq=None, ack=None, window=None, options=(), tsval=None):
        options = list(options)
        if self.tsval is not None and self.rcv_nxt is not None and not any(o[0] == "Timestamp" for o in options):
            self.tsval = (self.tsval + 1) % (1 << 32)
            options.append(("Timestamp", (self.tsval if tsval is None else tsval, self.tsecr)))
        return TCP(sport=self.sport, dport=self.dport, flags=flags, seq=self.snd_nxt if seq is None else seq,
                   ack=(self.rcv_nxt or 0) if ack is None else ack, window=self.window if window is None else window,
                   options=options)

    def mine(self, frames):
        return [f for f in frames if TCP in f and f[TCP].sport == self.dport and f[TCP].dport == self.sport]

    def wait_port(self, mark, port, timeout):
        """The first segment since `mark` from `port` to our source port."""
        end = time.monotonic() + timeout
        while True:
            for f in self.p.since(mark):
                if TCP in f and f[TCP].sport == port and f[TCP].dport == self.sport:
                    return f
            if time.monotonic() >= end:
                return None
            time.sleep(0.01)

    def wait(self, mark, pred, timeout):
        """The first of our segments since `mark` that satisfies pred, or None."""
        end = time.monotonic() + timeout
        while True:
            for f in self.mine(self.p.since(mark)):
                if pred(f[TCP]):
                    return f
            if time.monotonic() >= end:
                return None
            time.sleep(0.01)

    def syn(self, timeout=3):
        """Our SYN; the server's SYN-ACK (its TCP layer), or None. The
        handshake is left for the caller to finish."""
        m = self.p.mark()
        self.p.send(self.ip() / self.tcp("S", seq=self.iss, ack=0, options=self.options))
        f = self.wait(m, lambda t: t.flags.S and t.flags.A and t.ack == (self.iss + 1) % (1 << 32), timeout)
        return None if f is None else f[TCP]

    def open(self, timeout=3):
        """The three-way handshake; True when established."""
        f = self.syn(timeout)
        return f is not None and self.complete(f)

    def complete(self, f):
        """Ends the handshake whose SYN-ACK (TCP layer) is `f` with our ACK;
        False when timestamps were asked for and not taken."""
        self.synack = f
        self.rcv_nxt = (f.seq + 1) % (1 << 32)
        if self.tsval is not None:
            ts = dict(o for o in f.options if isinstance(o, tuple) and len(o) == 2).get("Timestamp")
            if ts is None:
                return False  # asked for timestamps, the server did not take them
            self.tsecr = ts[0]
        self.snd_nxt = (self.iss + 1) % (1 << 32)
        self.p.send(self.ip() / self.tcp("A"))
        return True

    def send_data(self, data, seq=None, ack=None, window=None, tsval=None, flags="PA"):
        seq = self.snd_nxt if seq is None else seq
        self.p.send(self.ip() / self.tcp(flags, seq=seq, ack=ack, window=window, tsval=tsval) / Raw(data))
        if seq == self.snd_nxt:
            self.snd_nxt = (self.snd_nxt + len(data)) % (1 << 32)

    def ack(self, window=None):
        self.p.send(self.ip() / self.tcp("A", window=window))

    def echoed(self, mark, start):
        """The bytes of ours since `mark` from sequence number `start` on,
        as far as they are contiguous."""
        pieces = sorted(((f[TCP].seq - start) % (1 << 32), f[Raw].load)
                        for f in self.mine(self.p.since(mark)) if Raw in f)
        have = b""
        for off, load in pieces:  # a resent range may start inside one seen before
            if off <= len(have) < off + len(load) and off < 1 << 31:
                have += load[len(have) - off:]
        return have

    def payloads(self, mark):
        """Data segments of ours since `mark`: (seq, length, time_seen)."""
        out = []
        for f in self.mine(self.p.since(mark)):
            n = len(f[TCP].payload) if f[TCP].payload else 0
            if n > 0 and Raw in f:
                out.append((f[TCP].seq, len(f[Raw].load), f.time_seen))
        return out

    def echo(self, data, timeout=3):
        """Send `data`, wait for it echoed, ACK it; True when it all came back."""
        m = self.p.mark()
        start = self.rcv_nxt
        self.send_data(data)
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            have = self.echoed(m, start)
            if len(have) >= len(data):
                self.rcv_nxt = (start + len(have)) % (1 << 32)
                self.ack()
                return have[:len(data)] == data
            time.sleep(0.02)
        return False

    def reset(self):
        self.p.send(self.ip() / self.tcp("R"))


def icmp_frag_needed(conn, seq, mtu):
    """ICMP destination unreachable, fragmentation needed (RFC 1191), or
    ICMPv6 Packet Too Big (RFC 8201), from scapy's address, quoting the
    server's segment at `seq` to us (its IP header and 20 TCP bytes)."""
    tcp = TCP(sport=conn.dport, dport=conn.sport, seq=seq, ack=conn.snd_nxt, flags="A")
    if conn.p.l3 is IPv6:
        quoted = IPv6(src=conn.p.dst, dst=conn.p.src, plen=1440) / tcp
        return conn.ip() / ICMPv6PacketTooBig(mtu=mtu) / bytes(quoted)[:60]
    quoted = IP(src=conn.p.dst, dst=conn.p.src, flags="DF", len=1500) / tcp
    return conn.ip() / ICMP(type=3, code=4, nexthopmtu=mtu) / bytes(quoted)[:40]
