# ruff: noqa: RUF001, SIM905 - curly quotes are text here; word lists read best as one string
"""Facts recognised by their value, whatever the sentence's shape.

`chrysalis.extract.facts` reads sentence shapes ("I moved to X"); people say the same things in
endless other ways ("finally got the keys to our place in X!!", "new badge says X on it",
"The user now drives a X."). Here a sentence gives a fact when it holds

- a value of a type: a city (`chrysalis.extract.places`, or a capitalised name right after
  "in"/"to"), an organisation-like name, a drink (`DRINK_WORDS` and its modifiers), a car (a
  make from `CAR_MAKES` and its model), a person's first name;
- words of the attribute (`CUES`: keys, landlord, postcode, unpacked ... for a home; badge,
  salary, onboarding ... for an employer), matched with one typo allowed in long words, and
  none of the words that make it something else (`AGAINST`: a trip, a flight, a conference
  for a place; a job ad, an interview for a company; tried once for a drink; a rental for a
  car);
- the user as its subject: the nearest subject before the value (else after it) is the speaker
  ("I", "we", "my", "the user", or a pronoun in a sentence about the user), or there is none
  (the user's own words with the subject left out: "New postcode, new life: X.");
- an assertion (`chrysalis.extract.mood`): no question, wish, condition, plan or negation,
  no quote; reported speech only when what is reported is about the speaker ("Jo says I'm the
  newest hire at X") or the reporter is the user ("User mentioned they work for X"); nothing
  said as past ("used to", "my old", "left", "gave up", "instead of").

Someone else's home, job, drink or car in the third person ("my sister lives in X", "Jo drinks
X", "my dad's X") gives nothing here: `facts` reads those with their subject.
"""

from __future__ import annotations

import bisect
import functools
import re
from collections.abc import Sequence

from chrysalis.extract import Fact, Mention, learned
from chrysalis.extract.cues import (
    _OTHERS,
    _PARTNER_WORDS,
    _PRONOUN,
    _SOMEONE_ELSE,
    _USER,
    _WORD,
    AGAINST,
    CUES,
    _cued,
    _cued_attrs,
    _words,
)
from chrysalis.extract.facts import DRINK_WORDS
from chrysalis.extract.mood import (
    _AFTER_NEGATED,
    _CONDITION,
    _NEGATED,
    _PLAN,
    _WISH,
    ASSERTED,
    NEGATED,
    PAST,
    REPORTED,
    RETRACTED,
    Reading,
)
from chrysalis.extract.places import is_city
from chrysalis.extract.values import (
    _FROM_GROUP,
    _IS_MINE,
    _OVER_TO,
    ORG_HEADS,
    _Value,
    _values,
    lower_values,
)
from chrysalis.extract.whose import _mine, _someone_elses, _whose

__all__ = ["AGAINST", "CUES", "TYPES", "addressed", "facts_from", "typed_facts", "typed_mentions"]

