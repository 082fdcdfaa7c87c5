# ruff: noqa: RUF001, E501, SIM905 - curly quotes are text here; patterns read best one per line
"""Facts the rules read from what people say: of themselves ("I moved to Boston") and of
people they name ("Caroline moved to Boston", "Caroline's brother Tom").

A statement gives a fact only with a verb that names a relation without doubt and only where
the speaker asserts it (`chrysalis.extract.mood`): never from a quote, reported speech, a
question, a wish, a condition, a plan or a negation. Tense matters: "lives in", "moved to",
"now works at", "joined", "married" say what holds now; "lived in" and "worked at" say what
no longer does, so in the third person they give nothing (in the first person the mood
reader calls them past). A named subject is a capitalised name that is no common word
("Then", "Everyone", "She" are not names); pronouns are not resolved.

The first person is the speaker: the bead's ``source`` when it has one (the name the speaker
goes by, "Caroline"), else its role (the rules extractor reads no assistant beads for facts).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from chrysalis.extract import Fact
from chrysalis.extract.mood import ASSERTED, Reading

__all__ = ["NOT_A_SUBJECT", "OTHER_PEOPLE", "PATTERNS", "TRADES", "facts"]

# Capitalised words that open a sentence or a clause but name no one.
NOT_A_SUBJECT = frozenset(
    """i i'm i've i'd i'll im ive me my we our you your he she it they them his her its their
    this that these those there here what when where why how who which whose yes no not and or
    but if then so because as also just only maybe perhaps today tomorrow yesterday tonight
    now later soon recently finally everyone everybody someone somebody nobody anyone anybody
    people everything something nothing family mom mum dad mother father sister brother wife
    husband son daughter grandma grandpa aunt uncle friend friends boss teacher doctor guy
    guys girl boy kids children baby team company the a an one both each every all some many
    most mr mrs ms dr monday tuesday wednesday thursday friday saturday sunday january february
    march april may june july august september october november december hi hey hello thanks
    well oh wow yeah ok okay sure great good suppose supposing imagine say guess""".split()
)

_CAP = r"[A-Z][\w'’&-]*(?:\.(?=\w)[\w'’&-]*)*"
_NAMED = r"(?:the\s+)?(?P<object>" + _CAP + r"(?:\s+(?:of\s+|de\s+|the\s+)?" + _CAP + r"){0,4})"
# A capitalised word of a name, in any Latin script ("Joaquín", "Łukasz", "O'Neill").
_NAME_WORD = r"[A-ZÀ-ÖØ-ÞĀ-Ž][^\W\d_]+(?:['’-](?!s\b)[^\W\d_]+)?"
_PERSON = r"(?P<object>" + _NAME_WORD + r"(?:\s+" + _NAME_WORD + r")?)"
# A free object ("green tea", "oat milk lattes"): up to four words, up to punctuation or a
# word that starts something else.
_STOP = (
    r"and|but|because|since|so|now|these|this|for|every|each|in|at|on|with|when|while|before|"
    r"after|during|instead|than|daily|most|all|almost|at|too|as|if|or|to|from|these|those|"
    r"lately|recently|nowadays|anymore|again|right|then|though|yet|either|twice|thrice|once|"
    r"per|several|whenever|throughout|mostly|usually|no|sorry|wait|mean|rather|oops|tonight|"
    r"tomorrow|today|later"
)
_THING = (
    r"(?:(?:the|a|an)\s+)?(?:(?:only|just|mainly|exclusively|strictly)\s+)?(?P<object>(?!(?:a|an|the|some|my|your|his|her|their|our|it|that|this|too|so|very|much|more|less|lots|alot|every|each|all|most|daily|twice|once|now|usually|mostly|always|only|just|at|in|on|for|with|from|to|like|"
    r"lot|bit|little|few|couple|ton|bunch|anything|nothing|everything)\b)[\w'’&.-]+(?:\s+(?!(?:"
    + _STOP
    + r")\b)[\w'’&.-]+){0,3}?)"
    r"(?=\s*(?:[.,!?;:)]|$|\s+(?:" + _STOP + r")\b))"
)
_SUBJECT = r"(?P<subject>" + _NAME_WORD + r"(?:\s+" + _NAME_WORD + r")?)"
_SOON = (
    r"(?:(?:just|recently|finally|now|also|still|currently|already|officially|actually|basically|"
    r"literally|honestly|totally|mostly|mainly|pretty\s+much)\s+){0,2}"
)
_TAIL = {"place": _NAMED, "org": _NAMED, "person": _PERSON, "thing": _THING}


@dataclass(frozen=True)
class _Rule:
    pattern: re.Pattern[str]
    predicate: str
    object_type: str
    hints: tuple[str, ...]  # a lower-case word the text must hold for the pattern to run
    first_person: bool


def _rule(verbs: str, predicate: str, type: str, hints: str, *, first: bool) -> _Rule:
    subject = r"\bI" if first else r"(?<![\w'’-])" + _SUBJECT
    flags = re.IGNORECASE if type == "thing" and first else 0
    joiner = r"(?:\s+|(?=['’]))"  # "I am", "I'm"
    pattern = re.compile(subject + joiner + _SOON + "(?:" + verbs + r")\s+" + _TAIL[type], flags)
    return _Rule(pattern, predicate, type, tuple(hints.split("|")), first)


# fmt: off
_RULES = [
    # The first person: the speaker.
    _rule(r"(?:'ve\s+|’ve\s+|have\s+)?(?:just\s+|recently\s+)?(?:live|lived|been\s+living|moved|relocated)\s+(?:in|to)", "lives_in", "place", "live|living|moved|relocated", first=True),
    _rule(r"(?:'m|’m|am)\s+(?:now\s+)?(?:living|based)\s+in", "lives_in", "place", "living|based", first=True),
    _rule(r"work(?:ed)?\s+(?:at|for)", "works_at", "org", "work", first=True),
    _rule(r"(?:'m|’m|am)\s+(?:now\s+)?(?:working|employed)\s+(?:at|for|by)", "works_at", "org", "working|employed", first=True),
    _rule(r"(?:'ve\s+|’ve\s+|have\s+)?(?:joined|started\s+(?:working\s+)?at|got\s+a\s+(?:new\s+)?job\s+at)", "works_at", "org", "joined|started|job", first=True),
    _rule(r"(?:(?:'m|’m|am|got)\s+)married\s+to|married", "married_to", "person", "married", first=True),
    _rule(r"(?:really\s+|much\s+|generally\s+)?prefer", "prefers", "thing", "prefer", first=True),
    _rule(r"(?:usually\s+|always\s+|only\s+|mostly\s+|mainly\s+)?drink", "drinks", "thing", "drink", first=True),
    # Someone named: present tense, or a change that holds now.
    _rule(r"(?:has\s+(?:just\s+|recently\s+)?)?(?:lives|moved|relocated|has\s+been\s+living)\s+(?:in|to)", "lives_in", "place", "lives|moved|relocated|living", first=False),
    _rule(r"is\s+(?:now\s+)?(?:living|based)\s+in", "lives_in", "place", "living|based", first=False),
    _rule(r"works\s+(?:at|for)", "works_at", "org", "works", first=False),
    _rule(r"is\s+(?:now\s+)?(?:working|employed)\s+(?:at|for|by)", "works_at", "org", "working|employed", first=False),
    _rule(r"(?:has\s+(?:just\s+|recently\s+)?)?(?:joined|started\s+(?:working\s+)?at|got\s+a\s+(?:new\s+)?job\s+at)", "works_at", "org", "joined|started|job", first=False),
    _rule(r"(?:is\s+|got\s+)married\s+to|(?:has\s+)?married", "married_to", "person", "married", first=False),
    _rule(r"prefers", "prefers", "thing", "prefers", first=False),
    _rule(r"(?:usually\s+|always\s+|only\s+|mostly\s+|mainly\s+)?drinks", "drinks", "thing", "drinks", first=False),
]
# fmt: on
_RELATIONS = r"sister|brother|mother|mom|mum|father|dad|wife|husband|partner|son|daughter|friend|boss|dog|cat|cousin|aunt|uncle|grandma|grandpa|girlfriend|boyfriend|colleague|manager|fiancé|fiancée|fiance|fiancee"
_MY = re.compile(r"\b[Mm]y\s+(?P<rel>" + _RELATIONS + r")(?:'s name is|,)?\s+" + _PERSON)
_THEIR = re.compile(
    r"(?<![\w'’-])"
    + _SUBJECT
    + r"['’]s\s+(?P<rel>"
    + _RELATIONS
    + r")(?:'s name is|,)?\s+"
    + _PERSON
)
_FAVOURITE = re.compile(
    r"\b(?:(?P<my>[Mm]y)|" + _SUBJECT + r"['’]s)\s+favou?rite\s+(?P<what>\w+)\s+is\s+" + _THING
)
# What a drink is called: the head words of drinks people say they have. A vague verb ("I'm
# hooked on X", "I've switched to X", "it's X for me") gives a ``drinks`` fact only when X
# names one, so "I've switched to Linux" gives nothing.
DRINK_WORDS = frozenset(
    """tea teas coffee coffees latte lattes espresso espressos cappuccino cappuccinos americano
    americanos mocha mochas macchiato cortado cortados flat white whites brew brews chai matcha
    mate rooibos oolong sencha kombucha chocolate cocoa juice juices smoothie smoothies milk
    milkshake milkshakes shake shakes water seltzer soda sodas lemonade cola coke beer beers ale
    ales lager lagers stout wine wines cider prosecco champagne whisky whiskey gin rum vodka
    tequila cocktail cocktails kefir lassi tisane infusion decaf horchata kvass boba""".split()
)
# Car makes: a vague verb ("I got a X", "upgraded to a X") gives a ``drives`` fact only when X
# starts with one, so "I got a Kindle" gives nothing.
CAR_MAKES = frozenset(
    """audi bmw byd chevrolet chevy citroen citroën cupra dacia fiat ford honda hyundai jaguar
    jeep kia lancia land lexus mazda mercedes mini mitsubishi nissan opel peugeot polestar
    porsche renault saab seat skoda škoda subaru suzuki tesla toyota vauxhall volkswagen vw
    volvo alfa""".split()
)
_WE = r"\b(?:I|[Ww]e)"  # a home is the household's: "we moved to Lisbon" says where I live
_CAR = r"(?P<object>[A-Z][\w'’&-]*(?:\s+(?!I\b)(?:[A-Z][\w'’&-]*|\d[\w-]*)){0,3})"
_HOME_NOUN = r"(?:place|flat|apartment|house|home|condo|studio|address|lease)"
# A role before "at X" ("I'm now an analyst at Acme"): up to three lower-case words.
_ROLE = r"(?:a|an|the)\s+(?:[a-z][\w-]*\s+){0,2}[a-z][\w-]*"


@dataclass(frozen=True)
class _Said:
    """A first-person statement pattern beside `_RULES`: ``object`` names the value; ``kind``
    (``drink``, ``car``) asks that the value name one (`DRINK_WORDS`, `CAR_MAKES`)."""

    pattern: re.Pattern[str]
    predicate: str
    object_type: str
    hints: tuple[str, ...]
    kind: str = ""


def _said(regex: str, predicate: str, type: str, hints: str, kind: str = "") -> _Said:
    flags = re.IGNORECASE if type == "thing" else 0
    return _Said(re.compile(regex, flags), predicate, type, tuple(hints.split("|")), kind)


# fmt: off
_SAID = [
    # Where the speaker's household lives now.
    _said(_WE + r"(?:['’]ve|\s+have)?\s+" + _SOON + r"(?:moved|relocated|settled)\s+(?:(?:in|into)\s+(?:(?:a|an|the|my|our)\s+)?(?:new\s+)?" + _HOME_NOUN + r"\s+)?(?:in|to)\s+" + _NAMED, "lives_in", "place", "moved|relocated|settled"),
    _said(r"\b(?:[Mm]y|[Oo]ur)\s+(?:new\s+)?" + _HOME_NOUN + r"\s+(?:is\s+)?(?:now\s+)?in\s+" + _NAMED, "lives_in", "place", "place|flat|apartment|house|home|condo|studio|address|lease"),
    _said(r"\b(?:(?:[Ss]ettled|[Mm]oved)\s+into|(?i:bought|rented|found|got|leased|signed\s+(?:the|a)\s+lease\s+on)\s+(?:a|an|the|my|our)\s+(?:[a-z]+\s+){0,2}?" + _HOME_NOUN + r")\s+(?:\w+\s+){0,3}?in\s+" + _NAMED, "lives_in", "place", "settled|moved|bought|rented|found|got|leased|lease"),
    _said(r"(?:^|(?<=[.!?]\s))(?:[Nn]ow\s+)?(?:[Ll]iving|[Bb]ased)\s+in\s+" + _NAMED, "lives_in", "place", "living|based"),
    _said(r"\b[Hh]ome\s+is\s+(?:now\s+)?" + _NAMED, "lives_in", "place", "home"),
    # Where the speaker works now.
    _said(r"\b(?i:took|accepted|got|landed|started)\s+(?:a|the|an)\s+(?:new\s+)?(?:job|position|role|offer)\s+(?:at|with|from)\s+" + _NAMED, "works_at", "org", "took|accepted|got|landed|started"),
    _said(r"\b(?:[Gg]ot\s+|[Bb]een\s+|was\s+|[Jj]ust\s+)?hired\s+(?:by|at)\s+" + _NAMED, "works_at", "org", "hired"),
    _said(r"\b[Mm]y\s+(?:new\s+)?(?:employer|company|workplace)\s+is\s+(?:now\s+)?" + _NAMED, "works_at", "org", "employer|company|workplace"),
    _said(r"\bI(?:['’]m|\s+am)\s+(?:now\s+)?" + _ROLE + r"\s+(?:at|with|for)\s+" + _NAMED, "works_at", "org", "at|with|for"),
    _said(r"\b(?:[Ss]igned\s+(?:my|a|the)\s+(?:new\s+)?contract\s+with|(?:[Dd]ay\s+one|[Ff]irst\s+(?:day|week|month))\s+(?:at|with)(?:\s+my\s+new\s+job\s+(?:at|with))?)\s+" + _NAMED, "works_at", "org", "contract|day|first"),
    # What the speaker drinks now (the value must name a drink).
    _said(r"\bI(?:['’]ve|\s+have|['’]m|\s+am)?\s+" + _SOON + r"(?:(?:been\s+|gotten\s+|got\s+)?(?:hooked\s+on|addicted\s+to|into|all\s+about|obsessed\s+with|living\s+on)|(?:been\s+)?(?:drinking|sipping|having)|(?:switched|changed|moved\s+on|gone\s+back)\s+to|(?:taken|picked)\s+up)\s+" + _THING, "drinks", "thing", "hooked|addicted|into|about|obsessed|living|drinking|sipping|having|switched|changed|moved|back|taken|picked", "drink"),
    _said(r"\b[Mm]y\s+(?:go-to|usual|daily|morning|regular)(?:\s+(?:drink|beverage|order|cup))?\s+(?:(?:right\s+now|these\s+days|now|lately|at\s+the\s+moment)\s+)?is\s+(?:now\s+)?" + _THING, "drinks", "thing", "go-to|usual|daily|morning|regular", "drink"),
    _said(r"\bit['’]s\s+(?:been\s+)?(?:(?:only|just|all|mostly|always)\s+)?" + _THING + r"(?=\s+(?:for\s+me|now|these\s+days|every|daily|from\s+now\s+on|all\s+the\s+way)\b(?![^.!?]*\bfor\s+(?:the|my|our|his|her|their|[A-Z])))", "drinks", "thing", "it's|it’s", "drink"),
    _said(r"(?:^|(?<=[.!?,;]\s)|\b(?:I|[Ww]e)(?:['’]ve|\s+have)\s+)(?:(?i:been)\s+)(?:(?:mostly|only|strictly|just|basically)\s+)?on\s+(?!(?:a|an|the)\s)" + _THING + r"(?=\s+(?:for|since|now|lately|these|every|daily)\b)", "drinks", "thing", "been", "drink"),
    _said(r"\b(?:start|begin)\s+(?:my|the)\s+(?:day|morning|mornings)\s+(?:without|with)\s+" + _THING, "drinks", "thing", "start|begin", "drink"),
    # Whom the speaker is with now.
    _said(r"\bI(?:['’]m|\s+am)\s+(?:now\s+)?with\s+" + _PERSON + r"\s+now\b", "partner", "person", "with"),
    _said(r"\b(?:I(?:['’]m|\s+am)\s+(?:now\s+)?(?:in\s+a\s+relationship\s+with|dating|seeing|together\s+with|engaged\s+to)|I(?:['’]ve|\s+have)\s+(?:just\s+)?(?:been\s+)?(?:dating|seeing)|(?:[Ss]tarted|[Bb]egan|[Bb]een)\s+(?:dating|seeing))\s+(?:(?:someone|somebody)(?:\s+new)?,?\s+(?:(?:called|named)\s+)?)?" + _PERSON, "partner", "person", "relationship|dating|seeing|together|engaged"),
    _said(r"(?:^|(?<=[.!?]\s)|(?<=^))" + _PERSON + r"\s+(?:and\s+I\s+(?:are|['’]re|have|['’]ve|just|started|moved\s+in)|asked\s+me\s+out|is\s+my\s+(?:new\s+)?(?:girlfriend|boyfriend|partner)\b(?!['’]s\b))", "partner", "person", " and i | me out| my "),
    _said(r"\b(?:[Ii]ntroduced|[Mm]et)\s+" + _PERSON + r"\s+(?:to\s+\w+\s+\w+\s+)?as\s+my\s+(?:new\s+)?(?:girlfriend|boyfriend|partner)", "partner", "person", " as my "),
    # What the speaker drives now (a vague verb needs a car make).
    _said(r"\bI(?:(?:['’]m|\s+am)\s+(?:now\s+)?driving|\s+(?:now\s+)?drive)\s+(?:a|an|the|my)\s+(?:new\s+)?" + _CAR, "drives", "product", "driving|drive"),
    _said(r"\b(?i:bought|got|upgraded\s+to|picked\s+up|collected|leased|traded\s+(?:in\s+)?(?:my|the)\s+(?:old\s+)?car\s+for)\s+(?:a|an|my|our|the)\s+(?:new\s+|used\s+|second-hand\s+)?" + _CAR, "drives", "product", "bought|got|upgraded|picked|collected|leased|traded", "car"),
    _said(r"\b(?:[Mm]y|[Oo]ur)\s+(?:new\s+)?car\s+is\s+(?:now\s+)?(?:a|an|the)\s+" + _CAR, "drives", "product", "car"),
    _said(r"\b(?:I|[Ww]e)(?:\s+have|['’]ve|\s+have\s+got|['’]ve\s+got)\s+(?:now\s+)?(?:a|an|my|our)\s+(?:new\s+|used\s+|second-hand\s+)?" + _CAR, "drives", "product", "have|'ve|’ve", "car"),
]
# fmt: on


# People a speaker speaks of besides family and partners ("my pal's just started at X",
# "a teammate of mine"): the subject of such a clause is not the speaker.
OTHER_PEOPLE = frozenset(
    """mate mates pal pals buddy buddies bestie bff roomie roomies hubby wifey missus bf gf
    kiddo toddler colleague colleagues coworker coworkers
    co-worker co-workers teammate teammates classmate classmates boss manager ceo auntie
    nephew niece nieces nephews gran granny nan nana grandad granddad grandmother grandfather
    grandparents stepmum stepmom stepdad sibling siblings kid twin bro sis lad lads guy guys
    girl girls folks mentor acquaintance client clients customer customers recruiter in-laws
    inlaws in-law relatives relative godmother godfather godparents stepbrother
    stepsister stepson stepdaughter half-brother half-sister ex stepmother stepfather
    grandson granddaughter grandkids grandchildren grandad grandpa grandma granda""".split()
) | frozenset(
    # in-laws, and the people who mind, serve, teach or treat the speaker ("our childminder
    # bought ...", "the barista gave me ...")
    f"{kin}-in-law{s}"
    for kin in ("brother", "sister", "mother", "father", "son", "daughter")
    for s in ("", "s")
)
# Of them, the people by their trade: a subject only where they open the clause ("the
# nanny bought ..."), not where the speaker deals with them ("a new dentist in X").
TRADES = frozenset(
    """childminder childminders nanny nannies babysitter babysitters au-pair barista baristas
    waiter waitress waiters bartender bartenders teacher teachers tutor coach trainer
    instructor plumber electrician builder builders mechanic cabbie courier postman postie
    hairdresser barber cleaner tenant tenants lodger housekeeper carer caregiver
    pm pms cto cfo coo vp founder founders cofounder co-founder intern interns hire hires dev
    devs engineer engineers designer designers lead director contractor contractors
    freelancer sre team""".split()
)
OTHER_PEOPLE |= TRADES
_OTHER = re.compile(
    r"\b(?:he|she|they|him|them|his|her|their|you|your|it)\b|\b(?:my|our)\s+(?:\w+\s+)?(?:"
    + _RELATIONS
    + r"|parents|neighbours?|neighbors?|friends|colleagues|kids|children|flatmates?|roommates?|"
    r"housemates?|spouse|"
    + "|".join(sorted(OTHER_PEOPLE, key=len, reverse=True))
    + r")(?:['’]s)?\b",
    re.IGNORECASE,
)
# A drink had on one day, not as a habit.
_ONE_OFF = re.compile(r"\b(?:tonight|tomorrow|this\s+evening|at\s+the\s+party)\b", re.IGNORECASE)
_HANDLE = re.compile(r"(?<![\w@])@[A-Za-z][\w.-]*")
_LAST_WORD = re.compile(r"([A-Z][\w'’-]+)\s*$")
_INNER_NAME = re.compile(r"(?<=\w)[\s,;:]+(?!I\b)[A-Z][a-z]")


# A subject that is someone described, not named: "a mate of mine", "some bloke from my gym",
# "the guy next door", "one of my mates" (the speaker is in it only as a possessive).
_DESCRIBED = re.compile(
    r"\bof\s+(?:mine|ours)\b"
    # "Tariq from work", "Noor from the gym": a name told by where the speaker knows them
    r"|^\W*(?!I\b)[A-Z][\w'’-]*\s+from\s+(?:the|my|our|work|uni|school|college|church)\b"
    r"|^\W*(?:a|an|some|the|this|that|one|another)\s+(?!(?:few|bit|lot|"
    r"couple|while|week|day|month|year|morning|night|weekend)s?\b)[a-z][\w'’-]*"
    # "dad bought ...", "Mum's neighbour got ...": a person's word, bare or someone's, opens it
    r"|^\W*(?:(?!user['’])[\w-]+['’]s\s+)?(?:"
    + _RELATIONS
    + "|"
    + "|".join(sorted(OTHER_PEOPLE, key=len, reverse=True))
    + r")s?\b",
    re.IGNORECASE,
)
# Words a spoken or typed clause opens with before its subject ("okay so", "um, like").
_FILLERS = re.compile(
    r"^(?:\W*\b(?:ok(?:ay)?|so|um+|uh+|er+m?|like|well|oh|and|then|also|anyway|lol|btw|fyi|"
    r"hey|right|yeah|yes|no|actually|honestly|basically)\b)+\W*",
    re.IGNORECASE,
)
_LABEL_END = re.compile(r"[:;—–]|\s-\s")
_SPEAKER = re.compile(r"\b(?:I|we)\b(?:['’]\w+)?", re.IGNORECASE)


def _someone_else(before: str) -> bool:
    """Whether the sentence before a subject-less pattern names another subject ("my brother
    bought ...", "Anna and Tom moved ...", "she got a ...", "a mate of mine got ..."): then
    the clause is not the speaker's own."""
    if _OTHER.search(before) is not None or _INNER_NAME.search(before.strip()) is not None:
        return True
    if _HANDLE.search(before) is not None:
        return True  # "@dana got an offer from X": a colleague by their chat handle
    clause = _LABEL_END.split(before)[-1]  # "The good news: got a job ...": a label
    clause = _FILLERS.sub("", clause)  # "okay so the kids' dad bought ..."
    if _DESCRIBED.search(clause) is not None and _SPEAKER.search(clause) is None:
        return True
    last = _LAST_WORD.search(before)  # "Marta rented a flat": Marta is the subject
    return last is not None and _name(last.group(1)) is not None


def _kind_ok(kind: str, obj: str) -> bool:
    words = obj.lower().replace("-", " ").split()
    if kind == "drink":
        return any(w in DRINK_WORDS for w in words)
    if kind == "car":
        return bool(words) and words[0] in CAR_MAKES
    return True


# Every pattern, its predicate, and whether it is a presupposed noun phrase (for the tests
# that attack the mood reader with each).
PATTERNS: list[tuple[re.Pattern[str], str, bool]] = [
    *((r.pattern, r.predicate, False) for r in _RULES),
    *((r.pattern, r.predicate, False) for r in _SAID),
    (_MY, "rel", True),
    (_THEIR, "rel", True),
    (_FAVOURITE, "favourite", False),
]
_CANONICAL = {
    "mom": "mother",
    "mum": "mother",
    "dad": "father",
    "fiance": "fiancé",
    "fiancee": "fiancée",
    "fiancée": "fiancée",
}


def _name(subject: str) -> str | None:
    """The named subject with leading non-names dropped ("Then Anna" -> "Anna"), or None."""
    words = subject.split()
    while words and (words[0].lower() in NOT_A_SUBJECT or words[0].endswith("ly")):
        words = words[1:]  # "Then Anna", "Hopefully Beth": the name is the rest
    if not words or any(w.lower() in NOT_A_SUBJECT for w in words):
        return None
    return " ".join(words)


# A pronoun a capitalised run swallowed at its end ("since I started at Quillsoft I only ...").
_TRAILING_I = re.compile(r"(?:\s+I(?:['’](?:m|ve|d|ll))?)+$")


# Words of when, read where a pattern expects a what ("what I drink these days").
_A_TIME = re.compile(
    r"(?:these\s+days|(?:right\s+)?now|nowadays|lately|recently|today|tonight|daily|"
    r"at\s+the\s+moment|every\s+\w+|most\s+\w+|all\s+the\s+time|a\s+lot)",
    re.IGNORECASE,
)


def _object(raw: str, type: str) -> str | None:
    obj = _TRAILING_I.sub("", raw.strip().rstrip(".,'’"))
    if obj.lower() in NOT_A_SUBJECT or not obj or _A_TIME.fullmatch(obj):
        return None
    if type == "person" and _name(obj) != obj:
        return None
    return obj


def facts(text: str, speaker: str) -> list[Fact]:
    """The facts ``text`` asserts, each stated by ``speaker`` (see the module's doc)."""
    lower = text.lower()
    rules = [r for r in _RULES if any(h in lower for h in r.hints) and r.pattern.search(text)]
    said = [r for r in _SAID if any(h in lower for h in r.hints) and r.pattern.search(text)]
    possessive = "'s " in text or "’s " in text
    mine = "my " in lower and _MY.search(text) is not None
    if not rules and not said and not possessive and not mine and "favo" not in lower:
        return []  # most text: reading it for mood would cost more than the patterns
    reading = Reading(text)
    plain = reading.plain
    out: list[Fact] = []
    seen: set[tuple[str, str, str]] = set()

    def add(subject: str | None, predicate: str, obj: str | None, type: str) -> None:
        if subject and obj and subject != obj and (subject, predicate, obj) not in seen:
            seen.add((subject, predicate, obj))
            kind = "person"
            out.append(Fact(subject, predicate, obj, kind, type, stated_by=speaker))

    for start, end in reading.sentences():
        for rule in rules:
            for m in rule.pattern.finditer(plain, start, end):
                who = speaker if rule.first_person else _name(m.group("subject"))
                # The clause's cues are read from where the subject starts ("If Anna ...").
                at = m.start() if rule.first_person or who is None else m.end("subject") - len(who)
                if reading.mood(at, m.end()) != ASSERTED:
                    continue
                add(
                    who,
                    rule.predicate,
                    _object(m.group("object"), rule.object_type),
                    rule.object_type,
                )
        for said_rule in said:
            for m in said_rule.pattern.finditer(plain, start, end):
                if reading.mood(m.start(), m.end()) != ASSERTED:
                    continue
                if _someone_else(plain[start : m.start()]):
                    continue  # "My brother bought a place in Lyon": not the speaker's
                if said_rule.predicate == "drinks" and _ONE_OFF.search(plain, start, end):
                    continue  # "I'm having a matcha tonight": one evening's, no habit
                obj = _object(m.group("object"), said_rule.object_type)
                if obj is not None and _kind_ok(said_rule.kind, obj):
                    add(speaker, said_rule.predicate, obj, said_rule.object_type)
        for pattern, mine_only in ((_MY, True), (_THEIR, False)):
            if (mine_only and not mine) or (not mine_only and not possessive):
                continue
            for m in pattern.finditer(plain, start, end):
                who = speaker if mine_only else _name(m.group("subject"))
                at = m.start() if mine_only or who is None else m.end("subject") - len(who)
                # "my sister Anna" is presupposed: it holds in a question or a wish too.
                if reading.mood(at, m.end(), noun_phrase=True) != ASSERTED:
                    continue
                rel = m.group("rel").lower()
                add(who, _CANONICAL.get(rel, rel), _object(m.group("object"), "person"), "person")
        for m in _FAVOURITE.finditer(plain, start, end):
            who = speaker if m.group("my") else _name(m.group("subject"))
            at = m.start() if m.group("my") or who is None else m.end("subject") - len(who)
            if reading.mood(at, m.end()) != ASSERTED:
                continue
            predicate = f"favourite_{m.group('what').lower()}"
            add(who, predicate, _object(m.group("object"), "thing"), "thing")
    return out
