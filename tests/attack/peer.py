# tests/attack/peer.py: scapy's side of a TCP connection, segment by
# segment, for the probe and the attack suite. Runs inside the namespace
# whose kernel has the source address (netns.no_kernel_resets keeps that
# kernel from resetting what it did not open); frames go out and come in
# on one interface (the tap's kernel side, or a veth end).

import random
import socket
import struct
import threading
import time

from scapy.all import ARP, ICMP, IP, TCP, AsyncSniffer, Ether, Raw, conf, get_if_hwaddr, srp1  # noqa: E402
from scapy.utils import checksum

from netns import SCAPY_PORTS

conf.verb = 0


def link(iface, src, dst):
    """(our MAC, dst's MAC from its ARP reply) on iface."""
    for _ in range(5):
        arp = srp1(Ether(dst="ff:ff:ff:ff:ff:ff") / ARP(pdst=dst, psrc=src), iface=iface, timeout=1)
        if arp is not None:
            return get_if_hwaddr(iface), arp[ARP].hwsrc
    raise RuntimeError(f"{dst} answers no ARP on {iface}")


def tcp_bytes(ip_src, ip_dst, sport, dport, seq, ack, flags, window, options=b"", payload=b"", bad_checksum=False):
    """A TCP segment as bytes, options taken as they are (malformed ones
    too), the checksum right unless asked otherwise."""
    options += b"\x00" * (-len(options) % 4)
    head = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, (5 + len(options) // 4) << 4, flags, window, 0, 0)
    seg = head + options + payload
    pseudo = socket.inet_aton(ip_src) + socket.inet_aton(ip_dst) + struct.pack("!BBH", 0, 6, len(seg))
    csum = checksum(pseudo + seg) ^ (0x5555 if bad_checksum else 0)
    return seg[:16] + struct.pack("!H", csum) + seg[18:]


class Peer:
    """Frames from `dst` on `iface`, collected as they come, and a sender."""

    def __init__(self, iface, src, dst):
        self.iface, self.src, self.dst = iface, src, dst
        self.mac, self.dmac = link(iface, src, dst)
        self.sock = conf.L2socket(iface=iface)
        self.frames = []
        self.lock = threading.Lock()
        started = threading.Event()
        self.sniffer = AsyncSniffer(iface=iface, store=False, prn=self._take, started_callback=started.set,
                                    lfilter=lambda p: IP in p and p[IP].src == dst)
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

    def send(self, l3):
        self.sock.send(Ether(src=self.mac, dst=self.dmac) / l3)

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
        return IP(src=self.p.src, dst=self.p.dst)

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

    def open(self, timeout=3):
        """The three-way handshake; True when established."""
        m = self.p.mark()
        self.p.send(self.ip() / self.tcp("S", seq=self.iss, ack=0, options=self.options))
        f = self.wait(m, lambda t: t.flags.S and t.flags.A and t.ack == (self.iss + 1) % (1 << 32), timeout)
        if f is None:
            return False
        self.synack = f[TCP]
        self.rcv_nxt = (f[TCP].seq + 1) % (1 << 32)
        if self.tsval is not None:
            ts = dict(o for o in f[TCP].options if isinstance(o, tuple) and len(o) == 2).get("Timestamp")
            if ts is None:
                return False  # asked for timestamps, the server did not take them
            self.tsecr = ts[0]
        self.snd_nxt = (self.iss + 1) % (1 << 32)
        self.p.send(self.ip() / self.tcp("A"))
        return True

    def send_data(self, data, seq=None, ack=None, window=None, tsval=None):
        seq = self.snd_nxt if seq is None else seq
        self.p.send(self.ip() / self.tcp("PA", seq=seq, ack=ack, window=window, tsval=tsval) / Raw(data))
        if seq == self.snd_nxt:
            self.snd_nxt = (self.snd_nxt + len(data)) % (1 << 32)

    def ack(self, window=None):
        self.p.send(self.ip() / self.tcp("A", window=window))

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
        got = {}
        while time.monotonic() < end:
            for f in self.mine(self.p.since(m)):
                if Raw in f:
                    got[(f[TCP].seq - start) % (1 << 32)] = f[Raw].load
            have, off = b"", 0
            while off in got:
                have += got[off]
                off += len(got[off])
            if len(have) >= len(data):
                self.rcv_nxt = (start + len(have)) % (1 << 32)
                self.ack()
                return have[:len(data)] == data
            time.sleep(0.02)
        return False

    def reset(self):
        self.p.send(self.ip() / self.tcp("R"))


def icmp_frag_needed(conn, seq, mtu):
    """ICMP destination unreachable, fragmentation needed (RFC 1191), from
    scapy's address, quoting the server's segment at `seq` to us."""
    quoted = IP(src=conn.p.dst, dst=conn.p.src, flags="DF", len=1500) / TCP(
        sport=conn.dport, dport=conn.sport, seq=seq, ack=conn.snd_nxt, flags="A")
    return IP(src=conn.p.src, dst=conn.p.dst) / ICMP(type=3, code=4, nexthopmtu=mtu) / bytes(quoted)[:40]
