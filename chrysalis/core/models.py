"""The data model (DESIGN §3) as strict pydantic v2 models, and the wire form of ops.

Everything that enters the store passes through these models: types are not coerced (a string
is not an int), ids are safe as LMDB keys and file names, text has no lone surrogates, every
field has a size limit (`limits`). ``python -m chrysalis.core.models`` regenerates ``schemas/``.
"""

from __future__ import annotations

import hashlib
import math
import os
import time
from datetime import UTC, datetime
from enum import StrEnum
from typing import Annotated, Any, Literal

import msgpack
from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Discriminator,
    Field,
    StrictInt,
    TypeAdapter,
    model_validator,
)
from pydantic import Tag as UnionTag

from chrysalis.core.limits import ID_PATTERN, MAX_CONTENT_CHARS
from chrysalis.core.vocab import DEFAULT_ROLE, Role, Strategy

# Limits. Content over BLOB_THRESHOLD bytes is stored beside LMDB, content-addressed.
MAX_TEXT_CHARS = 64 * 1024
MAX_SHORT_CHARS = 512
MAX_LINE = 2**31 - 1  # line numbers in span refs (every int we store must fit in 64 bits)
MAX_TAG_CHARS = 128
MAX_LIST_ITEMS = 256
MAX_METADATA_BYTES = 64 * 1024
MAX_DIMS = 8192
MAX_HLC = (1 << 63) - 1
TS_MAX = 32_503_680_000.0  # 3000-01-01, far enough; keeps the time index key in 8 bytes

REPLICA_PATTERN = r"^[a-z0-9][a-z0-9-]{0,63}$"
DOT_PATTERN = r"^[a-z0-9][a-z0-9-]{0,63}:[1-9][0-9]{0,18}$"


def _no_lone_surrogates(value: str) -> str:
    try:
        value.encode("utf-8")
    except UnicodeEncodeError as exc:
        raise ValueError(f"text contains a lone surrogate at position {exc.start}") from None
    return value


def _to_epoch(value: Any) -> Any:
    """Accept epoch seconds, an aware or naive (UTC) datetime, or an ISO 8601 string."""
    if isinstance(value, bool):
        raise ValueError("timestamp must be epoch seconds, a datetime or an ISO 8601 string")
    if isinstance(value, datetime):
        dt = value if value.tzinfo else value.replace(tzinfo=UTC)
        return dt.timestamp()
    if isinstance(value, str):
        try:
            dt = datetime.fromisoformat(value)
        except ValueError:
            raise ValueError(f"not an ISO 8601 timestamp: {value[:40]!r}") from None
        return (dt if dt.tzinfo else dt.replace(tzinfo=UTC)).timestamp()
    if isinstance(value, int):
        return float(value)
    return value


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise ValueError("must be a finite number")
    return value


def _json_metadata(value: dict[str, Any]) -> dict[str, Any]:
    def check(v: Any, depth: int) -> None:
        if depth > 8:
            raise ValueError("metadata nested deeper than 8 levels")
        if v is None or isinstance(v, bool | int | str):
            if isinstance(v, str):
                _no_lone_surrogates(v)
            elif isinstance(v, int) and not -(2**63) <= v < 2**64:
                raise ValueError("integers in metadata must fit in 64 bits")
            return
        if isinstance(v, float):
            _finite(v)
            return
        if isinstance(v, list):
            for item in v:
                check(item, depth + 1)
            return
        if isinstance(v, dict):
            for k, item in v.items():
                if not isinstance(k, str):
                    raise ValueError("metadata keys must be strings")
                _no_lone_surrogates(k)
                check(item, depth + 1)
            return
        raise ValueError(f"metadata values must be JSON values, not {type(v).__name__}")

    check(value, 0)
    try:
        size = len(msgpack.packb(value))
    except (OverflowError, TypeError, ValueError) as exc:  # ints past 64 bits, for one
        raise ValueError(f"metadata cannot be stored: {exc}") from None
    if size > MAX_METADATA_BYTES:
        raise ValueError(f"metadata larger than {MAX_METADATA_BYTES} bytes")
    return value


