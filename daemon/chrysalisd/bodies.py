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

from chrysalis.models import (
    MAX_LIST_ITEMS,
    MAX_SHORT_CHARS,
    Content,
    Filters,
    Id,
    Node,
    Persona,
    Role,
    Score,
    ShortText,
    SpanRef,
    Strategy,
    Tag,
    Text,
    Timestamp,
)
from chrysalis.select import MAX_SELECT, Selector


class _In(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)


class BeadIn(_In):
    """A bead to append. Without ``id`` one is generated; without ``ts``, now; without
    ``importance``, one judged from how new its words are to the memory (0.1 to 0.9)."""

    content: Content
    id: Id | None = None
    role: Role = "user"
    session_id: Id | None = None
    turn_id: Id | None = None
    ts: Timestamp | None = None
    importance: Annotated[float, Field(ge=0.0, le=1.0)] | None = None
    tags: Annotated[list[Tag], Field(max_length=MAX_LIST_ITEMS)] = []
    source: ShortText | None = None
    span_refs: Annotated[list[SpanRef], Field(max_length=MAX_LIST_ITEMS)] = []


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
    query: Annotated[Text, Field(min_length=1)]
    k: Annotated[int, Field(ge=1, le=1000)] = 10
    token_budget: Annotated[int, Field(ge=1, le=10_000_000)] | None = None
    strategy: Strategy = "fusion"
    filters: Filters | None = None
    # When the query is asked (ISO 8601 or epoch seconds; the daemon's clock if absent): a span
    # the query names, "last weekend", "two weeks ago", is read against it.
    now: float | Annotated[datetime, Strict(False)] | None = None
    # The facts walked are those that held then (world time; ISO 8601 or epoch seconds); by
    # default those that hold now.
    as_of: float | Annotated[datetime, Strict(False)] | None = None
    # Several memories in one ranking (their names; the path's memory is not added): each
    # item's provenance names its memory.
    memories: Annotated[list[Annotated[str, Field(max_length=64)]], Field(max_length=16)] = []


class MemoryIn(_In):
    """A memory to create: its name and the settings it has of its own (the keys of a
    ``[memories.NAME]`` table: remote, sync_key_file, zep_url, zep_api_key_file, extractor,
    push_interval, ...). Where it syncs is never inherited from the daemon's settings."""

    name: Annotated[str, Field(min_length=1, max_length=64)]
    settings: dict[str, Any] = {}


class IngestIn(_In):
    """Exactly one of ``path`` (a file or directory the daemon reads, absolute) or ``text``."""

    path: Annotated[str, Field(min_length=1, max_length=4096)] | None = None
    text: str | None = None
    source: Annotated[str, Field(min_length=1, max_length=512)] | None = None
    kind: Literal["markdown", "python", "code", "text"] | None = None
    session_id: Id | None = None

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
        description="the count a dry run showed: if another number of beads matches now, "
        "409 and nothing is forgotten",
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


class ForgetDone(BaseModel):
    """What a forget answers."""

    forgotten: int
    ids: list[str] = Field(description="the beads forgotten, oldest first")
    matched: int = Field(description="beads that matched before this call")
    more: bool = Field(description="beads are left that match: call again for them")


class EdgeIn(_In):
    """An edge between existing nodes; without ``id`` it is named by the triple."""

    source: Id
    target: Id
    predicate: Annotated[str, Field(min_length=1, max_length=128)]
    id: Id | None = None
    weight: Score = 1.0
    evidence: Annotated[list[Id], Field(max_length=MAX_LIST_ITEMS)] = []
    valid_at: Timestamp | None = None
    invalid_at: Timestamp | None = None


NodeName = Annotated[str, Field(min_length=1, max_length=MAX_SHORT_CHARS)]


class FactIn(_In):
    """``subject -[predicate]-> object``: the nodes are named by their text (`chrysalis.graph`),
    made with ``type`` when missing, and the edge by the triple; all in one write."""

    subject: NodeName
    predicate: Annotated[str, Field(min_length=1, max_length=128)]
    object: NodeName
    type: Annotated[str, Field(min_length=1, max_length=64)] = "entity"
    weight: Score = 1.0
    evidence: Annotated[list[Id], Field(max_length=MAX_LIST_ITEMS)] = []
    valid_at: Timestamp | None = None
    invalid_at: Timestamp | None = None


class SkillIn(_In):
    """A skill; its id is the path's (a body ``id``, if given, must agree)."""

    id: Id | None = None
    name: ShortText
    description: Text = ""
    signature: Text = ""
    examples: Annotated[list[Text], Field(max_length=MAX_LIST_ITEMS)] = []
    tags: Annotated[list[Tag], Field(max_length=MAX_LIST_ITEMS)] = []


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
    name: ShortText = ""
    description: Text = ""
    goals: Annotated[list[Text], Field(max_length=MAX_LIST_ITEMS)] = []
    norms: Annotated[list[Text], Field(max_length=MAX_LIST_ITEMS)] = []
    skills: Annotated[list[Id], Field(max_length=MAX_LIST_ITEMS)] = []
    traits: Annotated[dict[Tag, ShortText | None], Field(max_length=MAX_LIST_ITEMS)] = {}


class Health(BaseModel):
    status: Literal["ok"]
    version: str
    replica_id: str


class SyncIn(BaseModel):
    """What to do now: push, then pull (both by default), then a snapshot if asked."""

    model_config = ConfigDict(extra="forbid")
    push: bool = True
    pull: bool = True
    snapshot: bool = False
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
