"""Knowledge-graph names: how a thing's text becomes a node id and a fact becomes an edge id.

Both are pure functions of their input, so two laptops that record the same fact make the same
node and edge, and the CRDT merges them instead of keeping two.
"""

from __future__ import annotations

import hashlib
import re

_NOT_ID = re.compile(r"[^a-z0-9._:@]+")


def node_id(name: str) -> str:
    """A node id from a name: lowercase, runs of other characters to "-"; a hash when
    nothing is left (a name in another script). ``node_id("Acme Corp") == "acme-corp"``."""
    slug = _NOT_ID.sub("-", name.strip().lower()).strip("-._:@")[:100]
    return slug or "n-" + hashlib.blake2b(name.encode(), digest_size=6).hexdigest()


def derived_node_id(name: str) -> str:
    """The id of an entity an extractor found: a hash of `node_id`'s normal form, so every
    laptop derives the same node, and an id (which ops and views keep after a forget
    retracts the node) holds none of the words of the bead it came from."""
    digest = hashlib.blake2b(node_id(name).encode(), digest_size=12).hexdigest()
    return f"n-{digest}"


def edge_id(source: str, predicate: str, target: str) -> str:
    """The id of the edge ``source -[predicate]-> target``: the same fact added on two
    laptops is the same edge."""
    digest = hashlib.sha256(f"{source}\0{predicate}\0{target}".encode()).hexdigest()
    return f"e-{digest[:24]}"