Id = Annotated[str, Field(pattern=ID_PATTERN, strict=True)]
ReplicaId = Annotated[str, Field(pattern=REPLICA_PATTERN, strict=True)]
Dot = Annotated[str, Field(pattern=DOT_PATTERN, strict=True)]
# pydantic-core itself refuses strings with lone surrogates (error type "string_unicode").
Content = Annotated[str, Field(strict=True, max_length=MAX_CONTENT_CHARS)]
Text = Annotated[str, Field(strict=True, max_length=MAX_TEXT_CHARS)]
ShortText = Annotated[str, Field(strict=True, max_length=MAX_SHORT_CHARS)]
Tag = Annotated[str, Field(strict=True, min_length=1, max_length=MAX_TAG_CHARS)]
Timestamp = Annotated[
    float,
    BeforeValidator(_to_epoch),
    Field(strict=True, ge=0.0, lt=TS_MAX),
]
Score = Annotated[float, Field(strict=True), AfterValidator(_finite)]
Metadata = Annotated[dict[str, Any], AfterValidator(_json_metadata)]
# The extractor and its version that derived a node or edge, e.g. "rules/1", "ollama:llama3/2".
DerivedBy = Annotated[str, Field(strict=True, min_length=1, max_length=128)]
Sha256 = Annotated[str, Field(pattern=r"^[0-9a-f]{64}$", strict=True)]


class _Model(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, strict=True, defer_build=True)


def new_id() -> str:
    """A UUIDv7 string: time-ordered, random, safe as a key and file name."""
    ms = (time.time_ns() // 1_000_000) & 0xFFFF_FFFF_FFFF
    rand = int.from_bytes(os.urandom(10), "big")
    h = f"{ms:012x}{0x7000 | (rand >> 68):04x}{(1 << 63) | (rand & ((1 << 62) - 1)):016x}"
    return f"{h[:8]}-{h[8:12]}-{h[12:16]}-{h[16:20]}-{h[20:]}"


def now() -> float:
    return time.time()


class BlobRef(_Model):
    """Content stored beside LMDB, named by its SHA-256."""

    sha256: Sha256
    size: Annotated[int, Field(strict=True, ge=0, le=2**63 - 1)]


class SpanRef(_Model):
    """Where a bead's content came from: a file and a 1-based, inclusive line range."""

    path: ShortText
    start_line: Annotated[int, Field(strict=True, ge=1, le=MAX_LINE)]
    end_line: Annotated[int, Field(strict=True, ge=1, le=MAX_LINE)]


class Bead(_Model):
    """An append-only record: a turn, a tool output, a note.

    ``content`` is required and non-empty, except in an op whose content lives in a blob
    (then ``content`` is empty and ``blob`` names it).
    """

    id: Id
    ts: Timestamp
    role: Role = DEFAULT_ROLE
    content: Content
    source: ShortText | None = None
    session_id: Id | None = None
    turn_id: Id | None = None
    importance: Annotated[float, Field(strict=True, ge=0.0, le=1.0)] = 0.5
    # default_factory, not `= []`: a mutable default is deep-copied per bead (measured: slow)
    tags: Annotated[list[Tag], Field(default_factory=list, max_length=MAX_LIST_ITEMS)]
    span_refs: Annotated[list[SpanRef], Field(default_factory=list, max_length=MAX_LIST_ITEMS)]
    blob: BlobRef | None = None
    # A session summary (DESIGN §14): the beads it stands on, and what wrote it ("rules/1").
    derived_from: Annotated[list[Id], Field(default_factory=list, max_length=MAX_LIST_ITEMS)]
    derived_by: DerivedBy | None = None

    @model_validator(mode="after")
    def _content_present(self) -> Bead:
        if not self.content and self.blob is None:
            raise ValueError("content must not be empty")
        return self


class ErasedBead(_Model):
    """What a forgotten bead's add op keeps: its id and time, never its content."""

    id: Id
    ts: Timestamp
    erased: Literal[True] = True


class Node(_Model):
    id: Id
    type: Annotated[str, Field(strict=True, min_length=1, max_length=64, pattern=r"^[^\x00]+$")]
    name: ShortText | None = None
    labels: Annotated[list[Tag], Field(max_length=MAX_LIST_ITEMS)] = []
    metadata: Metadata = {}
    # Knowledge (DESIGN §13): the beads a derived node stands on (for an entity, the beads
    # that mention it), and the extractor that derived it ("rules/1"); None when a person or
    # an agent wrote it, which no forget retracts.
    evidence: list[Id] = []
    derived_by: DerivedBy | None = None


class Edge(_Model):
    id: Id
    source: Id
    target: Id
    predicate: Annotated[str, Field(strict=True, min_length=1, max_length=128)]
    weight: Score = 1.0
    evidence: Annotated[list[Id], Field(max_length=MAX_LIST_ITEMS)] = []
    valid_at: Timestamp | None = None
    invalid_at: Timestamp | None = None
    derived_by: DerivedBy | None = None
    metadata: Metadata = {}  # e.g. who stated a derived fact: {"stated_by": "user"}


class Persona(_Model):
    id: Id = "default"
    name: ShortText = ""
    description: Text = ""
    goals: Annotated[list[Text], Field(max_length=MAX_LIST_ITEMS)] = []
    norms: Annotated[list[Text], Field(max_length=MAX_LIST_ITEMS)] = []
    skills: Annotated[list[Id], Field(max_length=MAX_LIST_ITEMS)] = []
    traits: Annotated[dict[Tag, ShortText], Field(max_length=MAX_LIST_ITEMS)] = {}


class Skill(_Model):
    id: Id
    name: ShortText
    description: Text = ""
    signature: Text = ""
    examples: Annotated[list[Text], Field(max_length=MAX_LIST_ITEMS)] = []
    tags: Annotated[list[Tag], Field(max_length=MAX_LIST_ITEMS)] = []


class Embedding(_Model):
    """One vector for one item under one model; ``vector`` is little-endian float32."""

    item_kind: Literal["bead", "node", "skill", "persona"]
    item_id: Id
    model: Annotated[str, Field(strict=True, min_length=1, max_length=128)]
    dims: Annotated[int, Field(strict=True, ge=1, le=MAX_DIMS)]
    provider: Annotated[str, Field(strict=True, min_length=1, max_length=64)]
    text_hash: Sha256
    vector: Annotated[bytes, Field(strict=True, max_length=MAX_DIMS * 4)]
    created_at: Timestamp

    @model_validator(mode="after")
    def _vector_matches_dims(self) -> Embedding:
        if len(self.vector) != self.dims * 4:
            raise ValueError(
                f"vector has {len(self.vector)} bytes, expected dims*4 = {self.dims * 4}"
            )
        return self


class Neighbor(_Model):
    """One step of a graph walk: the node reached, the edge taken, and how far out."""

    node: Node
    edge: Edge
    depth: int
    direction: Literal["out", "in"]


# ---- retrieval: what a query asks and what it gets back -----------------------------------

Kind = Literal["bead", "node", "edge", "skill", "persona"]


class Filters(BaseModel):
    """What an item must satisfy to be returned (bead fields apply to beads only)."""

    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)

    session_id: Id | None = None
    role: Role | None = None
    tags: Annotated[list[Tag], Field(max_length=MAX_LIST_ITEMS)] = []  # any of them
    since: Timestamp | None = None
    until: Timestamp | None = None
    min_importance: float | None = Field(default=None, ge=0.0, le=1.0)
    kinds: list[Kind] = []


