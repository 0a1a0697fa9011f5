"""Hourly list prices of the machines GPU pools and pods run on: an estimate, with its date.

What the plan's cost lines multiply. Every figure is a list price in USD per hour in PRICE_REGION,
before taxes, committed-use or negotiated discounts; Spot prices move (Google may change them
daily), so the Spot column is a snapshot. Anything missing here is `None` and shown as unknown,
never guessed.

Sources (checked 2026-11-22):
  CATALOG: Cyclenerd/google-cloud-pricing-cost-calculator pricing.yml at commit fd66b26f
    ("generated: Thu Jul 30 06:13:17 2026"), built from Google's Cloud Billing Catalog API (the
    SKUs behind https://cloud.google.com/compute/vm-instance-pricing and
    https://cloud.google.com/spot-vms/pricing): `compute.instance.<type>.cost.us-central1.hour`
    and `.hour_spot`. For G2, A2 and A3 the price includes the GPUs the machine carries (the
    GPU SKU, e.g. "Nvidia L4 GPU running in Americas" at $0.560040/h, is added in); for N1 it is
    the VM alone.
  SKYPILOT: skypilot-org/skypilot-catalog catalogs/v7/gcp/vms.csv (stored version 017e2502, also
    from the Cloud Billing Catalog API): the per-GPU rows `,,,T4,1,...,us-central1,...,0.35,0.14`.
  GKE_PRICING: https://cloud.google.com/kubernetes-engine/pricing: "A flat cluster management fee
    of $0.10 per cluster per hour ... applies to all GKE clusters irrespective of the mode of
    operation"; the free tier ($74.40 a month per billing account, one Autopilot or zonal
    cluster) is not subtracted here.
  AUTOPILOT_NODES: https://cloud.google.com/kubernetes-engine/docs/concepts/autopilot-compute-classes
    ("Pricing"): "GKE Autopilot Pods are priced based on the nodes where the Pods are
    scheduled" for GPU Pods; the Autopilot premium on top of the node price could not be read
    and is not included.
Not priced (unknown here): flex-start VMs (Dynamic Workload Scheduler pricing, "discounts of up
to 53%" on the GKE flex-start page, no per-SKU figure found), N1 custom machine types (custom
shapes carry their own SKUs), reservations (billed whether used or not), disks, load balancers,
Cloud NAT and network egress.

Refresh: re-read the two catalogs above (or the Cloud Billing Catalog API for your region and
date), update the figures and PRICE_DATE, and run the tests (tests/test_getting_gpus.py checks
the shipped stacks' figures).
"""

from __future__ import annotations

from dataclasses import dataclass

PRICE_REGION = "us-central1"
PRICE_DATE = "2026-07-30"
PRICE_SOURCE = "Cloud Billing Catalog list prices (components/catalog/prices.py)"
CLUSTER_FEE_PER_HOUR = 0.10  # GKE_PRICING
# Autopilot bills a general-purpose (CPU-only) Pod by its requests: USD per vCPU-hour and per
# GiB-hour in us-central1, regular (not Spot). The figures of https://cloud.google.com/
# kubernetes-engine/pricing ("Autopilot mode", general-purpose Pods) as several public cost
# calculators copy them; the stored copy of Google's page did not show the table, so they are
# NOT confirmed from Google's own page (the plan says so). The gates are such Pods.
AUTOPILOT_POD_VCPU_HOUR = 0.0445
AUTOPILOT_POD_GIB_HOUR = 0.0049225


@dataclass(frozen=True)
class HourlyPrice:
    on_demand: float | None
    spot: float | None

    def get(self, spot: bool) -> float | None:
        return self.spot if spot else self.on_demand


# Whole machines, USD per hour in us-central1 (CATALOG). G2/A2/A3 include their GPUs.
MACHINE_PRICES: dict[str, HourlyPrice] = {
    "g2-standard-4": HourlyPrice(0.706832255, 0.397336),
    "g2-standard-8": HourlyPrice(0.853624271, 0.479872),
    "g2-standard-12": HourlyPrice(1.000416287, 0.562408),
    "g2-standard-16": HourlyPrice(1.147208303, 0.644944),
    "g2-standard-24": HourlyPrice(2.000832574, 1.124816),
    "g2-standard-32": HourlyPrice(1.734376367, 0.975088),
    "g2-standard-48": HourlyPrice(4.001665148, 2.249632),
    "g2-standard-96": HourlyPrice(8.003330296, 4.499264),
    "a2-highgpu-1g": HourlyPrice(3.673385, 1.92802),
    "a2-highgpu-2g": HourlyPrice(7.34677, 3.85604),
    "a2-highgpu-4g": HourlyPrice(14.69354, 7.71208),
    "a2-highgpu-8g": HourlyPrice(29.38708, 15.42416),
    "a2-megagpu-16g": HourlyPrice(55.739504, 29.25568),
    "a2-ultragpu-1g": HourlyPrice(5.06879789041096, 2.75954630136986),
    "a2-ultragpu-8g": HourlyPrice(40.5503831232877, 22.0763704109589),
    "a3-highgpu-1g": HourlyPrice(11.0612499878219, 6.32619260273973),
    "a3-highgpu-2g": HourlyPrice(22.1224999756438, 12.6523852054795),
    "a3-highgpu-4g": HourlyPrice(44.2449999512877, 25.3047704109589),
    "a3-highgpu-8g": HourlyPrice(88.4899999025753, 50.6095408219178),
    "g4-standard-48": HourlyPrice(4.49993, 1.79982),
    # N1 hosts without their GPUs (add GPU_PRICES per GPU).
    "n1-standard-1": HourlyPrice(0.04749975, 0.0167525),
    "n1-standard-2": HourlyPrice(0.0949995, 0.033505),
    "n1-standard-4": HourlyPrice(0.189999, 0.06701),
    "n1-standard-8": HourlyPrice(0.379998, 0.13402),
    "n1-standard-16": HourlyPrice(0.759996, 0.26804),
    "n1-highmem-2": HourlyPrice(0.118303, 0.041722),
    "n1-highmem-4": HourlyPrice(0.236606, 0.083444),
    "n1-highmem-8": HourlyPrice(0.473212, 0.166888),
    "n1-highcpu-8": HourlyPrice(0.2833944, 0.0999568),
    # System pool shapes.
    "e2-standard-2": HourlyPrice(0.06701142, 0.040212),
    "e2-standard-4": HourlyPrice(0.13402284, 0.080424),
}

# GPUs billed apart from their N1 host, USD per GPU per hour in us-central1 (SKYPILOT).
GPU_PRICES: dict[str, HourlyPrice] = {
    "nvidia-tesla-t4": HourlyPrice(0.35, 0.14),
}


def node_price(machine_type: str, gpu_type: str | None, gpu_count: int, spot: bool) -> float | None:
    """Hourly price of one node of `machine_type` with its GPUs, or None when not in the table."""
    host = MACHINE_PRICES.get(machine_type)
    if host is None or host.get(spot) is None:
        return None
    price = host.get(spot) or 0.0
    if machine_type.startswith("n1-") and gpu_type is not None and gpu_count:
        gpu = GPU_PRICES.get(gpu_type)
        per_gpu = gpu.get(spot) if gpu is not None else None
        if per_gpu is None:
            return None
        price += per_gpu * gpu_count
    return price
