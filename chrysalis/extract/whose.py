# ruff: noqa: RUF001, SIM905 - curly quotes are text here; word lists read best as one string
"""Whose a value is, in the sentence that names it (`_whose`), whether a sentence tells a
relationship of the user's (`_mine`), and whether a value is someone else's for a word
pointing back to it (`_someone_elses`).

The nearest subject before the value decides, else the nearest after it, else the speaker:
"I", "we", "my", "the user" are the user; a pronoun is the user's only in a sentence about
the user; a person's word ("my sister", "a mate"), a name doing something ("Jo drinks ...",
"Soledad from my club ..."), an owner ("Dana's badge") are someone else. A "my" inside a
phrase describing a person ("Tariq from my book club", "a mate of mine") is not a subject;
"but", and a clause after ", and", start a subject of their own. Read by
`chrysalis.extract.typed`.
"""

from __future__ import annotations

import re

from chrysalis.extract.cues import (
    _OPENERS,
    _OTHERS,
    _PARTNER_WORDS,
    _PRONOUN,
    _SOMEONE_ELSE,
    _USER,
    _WORD,
    CUES,
    _cued,
    _words,
)
from chrysalis.extract.facts import NOT_A_SUBJECT, TRADES
from chrysalis.extract.mood import _TELLING
from chrysalis.extract.places import is_city
from chrysalis.extract.values import (
    _AFTER_PREP,
    _FROM_GROUP,
    _ITS_VERB,
    _NAME_VERB,
    _PERSON_VERB,
    _people,
    _plain_word,
    _Value,
)

# An assistant congratulating the person it answers ("Congratulations on joining X!"): X is
# that person's.
_CONGRATS = re.compile(
    r"\b(?:congratulations|congrats|well\s+done)\s+on\b(?:\s+\S+){0,4}\s*$", re.IGNORECASE
)


# Words whose "'s" is "is", not an owner's ("That's X now", "It's been a month").
_IS_WORDS = frozenset(
    """that it there here what who where how let he she everyone everybody nobody someone
    somebody everything nothing""".split()
)


def _someone_elses(sentence: str, value: _Value, attr: str) -> bool:
    """Whether ``value`` is another person's in ``sentence``: `_whose` says so, the sentence
    names someone ("Tariq from work", "my sister"), and the value does nothing itself ("X is
    lovely")."""
    if _whose(sentence, value.start, value.end, attr) != "other":
        return False
    if _ITS_VERB.match(sentence, value.end) is not None:
        return False  # "X is lovely. We moved there": X does something, no one has it
    return bool(_words(sentence) & _SOMEONE_ELSE) or any(
        p.text != value.text and (not is_city(p.text) or _FROM_GROUP.match(sentence, p.end))
        for p in _people(sentence)
    )  # ("Soledad from work": a person, whatever the map says)


# A relationship word someone else has ("her girlfriend", "Tom's wife").
_THEIRS = re.compile(
    r"\b(?:his|her|their|(?!(?:it|that|there|here|what|who|he|she|let)['’]s)\w+['’]s)\s+"
    r"(?:new\s+)?(?:\w+)$",
    re.IGNORECASE,
)  # ("it's official": "it is", no one's)


_WITH_SOMEONE = re.compile(
    r"\b(?:dating|dates|seeing|sees|married|engaged|with|to)\s+(?:a|an|the|some|someone|"
    r"somebody|this|that|his|her|their|\w+['’]s)\b",
    re.IGNORECASE,
)


def _mine(sentence: str, words: set[str]) -> bool:
    """Whether a sentence tells a relationship of the user's: it speaks in the first person
    (or of the user), and a relationship word in it is not someone else's ("her husband")."""
    if not words & _USER:
        # The speaker's own, its subject left out ("X stayed over again, it's official"),
        # unless the sentence speaks of anyone else, or its one person is with someone
        # unnamed ("Amara from work is dating a drummer": her relationship).
        # "love" and "parents" say too little without one ("Love the colours", "Themes like
        # love"), and "married" is anyone's ("Lena married young").
        return (
            not words & (_PRONOUN | _OTHERS)
            and _cued(
                words - {"love", "parents", "married", "wedding", "got_married"},
                CUES["partner"],
                typos=False,
            )
            and len(_people(sentence)) == 1
            and _WITH_SOMEONE.search(sentence) is None
        )
    before = None
    for m in _WORD.finditer(sentence):
        low = m.group(0).lower()
        # The owner is in the three words before it: a window, not the whole sentence again;
        # a cue of two words ("their other half") is owned before its first.
        cue = m if low in CUES["partner"] else None
        if before is not None and f"{before.group(0).lower()}_{low}" in CUES["partner"]:
            cue = before
        if cue is not None and _THEIRS.search(sentence[max(0, cue.start() - 80) : cue.end()]):
            return False
        before = m
    return True


