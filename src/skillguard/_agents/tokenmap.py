"""The token map of composable agent directories (seed 001): strict JSON in, a frozen map out.

Rules (threat-model.md T100, T103). Sans-IO: ``parse_token_map`` takes bytes. The
document is read by ``_json.loads_strict`` (duplicate keys, ``NaN``, comments, depth
and size all refused), and then by this schema, where every unknown key is an error:

* ``version``: the integer 1. A later version is refused with the range this
  skillguard reads (``TOKEN_MAP_VERSIONS``), never half-understood.
* ``harnesses``: a non-empty list of distinct harness slugs.
* ``tools``: ``{canonical: {harness: name | null}}``. ``null`` means "this harness has
  no such tool"; a harness missing from an entry does not know the tool either.
* ``paths``: ``{canonical: {harness: path | {"base": canonical, "relative": path}}}``.
  A path is a literal, a ``~`` path or holds ``${ENV_VAR}`` references: all are kept
  verbatim (the harness expands them at run time, never skillguard). A ``base`` names
  another canonical path whose entry for that harness is a plain path (one level, so
  resolving can never loop; any other base is ``unknown_path_base``); ``relative``
  stays relative.
* ``agents``: ``prefix`` (``{harness: string}``, the namespace of agent names),
  ``deferred`` (``{agent: [harness, ...]}``: agents that are not composed for those
  harnesses but copied from ``agents-native/<agent>.md``) and ``sources``
  (``{harness: text}``, documentation).
* ``contract``: a sentence of documentation, or the rules the map's author wrote for
  installers, as an object. ``version`` is held
  to the same range as the map's; ``harness_ids`` must list exactly ``harnesses``;
  ``substitution_order`` must order ``SECTION``, ``TOOL`` and ``PATH``, ``SECTION``
  first (a section's own tokens are substituted with the body's), and the composer
  follows it; ``summary``, ``binding``, ``rules`` and ``error_handling`` are text.
* ``name``, ``description``, ``token_format`` and ``notes``: documentation, kept as
  inert data.

Unknown keys: in ``tools``, ``paths`` and ``agents`` (whose keys change what is
composed) an unknown key is an error; at the top level, in ``contract`` and in its
``error_handling`` (documentation a later map may add to) it is a
``token_map_unknown_key`` warning, and its text is held to the same character rules.

Every string holds no control character and no character that hides or reorders text.
A tool name, prefix or canonical name holds no ``{`` or ``}``, and a path holds them
only in ``${ENV_VAR}``: a value can never spell a token that a later pass would
expand. Errors are ``MalformedSkillError``; any other exception is a bug.
"""

from __future__ import annotations

import re
from types import MappingProxyType
from typing import TYPE_CHECKING, Final

import attrs

from skillguard._core.errors import MalformedSkillError, SkillUsageError, safe_repr
from skillguard._core.model import SkillWarning
from skillguard._core.strict_json import StrictJSONError, loads_strict
from skillguard._core.text import find_hidden

if TYPE_CHECKING:
    from collections.abc import Mapping

__all__ = [
    "EMPTY_TOKEN_MAP",
    "SLUG",
    "TOKEN_MAP_MAX_BYTES",
    "TOKEN_MAP_VERSION",
    "TOKEN_MAP_VERSIONS",
    "BasePath",
    "TokenMap",
    "check_relative",
    "check_string",
    "load_json_object",
    "parse_token_map",
]

