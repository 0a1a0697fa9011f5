"""Tools for working on the project, not part of it: `python -m dev.fuzz` (generated stack files
through the offline plan, judged by the config layer's invariants) and `python -m dev.benchmark`
(the offline plan's time against the SDKs' import time); dev/plans_identical.sh checks that a
refactoring leaves every stack's offline plan as it was.

dev/ may import the product (components/, tools/); nothing under components/, tools/, policy/
or __main__.py imports dev/ (tests/test_layout.py checks that), so the program that `pulumi up`
runs and the offline plan never depend on it.
"""