# Only a preposition between a person noun and the value: the noun describes the owner's
# tie to it ("my colleagues at X"), it is not the clause's subject ("my sister lives in X").
_LINKED = re.compile(r"\s+(?:at|in|from|for|with|of)\s+(?:the\s+)?", re.IGNORECASE)


# The people a speaker has by having the attribute: colleagues at a job, neighbours at a
# home ("my manager at X" tells the speaker's job; "my aunt in X" tells the aunt's home).
_TIED = {
    "works_at": frozenset(
        """colleague colleagues coworker coworkers co-worker co-workers manager boss team
        teammate teammates ceo mentor""".split()
    ),
    "lives_in": frozenset(
        """neighbour neighbours neighbor neighbors flatmate flatmates roommate roommates
        housemate housemates""".split()
    ),
}
# Where a clause's subject starts: the sentence's start, or after a stop or a comma, a word
# of its owner before it ("the nanny", "Mum's new cleaner").
_OPENS = re.compile(
    r"(?:^|[,;:.!?]|\b(?:and|but|so)\b)\W*(?:(?:the|a|an|my|our|his|her|their|your|"
    r"[\w-]+['’]s)\s+)?(?:[a-z][\w-]*\s+)?$",
    re.IGNORECASE,
)
# "me" and "us" after a verb of giving ("gave me X", "sent us X"): whom it was given to.
_OBJECTS = frozenset({"me", "us"})
_DONE_TO = re.compile(
    r"\b(?:gave|give|gives|giving|handed|hands|brought|brings|served|serves|poured|pours|"
    r"offered|offers|sent|sends|passed|passes|lent|lends|loaned)\s+$",
    re.IGNORECASE,
)
# ... with only the value's article after it ("gave me a X"; "helped us move to X": "us" moved)
_GIVEN = re.compile(r"\s+(?:(?:a|an|the|some|this|that|another|one|new|free)\s+)*", re.I)
_NAME_IS = re.compile(r"\s+name(?:['’]s|\s+is)\s+", re.IGNORECASE)
_OBJECT_OF = re.compile(
    r"(?<!\bcongrats\s)(?<!\bcongratulations\s)(?<!\bhappy\s)(?<!\bproud\s)(?<!\bglad\s)"
    r"(?<!\bthrilled\s)(?<!\bpleased\s)(?<!\bexcited\s)(?<!\bcheers\s)(?<!\bnews\s)"
    r"\b(?:from|with|to|for|by|than|like|over)\s+(?:(?:my|our|the|a|an|his|her|their)\s+)?$",
    re.IGNORECASE,
)
# ... unless the person is a relative clause's subject ("to my sister, who lives in X"): theirs
_WHO_AFTER = re.compile(r"\W*(?:who|that)\b", re.IGNORECASE)
_WITH_ME = re.compile(r"\b(?:i|me|we|us)\s+and\s+(?:the\s+|my\s+|our\s+)?$", re.IGNORECASE)
# "X is where my ...", "X is what my ...": the clause after it says whose X is.
_WHERE_MY = re.compile(r"\s+(?:is|was|['’]s)\s+(?:where|what|who|when)\s+", re.IGNORECASE)
_AND_I = re.compile(r"\s+and\s+(?:i|me)\b", re.IGNORECASE)
_NEXT_WORDS = re.compile(r"\s+([\w-]+)(?:\s+([\w-]+))?")
_SOMEONE_I = re.compile(
    r"(?:^|[,;.!?]\s*|\b(?:a|the|some|this|one)\s+)(?:someone|somebody|people|person|guy|girl|"
    r"woman|man|friend|colleague)\s+(?:that\s+|who\s+)?$",
    re.IGNORECASE,
)
# Who is someone by their title, a family by its name ("the Hendersons"), the partner by
# "the other half".
_TITLES = frozenset("mr mrs ms miss dr prof sir dame".split())
_A_FAMILY = re.compile(r"\b[Tt]he\s+[A-Z][a-z]+s$")
_OTHER_HALF = re.compile(r"\b(?:the|my|our|his|her|their)\s+other\s+half$", re.IGNORECASE)
# "nothing but", "anything but": "except", no clause of its own.
_EXCEPT = re.compile(r"\b(?:nothing|anything|everything|all|none)\s*$", re.IGNORECASE)


