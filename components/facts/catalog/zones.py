"""Which zones each region has and which zones offer each GPU: a dated snapshot, not a live list.

Read 2026-11-23. Google's own list, "GPU regions and zones availability"
(https://cloud.google.com/compute/docs/gpus/gpu-regions-zones), could not be read here (it is not
in the stored documentation this project was written with), so nothing below comes from it. The
tables are a snapshot of these two sources:

  SKYPILOT (zone level, every GPU_ZONES entry): github.com/skypilot-org/skypilot-catalog at
    006059e0f18acb1341e22a27751e9f80df6ba92f, catalogs/v8/gcp/vms.csv (InstanceType, ...,
    AcceleratorName, ..., Region, AvailabilityZone). Its GPU rows and the a2/a3/a4/g2 machine rows
    were read. SkyPilot's names map to GKE's: T4, P4, P100, V100, L4, A100 (a2-highgpu),
    A100-80GB (a2-ultragpu), H100 (a3-highgpu/a3-edgegpu), a3-megagpu-8g, H200 (a3-ultragpu),
    B200 (a4-highgpu).
  CYCLENERD (region level, and the zone list): github.com/Cyclenerd/
    google-cloud-pricing-cost-calculator at dac31281f2a4575f0a8bff20ac04fc71a5ff2190 (2026-08-20),
    whose tools/*.csv are `gcloud compute ... list` exports: acceleratortyperegion.csv (2026-08-10;
    every GPU_ZONES entry has the same regions as this file except NOTE 3),
    machinetyperegion.csv (2026-08-17), regions.csv (2026-01-09: the same 43 regions as ZONES),
    zones.csv (2023-03-30, stale). Its zone-level acceleratortypezone.csv (2023) was not used.

GPU_ZONES: where SKYPILOT lists the GPU. A GPU type that is not a key is "unconfirmed at zone
level", not "nowhere": nothing is refused for it at zone level (GPU_REGIONS_ONLY may still say
which regions have it). ZONES: CYCLENERD zones.csv plus every zone seen in the SKYPILOT rows read.
Zones newer than 2023 that none of those rows name may be missing.

Refresh: re-read both sources (or run `gcloud compute accelerator-types list
--format="value(zone,name)"` and `gcloud compute zones list --format="value(name)"` in a project
with Compute Engine), replace the strings below, update the date and commits above, and run
`pytest tests/test_zones.py`. A zone or GPU missing here makes a valid stack fail to load, so when
Google announces one, add it first.
"""

from __future__ import annotations

# NOTE 1 - not confirmed at zone level (no zone-level source; left out of GPU_ZONES):
#   nvidia-rtx-pro-6000 (G4) and nvidia-gb200 (A4X) are not in SKYPILOT; CYCLENERD has them per
#   region only. nvidia-gb300 (A4X Max) is in neither by that name: CYCLENERD lists the machine
#   type a4x-maxgpu-4g-metal per region; reading it as GB300 is an inference (GKE's autoscaler
#   pairs that machine with NvidiaGB300, see catalog/machines.py GKE_MACHINES).
# NOTE 2 - nvidia-h100-mega-80gb: SKYPILOT's H100-MEGA GPU rows disagree with its own
#   a3-megagpu-8g machine rows; the table follows the machine rows (a GKE pool needs that
#   machine type), whose 13 regions match CYCLENERD machinetyperegion.csv exactly.
# NOTE 3 - CYCLENERD lists a region SKYPILOT has no zone for: nvidia-h100-80gb in
#   australia-southeast2, nvidia-b200 in europe-west1. SKYPILOT lists a3-highgpu-1g/2g/4g in
#   europe-west8-c but no H100 GPU row there, and CYCLENERD not the region: left out.
# NOTE 4 - these are where a type is offered, not capacity or quota: a listed zone can still be
#   out of stock.


def _split(names: str) -> tuple[str, ...]:
    return tuple(sorted(names.split()))


