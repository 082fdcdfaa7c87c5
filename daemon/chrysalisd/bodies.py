"""The HTTP API's request bodies (and the answers that are not library models).

Strict and closed: a field of the wrong type or one not listed is a 400 naming it.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Discriminator,
    Field,
    RootModel,
    Strict,
    model_validator,
)
from pydantic import Tag as UnionTag

from chrysalis.core.models import (
    MAX_LIST_ITEMS,
    MAX_SHORT_CHARS,
    Content,
    Filters,
    Id,
    Node,
    Persona,
    Score,
    ShortText,
    SpanRef,
    Tag,
    Text,
    Timestamp,
)
from chrysalis.core.vocab import DEFAULT_ROLE, DEFAULT_STRATEGY, Role, Strategy
from chrysalis.forget.select import MAX_SELECT, Selector


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class BeadIn(_In):
    """A bead to append. Without ``id`` one is generated; without ``ts``, now; without
    ``importance``, one judged from how new its words are to the memory (0.1 to 0.9)."""

    content: Content = Field(description="the text to remember (not empty)")
    id: Id | None = Field(None, description="its id; a new UUIDv7 when absent")
    role: Role = Field(DEFAULT_ROLE, description="who said it")
    session_id: Id | None = Field(None, description="the conversation it belongs to")
    turn_id: Id | None = Field(None, description="the turn within the session")
    ts: Timestamp | None = Field(
        None, description="when it was said (epoch seconds; now when absent)"
    )
    importance: Annotated[float, Field(ge=0.0, le=1.0)] | None = Field(
        None, description="0 to 1; judged from how new its words are when absent"
    )
    tags: Annotated[list[Tag], Field(max_length=MAX_LIST_ITEMS)] = Field(
        [], description="labels to filter and forget by"
    )
    source: ShortText | None = Field(None, description="where it came from (a tool, a file)")
    span_refs: Annotated[list[SpanRef], Field(max_length=MAX_LIST_ITEMS)] = Field(
        [], description="the file lines it came from"
    )


class BeadsIn(
    RootModel[
        Annotated[
            Annotated[BeadIn, UnionTag("one")]
            | Annotated[Annotated[list[BeadIn], Field(max_length=10_000)], UnionTag("many")],
            Discriminator(lambda v: "many" if isinstance(v, list) else "one"),
        ]
    ]
):
    """One bead (an object) or a batch (an array)."""


class RetrieveIn(_In):
    query: Annotated[Text, Field(min_length=1)] = Field(description="what to recall, in words")
    k: Annotated[int, Field(ge=1, le=1000)] = Field(10, description="at most this many items")
    token_budget: Annotated[int, Field(ge=1, le=10_000_000)] | None = Field(
        None, description="stop adding items once their text would pass this many tokens"
    )
    strategy: Strategy = Field(
        DEFAULT_STRATEGY,
        description="every signal fused, or one alone (emb, keyword, kg, beads); `emb` ranks by "
        "vector similarity only: the nearest neighbours the index found",
    )
    filters: Filters | None = Field(None, description="what an item must satisfy")
    now: float | Annotated[datetime, Strict(False)] | None = Field(
        None,
        description="when the query is asked (ISO 8601 or epoch seconds; the daemon's clock if "
        'absent): a span the query names, "last weekend", is read against it',
    )
    as_of: float | Annotated[datetime, Strict(False)] | None = Field(
        None,
        description="walk the facts that held then (ISO 8601 or epoch seconds); by default "
        "those that hold now",
    )
    memories: Annotated[list[Annotated[str, Field(max_length=64)]], Field(max_length=16)] = Field(
        [],
        description="several memories in one ranking (their names; the path's memory is not "
        "added): each item's provenance names its memory",
    )
    min_score: Annotated[float, Field(ge=0.0, le=1000.0)] | None = Field(
        None, description="leave out items scoring under this (a relevance floor; no padding)"
    )


class ContextIn(_In):
    """What `POST /v1/context` reads: a question and what to leave out."""

    query: Annotated[Text, Field(min_length=1)] = Field(description="the question, in words")
    token_budget: Annotated[int, Field(ge=1, le=100_000)] = Field(
        800, description="the context's size at most, in estimated tokens"
    )
    session_id: Id | None = Field(
        None, description="the agent's session: its latest turns (in the prompt) are left out"
    )
    exclude: Annotated[list[Annotated[str, Field(min_length=1, max_length=256)]], Field(
        max_length=1000
    )] = Field([], description="ids to leave out")  # fmt: skip
    now: float | Annotated[datetime, Strict(False)] | None = Field(
        None,
        description="when the question is asked (ISO 8601 or epoch seconds; the daemon's clock "
        "if absent): facts are read as of then, or of the time the question names",
    )
    recent: Annotated[int, Field(ge=0, le=1000)] = Field(
        6, description="how many of the session's latest turns are left out"
    )
    memories: Annotated[list[Annotated[str, Field(max_length=64)]], Field(max_length=16)] = Field(
        [],
        description="read these memories instead (their names; the path's memory is not added): "
        "each fact and item names its memory",
    )


class MemoryIn(_In):
    """A memory to create: its name and the settings it has of its own (the keys of a
    ``[memories.NAME]`` table: remote, sync_key_file, zep_url, zep_api_key_file, extractor,
    push_interval, ...). Where it syncs is never inherited from the daemon's settings."""

    name: Annotated[str, Field(min_length=1, max_length=64)] = Field(
        description="its name, as in /v1/m/{name}/..."
    )
    settings: dict[str, Any] = Field(
        {}, description="its own settings: remote, sync_key_file, zep_url, extractor, ..."
    )


