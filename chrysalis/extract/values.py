# ruff: noqa: RUF001, SIM905 - curly quotes are text here; word lists read best as one string
"""The values of each typed attribute a sentence names, whatever it says of them: cities
(the gazetteer, or a name after "in"/"to"), organisation-like names, drinks, cars (a make and
its model) and first names (`values`). Whether a value is the speaker's is
`chrysalis.extract.typed`'s question."""

from __future__ import annotations

import re
from dataclasses import dataclass

from chrysalis.extract.cues import _OPENERS, _OTHERS, _USER, _WORD, CUES
from chrysalis.extract.facts import CAR_MAKES, DRINK_WORDS, NOT_A_SUBJECT
from chrysalis.extract.mood import CORRECTING
from chrysalis.extract.places import city_in_lower_case, is_city

# The value is the subject of "is my/our <words of the attribute>", "is mine", "is home"
# ("Tariq is my partner now", "X is my go-to drink", "the X is mine now", "X is home now"):
# the sentence says whose it is, now, whatever was named before it.
_IS_MINE = re.compile(
    r"\s+(?:is|['’]s)\s+(?:(?:now|officially|finally|definitely|basically)\s+)*"
    r"(?:(?:my|our)\s+(?P<words>[\w-]+(?:\s+[\w-]+){0,2})|(?P<mine>mine|ours)\b|"
    r"(?P<home>home)\b)",
    re.IGNORECASE,
)


# An organisation's name by its last word ("Redwood Insurance", "Northwind Labs"): no place
# ("moved over to Redwood Insurance" is a job), and a change of job without a job's word.
ORG_HEADS = frozenset(
    """labs lab analytics robotics health healthcare energy foods food logistics media bank
    optics games insurance travel print press publishing inc ltd llc gmbh corp corporation co
    company group systems solutions technologies technology tech software studios studio
    consulting consultancy partners capital holdings pharma pharmaceuticals biotech airlines
    airways motors industries enterprises ventures networks digital telecom agency associates
    foundation institute university hospital clinic bakery brewery logistics""".split()
)


# "moved over to X": a change of job, whatever X's name ("since I moved over to Quillsoft").
_OVER_TO = re.compile(r"\b(?:moved|moving|went|gone|switched)\s+over\s+to\s+$", re.IGNORECASE)


# A first name used as a subject is followed by a verb-like word ("Jo drinks", "Dana said"; not
# a capitalised one: "Northwind Labs" is one name).
_NAME_VERB = re.compile(
    r"\s+(?:(?:still|also|just|now|already|finally|actually|recently|never|always|only)\s+)?"
    r"(?:[a-z]\w*(?:s|ed)|is|was|has|had|and|got|can|could|will|would|might|may|should|must|"
    r"from)\b"
)


_CAP_RUN = re.compile(r"(?<![\w'’-])[A-ZÀ-Þ][\w'’&.-]*(?:\s+(?:&\s+)?[A-ZÀ-Þ0-9][\w'’&.-]*){0,3}")


_AFTER_PREP = re.compile(
    r"(?:\b(?:at|for|with|from|by|join|joins|joined|joining|w/|to|in|into)\s+)$", re.I
)


_DRINK_MODIFIERS = frozenset(
    """flat cold iced hot green black white herbal peppermint mint chamomile camomile oolong
    matcha yerba sparkling fizzy mineral oat almond soy earl grey jasmine ginger lemon
    orange apple turmeric golden bubble barley chai masala nitro decaf dirty pumpkin spiced
    vanilla caramel""".split()
)


@dataclass(frozen=True, slots=True)
class _Value:
    start: int
    end: int
    text: str


# A verb right after the value, which no preposition governs: the value is its clause's
# subject, doing something ("X is opening an office", "X posted a job ad"); the clause is
# about it, unless the user is in it after all ("X hired me", "X is treating us well").
_ITS_VERB = re.compile(
    r"\s+(?:(?:is|was|are|were)\s+\w+ing|\w+ed|keeps?|will|would|can|could|makes|gives|helps|"
    r"tastes|upsets|hurts|costs|seems|feels|looks|sounds)\b",
    re.IGNORECASE,
)
# ... or says something ("Sam claims I live in X": Sam is no place, whatever the map says)
_SAYS = re.compile(
    r"\s+(?:says|said|claims|thinks|reckons|tells|told|swears|insists|writes|wrote|asks|"
    r"believes)\b",
    re.IGNORECASE,
)


