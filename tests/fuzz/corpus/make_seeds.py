#!/usr/bin/env python3
"""Writes the generated seeds of tests/fuzz/corpus (the config_load seeds are
written by hand):

  wire_frame/     Ethernet frames as a driver delivers them (no FCS; padded
                  to 60 bytes), checksums right: what the stack receives from
                  Linux and on a LAN (ARP, ping, ICMP errors, UDP, a TCP
                  handshake with Linux's SYN options, data, SACK, FIN, RST),
                  an 802.1Q-tagged frame, IPv4 options, a fragment; IPv6:
                  Linux's ND, MLD and ICMPv6 (tests/stack/wire/frames.hh), a
                  router advertisement.
  mysql_session/  the captured sessions of tests/apps/mysql_proxy/captures.hh
                  in the input shape of tests/fuzz/mysql_session.cc.
  tcp_host/       step sequences in the input shape of tests/fuzz/tcp_host.cc:
                  data both ways, a second peer's handshake and close, FIN and
                  TIME-WAIT, RST and SYN in and out of the window, SACK and
                  out-of-order data, a SYN flood on a small backlog (with and
                  without cookies), zero windows, keepalive.
  stack/          step sequences in the input shape of tests/fuzz/stack.cc (a
                  whole stack on the wire): data both ways, fragments, a narrower
                  path and ICMP fragmentation needed, an active open, UDP, raw
                  frames, a SYN flood with cookies, the listener made again.
  tcp_pair/       settings and per-segment wire decisions in the shape of
                  tests/fuzz/tcp_pair.cc: a clean wire, losses, duplicates,
                  reordering, a slow reader on small buffers, no options.

  tests/fuzz/corpus/make_seeds.py   (from anywhere; rewrites its files in those folders)
"""
import pathlib
import re
import struct

HERE = pathlib.Path(__file__).resolve().parent
CAPTURES = HERE.parents[1] / "apps" / "mysql_proxy" / "captures.hh"

US = bytes.fromhex("020000000002")      # the stack's port: a locally administered address
PEER = bytes.fromhex("5a8c1f2e3d4b")    # a Linux peer
BROADCAST = b"\xff" * 6
OUR_IP = bytes([10, 77, 0, 2])
PEER_IP = bytes([10, 77, 0, 1])


def checksum(data):
    if len(data) % 2:
        data += b"\0"
    s = sum(struct.unpack(f"!{len(data) // 2}H", data))
    while s >> 16:
        s = (s & 0xFFFF) + (s >> 16)
    return ~s & 0xFFFF


def ethernet(dst, src, ethertype, payload, vlan=None):
    tag = b"" if vlan is None else struct.pack("!HH", 0x8100, vlan)
    frame = dst + src + tag + struct.pack("!H", ethertype) + payload
    return frame + b"\0" * max(0, 60 - len(frame))


def ipv4(src, dst, proto, payload, ident=1, flags=0x4000, ttl=64, options=b""):
    ihl = 5 + len(options) // 4
    header = struct.pack("!BBHHHBBH4s4s", 0x40 | ihl, 0, 4 * ihl + len(payload), ident, flags, ttl, proto, 0, src, dst)
    header += options
    header = header[:10] + struct.pack("!H", checksum(header)) + header[12:]
    return header + payload


def pseudo(src, dst, proto, length):
    return src + dst + struct.pack("!BBH", 0, proto, length)


def udp(src, dst, sport, dport, payload, with_checksum=True):
    header = struct.pack("!HHHH", sport, dport, 8 + len(payload), 0)
    if with_checksum:
        c = checksum(pseudo(src, dst, 17, 8 + len(payload)) + header + payload) or 0xFFFF
        header = header[:6] + struct.pack("!H", c)
    return header + payload


FIN, SYN, RST, PSH, ACK = 0x01, 0x02, 0x04, 0x08, 0x10


