"""Schema validation of transcript messages against the official ACP JSON Schema.

Owns: loading the schema file, the map from (sender, message kind, method) to the ``$defs``
entry that describes the message's params or result, precompiled validators (one per
definition, all sharing one ``referencing`` registry rooted at the whole schema), and turning
the first schema error into a ``schema.<method>`` finding (kind "rule", level MUST) with a JSON
path and a short message.

How the map is built: every definition annotated with ``x-method`` names its method; its
``x-side`` names the side that *handles* it ("agent": the client sends its requests and
notifications and the agent its responses; "client": the reverse; "protocol"/"proxy": either
side); the definition's name ends in Request, Response or Notification. A response is
validated against the result definition of the request it answers, so the checker remembers
each side's pending request methods by id. An error response is validated against the
response envelope (whose ``error`` is the schema's Error object). Methods the schema does not
define for that sender (extensions, future methods) are validated against the sender's
envelope only; a standard method sent by the wrong side is reported.

Must not know: files other than the schema, line splitting, the monitors, or the CLI.
"""

from __future__ import annotations

import json
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from jsonschema import Draft202012Validator
from jsonschema.exceptions import UnknownType, ValidationError, relevance
from referencing import Registry, Resource
from referencing.exceptions import Unresolvable
from referencing.jsonschema import DRAFT202012

from properties.findings import Finding
from properties.outputs import clip
from properties.transcript import OTHER, Message

_ROOT_URI = "urn:acp-schema"
_KINDS = ("Request", "Response", "Notification")
_SIDES = ("agent", "client", "protocol", "proxy")
"""The values of ``x-side``: the side handling the method (protocol and proxy methods: either)."""
_ENVELOPES = {(sender, kind): sender.capitalize() + kind for sender in ("client", "agent") for kind in _KINDS}
_MAX_MESSAGE = 200


def _dangling_ref(schema: Any, registry: Registry[Any]) -> tuple[str, str] | None:
    """The first local ``$ref`` (in document order) that points nowhere, with where it is."""
    resolver = registry.resolver(_ROOT_URI)
    stack: list[tuple[Any, str]] = [(schema, "#")]
    while stack:
        node, where = stack.pop()
        if isinstance(node, dict):
            ref = node.get("$ref")
            if isinstance(ref, str) and ref.startswith("#/"):
                try:
                    resolver.lookup(ref)
                except Unresolvable:
                    return where, ref
            stack.extend((v, f"{where}/{k}") for k, v in reversed(list(node.items())))
        elif isinstance(node, list):
            stack.extend((v, f"{where}/{i}") for i, v in reversed(list(enumerate(node))))
    return None


def _unusable(name: str, exc: BaseException) -> str:
    """One short line on why the definition ``name`` cannot be compiled: the broken reference
    when there is one, never the schema itself (errors of the referencing library print the
    whole document a pointer failed in)."""
    cause: BaseException | None = exc
    while cause is not None:
        ref = getattr(cause, "ref", None)
        if isinstance(ref, str):
            return f"definition {name}: broken reference {ref!r}"
        cause = getattr(cause, "_wrapped", None) or cause.__cause__ or cause.__context__
    text = clip(str(exc).split("\n", 1)[0], 160)
    return f"definition {name}: {type(exc).__name__}: {text}"


class SchemaError(Exception):
    """The schema file is missing, unreadable or not a usable JSON Schema; the text says why."""


def _path(prefix: str, parts: Iterable[Any]) -> str:
    return prefix + "".join(f"[{part}]" if isinstance(part, int) else f".{part}" for part in parts)


def _discriminated(branch: Any, instance: Any) -> bool | None:
    """Whether a union branch's discriminator (``properties.<key>.const``) matches the
    instance: True/False, or None when the branch has no discriminator."""
    if not isinstance(branch, dict):
        return None
    consts = [
        (key, sub["const"])
        for key, sub in (branch.get("properties") or {}).items()
        if isinstance(sub, dict) and "const" in sub
    ]
    if not consts:
        return None
    return isinstance(instance, dict) and all(
        key in instance and instance[key] == value for key, value in consts
    )


