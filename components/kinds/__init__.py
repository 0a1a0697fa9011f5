"""How a workload runs, one module per kind behind base.Kind; components/slices.py lists them."""
