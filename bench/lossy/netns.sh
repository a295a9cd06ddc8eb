# bench/lossy/netns.sh: sourced by bench/lossy/run. Three network
# namespaces, the endpoints' two and the bridge's between them:
#
#   lossy-a-PID: a0 ==veth== a0br :lossy-br-PID: b0br ==veth== b0 :lossy-b-PID
#
# lossy_bridge runs in lossy-br on a0br and b0br. Every interface is made
# inside its namespace, so nothing here touches the root namespace's links
# or sends from it; lossy_ns_down deletes the namespaces (and with them the
# veths).
#
# What the kernel gives a packet socket is what the bridge forwards: so on
# every veth TSO and GSO are off (no 64 KB frames reach the bridge), GRO is
# off (no frames merged before the packet socket sees them), and TX
# checksum offload is off (a kernel sender's partial checksums would cross
# the bridge as they are, and the far kernel would drop the frames). IPv6
# is off on the veths: no router solicitations or MLD reports on the link.

lossy_ns_a= lossy_ns_br= lossy_ns_b=

lossy_ns_up() {  # suffix
  lossy_ns_a=lossy-a-$1 lossy_ns_br=lossy-br-$1 lossy_ns_b=lossy-b-$1
  local ns pair iface
  for ns in "$lossy_ns_a" "$lossy_ns_br" "$lossy_ns_b"; do
    ip netns add "$ns"
    ip -n "$ns" link set lo up
  done
  ip link add a0 netns "$lossy_ns_a" type veth peer name a0br netns "$lossy_ns_br"
  ip link add b0 netns "$lossy_ns_b" type veth peer name b0br netns "$lossy_ns_br"
  for pair in "$lossy_ns_a:a0" "$lossy_ns_br:a0br" "$lossy_ns_br:b0br" "$lossy_ns_b:b0"; do
    ns=${pair%%:*} iface=${pair#*:}
    ip netns exec "$ns" sysctl -qw "net.ipv6.conf.$iface.disable_ipv6=1"
    ip netns exec "$ns" ethtool -K "$iface" tso off gso off gro off tx off >/dev/null
    ip -n "$ns" link set "$iface" up
  done
}

lossy_ns_down() {
  local ns
  for ns in "$lossy_ns_a" "$lossy_ns_br" "$lossy_ns_b"; do
    [ -n "$ns" ] && ip netns del "$ns" 2>/dev/null || true
  done
}

# linux: the kernel holds 10.78.0.1/24 on a0 and 10.78.0.2/24 on b0.
# affine: the veths carry no address, so the kernel neither answers ARP
# for affine's addresses nor takes their TCP segments (a namespace does not
# forward); only the af_packet ports on a0 and b0 see the frames.
lossy_ns_addresses() {  # linux|affine
  ip -n "$lossy_ns_a" addr flush dev a0
  ip -n "$lossy_ns_b" addr flush dev b0
  if [ "$1" = linux ]; then
    ip -n "$lossy_ns_a" addr add 10.78.0.1/24 dev a0
    ip -n "$lossy_ns_b" addr add 10.78.0.2/24 dev b0
  fi
}