def tcp(src, dst, sport, dport, seq, ack, flags, options=b"", payload=b"", window=64240):
    offset = (20 + len(options)) // 4
    header = struct.pack("!HHIIBBHHH", sport, dport, seq, ack, offset << 4, flags, window, 0, 0) + options
    c = checksum(pseudo(src, dst, 6, len(header) + len(payload)) + header + payload)
    return header[:16] + struct.pack("!H", c) + header[18:] + payload


def icmp(kind, code, rest, data):
    message = struct.pack("!BBH", kind, code, 0) + rest + data
    return message[:2] + struct.pack("!H", checksum(message)) + message[4:]


def ts(value, echo):
    return struct.pack("!BBII", 8, 10, value, echo)


NOP = b"\x01"
SYN_OPTIONS = struct.pack("!BBH", 2, 4, 1460) + b"\x04\x02" + ts(2894120001, 0) + NOP + b"\x03\x03\x07"
SYNACK_OPTIONS = struct.pack("!BBH", 2, 4, 1460) + b"\x04\x02" + ts(104857, 2894120001) + NOP + b"\x03\x03\x09"
TS_OPTIONS = NOP + NOP + ts(2894120044, 104861)
SACK_OPTIONS = NOP + NOP + ts(2894120090, 104870) + NOP + NOP + struct.pack(
    "!BBIIII", 5, 18, 1000003001, 1000004449, 1000005897, 1000007345)


def to_us(segment, proto=6, **kw):
    return ethernet(US, PEER, 0x0800, ipv4(PEER_IP, OUR_IP, proto, segment, **kw))


def from_us(segment, proto=6):
    return ethernet(PEER, US, 0x0800, ipv4(OUR_IP, PEER_IP, proto, segment))


def wire_captures(names):
    """The hex frames of tests/stack/wire/frames.hh with these names."""
    text = (HERE.parents[1] / "stack" / "wire" / "frames.hh").read_text()
    found = {}
    for m in re.finditer(r"inline constexpr std::string_view (\w+) =\s*((?:\"[0-9a-f]*\"\s*)+);", text):
        if m.group(1) in names:
            found[m.group(1)] = "".join(re.findall(r"\"([0-9a-f]*)\"", m.group(2)))
    return found


WIRE_CAPTURES_IPV6 = wire_captures({"mld_report_hex", "ns_dad_hex", "rs_hex", "na_hex", "icmpv6_echo_request_hex",
                                    "icmpv6_port_unreachable_hex"})