# Phrases right before a value that say it is no longer (or never was) the current one.
_NOT_NOW = re.compile(
    r"(?:\bused\s+to\b|\b(?:my|our|the)\s+(?:old|former|previous|last)\b|\bex[- ]|\bformer\b|"
    r"\bleft\b|\bleaving\b|\bquit\b|\bgave\s+up\b|\bditched\b|\bdropped\b|\bkicked\b|"
    r"\bstopped\b|\bgive\s+up\b|\bswapped\b|\bswitched\s+from\b|\bsold\b|\bselling\b|"
    r"\bscrapped\b|\btotall?ed\b|"
    r"\binstead\s+of\b|\bthan\b|\bno\s+more\b|\bfrom\s+my\s+old\b|\bback\s+when\b|"
    r"\bmoved\s+(?:away\s+|out\s+)?from\b|\bout\s+of\b)"
    r"(?:\W+\w+){0,2}\W*$",
    re.IGNORECASE,
)
# ... unless the value is what the old one was given up for ("replaced my old drink with X",
# "switched from tea to X", "left Acme for X"): the new one.
_NEW_ONE = re.compile(
    r"\b(?:replaced|replacing|swapped|swapping|switched|switching|traded|trading|exchanged|"
    r"changed|upgraded|gave\s+up|ditched|dropped|quit|left|abandoned)\b(?:\W+\w+){0,5}?\W+"
    r"(?:for|with|to|into)\W*$",
    re.IGNORECASE,
)
# The value presupposed as the speaker's by a possessive ("taking my X", "a plumber for my
# flat in X", "my colleagues at X"): it holds in a question or a plan too ("Can you check the
# tyres on my X?"). A car right after "my"; a home or a job through its noun.
_MINE_BEFORE: dict[str, re.Pattern[str]] = {
    "drives": re.compile(
        r"\b(?:my|our)\s+(?:(?:new|current|own|trusty|beloved|little|second-hand|used)\s+)*$",
        re.IGNORECASE,
    ),
    "lives_in": re.compile(
        r"\b(?:my|our)\s+(?:new\s+)?(?:flat|place|apartment|house|home|condo|studio|address|"
        r"neighbou?rhood|street|landlord|landlady)\s+(?:here\s+)?in\s+$",
        re.IGNORECASE,
    ),
    "works_at": re.compile(
        r"\b(?:my|our)\s+(?:new\s+)?(?:job|role|position|post|office|team|manager|boss|contract|badge|"
        r"salary|desk|colleagues|coworkers|co-workers|onboarding|employer|"
        r"first\s+(?:day|week|month|pr|commit|paycheck|payslip|standup|sprint|deploy|ticket|"
        r"shift|review|all-hands|on-call))\s+(?:at|with|for)\s+$",
        re.IGNORECASE,
    ),
}
# A move to an organisation ("moved over to X", "switched to X") or being at one now
# ("I'm at X now"): a job, when X is one by its name.
_TO_AN_ORG = re.compile(
    r"(?:\b(?:moved|moving|switched|switching|went|gone|jumped|jumping|headed|defected)\s+"
    r"(?:over\s+|across\s+)?to|\b(?:i['’]?m|i\s+am)\s+(?:now\s+)?(?:at|with))\s+$",
    re.IGNORECASE,
)
# A firm one is with as a customer, not an employee ("switched to X Insurance for my car").
_AS_A_CUSTOMER = re.compile(r"\s+for\s+(?:my|our|the|a|an)\b", re.IGNORECASE)
# A frame of make-believe, where even a possessive is no fact ("Pretend my flat in X ...").
_FICTION = re.compile(
    r"\b(?:pretend|pretending|imagine|imagining|suppose|supposing|let['’]s\s+say|"
    r"hypothetically|role-?play|in\s+(?:the|my|a|this)\s+(?:story|novel|game|dream|scene))\b",
    re.IGNORECASE,
)
# A request to change the speaker's own record of an attribute ("can you update my home city
# to X?", "please set my employer as X"): X is theirs, whatever mood the request is in.
_UPDATE_MINE = re.compile(
    r"\b(?:please|pls|plz|kindly|can\s+you|could\s+you|would\s+you)\s+(?!not\b|never\b)"
    r"(?:\w+\s+)?(?:update|change|set|switch|correct)\s+(?:my|our)\s+"
    r"(?:[\w-]+\s+){0,2}?(?P<field>[\w-]+)\s+(?:to|as)\s+(?:(?:a|an|the)\s+)?$",
    re.IGNORECASE,
)
# ... the record's own word, the field's last ("my home city", "my current employer"): not
# a booking, a reminder, an order or a wallpaper set to X ("change my flight to X").
_RECORD = {
    "lives_in": frozenset("city town home address location residence hometown".split()),
    "works_at": frozenset("employer workplace company job work firm".split()),
    "drinks": frozenset("drink beverage".split()),
    "drives": frozenset("car vehicle ride".split()),
    "partner": frozenset("partner girlfriend boyfriend wife husband spouse".split()),
}
# The speaker and one named person as a pair ("me and X", an assistant's "you and X"), told
# as glad news: a couple.
_PAIR = re.compile(r"\b(?:I|me|you)\s+and\s+$", re.IGNORECASE)
_GLAD = re.compile(
    r"\b(?:lovely|wonderful|great|happy|exciting|congratulations|congrats|good)\s+"
    r"(?:news|for\s+(?:you|the\s+two\s+of\s+you|both\s+of\s+you))\b|\bcongrat",
    re.IGNORECASE,
)
_SPEECH = re.compile(
    r"\b(?:says?|said|saying|told|tells|telling|mentioned|mentions|mentioning|wrote|writes|"
    r"writing|claims?|claimed|claiming|thinks|thinking|reckons|posted|posting|announced|"
    r"announcing|noted|reported|insists?|insisted|insisting)\b",
    re.IGNORECASE,
)
# A state that held once and is over ("I lived in Holland when I was a child").
_PAST = re.compile(
    r"\b(?:lived|worked|grew\s+up|was\s+born|as\s+a\s+(?:kid|child|teen)|when\s+I\s+was|"
    r"years\s+ago|back\s+then|in\s+the\s+past|childhood)\b",
    re.IGNORECASE,
)
# The speaker contradicting what is reported ("Bob said I live in Berlin, which is wrong").
_DENIED = re.compile(
    r"\b(?:wrong|false|untrue|not\s+true|lies?|lying|nonsense|rubbish|kidding|joking|rumou?rs?)\b",
    re.IGNORECASE,
)


