"""``agent install``, ``--check`` and ``agent uninstall``: a plan put into ``--dest``, all
or nothing, with a manifest of what skillguard wrote.

Rules (threat-model.md T290-T294). ``--dest`` holds files skillguard did not write (the
user's own agents) and may hold what another program planted, so:

* The manifest ``.skillguard-install.json`` in ``--dest`` lists every file an install
  wrote, with its sha256, the digest of every source byte read (``source_digest``) and
  of the token map (``token_map_digest``). It is read as strict JSON, bounded; one
  that does not read is refused, never trusted in part.
* A file skillguard may replace or remove is one the manifest lists *and* whose bytes
  still have the manifest's digest. Anything else already at a name the plan writes
  is refused with its name (``not_ours``; ``edited_since_install`` for a listed file
  changed by hand), unless ``--force`` names it; a symlink or a non-regular file is
  refused even then (``symlink``, ``not_regular_file``): it is never replaced, never
  followed.
* Every refusal is found before anything is written; then every file is staged and
  committed through ``InstallFolder`` (the manifest with them), so an install either
  puts every file in place or leaves the folder as it was.
* ``uninstall`` removes exactly the manifest's files, all or none: a listed file
  changed by hand is refused (``edited_since_install``) and nothing is removed.
* ``check`` writes nothing and reports drift: ``edited`` (changed by hand),
  ``missing_file``, ``source_changed``, ``token_map_changed``, ``stale`` (what would
  be written differs), ``not_installed``.
"""

from __future__ import annotations

import hashlib
import json
import stat
from typing import TYPE_CHECKING, Final, Literal

import attrs

from skillguard._agents.install_plan import InstallFinding, InstallPlan, finding_of
from skillguard._agents.tokenmap import SLUG, load_json_object
from skillguard._core.errors import (
    MalformedSkillError,
    SkillError,
    SkillNotFoundError,
    SkillUsageError,
    safe_repr,
)
from skillguard._fs.install import InstallFolder
from skillguard._fs.paths import operator_path, split_name

if TYPE_CHECKING:
    import os
    from collections.abc import Collection

    from skillguard._fs.install import Staged

__all__ = [
    "MANIFEST_FILE",
    "InstallReport",
    "check_install",
    "install_plan",
    "uninstall",
]

MANIFEST_FILE: Final = ".skillguard-install.json"
MANIFEST_FORMAT: Final = "skillguard-install-1"
# A manifest of 100,000 files is about 15 MiB; 32 MiB bounds the decoder's work.
MANIFEST_MAX_BYTES: Final = 32 * 1024 * 1024
# A file installed is at most a composed agent or a skill resource (8 MiB).
_MAX_INSTALLED_BYTES: Final = 8 * 1024 * 1024
_SHA256_HEX: Final = frozenset("0123456789abcdef")

Action = Literal["install", "check", "uninstall"]


@attrs.frozen(kw_only=True)
class InstallReport:
    """What an install, check or uninstall did (or, ``dry_run``, would do).

    ``written`` and ``removed`` are paths in ``dest``; ``findings`` every refusal,
    drift and note; ``ok`` whether the action succeeded (nothing refused, nothing
    drifted). When ``ok`` is false after an install or uninstall, nothing was written.
    """

    action: Action
    dest: str
    harness: str
    written: tuple[str, ...] = ()
    removed: tuple[str, ...] = ()
    unchanged: tuple[str, ...] = ()
    findings: tuple[InstallFinding, ...] = ()
    dry_run: bool = False

    @property
    def ok(self) -> bool:
        return not any(finding.severity == "error" for finding in self.findings)


@attrs.frozen
class _Entry:
    path: str
    sha256: str
    kind: str


@attrs.frozen
class _Manifest:
    harness: str
    source_digest: str
    token_map_digest: str
    files: tuple[_Entry, ...]
    folders: tuple[str, ...]
    # Looked up once per file: a scan would make a manifest of n files cost n * n (T315).
    _by_path: dict[str, _Entry] = attrs.field(
        init=False,
        eq=False,
        repr=False,
        default=attrs.Factory(lambda self: {e.path: e for e in self.files}, takes_self=True),
    )

    def get(self, path: str) -> _Entry | None:
        return self._by_path.get(path)


def _bad_manifest(reason: str) -> MalformedSkillError:
    return MalformedSkillError("manifest_invalid", f"{MANIFEST_FILE}: {reason}")