class IngestIn(_In):
    """Exactly one of ``path`` (a file or directory the daemon reads, absolute) or ``text``."""

    path: Annotated[str, Field(min_length=1, max_length=4096)] | None = Field(
        None, description="a file or directory the daemon reads (absolute)"
    )
    text: str | None = Field(None, description="the text itself")
    source: Annotated[str, Field(min_length=1, max_length=512)] | None = Field(
        None, description='what the text is called in span refs ("stdin" when absent)'
    )
    kind: Literal["markdown", "python", "code", "text"] | None = Field(
        None, description="how to chunk it; guessed from the file name when absent"
    )
    session_id: Id | None = Field(None, description="the session its beads belong to")

    @model_validator(mode="after")
    def one_input(self) -> IngestIn:
        if (self.path is None) == (self.text is None):
            raise ValueError("give exactly one of path or text")
        if self.path is not None and not self.path.startswith("/"):
            raise ValueError("path must be absolute (the daemon's working directory is not yours)")
        return self


class ForgetIn(Selector):
    """Which beads to forget (every field given must hold; at least one), and whether to only
    look. A dry run is the default: forgetting needs ``"dry_run": false``."""

    dry_run: bool = Field(
        True, description="only answer what matches (the default); change nothing"
    )
    expect: Annotated[int, Field(ge=0)] | None = Field(
        None,
        description="the count a dry run showed, checked with expect_digest (alone it is "
        "refused: a count cannot tell which beads were seen)",
    )
    expect_digest: Annotated[str, Field(min_length=1, max_length=100)] | None = Field(
        None,
        description="the expect_digest a dry run answered: unless exactly the beads it was "
        "computed over match now, 409 and nothing is forgotten",
    )

    @model_validator(mode="after")
    def absolute_path(self) -> ForgetIn:
        if self.path is not None and not self.path.startswith("/"):
            raise ValueError("path must be absolute (the daemon's working directory is not yours)")
        return self

    def selector(self) -> Selector:
        return Selector(**self.given())


class PreviewBead(BaseModel):
    id: str
    ts: float
    session_id: str | None
    role: str
    preview: str = Field(description="the first 80 characters of the content, on one line")


class ForgetPreview(BaseModel):
    """What a dry run answers: nothing was changed."""

    matched: int = Field(description="beads that match, in all")
    more: bool = Field(description=f"more match than one call forgets ({MAX_SELECT:,})")
    beads: list[PreviewBead] = Field(description="the first 50 of them, oldest first")
    expect_digest: str = Field(
        description="a hash of the ids of every bead that matched: pass it to the forget to "
        "forget exactly these"
    )


class ForgetDone(BaseModel):
    """What a forget answers."""

    forgotten: int
    ids: list[str] = Field(description="the beads forgotten, oldest first")
    matched: int = Field(description="beads that matched before this call")
    more: bool = Field(description="beads are left that match: call again for them")
    expect_digest: str = Field(
        description="the digest of the matched beads left (when ``more``): the next call passes it"
    )


class EdgeIn(_In):
    """An edge between existing nodes; without ``id`` it is named by the triple."""

    source: Id = Field(description="the id of the node it starts from")
    target: Id = Field(description="the id of the node it points to")
    predicate: Annotated[str, Field(min_length=1, max_length=128)] = Field(
        description='what the edge says ("works_at")'
    )
    id: Id | None = Field(None, description="its id; named by the triple when absent")
    weight: Score = Field(1.0, description="how strongly it holds")
    evidence: Annotated[list[Id], Field(max_length=MAX_LIST_ITEMS)] = Field(
        [], description="ids of the beads it stands on"
    )
    valid_at: Timestamp | None = Field(None, description="when it began to hold (epoch seconds)")
    invalid_at: Timestamp | None = Field(None, description="when it stopped holding")