# Bounds on the work a text can ask for (each value costs a pass over its sentence, so a
# 20,000-character "sentence" of 2,000 cities took minutes): a sentence longer than this is a
# list or a paste, not a statement; past this many values of one attribute, none asserted, a
# text is a list of them.
MAX_SENTENCE = 2_000
MAX_VALUES = 24


def typed_facts(text: str, speaker: str, reading: Reading | None = None) -> list[Fact]:
    """The facts about ``speaker`` that ``text`` tells by its values (see the module's doc):
    at most one per attribute, the first the text asserts among its first `MAX_VALUES`
    values of that attribute, in sentences of at most `MAX_SENTENCE` characters."""
    return facts_from(typed_mentions(text, reading), speaker)


# An assistant's words of the person it answers ("you've settled in X", "your go-to is X"),
# turned into that person's own ("I've settled in X"), and its own first person into a third
# ("I'll keep it in mind" -> "someone'll keep it in mind"): read so, the typed reader takes what
# the assistant restates of the user as the user's, and nothing it says of itself.
_SECOND = {
    "you": "I", "you're": "I'm", "you’re": "I’m", "you've": "I've", "you’ve": "I’ve",
    "you'd": "I'd", "you’d": "I’d", "you'll": "I'll", "you’ll": "I’ll", "your": "my",
    "yours": "mine", "yourself": "myself",
}  # fmt: skip
# (someone: a person other than the user, so a clause of the assistant's is no one's value
# of the user's; "we"/"our" too, the assistant's side or its makers.)
_FIRST = {
    "i": "someone", "i'm": "someone's", "i’m": "someone’s", "i've": "someone's",
    "i’ve": "someone’s", "i'd": "someone'd", "i’d": "someone’d", "i'll": "someone'll",
    "i’ll": "someone’ll", "me": "someone", "my": "someone's", "mine": "someone's",
    "myself": "someone", "we": "someone", "we're": "someone's", "we’re": "someone’s",
    "we've": "someone's", "we’ve": "someone’s", "we'll": "someone'll", "we’ll": "someone’ll",
    "we'd": "someone'd", "we’d": "someone’d", "us": "someone", "our": "someone's",
    "ours": "someone's", "ourselves": "someone",
}  # fmt: skip
_PERSON = re.compile(
    r"(?<![\w'’])(?:you(?:['’](?:re|ve|d|ll))?|your(?:s|self)?|i(?:['’](?:m|ve|d|ll))?|me|my|"
    r"mine|myself|we(?:['’](?:re|ve|ll|d))?|us|our|ours|ourselves)(?![\w'’])",
    re.IGNORECASE,
)


def addressed(text: str) -> str:
    """An assistant's ``text`` with its addressee as the speaker and itself as a third person
    (same length per word is not kept; offsets are the new text's)."""

    def swap(m: re.Match[str]) -> str:
        word = m.group(0)
        low = word.lower()
        new = _SECOND.get(low) or _FIRST.get(low, word)
        if low in _FIRST:
            return new  # lower case: never read as a name
        return new[0].upper() + new[1:] if word[0].isupper() and new[0] != "I" else new

    return _PERSON.sub(swap, text)


def facts_from(mentions: Sequence[Mention], speaker: str) -> list[Fact]:
    """The facts ``mentions`` (of `typed_mentions`) give ``speaker``: per attribute, the
    first value asserted as theirs."""
    found: dict[str, str] = {}
    for m in mentions:
        if m.own:
            found[m.predicate] = (
                m.value
            )  # the last: a later one is the newer ("X was cheaper, but we chose Y")
    return [Fact(speaker, attr, obj, "person", TYPES[attr], stated_by=speaker)
            for attr, obj in found.items()]  # fmt: skip