def region_of(zone: str) -> str:
    """'us-central1-a' -> 'us-central1' (and 'us-south1-ai1b' -> 'us-south1')."""
    return zone.rsplit("-", 1)[0]


ZONES: tuple[str, ...] = _split(
    "africa-south1-a africa-south1-b africa-south1-c asia-east1-a asia-east1-b asia-east1-c "
    "asia-east2-a asia-east2-b asia-east2-c asia-northeast1-a asia-northeast1-b asia-northeast1-c "
    "asia-northeast2-a asia-northeast2-b asia-northeast2-c asia-northeast3-a asia-northeast3-b "
    "asia-northeast3-c asia-south1-a asia-south1-b asia-south1-c asia-south2-a asia-south2-b "
    "asia-south2-c asia-southeast1-a asia-southeast1-b asia-southeast1-c asia-southeast2-a "
    "asia-southeast2-b asia-southeast2-c asia-southeast3-a asia-southeast3-b asia-southeast3-c "
    "australia-southeast1-a australia-southeast1-b australia-southeast1-c australia-southeast2-a "
    "australia-southeast2-b australia-southeast2-c europe-central2-a europe-central2-b "
    "europe-central2-c europe-north1-a europe-north1-b europe-north1-c europe-north2-a "
    "europe-north2-b europe-north2-c europe-southwest1-a europe-southwest1-b europe-southwest1-c "
    "europe-west1-b europe-west1-c europe-west1-d europe-west10-a europe-west10-b europe-west10-c "
    "europe-west12-a europe-west12-b europe-west12-c europe-west2-a europe-west2-b europe-west2-c "
    "europe-west3-a europe-west3-b europe-west3-c europe-west4-a europe-west4-b europe-west4-c "
    "europe-west6-a europe-west6-b europe-west6-c europe-west8-a europe-west8-b europe-west8-c "
    "europe-west9-a europe-west9-b europe-west9-c me-central1-a me-central1-b me-central1-c "
    "me-central2-a me-central2-b me-central2-c me-west1-a me-west1-b me-west1-c "
    "northamerica-northeast1-a northamerica-northeast1-b northamerica-northeast1-c "
    "northamerica-northeast2-a northamerica-northeast2-b northamerica-northeast2-c "
    "northamerica-south1-a northamerica-south1-b northamerica-south1-c southamerica-east1-a "
    "southamerica-east1-b southamerica-east1-c southamerica-west1-a southamerica-west1-b "
    "southamerica-west1-c us-central1-a us-central1-b us-central1-c us-central1-f us-east1-b "
    "us-east1-c us-east1-d us-east4-a us-east4-b us-east4-c us-east5-a us-east5-b us-east5-c "
    "us-south1-a us-south1-ai1b us-south1-b us-south1-c us-west1-a us-west1-b us-west1-c "
    "us-west2-a us-west2-b us-west2-c us-west3-a us-west3-b us-west3-c us-west4-a us-west4-b "
    "us-west4-c"
)

REGION_ZONES: dict[str, tuple[str, ...]] = {
    region: tuple(zone for zone in ZONES if region_of(zone) == region)
    for region in sorted({region_of(zone) for zone in ZONES})
}

