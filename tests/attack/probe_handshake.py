# tests/attack/probe_handshake.py: the probe's cases before ESTABLISHED
# (probe.py has the table): in SYN-RECEIVED a second SYN, an ACK of
# something never sent, a RST before the handshake ends; a SYN-ACK, RST,
# FIN or ACK to a listener or a closed port; a SYN into TIME-WAIT. Each
# takes a fresh peer.Conn, sends its first segment itself and returns
# (answer, details).

import random
import time

from scapy.all import TCP, Raw

from probe_cases import alive

MOD = 1 << 32


def _finish(c, synack):
    """Completes the handshake by hand; True when the connection echoes."""
    return c.complete(synack) and alive(c)


def case_syn_again(c):
    """The same SYN twice, as a client whose SYN-ACK was lost sends it: the
    SYN-ACK again, the same ISS (RFC 9293 3.8.1's retransmission; a bare ACK
    would leave a client in SYN-SENT without a way out)."""
    synack = c.syn()
    if synack is None:
        return "no_synack", {}
    m = c.p.mark()
    c.p.send(c.ip() / c.tcp("S", seq=c.iss, ack=0, options=c.options))
    f = c.wait(m, lambda t: True, 1.0)
    if f is None:
        return "silent", {}
    t = f["TCP"]
    same = t.flags.S and t.flags.A and t.seq == synack.seq and t.ack == (c.iss + 1) % MOD
    answer = "synack_again" if same else ("rst" if t.flags.R else "ack" if t.flags.A else "other")
    return answer, {"flags": str(t.flags), "established_after": _finish(c, synack)}


def case_bad_ack(c):
    """SYN-RECEIVED, an ACK of 1000 bytes past the SYN-ACK: RFC 9293
    3.10.7.4 forms <SEQ=SEG.ACK><CTL=RST>; the half-open connection
    stays, so the right ACK still completes it."""
    synack = c.syn()
    if synack is None:
        return "no_synack", {}
    bad = (synack.seq + 1 + 1000) % MOD
    m = c.p.mark()
    c.p.send(c.ip() / c.tcp("A", seq=(c.iss + 1) % MOD, ack=bad))
    f = c.wait(m, lambda t: True, 1.0)
    if f is None:
        return "silent", {}
    t = f["TCP"]
    good = t.flags.R and not t.flags.A and t.seq == bad
    return ("rst_seq_of_ack" if good else "other"), {"flags": str(t.flags), "established_after": _finish(c, synack)}


def case_rst_in_syn_received(c):
    """SYN-RECEIVED, a RST at SEQ = RCV.NXT: a connection from a passive
    OPEN goes back to LISTEN (RFC 9293 3.10.7.4), so the ACK that would
    have completed it gets <SEQ=SEG.ACK><CTL=RST>."""
    synack = c.syn()
    if synack is None:
        return "no_synack", {}
    c.p.send(c.ip() / c.tcp("R", seq=(c.iss + 1) % MOD, ack=0))
    time.sleep(0.1)
    m = c.p.mark()
    ack = (synack.seq + 1) % MOD
    c.p.send(c.ip() / c.tcp("A", seq=(c.iss + 1) % MOD, ack=ack))
    f = c.wait(m, lambda t: True, 1.0)
    if f is None:
        return "silent", {}
    t = f["TCP"]
    return ("aborted" if t.flags.R and t.seq == ack else "other"), {"flags": str(t.flags)}


def _answer_to(c, flags, port, ack=0):
    """A segment with `flags` to `port` from a fresh source: what came back,
    as ("silent" | flags, seq of the reply)."""
    m = c.p.mark()
    c.p.send(c.p.ip() / TCP(sport=c.sport, dport=port, flags=flags, seq=c.iss, ack=ack, window=65535))
    f = c.wait_port(m, port, 1.0)
    if f is None:
        return "silent", None
    return str(f["TCP"].flags), f["TCP"].seq


def case_segment_to(c, flags, port, listening):
    """RFC 9293 3.10.7.1 (CLOSED) and 3.10.7.2 (LISTEN): a RST is ignored; a
    segment with an ACK draws <SEQ=SEG.ACK><CTL=RST>; a FIN without one is
    dropped by a listener and, on a closed port, answered with
    <SEQ=0><ACK=SEG.SEQ+SEG.LEN><CTL=RST,ACK>."""
    ack = random.randrange(1 << 32) if "A" in flags else 0
    got, seq = _answer_to(c, flags, port, ack)
    if got == "silent":
        return "ignored", {"listening": listening}
    if got == "R" and seq == ack:
        return "rst_seq_of_ack", {}
    if got == "RA" and seq == 0:
        return "rst_ack", {}
    return "other", {"flags": got, "seq": seq}


def case_time_wait_syn(c):
    """`c` is for a port whose server writes a little and closes first
    (affine's metrics port; a Linux listener that does the same). Once the
    server is in TIME-WAIT, a SYN from the same port with a sequence number
    past the old connection's: RFC 9293 3.6.1 MAY-2 and RFC 6191 let the
    server open the next connection at once, with an ISS past the old one's;
    otherwise it answers with an ACK and the client waits out a timeout."""
    m = c.p.mark()
    if not c.open():
        return "no_handshake", {}
    start, fin = c.rcv_nxt, None
    end = time.monotonic() + 5
    while fin is None and time.monotonic() < end:  # take what it writes, up to its FIN
        c.rcv_nxt = (start + len(c.echoed(m, start))) % MOD
        fin = c.wait(m, lambda t: t.flags.F and (t.seq + (len(t[Raw].load) if Raw in t else 0)) % MOD == c.rcv_nxt,
                     0.05)
        c.ack()
    if fin is None:
        return "no_fin", {}
    c.rcv_nxt = (c.rcv_nxt + 1) % MOD
    m = c.p.mark()
    c.p.send(c.ip() / c.tcp("FA"))
    c.snd_nxt = (c.snd_nxt + 1) % MOD
    if c.wait(m, lambda t: t.flags.A and t.ack == c.snd_nxt, 2.0) is None:
        return "fin_not_acked", {}
    old_snd_max = c.rcv_nxt  # one past the server's FIN
    iss = (c.snd_nxt + 100000) % MOD
    m = c.p.mark()
    c.p.send(c.ip() / TCP(sport=c.sport, dport=c.dport, flags="S", seq=iss, window=65535, options=[("MSS", 1460)]))
    f = c.wait(m, lambda t: True, 2.0)
    if f is None:
        return "ignored", {}
    t = f[TCP]
    if t.flags.S and t.flags.A and t.ack == (iss + 1) % MOD:
        c.p.send(c.ip() / TCP(sport=c.sport, dport=c.dport, flags="R", seq=(iss + 1) % MOD))  # nothing left behind
        return "synack", {"iss_past_old": 0 < (t.seq - old_snd_max) % MOD < 1 << 31}
    return ("rst" if t.flags.R else "ack"), {}
