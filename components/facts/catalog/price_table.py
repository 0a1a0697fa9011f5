"""The price table behind components/facts/catalog/prices.py: USD per hour by region, list prices.

Sources (read 2026-11-23; prices as of CATALOG_DATE):
  CATALOG: Cyclenerd/google-cloud-pricing-cost-calculator pricing.yml at commit fd66b26f
    ("generated: Thu Jul 30 06:13:17 2026"), built from Google's Cloud Billing Catalog API:
    `compute.instance.<type>.cost.<region>.hour` and `.hour_spot`. G2, A2, A3 and G4 figures
    include the GPUs; N1 figures are the VM alone. A machine is listed in a region only where
    SKYPILOT has rows for it there (Cyclenerd prices SKUs even where a machine is not sold:
    A2 in us-east4); G4, which SKYPILOT does not list, in us-central1 only (G4 outside
    us-central1 could not be confirmed and is left out). a2-ultragpu-2g and -4g (SKYPILOT's rows
    in all four regions) and g4-standard-96 were added on 2026-11-29 from the same commit.
  SKYPILOT: skypilot-org/skypilot-catalog catalogs/v7/gcp/vms.csv at 017e2502: the per-GPU rows
    of GPUs billed apart from their N1 host (`,,,T4,1,...,us-central1,...,0.35,0.14`).
  N1 custom: per vCPU-hour and per GiB-hour, solved from CATALOG's custom-1-7680-ext and
    custom-2-10240-ext and checked against custom-4-30720-ext (exact in every region). Extended
    memory is billed here at the same rate; whether Google bills it higher could not be
    confirmed from these sources.
  LB_PRICING: https://cloud.google.com/load-balancing/pricing, "Load balancing and forwarding
    rules" (a stored copy, read 2026-11-29): global forwarding rules "First 5 forwarding rules
    $0.025 / 1 hour; Per additional forwarding rule $0.01 / 1 hour". Its regional table (chosen
    by region) did not render in any stored copy.
  LB_SKUS: Cyclenerd's pricing.yml at commit e708efd0 ("generated: Thu Apr 6 09:57:50 2023"),
    the newest version read that carries them (the July 2026 one has none):
    `compute.network.lb.rule.min` and `.add`, the Cloud Billing Catalog SKUs "Network Load
    Balancing: Forwarding Rule Minimum Service Charge in <region>" and "... Additional Service
    Charge ..." (its build/mapping.csv). Its gcosts.pl bills "up to 5 forwarding rules for the
    price, 1 = same as for 5", then each one more.
Spot prices are snapshots (Google may change them daily).
"""

from __future__ import annotations

CATALOG_DATE = "2026-07-30"

