import sys
import time

t0 = time.perf_counter()
import yaml

from tools.engine import run_program

t1 = time.perf_counter()
rec = run_program(yaml.safe_load(open("Pulumi.dev.yaml"))["config"], stack="dev")
t2 = time.perf_counter()
print(f"import {t1 - t0:.3f} run {t2 - t1:.3f}", file=sys.stderr)