NodeName = Annotated[str, Field(min_length=1, max_length=MAX_SHORT_CHARS)]


class FactIn(_In):
    """``subject -[predicate]-> object``: nodes are named by their text (`core.graph_ids`),
    made with ``type`` when missing, and the edge by the triple; all in one write."""

    subject: NodeName = Field(description='the node it is about, by its text ("Alice")')
    predicate: Annotated[str, Field(min_length=1, max_length=128)] = Field(
        description='what the fact says ("works_at")'
    )
    object: NodeName = Field(description='the other node, by its text ("Acme Corp")')
    type: Annotated[str, Field(min_length=1, max_length=64)] = Field(
        "entity", description="the type of a node made for it"
    )
    weight: Score = Field(1.0, description="how strongly it holds")
    evidence: Annotated[list[Id], Field(max_length=MAX_LIST_ITEMS)] = Field(
        [], description="ids of the beads it stands on"
    )
    valid_at: Timestamp | None = Field(None, description="when it began to hold (epoch seconds)")
    invalid_at: Timestamp | None = Field(None, description="when it stopped holding")


class SkillIn(_In):
    """A skill; its id is the path's (a body ``id``, if given, must agree)."""

    id: Id | None = Field(None, description="the path's id, if given")
    name: ShortText = Field(description="its name")
    description: Text = Field("", description="what it does")
    signature: Text = Field("", description="how it is called")
    examples: Annotated[list[Text], Field(max_length=MAX_LIST_ITEMS)] = Field(
        [], description="example uses"
    )
    tags: Annotated[list[Tag], Field(max_length=MAX_LIST_ITEMS)] = Field([], description="labels")


class NodeIn(Node):
    """A node to add or replace."""

    model_config = ConfigDict(defer_build=False)  # FastAPI builds bodies eagerly


class PersonaIn(Persona):
    """The whole persona; fields left out take their defaults."""

    model_config = ConfigDict(defer_build=False)


def _no_defaults(schema: dict[str, Any]) -> None:
    # A field left out of a patch keeps its value: the schema shows no default.
    for prop in schema.get("properties", {}).values():
        prop.pop("default", None)


class PersonaPatch(_In):
    """The persona fields to change; those left out keep their value. A list given replaces
    the list (additions made concurrently on other laptops are kept); ``traits`` merge key by
    key, and a trait set to null is deleted."""

    model_config = ConfigDict(json_schema_extra=_no_defaults)

    # Only the fields sent are applied (`exclude_unset`): these defaults are never written.
    name: ShortText = Field("", description="the agent's name")
    description: Text = Field("", description="who the agent is, in prose")
    goals: Annotated[list[Text], Field(max_length=MAX_LIST_ITEMS)] = Field(
        [], description="what the agent is after (the whole list)"
    )
    norms: Annotated[list[Text], Field(max_length=MAX_LIST_ITEMS)] = Field(
        [], description="rules the agent keeps (the whole list)"
    )
    skills: Annotated[list[Id], Field(max_length=MAX_LIST_ITEMS)] = Field(
        [], description="ids of its skills (the whole list)"
    )
    traits: Annotated[dict[Tag, ShortText | None], Field(max_length=MAX_LIST_ITEMS)] = Field(
        {}, description="traits to set, key by key; null deletes one"
    )


class HealthAnswer(BaseModel):
    status: Literal["ok"]
    version: str
    replica_id: str


class SyncIn(BaseModel):
    """What to do now: push, then pull (both by default), then a snapshot if asked."""

    model_config = ConfigDict(extra="forbid")
    push: bool = Field(True, description="push this replica's new ops")
    pull: bool = Field(True, description="pull the other replicas' ops")
    snapshot: bool = Field(False, description="then write a snapshot to the remote")
    decommission: Id | None = Field(
        None, description="a replica id of a laptop that will not come back"
    )
    repair_format: bool = Field(
        False,
        description="first put back the remote's format.json as this replica last opened it "
        "(after someone deleted or rewrote it; status names this step)",
    )


class ImportResult(BaseModel):
    added: dict[str, int]
    unchanged: dict[str, int]
    forgotten: int = Field(description="beads left out because they were forgotten here")
    redacted: int = Field(0, description="secrets replaced with [REDACTED:<kind>] in beads")
