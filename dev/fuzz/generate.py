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
    lead: Spec | None = None,
) -> Case:
    """One case: a base stack plus 1-3 mutations of `cls` (and sometimes one of another class).
    `engine_only`: only mutations that have an engine form (for run_program). `lead`: a mutation
    of the class tried first on every base, so the case holds it if any base takes it."""
    cls = lead.cls if lead is not None else cls or rng.choice(CLASSES)
    names = list(base_names or bases())
    specs = [s for s in MUTATIONS if s.engine or not engine_only]
    own = [s for s in specs if s.cls == cls]
    others = [s for s in specs if s.cls != cls and not s.text]
    # Every base in a random order, every mutation of the class in a random order (the lead
    # first): the first base that takes one (the lead, when there is one) gets up to `wanted`.
    order = rng.sample(names, len(names))
    for n, base in enumerate(order):
        case = base_case(base, random.Random(rng.random()), index, cls)
        wanted = rng.choice((1, 1, 2, 3))
        deferred: list[Spec] = []
        applied = 0
        tried = rng.sample(own, len(own))
        if lead is not None:
            tried = [lead, *(s for s in tried if s is not lead)]
        for spec in tried:
            if applied + len(deferred) >= wanted:
                break
            if spec.text:  # edits the text or replaces the document: after the tree mutations
                deferred.append(spec)
            elif _apply(spec, rng, case):
                applied += 1
            elif spec is lead and n + 1 < len(order):
                break  # another base may take the lead
        # Sometimes one mutation of another class too, never one that replaces the document.
        if rng.random() < 0.25:
            _apply(rng.choice(others), rng, case)
        for spec in deferred:
            _apply(spec, rng, case)
        if any(m.cls == cls for m in case.mutations):
            return case
    raise RuntimeError(f"no base takes a mutation of class {cls}")


def case_for(seed: int, index: int) -> Case:
    """Case `index` of a run: its own random stream, so any case can be regenerated alone. Every
    other case goes round the classes, the rest round the registered mutations as their lead, so
    a run of N cases applies each mutation in N / (2 * len(MUTATIONS)) cases at least, however
    many mutations its class has."""
    rng = random.Random(f"{seed}:{index}")
    turn = index // 2
    if index % 2 == 0:
        return generate(rng, index, CLASSES[turn % len(CLASSES)])
    return generate(rng, index, lead=MUTATIONS[turn % len(MUTATIONS)])
