#!/usr/bin/env python3
# tests/attack/probe.py: a wire-level conformance probe. The same cases,
# crafted with scapy, against (a) affine's stack on net_tap and (b) Linux in
# a namespace (a veth pair, a kernel echo listener); one JSON line per case
# per target, then a summary line. It fails when affine does not give the
# RFC's answer in a case where Linux does; a case where Linux differs from
# the RFC is reported, not failed.
#
#   tests/attack/probe.py AFFINE_ECHO [--ipv6] [CASE...]
#
# With --ipv6 every case runs over IPv6 (affine's port and the Linux pair
# hold fd88::/64 and fd89::/64 addresses; ICMP becomes ICMPv6).
#
# Exit 0 pass, 1 fail, 77 skip (no root, netns or scapy).
#
# Inside, `probe.py --worker TARGET IFACE SRC DST PORT COOKIES-CMD` runs the
# cases from the scapy side's namespace (netns.py sets them up).

import concurrent.futures
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
    "out_of_order": ("data past a hole, SACK permitted (RFC 5681 4.2, RFC 2018 4)", "dup_ack_with_sack"),
    "hole_filled": ("the hole then filled (RFC 9293 3.10.7.4)", "in_order_echo"),
    "dsack": ("a segment already acknowledged, again, SACK permitted (RFC 2883 4.1.1)", "dsack"),
    "overlap": ("data starting 4 bytes before RCV.NXT (RFC 9293 3.10.7.4)", "trimmed"),
    "no_ack_flag": ("data without the ACK bit in ESTABLISHED (RFC 9293 3.10.7.4)", "dropped"),
    "bad_checksum": ("data with a wrong TCP checksum (RFC 1122 4.2.2.7)", "dropped"),
    "keepalive": ("a keep-alive: SEQ = SND.NXT - 1, one old octet (RFC 1122 4.2.3.6)", "dropped_with_ack"),
    "mss_honored": ("a SYN with MSS 1000 (RFC 9293 3.7.1)", "segments_of_1000"),
    "ip_fragments": ("a segment in IP fragments, the last first (RFC 1122 3.3.2, RFC 8200 4.5)", "reassembled"),
    "mss_absent": ("a SYN without an MSS option: 536 bytes over IPv4, 1220 over IPv6 (RFC 9293 3.7.1)",
                   "default_mss"),
    "rto_backoff": ("echoed data never acknowledged (RFC 6298 5.5)", "backed_off"),
    "fast_retransmit": ("three duplicate ACKs SACKing all but the first segment (RFC 6675, RFC 8985)",
                        "fast_retransmit"),
    "zero_window": ("data sent with a zero window, then the window opened (RFC 9293 3.8.6.1)",
                    "probes_then_data"),
    "sack_order": ("two holes filled out of order, SACK permitted (RFC 2018 4)", "most_recent_first"),
    "fin_out_of_order": ("data and FIN past a hole, then the hole (RFC 9293 3.10.7.4)", "fin_after_data"),
    "timestamp_echo": ("data with timestamps: TSecr of the ACK (RFC 7323 4.3)", "echoed"),
    "ping": ("an ICMP or ICMPv6 echo request (RFC 792, RFC 4443 4.2)", "echo_reply"),
    "syn_to_group": ("a SYN to the broadcast or all-nodes address (RFC 1122 4.2.3.10)", "ignored"),
    "syn_from_group": ("a SYN from a multicast address (RFC 1122 3.2.1.3)", "ignored"),
    "ip_options": ("a SYN with IPv4 options or IPv6 extension headers (RFC 1122 3.2.1.8, RFC 8200 4)", "synack"),
    "listen_synack": ("a SYN-ACK to a listener (RFC 9293 3.10.7.2)", "rst_seq_of_ack"),
    "listen_rst": ("a RST to a listener (RFC 9293 3.10.7.2)", "ignored"),
    "listen_fin": ("a FIN without ACK to a listener (RFC 9293 3.10.7.2)", "ignored"),
    "closed_port_ack": ("an ACK to a closed port (RFC 9293 3.10.7.1)", "rst_seq_of_ack"),
    "closed_port_rst": ("a RST to a closed port (RFC 9293 3.10.7.1)", "ignored"),
    "closed_port_fin": ("a FIN without ACK to a closed port (RFC 9293 3.10.7.1)", "rst_ack"),
    "closed_port_null": ("a segment with no flags to a closed port (RFC 9293 3.10.7.1)", "rst_ack"),
    "closed_port_xmas": ("FIN, PSH and URG to a closed port (RFC 9293 3.10.7.1)", "rst_ack"),
    "listen_null": ("a segment with no flags to a listener (RFC 9293 3.10.7.2)", "ignored"),
    "listen_syn_rst": ("SYN and RST together to a listener (RFC 9293 3.10.7.2: RST first)", "ignored"),
    "syn_with_data": ("data on the SYN (RFC 9293 3.10.7.2)", "echoed_once"),
    "reserved_bits": ("a SYN with the reserved bits set (RFC 9293 3.1)", "synack"),
    "ecn_setup": ("an ECN-setup SYN, ECE and CWR (RFC 3168 6.1.1)", "synack"),
    "unknown_option": ("a SYN with an option of an unknown kind (RFC 9293 3.1, MUST-6)", "synack"),
    "bad_option_length": ("a SYN with an option of length 0, then a normal connection (RFC 9293 MUST-7)",
                          "survives"),
    "urgent": ("data with URG set (RFC 6093 5: delivered inline)", "inline"),
    "ecn_ce": ("ECN agreed, data marked CE: ECE on the ACKs until CWR (RFC 3168 6.1.3)", "ece_until_cwr"),
    "ecn_echo": ("ECN agreed, the echo ACKed with ECE: ECT(0) data, then CWR (RFC 3168 6.1.2)", "cwr_after_ece"),
    "timestamp_missing": ("data without the agreed timestamps (RFC 7323 3.2)", "dropped"),
    "syn_again": ("the same SYN again in SYN-RECEIVED", "synack_again"),
    "synrcvd_bad_ack": ("an unacceptable ACK in SYN-RECEIVED (RFC 9293 3.10.7.4)", "rst_seq_of_ack"),
    "synrcvd_rst": ("a RST in SYN-RECEIVED, then the ACK (RFC 9293 3.10.7.4)", "aborted"),
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
    "time_wait_syn": ("a SYN from the same port into the server's TIME-WAIT, its seq past the old "
                      "(RFC 9293 3.6.1 MAY-2, RFC 6191)", "synack"),
    # Last: a full SYN queue answers later SYNs with cookies, which carry
    # neither an MSS of 1 nor a window scale without timestamps.
    "syn_cookie": ("a fresh SYN while spoofed SYNs fill the SYN queue (RFC 4987)", "cookie_connection"),
}
BACKLOG = 8  # the listeners' SYN queue, small so that a few SYNs fill it


