"""Source ranges a production stack may admit: how wide each may be, and what they cover."""

from __future__ import annotations

import ipaddress
from collections.abc import Sequence

# The widest source range a production stack may admit: a LoadBalancer source range or a cluster
# authorized network. The config layer (components/config) refuses wider ones with the same numbers.
MIN_PREFIX_IPV4 = 16
MIN_PREFIX_IPV6 = 48
MIN_PREFIX = {4: MIN_PREFIX_IPV4, 6: MIN_PREFIX_IPV6}
_IPV4_MAPPED = ipaddress.IPv6Network("::ffff:0:0/96")
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _unmapped(
    network: Network,
) -> Network:
    """An IPv4-mapped IPv6 range (::ffff:a.b.c.d/n) as the IPv4 range it names."""
    if isinstance(network, ipaddress.IPv6Network) and network.subnet_of(_IPV4_MAPPED):
        address = network.network_address.ipv4_mapped
        assert address is not None  # inside ::ffff:0:0/96
        return ipaddress.IPv4Network((address, network.prefixlen - 96))
    return network


def _covers_every_address(networks: Sequence[Network]) -> bool:
    """Whether the networks together are 0.0.0.0/0 or ::/0 (collapse_addresses takes one family)."""
    v4 = [n for n in networks if isinstance(n, ipaddress.IPv4Network)]
    v6 = [n for n in networks if isinstance(n, ipaddress.IPv6Network)]
    collapsed = [*ipaddress.collapse_addresses(v4), *ipaddress.collapse_addresses(v6)]
    return any(n.prefixlen == 0 for n in collapsed)


def source_range_problems(ranges: Sequence[object]) -> list[str]:
    """What lets too many clients in through a list of CIDR ranges, each as "<ranges>, <why>".

    A range may be at most /MIN_PREFIX_IPV4 wide (IPv4) or /MIN_PREFIX_IPV6 (IPv6), and the
    ranges together may not cover every address of a family (two /1s are 0.0.0.0/0 in two
    pieces). An IPv4-mapped IPv6 range counts as the IPv4 range it names. Something that is not
    a CIDR range (address/prefix) is a problem too: nobody can tell what it admits.
    """
    problems: list[str] = []
    parsed: list[tuple[str, Network]] = []
    for value in ranges:
        text = value.strip() if isinstance(value, str) else ""
        try:
            # A bare address is no CIDR to Kubernetes either (net.ParseCIDR needs the prefix).
            network = _unmapped(ipaddress.ip_network(text, strict=False)) if "/" in text else None
        except ValueError:
            network = None
        if network is None:
            problems.append(
                f"{value!r}, which is not a CIDR range (address/prefix, e.g. 203.0.113.0/24)"
            )
            continue
        parsed.append((text, network))
        minimum = MIN_PREFIX[network.version]
        if network.prefixlen == 0:
            problems.append(f"{text}, which is every IPv{network.version} address")
        elif network.prefixlen < minimum:
            problems.append(
                f"{text}, wider than a /{minimum}, the widest range production admits for "
                f"IPv{network.version}"
            )
    for version in MIN_PREFIX:
        family = [(text, n) for text, n in parsed if n.version == version]
        networks = [n for _, n in family]
        if len(networks) < 2 or any(n.prefixlen == 0 for n in networks):
            continue  # a single /0 is reported above, on its own
        if _covers_every_address(networks):
            names = ", ".join(text for text, _ in family)
            problems.append(f"{names}, which together cover every IPv{version} address")
    return problems
