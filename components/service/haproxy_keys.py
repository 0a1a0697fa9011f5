"""The gate's key check with a key per consumer (expose.keys, issue 35): any consumer's key lets a
request through, the log names the consumer, and the server gets the workload's own key.

Each consumer's key reaches HAProxy as an environment variable from a Secret of its own
(components/service/gate.py, never the ConfigMap), read at run time with env(), so haproxy.cfg
holds names only.

What HAProxy 2.6 offers for the comparison, from Debian's 2.6.12 manual
(/usr/share/doc/haproxy/configuration.txt.gz, "secure_memcmp(<var>)", section 7.3.1): "Compares
the contents of <var> with the input value ... If both binary strings have the same length then
the comparison will be performed in constant time" (OpenSSL builds only). So each comparison is
constant-time for a header of the key's length (every key is "Bearer " and 48 characters,
components/service/apikey.py); a header of another length is refused at once, which tells a
client only that length, which the docs say. The consumers are compared one after another, every
rule for every request, so the time does not depend on which consumer matched.

The consumer's name is logged through `http-request capture` ("converts it to a string of at most
<len> characters. The resulting string is stored into the next request "capture" slot ... It will
then automatically appear in the logs", same manual, "http-request capture"): the `{web-app}`
field of `option httplog`'s line. The key itself is never captured nor logged.
"""

from __future__ import annotations

from collections.abc import Sequence

from . import haproxy_limits as limits
from .haproxy_syntax import error_body, quoted

# A consumer name is at most 32 characters (components/config/formats.py CONSUMER).
CAPTURE_LENGTH = 32
# The variable the matched consumer's name is kept in.
CONSUMER_VAR = "txn.consumer"


def key_env(consumer: str) -> str:
    """The environment variable holding `consumer`'s key: one-to-one, since a consumer name holds
    lowercase letters, digits and '-' only."""
    return "GATE_KEY_" + _ident(consumer).upper()


def _ident(consumer: str) -> str:
    return consumer.replace("-", "_")


UNAUTHORIZED = error_body(
    "Missing or wrong API key. Send your consumer key as the header 'Authorization: Bearer <key>' "
    "(the stack output apiKeys.<workload>.<consumer>: pulumi stack output apiKeys "
    "--show-secrets).",
    "invalid_request_error",
    401,
)


def global_lines(consumers: Sequence[str]) -> list[str]:
    """Each consumer's key as the header carries it, read at run time from its variable."""
    return [
        f'    setenv GATE_BEARER_{_ident(c).upper()} "Bearer ${{{key_env(c)}}}"' for c in consumers
    ]


def key_check(consumers: Sequence[str], server_bearer: str) -> list[str]:
    """Which consumer's key the request carries (each compared in constant time with the whole
    header), 401 for none; the consumer's name captured for the log line, and the Authorization
    header replaced with the workload's own key (`server_bearer`, a variable of the global
    section) before it goes on, so the server checks its own key and never sees a consumer's."""
    lines: list[str] = []
    for c in consumers:
        var = f"txn.bearer_{_ident(c)}"
        lines += [
            f"    http-request set-var({var}) env(GATE_BEARER_{_ident(c).upper()})",
            f"    http-request set-var({CONSUMER_VAR}) str({c}) "
            f"if {{ req.fhdr(authorization),secure_memcmp({var}) }}",
        ]
    return [
        *lines,
        f"    acl key_ok var({CONSUMER_VAR}) -m found",
        *limits.count_failed_key("!key_ok"),
        "    http-request return status 401 content-type application/json "
        f'string {quoted(UNAUTHORIZED)} hdr WWW-Authenticate "Bearer" if !key_ok',
        f"    http-request capture var({CONSUMER_VAR}) len {CAPTURE_LENGTH}",
        f'    http-request set-header Authorization "%[env({server_bearer})]"',
    ]
