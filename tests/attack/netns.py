# tests/attack/netns.py: what the probe (probe.py) and the attack suite
# (attack.py) share. Every process they start runs in a network namespace
# made here and deleted on exit (the affine process, its tap, the kernel
# peers, scapy); from the root namespace nothing is sent anywhere.
#
#   lab = Lab("probe")              namespaces named affine-attack-probe-PID-*
#   ns = lab.namespace("a")         a fresh one, lo up, IPv6 off (on with
#                                   ipv6=True)
#   lab.affine(ns, exe, ...)        affine-echo on a net_tap port in ns
#                                   (AFFINE_IP, the kernel side KERNEL_IP;
#                                   with ipv6=True AFFINE_IP6 and KERNEL_IP6
#                                   too), the tap's kernel side up: an Affine
#   lab.veth(ns1, ns2)              a veth pair, offloads off
#   lab.close()                     stops what it started, deletes them
#
# The kernel of the namespace scapy sends from would reset the replies to
# connections it never opened: no_kernel_resets() drops the kernel's RSTs
# from the ports scapy uses (SCAPY_PORTS), and only those.
#
# ATTACK_KEEP=1 keeps the scratch directory; ATTACK_CAPTURE=FILE has tshark
# record what goes between the echo port and the kernel's address.
#
# Exit status 77 (skip) where there is no root, no `ip netns` or no scapy.

import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SKIP = 77
SCAPY_PORTS = (20000, 29999)  # source ports of scapy's own connections
AFFINE_IP, KERNEL_IP, PREFIX = "10.88.0.2", "10.88.0.1", "10.88.0."
AFFINE_IP6, KERNEL_IP6 = "fd88::2", "fd88::1"
ECHO_PORT, METRICS_PORT = 7000, 9100


def log(*what):
    print(*what, file=sys.stderr, flush=True)


def skip_unless_able():
    """Exit 77 unless this process can make namespaces and scapy is there."""
    if os.geteuid() != 0:
        log("SKIP: needs root (network namespaces, tap devices)")
        sys.exit(SKIP)
    if shutil.which("ip") is None or shutil.which("nft") is None:
        log("SKIP: needs iproute2 and nftables (scripts/install-deps)")
        sys.exit(SKIP)
    try:
        import scapy  # noqa: F401
    except ImportError:
        log("SKIP: needs python3-scapy (scripts/install-deps)")
        sys.exit(SKIP)
    probe = f"affine-attack-check-{os.getpid()}"
    if subprocess.run(["ip", "netns", "add", probe], capture_output=True).returncode != 0:
        log("SKIP: cannot create a network namespace here")
        sys.exit(SKIP)
    subprocess.run(["ip", "netns", "del", probe], capture_output=True)


def sh(*cmd, ns=None, check=True, **kw):
    full = (["ip", "netns", "exec", ns] if ns else []) + [str(c) for c in cmd]
    return subprocess.run(full, check=check, capture_output=True, text=True, **kw)


def no_kernel_resets(ns):
    """In `ns`, drop the RSTs the kernel sends from scapy's source ports."""
    lo, hi = SCAPY_PORTS
    sh("nft", "-f", "-", ns=ns, input=f"""
table inet attack_probe {{
  chain out {{
    type filter hook output priority 0; policy accept;
    tcp sport {lo}-{hi} tcp flags & rst == rst drop
  }}
}}
""")


def offloads_off(ns, iface):
    # Segments must be seen as they are sent: no GSO/TSO/GRO on the links.
    sh("ethtool", "-K", iface, "tso", "off", "gso", "off", "gro", "off", ns=ns, check=False)


