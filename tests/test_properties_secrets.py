"""The secret and plan invariants of tests/test_properties.py (the same generator, the same engine
harness), in a file of their own so that pytest-xdist, which keeps a file on one worker, runs
them beside the others: together they were the suite's longest file (issue 32)."""

from __future__ import annotations

from hypothesis import given

from dev import fuzz
from tests.test_properties import _engine, engine_cases


@given(engine_cases(classes=("nested-secret", "secret-echo")))
def test_without_a_stack_file_no_value_of_a_secret_key_is_shown(case: fuzz.Case) -> None:
    outcome = _engine(case, with_stack_file=False)
    leaks = fuzz.judge(case, outcome, engine=True).leaks
    assert not leaks, (
        f"secret value(s) {leaks} shown when the program cannot read the stack file (config from "
        "an ESC environment, another directory): not knowing which leaf was `secure:` must mean "
        "treating them all as secret"
    )


@given(engine_cases(classes=("nested-secret", "crash")))
def test_a_valid_config_keeps_the_users_workloads_and_its_nested_secrets(case: fuzz.Case) -> None:
    outcome = _engine(case)
    if case.invalid:
        return
    assert outcome.code == 0, (
        f"a valid config was refused ({outcome.crash or outcome.problems}): a nested secret or an "
        "unquoted date is ordinary YAML the CLI accepts"
    )
    verdict = fuzz.judge(case, outcome, engine=True)
    assert not verdict.wrong_plan, (
        f"{verdict.wrong_plan}: `pulumi up` would replace the user's workloads or put their "
        "secret in a plain env value"
    )
