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
import http.client
import json
import secrets
import socket
import ssl
import subprocess
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any, TypeVar
from urllib.parse import urlsplit

EXIT_OK, EXIT_FAILED, EXIT_USAGE = 0, 1, 2
DEFAULT_WAIT_SECONDS = 1800  # wakeTimeoutSeconds' default: the longest a sleeping model is held
DEFAULT_TIMEOUT_SECONDS = 60
MODELS_PATH = "/v1/models"
COMPLETIONS_PATH = "/v1/completions"
# vLLM answers these without its own key (docs/security.md): only the gate keeps them closed.
OPEN_IN_VLLM = ("/metrics", "/invocations", "/health")
REFUSED = (401, 403)
# What a service says while it is not ready yet: the load balancer or gate before the model.
WAKING = (502, 503, 504)
RETRIED_ERRORS = (ConnectionError, TimeoutError, http.client.RemoteDisconnected)
FIRST_RETRY_SECONDS, LONGEST_RETRY_SECONDS = 0.5, 30.0
# A request answered later than this was held (a sleeping model waking up), not merely slow.
HELD_SECONDS = 3.0
PROMPT = "GPUs are"
MAX_TOKENS = 8


T = TypeVar("T")


class UsageError(Exception):
    """The command line or the stack's outputs cannot be checked (exit 2)."""


# --- what to check: the stack's outputs --------------------------------------------------------


@dataclass(frozen=True)
class Target:
    """One endpoint and what it should answer."""

    url: str
    workload: str | None
    key: str | None = field(repr=False)
    ca_pem: str | None
    models: tuple[str, ...]
    """The names /v1/models must list, the model first; empty: whatever it serves."""


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
) -> Target:
    """The endpoint to check: `url` and `apiKey`, or the workload's `endpoints`/`apiKeys` entry."""
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
    if key is not None and not isinstance(key, str):
        raise UsageError("the API key output is not a string")
    ca = outputs.get("caCertificate")
    if ca is not None and not isinstance(ca, str):
        raise UsageError("the caCertificate output is not a PEM string")
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


# --- talking to the endpoint -------------------------------------------------------------------


@dataclass
class Answer:
    status: int
    body: bytes
    first_token_seconds: float | None = None
    tokens: int = 0


@dataclass
class Waited:
    """The cold start the checks went through: time spent on retried or held requests."""

    seconds: float = 0.0
    retries: int = 0
    reasons: list[str] = field(default_factory=list)