# A "my" inside a phrase after a noun ("Tariq from my book club", "a mate of mine"), not the
# subject's: the noun before it decides.
_IN_A_PHRASE = re.compile(r"\b([A-Za-z][\w'’-]*)\s+(?:from|of|at|in|on|with|near|by)\s+$", re.I)


_SOMEONE = frozenset(
    "bloke blokes chap fella lady woman man guy person people someone somebody one".split()
)


def _of_someone(before: str) -> bool:
    """Whether ``before`` ends in a person and a preposition ("Tariq from ", "a mate of "),
    so that a "my" after it is in the phrase describing them ("luck in my new role": not)."""
    m = _IN_A_PHRASE.search(before)
    if m is None:
        return False
    word = m.group(1)
    low = word.lower()
    return (
        low in _OTHERS
        or low in _SOMEONE
        or (word[0].isupper() and low not in _OPENERS and not _plain_word(word))
    )


# What may follow the X of "my partner's X" when its "'s" is "is": the sentence's end, a
# comma before a time, or a time ("My girlfriend's Noor, since the summer", "... Noor now").
_ENDS_A_CLAUSE = re.compile(
    r"\s*(?:$|[.!;)]|,\s*(?:since|now|as\s+of|for|these)\b|(?:now|since|these|nowadays)\b)",
    re.IGNORECASE,
)