def wire_frames():
    frames = {}
    arp = lambda op, tha, sha, spa, tpa: struct.pack("!HHBBH6s4s6s4s", 1, 0x0800, 6, 4, op, sha, spa, tha, tpa)
    frames["arp-request"] = ethernet(BROADCAST, PEER, 0x0806, arp(1, b"\0" * 6, PEER, PEER_IP, OUR_IP))
    frames["arp-reply"] = ethernet(PEER, US, 0x0806, arp(2, PEER, US, OUR_IP, PEER_IP))
    ping_data = bytes(range(0x10, 0x10 + 48)) + struct.pack("!Q", 1767225600)
    frames["icmp-echo-request"] = to_us(icmp(8, 0, struct.pack("!HH", 0x1c2d, 1), ping_data), proto=1)
    frames["icmp-echo-reply"] = from_us(icmp(0, 0, struct.pack("!HH", 0x1c2d, 1), ping_data), proto=1)
    # RFC 1191: a router's "fragmentation needed", quoting our TCP segment.
    quoted_tcp = ipv4(OUR_IP, bytes([10, 99, 0, 7]), 6, tcp(OUR_IP, bytes([10, 99, 0, 7]), 6033, 40112, 1000000001,
                                                             2894120045, ACK | PSH, payload=b"x" * 1452))[:28]
    frames["icmp-frag-needed"] = ethernet(US, PEER, 0x0800, ipv4(bytes([10, 77, 0, 254]), OUR_IP, 1,
                                                                  icmp(3, 4, struct.pack("!HH", 0, 1400), quoted_tcp)))
    quoted_udp = ipv4(OUR_IP, PEER_IP, 17, udp(OUR_IP, PEER_IP, 5353, 9999, b"hello"))[:28]
    frames["icmp-port-unreachable"] = to_us(icmp(3, 3, b"\0" * 4, quoted_udp), proto=1)
    dns = bytes.fromhex("abcd01000001000000000000076578616d706c6503636f6d0000010001")
    frames["udp-dns-query"] = to_us(udp(PEER_IP, OUR_IP, 53211, 53, dns), proto=17)
    frames["udp-no-checksum"] = to_us(udp(PEER_IP, OUR_IP, 4000, 7, b"echo me", with_checksum=False), proto=17)
    frames["tcp-syn"] = to_us(tcp(PEER_IP, OUR_IP, 40112, 6033, 2894120000, 0, SYN, SYN_OPTIONS))
    frames["tcp-syn-ack"] = from_us(tcp(OUR_IP, PEER_IP, 6033, 40112, 1000000000, 2894120001, SYN | ACK,
                                        SYNACK_OPTIONS, window=65535))
    query = bytes.fromhex("210000000373656c65637420404076657273696f6e5f636f6d6d656e74206c696d69742031")
    frames["tcp-data"] = to_us(tcp(PEER_IP, OUR_IP, 40112, 6033, 2894120001, 1000000001, ACK | PSH, TS_OPTIONS,
                                   query, window=502))
    frames["tcp-ack-sack"] = to_us(tcp(PEER_IP, OUR_IP, 40112, 6033, 2894120038, 1000001553, ACK, SACK_OPTIONS,
                                       window=501))
    # Two SACK options in one segment (found by fuzzing: tests/fuzz/wire_frame.cc, same_options).
    two_sacks = NOP + NOP + struct.pack("!BBIIII", 5, 18, 1000003001, 1000004449, 1000005897, 1000007345) + NOP + NOP + \
        struct.pack("!BBII", 5, 10, 1000008793, 1000010241)
    frames["tcp-two-sack-options"] = to_us(tcp(PEER_IP, OUR_IP, 40112, 6033, 2894120038, 1000001553, ACK, two_sacks,
                                               window=501))
    frames["tcp-fin"] = to_us(tcp(PEER_IP, OUR_IP, 40112, 6033, 2894120038, 1000008793, FIN | ACK, TS_OPTIONS))
    frames["tcp-rst"] = to_us(tcp(PEER_IP, OUR_IP, 40112, 6033, 2894120039, 0, RST, window=0))
    vlan_segment = tcp(PEER_IP, OUR_IP, 40113, 6033, 77, 1000000001, ACK, TS_OPTIONS)
    frames["vlan-tcp-ack"] = ethernet(US, PEER, 0x0800, ipv4(PEER_IP, OUR_IP, 6, vlan_segment), vlan=(3 << 13) | 42)
    router_alert = bytes.fromhex("94040000")  # RFC 2113
    frames["ipv4-options-udp"] = to_us(udp(PEER_IP, OUR_IP, 5000, 5001, b"alert"), proto=17, options=router_alert)
    # A UDP datagram of 200 bytes in two fragments: 104 bytes, then 96 at offset 104.
    big = udp(PEER_IP, OUR_IP, 5000, 5001, bytes(i & 0xFF for i in range(192)))
    frames["ipv4-first-fragment"] = to_us(big[:104], proto=17, ident=0x4242, flags=0x2000)
    frames["ipv4-last-fragment"] = to_us(big[104:], proto=17, ident=0x4242, flags=13)
    # IPv6: an RFC 4861 neighbor solicitation for fe80::2 with the source's
    # link-layer address.
    src6 = bytes.fromhex("fe800000000000005a8c1ffffe2e3d4b")
    dst6 = bytes.fromhex("ff0200000000000000000001ff000002")
    ns = struct.pack("!BBHI", 135, 0, 0, 0) + bytes.fromhex("fe800000000000000000000000000002") + b"\x01\x01" + PEER
    ns = ns[:2] + struct.pack("!H", checksum(src6 + dst6 + struct.pack("!II", len(ns), 58) + ns)) + ns[4:]
    ipv6_ns = struct.pack("!IHBB", 0x60000000, len(ns), 58, 255) + src6 + dst6 + ns
    frames["ipv6-neighbor-solicitation"] = ethernet(bytes.fromhex("3333ff000002"), PEER, 0x86DD, ipv6_ns)
    # A router advertisement from fe80::1: M and O, its link-layer address,
    # the MTU and a /64 prefix for autoconfiguration.
    router6 = bytes.fromhex("fe800000000000000000000000000001")
    all_nodes6 = bytes.fromhex("ff020000000000000000000000000001")
    ra = struct.pack("!BBHBBHII", 134, 0, 0, 64, 0xC0, 1800, 30000, 1000) + b"\x01\x01" + PEER
    ra += struct.pack("!BBHI", 5, 1, 0, 1500)
    ra += struct.pack("!BBBBIII", 3, 4, 64, 0xC0, 86400, 14400, 0) + bytes.fromhex("20010db8007700000000000000000000")
    ra = ra[:2] + struct.pack("!H", checksum(router6 + all_nodes6 + struct.pack("!II", len(ra), 58) + ra)) + ra[4:]
    ipv6_ra = struct.pack("!IHBB", 0x60000000, len(ra), 58, 255) + router6 + all_nodes6 + ra
    frames["ipv6-router-advertisement"] = ethernet(bytes.fromhex("333300000001"), PEER, 0x86DD, ipv6_ra)
    # Linux's own (tests/stack/wire/frames.hh): MLD, DAD, RS, NS and NA,
    # ping and a port unreachable quoting a UDP datagram.
    for name, hex_text in WIRE_CAPTURES_IPV6.items():
        frames["ipv6-" + name.removesuffix("_hex").replace("_", "-")] = ethernet(
            bytes.fromhex(hex_text[:12]), bytes.fromhex(hex_text[12:24]), 0x86DD, bytes.fromhex(hex_text[28:]))
    return frames


