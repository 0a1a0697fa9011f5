"""Issue 32 item 2: the resolved workload model restates no schema field (dev/restated.py)."""

from dev import restated


def test_no_resolved_workload_class_restates_a_schema_field() -> None:
    found = restated.restated()
    copies = {
        name: sorted(fields)
        for name, fields in found.items()
        if name not in restated.PLATFORM and fields
    }
    assert not copies, (
        f"{copies} copy a schema field the loader reads unchanged: every key is then described "
        "twice and can drift; read it from the class's `spec` and keep only what is decided"
    )


def test_the_restatement_check_sees_a_copy_where_there_is_one() -> None:
    """The platform's resolved classes are also its components' Args and keep their copies, so
    the rule must find them: a rule that found nothing anywhere could not fail."""
    found = restated.restated()
    assert {"gpu_count", "max_nodes"} <= found["NodePoolConfig"], found["NodePoolConfig"]
    assert "WorkloadConfig" in found and "Expose" in found, "the check must look at the workload"
