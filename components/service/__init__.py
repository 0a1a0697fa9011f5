"""One GpuService per workload and what it is made of: the workload, its gate, Service,
certificate, API key, autoscaler, ComputeClass and bucket access."""
