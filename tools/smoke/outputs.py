"""The smoke test's target: the stack's outputs (the Pulumi CLI, a file or stdin), checked."""

from __future__ import annotations

import json
import ssl
import subprocess
import sys
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any


class UsageError(Exception):
    """The command line or the stack's outputs cannot be checked (exit 2)."""


@dataclass(frozen=True)
class Target:
    """One endpoint and what it should answer."""

    url: str
    workload: str | None
    key: str | None = field(repr=False)
    ca_pem: str | None
    models: tuple[str, ...]
    """The names /v1/models must list, the model first; empty: whatever it serves."""
    allow_plain_http: bool = False
    """An endpoint with expose.tls: false is checked (its key crosses the network in clear)."""


def read_outputs(stack: str | None, outputs_file: str | None) -> dict[str, Any]:
    """The stack's outputs, secrets in plain text: from a file, stdin ('-') or the Pulumi CLI."""
    if outputs_file is not None:
        source = "stdin" if outputs_file == "-" else outputs_file
        try:
            text = sys.stdin.read() if outputs_file == "-" else Path(outputs_file).read_text()
        except OSError as error:
            raise UsageError(f"cannot read --outputs {source}: {error.strerror}") from None
    else:
        assert stack is not None
        command = ["pulumi", "stack", "output", "--json", "--show-secrets", "--stack", stack]
        source = f"`{' '.join(command)}`"
        try:
            done = subprocess.run(command, capture_output=True, text=True, check=False)
        except FileNotFoundError:
            raise UsageError(
                "the Pulumi CLI is not on PATH: install it, or pass the outputs as JSON with "
                "--outputs FILE (`pulumi stack output --json --show-secrets > FILE`)"
            ) from None
        if done.returncode != 0:
            raise UsageError(f"{source} failed: {done.stderr.strip()[-500:]}")
        text = done.stdout
    try:
        outputs = json.loads(text)
    except json.JSONDecodeError as error:
        # The position only: the text holds secrets.
        raise UsageError(f"{source} is not JSON (line {error.lineno}): {error.msg}") from None
    if not isinstance(outputs, dict):
        raise UsageError(f"{source} is not a JSON object of stack outputs")
    return outputs


def target_of(
    outputs: dict[str, Any],
    workload: str | None = None,
    model: str | None = None,
    adapters: Sequence[str] = (),
    consumer: str | None = None,
) -> Target:
    """The endpoint to check: `url` and `apiKey`, or the workload's `endpoints`/`apiKeys` entry;
    for a workload with `expose.keys`, one consumer's key (`consumer`, else the first by name)."""
    endpoints = _mapping(outputs, "endpoints")
    if workload is not None:
        if workload not in endpoints:
            raise UsageError(
                f"--workload {workload}: no such entry in the endpoints output "
                f"(exposed workloads: {', '.join(sorted(endpoints)) or 'none'})"
            )
        url = endpoints[workload]
        key = _mapping(outputs, "apiKeys").get(workload)
    else:
        if "url" not in outputs:
            raise UsageError(
                "the stack has no url output (no LoadBalancer or Internal endpoint): pass "
                f"--workload NAME for one of endpoints ({', '.join(sorted(endpoints)) or 'none'})"
            )
        url = outputs["url"]
        key = outputs.get("apiKey")
        workload = next((name for name, u in endpoints.items() if u == url), None)
    if not isinstance(url, str) or not url.startswith(("http://", "https://")):
        raise UsageError(
            f"the endpoint of {workload or 'url'} is not an http(s) URL ({url!r}): a NodePort "
            "endpoint says how to find its port; check it by hand"
        )
    entry = _mapping(outputs, "apiKeys").get(workload or "")
    if isinstance(entry, dict):
        key = _consumer_key(workload or "", entry, consumer)
    elif consumer is not None:
        raise UsageError(f"--consumer {consumer}: {workload or 'url'} has no keys per consumer")
    if key is not None and not isinstance(key, str):
        raise UsageError("the API key output is not a string")
    ca = outputs.get("caCertificate")
    if ca is not None and not isinstance(ca, str):
        raise UsageError("the caCertificate output is not a PEM string")
    if ca is not None:
        try:
            ssl.create_default_context(cadata=ca)
        except (ssl.SSLError, ValueError):
            raise UsageError(
                "the caCertificate output is not a PEM certificate: pass the outputs of "
                "`pulumi stack output --json --show-secrets` unchanged"
            ) from None
    if model is not None:
        expected = (model, *adapters)
    else:
        served = _mapping(outputs, "models").get(workload or "", [])
        expected = (*served, *(a for a in adapters if a not in served))
    return Target(url.rstrip("/"), workload, key, ca, tuple(expected))


def _mapping(outputs: dict[str, Any], name: str) -> dict[str, Any]:
    value = outputs.get(name) or {}
    if not isinstance(value, dict):
        raise UsageError(f"the {name} output is not a mapping of workload names")
    return value


def _consumer_key(workload: str, keys: dict[str, Any], consumer: str | None) -> Any:
    """expose.keys: apiKeys.<workload>.<consumer> (the gate refuses the workload's own key)."""
    if consumer is None:
        return keys[min(keys)] if keys else None
    if consumer not in keys:
        raise UsageError(
            f"--consumer {consumer}: not among {workload}'s consumers ({', '.join(sorted(keys))})"
        )
    return keys[consumer]
