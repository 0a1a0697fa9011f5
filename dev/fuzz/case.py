"""A case: a base stack's document, the mutations applied to it, and what they let one expect."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from dev.fuzz.document import NO_ENGINE_FORM, Secure, decrypted, items, scalar_text, walk
from dev.fuzz.emit import emit, key_text
from dev.fuzz.paths import under

CLASSES = ("nested-secret", "crash", "bad-input", "secret-echo", "hide-another", "injection")
KNOWN_KEYS = ("cluster", "nodePools", "workloads", "namespace", "devicePlugin")


@dataclass(frozen=True)
class Mutation:
    """One change to a base stack, a mistake or a valid oddity, and what it lets one expect."""

    cls: str
    name: str
    invalid: bool
    paths: tuple[tuple[str, ...], ...] = ()
    """Each injected mistake, as the key paths any one of which a problem must start with."""
    plain_secrets: tuple[str, ...] = ()
    """Credentials pasted as plain text: never to be echoed."""
    checks: tuple[tuple[str, ...], ...] = ()
    """What a valid plan must show: ("workload-kept", name), ("secret-env", name, env), ..."""
    clobbers: str | None = None
    """A key path this mutation replaced wholesale ("" = the whole document)."""
    text_only: bool = False
    """No engine form: a duplicate key, a non-string key, a YAML-level edit, or a secure value
    whose position only the stack file shows (the engine marks the whole top-level key)."""
    writes: tuple[str, ...] = ()
    """Key paths it set or removed besides its mistakes: an earlier mistake there is gone."""
    unreadable: bool = False
    """The CLI cannot read the file at all (syntax error, tab, duplicate key, a document that is
    not a mapping): nothing else can be reported, and the file's own name (with line and column)
    is where the problem is."""
    structural: bool = False
    """A shape no config can have (a non-string key): only this mistake must be reported."""


@dataclass
class Case:
    """A base stack's document with its mutations; `text` is the stack file to write."""

    index: int
    base: str
    stack: str
    cls: str
    document: Any
    mutations: list[Mutation] = field(default_factory=list)
    text_edits: list[Callable[[str], str]] = field(default_factory=list)

    def _live(self) -> list[tuple[Mutation, list[tuple[str, ...]]]]:
        """Each mutation with its mistakes that no later mutation overwrote."""
        live: list[tuple[Mutation, list[tuple[str, ...]]]] = []
        for m in self.mutations:
            written = [*m.writes, *(alts[0] for alts in m.paths)]
            if m.clobbers is not None:
                written.append(m.clobbers)
            for _, mistakes in live:
                mistakes[:] = [
                    alts for alts in mistakes if not any(under(alts[0], w) for w in written)
                ]
            live.append((m, list(m.paths)))
        return live

    @property
    def invalid(self) -> bool:
        return any(m.invalid and (mistakes or not m.paths) for m, mistakes in self._live())

    @property
    def unreadable(self) -> bool:
        return any(m.unreadable for m in self.mutations)

    @property
    def text(self) -> str:
        text = emit(self.document)
        for edit in self.text_edits:
            text = edit(text)
        return text

    @property
    def classes(self) -> list[str]:
        return sorted({m.cls for m in self.mutations}, key=CLASSES.index)

    def expected_paths(self) -> list[tuple[str, ...]]:
        """The mistakes still in the document that a config error must each name."""
        if self.unreadable:
            return []
        live = self._live()
        if any(m.structural for m, _ in live):
            live = [(m, mistakes) for m, mistakes in live if m.structural]
        return [alts for _, mistakes in live for alts in mistakes]

    def checks(self) -> list[tuple[str, ...]]:
        return [c for m in self.mutations for c in m.checks]

    def top_keys(self) -> set[str]:
        config = self.document.get("config") if isinstance(self.document, dict) else None
        return {str(key_text(k)).strip('"') for k, _ in items(config)}

    def secrets(self, engine: bool) -> set[str]:
        """Strings that must appear in no output: ciphertexts, pasted credentials and, for the
        engine (which decrypts), the plaintexts of secure values."""
        found: set[str] = set()
        for node in walk(self.document):
            if isinstance(node, Secure):
                found.add(node.ciphertext)
                if engine:
                    found.update(node.needles or (node.plaintext,))
        for m in self.mutations:
            found.update(m.plain_secrets)
        return found

    def engine_config(self) -> tuple[dict[str, Any], tuple[str, ...]] | None:
        """The config as the engine hands it to the program: fully-qualified keys, structured
        values decrypted, a top-level key secret when any value inside it is (pulumi/pulumi
        sdk/go/common/resource/config: Object.Secure()); None when only YAML can say it."""
        if any(m.text_only for m in self.mutations) or self.text_edits:
            return None
        if not isinstance(self.document, dict):
            return None
        config = self.document.get("config")
        if not isinstance(config, dict):
            return None
        out: dict[str, Any] = {}
        secret: list[str] = []
        for key, value in items(config):
            if not isinstance(key, str) or key in out:
                return None
            plain, is_secret = decrypted(value)
            if plain is NO_ENGINE_FORM:
                return None
            if isinstance(plain, dict | list):
                out[key] = plain
            else:
                # A top-level scalar is a string to the program (the CLI stores its text).
                out[key] = str(plain) if is_secret else scalar_text(value)
            if is_secret:
                secret.append(key)
        return out, tuple(secret)