def _values(attr: str, sentence: str) -> list[_Value]:
    if attr == "lives_in":
        return _places(sentence)
    if attr == "works_at":
        return _orgs(sentence)
    if attr == "drinks":
        return _drinks(sentence)
    if attr == "drives":
        return _cars(sentence)
    return _people(sentence)


def _names(sentence: str) -> list[_Value]:
    """Capitalised runs that could name something, leading common words dropped ("Finally
    Lisbon" -> "Lisbon"; "I" and a sentence's opener are no names)."""
    out = []
    for m in _CAP_RUN.finditer(sentence):
        words = list(re.finditer(r"\S+", m.group(0)))
        opener = not sentence[: m.start()].strip(" \t\"'(-")
        while words and _plain_word(words[0].group(0), opener and words[0].start() == 0):
            words = words[1:]
        while words and words[-1].group(0).rstrip(".,;:!?").lower() in _USER:
            words = words[:-1]  # "since I started at X I only ...": the "I" is no name
        if not words:
            continue
        a = m.start() + words[0].start()
        text = re.sub(r"['’]s$", "", sentence[a : m.start() + words[-1].end()].rstrip(".,;:!?"))
        if text:
            out.append(_Value(a, a + len(text), text))
    return out


def _plain_word(word: str, opener: bool = False) -> bool:
    low = word.lower().rstrip(".,;:!?")
    if opener and (low.endswith(("ed", "ing", "ly")) or low in _OPENERS):
        return True  # "Started dating ...", "Finally ...", "After ...": no name opens it
    return low in NOT_A_SUBJECT or low in _COMMON


_COMMON = frozenset(
    """lol haha omg new big per note summary user first last day got just finally honestly
    ok okay so yeah yes sorry thanks picked bought had things sold correction rumour
    rumor update btw hey hi hello thank also quick anyway well oh ah hmm great good tbh fyi
    ps imo someone someone's it it's it’s that's that’s there's there’s here's here’s what's
    what’s let's let’s""".split()
)


# Where a name the gazetteer lacks is a place: right after "in", "to", "into", "near" ("a flat
# in Galway"); "at X" is a firm or a venue, not where anyone lives.
_IN_PLACE = re.compile(r"(?:\b(?:in|to|into|near)\s+)$", re.I)


def _tail(sentence: str, i: int) -> str:
    """The words right before ``i``, for patterns that end there ("... with $"): a window, so
    a sentence of many names costs no scan of all it says before each (quadratic)."""
    return sentence[max(0, i - 80) : i]


_IS_WHO = re.compile(r"\s+(?:is|was)\s+who\b|\s+and\s+(?:i|me)\b", re.IGNORECASE)
_IS_WHERE = re.compile(r"\s+(?:is|was)\s+(?:where|home)\b", re.IGNORECASE)


# The one meant, after a correction ("at Acme sorry Quillsoft"): as good as "at".
_CORRECTING = re.compile(r"\b(?:" + CORRECTING + r")[\s,]+$", re.I)
# What only a person does ("Sam lives in X", "Florence will be moving to X"): a name before it
# is a person's, whatever the map says.
_PERSON_VERB = re.compile(
    r"\s+(?:(?:will\s+be|is|was|has|had|['’]s|just|finally|also)\s+)*(?:moving|moved|moves|"
    r"lives|living|lived|works|working|worked|started|starting|starts|drinks|drinking|drives|"
    r"driving|bought|buys|relocating|relocated|joined|joining|dating|married)\b"
    # (not what a place does too: "Florence lives up to its name", "X started to feel like home")
    r"(?!\s+up\s+to\b|\s+to\s+(?:feel|seem|look|grow|get|become|change)\b|\s+growing\b)",
    re.IGNORECASE,
)
# A name right after "in" is where something is (a person is "with" someone, a firm "at"),
# unless work is in it ("I am working in X", as a second language may say it).
_IN = re.compile(r"\bin\s+$", re.IGNORECASE)
_WORK_IN = re.compile(
    r"\b(?:(?:work|works|working|worked|job|employed)(?:\s+(?:is|was))?|(?:i\s+am|i['’]m|we\s+are)"
    r"(?:\s+now)?)\s+in\s+$",
    re.IGNORECASE,
)
# "X from the running club", "X from work", "X at work": a person, told by where the speaker
# knows them.
_FROM_GROUP = re.compile(
    r"\s+(?:from\s+(?:the|my|our|work|uni|school|college)|at\s+(?:work|uni|school|college))\b",
    re.I,
)


