# ruff: noqa: E501 - one row per line, as README.md shows it: a meaning is not wrapped
"""Every error code skillguard reports, with its kind and meaning: written once, here.

An error's ``kind`` says which branch of the error tree it is (who is at fault, or
which decision refused); its ``code`` names the cause, one name per cause across the
whole API: a human's "no" is ``denied`` for a skill and for an agent file alike, a name
the policy does not grant is ``not_granted`` whether or not a skill of that name
exists. The docs' error table (docs/reference/errors.md) is this table (``tests/test_docs.py`` holds the two
equal, row by row, and checks that every raise site in ``src/`` uses a code listed
here under its class's kind, and that every code listed is raised somewhere).

``RECORD_CODES`` are the codes an audit record can carry that no error carries (a
cancelled call, an evicted request): every other record's ``code`` is an error's.

Nothing imports this module at run time: it is data for the tests and the docs, so it
costs ``import skillguard`` nothing.
"""

from __future__ import annotations

from typing import Final, NamedTuple

__all__ = ["ERROR_CODES", "KINDS", "RECORD_CODES", "Code", "markdown_table"]


class Code(NamedTuple):
    """One row of the table: the error's kind, its code, and what it means (one line,
    Markdown, as README.md shows it)."""

    kind: str
    code: str
    meaning: str


# The kinds, in the order of the README's table (the error tree, top to bottom).
KINDS: Final = (
    "malformed",
    "containment",
    "not_found",
    "not_granted",
    "unknown",
    "approval",
    "audit",
    "policy",
    "usage",
)