def captured_sessions():
    text = CAPTURES.read_text()
    sessions = {}
    for m in re.finditer(r"inline constexpr captured_packet (\w+)\[\] = \{(.*?)\n\};", text, re.S):
        packets = []
        for p in re.finditer(r"\{'([SC])',\s*(\d+),\s*((?:\"[0-9a-f]*\"\s*)+)\}", m.group(2)):
            payload = bytes.fromhex("".join(re.findall(r"\"([0-9a-f]*)\"", p.group(3))))
            packets.append((p.group(1), int(p.group(2)), payload))
        sessions[m.group(1)] = packets
    return sessions


def frame(seq, payload):
    return struct.pack("<I", len(payload))[:3] + bytes([seq]) + payload


def mysql_input(packets, read_size, limits):
    client = b"".join(frame(s, p) for side, s, p in packets if side == "C")
    server = b"".join(frame(s, p) for side, s, p in packets if side == "S")
    return bytes([read_size, limits]) + struct.pack("<H", len(client)) + client + server


# tcp_host steps (see tests/fuzz/tcp_host.cc for the encoding).
def host_settings(flags=0x07, mss=229, buffers=0x66, listener=0x0F):
    return bytes([flags, mss, buffers, listener])


def seg(peer, control=0, seq_sel=0, ack_sel=0, length=0, opts=0, win=0, change=None):
    step = bytes([0, peer, control, seq_sel, ack_sel, length, opts | (64 if change else 0), win])
    return step + (bytes(change) if change else b"")


def wait(b):
    return bytes([2, b])


def app(peer, call, amount=0, shift=0):
    return bytes([3, peer | call << 4, amount, shift])


H_SYN, H_FIN, H_RST, H_PSH = 1, 2, 3, 4  # tcp_host control bytes
ACCEPT, READ, WRITE, SHUTDOWN, CLOSE, ABORT, READ_ALL = 0, 1, 6, 10, 12, 14, 15


def handshake(peer, opts=0x0F):
    # A SYN with MSS 1460, window scale and SACK-permitted, then the ACK, accept.
    return seg(peer, H_SYN, seq_sel=0x10, ack_sel=7, opts=opts) + seg(peer) + app(0, ACCEPT)