# region -> machine -> (on_demand, spot)
REGION_MACHINE_PRICES: dict[str, dict[str, tuple[float | None, float | None]]] = {
    "us-central1": {
        "g2-standard-4": (0.706832255, 0.397336),
        "g2-standard-8": (0.853624271, 0.479872),
        "g2-standard-12": (1.000416287, 0.562408),
        "g2-standard-16": (1.147208303, 0.644944),
        "g2-standard-24": (2.000832574, 1.124816),
        "g2-standard-32": (1.734376367, 0.975088),
        "g2-standard-48": (4.001665148, 2.249632),
        "g2-standard-96": (8.003330296, 4.499264),
        "a2-highgpu-1g": (3.673385, 1.92802),
        "a2-highgpu-2g": (7.34677, 3.85604),
        "a2-highgpu-4g": (14.69354, 7.71208),
        "a2-highgpu-8g": (29.38708, 15.42416),
        "a2-megagpu-16g": (55.739504, 29.25568),
        "a2-ultragpu-1g": (5.06879789041096, 2.75954630136986),
        "a2-ultragpu-2g": (10.1375957808219, 5.51909260273973),
        "a2-ultragpu-4g": (20.2751915616438, 11.0381852054795),
        "a2-ultragpu-8g": (40.5503831232877, 22.0763704109589),
        "a3-highgpu-1g": (11.0612499878219, 6.32619260273973),
        "a3-highgpu-2g": (22.1224999756438, 12.6523852054795),
        "a3-highgpu-4g": (44.2449999512877, 25.3047704109589),
        "a3-highgpu-8g": (88.4899999025753, 50.6095408219178),
        "g4-standard-48": (4.49993, 1.79982),
        "g4-standard-96": (8.99986, 3.59964),
        "n1-standard-1": (0.04749975, 0.0167525),
        "n1-standard-2": (0.0949995, 0.033505),
        "n1-standard-4": (0.189999, 0.06701),
        "n1-standard-8": (0.379998, 0.13402),
        "n1-standard-16": (0.759996, 0.26804),
        "n1-highmem-2": (0.118303, 0.041722),
        "n1-highmem-4": (0.236606, 0.083444),
        "n1-highmem-8": (0.473212, 0.166888),
        "n1-highcpu-8": (0.2833944, 0.0999568),
        "e2-standard-2": (0.06701142, 0.040212),
        "e2-standard-4": (0.13402284, 0.080424),
        "e2-micro": (0.0083764275, 0.0050265),
        "e2-small": (0.016752855, 0.010053),
        "e2-medium": (0.03350571, 0.020106),
        "g1-small": (0.0257, 0.002313),
        "f1-micro": (0.0076, 0.000684),
        "e2-standard-8": (0.26804568, 0.160848),
        "e2-standard-16": (0.53609136, 0.321696),
        "n1-standard-32": (1.519992, 0.53608),
        "n1-highmem-16": (0.946424, 0.333776),
        "n1-highcpu-16": (0.5667888, 0.1999136),
        "n1-highcpu-32": (1.1335776, 0.3998272),
    },
    "us-east4": {
        "g2-standard-4": (0.704517808, 0.310596),
        "g2-standard-8": (0.850829156, 0.375092),
        "g2-standard-12": (0.997140504, 0.439588),
        "g2-standard-16": (1.143451852, 0.504084),
        "g2-standard-24": (1.994281008, 0.879176),
        "g2-standard-32": (1.728697244, 0.762068),
        "g2-standard-48": (3.988562016, 1.758352),
        "g2-standard-96": (7.977124032, 3.516704),
        "a2-ultragpu-1g": (5.70773247945206, 2.36725328767123),
        "a2-ultragpu-2g": (11.4154649589041, 4.73450657534247),
        "a2-ultragpu-4g": (22.8309299178082, 9.46901315068493),
        "a2-ultragpu-8g": (45.6618598356164, 18.9380263013699),
        "a3-highgpu-1g": (11.0694695189041, 4.54010457534247),
        "a3-highgpu-2g": (22.1389390378082, 9.08020915068493),
        "a3-highgpu-4g": (44.2778780756164, 18.1604183013699),
        "a3-highgpu-8g": (88.5557561512329, 36.3208366027397),
        "n1-standard-1": (0.05349625, 0.01368875),
        "n1-standard-2": (0.1069925, 0.0273775),
        "n1-standard-4": (0.213985, 0.054755),
        "n1-standard-8": (0.42797, 0.10951),
        "n1-standard-16": (0.85594, 0.21902),
        "n1-highmem-2": (0.133233, 0.034093),
        "n1-highmem-4": (0.266466, 0.068186),
        "n1-highmem-8": (0.532932, 0.136372),
        "n1-highcpu-8": (0.3191912, 0.0816712),
        "e2-standard-2": (0.07547082, 0.04138),
        "e2-standard-4": (0.15094164, 0.08276),
        "e2-micro": (0.0094338525, 0.0051725),
        "e2-small": (0.018867705, 0.010345),
        "e2-medium": (0.03773541, 0.02069),
        "g1-small": (0.0289, 0.002601),
        "f1-micro": (0.0086, 0.001116),
        "e2-standard-8": (0.30188328, 0.16552),
        "e2-standard-16": (0.60376656, 0.33104),
        "n1-standard-32": (1.71188, 0.43804),
        "n1-highmem-16": (1.065864, 0.272744),
        "n1-highcpu-16": (0.6383824, 0.1633424),
        "n1-highcpu-32": (1.2767648, 0.3266848),
    },
    "europe-west4": {
        "g2-standard-4": (0.742916046, 0.38986),
        "g2-standard-8": (0.897201806, 0.47082),
        "g2-standard-12": (1.051487566, 0.55178),
        "g2-standard-16": (1.205773326, 0.63274),
        "g2-standard-24": (2.102975132, 1.10356),
        "g2-standard-32": (1.822916366, 0.95658),
        "g2-standard-48": (4.205950264, 2.20712),
        "g2-standard-96": (8.411900528, 4.41424),
        "a2-highgpu-1g": (3.747972, 1.692835),
        "a2-highgpu-2g": (7.495944, 3.38567),
        "a2-highgpu-4g": (14.991888, 6.77134),
        "a2-highgpu-8g": (29.983776, 13.54268),
        "a2-megagpu-16g": (56.62656, 25.57624),
        "a2-ultragpu-1g": (5.58091847945206, 2.94520671232877),
        "a2-ultragpu-2g": (11.1618369589041, 5.89041342465753),
        "a2-ultragpu-4g": (22.3236739178082, 11.7808268493151),
        "a2-ultragpu-8g": (44.6473478356164, 23.5616536986301),
        "a3-highgpu-1g": (14.0675598969041, 5.51484742465753),
        "a3-highgpu-2g": (28.1351197938082, 11.0296948493151),
        "a3-highgpu-4g": (56.2702395876164, 22.0593896986301),
        "a3-highgpu-8g": (112.540479175233, 44.1187793972603),
        "n1-standard-1": (0.052292, 0.0303825),
        "n1-standard-2": (0.104584, 0.060765),
        "n1-standard-4": (0.209168, 0.12153),
        "n1-standard-8": (0.418336, 0.24306),
        "n1-standard-16": (0.836672, 0.48612),
        "n1-highmem-2": (0.130236, 0.07567),
        "n1-highmem-4": (0.260472, 0.15134),
        "n1-highmem-8": (0.520944, 0.30268),
        "n1-highcpu-8": (0.3119968, 0.181272),
        "e2-standard-2": (0.07377204, 0.035264),
        "e2-standard-4": (0.14754408, 0.070528),
        "e2-micro": (0.009221505, 0.004408),
        "e2-small": (0.01844301, 0.008816),
        "e2-medium": (0.03688602, 0.017632),
        "g1-small": (0.0283, 0.004315),
        "f1-micro": (0.0084, 0.000869),
        "e2-standard-8": (0.29508816, 0.141056),
        "e2-standard-16": (0.59017632, 0.282112),
        "n1-standard-32": (1.673344, 0.97224),
        "n1-highmem-16": (1.041888, 0.60536),
        "n1-highcpu-16": (0.6239936, 0.362544),
        "n1-highcpu-32": (1.2479872, 0.725088),
    },
    "asia-southeast1": {
        "g2-standard-4": (0.872018928, 0.523272),
        "g2-standard-8": (1.053116256, 0.631944),
        "g2-standard-12": (1.234213584, 0.740616),
        "g2-standard-16": (1.415310912, 0.849288),
        "g2-standard-24": (2.468427168, 1.481232),
        "g2-standard-32": (2.139700224, 1.283976),
        "g2-standard-48": (4.936854336, 2.962464),
        "g2-standard-96": (9.873708672, 5.924928),
        "a2-highgpu-1g": (4.013757926, 2.40826),
        "a2-highgpu-2g": (8.027515852, 4.81652),
        "a2-highgpu-4g": (16.055031704, 9.63304),
        "a2-highgpu-8g": (32.110063408, 19.26608),
        "a2-megagpu-16g": (60.476222816, 36.28576),
        "a2-ultragpu-1g": (6.24768547945206, 3.24872753424658),
        "a2-ultragpu-2g": (12.4953709589041, 6.49745506849315),
        "a2-ultragpu-4g": (24.9907419178082, 12.9949101369863),
        "a2-ultragpu-8g": (49.9814838356164, 25.9898202739726),
        "a3-highgpu-1g": (14.2847866209041, 6.40233306849315),
        "a3-highgpu-2g": (28.5695732418082, 12.8046661369863),
        "a3-highgpu-4g": (57.1391464836164, 25.6093322739726),
        "a3-highgpu-8g": (114.278292967233, 51.2186645479452),
        "n1-standard-1": (0.0585965, 0.01173625),
        "n1-standard-2": (0.117193, 0.0234725),
        "n1-standard-4": (0.234386, 0.046945),
        "n1-standard-8": (0.468772, 0.09389),
        "n1-standard-16": (0.937544, 0.18778),
        "n1-highmem-2": (0.145936, 0.029231),
        "n1-highmem-4": (0.291872, 0.058462),
        "n1-highmem-8": (0.583744, 0.116924),
        "n1-highcpu-8": (0.3496192, 0.0700184),
        "e2-standard-2": (0.08266614, 0.043164),
        "e2-standard-4": (0.16533228, 0.086328),
        "e2-micro": (0.0103332675, 0.0053955),
        "e2-small": (0.020666535, 0.010791),
        "e2-medium": (0.04133307, 0.021582),
        "g1-small": (0.0311, 0.00384),
        "f1-micro": (0.0092, 0.000828),
        "e2-standard-8": (0.33066456, 0.172656),
        "e2-standard-16": (0.66132912, 0.345312),
        "n1-standard-32": (1.875088, 0.37556),
        "n1-highmem-16": (1.167488, 0.233848),
        "n1-highcpu-16": (0.6992384, 0.1400368),
        "n1-highcpu-32": (1.3984768, 0.2800736),
    },
}