def typed_mentions(
    text: str, reading: Reading | None = None, *, named_subject: bool = False
) -> list[Mention]:
    """Every value of each attribute's type that ``text`` names (at most `MAX_VALUES` per
    attribute, in sentences of at most `MAX_SENTENCE` characters), in text order, each
    ``own`` when the text asserts it as its speaker's value now (the module's doc: cued, not
    against, the speaker's, asserted, not past) and not ``own`` otherwise. A value named
    twice is listed once, ``own`` if any naming asserts it. With ``named_subject`` a value
    is ``own`` only where the sentence names the speaker as its subject (`_whose`)."""
    reading = reading or Reading(text)
    plain = reading.plain
    cued_text = _cued_attrs(_words(text))
    out: dict[tuple[str, str], bool] = {}
    tries = dict.fromkeys(CUES, MAX_VALUES)  # values weighed for an assertion, per attribute
    named = dict.fromkeys(CUES, MAX_VALUES)  # values listed at all, per attribute
    # The values the sentence before named (where, and that sentence with its own offsets).
    prior: dict[str, list[tuple[int, int, str, str, _Value]]] = {}
    spans = [(a, b) for a, b in reading.sentences() if b - a <= MAX_SENTENCE]
    words_of = [_words(plain[a:b]) for a, b in spans]
    cues_of = [_cued_attrs(w) & cued_text for w in words_of]
    for i, (start, end) in enumerate(spans):
        sentence = plain[start:end]
        low_words = words_of[i]
        if (
            not prior
            and sentence == sentence.lower()
            and not low_words & DRINK_WORDS
            and not lower_values(sentence)
        ):
            continue  # no name, no drink, nothing to point back to: no value (". . ." is quick)
        past = _PAST.search(sentence) is not None
        cued_now = cues_of[i]
        # The words of the attribute may be in the sentence before, when this one is the
        # speaker's own ("a GP near my new place? I'm in X now"), unless it says a stay.
        carried = (
            cues_of[i - 1]
            if i
            and (low_words & _USER or _THATS.match(sentence))
            and _STAY.search(sentence) is None
            else set()
        )
        ahead = (
            cues_of[i + 1]
            if i + 1 < len(spans) and _own_line(reading, *spans[i + 1], words_of[i + 1])
            else set()
        )
        for attr in CUES:
            if named[attr] <= 0:
                continue
            values = _values(attr, sentence)
            back = _BACK.get(attr)
            there = back.search(sentence) if back and not values and attr in prior else None
            # (not in a sentence about someone else: "Porto? It is where my sister lives", nor
            # in one that tells it over: "Lisbon? moved there in 2019, moved out in 2021")
            meant = (
                _pointed(reading, prior[attr], attr)
                if there and not low_words & _SOMEONE_ELSE and not _undone(low_words)
                else None
            )
            if there and meant:  # "... near Lyon? We moved there in March": the value before
                values = [_Value(there.start(1), there.end(1), meant)]
            elif values:
                prior[attr] = [
                    (start + v.start, start + v.end, v.text, sentence, v) for v in values
                ]
            else:
                prior.pop(attr, None)
            if not values:
                continue
            # The words of something else (`AGAINST`) count in the clause of a value ("a
            # recruiter pinged again, told them I joined X": the recruiter is another clause's).
            # (only of the values still to be listed: a sentence of hundreds of names costs
            # no reading of each one's clause)
            listed = values[: named[attr]]
            against = {
                v.text
                for v in listed
                if _cued(_clause_words(sentence, v), AGAINST[attr], typos=False)
            }
            open_ = (
                not past
                and tries[attr] > 0
                and len(against) < len(listed)
                and not _cued(low_words, _A_STAY[attr], typos=False)
                and (
                    attr != "partner"
                    or _mine(sentence, low_words)
                    # "yes, Noor! we made it official": the answer, the next line the user's
                    or (attr in ahead and len(values) == 1 and _bare(sentence, values[0]))
                )
            )
            weigh = open_ and (attr in cued_now or attr in carried)
            errand = _ERRAND.match(sentence) is not None and not low_words & _SPEAKING
            # Two values of one kind, one taken back ("X was cheaper but we chose Y", "no
            # more X, it's Y now"): the choice is said by the contrast itself.
            dropped = _taken_back(reading, start, sentence, listed) if len(listed) > 1 else []
            for value in values:
                named[attr] -= 1
                if named[attr] < 0:
                    break
                own = False
                if value.text in against:
                    key = (attr, value.text)
                    out[key] = out.get(key, False)
                    continue
                said = _said_mine(sentence, value, attr) if open_ else None
                if errand and attr in _ERRAND_OBJECTS and "," not in sentence[: value.start]:
                    continue  # "Order a box of X for the office": bought, not drunk
                if attr == "partner" and _kin_of_mine(sentence, value):
                    continue  # "X is my cousin": a relative or a friend, no partner
                if attr == "drives" and _PASSED.search(sentence[: value.start]):
                    continue  # "stuck behind a X on the motorway": a car on the road
                if (
                    attr == "partner"
                    and _FROM_GROUP.match(sentence, value.end)
                    and not (low_words & _A_COUPLE and _US.search(sentence))
                ):
                    continue  # "X from uni is coming over": someone known from somewhere
                chosen = (
                    bool(dropped)
                    and value not in dropped
                    and (
                        attr != "partner"
                        or all(" " not in v.text and not is_city(v.text) for v in values)
                    )
                )
                # A value alone in its sentence ("Quillsoft. Signed on Friday.") has the words
                # of the sentence after it.
                bare = len(values) == 1 and attr in ahead and _bare(sentence, value)
                # No word of the attribute here, but its wording is a statement's (`learned`).
                guessed = (
                    open_
                    and not weigh
                    and bool(low_words & _USER)
                    and (attr != "partner" or _a_person_guessed(value.text, low_words))
                    and not _ended(low_words)
                    and learned.stands(attr, sentence, value.start, value.end)
                    # (a place the rules read here is no employer or partner to guess)
                    and (attr == "lives_in" or not _a_place(sentence, value))
                )
                if value in dropped:
                    pass  # taken back ("X was cheaper but ..."): whoever chose, not X
                elif (weigh or said or guessed or (open_ and (chosen or bare))) and tries[attr] > 0:
                    tries[attr] -= 1
                    a, b = start + value.start, start + value.end
                    if said == "is":  # "X is my partner now": whose, and now, are said
                        own = _asserted(reading, plain, start, a, b, attr, named_subject)
                    elif said == "my":  # "my X": presupposed, in a question or plan too
                        own = (
                            _now(plain[start:a])
                            and not _FICTION.search(sentence[: value.start])
                            and _presupposed(reading, plain, start, a, b)
                            and _whose(sentence, a - start, b - start, attr, named_subject)
                            == "user"
                        )
                    else:
                        own = (
                            _now(plain[start:a])
                            and _asserted(reading, plain, start, a, b, attr, named_subject)
                            and _whose(sentence, a - start, b - start, attr, named_subject)
                            == "user"
                        )
                key = (attr, value.text)
                out[key] = out.get(key, False) or own
    return [Mention(attr, value, own) for (attr, value), own in out.items()]