class RetrievedItem(BaseModel):
    model_config = ConfigDict(defer_build=True)

    kind: Kind
    id: str
    text: str
    score: float
    signals: dict[str, float]
    provenance: dict[str, Any]
    tokens: int


class RetrievalResult(BaseModel):
    model_config = ConfigDict(defer_build=True)

    query: str
    strategy: Strategy
    items: list[RetrievedItem]
    tokens_used: int
    token_budget: int | None
    notes: list[str] = []  # e.g. "emb: embedder unavailable (...)"


class ContextFact(BaseModel):
    """A fact that bears on a `Context`'s question: ``since``/``until`` are world time (epoch
    seconds, None when unknown or open); ``holds`` says it held at the time the question is
    about, ``current`` that it holds at ``now``."""

    model_config = ConfigDict(defer_build=True)

    id: str
    subject: str
    predicate: str
    object: str
    since: float | None
    until: float | None
    holds: bool
    current: bool
    evidence: list[str]
    memory: str | None = None


class ContextItem(BaseModel):
    """A bead or session summary given as evidence: ``text`` as the context shows it (an
    excerpt of a long bead ends with "…"); ``stale`` names the fact that superseded what it
    states; ``duplicates`` the near-identical beads collapsed into it; ``joined`` the beads
    near it in its session shown with it as one passage (``text`` then cites each)."""

    model_config = ConfigDict(defer_build=True)

    kind: Literal["bead", "summary"]
    id: str
    text: str
    score: float
    ts: float | None
    session_id: str | None
    tokens: int
    stale: str | None = None
    duplicates: list[str] = []
    memory: str | None = None
    joined: list[str] = []


class Context(BaseModel):
    """What an agent puts in its prompt for its next turn (`chrysalis.context`): ``text`` is
    the prompt-ready block citing ids, ``facts`` and ``items`` what it is made of; ``tokens``
    its estimated size (never over ``token_budget``); ``as_of`` the time the question is about
    (``now`` unless it names another)."""

    model_config = ConfigDict(defer_build=True)

    query: str
    text: str
    facts: list[ContextFact]
    items: list[ContextItem]
    tokens: int
    token_budget: int
    now: float
    as_of: float
    frame: str
    notes: list[str] = []


