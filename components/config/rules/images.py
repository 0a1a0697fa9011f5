"""Images pinned by digest (issue 44, M5r): a production stack's workloads, and what the plan says
of the one image the program installs by tag.

A tag can be moved to other bytes after the image was reviewed, and every node that starts later
pulls whatever the tag names then; a digest (`name:tag@sha256:<64 hex>`) names the bytes. The
program pins every image it chooses by digest (tests/test_deployable.py) except Google's Custom
Metrics Stackdriver Adapter, which it installs for an HPA on a server metric: no digest of its
tag was found in any source read (GoogleCloudPlatform/k8s-stackdriver's manifests name the tag
only), so it is left on its tag (components/platform/metrics_adapter.py, TODO) and the plan says
so rather than a digest being made up.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from .. import formats
from ..context import Context
from ..problems import Problem
from ..schema import WorkloadSpec
from ..sleep import scales_on_metric

SHA256 = re.compile(r"sha256:[0-9a-f]{64}", re.ASCII)
# components/platform/metrics_adapter.py IMAGE (the config layer does not import the platform's;
# tests/test_security_refusals.py holds the two equal).
ADAPTER_IMAGE = "gcr.io/gke-release/custom-metrics-stackdriver-adapter:v0.16.9-gke.0"


def digest_problems(i: int, w: WorkloadSpec, ctx: Context) -> Iterator[Problem]:
    """In a production stack (rules/production.py), a workload's image is pinned by digest. The
    fix names the image only where its value may be shown."""
    name, tag, digest = formats.image_parts(w.image)
    if digest is not None and SHA256.fullmatch(digest):
        return
    path = f"workloads[{i}].image"
    if ctx.is_secret(path):
        name, tag = "NAME", "TAG"
    pinned = f"{name}:{tag}@sha256:<digest>" if tag else f"{name}@sha256:<digest>"
    yield Problem(
        path,
        f"{ctx.show(path, w.image)} names its image by tag only, in a production stack "
        "(cluster.production): a tag can be moved to other code after you reviewed it, and each "
        f"node that starts later pulls whatever it names then. Pin the digest: {pinned} (64 hex "
        "characters; `crane digest` or `docker buildx imagetools inspect` prints it).",
    )


def advisories(workloads: Sequence[tuple[int, WorkloadSpec]], existing: bool) -> list[str]:
    """The metrics adapter the stack installs for an HPA runs by tag (GKE only)."""
    scaled = [i for i, w in workloads if scales_on_metric(w)]
    if existing or not scaled or "@sha256:" in ADAPTER_IMAGE:
        return []
    return [
        f"workloads[{scaled[0]}].autoscale: the stack installs Google's Custom Metrics "
        f"Stackdriver Adapter for the HPA, pulled by its tag {ADAPTER_IMAGE}, not by a digest: "
        "no digest of that tag was found in any source read, so it is not pinned, and a tag can "
        "be moved to other code. If your policy requires digests, check what the tag resolves "
        f"to before `pulumi up` (`crane digest {ADAPTER_IMAGE}`)."
    ]