def _whose(sentence: str, a: int, b: int, attr: str, named_subject: bool = False) -> str:
    """``user`` when the sentence tells the value of the user, ``other`` when of someone
    else: the nearest subject before the value decides, else the nearest after it, else the
    speaker (a subject left out), unless ``named_subject`` asks for one the sentence names
    (an assistant's text: what it says with no subject is advice, lists, not the user's)."""
    about_user = "user" in sentence.lower()
    # ("May I mention X is where Dana lives": the "I" is the telling's, no subject of X's)
    told = _TELLING.search(sentence, 0, a)
    before = list(_WORD.finditer(sentence, told.end() if told else 0, a))
    after = list(_WORD.finditer(sentence, b))
    if (
        attr not in ("partner", "drives")  # a car does nothing of its own
        and _ITS_VERB.match(sentence, b)
        and not _AFTER_PREP.search(sentence[:a])
        and not (attr == "works_at" and any(m.group(0).lower() in _USER for m in after))
    ):
        # "read that X is opening an office", "I prefer tea, coffee makes me jittery": the
        # value is its clause's subject, doing something; the clause is its own (a firm's
        # may be the user's: "X hired me").
        return "other"
    for side, tokens in (("before", reversed(before)), ("after", after)):
        for n, m in enumerate(tokens):  # n: how many words lie between it and the value
            word = m.group(0)
            low = word.lower()
            if side == "before" and (
                (low == "but" and not _EXCEPT.search(sentence[: m.start()]))
                or (low in ("and", "so") and sentence[: m.start()].rstrip().endswith(","))
            ):
                # "X was sweet but it's Y I fell for", "the dog's on his pills, and Y and I
                # are together": whose Y is, is said in its own clause
                break
            if low.endswith(("'s", "’s")) and low[:-2] == "user":
                return "user"  # "User's current drink: X" (a note about the user)
            if (
                attr == "partner"
                and n == 0
                and low[:-2] in _PARTNER_WORDS
                and _ENDS_A_CLAUSE.match(sentence, b)
            ):
                continue  # "my new partner's X": is X (not "my partner's X account", "X lives")
            if (
                low.endswith(("'s", "’s"))
                and (low[:-2] in _OTHERS or word[0].isupper())
                and low[:-2] not in _IS_WORDS
            ):
                if side == "after" and low[:-2] not in _OTHERS:
                    continue  # "... with X since the party at Lena's": no owner of X
                return "other"  # "my uncle's car", "Dana's new badge"
            if low in _USER and side == "before" and _of_someone(sentence[: m.start()]):
                continue  # "Tariq from my book club", "a mate of mine": whose the phrase is
            if (
                low in _OBJECTS
                and side == "before"
                and _DONE_TO.search(sentence[: m.start()])
                and _GIVEN.fullmatch(sentence[m.end() : a])
            ):
                continue  # "the barista gave me X": whom it was done to, not who did it
            if (
                low in ("my", "our")
                and side == "after"
                and _WHERE_MY.fullmatch(sentence[b : m.start()])
            ):
                kin = _NEXT_WORDS.match(sentence, m.end())
                nouns = [w.lower() for w in kin.groups() if w] if kin else []
                if (
                    any(w in _OTHERS for w in nouns)
                    and not (attr == "partner" and any(w in _PARTNER_WORDS for w in nouns))
                    and not (kin and _AND_I.match(sentence, kin.end(1)))
                    and not (kin and kin.group(2) and _AND_I.match(sentence, kin.end(2)))
                ):
                    return "other"  # "X is where my (big) sister lives": the sister's
            if low in ("i", "we") and side == "before" and _SOMEONE_I.search(sentence[: m.start()]):
                continue  # "someone I know lives in X": the someone's
            if low in _USER:
                if named_subject and (side == "after" or n >= 6):
                    return "other"  # an assistant's "you" far from the value, or after it
                return "user"
            if low in _PRONOUN:
                if (
                    attr == "partner"
                    and side == "before"
                    and _NAME_IS.fullmatch(sentence[m.end() : a])
                ):
                    continue  # "a new boyfriend, his name is X": the partner's own name
                if side == "after" and attr == "partner":
                    continue  # "going out with X, they're a designer": the partner themself
                return "user" if about_user else "other"
            if sentence[m.start() - 1 : m.start()] == "@":
                return "other"  # "@dana moved to X": a colleague by their chat handle
            if low in _TITLES or (
                word[0].isupper() and _A_FAMILY.search(sentence[: m.end()]) and not is_city(word)
            ):
                return "other"  # "Mrs Patel next door ...", "the Hendersons have ..."
            if low == "half" and _OTHER_HALF.search(sentence[: m.end()]):
                if attr == "partner":
                    continue  # "the other half": the partner, whose name is the value
                return "other"  # "the other half has started at X": theirs
            if low in TRADES and (side == "after" or not _OPENS.search(sentence[: m.start()])):
                continue  # "a new dentist in X", "... for the dentist": dealt with, no subject
            if low == "mate" and sentence[: m.start()].lower().endswith("yerba "):
                continue  # a drink, no friend
            if attr == "partner" and low in ("someone", "somebody"):
                continue  # "I'm seeing someone, it's X": the someone is X
            if (
                side == "before"
                and low in _OTHERS
                and _OBJECT_OF.search(sentence[max(0, m.start() - 60) : m.start()])
                and not _WHO_AFTER.match(sentence, m.end())
            ):
                continue  # "moved on from my ex, seeing X": the ex is no one's subject
            if (low in _OTHERS or low in _SOMEONE) and _WITH_ME.search(sentence[: m.start()]):
                return "user"  # "you and the kids have moved to X": the speaker among them
            if (low in _OTHERS or (low in _SOMEONE and low not in ("one", "people"))) and not (
                attr == "partner" and low in _PARTNER_WORDS
            ):
                if (
                    side == "before"
                    and low in _TIED.get(attr, ())
                    and _LINKED.fullmatch(sentence[m.end() : a])
                ):
                    continue  # "my manager at X", "our neighbours in X": whose N decides
                return "other"
            if (
                word[0].isupper()
                and not (word.isupper() and len(word) <= 4)  # an acronym ("first PR merged")
                and low not in NOT_A_SUBJECT
                and low not in _OPENERS
                and not _plain_word(word, opener=not sentence[: m.start()].strip(" \t\"'(-"))
                and not any(low in cues for cues in CUES.values())
                and not (attr == "partner" and m.start() >= a)
                and (_NAME_VERB.match(sentence, m.end()) or _FROM_GROUP.match(sentence, m.end()))
                and (
                    not is_city(word)
                    or _FROM_GROUP.match(sentence, m.end())
                    or _PERSON_VERB.match(sentence, m.end())
                )
            ):
                return "other"  # "Jo drinks ...", "Dana said ...", "Soledad from my club ..."
    if named_subject:
        # "Congratulations on joining X!": the one the assistant answers, unless another is
        # named in between ("Congratulations on Noor moving to X", "on your sister joining").
        cheered = _CONGRATS.search(sentence[:a])
        if cheered and not any(
            w[0].isupper() for w in _WORD.findall(sentence[cheered.start() : a])[1:]
        ):
            return "user"
        return "other"
    return "user"