TOKEN_MAP_VERSION: Final = 1
# The lowest and highest map (and contract) version this skillguard reads.
TOKEN_MAP_VERSIONS: Final = (1, TOKEN_MAP_VERSION)
# The largest token map of the seed's project is under 8 KiB; 1 MiB leaves room for
# hundreds of tools and paths while bounding the decoder's work.
TOKEN_MAP_MAX_BYTES: Final = 1024 * 1024
# Maps nest four levels (paths -> canonical -> harness -> {base, relative}); eight
# leaves room for ``contract`` documentation without letting a bracket bomb through.
JSON_MAX_DEPTH: Final = 8
# A harness, agent or section name: it becomes a folder or file name, so it is an
# ASCII slug, as a skill name is.
SLUG: Final = re.compile(r"[a-z0-9](?:[a-z0-9-]{0,62}[a-z0-9])?")
_CONTROL: Final = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\ufeff\ud800-\udfff]")
_TOP_KEYS: Final = frozenset({"version", "harnesses", "tools", "paths", "agents", "contract"})
_DOC_KEYS: Final = frozenset({"name", "description", "token_format", "notes"})
_CONTRACT_TEXT: Final = frozenset({"summary", "binding", "rules", "error_handling"})
_ERROR_HANDLING: Final = frozenset(
    {
        "unknown_tool",
        "unknown_path_base",
        "null_tool_in_prose",
        "null_tool_in_tool_list",
        "unsupported_version",
    }
)
TOKEN_KINDS: Final = ("SECTION", "TOOL", "PATH")
# ``${NAME}`` in a path: the harness expands it at run time; skillguard keeps it verbatim.
_ENV_REF: Final = re.compile(r"\$\{[A-Za-z_][A-Za-z0-9_]{0,127}\}")


@attrs.frozen
class BasePath:
    """A path that another canonical path's entry anchors: ``base`` + ``/`` + ``relative``."""

    base: str
    relative: str


@attrs.frozen(kw_only=True)
class TokenMap:
    """A validated token map (see the module docstring). Built by ``parse_token_map``.

    An empty ``harnesses`` (``EMPTY_TOKEN_MAP``, used when no map is given) accepts
    any harness and resolves no tool and no mapped path.
    """

    harnesses: tuple[str, ...]
    tools: Mapping[str, Mapping[str, str | None]]
    paths: Mapping[str, Mapping[str, str | BasePath]]
    prefixes: Mapping[str, str]
    #: ``{agent: harnesses}``: agents copied from ``agents-native/`` for those harnesses.
    deferred: Mapping[str, tuple[str, ...]] = attrs.field(factory=lambda: MappingProxyType({}))
    #: The order of the token passes (``contract.substitution_order``).
    substitution_order: tuple[str, ...] = TOKEN_KINDS
    #: Whether the map carries a ``contract`` (its rules are then the installer's).
    has_contract: bool = False
    #: What was accepted with a note (an unknown documentation key).
    warnings: tuple[SkillWarning, ...] = ()

    def knows(self, harness: str) -> bool:
        """Whether *harness* may be composed with this map. Raises ``SkillUsageError``
        when *harness* is not a str."""
        if not isinstance(harness, str):
            raise SkillUsageError("bad_argument", "a harness must be a str")
        return not self.harnesses or harness in self.harnesses

    def deferred_for(self, harness: str) -> frozenset[str]:
        """The agents that *harness* takes from ``agents-native/`` instead of composing."""
        return frozenset(agent for agent, which in self.deferred.items() if harness in which)


EMPTY_TOKEN_MAP: Final = TokenMap(
    harnesses=(),
    tools=MappingProxyType({}),
    paths=MappingProxyType({}),
    prefixes=MappingProxyType({}),
)


def _schema(reason: str, key: str | None = None) -> MalformedSkillError:
    return MalformedSkillError("token_map_schema", f"the token map: {reason}", key=key)


def load_json_object(raw: bytes, *, what: str, max_bytes: int) -> dict[str, object]:
    """One strict JSON object; each defect is a ``MalformedSkillError`` with its own code."""
    try:
        value = loads_strict(raw, max_bytes=max_bytes, max_depth=JSON_MAX_DEPTH)
    except StrictJSONError as exc:
        raise MalformedSkillError(exc.code, f"{what}: {exc}") from exc
    if not isinstance(value, dict):
        raise MalformedSkillError("not_a_mapping", f"{what}: the top level is not an object")
    return value