# "place of residence: X", "new address X", "hometown is X": a place by its label.
_LABELLED_PLACE = re.compile(
    r"\b(?:residence|address|hometown|home\s+town)\s*(?:is\s+(?:now\s+)?|:\s*|-\s*)?$", re.I
)
# "my Galway place", "our Leith flat": a place named as what a home is in.
_MY_PLACE = re.compile(r"\s+(?:place|flat|house|apartment|home|pad|digs)\b", re.I)
_MY_BEFORE = re.compile(r"\b(?:my|our)\s+(?:new\s+)?$", re.I)


# A place typed in lower case after a word of where ("moved to lyon", "living in porto").
_LOWER_PLACE = re.compile(
    r"\b(?:to|in|into|near|from|outside)\s+"
    r"([a-zà-ÿ][a-zà-ÿ'’.-]+(?:[ -][a-zà-ÿ][a-zà-ÿ'’.-]+){0,2})"
)


def lower_values(sentence: str) -> bool:
    """Whether a sentence all in lower case may still name a value: a big city after "to",
    "in" ... or a car's make."""
    return bool(_lower_places(sentence)) or any(
        w in CAR_MAKES and w not in _WORDLIKE_MAKES for w in _WORD.findall(sentence)
    )


def _lower_places(sentence: str) -> list[_Value]:
    """Big cities named in lower case after "to", "in" ... (`places.city_in_lower_case`):
    the longest run of up to three words that is one, by its canonical name."""
    out = []
    for m in _LOWER_PLACE.finditer(sentence):
        words = list(re.finditer(r"[^\s]+", m.group(1)))
        for n in range(len(words), 0, -1):
            a, b = m.start(1), m.start(1) + words[n - 1].end()
            name = city_in_lower_case(sentence[a:b].rstrip(".,;:!?'’"))
            if name is not None:
                out.append(_Value(a, a + len(name), name))
                break
    return out


def _places(sentence: str) -> list[_Value]:
    out = _lower_places(sentence) if _LOWER_PLACE.search(sentence) else []
    for v in _names(sentence):
        words = v.text.split()
        if words[0].lower() in CAR_MAKES:
            continue  # "a Honda Civic": a car (Honda is a city too)
        if words[-1].lower() in ORG_HEADS and len(words) > 1:
            continue  # "Meridian Bank": a firm (Meridian is a city too)
        if re.search(
            r"\b(?:with|seeing|dating|met|meet|meeting|marry|married|marrying|kissed)\s+$",
            _tail(sentence, v.start),
            re.I,
        ) or _IS_WHO.match(sentence, v.end):
            continue  # "moving in with Yuki", "seeing Yuki", "Yuki is who": a person
        if sentence.startswith(("'s", "’s"), v.end):
            continue  # "Sam's new flat": its owner, no place
        before = _WORD.findall(sentence[max(0, v.start - 30) : v.start])
        if before and before[-1].lower() in _OTHERS:
            continue  # "my partner Sam", "my friend Florence": a person, whatever the map says
        if (
            _ITS_VERB.match(sentence, v.end)
            or _SAYS.match(sentence, v.end)
            or _PERSON_VERB.match(sentence, v.end)
        ) and not (_AFTER_PREP.search(_tail(sentence, v.start))):
            continue  # "Sam keeps telling people ...": someone doing something, no place
        if _FROM_GROUP.match(sentence, v.end) and not sentence[: v.start].strip(" \t\"'(-"):
            continue  # "Noor from the running club is ...": a person, the sentence's subject
        for n in range(len(words), 0, -1):  # "Lisbon Portugal": the longest city first
            if is_city(" ".join(words[:n])):
                name = " ".join(words[:n])
                out.append(_Value(v.start, v.start + len(name), name))
                break
        else:
            if len(words) > 3 or _OVER_TO.search(_tail(sentence, v.start)):
                continue  # ("moved over to Quillsoft": a job)
            home = _IS_MINE.match(sentence, v.end)
            if (
                _IN_PLACE.search(_tail(sentence, v.start))
                or _LABELLED_PLACE.search(_tail(sentence, v.start))
                or (
                    _MY_PLACE.match(sentence, v.end) and _MY_BEFORE.search(_tail(sentence, v.start))
                )
            ) or (home and (home.group("home") or "home" in (home.group("words") or "").lower())):
                out.append(v)  # "a flat in Galway", "Galway is home now": a place the
                # gazetteer lacks
    return out