def run_case(name, peer_obj, port, cookies_cmd):
    import probe_addresses as pa
    import probe_cases as pc
    import probe_data as pd
    import probe_handshake as ph
    import probe_header as pr
    from peer import Conn
    options = {"mss_1": [("MSS", 1)], "wscale_15": [("MSS", 1460), ("WScale", 15)], "mss_absent": [],
               "mss_honored": [("MSS", 1000)],
               "out_of_order": [("MSS", 1460), ("SAckOK", b"")], "hole_filled": [("MSS", 1460), ("SAckOK", b"")],
               "fast_retransmit": [("MSS", 1400), ("SAckOK", b"")], "dsack": [("MSS", 1460), ("SAckOK", b"")],
               "sack_order": [("MSS", 1460), ("SAckOK", b"")]}.get(name)
    c = Conn(peer_obj, port, options=options, timestamps=name in ("paws_old_timestamp", "timestamp_echo", "timestamp_missing"))
    before_handshake = {
        "syn_cookie": lambda: pc.case_syn_cookie(c, cookies_cmd, spoofs=4 * BACKLOG),
        "closed_port_syn": lambda: pc.case_closed_port_syn(peer_obj, port + 1),
        "listen_bare_ack": lambda: pc.case_listen_bare_ack(peer_obj, port),
        "syn_again": lambda: ph.case_syn_again(c),
        "synrcvd_bad_ack": lambda: ph.case_bad_ack(c),
        "synrcvd_rst": lambda: ph.case_rst_in_syn_received(c),
        "listen_synack": lambda: ph.case_segment_to(c, "SA", port, True),
        "listen_rst": lambda: ph.case_segment_to(c, "R", port, True),
        "listen_fin": lambda: ph.case_segment_to(c, "F", port, True),
        "closed_port_ack": lambda: ph.case_segment_to(c, "A", port + 1, False),
        "closed_port_rst": lambda: ph.case_segment_to(c, "R", port + 1, False),
        "closed_port_fin": lambda: ph.case_segment_to(c, "F", port + 1, False),
        "closed_port_null": lambda: ph.case_segment_to(c, "", port + 1, False),
        "closed_port_xmas": lambda: ph.case_segment_to(c, "FPU", port + 1, False),
        "listen_null": lambda: ph.case_segment_to(c, "", port, True),
        "listen_syn_rst": lambda: ph.case_segment_to(c, "SR", port, True),
        "syn_with_data": lambda: pr.case_syn_with_data(c),
        "reserved_bits": lambda: pr.case_reserved_bits(c),
        "ecn_setup": lambda: pr.case_ecn_setup(c),
        "ecn_ce": lambda: pr.case_ecn_ce(c),
        "ecn_echo": lambda: pr.case_ecn_echo(c),
        "unknown_option": lambda: pr.case_unknown_option(c),
        "bad_option_length": lambda: pr.case_bad_option_length(c),
        "ping": lambda: pa.case_ping(c),
        "syn_to_group": lambda: pa.case_syn_to_group(c),
        "syn_from_group": lambda: pa.case_syn_from_group(c),
        "ip_options": lambda: pa.case_ip_options(c),
        "time_wait_syn": lambda: ph.case_time_wait_syn(Conn(peer_obj, int(netns.METRICS_PORT))),
    }
    if name in before_handshake:
        return before_handshake[name]()
    if not c.open():
        return "no_handshake", {}
    una = c.rcv_nxt  # the server's SND.UNA: it has sent nothing yet
    established = {
        "rst_exact": lambda: pc.case_rst(c, 0),
        "rst_in_window": lambda: pc.case_rst(c, 1000),
        "rst_outside_window": lambda: pc.case_rst(c, 1 << 30),
        "syn_established": lambda: pc.case_syn(c, 1000),
        "syn_established_outside": lambda: pc.case_syn(c, 1 << 30),
        "ack_too_old": lambda: pc.case_unacceptable(c, b"must not be taken", ack=(una - 65535 - 100000) % (1 << 32)),
        "ack_beyond_snd_nxt": lambda: pc.case_unacceptable(c, b"must not be taken", ack=(una + 100000) % (1 << 32)),
        "out_of_order": lambda: pd.case_out_of_order(c, fill=False),
        "hole_filled": lambda: pd.case_out_of_order(c, fill=True),
        "dsack": lambda: pd.case_dsack(c),
        "overlap": lambda: pd.case_overlap(c),
        "no_ack_flag": lambda: pd.case_no_ack_flag(c),
        "bad_checksum": lambda: pd.case_bad_checksum(c),
        "keepalive": lambda: pd.case_keepalive(c),
        "mss_absent": lambda: pd.case_mss_absent(c),
        "mss_honored": lambda: pd.case_mss_honored(c),
        "ip_fragments": lambda: pd.case_ip_fragments(c),
        "rto_backoff": lambda: pd.case_rto_backoff(c),
        "fast_retransmit": lambda: pd.case_fast_retransmit(c),
        "zero_window": lambda: pd.case_zero_window(c),
        "sack_order": lambda: pd.case_sack_order(c),
        "fin_out_of_order": lambda: pd.case_fin_out_of_order(c),
        "timestamp_echo": lambda: pd.case_timestamp_echo(c),
        "urgent": lambda: pr.case_urgent(c),
        "timestamp_missing": lambda: pr.case_timestamp_missing(c),
        "icmp_frag_needed": lambda: pc.case_icmp(c),
        "icmp_not_in_flight": lambda: pc.case_icmp_not_in_flight(c),
        "data_outside_window": lambda: pc.case_unacceptable(c, b"far beyond the window",
                                                            seq=(c.snd_nxt + (1 << 30)) % (1 << 32)),
        "paws_old_timestamp": lambda: pc.case_paws(c),
        "fin": lambda: pc.case_fin(c),
        "mss_1": lambda: pc.case_mss_1(c),
        "wscale_15": lambda: pc.case_wscale_15(c),
    }
    return established[name]()


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
l = socket.socket(socket.AF_INET6); l.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
l.bind(("::", int(sys.argv[1]))); l.listen(int(sys.argv[2]))  # IPv4 too (bindv6only 0)
def serve(c):
    try:
        with c:
            while (b := c.recv(65536)):
                c.sendall(b)
    except OSError:
        pass
