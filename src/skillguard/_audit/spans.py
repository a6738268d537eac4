"""Optional OpenTelemetry spans: ``skillguard.load``, ``skillguard.approve``,
``skillguard.select``, with the audit events' attributes.

Rules (threat-model.md T253):

* skillguard never imports OpenTelemetry. A span is made only when the host already
  imported ``opentelemetry.trace`` and set a tracer provider of its own (not the
  API's default proxy or no-op provider); otherwise a traced call costs one dictionary
  look-up (``sys.modules``) and one attribute read, and nothing else.
* A span carries ``skillguard.agent`` and ``skillguard.skill`` when known at the start,
  and each audit event emitted inside it adds its fields as ``skillguard.<field>``
  attributes (the last event's value wins: the decision the call ended with) and
  itself as a span event. What a span says is what the audit record says, no more.
* A span never changes what the call does: an exception (a denial is a ``SkillError``)
  passes through it unchanged, recorded on the span by OpenTelemetry.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import inspect
import sys
from typing import TYPE_CHECKING, Any, TypeVar, cast

if TYPE_CHECKING:
    from collections.abc import Callable, Iterator, Mapping

__all__ = ["annotate", "traced"]

_F = TypeVar("_F", bound="Callable[..., Any]")
# The skillguard span the current call runs in, if any.
_CURRENT: contextvars.ContextVar[Any] = contextvars.ContextVar("skillguard_span", default=None)
_DEFAULT_PROVIDERS = ("ProxyTracerProvider", "NoOpTracerProvider")


def _tracer() -> Any:  # noqa: ANN401 - an OpenTelemetry tracer, a type never imported here
    """The host's tracer for skillguard, or ``None`` when the host set none."""
    trace = sys.modules.get("opentelemetry.trace")
    if trace is None:
        return None
    provider = trace.get_tracer_provider()
    if type(provider).__name__ in _DEFAULT_PROVIDERS:
        return None
    return provider.get_tracer("skillguard")


def _attribute(value: object) -> str | int | bool | None:
    if value is None or isinstance(value, (str, int, bool)):
        return value
    return str(value)


@contextlib.contextmanager
def _span(tracer: Any, name: str, attributes: Mapping[str, object]) -> Iterator[None]:  # noqa: ANN401
    shown = {
        f"skillguard.{key}": value
        for key, raw in attributes.items()
        if (value := _attribute(raw)) is not None
    }
    with tracer.start_as_current_span(name, attributes=shown) as span:
        token = _CURRENT.set(span)
        try:
            yield
        finally:
            _CURRENT.reset(token)


def _start(self: object, args: tuple[object, ...], skill_arg: bool) -> dict[str, object]:
    attributes: dict[str, object] = {"agent": getattr(self, "agent", None)}
    if skill_arg and args:
        target = args[0]
        attributes["skill"] = target if isinstance(target, str) else getattr(target, "name", None)
    return attributes


def traced(name: str, *, skill_arg: bool = True) -> Callable[[_F], _F]:
    """A method of an agent's handle run inside span *name* when the host has a tracer
    provider; *skill_arg*: its first argument names the skill (or has a ``name``)."""

    def wrap(function: _F) -> _F:
        if inspect.iscoroutinefunction(function):

            @functools.wraps(function)
            async def run_async(self: object, *args: object, **kwargs: object) -> object:
                tracer = _tracer()
                if tracer is None:
                    return await function(self, *args, **kwargs)
                with _span(tracer, name, _start(self, args, skill_arg)):
                    return await function(self, *args, **kwargs)

            return cast("_F", run_async)

        @functools.wraps(function)
        def run(self: object, *args: object, **kwargs: object) -> object:
            tracer = _tracer()
            if tracer is None:
                return function(self, *args, **kwargs)
            with _span(tracer, name, _start(self, args, skill_arg)):
                return function(self, *args, **kwargs)

        return cast("_F", run)

    return wrap


def annotate(record: Mapping[str, object]) -> None:
    """Add an audit event's fields to the skillguard span it was emitted in, if any."""
    span = _CURRENT.get()
    if span is None:
        return
    fields = {
        f"skillguard.{key}": value
        for key, raw in record.items()
        if (value := _attribute(raw)) is not None
    }
    span.set_attributes(fields)
    span.add_event(str(record.get("event")), attributes=fields)