def tcp_host_seeds():
    data = seg(0, H_PSH, length=125)                       # 1000 bytes in order
    return {
        "established.bin": host_settings(),
        "data-in-read.bin": host_settings() + data + data + app(0, READ, 200, 2) + wait(0x48) + app(0, READ_ALL),
        "data-out-acked.bin": host_settings() + app(0, WRITE, 250, 4) + wait(5) + seg(0) + wait(0x45) + seg(0),
        "second-peer-close.bin": host_settings() + handshake(1) + app(1, WRITE, 100, 1) + seg(1, H_PSH, length=20)
        + app(1, READ_ALL) + app(1, CLOSE) + seg(1, H_FIN) + wait(0xC4),
        "peer-fin-time-wait.bin": host_settings() + data + seg(0, H_FIN) + app(0, READ_ALL) + app(0, CLOSE)
        + seg(0) + wait(0xC8),
        "rst-and-syn-in-window.bin": host_settings() + seg(0, H_RST, seq_sel=5 | 1 << 3) + seg(0, H_SYN)
        + seg(0, H_RST, seq_sel=4 | 2 << 3) + seg(0, H_RST),
        "ooo-and-sack.bin": host_settings() + seg(0, H_PSH, seq_sel=5 | 4 << 3, length=50) + data
        + app(0, WRITE, 250, 6) + seg(0, opts=32, win=3) + wait(0x50) + app(0, READ_ALL),
        "syn-flood-cookies.bin": host_settings(listener=0x10) + b"".join(
            seg(p, H_SYN, seq_sel=0x10 + p, ack_sel=7, opts=0x0F) for p in range(1, 15)) + seg(3) + app(0, ACCEPT),
        "syn-flood-backlog.bin": host_settings(listener=0x20) + b"".join(
            seg(p, H_SYN, seq_sel=0x10 + p, ack_sel=7) for p in range(1, 15)) + wait(0x4A),
        "zero-window-persist.bin": host_settings(buffers=0x11) + seg(0, win=0x40) + app(0, WRITE, 250, 4)
        + wait(0x50) + wait(0x90) + seg(0) + wait(0x50),
        "keepalive-no-options.bin": host_settings(flags=0x30) + wait(0x81) + wait(0x81) + wait(0xC2),
        "closed-port-and-changed.bin": host_settings() + seg(15, H_SYN) + seg(0, H_PSH, length=4, change=(20, 0x10))
        + seg(0, length=4, change=(13, 0x02)),
    }


# stack steps (tests/fuzz/stack.cc): the opcodes and calls differ from tcp_host's.
def stack_settings(flags=0x07, mss=229, buffers=0x66, listener=0x1F):
    return bytes([flags, mss, buffers, listener])


def s_seg(peer, control=0, seq_sel=0, ack_sel=0, length=0, opts=0, win=0, change=None, fragments=None):
    step = bytes([0, peer, control, seq_sel, ack_sel, length,
                  opts | (64 if change else 0) | (128 if fragments is not None else 0), win])
    return step + (bytes(change) if change else b"") + (bytes([fragments]) if fragments is not None else b"")


def s_wait(b):
    return bytes([3, b])


def s_app(peer, call, amount=0, shift=0):
    return bytes([4, peer | call << 4, amount, shift])


def s_icmp(peer, code, mtu_units=0, quote_change=0):
    return bytes([6, peer, code, mtu_units, quote_change])


def s_other(kind, payload):
    return bytes([7, kind, len(payload)]) + payload


S_ACCEPT, S_READ, S_READ_VIEW, S_WRITE, S_WRITE_VIEW, S_SHUTDOWN, S_CLOSE, S_ABORT = 0, 1, 5, 6, 8, 9, 10, 12
S_UDP, S_CONNECT, S_RELISTEN = 13, 14, 15
ACTIVE = 15


