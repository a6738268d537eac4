"""Verified records out to a log pipeline: JSON Lines, or OCSF events.

Rules (threat-model.md T251):

* Only a record that verified is exported, as soon as it verified: the file is streamed
  through the one chain check (``_audit.verify._Checker``) a line at a time, and each
  record is written out before the next line is read, so memory does not grow with the
  log (as ``verify``). A log that stops verifying has exported exactly the records
  before its bad line; the ``Verification`` returned names that line.
* Each exported record carries its log's ``log_id`` (and its own ``seq``), so records
  of several logs (one per process or host) stay apart in the pipeline and a gap or a
  replay shows there.
* ``since`` filters by time (``time_key``: whole seconds and milliseconds alike) after
  the check: a record left out by the filter is still checked.
"""

from __future__ import annotations

import json
from typing import TYPE_CHECKING, Final

from skillguard._audit.ocsf import to_ocsf
from skillguard._audit.record import _HEADER_EVENT, _version, canonical, time_key
from skillguard._audit.verify import Verification, _checker, _with_last

if TYPE_CHECKING:
    from collections.abc import Callable, Iterable

__all__ = ["EXPORT_FORMATS", "export_records"]

EXPORT_FORMATS: Final = ("jsonl", "ocsf")
_OCSF_ENCODER = json.JSONEncoder(sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def export_records(
    lines: Iterable[str | bytes],
    write: Callable[[str], object],
    *,
    key: bytes | None = None,
    since: str | None = None,
    expected_log_id: str | None = None,
    output: str = "jsonl",
) -> Verification:
    """Check *lines* (one log) and hand each verified record to *write* as one line of
    text (with its ``\\n``): ``jsonl``, the record with its ``log_id``; ``ocsf``, an
    OCSF API Activity event (``_audit.ocsf``). *since* is the records' own time form
    (``parse_since``). Returns the ``Verification``: the records before its bad line,
    if any, were written. Raises ``SkillUsageError`` for bad arguments."""
    checker = _checker(lines, key, None, expected_log_id)
    host: str | None = None
    version = _version()
    for raw, last, following in _with_last(lines):
        result = checker.feed(raw, last=last, following=following)
        if isinstance(result, Verification):
            return result
        log_id = str(checker.log_id)
        if result.get("event") == _HEADER_EVENT:
            named = result.get("host")
            host = named if isinstance(named, str) else None
        if since is not None and time_key(result.get("time", "")) < since:
            continue
        if output == "ocsf":
            write(_OCSF_ENCODER.encode(to_ocsf(result, log_id=log_id, host=host, version=version)))
        else:
            record = {**result, "hash": checker.prev, "log_id": log_id}
            write(canonical(record).decode("ascii"))
        write("\n")
    return checker.finish()
