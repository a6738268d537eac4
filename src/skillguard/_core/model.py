"""Frozen values that cross skillguard's boundary: a parsed skill and its parts."""

from __future__ import annotations

from collections.abc import ItemsView, Iterator, KeysView, Mapping, ValuesView
from typing import Literal, TypeAlias, Union

import attrs

__all__ = [
    "EMPTY_MAP",
    "FrozenMap",
    "Profile",
    "Skill",
    "SkillWarning",
    "Step",
    "YamlValue",
]

Profile: TypeAlias = Literal["strict", "compat"]

# What restricted YAML can hold: every scalar is a string, sequences become tuples,
# mappings become FrozenMap. Nothing else can come out of the composer.
YamlValue: TypeAlias = Union[str, tuple["YamlValue", ...], "FrozenMap"]


class FrozenMap(Mapping[str, YamlValue]):
    """An immutable, hashable mapping, so that a frozen ``Skill`` is hashable too."""

    __slots__ = ("_data", "_hash")

    def __init__(self, data: dict[str, YamlValue]) -> None:
        # The composer hands over a dict nobody else holds; no defensive copy.
        self._data = data
        self._hash: int | None = None

    def __getitem__(self, key: str) -> YamlValue:
        return self._data[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    # The dict's own views: the generic Mapping ones are several times slower.
    def keys(self) -> KeysView[str]:
        return self._data.keys()

    def values(self) -> ValuesView[YamlValue]:
        return self._data.values()

    def items(self) -> ItemsView[str, YamlValue]:
        return self._data.items()

    def get(self, key: str, default: YamlValue | None = None) -> YamlValue | None:  # type: ignore[override]
        # Keys are always str; any other key (even an unhashable one) is simply absent.
        return self._data.get(key, default) if isinstance(key, str) else default

    def __eq__(self, other: object) -> bool:
        if isinstance(other, FrozenMap):
            return self._data == other._data
        if isinstance(other, Mapping):
            return self._data == dict(other.items())
        return NotImplemented

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._data.items()))
        return self._hash

    def __repr__(self) -> str:
        return f"FrozenMap({self._data!r})"

    def to_dict(self) -> dict[str, object]:
        """A plain, mutable, JSON-ready copy (nested maps and tuples converted too)."""
        return {key: _thaw(value) for key, value in self._data.items()}


def _thaw(value: YamlValue) -> object:
    if isinstance(value, FrozenMap):
        return value.to_dict()
    if isinstance(value, tuple):
        return [_thaw(item) for item in value]
    return value


EMPTY_MAP = FrozenMap({})


@attrs.frozen
class Step:
    """One ordered step of a skill (seed 002): ``index`` is stable and 1-based."""

    index: int
    text: str


@attrs.frozen
class SkillWarning:
    """A deviation that was accepted, with a stable ``code`` and a non-secret message.

    ``line`` and ``column`` (1-based, in the file) say where it is, when the warning is
    about a place rather than a key: a hidden character in the body, for example.
    """

    code: str
    message: str
    key: str | None = None
    line: int | None = None
    column: int | None = None

    def as_dict(self) -> dict[str, str | int]:
        out: dict[str, str | int] = {"code": self.code, "message": self.message}
        if self.key is not None:
            out["key"] = self.key
        if self.line is not None:
            out["line"] = self.line
            if self.column is not None:
                out["column"] = self.column
        return out


@attrs.frozen(kw_only=True)
class Skill:
    """A SKILL.md document that passed every check, as immutable data.

    Built only by :func:`skillguard.parse_skill`. ``sha256`` and ``size`` describe the
    exact raw bytes that were parsed, so an approval or an audit record can be bound
    to them. ``name`` is the skill's identifier: the frontmatter ``name``, or under the
    ``compat`` profile the folder name when the two disagree (with a warning).
    ``namespace`` is the part before the ``/`` of a namespaced ``name``
    (``local/deploy-to-staging``), accepted only when the host opts in; ``name`` is
    then the short name, and stays the identifier every path and policy uses.
    """

    name: str
    description: str
    body: str
    sha256: str
    size: int
    license: str | None = None
    compatibility: str | None = None
    metadata: Mapping[str, YamlValue] = EMPTY_MAP
    allowed_tools: tuple[str, ...] = ()
    steps: tuple[Step, ...] = ()
    version: str | None = None
    extra: Mapping[str, YamlValue] = EMPTY_MAP
    warnings: tuple[SkillWarning, ...] = ()
    # Claude Code's skill fields (its skills documentation): whether the model may load
    # the skill on its own, whether a user may invoke it as a command, the hint shown
    # for its arguments, and the model, context and agent it asks to run with.
    disable_model_invocation: bool = False
    user_invocable: bool = True
    argument_hint: str | None = None
    model: str | None = None
    context: str | None = None
    agent: str | None = None
    namespace: str | None = None
