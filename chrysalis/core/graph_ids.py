"""Knowledge-graph names: how a thing's text becomes a node id and a fact becomes an edge id.

All are pure functions of their input, so two laptops that record the same fact make the same
node and edge, and the CRDT merges them instead of keeping two.

An entity an extractor found is named by a *keyed* hash of its name (`derived_node_id`): the
key is the memory's graph key (`EntityNames`), shared by its replicas (derived from the sync
key, or carried by the remote's format) and never part of an op. The id of a retracted entity
stays in the log and the views (a tombstone the CRDT needs), so it must not give its name
back to someone who hashes a list of candidate names: without the key, it cannot
(DESIGN §16, "a forgotten item's leftovers").
"""

from __future__ import annotations

import functools
import hashlib
import re
import threading
import unicodedata

_NOT_ID = re.compile(r"[^a-z0-9._:@]+")


def node_id(name: str) -> str:
    """A node id from a name: lowercase, runs of other characters to "-"; a hash when
    nothing is left (a name in another script). ``node_id("Acme Corp") == "acme-corp"``."""
    slug = _NOT_ID.sub("-", name.strip().lower()).strip("-._:@")[:100]
    return slug or "n-" + hashlib.blake2b(name.encode(), digest_size=6).hexdigest()


_NOT_WORD = re.compile(r"[\W_]+")


def same_name(a: str | None, b: str | None) -> bool:
    """Whether two names are one name as a person reads them: equal but for case, spacing,
    punctuation and Unicode's compatibility forms ("ROSALIND  Achebe." is "Rosalind
    Achebe"), every letter kept ("Möller" is not "Müller", though `node_id` gives both the
    slug "m-ller"). None is no name, the same as nothing."""
    if a is None or b is None:
        return False

    def form(name: str) -> str:
        return _NOT_WORD.sub(" ", unicodedata.normalize("NFKC", name).casefold()).strip()

    return form(a) == form(b) != ""


GRAPH_KEY_BYTES = 32


# scrypt's cost for a passphrase, as the sync key's data key has (segment.SCRYPT); the salt
# is fixed: every replica must derive the same key before it has opened the remote.
_SCRYPT = {"n": 1 << 15, "r": 8, "p": 1}
_PASSPHRASE_SALT = b"chrysalis-graph-key"


def graph_key(secret: bytes | str) -> bytes:
    """The graph key a shared secret gives: every replica holding the secret derives the
    same key, and the key says nothing of the secret. ``bytes`` are a key already (a sync
    key's 32 bytes, or a plaintext remote's ``format:<id>``, which is no secret) and are
    hashed; a ``str`` is a passphrase, stretched with scrypt first: an entity's name and id,
    readable where the graph is, must not make guessing the passphrase any cheaper than the
    data key's scrypt does."""
    if isinstance(secret, str):
        secret = _stretched(secret)
    return hashlib.blake2b(secret, digest_size=GRAPH_KEY_BYTES, person=b"chrysalis-graph").digest()


@functools.lru_cache(maxsize=16)
def _stretched(passphrase: str) -> bytes:
    """scrypt of a passphrase, once a process: ~0.2 s of CPU by design, and a memory's open
    asked for it twice (its entity names, its graph secret), each memory of a daemon sharing
    a team passphrase again. The process holds the passphrase anyway (its sync key file)."""
    return hashlib.scrypt(
        passphrase.encode(), salt=_PASSPHRASE_SALT, dklen=32, maxmem=64 << 20, **_SCRYPT
    )


def derived_node_id(name: str, key: bytes) -> str:
    """The id of an entity an extractor found: a hash of `node_id`'s normal form keyed with
    the memory's graph ``key``, so every replica of the memory derives the same node, and an
    id (which ops and views keep after a forget retracts the node) holds none of the words of
    the bead it came from and cannot be matched against guessed names without the key."""
    digest = hashlib.blake2b(
        node_id(name).encode(), key=key, digest_size=12, person=b"chrysalis-node"
    ).hexdigest()
    return f"n-{digest}"


def key_fingerprint(key: bytes) -> str:
    """A short name for a graph key (which one the derived nodes were made with): a keyed
    hash of a constant, so it reveals neither the key nor any name."""
    return hashlib.blake2b(b"fingerprint", key=key, digest_size=8).hexdigest()


class EntityNames:
    """One memory's entity naming: `derived_node_id` under its current graph key. The key
    changes (`use`) when the memory learns its shared key, or when a forget has its own key
    rotated; the knowledge writer then moves the derived nodes made under the old one
    (`KnowledgeWriter.rekey`, `KnowledgeWriter.rotate`). Thread-safe."""

    def __init__(self, key: bytes, shared: bool, *, own: bool = False) -> None:
        self._lock = threading.Lock()
        self._key, self._shared, self._own = key, shared, own

    def use(self, key: bytes, shared: bool, *, own: bool = False) -> bool:
        """Name entities with ``key`` from now on (``shared``: it comes from a secret the
        replicas share, not from this data dir; ``own``: a random key of this data dir's
        alone, derived from nothing, which a forget may replace); True if it changed."""
        with self._lock:
            changed = key != self._key
            self._key, self._shared, self._own = key, shared, own
        return changed

    def replace(self, old: bytes, new: bytes) -> bool:
        """Name entities with ``new``, a data dir's own key, if ``old`` is still the key
        (a key learned meanwhile wins: the writer then moves the nodes to it); True if so."""
        with self._lock:
            if self._key != old:
                return False
            self._key, self._shared, self._own = new, False, True
        return True

    @property
    def own(self) -> bool:
        """The key is this data dir's own random key (no remote, no sync key): nothing else
        holds or can derive it, so replacing it and erasing the old one takes the old ids'
        names out of reach (`KnowledgeWriter.rotate`)."""
        with self._lock:
            return self._own

    @property
    def key(self) -> bytes:
        with self._lock:
            return self._key

    @property
    def shared(self) -> bool:
        with self._lock:
            return self._shared

    @property
    def fingerprint(self) -> str:
        return key_fingerprint(self.key)

    def id(self, name: str) -> str:
        """`derived_node_id` of ``name`` under the current key."""
        return derived_node_id(name, self.key)


def edge_id(source: str, predicate: str, target: str) -> str:
    """The id of the edge ``source -[predicate]-> target``: the same fact added on two
    laptops is the same edge."""
    digest = hashlib.sha256(f"{source}\0{predicate}\0{target}".encode()).hexdigest()
    return f"e-{digest[:24]}"
