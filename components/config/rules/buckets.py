"""Cloud Storage buckets the workloads mount (modelCache.bucket, output.bucket; issue 44): names
Cloud Storage can have, a results bucket that is not a served model's, and what the plan says of
the results bucket's project and of who may write to it.

Bucket names (Cloud Storage, "About Cloud Storage buckets", Bucket names,
https://cloud.google.com/storage/docs/buckets#naming, read in the stored documentation): only
lowercase letters, digits, '-', '_' and '.'; start and end with a letter or digit; 3-63
characters, or up to 222 with dots, each dot-separated component at most 63; "cannot be
represented as an IP address in dotted-decimal notation (for example, 192.168.5.4)"; "cannot
begin with the goog prefix"; "cannot contain google or close misspellings, such as g00gle".
"Names containing dots require verification" of the domain they name, and a name with an empty
component ("acme..results") is no domain name, so it cannot be verified. Which misspellings
Google counts is not listed beyond "g00gle": here, digits read as the letters they look like
(0 o, 1 l, 3 e) and any run of g, o, g, l, e in that order (gogle, gooogle, goog1e).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from ..context import Context
from ..problems import Problem
from ..schema import WorkloadSpec

_CHARACTERS = re.compile(r"[a-z0-9_.-]+", re.ASCII)
_IP = re.compile(r"[0-9]+(?:\.[0-9]+){3}", re.ASCII)
_LOOKALIKES = str.maketrans("013", "ole")
_GOOGLE = re.compile(r"g+o+g+l+e+")
# The role workloads[].output's grant gives (components/service/model_cache.py BUCKET_WRITER_ROLE).
WRITER_ROLE = "roles/storage.objectUser"


def name_problem(name: str) -> str | None:
    """Why Cloud Storage refuses `name` as a bucket name, else None."""
    if not _CHARACTERS.fullmatch(name):
        return "use only lowercase letters, digits, '-', '_' and '.' (no gs://, no '/')"
    if not (name[0].isalnum() and name[-1].isalnum()):
        return "start and end it with a letter or digit"
    limit = 222 if "." in name else 63
    if not 3 <= len(name) <= limit:
        return f"it has {len(name)} characters: use 3-63, or up to 222 with dots"
    parts = name.split(".")
    if any(not part for part in parts):
        return "it has an empty part between dots, which no domain name has"
    if any(len(part) > 63 for part in parts):
        return "each part between dots has at most 63 characters"
    if _IP.fullmatch(name):
        return "it reads as an IP address (e.g. 192.168.5.4), which Cloud Storage refuses"
    if name.startswith("goog"):
        return "it begins with 'goog', which Cloud Storage reserves"
    if _GOOGLE.search(name.translate(_LOOKALIKES)):
        return (
            "it contains 'google' or a close misspelling (e.g. 'g00gle'): Cloud Storage refuses it"
        )
    return None


def bucket_problems(path: str, name: str, ctx: Context) -> Iterator[Problem]:
    """A bucket key (`workloads[0].output.bucket`) whose name Cloud Storage refuses."""
    reason = name_problem(name)
    if reason is not None:
        yield Problem(
            path,
            f"{ctx.show(path, name)} is not a Cloud Storage bucket name: {reason} (the bucket "
            "name alone, without gs://; cloud.google.com/storage/docs/buckets#naming).",
        )


def shared_bucket_problems(
    workloads: Sequence[tuple[int, WorkloadSpec]], ctx: Context
) -> list[Problem]:
    """A results bucket that is a served model's: the Job is granted write access to it (create,
    overwrite, delete objects) and could replace the weights the model loads at its next start."""
    models = {w.model_cache.bucket: i for i, w in workloads if w.model_cache is not None}
    found = []
    for i, w in workloads:
        if w.output is None or w.output.bucket not in models:
            continue
        path, other = f"workloads[{i}].output.bucket", models[w.output.bucket]
        found.append(
            Problem(
                path,
                f"{ctx.show(path, w.output.bucket)} is also workloads[{other}].modelCache.bucket, "
                f"the weights workloads[{other}] loads: this Job would be granted {WRITER_ROLE} "
                "on it and could overwrite or delete the model another workload serves. Write "
                "the results to a bucket of their own (e.g. acme-results).",
            )
        )
    return found


def advisories(
    workloads: Sequence[tuple[int, WorkloadSpec]], project: str, namespace: str
) -> list[str]:
    """The results bucket's project, and who the grant lets write there (identity sameness)."""
    found = []
    for i, w in workloads:
        if w.output is None:
            continue
        owner = w.output.project or project
        whose = (
            f"in project {owner}, not this stack's ({project}), as output.project says"
            if owner != project
            else f"taken to be this stack's project {project}'s (else set output.project)"
        )
        found.append(
            f"workloads[{i}].output: the Job writes to gs://{w.output.bucket}, {whose}; the plan "
            "cannot check which project owns a bucket (a bucket's projectNumber in Cloud "
            "Storage's API), so check it before `pulumi up`. The stack grants "
            f"{WRITER_ROLE} on it to the Workload Identity principal ns/{namespace}/sa/{w.name} "
            f"of {project}.svc.id.goog, which every cluster of {project} with that namespace and "
            "workload name shares (GKE's identity sameness): their pods may write there too. "
            "Give each team its own namespace (gke-gpu:namespace) or project."
        )
    return found