def most_useful_error(error: ValidationError) -> ValidationError:
    """Descend through ``anyOf``/``oneOf`` failures into the branch that was meant.

    ACP unions are discriminated (``sessionUpdate``, ``state``, ``stopReason``, ``type``):
    the meant branch is the one whose ``const`` matches the instance, or, when none does,
    the catch-all branch whose only fault is not a discriminator mismatch. Undiscriminated
    unions (result vs error responses) pick the branch that got furthest into the instance.
    """
    while error.validator in ("anyOf", "oneOf") and error.context:
        options = error.validator_value if isinstance(error.validator_value, list) else []
        branches: dict[int, list[ValidationError]] = {}
        for sub in error.context:
            index = sub.relative_schema_path[0] if sub.relative_schema_path else -1
            branches.setdefault(int(index), []).append(sub)
        meant = [
            i
            for i in sorted(branches)
            if 0 <= i < len(options) and _discriminated(options[i], error.instance) is True
        ]
        if not meant:
            off_target = ("const", "not", "enum")
            meant = [i for i in sorted(branches) if all(e.validator not in off_target for e in branches[i])]
        if not meant:
            return error
        chosen = max(meant, key=lambda i: (min(len(e.path) for e in branches[i]), -i))
        error = min(
            branches[chosen], key=lambda e: (len(e.path), len(e.relative_schema_path), list(map(str, e.path)))
        )
    return error