def stack_seeds():
    data = s_seg(0, H_PSH, length=125)
    return {
        "established.bin": stack_settings(),
        "data-in-read.bin": stack_settings() + data + data + s_app(0, S_READ, 200, 2) + s_wait(0x48)
        + s_app(0, S_READ_VIEW, 255, 4),
        "data-out-acked.bin": stack_settings() + s_app(0, S_WRITE, 250, 4) + s_wait(5) + s_seg(0) + s_wait(0x45)
        + s_seg(0) + s_app(0, S_WRITE_VIEW, 100, 3) + s_wait(0x45) + s_seg(0),
        "fragments.bin": stack_settings() + s_seg(0, H_PSH, length=40, fragments=0x05) + s_seg(0, H_PSH, length=40, fragments=0x35)
        + s_app(0, S_READ, 255, 2),
        "path-mtu.bin": stack_settings(listener=0x5F) + s_app(0, S_WRITE, 250, 5) + s_wait(2)
        + s_icmp(0, 0x14, 72) + s_wait(0x48) + s_seg(0) + s_wait(0x48),
        "connect.bin": stack_settings() + s_app(ACTIVE, S_CONNECT) + s_wait(3) + s_seg(ACTIVE, H_SYN, opts=0x0F)
        + s_wait(1) + s_app(ACTIVE, S_WRITE, 100, 1) + s_seg(ACTIVE, H_PSH, length=10) + s_app(ACTIVE, S_READ, 200)
        + s_app(ACTIVE, S_CLOSE) + s_seg(ACTIVE, H_FIN) + s_wait(0xC4),
        "udp-and-raw.bin": stack_settings() + s_other(4, b"query") + s_app(0, S_UDP, 255) + s_app(0, S_UDP, 16)
        + s_other(0, b"nobody") + s_other(2, b"\x00\x01\x08\x00\x06\x04\x00\x01") + s_other(1 | 1 << 2, b"icmp?")
        + s_other(6, b"\x45\x00\x00\x14"),
        "syn-flood-cookies.bin": stack_settings(listener=0x18) + b"".join(
            s_seg(p, H_SYN, seq_sel=0x10 + p, ack_sel=7, opts=0x0F) for p in range(1, 14)) + s_seg(3) + s_app(0, S_ACCEPT),
        "relisten-queued.bin": stack_settings() + s_seg(1, H_SYN, seq_sel=0x11, ack_sel=7, opts=0x0F) + s_seg(1)
        + s_app(0, S_RELISTEN) + s_seg(2, H_SYN, seq_sel=0x12, ack_sel=7) + s_seg(2) + s_app(0, S_ACCEPT)
        + s_app(2, S_ABORT),
        "rst-and-syn-in-window.bin": stack_settings() + s_seg(0, H_RST, seq_sel=5 | 1 << 3) + s_seg(0, H_SYN)
        + s_seg(0, H_RST, seq_sel=4 | 2 << 3) + s_seg(0, H_RST),
        # IPv6 (tests/fuzz/ipv6_frames.hh, kind 3 | mode << 2): an echo request; UDP in two fragments behind
        # Destination Options, read; the same to a port nobody bound, fragments reversed; an unknown Next
        # Header; a Redirect from a node that is not the first hop.
        "ipv6.bin": stack_settings() + s_other(3 | 2 << 2, bytes([128, 0, 0, 7, 0, 1]) + b"ping")
        + s_other(3 | (1 | 4 | 8) << 2, b"x" * 40) + s_app(0, S_UDP, 255) + s_other(3 | (3 | 4 | 8 | 16) << 2, b"y" * 20)
        + s_other(3, bytes([253]) + b"junk")
        + s_other(3 | (2 | 8) << 2, bytes([137, 0, 0, 0, 0, 0]) + bytes([0xfe, 0x80] + [0] * 13 + [9])
                  + bytes([0x20, 0x01, 0x0d, 0xb8] + [0] * 11 + [5])),
        # TCP over IPv6 (settings [3] bit 7: the odd peers from fd99::2, the listener on [::]): peer 1's
        # handshake, data whole and in two fragments, read; a write, and a Packet Too Big from the router
        # (1,280 bytes) quoting it; an IPv4 peer beside it on the same listener; the stack connects over IPv6;
        # UDP datagrams to the peer over IPv6, one past the link's MTU; a Packet Too Big (1,296) and a
        # fragmentation needed (576) quoting the last datagram of each family, then one past each.
        "tcp-ipv6.bin": stack_settings(listener=0x9F) + s_seg(1, H_SYN, seq_sel=0x11, ack_sel=7, opts=0x0F) + s_seg(1)
        + s_app(0, S_ACCEPT) + s_seg(1, H_PSH, length=40) + s_seg(1, H_PSH, length=40, fragments=0x05)
        + s_app(1, S_READ, 255, 2) + s_app(1, S_WRITE, 250, 5) + s_wait(2) + s_icmp(1, 0x14, 160) + s_wait(0x48)
        + s_seg(1) + s_seg(2, H_SYN, seq_sel=0x12, ack_sel=7, opts=0x0F) + s_seg(2) + s_app(0, S_ACCEPT)
        + s_app(ACTIVE, S_CONNECT) + s_wait(3) + s_seg(ACTIVE, H_SYN, opts=0x0F) + s_wait(1)
        + s_app(ACTIVE, S_WRITE, 100, 1) + s_seg(ACTIVE, H_PSH, length=10) + s_app(ACTIVE, S_READ, 200)
        + s_app(1, S_UDP, 100) + s_app(1, S_UDP, 255, 4) + s_icmp(1, 0x34, 162) + s_app(1, S_UDP, 160, 3)
        + s_app(0, S_UDP, 250, 2) + s_icmp(0, 0x34, 72) + s_app(0, S_UDP, 250, 2),
    }


