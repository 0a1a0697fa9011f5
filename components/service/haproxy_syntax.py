"""How values are written into haproxy.cfg: every value the program renders from config is quoted
here, so none can end a word, start a comment or expand an environment variable.

HAProxy's configuration parser (configuration manual 2.6, section 2.2 "Quoting and escaping")
splits a line into words at spaces, reads "#" as a comment, expands "${NAME}" only inside double
quotes and takes a backslash as an escape; inside double quotes `\\`, `\\"` and `\\$` stand for the
characters themselves. A value written unquoted, or with a "$" left as it is, could pull the API
key into a health check (`/health?x="${GATE_API_KEY}"`); the config layer also refuses such values
(components/config/formats.py PROBE_PATH, GATE_PATH), and this module is the second guard.
"""

from __future__ import annotations

import json


def quoted(text: str) -> str:
    """A double-quoted HAProxy argument: backslash and double quote escaped, no "$" expansion.
    A control character (a line break would end the directive) is refused, not written."""
    if any(ord(c) < 0x20 or ord(c) == 0x7F for c in text):
        raise ValueError(f"a control character cannot be written into haproxy.cfg: {text!r}")
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"').replace("$", "\\$") + '"'


def error_body(message: str, kind: str, code: int) -> str:
    """The OpenAI API's error shape, so OpenAI clients show the message."""
    return json.dumps({"error": {"message": message, "type": kind, "code": code}})