GPU_ZONES: dict[str, tuple[str, ...]] = {
    # rows AcceleratorName=T4: 51 zones
    "nvidia-tesla-t4": _split(
        "asia-east1-a asia-east1-c asia-east2-a asia-east2-c asia-northeast1-a asia-northeast1-c "
        "asia-northeast3-b asia-northeast3-c asia-south1-a asia-south1-b asia-southeast1-a "
        "asia-southeast1-b asia-southeast1-c asia-southeast2-a asia-southeast2-b "
        "australia-southeast1-a australia-southeast1-c europe-central2-b europe-central2-c "
        "europe-west1-b europe-west1-c europe-west1-d europe-west2-a europe-west2-b europe-west3-b "
        "europe-west4-a europe-west4-b europe-west4-c me-west1-b me-west1-c "
        "northamerica-northeast1-c southamerica-east1-a southamerica-east1-b southamerica-east1-c "
        "us-central1-a us-central1-b us-central1-c us-central1-f us-east1-b us-east1-c us-east1-d "
        "us-east4-a us-east4-b us-east4-c us-west1-a us-west1-b us-west2-b us-west2-c us-west3-b "
        "us-west4-a us-west4-b"
    ),
    # rows P4: 17 zones
    "nvidia-tesla-p4": _split(
        "asia-southeast1-a asia-southeast1-b asia-southeast1-c australia-southeast1-a "
        "australia-southeast1-b europe-west4-b europe-west4-c northamerica-northeast1-a "
        "northamerica-northeast1-b northamerica-northeast1-c us-central1-a us-central1-c "
        "us-east4-a us-east4-b us-east4-c us-west2-b us-west2-c"
    ),
    # rows P100: 12 zones
    "nvidia-tesla-p100": _split(
        "asia-east1-a asia-east1-c australia-southeast1-b europe-west1-b europe-west1-d "
        "europe-west4-a us-central1-c us-central1-f us-east1-b us-east1-c us-west1-a us-west1-b"
    ),
    # rows V100: 12 zones
    "nvidia-tesla-v100": _split(
        "asia-east1-c europe-west4-a europe-west4-b europe-west4-c us-central1-a us-central1-b "
        "us-central1-c us-central1-f us-east1-b us-east1-c us-west1-a us-west1-b"
    ),
    # rows L4 (the g2-standard-* rows): 44 zones
    "nvidia-l4": _split(
        "asia-east1-a asia-east1-b asia-east1-c asia-northeast1-a asia-northeast1-b "
        "asia-northeast1-c asia-northeast3-a asia-northeast3-b asia-south1-a asia-south1-b "
        "asia-south1-c asia-southeast1-a asia-southeast1-b asia-southeast1-c europe-west1-b "
        "europe-west1-c europe-west2-a europe-west2-b europe-west3-a europe-west3-b europe-west4-a "
        "europe-west4-b europe-west4-c europe-west6-b europe-west6-c me-central2-a me-central2-c "
        "northamerica-northeast1-b northamerica-northeast1-c northamerica-northeast2-a "
        "northamerica-northeast2-b us-central1-a us-central1-b us-central1-c us-east1-b us-east1-c "
        "us-east1-d us-east4-a us-east4-c us-west1-a us-west1-b us-west1-c us-west4-a us-west4-c"
    ),
    # rows A100 (the a2-highgpu-* rows): 19 zones
    "nvidia-tesla-a100": _split(
        "asia-northeast1-a asia-northeast1-c asia-northeast3-a asia-northeast3-b asia-southeast1-a "
        "asia-southeast1-b asia-southeast1-c europe-west4-a europe-west4-b me-west1-a me-west1-c "
        "us-central1-a us-central1-b us-central1-c us-central1-f us-east1-b us-west1-b us-west3-b "
        "us-west4-b"
    ),
    # rows A100-80GB (the a2-ultragpu-* rows): 7 zones
    "nvidia-a100-80gb": _split(
        "asia-southeast1-c europe-west4-a us-central1-a us-central1-c us-east4-c us-east5-a "
        "us-east5-b"
    ),
    # rows H100 (the a3-highgpu-8g and a3-edgegpu-8g rows): 29 zones
    "nvidia-h100-80gb": _split(
        "asia-east1-c asia-northeast1-b asia-northeast3-a asia-northeast3-c asia-south1-c "
        "asia-south2-b asia-southeast1-b asia-southeast1-c australia-southeast1-c europe-north1-c "
        "europe-west1-b europe-west1-c europe-west2-b europe-west3-a europe-west3-c europe-west4-b "
        "europe-west4-c europe-west9-c northamerica-northeast2-c us-central1-a us-central1-b "
        "us-central1-c us-east4-a us-east4-b us-east4-c us-east5-a us-west1-a us-west1-b "
        "us-west4-a"
    ),
    # rows InstanceType=a3-megagpu-8g (see NOTE 2): 21 zones
    "nvidia-h100-mega-80gb": _split(
        "asia-east1-c asia-northeast1-b asia-southeast1-b asia-southeast1-c australia-southeast1-c "
        "europe-north1-c europe-west1-b europe-west1-c europe-west3-c europe-west4-b "
        "europe-west4-c us-central1-a us-central1-b us-central1-c us-east4-a us-east4-b us-east4-c "
        "us-east5-a us-west1-a us-west1-b us-west4-a"
    ),
    # rows H200 (the a3-ultragpu-8g rows): 9 zones
    "nvidia-h200-141gb": _split(
        "asia-south1-b asia-south2-c europe-west1-b europe-west4-a us-central1-b us-east4-b "
        "us-east5-a us-south1-b us-west1-c"
    ),
    # rows B200 (the a4-highgpu-8g rows): 11 zones
    "nvidia-b200": _split(
        "asia-northeast1-b asia-southeast1-b europe-north1-b europe-west4-b us-central1-b "
        "us-east1-b us-east4-b us-south1-b us-west2-c us-west3-b us-west3-c"
    ),
}