class SchemaChecker:
    """Validates each message of one transcript against the definition for its method.

    Construct once per schema (compiling is the slow part); call ``reset`` between
    transcripts so request ids of one file are not matched against another.
    """

    def __init__(self, path: str | Path) -> None:
        self.path = str(path)
        try:
            raw = Path(path).read_bytes()
        except OSError as exc:
            raise SchemaError(f"{path}: cannot read schema ({exc.strerror or exc})") from None
        try:
            schema = json.loads(raw)
        except (ValueError, RecursionError) as exc:
            raise SchemaError(f"{path}: schema is not valid JSON ({exc})") from None
        if not isinstance(schema, dict) or not isinstance(schema.get("$defs"), dict):
            raise SchemaError(f"{path}: not a JSON Schema with a $defs object")
        self._defs: dict[str, Any] = schema["$defs"]
        self._registry: Registry[Any] = Registry().with_resource(
            _ROOT_URI, Resource.from_contents(schema, default_specification=DRAFT202012)
        )
        dangling = _dangling_ref(schema, self._registry)
        if dangling is not None:
            where, ref = dangling
            raise SchemaError(f"{path}: schema cannot be used (at {where}: broken reference {ref!r})")
        missing = [name for name in _ENVELOPES.values() if name not in self._defs]
        if missing:
            raise SchemaError(f"{path}: schema lacks the ACP envelope definitions {', '.join(missing)}")
        self._validators: dict[str, Draft202012Validator] = {}
        self.definitions: dict[tuple[str, str, str], str] = {}
        """(sender, kind, method) -> name of the ``$defs`` entry for its params or result."""
        for name, definition in sorted(self._defs.items()):
            if not isinstance(definition, dict):
                continue
            method, side = definition.get("x-method"), definition.get("x-side")
            kind = next((k for k in _KINDS if name.endswith(k)), None)
            if not isinstance(method, str) or kind is None or side not in _SIDES:
                continue
            # x-side names the side handling the method: it receives requests and
            # notifications and sends the responses.
            senders = [s for s in OTHER if side not in OTHER or (s == side) == (kind == "Response")]
            for sender in senders:
                self.definitions[(sender, kind, method)] = name
        if not self.definitions:
            raise SchemaError(f"{path}: no definition carries x-method/x-side annotations")
        name = ""
        try:  # compile everything now, so a broken reference is reported before any input
            for name in sorted({*self.definitions.values(), *_ENVELOPES.values(), "Error"}):
                self._validator(name).is_valid({})
        except (Unresolvable, LookupError, TypeError, ValueError, UnknownType, RecursionError) as exc:
            raise SchemaError(f"{path}: schema cannot be used ({_unusable(name, exc)})") from None
        self._update_shell: Draft202012Validator | None = None
        self._update_variants: dict[str, Draft202012Validator] = {}
        self._build_update_dispatch()
        self._pending: dict[str, dict[Any, tuple[str, str | None]]] = {"client": {}, "agent": {}}

    # -- compiled validators ---------------------------------------------------------------
    def _compile(self, schema: dict[str, Any]) -> Draft202012Validator:
        return Draft202012Validator(schema, registry=self._registry)

    def _whole(self, fragment: dict[str, Any]) -> dict[str, Any]:
        """A fragment of the schema with every definition beside it, so that its local ``$ref``s
        resolve as they do in the whole schema when it is compiled on its own."""
        return {**fragment, "$defs": self._defs}

    def _validator(self, name: str) -> Draft202012Validator:
        validator = self._validators.get(name)
        if validator is None:
            if name not in self._defs:
                raise LookupError(f"no definition {name!r}")
            validator = self._compile({"$ref": f"{_ROOT_URI}#/$defs/{name}"})
            self._validators[name] = validator
        return validator

    def _build_update_dispatch(self) -> None:
        """Speed-up for the commonest message: validate ``session/update`` params as a shell
        (everything but ``update``) plus the one ``SessionUpdate`` branch its ``sessionUpdate``
        selects, instead of trying every branch. Used only when the schema has the expected
        shape, so the result is the same as validating against the whole definition."""
        note, union = self._defs.get("UpdateSessionNotification"), self._defs.get("SessionUpdate")
        if not isinstance(note, dict) or not isinstance(union, dict):
            return
        props, branches = note.get("properties"), union.get("anyOf")
        if not isinstance(props, dict) or "update" not in props or not isinstance(branches, list):
            return
        if set(union) - {"anyOf", "description", "title"}:
            return
        variants: dict[str, Draft202012Validator] = {}
        for branch in branches:
            if _discriminated(branch, {}) is None:
                continue  # the catch-all branch: left to the full definition
            value = branch["properties"].get("sessionUpdate", {}).get("const")
            if not isinstance(value, str) or set(branch["properties"]) != {"sessionUpdate"}:
                return
            variants[value] = self._compile(self._whole(branch))
        shell = dict(note)
        shell["properties"] = {**props, "update": {"type": "object"}}
        self._update_shell = self._compile(self._whole(shell))
        self._update_variants = variants

    def reset(self) -> None:
        """Forget pending requests (start of a new transcript)."""
        self._pending = {"client": {}, "agent": {}}

    # -- checking --------------------------------------------------------------------------
    def check(self, sender: str, msg: Message, line: int | None) -> Finding | None:
        """Validate one well-formed JSON-RPC message; return a finding on the first error."""
        method, session, problem = self._judge(sender, msg)
        if problem is None:
            return None
        return Finding(f"schema.{method}", "MUST", line, session, problem, "rule", msg)

    def _judge(self, sender: str, msg: Message) -> tuple[str, str | None, str | None]:
        """The message's method and session, and what is wrong with it (None: nothing)."""
        if "method" not in msg:  # a response: it answers a request the other side sent
            answered = self._pending[OTHER[sender]].pop(msg.get("id"), None)
            method, session = answered if answered is not None else ("response", None)
            name = (
                None
                if "error" in msg or answered is None
                else self.definitions.get((sender, "Response", method))
            )
            if name is None:
                return method, session, self._errors(_ENVELOPES[(sender, "Response")], msg, "$")
            return method, session, self._errors(name, msg.get("result"), "$.result")
        method = msg["method"]
        params = msg.get("params")
        session = params.get("sessionId") if isinstance(params, dict) else None
        session = session if isinstance(session, str) else None
        kind = "Request" if "id" in msg else "Notification"
        if kind == "Request":
            self._pending[sender][msg["id"]] = (method, session)
        name = self.definitions.get((sender, kind, method))
        if name is None:
            senders = [s for s in sorted(OTHER) if (s, kind, method) in self.definitions]
            if senders:
                by = " or ".join(senders)
                return method, session, f"{method} is a {kind.lower()} the {by} sends, not the {sender}"
            return method, session, self._errors(_ENVELOPES[(sender, kind)], msg, "$")
        if "params" not in msg:
            return method, session, f"$.params: missing ({name})"
        if method == "session/update" and self._update_shell is not None and type(params) is dict:
            update = params.get("update")
            variant = update.get("sessionUpdate") if type(update) is dict else None
            branch = self._update_variants.get(variant) if type(variant) is str else None
            if branch is not None:
                shell = self._errors(name, params, "$.params", self._update_shell)
                return method, session, shell or self._errors(name, update, "$.params.update", branch)
        return method, session, self._errors(name, params, "$.params")

    def _errors(
        self, name: str, instance: Any, prefix: str, validator: Draft202012Validator | None = None
    ) -> str | None:
        """The most useful error of ``instance`` against the definition ``name`` (or the part of it
        ``validator`` holds), as one short line; None when it is valid."""
        try:
            errors = (validator or self._validator(name)).iter_errors(instance)
            first = next(errors, None)
            if first is None:
                return None
            error = most_useful_error(max([first, *errors], key=relevance))
        except RecursionError:
            return f"{prefix}: too deeply nested to validate ({name})"
        except UnknownType as exc:  # a part of the schema the load-time probe did not reach
            raise SchemaError(f"{self.path}: schema cannot be used ({_unusable(name, exc)})") from None
        where = _path(prefix, error.absolute_path)
        return f"{where}: {clip(error.message, _MAX_MESSAGE, one_line=True)} ({name})"
