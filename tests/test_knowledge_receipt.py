"""A forget receipt's knowledge place: what was derived from the bead, gone once the knowledge
worker retracted it (nothing cites the bead), pending while something still does."""

from __future__ import annotations

from collections.abc import Callable

from chrysalis import Memory
from chrysalis.forget.receipt import ForgetReceipt, Place


def knowledge(r: ForgetReceipt) -> Place:
    (place,) = [p for p in r.places if p.name.endswith(": knowledge")]
    return place


def test_derived_knowledge_is_gone_once_learned(open_memory: Callable[..., Memory]) -> None:
    mem = open_memory(extractor="rules")
    bead = mem.append_bead("I live in Lisbon and work at Acme Corp")
    other = mem.append_bead("the flight to Lisbon was late")
    assert mem.wait_learned(5)
    assert bead.id in mem.get_node("lisbon").evidence
    mem.forget(bead.id)
    assert mem.wait_learned(5)
    place = knowledge(mem.forget_receipt(bead.id))
    assert (place.place, place.state) == ("local", "gone"), place
    # what the other bead supports stays, citing only it
    assert mem.get_node("lisbon").evidence == [other.id]


def test_pending_until_the_worker_retracts(open_memory: Callable[..., Memory]) -> None:
    mem = open_memory(extractor="rules")
    bead = mem.append_bead("I live in Lisbon")
    assert mem.wait_learned(5)
    cited = {f"node:{n.id}" for n in mem.all_nodes()} | {f"edge:{e.id}" for e in mem.all_edges()}
    assert f"node:{mem.entity_id('Lisbon')}" in cited
    mem.knowledge.close()  # the worker is held: it takes no forget in
    mem.forget(bead.id)
    r = mem.forget_receipt(bead.id)
    place = knowledge(r)
    assert place.state == "pending" and not r.settled and not r.clean
    assert f"{len(cited)} derived items still cite it" in place.why
    assert all(item in place.why for item in cited), place.why
    while mem.knowledge.step():  # the worker's turn, by hand
        pass
    assert knowledge(mem.forget_receipt(bead.id)).state == "gone"


def test_a_memory_without_knowledge_says_gone(open_memory: Callable[..., Memory]) -> None:
    mem = open_memory()
    bead = mem.append_bead("I live in Lisbon")
    mem.forget(bead.id)
    assert knowledge(mem.forget_receipt(bead.id)).state == "gone"