# A firm opening a sentence by taking the speaker on ("Quillsoft hired me!"); not a person
# hiring for a chore ("Dana hired me to paint her flat", "... as her assistant"), nor a
# sign-up ("Spotify signed me up for ...").
_HIRED = re.compile(
    r"\s+(?:just\s+|finally\s+|officially\s+)?(?:(?:hired|offered|poached|recruited|signed|"
    r"took\s+on)\s+(?:me|us)|made\s+(?:me|us)\s+an\s+offer)\b"
    r"(?!\s+(?:to|up)\b)(?![^.!?]*\b(?:her|his|she|he|him)\b)",
    re.IGNORECASE,
)
# Departments every firm has, named by their initials or word ("for HR", "ask IT").
_DEPARTMENTS = frozenset("hr it pr qa r&d ops finance legal payroll accounts admin".split())


def _orgs(sentence: str) -> list[_Value]:
    """Organisation-like names: not a city, a car, a drink or a person the sentence makes a
    subject; those after "at"/"for"/"with"/"from"/"by" first."""
    out = []
    for v in _names(sentence):
        low = v.text.lower()
        if is_city(v.text) or low.split()[0] in CAR_MAKES or low in DRINK_WORDS:
            continue
        if low in _DEPARTMENTS:
            continue  # "bank details for HR": a part of a firm, no employer
        if (
            len(v.text.split()) == 1
            and _NAME_VERB.match(sentence, v.end)
            and not _AFTER_PREP.search(_tail(sentence, v.start))
            and not _HIRED.match(sentence, v.end)
        ):
            continue  # "Jo says ...": a person ("the policy at X is ...", "X hired me": a firm)
        if sentence.startswith(("'s", "’s"), v.end):
            continue  # "Dana's badge": its owner, no organisation
        if " " not in v.text and _FROM_GROUP.match(sentence, v.end):
            continue  # "Imogen at work got engaged": a person, known from somewhere
        if (
            " " not in v.text
            and not sentence[: v.start].strip(" \t\"'(-*#>0123456789.)")
            and not _HIRED.match(sentence, v.end)
        ):
            continue  # a sentence's first word: mostly a verb ("Choose a format", "Keep going")
        if " " not in v.text and re.search(
            r"\b(?:with|(?:me|i|you|us)\s+and)\s+$", _tail(sentence, v.start), re.I
        ):
            continue  # "I'm with Ingrid now", "me and Ingrid": one name there is a person
        if (
            " " not in v.text
            and _IN.search(_tail(sentence, v.start))
            and not _WORK_IN.search(_tail(sentence, v.start))
        ):
            continue  # "it's in Gaillimh in October": one name after "in" is a place
        out.append(v)
    prep = [
        v
        for v in out
        if _AFTER_PREP.search(_tail(sentence, v.start))
        or _CORRECTING.search(_tail(sentence, v.start))
    ]
    return prep or out


