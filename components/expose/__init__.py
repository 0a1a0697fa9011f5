"""How a workload is reached: one module per expose type (components/slices.py EXPOSURES)."""
