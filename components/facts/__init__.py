"""Facts about GKE and GPUs, each with its source: the GPU catalog, node allocatable, pinned
versions and digests, label keys."""