# "I'm with X now" is a partner or a firm one is a customer of ("I'm with Vodafone now, way
# cheaper", "I bank with Monzo now"): the learned opinion masks the name, so these words,
# and a plural "we" ("we're with X now, she's our lawyer"), keep it from guessing a partner.
_A_CUSTOMER = frozenset(
    """bank banking insurance insurer insured broadband provider tariff network signal mobile
    energy electricity gas phone contract subscription cheaper customer account app lawyer
    solicitor accountant agent agency""".split()
)
_I = frozenset("i i'm i’m im i've i’ve ive i'd i’d i'll i’ll me my mine myself".split())


def _a_person_guessed(value: str, words: set[str]) -> bool:
    """Whether a partner the learned opinion reads can be one: a single name, not a city's,
    said by "I" of no customer's words (`_A_CUSTOMER`)."""
    return " " not in value and not is_city(value) and bool(words & _I) and not words & _A_CUSTOMER


_IS_MY = re.compile(
    r"\s+(?:is|was|['’]s)\s+(?:my|our)\s+(?:\w+\s+)?([\w-]+)(['’]s\s+(?!name\b)\w)?",
    re.IGNORECASE,
)


def _kin_of_mine(sentence: str, value: _Value) -> bool:
    """Whether ``value`` is told as someone of the speaker's other than a partner ("X is my
    cousin", "X is our neighbour", "X's my best mate", "X is my partner's cousin")."""
    m = _IS_MY.match(sentence, value.end)
    if m is None:
        return False
    word = m.group(1).lower()
    if m.group(2):
        return True  # "X is my partner's cousin": someone of someone else's
    return word in (_OTHERS | {"cousin", "cousins"}) and word not in _PARTNER_WORDS


# A car seen on the road, not owned ("behind a X", "overtaken by a X").
_PASSED = re.compile(
    r"\b(?:behind|beside|next\s+to|in\s+front\s+of|past|overtook|overtaken\s+by|"
    r"cut\s+off\s+by|parked\s+next\s+to|hit\s+by|rear-ended\s+by)\s+(?:a|an|the|some|this|that)\s+$",
    re.IGNORECASE,
)
_US = re.compile(r"\b(?:and\s+(?:i|me)|me\s+and|we|we['’]re|us)\b", re.IGNORECASE)
# Words that make a couple of two people however the one is known ("X from yoga and I are
# dating"); "love" alone does not ("X from uni is over, we're watching Love Island").
_A_COUPLE = frozenset(
    """dating together official relationship girlfriend boyfriend partner seeing kissed
    engaged married anniversary couple""".split()
)


# A state told as over ("I was at X until March", "... since May but I left"): the learned
# opinion reads a statement's wording, not its tense, so it guesses nothing there.
_ENDED = frozenset("i_was we_were left quit resigned no_longer anymore any_more".split())


def _ended(words: set[str]) -> bool:
    """Whether a sentence's `_words` tell a state that is over: "I was", "left", "no
    longer", or "been" with an "until" ("I'm at X until I find better" is still at X)."""
    return bool(words & _ENDED) or ("been" in words and bool(words & {"until", "till"}))


