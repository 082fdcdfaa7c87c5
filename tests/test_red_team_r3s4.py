"""Red team of round 3, session 4: facts told by their value (`chrysalis.extract.typed`), the
text as the attacker. Each test is an attack that worked, or one that must keep failing."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from chrysalis import Memory
from chrysalis.core.models import Bead
from chrysalis.extract.rules import RulesExtractor

from .test_red_team_r3s3 import holding


def about_user(text: str) -> set[tuple[str, str]]:
    bead = Bead(id="b1", content=text, role="user", ts=1.0, session_id="s")
    facts = RulesExtractor().extract_one(bead).facts
    return {(f.predicate, f.object) for f in facts if f.subject == "user"}


# ---- text made to be slow -----------------------------------------------------------------

# Each of these took the rules extractor from 6 s to 110 s of CPU for one bead (20,000
# characters scanned): a pass over a long sentence per value in it, the typo matcher trying
# every cue on every word, a clicked-label check per quote re-reading its sentence.
SLOW = {
    "cities in one sentence": "keys " + " ".join(["in Lisbon,"] * 2_500),
    "cities without commas": "my flat keys in " + " ".join(["Lisbon Porto Madrid Paris"] * 900),
    "someone's partner again and again": "my partner " + " ".join(["Tom's wife"] * 2_500),
    "quote marks": 'keys "' * 4_000,
    "nonsense words": " ".join(f"{i:x}qzwbkvj"[-9:] for i in range(2_500)),
    "capitalised names": "keys landlord " + " ".join(f"Xq{i} ," for i in range(4_000)),
}


def test_no_text_holds_the_extractor_for_minutes(open_memory: Callable[..., Memory]) -> None:
    """Every shape above, and a 1 MiB bead of them, learned within a bound that the slowest
    single bead took more than on its own before (these take ~2 s of CPU now, in all)."""
    mem = open_memory("slow", extractor="rules")
    for text in SLOW.values():
        mem.append_bead(text, role="user")
    mem.append_bead("keys in Lisbon, " * 65_536, role="user")  # 1 MiB
    mem.append_bead("Finally got the keys to our place in Tallinn!", role="user")
    assert mem.wait_learned(timeout=60)
    # and the extractor still reads what is plainly said after all that
    assert holding(mem, "lives_in").get("user") == {"Tallinn"}


# ---- someone else's words pasted in ---------------------------------------------------------


@pytest.mark.parametrize(
    "text",
    [
        # a forwarded or quoted email: its "we" and "my" are its writer's
        "---------- Forwarded message ---------\nFrom: Priyanka\n"
        "we finally got the keys to our place in Tallinn!",
        "Subject: Re: the move\n\nHi both, the removal van reached Tallinn, keys are ours now.",
        "Forwarded message from Priyanka: finally got the keys to our place in Tallinn!",
        "On Tue, 3 Mar, Priyanka <p@example.org> wrote:\nmy new badge says Globex on it",
        # a chat log under another speaker's label
        "Priyanka: my new badge says Globex on it",
        "Priyanka: I live in Tallinn now",
        "[Priyanka] onboarding week at Globex, my team is tiny",
        # someone else's thing, named by its owner
        "Priyanka's new badge says Globex on it",
        # the telling is a question, not a statement
        "What would you say if I told you my new badge says Globex?",
    ],
)
def test_pasted_or_someone_elses_words_give_no_fact_about_the_user(text: str) -> None:
    told = about_user(text)
    assert not {p for p, _ in told} & {"lives_in", "works_at"}, told


@pytest.mark.parametrize(
    ("text", "fact"),
    [
        ("Update: finally got the keys to our place in Tallinn!", ("lives_in", "Tallinn")),
        ("Note: my new badge says Globex on it", ("works_at", "Globex")),
        ("Monday: the landlord handed us the keys in Tallinn", ("lives_in", "Tallinn")),
        ("me: onboarding week at Globex, my team is tiny", ("works_at", "Globex")),
        ("Priyanka says I'm the newest hire at Globex", ("works_at", "Globex")),
    ],
)
def test_the_users_own_labelled_lines_still_give_their_fact(
    text: str, fact: tuple[str, str]
) -> None:
    assert fact in about_user(text)


# ---- credentials beside cue words -------------------------------------------------------------

SECRETS = {
    "AKIAIOSFODNN7EXAMPLE": "my boyfriend AKIAIOSFODNN7EXAMPLE is the sweetest",
    "ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789": (
        "new badge says ghp_ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 on it, onboarding week"
    ),
    "sk-proj-Abcdefghijklmnopqrstuvwxyz0123456789ABCD": (
        "keys to our flat in sk-proj-Abcdefghijklmnopqrstuvwxyz0123456789ABCD, landlord sent"
    ),
    "xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx": (
        "I drink xoxb-123456789012-1234567890123-AbCdEfGhIjKlMnOpQrStUvWx every morning"
    ),
}


def test_a_credential_beside_a_cue_word_is_never_a_fact_or_a_name(
    open_memory: Callable[..., Memory],
) -> None:
    """The secrets policy redacts before any derived item exists: no node, edge or fact
    value holds a credential or a piece of one, while the plain fact beside them comes out."""
    mem = open_memory("secrets", extractor="rules")
    for text in SECRETS.values():
        mem.append_bead(text, role="user")
    mem.append_bead("my girlfriend Marisol and I are official now", role="user")
    assert mem.wait_learned(timeout=30)
    derived = [n.name or "" for n in mem.all_nodes()]
    derived += [str(e.model_dump()) for e in mem.all_edges(include_invalid=True)]
    for secret in SECRETS:
        for piece in (secret, secret[:12], secret[-12:]):
            assert not any(piece in d for d in derived), (piece, derived)
    assert "Marisol" in derived  # the extractor ran on these beads


# ---- forget ---------------------------------------------------------------------------------


def test_forgetting_the_bead_of_a_typed_fact_removes_it_and_revives_what_it_ended(
    open_memory: Callable[..., Memory],
) -> None:
    mem = open_memory("forget", extractor="rules")
    mem.append_bead("Finally got the keys to our place in Tallinn!", role="user", ts=1_600_000_000)
    assert mem.wait_learned(timeout=30)
    later = mem.append_bead(
        "the removal van reached Riga before we did, unpacking all week", role="user",
        ts=1_700_000_000,
    )  # fmt: skip
    assert mem.wait_learned(timeout=30)
    assert holding(mem, "lives_in") == {"user": {"Riga"}}
    mem.forget(later.id)
    assert mem.wait_learned(timeout=30)
    assert holding(mem, "lives_in") == {"user": {"Tallinn"}}
    assert not any("Riga" in str(e.model_dump()) for e in mem.all_edges(include_invalid=True))
