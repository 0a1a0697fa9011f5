"""Generation: a case from a base stack and mutations, reproducible from (seed, index)."""

from __future__ import annotations

import copy
import random
from collections.abc import Sequence

from dev.fuzz.bases import base_case, bases
from dev.fuzz.case import CLASSES, Case
from dev.fuzz.mutations import MUTATIONS, Doc, Spec


def _apply(spec: Spec, rng: random.Random, case: Case) -> bool:
    """Applies `spec` to `case`; when it does not fit, the case is left as it was."""
    before = copy.deepcopy(case.document), case.stack, len(case.text_edits)
    m = spec.fn(rng, Doc(case))
    if m is None:
        case.document, case.stack = before[0], before[1]
        del case.text_edits[before[2] :]
        return False
    case.mutations.append(m)
    return True


def generate(
    rng: random.Random,
    index: int = 0,
    cls: str | None = None,
    *,
    engine_only: bool = False,
    base_names: Sequence[str] | None = None,
) -> Case:
    """One case: a base stack plus 1-3 mutations of `cls` (and sometimes one of another class).
    `engine_only`: only mutations that have an engine form (for run_program)."""
    cls = cls or rng.choice(CLASSES)
    names = list(base_names or bases())
    specs = [s for s in MUTATIONS if s.engine or not engine_only]
    own = [s for s in specs if s.cls == cls]
    others = [s for s in specs if s.cls != cls and not s.text]
    # Every base in a random order, every mutation of the class in a random order: the first
    # base that takes one gets up to `wanted` of them.
    for base in rng.sample(names, len(names)):
        case = base_case(base, random.Random(rng.random()), index, cls)
        wanted = rng.choice((1, 1, 2, 3))
        deferred: list[Spec] = []
        applied = 0
        for spec in rng.sample(own, len(own)):
            if applied + len(deferred) >= wanted:
                break
            if spec.text:  # edits the text or replaces the document: after the tree mutations
                deferred.append(spec)
            elif _apply(spec, rng, case):
                applied += 1
        # Sometimes one mutation of another class too, never one that replaces the document.
        if rng.random() < 0.25:
            _apply(rng.choice(others), rng, case)
        for spec in deferred:
            _apply(spec, rng, case)
        if any(m.cls == cls for m in case.mutations):
            return case
    raise RuntimeError(f"no base takes a mutation of class {cls}")


def case_for(seed: int, index: int) -> Case:
    """Case `index` of a run: its own random stream, so any case can be regenerated alone."""
    rng = random.Random(f"{seed}:{index}")
    return generate(rng, index, CLASSES[index % len(CLASSES)])
