"""Gradescope's *Export Submissions* zip, read without trusting it: ``submission_metadata.yml`` and one folder per
submission.

The metadata is YAML that Ruby wrote (symbols as ``:key``, ``ActiveSupport::TimeWithZone`` times): it is parsed
with a loader that refuses aliases and merges and caps the number of nodes (:class:`_LimitedComposer`), and every
submitter is their ``sid`` and e-mail, never their name.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import PurePosixPath
from typing import Any

from yaml import YAMLError  # type: ignore[import-untyped]
from yaml.composer import Composer  # type: ignore[import-untyped]
from yaml.constructor import SafeConstructor  # type: ignore[import-untyped]
from yaml.events import AliasEvent  # type: ignore[import-untyped]
from yaml.nodes import MappingNode, ScalarNode, SequenceNode  # type: ignore[import-untyped]
from yaml.resolver import Resolver  # type: ignore[import-untyped]

from ...validation import time_or_none
from ..archive import (
    _MAX_ID,
    _MAX_SUBMITTERS,
    CollectError,
    CollectLimits,
    _Candidate,
    _folder_name,
    _Identity,
    _Member,
    _nfc,
    _shown,
    _Skip,
    _stream,
)

try:  # libyaml's parser for the events; the nodes are composed here, with the limits
    from yaml.cyaml import CParser  # type: ignore[import-untyped]

    _PARSER_BASES: tuple[type, ...] = (CParser,)

    def _start_parser(loader: Any, text: str) -> None:
        CParser.__init__(loader, text)

except ImportError:  # PyYAML without libyaml: its pure-Python reader, scanner and parser
    from yaml.parser import Parser  # type: ignore[import-untyped]
    from yaml.reader import Reader  # type: ignore[import-untyped]
    from yaml.scanner import Scanner  # type: ignore[import-untyped]

    _PARSER_BASES = (Reader, Scanner, Parser)

    def _start_parser(loader: Any, text: str) -> None:
        Reader.__init__(loader, text)
        Scanner.__init__(loader)
        Parser.__init__(loader)


METADATA = "submission_metadata.yml"

METADATA_NOTE = "Gradescope's metadata (read; not a submission)"


class _MetadataRefused(Exception):
    """Metadata over a cap of :class:`CollectLimits`, or using merge keys; the message says which."""


_MERGE = "tag:yaml.org,2002:merge"

_NULL = "tag:yaml.org,2002:null"


class _LimitedComposer(Composer):
    """PyYAML's composer, counting as it goes: nodes, aliases, nesting, time; merge keys refused."""

    def limit(self, limits: CollectLimits) -> None:
        self.limits = limits
        self.deadline = time.monotonic() + limits.metadata_seconds
        self.nodes = self.aliases = self.depth = 0

    def compose_node(self, parent: Any, index: Any) -> Any:
        limits = self.limits
        if time.monotonic() > self.deadline:
            raise _MetadataRefused(f"took more than {limits.metadata_seconds:g} s to read")
        self.nodes += 1
        if self.nodes > limits.max_metadata_nodes:
            raise _MetadataRefused(f"has more than {limits.max_metadata_nodes:,} YAML nodes")
        if self.check_event(AliasEvent):
            self.aliases += 1
            if self.aliases > limits.max_metadata_aliases:
                raise _MetadataRefused(f"has more than {limits.max_metadata_aliases:,} YAML aliases")
            return super().compose_node(parent, index)
        self.depth += 1
        try:
            if self.depth > limits.max_metadata_depth:
                raise _MetadataRefused(f"is nested deeper than {limits.max_metadata_depth} levels")
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1

    def compose_mapping_node(self, anchor: Any) -> Any:
        node = super().compose_mapping_node(anchor)
        if any(key.tag == _MERGE for key, _ in node.value):
            raise _MetadataRefused("uses YAML merge keys (<<), which Gradescope never writes")
        return node


class _MetadataLoader(_LimitedComposer, *_PARSER_BASES, SafeConstructor, Resolver):  # type: ignore[misc]
    """A YAML loader that only composes nodes (with :class:`_LimitedComposer`'s limits); nothing is constructed
    but the few scalars read from them."""

    def __init__(self, text: str, limits: CollectLimits) -> None:
        _start_parser(self, text)
        Composer.__init__(self)
        SafeConstructor.__init__(self)
        Resolver.__init__(self)
        self.limit(limits)


@dataclass(frozen=True)
class _Submission:
    """One folder of the export, as its metadata describes it."""

    people: list[_Identity]
    created_at: datetime | None
    number: int

    @property
    def order(self) -> tuple[float, ...]:
        when = self.created_at
        if when is not None and when.tzinfo is None:
            when = when.replace(tzinfo=UTC)
        return (when.timestamp() if when else float("-inf"), self.number)


def _text(node: Any) -> str | None:
    """A scalar's text as written (``'0012'`` stays ``0012``), at most :data:`_MAX_ID` characters; else None."""
    if not isinstance(node, ScalarNode) or node.tag == _NULL or not isinstance(node.value, str):
        return None
    return node.value if len(node.value) <= _MAX_ID else None