def _drinks(sentence: str) -> list[_Value]:
    out = []
    tokens = list(re.finditer(r"[\w'’-]+", sentence))
    i = 0
    while i < len(tokens):
        low = tokens[i].group(0).lower()
        if low in DRINK_WORDS and not (low in _MATE and _a_mate(sentence, tokens, i)):
            first = i
            while first > 0 and tokens[first - 1].group(0).lower() in _DRINK_MODIFIERS:
                first -= 1
            last = i
            while last + 1 < len(tokens) and tokens[last + 1].group(0).lower() in DRINK_WORDS:
                last += 1
            a, b = tokens[first].start(), tokens[last].end()
            if not set(sentence[a:b].lower().split()) <= _PART_OF_A_DRINK:
                out.append(_Value(a, b, sentence[a:b]))
            i = last + 1
        else:
            i += 1
    return out


# "mate" is a drink (yerba mate) and, in British and Australian English, a friend.
_MATE = frozenset({"mate", "mates"})
_A_FRIENDS = frozenset("my your his her our their best old good a me fellow".split())


def _a_mate(sentence: str, tokens: list[re.Match[str]], i: int) -> bool:
    """Whether the "mate" at ``tokens[i]`` is a friend: "my mate", "best mates", "mate of
    mine", "my mate Gav", "cheers, mate"; "yerba mate" and "mate" after a drink's words are
    the drink."""
    prev = tokens[i - 1].group(0).lower() if i else ""
    nxt = tokens[i + 1].group(0) if i + 1 < len(tokens) else ""
    if prev in _DRINK_MODIFIERS and prev not in _A_FRIENDS:
        return False  # "yerba mate", "iced mate"
    around = (
        sentence[tokens[i - 1].end() if i else 0 : tokens[i].start()],
        sentence[tokens[i].end() : tokens[i + 1].start() if nxt else len(sentence)],
    )
    return (
        prev in _A_FRIENDS
        or nxt.lower() == "of"
        or nxt[:1].isupper()
        or "," in around[0]
        or (not nxt and i > 0)
    )


# Drink words that name a drink only beside another ("flat white"): alone, a flat is a home.
_PART_OF_A_DRINK = frozenset({"flat", "white"})


_MODEL = re.compile(r"(?:\s+(?:[A-Z][\w-]*|\d[\w-]*)){0,3}")


# A model written in lower case after its make ("a kia niro", "tesla model 3"): one word, or
# "model" and its number, not a word of the car's dealings ("a honda dealer").
# ... nor the maker's other wares or merchandise ("a tesla hoodie", "a honda lawnmower", "a
# bmw bike", "a porsche lego set", "a tesla model 3 poster").
_NO_CAR = (
    r"bikes?|motorbikes?|motorcycles?|scooters?|e-?bikes?|quad|lawn-?mowers?|mowers?|"
    r"generators?|chargers?|wallbox|powerwall|batter(?:y|ies)|solar|hoodies?|t-?shirts?|tees?|"
    r"shirts?|jackets?|caps?|hats?|mugs?|keyrings?|keychains?|keys?|fobs?|posters?|jigsaws?|"
    r"puzzles?|lego|toys?|models?\s+kits?|kits?|stickers?|calendars?|books?|manuals?|watch(?:es)?|"
    r"sunglasses|umbrellas?|merch|shop|store|showroom|factory|plant|museum|share|stocks?|"
    r"engines?|parts?|tyres?|tires?|wipers?|mats?|covers?|app|account|recall|commercial|advert"
)
_LOWER_MODEL = re.compile(
    r"\s+(?!(?:and|or|but|the|a|an|to|for|in|on|at|of|with|from|is|was|dealer|dealership|"
    r"garage|insurance|service|stock|shares|ad|advert|rental|lease|loan|yesterday|today|now|"
    r"last|this|so|lol|too|again|though|because|" + _NO_CAR + r")\b)"
    r"(?:model\s+\w+|[a-z][a-z0-9-]*\d*|\d[\w-]*)"
    r"(?:\s+(?:\d[\w-]*|hybrid|electric|estate|sport|gt|ev))?"
    r"(?!\s+(?:" + _NO_CAR + r")\b)"
)
# Makes that are everyday words in lower case ("a seat", "mini", "land", "fiat money").
_WORDLIKE_MAKES = frozenset({"seat", "mini", "land", "jaguar", "alfa", "smart", "fiat"})