class Endpoint:
    """HTTP(S) to one URL: verified against the given CA (or the system's), with retries until
    the deadline while the service wakes up."""

    def __init__(
        self,
        url: str,
        ca_pem: str | None,
        timeout: float,
        deadline: float,
        progress: Callable[[str], None],
    ) -> None:
        parts = urlsplit(url)
        self.tls = parts.scheme == "https"
        self.host = parts.hostname or ""
        self.port = parts.port or (443 if self.tls else 80)
        self.base = parts.path.rstrip("/")
        self.timeout = timeout
        self.deadline = deadline
        self.progress = progress
        self.waited = Waited()
        self.context: ssl.SSLContext | None = None
        if self.tls:
            self.context = (
                ssl.create_default_context(cadata=ca_pem)
                if ca_pem
                else ssl.create_default_context()
            )

    def handshake(self) -> ssl.SSLSocket:
        """A verified TLS connection, nothing sent on it: raises ssl errors as they come."""
        context = self.context
        assert context is not None

        def attempt() -> ssl.SSLSocket:
            raw = socket.create_connection((self.host, self.port), timeout=self.timeout)
            try:
                return context.wrap_socket(raw, server_hostname=self.host)
            except BaseException:
                raw.close()
                raise

        return self._until_deadline(f"TLS to {self.host}:{self.port}", attempt, lambda _: None)

    def request(
        self,
        method: str,
        path: str,
        key: str | None = None,
        payload: dict[str, Any] | None = None,
        stream: bool = False,
    ) -> Answer:
        def attempt() -> Answer:
            return self._once(method, path, key, payload, stream)

        def waking(answer: Answer) -> str | None:
            return f"{answer.status} from {path}" if answer.status in WAKING else None

        return self._until_deadline(f"{method} {path}", attempt, waking)

    def _once(
        self,
        method: str,
        path: str,
        key: str | None,
        payload: dict[str, Any] | None,
        stream: bool,
    ) -> Answer:
        connection: http.client.HTTPConnection = (
            http.client.HTTPSConnection(
                self.host, self.port, context=self.context, timeout=self.timeout
            )
            if self.tls
            else http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)
        )
        headers = {"Accept": "application/json", "Connection": "close"}
        if key is not None:
            headers["Authorization"] = f"Bearer {key}"
        body = None
        if payload is not None:
            body = json.dumps(payload).encode()
            headers["Content-Type"] = "application/json"
        try:
            started = time.monotonic()
            connection.request(method, self.base + path, body=body, headers=headers)
            response = connection.getresponse()
            if stream and response.status == 200:
                return _read_stream(response, started)
            return Answer(response.status, response.read())
        finally:
            connection.close()

    def _until_deadline(
        self, what: str, attempt: Callable[[], T], waking: Callable[[T], str | None]
    ) -> T:
        started = time.monotonic()
        delay = FIRST_RETRY_SECONDS
        retries = 0
        while True:
            try:
                result = attempt()
                reason = waking(result)
            except RETRIED_ERRORS as error:
                if time.monotonic() + delay > self.deadline:
                    raise
                reason = _error_text(error)
            else:
                if reason is None or time.monotonic() + delay > self.deadline:
                    elapsed = time.monotonic() - started
                    if retries or elapsed > HELD_SECONDS:
                        self.waited.seconds += elapsed
                        self.waited.retries += retries
                    return result
            self.waited.reasons.append(reason)
            left = self.deadline - time.monotonic()
            self.progress(
                f"waiting for the service: {what}: {reason}; retrying in {delay:.1f} s "
                f"({left:.0f} s left of --wait)"
            )
            time.sleep(delay)
            retries += 1
            delay = min(delay * 2, LONGEST_RETRY_SECONDS)


def _read_stream(response: http.client.HTTPResponse, started: float) -> Answer:
    """An OpenAI server-sent event stream: counts the tokens, times the first."""
    first: float | None = None
    tokens = 0
    raw = b""
    while line := response.readline():
        raw += line
        text = line.decode("utf-8", "replace").strip()
        if not text.startswith("data:"):
            continue
        data = text[len("data:") :].strip()
        if data == "[DONE]":
            break
        try:
            choices = json.loads(data).get("choices") or []
        except (json.JSONDecodeError, AttributeError):
            continue
        if choices and (choices[0].get("text") or ""):
            tokens += 1
            if first is None:
                first = time.monotonic() - started
    return Answer(200, raw, first, tokens)


def _error_text(error: BaseException) -> str:
    if isinstance(error, TimeoutError):
        return "no answer within --timeout"
    if isinstance(error, http.client.RemoteDisconnected):
        return "the connection closed without an answer"
    return getattr(error, "strerror", None) or str(error) or type(error).__name__


# --- the checks --------------------------------------------------------------------------------


@dataclass(frozen=True)
class Result:
    name: str
    ok: bool
    detail: str
    fix: str = ""
    final: bool = False
    """A failure after which the later checks cannot run (or must not: the key stays home)."""

    def line(self) -> str:
        text = f"{'ok  ' if self.ok else 'FAIL'}  {self.name}: {self.detail}"
        return text + (f". Fix: {self.fix}" if self.fix else "")