# tcp_pair: settings, then one decision per segment (tests/fuzz/tcp_pair.cc).
def pair_settings(flags=0xE7, mss=252, buffers=0x66, total=16000, reads=0):
    return bytes([flags, mss, buffers]) + struct.pack("<H", total) + bytes([reads])


def tcp_pair_seeds():
    return {
        "clean.bin": pair_settings(),
        "loss.bin": pair_settings() + bytes([0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 1, 0, 0, 0, 0, 0, 1]),
        "duplicates.bin": pair_settings() + bytes([2 | 3 << 2, 0, 2 | 10 << 2, 0, 0, 2, 0, 2 | 40 << 2] * 3),
        "reorder.bin": pair_settings() + bytes([0, 0, 3 | 5 << 2, 0, 0, 3 | 20 << 2, 0, 0, 3 | 60 << 2] * 3),
        "lost-syn-and-fin.bin": pair_settings(total=3000) + bytes([1, 0, 1, 0, 0, 0, 0, 0, 1, 1]),
        "slow-reader.bin": pair_settings(buffers=0x22, total=40000, reads=0x23) + bytes([0, 0, 0, 1] * 6),
        "no-options-newreno.bin": pair_settings(flags=0x10, mss=40, total=9000) + bytes([0, 1, 0, 0, 0, 3 | 30 << 2] * 4),
        "everything-lost.bin": pair_settings(flags=0x07, total=2000) + bytes([1] * 64),
    }


def write(folder, files):
    folder.mkdir(exist_ok=True)
    for name, data in files.items():
        (folder / name).write_bytes(data)


def main():
    write(HERE / "wire_frame", {f"{name}.bin": data for name, data in wire_frames().items()})
    seeds = {}
    for name, packets in captured_sessions().items():
        # The proxy's own limits (64 MiB, a 32 KiB read buffer), all bytes at once.
        seeds[f"{name}.bin"] = mysql_input(packets, 0, 0xFF)
    # Small reads into a 68-byte buffer, packets of 4 KiB at most: the framer
    # gathers the longer packets and holds back the short ones.
    seeds["mariadb_session-small-reads.bin"] = mysql_input(captured_sessions()["mariadb_session"], 7, 0x38)
    write(HERE / "mysql_session", seeds)
    write(HERE / "tcp_host", tcp_host_seeds())
    write(HERE / "tcp_pair", tcp_pair_seeds())
    write(HERE / "stack", stack_seeds())


if __name__ == "__main__":
    main()