def _text(document: dict[str, object], key: str) -> str:
    value = document.get(key)
    if not isinstance(value, str):
        raise _bad_manifest(f"{key!r} must be a string")
    return value


def _relpath(value: object) -> str:
    if not isinstance(value, str):
        raise _bad_manifest("a path must be a string")
    try:
        parts = split_name(value)
    except SkillError as exc:
        raise _bad_manifest(f"the path {safe_repr(value)} is not a name in the folder") from exc
    if not parts or any(part.startswith(".") for part in parts):
        raise _bad_manifest(f"the path {safe_repr(value)} is not a name in the folder")
    return value


def parse_manifest(raw: bytes) -> _Manifest:
    """The manifest's bytes, strictly: any defect is ``manifest_invalid``."""
    if len(raw) > MANIFEST_MAX_BYTES:
        raise _bad_manifest(f"larger than {MANIFEST_MAX_BYTES} bytes")
    document = load_json_object(raw, what=MANIFEST_FILE, max_bytes=MANIFEST_MAX_BYTES)
    if document.get("format") != MANIFEST_FORMAT:
        raise _bad_manifest(f"'format' is not {MANIFEST_FORMAT!r}")
    files = document.get("files")
    folders = document.get("folders", [])
    if not isinstance(files, list) or not isinstance(folders, list):
        raise _bad_manifest("'files' and 'folders' must be lists")
    entries: list[_Entry] = []
    for item in files:
        if not isinstance(item, dict) or set(item) != {"path", "sha256", "kind"}:
            raise _bad_manifest("each file is exactly {path, sha256, kind}")
        digest = item["sha256"]
        if not isinstance(digest, str) or len(digest) != 64 or not set(digest) <= _SHA256_HEX:
            raise _bad_manifest("a sha256 must be 64 lowercase hex digits")
        kind = item["kind"]
        if kind not in ("agent", "native", "skill"):
            raise _bad_manifest("a file's kind is agent, native or skill")
        entries.append(_Entry(_relpath(item["path"]), digest, str(kind)))
    if len({entry.path for entry in entries}) != len(entries):
        raise _bad_manifest("a path is listed twice")
    harness = _text(document, "harness")
    if SLUG.fullmatch(harness) is None:  # it is printed: a slug, as install wrote it (T311)
        raise _bad_manifest("'harness' must be a harness name (a lowercase slug)")
    # An install lists only the folders of the files it wrote: any other folder is
    # one skillguard did not make, and uninstall would remove it when empty (T312).
    parents = {
        "/".join(parts[:depth])
        for entry in entries
        for parts in (entry.path.split("/"),)
        for depth in range(1, len(parts))
    }
    listed = tuple(_relpath(folder) for folder in folders)
    if not set(listed) <= parents:
        raise _bad_manifest("a folder is listed that holds no listed file")
    return _Manifest(
        harness=harness,
        source_digest=_text(document, "source_digest"),
        token_map_digest=_text(document, "token_map_digest"),
        files=tuple(entries),
        folders=listed,
    )


def _manifest_bytes(plan: InstallPlan) -> bytes:
    folders = sorted(
        {
            "/".join(item.path.split("/")[:depth])
            for item in plan.items
            for depth in range(1, item.path.count("/") + 1)
        }
    )
    document = {
        "format": MANIFEST_FORMAT,
        "harness": plan.harness,
        "source_digest": plan.source_digest,
        "token_map_digest": plan.token_map_digest,
        "files": [{"path": i.path, "sha256": i.sha256, "kind": i.kind} for i in plan.items],
        "folders": folders,
    }
    return (json.dumps(document, indent=2, ensure_ascii=True) + "\n").encode("ascii")


def _read_manifest(folder: InstallFolder) -> _Manifest | None:
    raw = folder.read_own(MANIFEST_FILE, cap=MANIFEST_MAX_BYTES)
    return None if raw is None else parse_manifest(raw)


def _digest_of(folder: InstallFolder, path: str) -> str | None:
    """The sha256 of the regular file *path* now (``None``: absent)."""
    data = folder.read(path, cap=_MAX_INSTALLED_BYTES)
    return None if data is None else hashlib.sha256(data).hexdigest()