def check_tls(endpoint: Endpoint, target: Target) -> Result:
    name = "TLS"
    if not endpoint.tls:
        if target.ca_pem:
            return Result(
                name,
                False,
                f"no TLS: {target.url} is plain http although the stack exports a CA "
                "(caCertificate); the key would cross the network in clear text",
                "serve the endpoint over HTTPS (remove expose.tls: false) and `pulumi up`",
                final=True,
            )
        return Result(name, True, f"none: {target.url} is plain http (expose.tls: false)")
    trust = "the stack's CA (caCertificate)" if target.ca_pem else "the system's trust store"
    try:
        endpoint.handshake().close()
    except ssl.SSLCertVerificationError as error:
        if error.verify_code == 62:  # X509_V_ERR_HOSTNAME_MISMATCH
            return Result(
                name,
                False,
                f"wrong name: the certificate is not valid for {endpoint.host}",
                "list the address clients use in expose.hosts and `pulumi up`",
                final=True,
            )
        return Result(
            name,
            False,
            f"wrong CA: the certificate of {target.url} does not verify against {trust} "
            f"({error.verify_message})",
            "trust this stack's CA (pulumi stack output caCertificate --stack <stack>); if the "
            "stack was re-created, `pulumi up` again so the gate serves the new certificate",
            final=True,
        )
    except ssl.SSLError as error:
        return Result(
            name,
            False,
            f"no TLS: {endpoint.host}:{endpoint.port} did not complete a TLS handshake "
            f"({error.reason or error})",
            "something other than the gate answers on this address and port (plain HTTP?): "
            "check the Service (kubectl get svc) and that the URL is the stack's url output",
            final=True,
        )
    except OSError as error:
        return Result(
            name,
            False,
            f"cannot connect to {endpoint.host}:{endpoint.port}: {_error_text(error)}",
            "a ClusterIP endpoint answers only inside the cluster; otherwise check the load "
            "balancer (kubectl get svc) and its sourceRanges",
            final=True,
        )
    return Result(name, True, f"{target.url} verifies against {trust}")


def check_key(endpoint: Endpoint, target: Target) -> Result:
    name = "key required"
    if target.key is None:
        return Result(
            name,
            True,
            "skipped: the stack exports no API key for this endpoint (apiKey: false, or a key "
            "of your own)",
        )
    seen: list[str] = []
    for path, allowed in ((MODELS_PATH, REFUSED), *((p, (*REFUSED, 404)) for p in OPEN_IN_VLLM)):
        status = endpoint.request("GET", path).status
        if status not in allowed:
            return _not_refused(name, f"{path} without a key", path, status)
        seen.append(f"{status} on {path}")
    wrong = "smoke-test-wrong-key-" + secrets.token_hex(16)
    status = endpoint.request("GET", MODELS_PATH, key=wrong).status
    if status not in REFUSED:
        return _not_refused(name, f"{MODELS_PATH} with a wrong key", MODELS_PATH, status)
    return Result(name, True, f"no key: {', '.join(seen)}; a wrong key: {status}")


def _not_refused(name: str, what: str, path: str, status: int) -> Result:
    if status == 200:
        return Result(
            name,
            False,
            f"key not enforced on {path}: {what} answered 200",
            "the endpoint must be the gate (an exposed workload is served through it): check "
            "that expose.paths does not open it and that the Service selects the gate's pods",
        )
    if status in WAKING:
        return Result(
            name,
            False,
            f"{what} still answered {status} when --wait ran out: the service is not ready",
            "check the gate's and the model's pods (kubectl get pods), or wait longer (--wait)",
        )
    return Result(
        name,
        False,
        f"{what} answered {status}, not 401",
        "the gate answers 401 without the right key and 404 outside its allowlist; check what "
        "answers on this address (kubectl get svc, the gate's logs)",
    )


def check_models(endpoint: Endpoint, target: Target) -> tuple[Result, str | None]:
    """The check, and the model name the completion asks for."""
    name = "models"
    answer = endpoint.request("GET", MODELS_PATH, key=target.key)
    if answer.status != 200:
        return _status_failure(name, MODELS_PATH, answer), None
    try:
        served = [str(m["id"]) for m in json.loads(answer.body)["data"]]
    except (ValueError, KeyError, TypeError):
        return Result(
            name,
            False,
            f"{MODELS_PATH} is not an OpenAI model list: {_excerpt(answer.body)}",
            "is the workload a vLLM (OpenAI-compatible) server?",
        ), None
    missing = [m for m in target.models if m not in served]
    if missing:
        return Result(
            name,
            False,
            f"model missing from {MODELS_PATH}: {', '.join(missing)} (it lists "
            f"{', '.join(served) or 'nothing'})",
            "the server serves another name: check the workload's model argument, "
            "--served-model-name and adapters, or pass --model/--adapter",
        ), None
    if not served:
        return Result(name, False, f"{MODELS_PATH} lists no model", "check the server's logs"), None
    listed = ", ".join(target.models) if target.models else f"{', '.join(served)} (not compared)"
    return Result(name, True, f"{MODELS_PATH} lists {listed}"), (target.models or served)[0]


