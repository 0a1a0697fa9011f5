"""Which Artifact Registry repositories the nodes pull the workloads' images from.

Only Compute Engine's *default* service account reads same-project repositories without a grant;
the stack's nodes run as their own account with roles/container.defaultNodeServiceAccount, which
holds no Artifact Registry permission. "If you use a custom IAM service account for your nodes
... grant the Artifact Registry Reader role (roles/artifactregistry.reader) on the repository"
(GKE, "Pulling images from Artifact Registry"; Artifact Registry, "Configure access for
Google Kubernetes Engine", cloud.google.com/artifact-registry/docs/integrate-gke). An image
`LOCATION-docker.pkg.dev/PROJECT/REPOSITORY/IMAGE` names its repository (Artifact Registry,
"Docker repository format": `LOCATION-docker.pkg.dev/PROJECT-ID/REPOSITORY/IMAGE`).
"""

import re
from collections.abc import Iterable
from dataclasses import dataclass

from .. import formats

READER_ROLE = "roles/artifactregistry.reader"
_DOCKER_PKG = re.compile(
    rf"(?P<location>[a-z0-9-]+)-docker\.pkg\.dev/(?P<project>{formats.PROJECT_ID})"
    r"/(?P<repository>[a-z0-9][-a-z0-9]*)/",
    re.ASCII,
)


@dataclass(frozen=True, order=True)
class Repository:
    """An Artifact Registry Docker repository a workload's image lives in."""

    project: str
    """The Google Cloud project the repository belongs to."""
    location: str
    """Its location (a region such as `us-central1`, or a multi-region such as `us`)."""
    repository: str
    """Its name (the path segment after the project in `LOCATION-docker.pkg.dev/PROJECT/`)."""

    @property
    def label(self) -> str:
        return f"{self.location}-docker.pkg.dev/{self.project}/{self.repository}"


def repository_of(image: str) -> Repository | None:
    """The Artifact Registry repository of an image, or None for any other registry."""
    match = _DOCKER_PKG.match(image)
    if match is None:
        return None
    return Repository(match["project"], match["location"], match["repository"])


def repositories(images: Iterable[str], project: str) -> tuple[tuple[Repository, ...], list[str]]:
    """The cluster project's repositories the nodes must read (granted by the stack), and an
    advisory for each repository of another project (granted there by someone who may)."""
    found = sorted({r for r in map(repository_of, images) if r is not None})
    own = tuple(r for r in found if r.project == project)
    elsewhere = [
        f"image repository {r.label} is in project {r.project!r}, not the cluster's "
        f"({project!r}): if it is private, grant {READER_ROLE} on it to the node service "
        "account there, or the pods stay in ImagePullBackOff."
        for r in found
        if r.project != project
    ]
    return own, elsewhere