# region -> GPU attached to an N1 host -> (on_demand, spot), per GPU
REGION_GPU_PRICES: dict[str, dict[str, tuple[float | None, float | None]]] = {
    "us-central1": {
        "nvidia-tesla-t4": (0.35, 0.14),
        "nvidia-tesla-p4": (0.6, 0.24),
        "nvidia-tesla-p100": (1.46, 0.584),
        "nvidia-tesla-v100": (2.48, 0.992),
    },
    "us-east4": {
        "nvidia-tesla-t4": (0.37, 0.1123),
        "nvidia-tesla-p4": (0.6, 0.1734),
    },
    "europe-west4": {
        "nvidia-tesla-t4": (0.3675, 0.14),
        "nvidia-tesla-p4": (0.63, 0.0822),
        "nvidia-tesla-p100": (1.533, 0.3265),
        "nvidia-tesla-v100": (2.604, 0.7148),
    },
    "asia-southeast1": {
        "nvidia-tesla-t4": (0.37, 0.1195),
        "nvidia-tesla-p4": (0.65, 0.0662),
    },
}

# region -> (vCPU on-demand, GiB on-demand, vCPU Spot, GiB Spot) of N1 custom machine types
REGION_N1_CUSTOM: dict[str, tuple[float, float, float, float]] = {
    "us-central1": (0.03319155, 0.004446, 0.0117, 0.001569),
    "us-east4": (0.03738525, 0.00500955, 0.00957, 0.001282),
    "europe-west4": (0.0365421, 0.0048972, 0.02124, 0.002846),
    "asia-southeast1": (0.04094895, 0.0054873, 0.0082, 0.001099),
}

# Forwarding rules of Cloud Load Balancing, USD per hour: (the first five, each one more). The
# first five of a scope (the project's global rules, or its rules in one region) are one minimum
# charge, one rule or five (the SKU's "Minimum Service Charge"; LB_SKUS); each further rule adds
# the second figure. Global: LB_PRICING. Regional: LB_SKUS of 2023-04-06 (us-central1 equals the
# global figures); whether they still hold could not be confirmed from Google's page.
GLOBAL_FORWARDING_RULES: tuple[float, float] = (0.025, 0.01)
REGION_FORWARDING_RULES: dict[str, tuple[float, float]] = {
    "us-central1": (0.025, 0.01),
    "us-east4": (0.028, 0.011),
    "europe-west4": (0.0275, 0.011),
    "asia-southeast1": (0.028, 0.011),
}
FORWARDING_RULES_REGIONAL_DATE = "2023-04-06"
FORWARDING_RULES_READ = "2026-11-29"
