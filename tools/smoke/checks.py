"""The checks, in the order a user would try them: TLS, the key, the models, a completion."""

from __future__ import annotations

import json
import secrets
import ssl
from dataclasses import dataclass

from tools.smoke.client import Answer, Endpoint, Waited, error_text
from tools.smoke.outputs import Target
from tools.smoke.settings import (
    COMPLETIONS_PATH,
    MAX_TOKENS,
    MODELS_PATH,
    OPEN_IN_VLLM,
    PROMPT,
    REFUSED,
    WAKING,
)


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


def _plain_http(target: Target) -> Result:
    """An endpoint without TLS: a failure unless the user asked to check a plain one."""
    name = "TLS"
    if target.ca_pem:
        return Result(
            name,
            False,
            f"no TLS: {target.url} is plain http although the stack exports a CA "
            "(caCertificate); the key would cross the network in clear text",
            "serve the endpoint over HTTPS (remove expose.tls: false) and `pulumi up`",
            final=True,
        )
    if not target.allow_plain_http:
        return Result(
            name,
            False,
            f"no TLS: {target.url} is plain http; the checks would send the key in clear text",
            "serve it over HTTPS (remove expose.tls: false), or pass --allow-plain-http to "
            "check an endpoint you made plain on purpose",
            final=True,
        )
    return Result(
        name, True, f"none: {target.url} is plain http (--allow-plain-http: key in clear)"
    )


def check_tls(endpoint: Endpoint, target: Target) -> Result:
    name = "TLS"
    if not endpoint.tls:
        return _plain_http(target)
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
            f"cannot connect to {endpoint.host}:{endpoint.port}: {error_text(error)}",
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