def closer():  # as affine-echo's metrics port: a few bytes, then it closes first
    k = socket.socket(socket.AF_INET6); k.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    k.bind(("::", int(sys.argv[3]))); k.listen(8)
    while True:
        c, _ = k.accept()
        with c:
            c.sendall(b"bye\n")
threading.Thread(target=closer, daemon=True).start()
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
        print(__doc__ or "usage: probe.py AFFINE_ECHO [--ipv6] [CASE...]", file=sys.stderr)
        return 2
    netns.skip_unless_able()
    v6 = "--ipv6" in sys.argv[2:]
    exe, names = os.path.abspath(sys.argv[1]), [n for n in sys.argv[2:] if n != "--ipv6"] or list(CASES)
    unknown = [n for n in names if n not in CASES]
    if unknown:
        netns.log(f"unknown case(s) {unknown}; the cases: {list(CASES)}")
        return 2
    with netns.Lab("probe6" if v6 else "probe") as lab:
        # (a) affine on net_tap; scapy on the tap's kernel side.
        a = lab.namespace("a", ipv6=v6)
        netns.no_kernel_resets(a)
        aff = lab.affine(a, exe, sets=['tcp.syn_cookies="auto"'], backlog=BACKLOG, ipv6=v6)
        metric = f"{sys.executable} {shlex.quote(netns.__file__)} metrics {netns.AFFINE_IP} {netns.METRICS_PORT}"
        cookies = f"{metric} | {sys.executable} -c \"import json,sys; print(sum(json.loads(l)['value'] for l in sys.stdin " \
                  f"if 'syn_cookies_sent' in l))\""
        src, dst = (netns.KERNEL_IP6, netns.AFFINE_IP6) if v6 else (netns.KERNEL_IP, netns.AFFINE_IP)
        on_affine = (a, "affine", aff.iface, src, dst, cookies)
        # (b) Linux: a kernel echo listener behind a veth pair.
        p, l = lab.namespace("p", ipv6=v6), lab.namespace("l", ipv6=v6)
        netns.no_kernel_resets(p)
        src, dst = ("fd89::1", "fd89::2") if v6 else ("10.89.0.1", "10.89.0.2")
        pi, _ = lab.veth(p, f"{src}/{64 if v6 else 24}", l, f"{dst}/{64 if v6 else 24}")
        netns.sh("sysctl", "-q", "-w", "net.ipv4.tcp_syncookies=1", ns=l)
        lab.spawn(l, sys.executable, "-c", LINUX_ECHO, netns.ECHO_PORT, BACKLOG, netns.METRICS_PORT)
        time.sleep(0.5)
        cookies = f"ip netns exec {l} nstat -az TcpExtSyncookiesSent | awk '/TcpExtSyncookiesSent/ {{print $2}}'"
        on_linux = (p, "linux", pi, src, dst, cookies)
        # The two targets share nothing (namespaces, links, addresses): their
        # workers run side by side, the probe in half the time.
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            runs = {t[1]: pool.submit(run_worker, lab, *t, names) for t in (on_affine, on_linux)}
            results = {target: run.result() for target, run in runs.items()}
        if not aff.alive():
            netns.log(f"affine-echo died: {aff.stderr()}")
        kernel = os.uname().release
    for r in results["affine"] + results["linux"]:
        print(json.dumps(r, separators=(",", ":")))
    by = {(r["target"], r["case"]): r["answer"] for t in results.values() for r in t}
    failed, differs, unanswered = [], [], []
    for name in names:
        want, la, aa = CASES[name][1], by.get(("linux", name)), by.get(("affine", name))
        if la in (None, "error") or aa in (None, "error"):  # a worker or a case that broke: nothing to compare
            unanswered.append(name)
        elif la != want:
            differs.append(name)
        if la == want and aa != want:
            failed.append(name)
    netns.json_line(summary="probe", family="ipv6" if v6 else "ipv4", linux_kernel=kernel, cases=len(names),
                    affine_rfc=sum(1 for n in names if by.get(("affine", n)) == CASES[n][1]),
                    linux_rfc=sum(1 for n in names if by.get(("linux", n)) == CASES[n][1]),
                    failed=failed, linux_differs_from_rfc=differs, unanswered=unanswered)
    for name in failed:
        netns.log(f"FAIL: {name}: affine answers {by.get(('affine', name))}, Linux and the RFC {CASES[name][1]}")
    if unanswered:
        netns.log(f"FAIL: no answer, or an error, from a target for {unanswered}")
    return 1 if failed or unanswered else 0


if __name__ == "__main__":
    sys.exit(main())