def _cars(sentence: str) -> list[_Value]:
    """A car make (`CAR_MAKES`, capitalised) and the model words after it ("Kia Niro",
    "Volvo V60", "Tesla Model 3"); in lower case, a make that is no everyday word and its
    model ("kia niro" -> "Kia Niro", as typed on a phone)."""
    out = []
    for m in _WORD.finditer(sentence):
        low = m.group(0).lower()
        if m.group(0).islower() and low in CAR_MAKES and low not in _WORDLIKE_MAKES:
            model = _LOWER_MODEL.match(sentence, m.end())
            if model is not None:
                text = sentence[m.start() : model.end()]
                out.append(_Value(m.start(), model.end(), _car_name(text)))
            continue
        if m.group(0)[0].isupper() and m.group(0).lower() in CAR_MAKES:
            end = _MODEL.match(sentence, m.end())
            b = end.end() if end else m.end()
            while sentence[m.start() : b].endswith(" I"):
                b -= 2  # "it's a Kia Niro I bought": the "I" is no part of its model
            out.append(_Value(m.start(), b, sentence[m.start() : b]))
    return out


def _car_name(text: str) -> str:
    """A car typed in lower case, written as its maker does ("kia niro" -> "Kia Niro",
    "bmw x3" -> "BMW X3", "volvo v60" -> "Volvo V60")."""
    words = text.split()
    out = []
    for w in words:
        if w in ("bmw", "vw", "byd", "gt", "ev") or any(c.isdigit() for c in w):
            out.append(w.upper())
        else:
            out.append(w[:1].upper() + w[1:])
    return " ".join(out)


# After "Name's": a thing of hers ("Kate's birthday", "Sam's flat"), not "Name is" ("Kate's my
# girlfriend", "Sam's moving in", "Jo's lovely"): a lower-case word that is no copula's
# complement, no participle, no adverb.
_POSSESSED = re.compile(
    r"\s+(?!(?:my|our|a|an|the|so|now|really|been|got|just|not|very|officially|back|here|home|"
    r"mine|ours|still|also|always|finally|definitely|lovely|great|amazing|wonderful|perfect|"
    r"the\s+one|single|taken|with|from|in|at|on|off|over|out|gone|going|coming|moving)\b)"
    r"[a-z][a-z'’-]*(?<!ing)(?<!ed)(?<!ly)\b"
)
# A sentence's first word followed by an object ("Told my best friend", "Asked her out",
# "Met the team"): an imperative or a clipped past, a verb, not a name.
_VERB_FIRST = re.compile(r"\s+(?:my|me|him|her|them|us|our|your|the|a|an|his|their)\b")


def _people(sentence: str) -> list[_Value]:
    out = []
    for v in _names(sentence):
        words = v.text.split()
        if len(words) > 2 or words[0].lower() in CAR_MAKES or v.text.lower() in CUES["partner"]:
            continue  # ("Love ..." opens a sentence: no one's name)
        if re.search(r"\b(?:in|to|from|at|for)\s+$", _tail(sentence, v.start)) and (
            is_city(v.text) or len(words) > 1
        ):
            continue  # "moved to Florence", "works at Morrow Bakery": a place, a firm
        if _IS_WHERE.match(sentence, v.end):
            continue  # "Lyon is where my other half and I live": a place
        if _IN.search(_tail(sentence, v.start)) or re.search(r"\bat\s+$", _tail(sentence, v.start)):
            continue  # "my parents live in Gaillimh", "started at X": a place or a firm, no one
        if sentence.startswith(("'s", "’s"), v.end) and (
            not sentence[v.end + 2 :].strip(" .!") or _POSSESSED.match(sentence, v.end + 2)
        ):
            continue  # "the party at Lena's", "we met at Kate's birthday": hers, not her
        if not sentence[: v.start].strip(" \t\"'(-") and _VERB_FIRST.match(sentence, v.end):
            continue  # "Told my best friend ...": a verb with its object, no one's name
        out.append(v)
    return out