# fmt: off
ERROR_CODES: Final[tuple[Code, ...]] = (
    Code("malformed", "too_large", "the file is over `max_skill_bytes`; a strict JSON document (`frontmatter.json`, `token-map.json`) over its cap"),
    Code("malformed", "bad_encoding", "not valid UTF-8 (a SKILL.md, an agent file or a strict JSON document)"),
    Code("malformed", "control_character", "a control character, U+2028/U+2029 or U+FEFF in the frontmatter (raw or escaped), an escaped lone surrogate, or NUL in the body; under `strict`, a control some readers take for a line break (VT, FF, FS, GS, RS, NEL) in the body"),
    Code("malformed", "no_opening_fence", "line 1 is not `---`"),
    Code("malformed", "no_closing_fence", "no later `---` line"),
    Code("malformed", "frontmatter_too_large", "the frontmatter is over `max_frontmatter_bytes`, or no closing fence is within it"),
    Code("malformed", "yaml_syntax", "the frontmatter is not valid YAML"),
    Code("malformed", "yaml_anchor", "an anchor (`&a`)"),
    Code("malformed", "yaml_alias", "an alias (`*a`)"),
    Code("malformed", "yaml_tag", "an explicit tag (`!!str`, `!foo`, `!`)"),
    Code("malformed", "yaml_directive", "a line starting with `%` (`%YAML`, `%TAG`, reserved directives)"),
    Code("malformed", "yaml_multiple_documents", "a second YAML document, or a `...` end marker line"),
    Code("malformed", "yaml_merge_key", "a merge key (`<<`)"),
    Code("malformed", "yaml_complex_key", "a mapping key that is a list or mapping"),
    Code("malformed", "yaml_null_key", "an empty, unquoted mapping key"),
    Code("malformed", "yaml_ambiguous", "an unquoted `:` or `?` inside `[...]` or `{...}`, `#` right after a block scalar header, or spaces-only lines leading a block scalar"),
    Code("malformed", "tab_character", "a tab outside a quoted string"),
    Code("malformed", "duplicate_key", 'a key repeated in one mapping, at any depth (`a`, `\'a\'` and `"a"` are one key), or in one strict JSON object'),
    Code("malformed", "too_deep", "nesting deeper than `max_depth`, or than the strict JSON cap"),
    Code("malformed", "too_many_nodes", "more than `max_nodes` YAML nodes"),
    Code("malformed", "scalar_too_long", "a key or value over `max_scalar_bytes`"),
    Code("malformed", "not_a_mapping", "the frontmatter is empty, a list or a string; the top level of a strict JSON document is not an object"),
    Code("malformed", "missing_field", "`name` or `description` is missing (`frontmatter.json`: `name`, `description` or `tools`)"),
    Code("malformed", "wrong_type", "a field has the wrong type (`frontmatter.json`: `tools` is an array of strings)"),
    Code("malformed", "empty_field", "a field, a tool or a step is blank; `frontmatter.json`: an empty `name`, `description`, `tools` or tool name, or no tool left once `null` tools are omitted"),
    Code("malformed", "malformed_tools", "the parentheses of `allowed-tools` (or of one of its items) do not balance"),
    Code("malformed", "field_too_long", "`description` or `compatibility` is over its length"),
    Code("malformed", "forbidden_character", "a character that hides or reorders text in a spec field, a tool, a step, or (strict) the body, with `line` and, in the body, `column`"),
    Code("malformed", "invalid_name", "`name` is not a valid identifier"),
    Code("malformed", "invalid_namespace", "with `namespaces=True`, the namespace of `name` (`namespace/short-name`) breaks the namespaced-skills format's rule, or `name` holds more than one `/`"),
    Code("malformed", "name_mismatch", "`name` differs from the folder name"),
    Code("malformed", "bad_arguments", "skill tool arguments that are over 4 KiB, not strict JSON (a repeated key, `NaN`), or not an object holding exactly a string `name`"),
    Code("malformed", "not_text", "`skill_resource` over MCP: the file is not UTF-8 text"),
    Code("malformed", "json_syntax", "strict JSON (`frontmatter.json`, `token-map.json`): not valid JSON (line and column named)"),
    Code("malformed", "json_comment", "strict JSON: a `//` or `/*` comment (JSON has none; the agent-cortex format's own example carries `// optional`)"),
    Code("malformed", "json_non_finite", "strict JSON: `NaN`, `Infinity` or `-Infinity`"),
    Code("malformed", "unknown_field", "`frontmatter.json`: a key other than `name`, `description`, `tools`, `model`, `argumentHint` (in a SKILL.md an unknown field is a warning)"),
    Code("malformed", "token_map_schema", "`token-map.json` breaks its schema (an unknown key in `tools`, `paths` or `agents`, a harness not listed, a wrong type, a `{` or `}` in a value other than a path's `${ENV_VAR}`)"),
    Code("malformed", "token_map_version", "`token-map.json` (or its `contract`) has a version this skillguard does not read; the message gives the range it reads (1 to 1)"),
    Code("malformed", "token_map_contract", "`token-map.json`'s `contract`: `harness_ids` is not exactly `harnesses`, or `substitution_order` is not `SECTION`, `TOOL`, `PATH` in an order with `SECTION` first"),
    Code("malformed", "manifest_invalid", "`agent install` / `uninstall`: `.skillguard-install.json` in `--dest` does not read (strict JSON, a closed schema, every path a plain name beneath `--dest`); nothing is written or removed"),
    Code("malformed", "unknown_path_base", "`token-map.json`: a `base` that is not a plain path for that harness"),
    Code("malformed", "path_not_relative", "a `{{PATH:}}` not in the map, or a `relative`, that is absolute or holds `..`"),
    Code("malformed", "frontmatter_in_agent_md", "`agent.md` starts with a `---` fence"),
    Code("malformed", "bad_agent_name", "an agent folder that is not a lowercase slug, or a Claude native name that is not one once its prefix is stripped"),
    Code("malformed", "bad_section_name", "a `{{SECTION:}}` name that is not a lowercase slug (no file is looked at)"),
    Code("malformed", "missing_section", "a `{{SECTION:name}}` with no `<harness>/<name>.md`"),
    Code("malformed", "unknown_tool", "a `{{TOOL:}}` the token map has no entry for, for this harness"),
    Code("malformed", "null_tool", "a `{{TOOL:}}` in the body that is `null` for this harness (without `--drop-null-tools`)"),
    Code("malformed", "unknown_path", "a `{{PATH:}}` in the token map with no entry for this harness"),
    Code("malformed", "leftover_token", "a `{{` left after substitution (a section's own `{{SECTION:}}`, a typo, a token split by a line break or never closed), named escaped"),
    Code("malformed", "too_many_harnesses", "an agent folder with more harness folders than `max_harnesses`"),
    Code("malformed", "too_many_sections", "a harness folder with more section files than `max_sections`"),
    Code("malformed", "composed_too_large", "the composed text would be over `max_composed_bytes`"),
    Code("malformed", "not_one_line", "an agent file's (or `frontmatter.json`'s) `name`, `model` or a `tools` entry holds a line break or a tab"),
    Code("malformed", "composed_invalid", "the composed file does not read back, as an agent file, to exactly the JSON's values"),
    Code("malformed", "no_valid_harness", "`agent validate`: no harness folder of the agent composes"),
    Code("malformed", "unlisted_harness", "`agent validate`: a harness folder the token map does not list; `load_agent_context` (`pi` preset): the repository's token map does not list `pi`"),
    Code("containment", "symlink", "a symlink where a file or folder was expected, or on the way to it"),
    Code("containment", "not_regular_file", "a FIFO, socket, device or directory where a file was expected"),
    Code("containment", "not_a_directory", "a path component is not a directory, or a file `PATH` ends with `/`"),
    Code("containment", "hardlink", "a file with more than one link (without `allow_hardlinks`)"),
    Code("containment", "cross_device", "a file or folder on another file system (without `allow_cross_device`)"),
    Code("containment", "path_escape", "an absolute path, or `.` or `..` in a path"),
    Code("containment", "bad_name", "an empty component (`//`, trailing `/`), a control character, backslash, non-UTF-8 or over-long name; or a name a model asked the skill tool for that is not a skill name (`invoke`, `prepare_call`)"),
    Code("containment", "hidden_character", "a file or folder name holding a character that hides or reorders text (a bidi override, tag characters)"),
    Code("containment", "too_large", "a resource over its cap (`SafeRoot.read_file`)"),
    Code("containment", "too_many_entries", "`read_core_knowledge`: an entry past the first `max_resource_files`"),
    Code("containment", "changed_after_approval", "a file of an approved skill, or a knowledge file of an approved agent file, is no longer the approved one (changed, grown, removed or swapped)"),
    Code("containment", "exists", "`agent install`: a file appeared at a name between the check and the commit; it is kept, and every file already put in place is undone"),
    Code("containment", "edited_since_install", "`agent install` / `uninstall`: a file judged replaceable changed (or became a link) between the check and the commit; it is kept, and every file already put in place is undone"),
    Code("not_found", "missing", "nothing is there"),
    Code("not_found", "unreadable", "it is there but cannot be read, or (`agent compose --output`) written (the OS error is kept)"),
    Code("not_found", "no_skill", "no folder under the path holds a `SKILL.md`"),
    Code("not_found", "wrong_case_skill_file", "`validate`: a folder holds a case variant of `SKILL.md` (`skill.md`) and no `SKILL.md`"),
    Code("not_found", "unknown_skill", "no skill of that name: `SkillRoots.load` and friends (no discovered skill has it), or a name the policy grants that no source holds"),
    Code("not_found", "agent_not_found", "`load_agent_context`: no agent file matches the name or path (`AgentNotFoundError`)"),
    Code("not_granted", "not_granted", "the policy does not grant this agent this skill: the same answer whether or not a skill of that name exists (threat-model.md T23)"),
    Code("not_granted", "user_invocation_only", "a `disable-model-invocation` skill asked for by a model: use `user_invoke`"),
    Code("not_granted", "not_user_invocable", "`user_invoke` of a skill with `user-invocable: false`"),
    Code("not_granted", "not_a_subagent", "`bind(agent, parent=handle)`: the policy does not list the agent among the parent's `subagents`"),
    Code("unknown", "unknown_agent", "`bind`: the policy has no such agent"),
    Code("approval", "denied", "the approver did not approve (or did not answer), for a skill or an agent file"),
    Code("approval", "not_a_decision", "the approver returned something other than a `Decision` (e.g. `True`): the error names what it returned"),
    Code("approval", "stale_decision", "a `Decision` whose `digest` is not the request's: it answers another snapshot than the one asked about"),
    Code("approval", "async_approver", "the approver is async: use `aload` (`aagent_context` for `agent_context`)"),
    Code("approval", "not_issued", "a `PreparedLoad` this loader did not issue, or one already used"),
    Code("approval", "not_approved", "no approval this call can use: `effective_tools(name)` of a workspace skill not approved for this agent yet, a `LoadedSkill` whose approval was withdrawn (`deactivate`), a trust store pin for another snapshot of the folder"),
    Code("approval", "timed_out", "`aload`, `aagent_context`: the approver did not answer within the approval timeout"),
    Code("approval", "too_many_pending", "the agent's share of pending approvals is held by loads still waiting for an approver"),
    Code("approval", "too_many_abandoned", "`aload` or `aagent_context` with a sync approver: `Limits.max_abandoned_approvers` earlier calls nobody waits for still wait for their human"),
    Code("approval", "trust_store", "the trust store file cannot be read or written, is over its 4 MiB cap, or is not valid"),
    Code("approval", "trust_store_full", "a pin would take the trust store past its 4 MiB cap: refused, the store left as it was (revoke pins to make room)"),
    Code("audit", "write_failed", "an audit record could not be written, or the log or its lock cannot be opened for writing (a read-only or full file system: the reason names the file and the OS's reason): the load is denied"),
    Code("audit", "unreadable", "the records of an existing audit log cannot be read back (an I/O error)"),
    Code("audit", "torn_tail", "the last line of the audit log has no newline (a write cut short by a crash or a full disk): `skillguard audit repair` mends it"),
    Code("audit", "not_torn", "`audit repair`: the log is intact, or fails somewhere else than a torn last line; nothing was changed"),
    Code("audit", "corrupt", "the first or last record of an existing audit log cannot be read, or does not verify with the key"),
    Code("audit", "key_mismatch", "an existing audit log was written with another key, or keyed when no key was given (or the reverse); `audit repair` of a keyed log without its key or with another"),
    Code("policy", "bad_policy", "the policy file is invalid, over 1 MiB, unreadable or not a regular file (refused whole); an unknown key is named, with its line and the nearest known key"),
    Code("policy", "widening_subagent", "a sub-agent would get more than its parent: the skills, tools or workspace mode that widen are named"),
    Code("policy", "bad_registry", "the selection registry is invalid (an unknown key, keywords that are not a list of words), over 1 MiB or unreadable"),
    Code("usage", "bad_argument", "an argument of the wrong type (e.g. `raw` not `bytes`)"),
    Code("usage", "bad_profile", "a profile other than `strict` or `compat`"),
    Code("usage", "bad_limit", "a `Limits` value that is not a positive int"),
    Code("usage", "closed", "a `SafeRoot` used after `close()`"),
    Code("usage", "read_only", "an attribute of a `Loader` reassigned after construction"),
    Code("usage", "no_such_tool", "an MCP client called a tool `skillguard mcp` does not serve"),
    Code("usage", "bad_digest", "a pin's digest that is not a sha256 of 64 lowercase hex digits"),
    Code("usage", "unsupported_platform", 'no `O_NOFOLLOW`/`dir_fd` support, or `resolver="openat2"` where the kernel lacks it'),
    Code("usage", "missing_argument", "`load_agent_context`: the agent name or path is absent or empty"),
    Code("usage", "unknown_harness", "`compose`: a harness the token map does not list"),
    Code("usage", "bad_dialect", "`compose`: a dialect other than `verbatim` or `native`"),
)
# fmt: on

RECORD_CODES: Final[tuple[Code, ...]] = (
    Code("record", "cancelled", "the call waiting for the approver was cancelled"),
    Code(
        "record", "embedded_wins", "a workspace skill has the name of an embedded one: never served"
    ),
    Code("record", "evicted", "a pending approval was dropped to stay within the bounds"),
    Code("record", "late_answer", "an approver answered after its call stopped waiting"),
    Code("record", "loop_closed", "the event loop of the loads waiting for an approval was closed"),
)


def markdown_table() -> str:
    """The docs' error table (docs/reference/errors.md), generated from ``ERROR_CODES``."""
    rows = ["| kind | code | meaning |", "|---|---|---|"]
    rows += [f"| {row.kind} | `{row.code}` | {row.meaning} |" for row in ERROR_CODES]
    return "\n".join(rows) + "\n"