# ---- ops: the wire form of every change ------------------------------------------------
#
# Record ops (node, edge, persona, skill) share one shape: ``set`` writes LWW scalar fields,
# ``add`` adds elements to add-wins set fields (tagged with the op's dot), ``drop`` lists per
# element the dots the writer observed and now kills. A ``*.put`` also marks the record
# present with its own dot and ``supersede``s the presence dots its writer saw (so they do not
# pile up); a ``*.remove`` lists every dot of the record its writer observed.


class _Data(_Model):
    pass


class NodeScalars(_Data):
    type: Annotated[str, Field(strict=True, min_length=1, max_length=64)]
    name: ShortText | None = None
    metadata: Metadata = {}
    derived_by: DerivedBy | None = None


class NodeSets(_Data):
    labels: Annotated[list[Tag], Field(max_length=MAX_LIST_ITEMS)] = []
    evidence: Annotated[list[Id], Field(max_length=MAX_LIST_ITEMS)] = []
    names: Annotated[list[ShortText], Field(max_length=MAX_LIST_ITEMS)] = []  # derived nodes


Dots = Annotated[list[Dot], Field(max_length=100_000)]


class NodeDrop(_Data):
    labels: dict[Tag, Dots] = {}
    evidence: dict[Id, Dots] = {}


class NodePutData(_Data):
    erased: bool = False  # a retracted derived node's put keeps no name (DESIGN §14)
    set: NodeScalars
    add: NodeSets = NodeSets()
    drop: NodeDrop = NodeDrop()
    supersede: Dots = []


class EdgeScalars(_Data):
    source: Id
    target: Id
    predicate: Annotated[str, Field(strict=True, min_length=1, max_length=128)]
    weight: Score = 1.0
    valid_at: Timestamp | None = None
    invalid_at: Timestamp | None = None
    derived_by: DerivedBy | None = None
    metadata: Metadata = {}


class EdgeSets(_Data):
    evidence: Annotated[list[Id], Field(max_length=MAX_LIST_ITEMS)] = []


class EdgeDrop(_Data):
    evidence: dict[Id, Dots] = {}


class EdgePutData(_Data):
    set: EdgeScalars
    add: EdgeSets = EdgeSets()
    drop: EdgeDrop = EdgeDrop()
    supersede: Dots = []


class PersonaScalars(_Data):
    id: Id = "default"
    name: ShortText = ""
    description: Text = ""
    # up to twice the persona's limit: a put that replaces every trait also deletes every old one
    traits: Annotated[dict[Tag, ShortText | None], Field(max_length=2 * MAX_LIST_ITEMS)] = {}


class PersonaSets(_Data):
    goals: Annotated[list[Text], Field(max_length=MAX_LIST_ITEMS)] = []
    norms: Annotated[list[Text], Field(max_length=MAX_LIST_ITEMS)] = []
    skills: Annotated[list[Id], Field(max_length=MAX_LIST_ITEMS)] = []


class PersonaDrop(_Data):
    goals: dict[Text, Dots] = {}
    norms: dict[Text, Dots] = {}
    skills: dict[Id, Dots] = {}


class PersonaPutData(_Data):
    set: PersonaScalars = PersonaScalars()
    add: PersonaSets = PersonaSets()
    drop: PersonaDrop = PersonaDrop()
    supersede: Dots = []


class SkillScalars(_Data):
    name: ShortText
    description: Text = ""
    signature: Text = ""


class SkillSets(_Data):
    examples: Annotated[list[Text], Field(max_length=MAX_LIST_ITEMS)] = []
    tags: Annotated[list[Tag], Field(max_length=MAX_LIST_ITEMS)] = []


class SkillDrop(_Data):
    examples: dict[Text, Dots] = {}
    tags: dict[Tag, Dots] = {}


class SkillPutData(_Data):
    set: SkillScalars
    add: SkillSets = SkillSets()
    drop: SkillDrop = SkillDrop()
    supersede: Dots = []


class RemoveData(_Data):
    remove: Dots = []


class ForgetData(_Data):
    pass


ItemKind = Literal["bead", "node", "skill", "persona"]


