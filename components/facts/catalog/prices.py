"""Hourly list prices of the machines GPU pools and pods run on: an estimate, with its date.

What the plan's cost lines multiply. Every figure is a list price in USD per hour in the stack's
region, before taxes, committed-use or negotiated discounts. The table and its sources are in
components/facts/catalog/price_table.py (regions: PRICE_REGIONS); a region or machine not in it is
priced `None` and shown as unknown, never guessed.

Other sources (checked 2026-11-22):
  GKE_PRICING: https://cloud.google.com/kubernetes-engine/pricing: "A flat cluster management fee
    of $0.10 per cluster per hour ... applies to all GKE clusters irrespective of the mode of
    operation"; the free tier ($74.40 a month per billing account, one Autopilot or zonal
    cluster) is not subtracted here.
  AUTOPILOT_NODES: https://cloud.google.com/kubernetes-engine/docs/concepts/autopilot-compute-classes
    ("Pricing"): "GKE Autopilot Pods are priced based on the nodes where the Pods are
    scheduled" for GPU Pods; the Autopilot premium on top of the node price could not be read
    and is not included.
Not priced (unknown here): flex-start VMs (Dynamic Workload Scheduler pricing, "discounts of up
to 53%" on the GKE flex-start page, no per-SKU figure found), reservations (billed whether used
or not), disks, the data a load balancer processes (per GiB), Cloud NAT and network egress. A load
balancer's forwarding rules are priced (forwarding_rules_price; price_table.py has the sources).

Refresh: re-read the catalogs named in price_table.py (or the Cloud Billing Catalog API for your
region and date), update the figures and CATALOG_DATE, and run the tests (tests/test_deployable.py
checks the README's quoted figures against the plan).
"""

from __future__ import annotations

from . import price_table
from .machines import custom_machine, is_custom_name

PRICE_REGIONS = tuple(price_table.REGION_MACHINE_PRICES)
PRICE_DATE = price_table.CATALOG_DATE
CLUSTER_FEE_PER_HOUR = 0.10  # GKE_PRICING
# Autopilot bills a general-purpose (CPU-only) Pod by its requests: USD per vCPU-hour and per
# GiB-hour in us-central1, regular (not Spot). The figures of https://cloud.google.com/
# kubernetes-engine/pricing ("Autopilot mode", general-purpose Pods) as several public cost
# calculators copy them; the stored copy of Google's page did not show the table, so they are
# NOT confirmed from Google's own page (the plan says so). The gates are such Pods.
AUTOPILOT_POD_VCPU_HOUR = 0.0445
AUTOPILOT_POD_GIB_HOUR = 0.0049225
# The forwarding rules one minimum charge covers (price_table.py LB_SKUS).
FORWARDING_RULES_IN_MINIMUM = 5


def node_price(
    machine_type: str, gpu_type: str | None, gpu_count: int, spot: bool, region: str
) -> float | None:
    """Hourly price of one node of `machine_type` with its GPUs in `region`, or None when the
    table does not have it (the region, the machine, or an N1 host's GPU)."""
    machines = price_table.REGION_MACHINE_PRICES.get(region)
    if machines is None:
        return None
    if machine_type in machines:
        price = machines[machine_type][1 if spot else 0]
    else:
        price = _custom_n1_price(machine_type, spot, region)
    if price is None:
        return None
    # N1 VMs, predefined or custom (`custom-4-16384` too), bill their attached GPUs apart.
    n1 = machine_type.startswith("n1-") or is_custom_name(machine_type)
    if n1 and gpu_type is not None and gpu_count:
        per_gpu = price_table.REGION_GPU_PRICES.get(region, {}).get(gpu_type, (None, None))
        gpu = per_gpu[1 if spot else 0]
        if gpu is None:
            return None
        price += gpu * gpu_count
    return price


def forwarding_rules_price(rules: int, region: str | None) -> float | None:
    """Hourly price of `rules` forwarding rules in `region` (None: global ones), or None when the
    table has no figure for the region. The first five are one minimum charge, one rule or five;
    each further one adds its own (price_table.py LB_PRICING, LB_SKUS)."""
    if rules == 0:
        return 0.0
    if region is None:
        first_five, each_more = price_table.GLOBAL_FORWARDING_RULES
    elif region in price_table.REGION_FORWARDING_RULES:
        first_five, each_more = price_table.REGION_FORWARDING_RULES[region]
    else:
        return None
    return first_five + max(0, rules - FORWARDING_RULES_IN_MINIMUM) * each_more


def _custom_n1_price(machine_type: str, spot: bool, region: str) -> float | None:
    """An N1 custom machine (`n1-custom-4-20480`, memory in MiB): its vCPUs and GiB at the
    region's custom rates."""
    shape = custom_machine(machine_type)
    rates = price_table.REGION_N1_CUSTOM.get(region)
    if shape is None or rates is None:
        return None
    vcpu, gib = (rates[2], rates[3]) if spot else (rates[0], rates[1])
    return shape.vcpus * vcpu + shape.memory_gb * gib