class Affine:
    """affine-echo on the userspace stack over net_tap, in a namespace."""

    def __init__(self, lab, ns, exe, sets, backlog, iface, gateway, ipv6):
        self.ns, self.iface = ns, iface
        self.dir = tempfile.mkdtemp(prefix="affine-attack-", dir=lab.scratch)
        prefix = f"{lab.name}-{iface}"
        lab.dpdk_prefixes.append(prefix)
        queues = os.cpu_count() or 1
        conf = os.path.join(self.dir, "tap.toml")
        with open(conf, "w") as f:
            f.write(f"""[[port]]
driver = "dpdk"
eal = ["--no-huge", "--no-pci", "--no-shconf", "--no-telemetry", "-m", "512",
       "--file-prefix={prefix}", "--vdev=net_tap0,iface={iface}"]
queues = {queues}
ip = {f'["{AFFINE_IP}/24", "{AFFINE_IP6}/64"]' if ipv6 else f'"{AFFINE_IP}/24"'}
""")
            if gateway:
                f.write(f'gateway = "{gateway}"\n')
        args = ["ip", "netns", "exec", ns, exe, "--config", conf, "--set", 'log.level="warn"']
        for s in sets:
            args += ["--set", s]
        args += ["server", "--port", str(ECHO_PORT), "--backlog", str(backlog), "--metrics-port", str(METRICS_PORT),
                 "--listen", "::" if ipv6 else "0.0.0.0"]
        self.err = open(os.path.join(self.dir, "stderr"), "w+")
        # Under ASan (the sanitizer build runs these tests too) a freed block
        # waits in a quarantine of 256 MiB before it is reused, so the
        # process would grow by that much under a flood whatever the stack
        # keeps; a small quarantine keeps the memory bound a bound on the
        # stack. Nothing to a binary without ASan.
        env = dict(os.environ)
        env["ASAN_OPTIONS"] = ":".join(filter(None, [env.get("ASAN_OPTIONS"), "quarantine_size_mb=8"]))
        self.proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=self.err, env=env)
        lab.procs.append(self.proc)
        for _ in range(200):
            if sh("ip", "link", "show", iface, ns=ns, check=False).returncode == 0:
                break
            if self.proc.poll() is not None:
                break
            time.sleep(0.05)
        sh("ip", "addr", "add", f"{KERNEL_IP}/24", "dev", iface, ns=ns)
        if ipv6:
            sh("ip", "addr", "add", f"{KERNEL_IP6}/64", "dev", iface, "nodad", ns=ns)
        sh("ip", "link", "set", iface, "up", ns=ns)
        offloads_off(ns, iface)
        if os.environ.get("ATTACK_CAPTURE"):  # a debugging aid: the kernel clients' packets
            lab.spawn(ns, "tshark", "-q", "-i", iface, "-w", os.environ["ATTACK_CAPTURE"], "-f",
                      f"tcp port {ECHO_PORT} and host {KERNEL_IP}", stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            time.sleep(1)
        deadline = time.time() + 30
        while time.time() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"affine-echo exited {self.proc.returncode}: {self.stderr()}")
            try:
                self.metrics()
                return
            except OSError:
                time.sleep(0.2)
        raise RuntimeError(f"affine-echo serves no metrics after 30 s: {self.stderr()}")

    def stderr(self):
        self.err.flush()
        self.err.seek(0)
        return self.err.read()[-2000:]

    def metrics(self):
        """collect_metrics() of the affine process, as {name: total over labels}
        and the drops by reason, read from its metrics port."""
        out = sh(sys.executable, __file__, "metrics", AFFINE_IP, METRICS_PORT, ns=self.ns, check=False)
        if out.returncode != 0:
            raise OSError(out.stderr.strip())
        totals, drops = {}, {}
        for line in out.stdout.splitlines():
            m = json.loads(line)
            totals[m["name"]] = totals.get(m["name"], 0) + m["value"]
            if m["name"] == "affine_stack_drops_total":
                r = m["labels"]["reason"]
                drops[r] = drops.get(r, 0) + m["value"]
        totals["drops"] = drops
        totals["rss_bytes"] = self.rss()
        return totals

    def rss(self):
        with open(f"/proc/{self.proc.pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
        return 0

    def alive(self):
        return self.proc.poll() is None


class Lab:
    def __init__(self, name):
        self.name = f"affine-attack-{name}-{os.getpid()}"
        self.namespaces, self.procs, self.dpdk_prefixes = [], [], []
        self.scratch = tempfile.mkdtemp(prefix=f"{self.name}-")
        signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()

    def namespace(self, tag, ipv6=False):
        ns = f"{self.name}-{tag}"
        sh("ip", "netns", "add", ns)
        self.namespaces.append(ns)
        sh("ip", "link", "set", "lo", "up", ns=ns)
        off = "0" if ipv6 else "1"
        sh("sysctl", "-q", "-w", f"net.ipv6.conf.all.disable_ipv6={off}", ns=ns, check=False)
        sh("sysctl", "-q", "-w", f"net.ipv6.conf.default.disable_ipv6={off}", ns=ns, check=False)
        return ns

    def veth(self, ns1, addr1, ns2, addr2):
        sh("ip", "link", "add", "atk0", "netns", ns1, "type", "veth", "peer", "name", "atk1", "netns", ns2)
        for ns, dev, addr in ((ns1, "atk0", addr1), (ns2, "atk1", addr2)):
            sh("ip", "addr", "add", addr, "dev", dev, *(["nodad"] if ":" in addr else []), ns=ns)
            sh("ip", "link", "set", dev, "up", ns=ns)
            offloads_off(ns, dev)
        return "atk0", "atk1"

    def affine(self, ns, exe, sets=(), backlog=1024, iface="atkt0", gateway=None, ipv6=False):
        return Affine(self, ns, exe, sets, backlog, iface, gateway, ipv6)

    def spawn(self, ns, *cmd, **kw):
        p = subprocess.Popen(["ip", "netns", "exec", ns] + [str(c) for c in cmd], **kw)
        self.procs.append(p)
        return p

    def close(self):
        for p in reversed(self.procs):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()
        for ns in self.namespaces:
            # Anything still in the namespace was started from here.
            pids = sh("ip", "netns", "pids", ns, check=False).stdout.split()
            for pid in pids:
                try:
                    os.kill(int(pid), signal.SIGKILL)
                except (ProcessLookupError, ValueError):
                    pass
            sh("ip", "netns", "del", ns, check=False)
        for prefix in self.dpdk_prefixes:
            for base in ("/var/run/dpdk", os.path.join(os.environ.get("XDG_RUNTIME_DIR", "/tmp"), "dpdk")):
                shutil.rmtree(os.path.join(base, prefix), ignore_errors=True)
        if os.environ.get("ATTACK_KEEP"):
            log(f"kept {self.scratch} (ATTACK_KEEP)")
        else:
            shutil.rmtree(self.scratch, ignore_errors=True)
        self.namespaces, self.procs = [], []


def read_metrics(host, port):
    """The metrics port's JSON lines, to stdout (run inside the namespace)."""
    with socket.create_connection((host, int(port)), timeout=5) as s:
        s.settimeout(5)
        chunks = []
        while True:
            b = s.recv(65536)
            if not b:
                break
            chunks.append(b)
    sys.stdout.write(b"".join(chunks).decode())


def json_line(**fields):
    print(json.dumps(fields, separators=(",", ":")), flush=True)


if __name__ == "__main__" and len(sys.argv) == 4 and sys.argv[1] == "metrics":
    read_metrics(sys.argv[2], sys.argv[3])