# A sentence naming what the one before spoke of ("near my place? That's Utrecht now").
_THATS = re.compile(r"\s*(?:that|it)['’]?s\b", re.IGNORECASE)
# Words of a stay somewhere, not a home ("I'm in Lyon this weekend").
_STAY = re.compile(
    r"\b(?:this\s+(?:weekend|week)|today|tonight|tomorrow|for\s+work|for\s+a\s+(?:few\s+)?days?|"
    r"on\s+(?:holiday|vacation|a\s+trip|business)|visiting|for\s+the\s+weekend)\b",
    re.IGNORECASE,
)


# A value told of the one the sentence before named, by a word that points back to it
# ("... near Lyon? We moved there in March", "tyre pressure for a Kia Niro? I bought one",
# "snacks that go with chai? It has become my daily drink", "I meant Porto. That's where we
# live", "a dinner for Sam? We've been together a month"): the sentence must be the
# attribute's in its own words (cued, the user's, asserted) like any other.
_POINTER = re.compile(
    r"(?<![\w'’])(it|there|here|that|this|one|mine)(?:['’]s)?(?![\w'’])"
    # ("this morning", "that week": a time, no pointer)
    r"(?!\s+(?:morning|afternoon|evening|night|week|weekend|month|year|time|spring|summer|"
    r"autumn|fall|winter)\b)",
    re.IGNORECASE,
)
_BACK = {
    **dict.fromkeys(("lives_in", "works_at", "drinks", "drives"), _POINTER),
    "partner": re.compile(
        r"\b(we)(?:['’]ve|['’]re|\s+have|\s+are)?\s+"
        r"(?:(?:been|now|officially|finally|started|began|just|recently)\s+)*"
        r"(?:together|dating|a\s+couple|seeing\s+each\s+other|an\s+item)\b",
        re.IGNORECASE,
    ),
}


# Words a sentence may hold besides a value and still be that value alone ("It's X now!").
_FILLER_WORDS = frozenset(
    """it's it’s its a an the now just finally officially yes yep yeah yup so well ok okay
    oh right sure actually no nope um erm""".split()
)  # (not "hey"/"hi": "hey, Noor! moved in last week" greets Noor, it answers nothing)


def _own_line(reading: Reading, start: int, end: int, words: set[str]) -> bool:
    """Whether the sentence at ``start:end`` tells the speaker's own doing, so a value alone
    before it takes its words: asserted, of no one else ("Lisbon. My brother moved there",
    "X. Started on Monday? No idea" give the value to no one)."""
    mood = reading.mood(start, end)
    line = reading.plain[start:end]
    # ("Quillsoft. accepted the offer yesterday": an event told in the past brings the value
    # about; "Lisbon. Lived there for years": a state told in the past is over)
    return (
        not words & (_OTHERS | _PRONOUN)
        and (mood == ASSERTED or (mood == PAST and not words & _STATE_PAST))
        and _PAST.search(reading.plain, start, end) is None
        # The mood of a whole line reads how it opens and ends, not what is inside it: a
        # plan, a wish, a near miss, a refusal or an ending anywhere in it ("would move there",
        # "declined the offer", "started in 2019, left last year") keeps the value no one's.
        and not _undone(words)
        and not any(p.search(line) for p in _NOT_SO_NOW)
    )


_STATE_PAST = frozenset("lived worked drove drank was were dated had used_to".split())
# Words of a value turned down or given up ("declined the offer", "sold it", "broke up").
_UNDONE = frozenset(
    """declined declining decline turned_down turning_down rejected refused sold selling
    moved_out moving_out broke_up split_up split splitting divorced separated ended dumped
    withdrew withdrawn fired laid_off""".split()
)


def _undone(words: set[str]) -> bool:
    """Whether a sentence's `_words` tell a value over or turned down (`_ended`, `_UNDONE`)."""
    return _ended(words) or bool(words & _UNDONE)


_NOT_SO_NOW = (_PLAN, _WISH, _CONDITION, _NEGATED, _AFTER_NEGATED)


def _bare(sentence: str, value: _Value) -> bool:
    """Whether ``sentence`` is ``value`` alone, but for filler words and punctuation."""
    rest = sentence[: value.start] + " " + sentence[value.end :]
    return all(w.lower() in _FILLER_WORDS for w in _WORD.findall(rest))


def _taken_back(
    reading: Reading, start: int, sentence: str, values: Sequence[_Value]
) -> list[_Value]:
    """Of several ``values`` of one kind in a sentence, those it takes back: denied or said as
    no longer ("not X", "no more X"), retracted, or told in the past ("X was cheaper"); empty
    when it takes back none or all of them (no contrast). (A value only compared away, "than
    X", "instead of X", is not enough: on a blind family that wrote 82 wrong drinks.)"""
    out = [
        v
        for v in values
        if reading.mood(start + v.start, start + v.end) in (NEGATED, RETRACTED)
        or _WAS.match(sentence, v.end)
    ]
    return out if len(out) < len(values) else []