def _names(force: object) -> frozenset[str]:
    if isinstance(force, (str, bytes)) or not isinstance(force, (list, tuple, set, frozenset)):
        raise SkillUsageError("bad_argument", "force must be a collection of names")
    if not all(isinstance(name, str) for name in force):
        raise SkillUsageError("bad_argument", "force must name files by str")
    return frozenset(force)


def _listed_as(manifest: _Manifest | None, path: str, digest: str) -> bool:
    entry = manifest.get(path) if manifest is not None else None
    return entry is not None and entry.sha256 == digest


def _open(dest: str, *, create: bool) -> InstallFolder | None:
    try:
        return InstallFolder(dest, create=create)
    except SkillNotFoundError as exc:
        if exc.code == "missing" and not create:
            return None
        raise


def _conflict(path: str, code: str, message: str) -> InstallFinding:
    return InstallFinding(subject=path, kind="conflict", code=code, message=message)


def _judge(
    folder: InstallFolder,
    path: str,
    manifest: _Manifest | None,
    force: Collection[str],
    *,
    hint: str = "",
) -> tuple[bool | None, InstallFinding | None, str]:
    """Whether *path* may be written: (replace?, refusal, the digest judged). ``None``:
    nothing is there. The digest is the one the file must still have when it is
    replaced (T317); a file that could not be read has none (``""``), so it never is."""
    try:
        info = folder.lstat(path)
        if info is None:
            return None, None, ""
        if stat.S_ISLNK(info.st_mode):
            return (
                False,
                _conflict(path, "symlink", f"{path} is a symlink; it is never replaced"),
                "",
            )
        if not stat.S_ISREG(info.st_mode):
            return (
                False,
                _conflict(
                    path, "not_regular_file", f"{path} is not a regular file; it is never replaced"
                ),
                "",
            )
        digest = _digest_of(folder, path) or ""
    except SkillError as exc:
        return False, finding_of(path, exc), ""
    entry = manifest.get(path) if manifest is not None else None
    if (entry is not None and entry.sha256 == digest) or path in force:
        return True, None, digest
    hint = hint or f" (--force {path} replaces it)"
    if entry is not None:
        return (
            False,
            _conflict(
                path,
                "edited_since_install",
                f"{path} was changed since skillguard installed it{hint}",
            ),
            digest,
        )
    return (
        False,
        _conflict(path, "not_ours", f"{path} exists and skillguard did not write it{hint}"),
        digest,
    )


def install_plan(
    plan: InstallPlan,
    dest: str | os.PathLike[str],
    *,
    force: Collection[str] = (),
    dry_run: bool = False,
) -> InstallReport:
    """Put *plan* into *dest*, all or nothing (see the module docstring).

    Returns an ``InstallReport``; when it is not ``ok``, nothing was written. Raises
    ``SkillContainmentError`` / ``SkillNotFoundError`` when *dest* itself cannot be
    used (a symlink), ``SkillUsageError`` for bad arguments; any other exception is a
    bug.
    """
    if not isinstance(plan, InstallPlan):
        raise SkillUsageError("bad_argument", "plan must be an InstallPlan")
    dest = operator_path(dest, "dest")
    names = _names(force)
    report = attrs.evolve(
        InstallReport(action="install", dest=dest, harness=plan.harness, dry_run=dry_run),
        findings=plan.findings,
    )
    if not plan.ok:
        return report
    folder = _open(dest, create=not dry_run)
    if folder is None:  # a dry run into a folder that does not exist yet
        return attrs.evolve(report, written=tuple(item.path for item in plan.items))
    with folder:
        try:
            manifest = _read_manifest(folder)
        except SkillError as exc:
            return attrs.evolve(report, findings=(*plan.findings, finding_of(MANIFEST_FILE, exc)))
        if manifest is not None and manifest.harness != plan.harness:
            return attrs.evolve(
                report,
                findings=(
                    *plan.findings,
                    _conflict(
                        MANIFEST_FILE,
                        "other_harness",
                        f"{dest} holds an install for {safe_repr(manifest.harness)}",
                    ),
                ),
            )
        _check_force(names, plan, manifest)
        return _install(folder, plan, manifest, names, report)