# Region level only (CYCLENERD): the regions may have the GPU; which zones is unconfirmed.
GPU_REGIONS_ONLY: dict[str, tuple[str, ...]] = {
    # tools/acceleratortyperegion.csv
    "nvidia-rtx-pro-6000": _split(
        "asia-east1 asia-northeast1 asia-south1 asia-south2 asia-southeast1 asia-southeast2 "
        "europe-north1 europe-west1 europe-west10 europe-west2 europe-west4 europe-west8 "
        "me-central2 southamerica-east1 us-central1 us-east1 us-east4 us-east5 us-south1 us-west1 "
        "us-west3 us-west4"
    ),
    # tools/acceleratortyperegion.csv (a4x-highgpu-4g: the same 4 regions in machinetyperegion.csv)
    "nvidia-gb200": _split("europe-west4 us-central1 us-east1 us-east4"),
    # machine type a4x-maxgpu-4g-metal in tools/machinetyperegion.csv (NOTE 1)
    "nvidia-gb300": _split("us-central1 us-east4 us-east5"),
}

SOURCE = "components/facts/catalog/zones.py, a 2026-11-23 snapshot of the SkyPilot catalog"


def zones_of(region: str) -> tuple[str, ...] | None:
    """The zones of `region`; None when the region is not in the table."""
    return REGION_ZONES.get(region)


def gpu_zones(gpu: str, region: str) -> tuple[str, ...] | None:
    """The zones of `region` that offer `gpu` (empty: none does); None when that is not known at
    zone level (a GPU type without zone data, or a region not in the table)."""
    if gpu not in GPU_ZONES or region not in REGION_ZONES:
        return None
    return tuple(zone for zone in GPU_ZONES[gpu] if region_of(zone) == region)


def gpu_regions(gpu: str) -> tuple[str, ...] | None:
    """The regions that offer `gpu`, at zone or region level; None when neither is known."""
    if gpu in GPU_ZONES:
        return tuple(sorted({region_of(zone) for zone in GPU_ZONES[gpu]}))
    return GPU_REGIONS_ONLY.get(gpu)


def default_zones(gpu: str, region: str, location: str) -> tuple[str, ...]:
    """Where a pool that names no zones runs: a zonal cluster's zone; in a regional cluster the
    region's zones that offer `gpu`; empty when that is unknown (GKE then uses the cluster's
    zones, all of them, whether or not they have the GPU)."""
    if location != region:
        return (location,)
    return gpu_zones(gpu, region) or ()