def check_string(value: str, what: str) -> None:
    """Refuse a string holding a control character or a character that hides text."""
    control = _CONTROL.search(value)
    if control is not None:
        raise MalformedSkillError(
            "control_character", f"{what} holds the control character U+{ord(control.group()):04X}"
        )
    hidden = find_hidden(value)
    if hidden is not None:
        raise MalformedSkillError(
            "forbidden_character",
            f"{what} holds the invisible or bidirectional character U+{ord(hidden[1]):04X}",
        )


def check_relative(path: str, what: str) -> None:
    """Refuse a path that is empty, absolute, or climbs with ``..`` (T101)."""
    if (
        not path
        or path.startswith(("/", "~"))
        or "\\" in path
        or ":" in path.split("/", maxsplit=1)[0]
    ):
        raise MalformedSkillError(
            "path_not_relative", f"{what} {safe_repr(path)} must be a relative path"
        )
    if any(part in ("", ".", "..") for part in path.split("/")):
        raise MalformedSkillError(
            "path_not_relative",
            f"{what} {safe_repr(path)} must not hold '..', '.' or an empty component",
        )


def _text(value: object, what: str, *, allow_empty: bool = False) -> str:
    if not isinstance(value, str) or (not value and not allow_empty):
        raise _schema(f"{what} must be a non-empty string")
    check_string(value, f"the token map: {what}")
    if "{" in value or "}" in value:
        raise _schema(f"{what} must not hold '{{' or '}}'")
    return value


def _object(value: object, what: str) -> dict[str, object]:
    if not isinstance(value, dict):
        raise _schema(f"{what} must be an object")
    return value


def _per_harness(value: object, what: str, harnesses: tuple[str, ...]) -> dict[str, object]:
    entry = _object(value, what)
    for harness in entry:
        if harness not in harnesses:
            raise _schema(f"{what} names the harness {safe_repr(harness)}, not in 'harnesses'")
    return entry


def _harnesses(value: object) -> tuple[str, ...]:
    if not isinstance(value, list) or not value:
        raise _schema("'harnesses' must be a non-empty list of harness names", "harnesses")
    for item in value:
        if not isinstance(item, str) or SLUG.fullmatch(item) is None:
            raise _schema("each harness must be a lowercase slug", "harnesses")
    if len(set(value)) != len(value):
        raise _schema("a harness is listed twice", "harnesses")
    return tuple(value)


def _tools(value: object, harnesses: tuple[str, ...]) -> Mapping[str, Mapping[str, str | None]]:
    tools: dict[str, Mapping[str, str | None]] = {}
    for canonical, entry in _object(value, "'tools'").items():
        _text(canonical, "a canonical tool name")
        names: dict[str, str | None] = {}
        for harness, name in _per_harness(entry, f"tool {safe_repr(canonical)}", harnesses).items():
            names[harness] = None if name is None else _text(name, f"tool {safe_repr(canonical)}")
        tools[canonical] = MappingProxyType(names)
    return MappingProxyType(tools)


def _paths(value: object, harnesses: tuple[str, ...]) -> Mapping[str, Mapping[str, str | BasePath]]:
    paths: dict[str, dict[str, str | BasePath]] = {}
    for canonical, entry in _object(value, "'paths'").items():
        _text(canonical, "a canonical path name")
        what = f"path {safe_repr(canonical)}"
        targets: dict[str, str | BasePath] = {}
        for harness, target in _per_harness(entry, what, harnesses).items():
            if isinstance(target, str):
                targets[harness] = _path_text(target, what)
                continue
            anchored = _object(target, what)
            if set(anchored) != {"base", "relative"}:
                raise _schema(f"{what} must be a path or exactly {{base, relative}}")
            relative = _text(anchored["relative"], f"{what} 'relative'")
            check_relative(relative, f"the token map: {what} 'relative'")
            targets[harness] = BasePath(_text(anchored["base"], f"{what} 'base'"), relative)
        paths[canonical] = targets
    # Every base names a plain path for the same harness: one level, never a loop; a
    # base that is no key of 'paths' is the contract's "unknown path base".
    for canonical, targets in paths.items():
        for harness, target in targets.items():
            if isinstance(target, BasePath) and not isinstance(
                paths.get(target.base, {}).get(harness), str
            ):
                raise MalformedSkillError(
                    "unknown_path_base",
                    f"the token map: path {safe_repr(canonical)} for {harness} has the base "
                    f"{safe_repr(target.base)}, which is not a plain path for that harness",
                )
    return MappingProxyType({key: MappingProxyType(value) for key, value in paths.items()})