def _check_force(names: frozenset[str], plan: InstallPlan, manifest: _Manifest | None) -> None:
    """Refuse a *force* name that is no file this install writes or removes: a typo
    would otherwise pass unnoticed, the install going on as if it had been applied."""
    if not names:
        return
    known = {item.path for item in plan.items}
    if manifest is not None:
        known.update(entry.path for entry in manifest.files)
    stray = sorted(names - known)
    if stray:
        shown = ", ".join(safe_repr(name) for name in stray[:5])
        raise SkillUsageError(
            "bad_argument",
            f"force names {shown}{' and more' if len(stray) > 5 else ''}, which this "
            "install neither writes nor removes",
        )


def _install(
    folder: InstallFolder,
    plan: InstallPlan,
    manifest: _Manifest | None,
    force: frozenset[str],
    report: InstallReport,
) -> InstallReport:
    findings = list(plan.findings)
    writes: list[tuple[str, bytes, bool]] = []
    judged: dict[str, str | None] = {}
    unchanged: list[str] = []
    for item in plan.items:
        replace, refusal, digest = _judge(folder, item.path, manifest, force)
        judged[item.path] = digest if replace else None
        if refusal is not None:
            findings.append(refusal)
        elif (
            replace
            and _listed_as(manifest, item.path, item.sha256)
            and judged[item.path] == item.sha256
        ):
            unchanged.append(item.path)
        else:
            writes.append((item.path, item.data, bool(replace)))
    planned = {item.path for item in plan.items}
    removals: list[str] = []
    for entry in manifest.files if manifest is not None else ():
        if entry.path in planned:
            continue
        replace, refusal, digest = _judge(folder, entry.path, manifest, force)
        if refusal is not None:
            findings.append(refusal)
        elif replace is not None:
            removals.append(entry.path)
            judged[entry.path] = digest
    report = attrs.evolve(
        report,
        findings=tuple(findings),
        written=tuple(path for path, _, _ in writes),
        removed=tuple(removals),
        unchanged=tuple(unchanged),
    )
    if not report.ok:
        return attrs.evolve(report, written=(), removed=(), unchanged=())
    if report.dry_run:
        return report
    staged: list[Staged] = []
    try:
        for path, data, replace in writes:
            expected = judged[path] if replace else None
            staged.append(
                folder.stage(
                    path, data, replace=replace, expected=expected, cap=_MAX_INSTALLED_BYTES
                )
            )
        for path in removals:
            removal = folder.removal(path, expected=judged[path], cap=_MAX_INSTALLED_BYTES)
            if removal is not None:
                staged.append(removal)
        staged.append(folder.stage_own(MANIFEST_FILE, _manifest_bytes(plan)))
    except SkillError as exc:
        folder.discard(staged)
        return attrs.evolve(
            report, written=(), removed=(), findings=(*report.findings, _failed(exc))
        )
    try:
        folder.commit(staged)
    except SkillError as exc:
        return attrs.evolve(
            report, written=(), removed=(), findings=(*report.findings, _failed(exc))
        )
    return report


def _failed(exc: SkillError) -> InstallFinding:
    return InstallFinding(
        subject=MANIFEST_FILE,
        kind=exc.kind,
        code=exc.code,
        message=f"{exc.reason}; nothing was written (the folder is as it was)",
    )


def check_install(plan: InstallPlan, dest: str | os.PathLike[str]) -> InstallReport:
    """Compare *dest* with its manifest and with *plan*; writes nothing.

    Every drift is a finding of kind ``drift`` (see the module docstring).
    """
    if not isinstance(plan, InstallPlan):
        raise SkillUsageError("bad_argument", "plan must be an InstallPlan")
    dest = operator_path(dest, "dest")
    report = InstallReport(action="check", dest=dest, harness=plan.harness, findings=plan.findings)
    findings = list(plan.findings)

    def drift(path: str, code: str, message: str) -> None:
        findings.append(InstallFinding(subject=path, kind="drift", code=code, message=message))

    folder = _open(dest, create=False)
    if folder is None:
        drift(dest, "not_installed", f"{dest} does not exist")
        return attrs.evolve(report, findings=tuple(findings))
    unchanged: list[str] = []
    with folder:
        try:
            manifest = _read_manifest(folder)
        except SkillError as exc:
            return attrs.evolve(report, findings=(*findings, finding_of(MANIFEST_FILE, exc)))
        if manifest is None:
            drift(MANIFEST_FILE, "not_installed", "skillguard has installed nothing here")
            return attrs.evolve(report, findings=tuple(findings))
        if manifest.harness != plan.harness:
            drift(MANIFEST_FILE, "other_harness", f"{dest} holds an install for another harness")
        if manifest.source_digest != plan.source_digest:
            drift(MANIFEST_FILE, "source_changed", "a source file changed since the install")
        if manifest.token_map_digest != plan.token_map_digest:
            drift(MANIFEST_FILE, "token_map_changed", "the token map changed since the install")
        for entry in manifest.files:
            try:
                digest = _digest_of(folder, entry.path)
            except SkillError as exc:
                findings.append(finding_of(entry.path, exc))
                continue
            if digest is None:
                drift(entry.path, "missing_file", f"{entry.path} was installed and is gone")
            elif digest != entry.sha256:
                drift(entry.path, "edited", f"{entry.path} was changed since the install")
            else:
                unchanged.append(entry.path)
        planned = {item.path: item for item in plan.items}
        for item in plan.items:
            listed = manifest.get(item.path)
            if listed is None:
                drift(item.path, "not_installed", f"{item.path} would be installed")
            elif listed.sha256 != item.sha256:
                drift(item.path, "stale", f"{item.path} differs from what would be installed")
        for entry in manifest.files:
            if entry.path not in planned:
                drift(entry.path, "stale", f"{entry.path} would be removed")
    return attrs.evolve(report, findings=tuple(findings), unchanged=tuple(unchanged))