class EmbeddingData(_Data):
    item_kind: ItemKind
    model: Annotated[str, Field(strict=True, min_length=1, max_length=128)]
    dims: Annotated[int, Field(strict=True, ge=1, le=MAX_DIMS)]
    provider: Annotated[str, Field(strict=True, min_length=1, max_length=64)]
    text_hash: Sha256
    vector: Annotated[bytes, Field(strict=True, max_length=MAX_DIMS * 4)]
    created_at: Timestamp
    checksum: Sha256

    @model_validator(mode="after")
    def _vector_matches_dims(self) -> EmbeddingData:
        # float16 (dims*2 bytes) or float32 (dims*4): `chrysalis.core.vector_bytes` (not
        # imported: it needs numpy, which the client, importing these models, goes without)
        if len(self.vector) not in (self.dims * 2, self.dims * 4):
            raise ValueError(
                f"vector has {len(self.vector)} bytes, expected dims*2 = {self.dims * 2} "
                f"(float16) or dims*4 = {self.dims * 4} (float32)"
            )
        if hashlib.sha256(self.vector).hexdigest() != self.checksum:
            raise ValueError("checksum is not the SHA-256 of the vector")
        return self


class ErasedEmbedding(_Data):
    """What an embedding op of a forgotten bead keeps: never the vector."""

    item_kind: ItemKind
    model: Annotated[str, Field(strict=True, min_length=1, max_length=128)]
    erased: Literal[True] = True


class OpKind(StrEnum):
    """The kind of an op: ``<collection>.<verb>``. Ops travel as dicts whose ``kind`` is the
    value; `tests/test_rules.py` holds this list to the `Op` union and to the rule table."""

    BEAD_ADD = "bead.add"
    BEAD_FORGET = "bead.forget"
    NODE_PUT = "node.put"
    NODE_REMOVE = "node.remove"
    EDGE_PUT = "edge.put"
    EDGE_REMOVE = "edge.remove"
    PERSONA_PUT = "persona.put"
    SKILL_PUT = "skill.put"
    SKILL_REMOVE = "skill.remove"
    EMBEDDING_PUT = "embedding.put"

    @property
    def collection(self) -> str:
        return self.value.partition(".")[0]

    @property
    def verb(self) -> str:
        return self.value.partition(".")[2]


class _OpBase(_Model):
    replica: ReplicaId
    seq: Annotated[StrictInt, Field(ge=1, le=MAX_HLC)]
    hlc: Annotated[StrictInt, Field(ge=0, le=MAX_HLC)]
    target: Id


def _tagger(erased_cls: type[BaseModel], live: str) -> Any:
    """A discriminator for a live/erased union: reads "erased" instead of trying both models."""

    def tag(value: Any) -> str:
        if isinstance(value, dict):
            return "erased" if value.get("erased") else live
        return "erased" if isinstance(value, erased_cls) else live

    return Discriminator(tag)


class BeadAddOp(_OpBase):
    kind: Literal["bead.add"]
    data: Annotated[
        Annotated[Bead, UnionTag("bead")] | Annotated[ErasedBead, UnionTag("erased")],
        _tagger(ErasedBead, "bead"),
    ]


class BeadForgetOp(_OpBase):
    kind: Literal["bead.forget"]
    data: ForgetData


class NodePutOp(_OpBase):
    kind: Literal["node.put"]
    data: NodePutData


class NodeRemoveOp(_OpBase):
    kind: Literal["node.remove"]
    data: RemoveData


class EdgePutOp(_OpBase):
    kind: Literal["edge.put"]
    data: EdgePutData


class EdgeRemoveOp(_OpBase):
    kind: Literal["edge.remove"]
    data: RemoveData


class PersonaPutOp(_OpBase):
    kind: Literal["persona.put"]
    data: PersonaPutData


class SkillPutOp(_OpBase):
    kind: Literal["skill.put"]
    data: SkillPutData


class SkillRemoveOp(_OpBase):
    kind: Literal["skill.remove"]
    data: RemoveData


class EmbeddingPutOp(_OpBase):
    kind: Literal["embedding.put"]
    data: Annotated[
        Annotated[EmbeddingData, UnionTag("live")] | Annotated[ErasedEmbedding, UnionTag("erased")],
        _tagger(ErasedEmbedding, "live"),
    ]


Op = Annotated[
    BeadAddOp
    | BeadForgetOp
    | NodePutOp
    | NodeRemoveOp
    | EdgePutOp
    | EdgeRemoveOp
    | PersonaPutOp
    | SkillPutOp
    | SkillRemoveOp
    | EmbeddingPutOp,
    Field(discriminator="kind"),
]
"""One durable change, ``(replica, seq)`` its dot. Ops travel as plain dicts of this shape."""

OPS = TypeAdapter(list[Op], config=ConfigDict(defer_build=True))
BEADS = TypeAdapter(list[Bead], config=ConfigDict(defer_build=True))