def _fields(node: Any) -> dict[str, Any]:
    """A mapping node's values by key, ``:key`` (Ruby's symbols) and ``key`` alike; the first of a repeated key."""
    found: dict[str, Any] = {}
    for key, value in node.value if isinstance(node, MappingNode) else ():
        name = _text(key)
        if name is not None:
            found.setdefault(name.removeprefix(":"), value)
    return found


def _created_at(node: Any) -> datetime | None:
    """A scalar time, or Ruby's ``ActiveSupport::TimeWithZone`` object (its ``utc`` field)."""
    if isinstance(node, MappingNode):
        return time_or_none(_text(_fields(node).get("utc")), zone=UTC)
    return time_or_none(_text(node), zone=UTC)


def _submitter(node: Any, folder: str) -> _Identity | None:
    fields = _fields(node)
    name, sid, email = (_nfc(_text(fields.get(k)) or "") for k in ("name", "sid", "email"))
    sid, email = (value if _shown(value) == value else "" for value in (sid, email))  # no escapes in an id
    if not sid and not email:
        return None  # a name alone is the student's own to choose: never an identity
    email = email.casefold()
    local = email.split("@", 1)[0]
    label = f"{_shown(name) or '?'} (sid {sid or '?'}, {email or 'no email'})"
    base = _folder_name(local or sid, f"gradescope_{folder}")
    return _Identity(f"gradescope:{sid}\n{email}", base, label, sid=sid, email=email, suffix=sid or email)


def _submission(folder: str, node: Any) -> _Submission | str:
    fields = _fields(node)
    submitters = fields.get("submitters")
    if not isinstance(submitters, SequenceNode) or not submitters.value:
        return f"no submitter for {folder!r} in {METADATA}"
    if len(submitters.value) > _MAX_SUBMITTERS:
        return f"more than {_MAX_SUBMITTERS} submitters for {folder!r} in {METADATA}"
    people = [who for entry in submitters.value if (who := _submitter(entry, folder)) is not None]
    if not people:
        return f"no submitter with a sid or e-mail for {folder!r} in {METADATA}"
    number = re.fullmatch(r"submission_([0-9]{1,18})", folder)
    return _Submission(people, _created_at(fields.get("created_at")), int(number[1]) if number else 0)


def _read_metadata(members: list[_Member], limits: CollectLimits) -> tuple[str, dict[str, _Submission | str]]:
    """The export's top folder and, per submission folder, who and when (or why not); :class:`CollectError`
    when there is no metadata, it is over a cap, or it is not YAML."""
    found = [
        m for m in members if PurePosixPath(m.name).name == METADATA and not m.problem and "__MACOSX" not in m.name
    ]
    if not found:
        raise CollectError(f"no {METADATA} in the archive: not Gradescope's Export Submissions")
    top = min(m.name.count("/") for m in found)
    member, *others = [m for m in found if m.name.count("/") == top]
    if others:
        raise CollectError(f"two {METADATA} at the top of the archive ({member.name}, {others[0].name})")
    chunks: list[bytes] = []
    cap = limits.max_metadata_bytes
    try:
        _stream(member, cap, chunks.append, lambda size: None)
        loader = _MetadataLoader(b"".join(chunks).decode("utf-8"), limits)
        root = loader.get_single_node()
    except _Skip as err:
        raise CollectError(f"{member.name}: {err}") from None
    except _MetadataRefused as err:
        raise CollectError(f"{member.name}: refused: it {err}") from None
    except (YAMLError, UnicodeDecodeError, RecursionError, TypeError, ValueError) as err:
        raise CollectError(f"{member.name}: not readable YAML ({type(err).__name__})") from None
    if not isinstance(root, MappingNode):
        raise CollectError(f"{member.name}: not a mapping of submission folders")
    submissions: dict[str, _Submission | str] = {}
    for key, node in root.value:
        folder = _text(key)
        if folder is not None:
            twice = f"folder {folder!r} is listed twice in {METADATA}"
            submissions[folder] = twice if folder in submissions else _submission(folder, node)
    member.problem = METADATA_NOTE
    parent = str(PurePosixPath(member.name).parent)
    return ("" if parent == "." else parent + "/"), submissions


def _gradescope(
    member: _Member, root: str, submissions: dict[str, _Submission | str], due: datetime | None
) -> _Candidate | str:
    if member.name.startswith("__MACOSX/") or PurePosixPath(member.name).name.startswith("._"):
        return "macOS metadata (__MACOSX, ._ files)"
    if not member.name.startswith(root):
        return "outside the export's folder"
    folder = member.name[len(root) :].split("/", 1)[0]
    submission = submissions.get(folder)
    if submission is None:
        return f"folder {folder!r} is not in {METADATA}"
    if isinstance(submission, str):
        return submission
    when = submission.created_at
    late = None
    if when is not None and due is not None and (when.tzinfo is None) == (due.tzinfo is None):
        late = when > due
    uploaded = PurePosixPath(member.name).name
    return _Candidate(member, uploaded, list(submission.people), when, late, submission.order)