def _path_text(value: object, what: str) -> str:
    """A path value: literal, ``~`` path or ``${ENV_VAR}`` references, kept verbatim;
    no other ``{`` or ``}``, so no value spells a token."""
    if not isinstance(value, str) or not value:
        raise _schema(f"{what} must be a non-empty string")
    check_string(value, f"the token map: {what}")
    bare = _ENV_REF.sub("", value)
    if "{" in bare or "}" in bare:
        raise _schema(f"{what} must not hold '{{' or '}}' except in ${{ENV_VAR}}")
    return value


def _agents(
    value: object, harnesses: tuple[str, ...]
) -> tuple[Mapping[str, str], Mapping[str, tuple[str, ...]]]:
    agents = _object(value, "'agents'")
    unknown = sorted(set(agents) - {"prefix", "deferred", "sources"})
    if unknown:
        raise _schema(
            f"'agents' holds only 'prefix', 'deferred' and 'sources', not {safe_repr(unknown[0])}",
            "agents",
        )
    prefixes = _per_harness(agents.get("prefix", {}), "'agents.prefix'", harnesses)
    for harness, text in _per_harness(
        agents.get("sources", {}), "'agents.sources'", harnesses
    ).items():
        if not isinstance(text, str):
            raise _schema(f"'agents.sources' for {harness} must be text", "agents")
        check_string(text, "the token map: 'agents.sources'")
    deferred: dict[str, tuple[str, ...]] = {}
    for agent, which in _object(agents.get("deferred", {}), "'agents.deferred'").items():
        if SLUG.fullmatch(agent) is None:
            raise _schema(
                f"the deferred agent {safe_repr(agent)} is not a lowercase slug", "agents"
            )
        if not isinstance(which, list) or not which or len(set(map(str, which))) != len(which):
            raise _schema(
                f"'agents.deferred' for {agent} must be a non-empty list of distinct harnesses",
                "agents",
            )
        for harness in which:
            if harness not in harnesses:
                raise _schema(
                    f"'agents.deferred' for {agent} names the harness {safe_repr(harness)}, "
                    "not in 'harnesses'",
                    "agents",
                )
        deferred[agent] = tuple(which)
    return (
        MappingProxyType(
            {h: _text(p, "an agent prefix", allow_empty=True) for h, p in prefixes.items()}
        ),
        MappingProxyType(deferred),
    )


def _inert(value: object, what: str) -> None:
    """Documentation: any JSON, every string (and key) held to the character rules.
    The depth is bounded by the JSON decoder's cap, and each value is visited once."""
    pending = [value]
    while pending:
        item = pending.pop()
        if isinstance(item, str):
            check_string(item, f"the token map: {what}")
        elif isinstance(item, list):
            pending.extend(item)
        elif isinstance(item, dict):
            pending.extend(item)
            pending.extend(item.values())


def _version(value: object, what: str) -> int:
    low, high = TOKEN_MAP_VERSIONS
    if type(value) is not int or value < low:
        raise _schema(f"{what} must be an integer from {low} to {high}", "version")
    if value > high:
        raise MalformedSkillError(
            "token_map_version",
            f"{what} is {value}; this skillguard reads versions {low} to {high}",
            key="version",
        )
    return value