_WAS = re.compile(r"\s+(?:was|were|had\s+been|used\s+to)\b", re.IGNORECASE)


def _pointed(
    reading: Reading, named: list[tuple[int, int, str, str, _Value]], attr: str
) -> str | None:
    """What a pointer back points to of the values the sentence before ``named``: the last
    not taken back ("Porto, not Braga. That's where we live") and no one else's ("Tariq
    from work bought a X. Remind me to ask how it drives.")."""
    for a, b, text, sentence, value in reversed(named):
        if reading.mood(a, b) not in (NEGATED, RETRACTED) and not _someone_elses(
            sentence, value, attr
        ):
            return text
    return None


def _said_mine(sentence: str, value: _Value, attr: str) -> str | None:
    """``is`` when the sentence says the value is the speaker's ("X is my partner now", "the
    X is mine"), ``my`` when a possessive presupposes it ("my X", "my flat in X"), ``to`` when
    the speaker moved to an organisation by its name ("moved over to X Insurance"), else
    None."""
    m = _IS_MINE.match(sentence, value.end)
    if m is not None:
        if m.group("home"):  # (not "X is home to my parents": theirs, or anyone's)
            return "is" if attr == "lives_in" and not sentence.startswith(" to", m.end()) else None
        if m.group("mine"):
            return "is" if attr == "drives" else None
        words = set(_WORD.findall(m.group("words").lower()))
        return "is" if _cued(words, CUES[attr], typos=False) else None
    mine = _MINE_BEFORE.get(attr)
    if mine is not None and mine.search(sentence[max(0, value.start - 60) : value.start]):
        return "my"
    update = _UPDATE_MINE.search(sentence[max(0, value.start - 80) : value.start])
    if (
        update is not None
        and update.group("field").lower() in _RECORD[attr]
        and not _FICTION.search(sentence)
    ):
        return "my"  # "can you update my home city to X?": the speaker's record, asked of
    before = sentence[max(0, value.start - 40) : value.start]
    if (
        attr == "works_at"
        and _TO_AN_ORG.search(before)
        and not _AS_A_CUSTOMER.match(sentence, value.end)
        and (
            value.text.split()[-1].lower() in ORG_HEADS
            or (_OVER_TO.search(before) and not is_city(value.text))
        )
    ):
        return "to"
    if attr == "partner" and _PAIR.search(before) and _GLAD.search(sentence):
        return "is"  # "lovely news about you and X!": the pair is a couple
    return None


# Each attribute's entity type (a fact's object type; the entity gate's type for a value).
TYPES = {"lives_in": "place", "works_at": "org", "drinks": "thing", "drives": "product",
         "partner": "person"}  # fmt: skip


def _presupposed(reading: Reading, plain: str, start: int, a: int, b: int) -> bool:
    """Whether a possessive of the speaker's ("my X") holds: asserted, or in someone's words
    the speaker reports ("my dad says my X is the nicest car I've owned": still the
    speaker's "my"), not in a message pasted or quoted under another writer."""
    mood = reading.mood(a, b, noun_phrase=True)
    if mood == ASSERTED:
        return True
    return mood == REPORTED and not reading.pasted(a) and ":" not in plain[start:a]


def _now(before: str) -> bool:
    """Whether the words right before a value leave it current ("my old X", "used to ... X",
    "gave up X" do not; "left the old place, I'm at X" does: a clause of the speaker's own)."""
    tail = before[-60:]
    cut = max(tail.rfind(","), tail.rfind(";"))
    if (
        cut >= 0
        and _WORD.findall(tail[cut:].lower())
        and set(_WORD.findall(tail[cut:].lower())) & _USER
    ):
        tail = tail[cut + 1 :]
    return _NEW_ONE.search(tail) is not None or _NOT_NOW.search(tail) is None


