"""HTTP(S) to the endpoint: verified TLS, retried with backoff while a sleeping model wakes."""

from __future__ import annotations

import http.client
import json
import socket
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, TypeVar
from urllib.parse import urlsplit

from tools.smoke.settings import (
    FIRST_RETRY_SECONDS,
    HELD_SECONDS,
    LONGEST_RETRY_SECONDS,
    RETRIED_ERRORS,
    WAKING,
    hide,
)

T = TypeVar("T")


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
            # Hidden before anything reads it: an error may echo the header it was sent.
            body = hide(response.read().decode("utf-8", "replace"), key).encode()
            return Answer(response.status, body)
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
                reason = error_text(error)
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


def error_text(error: BaseException) -> str:
    if isinstance(error, TimeoutError):
        return "no answer within --timeout"
    if isinstance(error, http.client.RemoteDisconnected):
        return "the connection closed without an answer"
    return getattr(error, "strerror", None) or str(error) or type(error).__name__
