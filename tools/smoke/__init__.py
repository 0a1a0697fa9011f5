"""The smoke test: `python -m tools.smoke <stack>` checks a deployed service the way a user would.

After `pulumi up`, it reads the stack's outputs (`pulumi stack output --json --show-secrets`, or
`--outputs FILE`) and checks, in order: (1) TLS: the URL is HTTPS and its certificate verifies
against the stack's CA (`caCertificate`; the system's trust store when the stack exports none);
(2) the API key is required: no key is refused on the model path and on paths vLLM itself leaves
open, and a wrong key is refused; (3) `/v1/models` with the key lists the model and its adapters
(the `models` output, or --model/--adapter); (4) one short streamed completion succeeds. A model
that sleeps holds the first request (docs/scaling.md); a 502/503/504, a timeout or a refused
connection is retried with backoff until --wait runs out. The key is never sent before the
certificate verifies, and never printed. Exit 0: every check passed; 1: a check failed; 2: bad
usage or the outputs lack what the checks need.
"""

from __future__ import annotations

import argparse
import dataclasses
import http.client
import os
import sys
import time
from collections.abc import Sequence
from typing import IO

from tools.smoke.checks import Result, check_completion, check_key, check_models, check_tls
from tools.smoke.client import Endpoint, error_text
from tools.smoke.outputs import Target, UsageError, read_outputs, target_of
from tools.smoke.settings import (
    DEFAULT_TIMEOUT_SECONDS,
    DEFAULT_WAIT_SECONDS,
    EXIT_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    hide,
)


def run(target: Target, wait: float, timeout: float, out: IO[str], err: IO[str]) -> int:
    """Every check in order, one line each on `out`; progress while waiting on `err`."""

    def say(stream: IO[str], text: str) -> None:
        print(hide(text, target.key), file=stream, flush=True)

    deadline = time.monotonic() + wait
    endpoint = Endpoint(target.url, target.ca_pem, timeout, deadline, lambda t: say(err, t))
    workload = f" (workload {target.workload})" if target.workload else ""
    say(out, f"smoke test of {target.url}{workload}")
    results: list[Result] = []

    def report(result: Result) -> bool:
        """Prints the result; False when the checks after it cannot run."""
        say(out, result.line())
        results.append(result)
        return result.ok or not result.final

    try:
        if report(check_tls(endpoint, target)) and report(check_key(endpoint, target)):
            models, model = check_models(endpoint, target)
            report(models)
            if model is not None:
                report(check_completion(endpoint, target, model))
            else:
                report(Result("completion", False, "not tried: no model to ask for (above)"))
    except (OSError, http.client.HTTPException) as error:
        report(
            Result(
                "answer",
                False,
                f"no answer from {target.url}: {error_text(error)}",
                "the service did not answer within --wait: check the load balancer and the "
                "gate's pods (kubectl get svc,pods)",
            )
        )
    failed = sum(not r.ok for r in results)
    say(out, f"{len(results) - failed} ok, {failed} failed")
    return EXIT_FAILED if failed else EXIT_OK


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="python -m tools.smoke", description=__doc__.splitlines()[0] if __doc__ else None
    )
    parser.add_argument("stack", nargs="?", help="the stack to read outputs from (pulumi CLI)")
    parser.add_argument(
        "--outputs",
        metavar="FILE",
        help="the outputs as JSON (`pulumi stack output --json --show-secrets`), '-' for stdin",
    )
    parser.add_argument("--workload", help="check this workload's endpoints/apiKeys entry")
    parser.add_argument(
        "--consumer", help="expose.keys: check with this consumer's key (default: the first)"
    )
    parser.add_argument("--model", help="the model name /v1/models must list (default: output)")
    parser.add_argument(
        "--adapter", action="append", default=[], help="an adapter it must list too (repeatable)"
    )
    parser.add_argument(
        "--key-env",
        metavar="VAR",
        help="read the key from this environment variable (a workload that sets its own key)",
    )
    parser.add_argument(
        "--allow-plain-http",
        action="store_true",
        help="check an http:// endpoint (expose.tls: false); the key is sent in clear",
    )
    parser.add_argument(
        "--wait",
        type=float,
        default=DEFAULT_WAIT_SECONDS,
        help=f"seconds to wait through a cold start (default {DEFAULT_WAIT_SECONDS})",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=DEFAULT_TIMEOUT_SECONDS,
        help=f"seconds per request (default {DEFAULT_TIMEOUT_SECONDS})",
    )
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = _parser()
    args = parser.parse_args(argv)
    if args.stack is None and args.outputs is None:
        parser.error("name a stack, or pass --outputs FILE")
    if args.stack is not None and not all(c.isalnum() or c in "_.-/" for c in args.stack):
        parser.error(f"stack name {args.stack!r} has characters a Pulumi stack cannot have")
    if args.wait < 0 or args.timeout <= 0:
        parser.error("--wait must be 0 or more and --timeout more than 0")
    try:
        chosen = target_of(
            read_outputs(args.stack, args.outputs),
            args.workload,
            args.model,
            args.adapter,
            consumer=args.consumer,
        )
        if args.key_env is not None:
            key = os.environ.get(args.key_env)
            if not key:
                raise UsageError(f"--key-env {args.key_env}: that variable is not set or empty")
            chosen = dataclasses.replace(chosen, key=key)
        chosen = dataclasses.replace(chosen, allow_plain_http=args.allow_plain_http)
    except UsageError as error:
        print(f"gke-gpu smoke: {error}", file=sys.stderr)
        return EXIT_USAGE
    return run(chosen, args.wait, args.timeout, sys.stdout, sys.stderr)