def _unknown(key: str, where: str) -> SkillWarning:
    return SkillWarning(
        "token_map_unknown_key",
        f"the token map: {where} has the unknown key {safe_repr(key)}: kept as documentation",
        key=key,
    )


def _contract(
    value: object, harnesses: tuple[str, ...], warnings: list[SkillWarning]
) -> tuple[str, ...]:
    """The contract's checks (see the module docstring); returns the substitution order."""
    contract = _object(value, "'contract'")
    if "version" in contract:
        _version(contract["version"], "'contract.version'")
    if "harness_ids" in contract:
        ids = contract["harness_ids"]
        if (
            not isinstance(ids, list)
            or sorted(map(str, ids)) != sorted(harnesses)
            or len(ids) != len(harnesses)
        ):
            raise MalformedSkillError(
                "token_map_contract",
                "the token map: 'contract.harness_ids' must list exactly the harnesses "
                "of 'harnesses'",
                key="contract",
            )
    order = contract.get("substitution_order", list(TOKEN_KINDS))
    if (
        not isinstance(order, list)
        or sorted(map(str, order)) != sorted(TOKEN_KINDS)
        or order[0] != "SECTION"
    ):
        raise MalformedSkillError(
            "token_map_contract",
            "the token map: 'contract.substitution_order' must order SECTION, TOOL and "
            "PATH, SECTION first",
            key="contract",
        )
    for key, text in contract.items():
        if key in _CONTRACT_TEXT:
            _inert(text, f"'contract.{key}'")
        elif key not in ("version", "harness_ids", "substitution_order"):
            _inert(text, f"'contract.{key}'")
            warnings.append(_unknown(key, "'contract'"))
    handling = contract.get("error_handling", {})
    if isinstance(handling, dict):
        warnings.extend(
            _unknown(key, "'contract.error_handling'")
            for key in handling
            if key not in _ERROR_HANDLING
        )
    return tuple(order)


def parse_token_map(raw: bytes, *, max_bytes: int = TOKEN_MAP_MAX_BYTES) -> TokenMap:
    """Parse the untrusted bytes of a ``token-map.json`` (see the module docstring).

    Raises ``MalformedSkillError`` (the JSON codes, ``not_a_mapping``,
    ``token_map_version``, ``token_map_schema``, ``unknown_path_base``,
    ``path_not_relative``, ``control_character``, ``forbidden_character``) and
    ``token_map_contract`` and ``SkillUsageError`` for bad arguments; any other
    exception is a bug. Unknown documentation keys are ``TokenMap.warnings``.
    """
    if not isinstance(raw, bytes):
        raise SkillUsageError("bad_argument", "raw must be bytes")
    if type(max_bytes) is not int or max_bytes < 1:
        raise SkillUsageError("bad_argument", "max_bytes must be a positive int")
    document = load_json_object(raw, what="the token map", max_bytes=max_bytes)
    warnings: list[SkillWarning] = []
    for key in sorted(set(document) - _TOP_KEYS):
        _inert(document[key], safe_repr(key))
        if key not in _DOC_KEYS:
            warnings.append(_unknown(key, "the top level"))
    if "version" not in document:
        raise _schema("'version' must be the integer 1", "version")
    _version(document["version"], "the token map's version")
    harnesses = _harnesses(document.get("harnesses"))
    order: tuple[str, ...] = TOKEN_KINDS
    contract = document.get("contract")
    if isinstance(contract, str):
        # A contract written as one sentence is documentation only.
        _inert(contract, "'contract'")
    elif contract is not None:
        order = _contract(contract, harnesses, warnings)
    prefixes, deferred = _agents(document.get("agents", {}), harnesses)
    return TokenMap(
        harnesses=harnesses,
        tools=_tools(document.get("tools", {}), harnesses),
        paths=_paths(document.get("paths", {}), harnesses),
        prefixes=prefixes,
        deferred=deferred,
        substitution_order=order,
        has_contract=isinstance(contract, dict),
        warnings=tuple(warnings),
    )