def uninstall(dest: str | os.PathLike[str], *, dry_run: bool = False) -> InstallReport:
    """Remove exactly what the manifest in *dest* lists, all or nothing.

    A listed file changed by hand (``edited_since_install``), a symlink or a
    non-regular file at a listed name refuses the whole uninstall. A listed file
    already gone is a note. Folders the install made are removed when empty.
    """
    dest = operator_path(dest, "dest")
    folder = _open(dest, create=False)
    report = InstallReport(action="uninstall", dest=dest, harness="", dry_run=dry_run)
    if folder is None:
        return attrs.evolve(
            report,
            findings=(
                InstallFinding(
                    subject=dest, kind="not_found", code="missing", message=f"{dest} does not exist"
                ),
            ),
        )
    with folder:
        try:
            manifest = _read_manifest(folder)
        except SkillError as exc:
            return attrs.evolve(report, findings=(finding_of(MANIFEST_FILE, exc),))
        if manifest is None:
            return attrs.evolve(
                report,
                findings=(
                    InstallFinding(
                        subject=MANIFEST_FILE,
                        kind="not_found",
                        code="no_manifest",
                        message=f"{dest} holds no {MANIFEST_FILE}: nothing was installed here",
                    ),
                ),
            )
        report = attrs.evolve(report, harness=manifest.harness)
        findings: list[InstallFinding] = []
        removals: list[_Entry] = []
        for entry in manifest.files:
            replace, refusal, _ = _judge(
                folder, entry.path, manifest, (), hint=": it is kept, and so is every other file"
            )
            if refusal is not None:
                findings.append(refusal)
            elif replace is None:
                findings.append(
                    InstallFinding(
                        subject=entry.path,
                        kind="note",
                        code="missing_file",
                        message=f"{entry.path} was already gone",
                        severity="note",
                    )
                )
            else:
                removals.append(entry)
        report = attrs.evolve(
            report, findings=tuple(findings), removed=tuple(entry.path for entry in removals)
        )
        if not report.ok:
            return attrs.evolve(report, removed=())
        if dry_run:
            return report
        staged: list[Staged] = []
        try:
            for entry in removals:
                removal = folder.removal(
                    entry.path, expected=entry.sha256, cap=_MAX_INSTALLED_BYTES
                )
                if removal is not None:
                    staged.append(removal)
            staged.append(folder.removal_own(MANIFEST_FILE))
            folder.commit(staged)
        except SkillError as exc:
            folder.discard(staged)
            return attrs.evolve(report, removed=(), findings=(*findings, _failed(exc)))
        for path in sorted(manifest.folders, key=lambda p: -p.count("/")):
            try:
                if not folder.remove_folder(path):
                    findings.append(
                        InstallFinding(
                            subject=path,
                            kind="note",
                            code="folder_kept",
                            message=f"{path} holds files skillguard did not write: kept",
                            severity="note",
                        )
                    )
            except SkillError as exc:  # noqa: PERF203 - one folder must not stop the others
                findings.append(attrs.evolve(finding_of(path, exc), severity="note"))
        return attrs.evolve(report, findings=tuple(findings))