def check_completion(endpoint: Endpoint, target: Target, model: str) -> Result:
    name = "completion"
    payload = {"model": model, "prompt": PROMPT, "max_tokens": MAX_TOKENS, "stream": True}
    answer = endpoint.request(
        "POST", COMPLETIONS_PATH, key=target.key, payload=payload, stream=True
    )
    if answer.status != 200:
        return _status_failure(name, COMPLETIONS_PATH, answer)
    if answer.first_token_seconds is None:
        return Result(
            name,
            False,
            f"{COMPLETIONS_PATH} answered 200 but streamed no token: {_excerpt(answer.body)}",
            "check the server's logs (kubectl logs) for the request",
        )
    return Result(
        name,
        True,
        f"{answer.tokens} tokens streamed from {model}; first token after "
        f"{answer.first_token_seconds:.2f} s; cold start: {_cold_start(endpoint.waited)}",
    )


def _cold_start(waited: Waited) -> str:
    if not waited.seconds:
        return "none (the model was awake)"
    retried = f", {waited.retries} retries: {waited.reasons[-1]}" if waited.retries else ""
    return f"waited {waited.seconds:.1f} s{retried}"


def _status_failure(name: str, path: str, answer: Answer) -> Result:
    fixes = {
        401: "the key was refused: use this stack's apiKey (pulumi stack output apiKey "
        "--show-secrets), or apiKeys.<workload> with --workload",
        404: "the gate does not forward this path: check expose.paths",
        **dict.fromkeys(
            WAKING,
            "the model did not become ready within --wait: check its pods (kubectl get pods, "
            "kubectl describe pod: GPU quota, stockouts, image pull) and retry",
        ),
    }
    return Result(
        name,
        False,
        f"{path} answered {answer.status}: {_excerpt(answer.body)}",
        fixes.get(answer.status, "check the server's logs (kubectl logs)"),
    )


def _excerpt(body: bytes) -> str:
    try:
        message = json.loads(body)["error"]["message"]
        text = str(message)
    except (ValueError, KeyError, TypeError):
        text = body.decode("utf-8", "replace")
    text = " ".join(text.split())
    return (text[:200] + "...") if len(text) > 200 else (text or "(empty body)")


# --- running them ------------------------------------------------------------------------------


def run(target: Target, wait: float, timeout: float, out: IO[str], err: IO[str]) -> int:
    """Every check in order, one line each on `out`; progress while waiting on `err`."""
    hidden = [target.key] if target.key else []

    def say(stream: IO[str], text: str) -> None:
        for secret in hidden:
            text = text.replace(secret, "<apiKey>")
        print(text, file=stream, flush=True)

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
                f"no answer from {target.url}: {_error_text(error)}",
                "the service did not answer within --wait: check the load balancer and the "
                "gate's pods (kubectl get svc,pods)",
            )
        )
    failed = sum(not r.ok for r in results)
    say(out, f"{len(results) - failed} ok, {failed} failed")
    return EXIT_FAILED if failed else EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
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
    parser.add_argument("--model", help="the model name /v1/models must list (default: output)")
    parser.add_argument(
        "--adapter", action="append", default=[], help="an adapter it must list too (repeatable)"
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
    args = parser.parse_args(argv)
    if args.stack is None and args.outputs is None:
        parser.error("name a stack, or pass --outputs FILE")
    if args.stack is not None and not all(c.isalnum() or c in "_.-/" for c in args.stack):
        parser.error(f"stack name {args.stack!r} has characters a Pulumi stack cannot have")
    if args.wait < 0 or args.timeout <= 0:
        parser.error("--wait must be 0 or more and --timeout more than 0")
    try:
        chosen = target_of(
            read_outputs(args.stack, args.outputs), args.workload, args.model, args.adapter
        )
    except UsageError as error:
        print(f"gke-gpu smoke: {error}", file=sys.stderr)
        return EXIT_USAGE
    return run(chosen, args.wait, args.timeout, sys.stdout, sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