def _asserted(
    reading: Reading, plain: str, start: int, a: int, b: int, attr: str, named_subject: bool
) -> bool:
    mood = reading.mood(a, b)
    if mood == ASSERTED:
        return True
    if mood != REPORTED or reading.pasted(a):
        return False  # a pasted email or chat line is its writer's, whatever it says
    # Reported, but by the user ("User mentioned they ..."), of the speaker ("Jo says I'm"),
    # or by a thing of the attribute's ("my new badge says ...", "the lease says ...").
    before = plain[start:a]
    said = list(_SPEECH.finditer(before))
    if not said:
        return False
    reporter = set(_WORD.findall(before[: said[-1].start()].lower()))
    between = before[said[-1].end() :]
    if ":" in between[:3] or _DENIED.search(plain[a:]):
        return False  # direct speech ("Bob wrote: I ..."): its "I" is Bob; or denied
    if reading.mood(start + said[-1].start(), start + said[-1].end(), reported=False) != ASSERTED:
        return False  # the telling itself is asked or supposed ("if I told you my badge says")
    told = set(_WORD.findall(between.lower()))
    if named_subject:
        # An assistant passing on what someone or something else says of the user ("the
        # page says you live in X", "Sam told me you ...") relays a claim; it restates the
        # user only when the telling is the user's ("you mentioned you ...", "your lease
        # says ..."), no one else's in it.
        return bool(reporter & _USER) and not reporter & (_OTHERS | _PRONOUN)
    if "user" in reporter or reporter & CUES[attr]:
        return True
    return bool(told & (_USER - {"user", "user's", "user’s"}))


# A request for an errand ("Order ...", "Book ...", "Pick up ..."): a drink or a car in it is
# what the errand handles (ordered for the office, booked for a trip), not the speaker's own,
# unless the speaker says so in it ("order my usual X", "add X, it's all I drink now").
_ERRAND = re.compile(
    r"^\W*(?:(?:please|pls|can you|could you|would you)\W+)?(?:order|book|buy|get|grab|pick up|"
    r"reserve|rent|hire|add|put|stock up on|restock|fetch|bring)\b",
    re.IGNORECASE,
)
_ERRAND_OBJECTS = frozenset({"drinks", "drives"})
# (a subject: not "my"/"our", "Book me a X, my car is in the shop" is still an errand)
_SPEAKING = _USER - {"me", "us", "myself", "user", "user's", "user’s", "my", "mine", "our", "ours"}


def _a_place(sentence: str, value: _Value) -> bool:
    return any(p.text == value.text for p in _values("lives_in", sentence))


def _clause_words(sentence: str, value: _Value) -> set[str]:
    """The `_words` of the clause holding ``value``: from the last stop, comma, dash or
    joining word before it to the first after it."""
    starts, ends = _clause_edges(sentence)
    # (forward, a comma does not end it: "X, our neighbour's girl, is engaged" is X's)
    i = bisect.bisect_right(starts, value.start) - 1
    j = bisect.bisect_left(ends, value.end)
    return _words(sentence[starts[i] if i >= 0 else 0 : ends[j] if j < len(ends) else None])


@functools.lru_cache(maxsize=32)
def _clause_edges(sentence: str) -> tuple[list[int], list[int]]:
    """Where clauses may start (after each `_CLAUSE_EDGE`) and end (at each `_CLAUSE_END`) in
    ``sentence``: found once, not again for each of its values."""
    return (
        [m.end() for m in _CLAUSE_EDGE.finditer(sentence)],
        [m.start() for m in _CLAUSE_END.finditer(sentence)],
    )


# (not a colon: the words of a label are its content's, "saw an ad: work at X, great pay")
_CLAUSE_EDGE = re.compile(
    r"[,;!?()]|\.(?:\s|$)|\s[-–—]\s|\b(?:but|so|because|though|although|whereas|while|"
    r"and\s+then|then)\b",
    re.IGNORECASE,
)


_CLAUSE_END = re.compile(
    r"[;!?]|\.(?:\s|$)|\s[-–—]\s|\b(?:but|so|because|though|although|whereas|while|"
    r"and\s+then|then)\b",
    re.IGNORECASE,
)


def _after_but(sentence: str, values: Sequence[_Value]) -> set[str]:
    """The words the words of something else (`AGAINST`) are looked for in: those after the
    last "but" before the sentence's last value ("Nearly went for X but the Y was a better
    deal": "nearly" is X's, and X is no assertion anyway), else the sentence's."""
    cut = max((m.end() for m in _BUT.finditer(sentence, 0, values[-1].start)), default=0)
    return _words(sentence[cut:])


_BUT = re.compile(r"\bbut\b", re.IGNORECASE)
# Of `AGAINST`, the words of a stay or a use, not of another choice: they tell the speaker's
# situation on either side of a "but" ("We're on holiday, but I'm in X now!", "Only a rental
# for the trip, but I'm driving an X now"), and are read in the whole sentence.
_A_STAY = {
    attr: words
    & frozenset(
        """flew fly flying flight flights visit visiting visited trip trips conference holiday
        holidays vacation hotel hostel airbnb tour sightseeing layover stopover weekend_in
        weekend_away honeymoon festival wedding gig rented rent rental hire borrowed test taxi
        uber""".split()
    )
    for attr, words in AGAINST.items()
}
