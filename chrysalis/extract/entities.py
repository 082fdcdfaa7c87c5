# ruff: noqa: RUF001, SIM905 - curly quotes are text here; word lists read best as one string
"""Which candidate names are entities a person would call entities (the rules' quality gate).

The patterns in `chrysalis.extract.rules` propose candidates; `entity_or_none` keeps what a
person would put in a knowledge graph (a person, a place, an organisation, a work's title, a
product, a named code object, a file, an address, a date) and refuses:

- names cut off mid-word (``CHRYSALIS_``, ``/tmp/chrysalis-``);
- numbers and number-like tokens (``-30``, ``500``, ``p1``, ``D1``, ``10k``, ``127.0.0.1``);
- command-line flags (``--quick``, ``-n``) and redaction markers (``[REDACTED:<kind>]``);
- weekday and month names (``Tuesdays``), greetings and acknowledgements (``ok, thanks``);
- code fragments cut from prose: a backticked span that is not one identifier
  (``extractor = none``, ``GET /v1/x``, ``a + 1``), a plain lower-case word in backticks
  (``stopped``: a value, not a thing), a bare route (``/metrics``);
- generic abbreviations that name no one thing (``API``, ``CPU``, ``GPS``, an era's ``CE``, a
  unit's ``MB``), and a template's stand-ins (``XYZ Corporation``, ``ollama:MODEL``);
- a kinship word by itself (``Father``, ``Mum``: whose father depends on who speaks);
- a past participle or an adjective capitalised alone (``Personalized``, ``Plant-based``);
- a path whose file name has no letter (``f/2.8`` is an aperture, ``1/2`` a fraction);
- scare quotes and quoted speech taken for titles (``"refusing to send"``): a title starts
  with a capital or a digit and is not a greeting;
- capitalised common words: a run whose every word the same text writes in lower case at
  least as often ("Cooking Tips" in a text saying "cooking" and "tips"; a name's words are
  not written so), the stock labels of list headings ("Other Tips", "Key Benefits"), and
  roles and honours ("Sales Representative", "Outstanding Performance Award").

Pure functions, no I/O.
"""

from __future__ import annotations

import re
from collections.abc import Set

from chrysalis.extract.facts import CAR_MAKES
from chrysalis.extract.places import city_in_lower_case

__all__ = ["GREETINGS", "KINSHIP", "WEEKDAYS", "entity_or_none", "lower_words"]

WEEKDAYS = frozenset(
    d + s
    for d in "monday tuesday wednesday thursday friday saturday sunday".split()
    for s in ("", "s")
) | frozenset(
    "mon tue tues wed thu thur thurs fri sat sun weekend weekends weekday weekdays".split()
)
_MONTHS = frozenset(
    """january february march april may june july august september october november december
    jan feb mar apr jun jul aug sep sept oct nov dec""".split()
)
GREETINGS = frozenset(
    """hi hello hey hiya howdy yo bye goodbye cheers thanks thank thx ty welcome congrats
    congratulations sorry ok okay okey sure yes yeah yep yup no nope nah wow oh ah aw aww awww
    yay hooray lol haha hahaha omg hmm um uh glad great good nice cool awesome amazing sweet
    please dear morning evening afternoon night""".split()
)
# Abbreviations of kinds of things, not of one thing (an organisation's stays: "NASA").
_GENERIC_ABBR = frozenset(
    """api apis cpu cpus gpu gpus ram ssd hdd usb url urls uri http https html css json xml
    yaml toml sql csv pdf pdfs id ids ui ux os vm vms io faq faqs diy tv tvs pc pcs ceo cto
    cfo coo hr pr seo roi kpi kpis ai ml llm llms gps sms spf otc dm dms asap eta fyi tl;dr
    tldr pm am utc gmt est pst cet bst etc vs eg ie aka dob ssn pin dns ip tcp udp ssh tls
    ssl cli gui sdk ide cd cds dvd dvds cv mba phd md dr mr mrs ms st rd th nd jr sr rfp
    get put post patch delete ce bce ad bc kb mb gb tb pb kib mib gib tib ms ns fps rpm
    kwh mhz ghz rss""".split()
)
# The stock words of headings in written answers ("Other Tips", "Key Benefits"): a run of
# two words or more ending in one of these is a label, not a name.
_HEADING_HEAD = frozenset(
    """tips ideas options tools resources steps strategies benefits examples considerations
    suggestions recommendations basics overview summary conclusion introduction notes factors
    features advantages disadvantages pros cons requirements alternatives takeaways points
    questions answers things ways reasons methods techniques practices guidelines""".split()
)
# The head words of roles and honours ("Senior Marketing Manager", "Outstanding Performance
# Award"): what someone is or won, not who or what they are.
_ROLE_HEAD = frozenset(
    """manager coordinator representative director engineer developer designer analyst
    assistant specialist consultant officer intern administrator associate executive
    supervisor lead head president architect technician award awards prize certificate
    degree diploma""".split()
)
# Words for a relative: who they name depends on who speaks ("Father" in "my Father", "God
# the Father"); a relative's name is the entity ("my mum Rosa" gives Rosa).
KINSHIP = frozenset(
    """father mother mom mum mommy mummy mama mamma momma dad daddy papa pa ma grandma grandpa
    grandmother grandfather granny gran nana nan grandad granddad sister brother sis bro aunt
    auntie aunty uncle son daughter wife husband cousin nephew niece fiance fiancee fiancé
    fiancée stepmother stepfather stepmom stepdad stepson stepdaughter""".split()
)
_PARTICIPLE_ENDINGS = ("ized", "ised", "izing", "ising")
_PLACEHOLDERS = frozenset("xyz foo baz qux foobar lorem ipsum".split())
_ADJECTIVE_ENDINGS = ("-based", "-inspired", "-style", "-like", "-friendly", "-specific")
_LOCAL_CALL = re.compile(r"[a-z]+\.[a-z_]+\(\)")
_DIGITS = re.compile(r"\d")
_LETTER = re.compile(r"[^\W\d_]")
_NUMBERISH = re.compile(r"[-+~±]?(?:[a-z]{0,2}\d+[\w.,:%/-]*|\d[\d.,:%/x-]*[a-z]{0,3})", re.I)
_IDENT = re.compile(r"[A-Za-z_$@][\w$@]*(?:[.:][A-Za-z_]\w*)*(?:\(\))?")
_CODE_PUNCT = re.compile(r"[=<>{}\[\]|+*;,\"'\\$%#&^~!?]|\s")
_WORD = re.compile(r"[^\W\d_][\w'’-]*")


def lower_words(text: str) -> frozenset[str]:
    """The words ``text`` writes in lower case at least as often as capitalised (a name's
    words it does not; "lisbon" once among three "Lisbon" is sloppy typing, not a word)."""
    counts: dict[str, int] = {}
    for w in _WORD.findall(text):
        low = w.lower()
        counts[low] = counts.get(low, 0) + (1 if w == low else -1)
    return frozenset(w for w, n in counts.items() if n >= 0)


def entity_or_none(name: str, type: str, lowered: Set[str] = frozenset()) -> str | None:
    """``name`` cleaned (surrounding punctuation and spaces off), or None when it is not an
    entity of ``type`` (see the module's doc). ``lowered`` is `lower_words` of the text it
    came from: a capitalised run of words all found there in lower case is no name."""
    name = " ".join(name.split()).strip(".,;:!?'’\"")
    if not 2 <= len(name) <= 100:
        return None
    if type in ("url", "email", "date"):
        return name  # their patterns are strict already
    if _LETTER.search(name) is None:
        return None
    low = name.lower()
    if "redacted" in low or name.startswith("-") or _NUMBERISH.fullmatch(name):
        return None
    if name.endswith(("_", "-", "/")) and type != "url":  # cut off: "CHRYSALIS_", "/tmp/x-"
        return None
    words = low.replace(",", " ").split()
    if type == "thing":  # a fact's free object ("green tea"): only the gross cases
        return None if all(w in GREETINGS or w in WEEKDAYS for w in words) else name
    if all(w.strip("!.?'’") in GREETINGS for w in words) or low in WEEKDAYS or low in _MONTHS:
        return None
    if type == "code":
        return name if _code(name) else None
    if type == "path":
        # A bare route or a one-level fragment ("/metrics", "/v1") is not a file, nor is a
        # ratio or an aperture whose last part has no letter ("f/2.8", "3/4").
        base = name.rsplit("/", 1)[-1]
        if _LETTER.search(base.rsplit(".", 1)[0]) is None:
            return None
        return name if name.count("/") >= 2 or "." in base else None
    if type == "title":
        # A quoted common word ("Checkout", "Pay" on a button) is written lower case too.
        plain = lowered and all(w.strip(",.!'’") in lowered for w in words)
        return name if _title(name) and not plain else None
    # A name: a capitalised run of words.
    if low in _GENERIC_ABBR or all(w in _GENERIC_ABBR for w in words):
        return None
    if any(w in _PLACEHOLDERS for w in words):
        return None  # "XYZ Corporation", "Foo Bar": a template's stand-in
    if any(_DIGITS.search(w) for w in words) and len(words) == 1:
        return None  # "D1", "3rd", "Tokyo2" cut from a label
    bare = [w.strip("'’") for w in words]
    if type == "place" and city_in_lower_case(low) == name:
        return name  # a big city typed in lower case ("moved to lyon"): still the city
    if type == "product" and len(bare) >= 2 and bare[0] in CAR_MAKES:
        return name  # a car typed in lower case ("a kia niro"): still the car
    if lowered and all(w in lowered or w in _GENERIC_ABBR for w in bare):
        return None  # common words capitalised for a heading or a title-case phrase
    if len(bare) >= 2 and (bare[-1] in _HEADING_HEAD or bare[-1] in _ROLE_HEAD):
        return None
    if any(w.endswith(_ADJECTIVE_ENDINGS) for w in bare):
        return None  # an adjective ("LA-based"), not a thing
    if len(bare) == 1 and (bare[0] in KINSHIP or bare[0].endswith(_PARTICIPLE_ENDINGS)):
        return None  # "Father", "Personalized": a relative's role, a verb's form
    if lowered and len(bare) >= 3 and bare[0] not in lowered:
        # "Acme Delivery Fees" where the text says "delivery fees": the name, then a
        # heading's common words; the name stays.
        tail = 0
        while tail < len(bare) - 1 and bare[len(bare) - 1 - tail] in lowered:
            tail += 1
        if tail >= 2:
            return " ".join(name.replace(",", " ").split()[: len(bare) - tail])
    return name


def _code(name: str) -> bool:
    """One identifier: ``snake_case``, ``camelCase``, ``Dotted.name``, ``call()``,
    ``tool-name`` with a digit or a capital; not a phrase, an expression or a plain word."""
    if _CODE_PUNCT.search(name) or not _IDENT.fullmatch(name.replace("-", "_")):
        return False
    if name.lower() in _GENERIC_ABBR:
        return False  # `PUT`, `JSON`
    if _LOCAL_CALL.fullmatch(name):
        return False  # `loss.backward()`: a call on a local variable, not a named thing
    if name.isalpha() and name.islower():
        return False  # a plain word in backticks is a value or a keyword, not a thing
    if any(len(part) > 2 and part.isalpha() and part.isupper() for part in name.split(":")[1:]):
        return False  # "ollama:MODEL", "host:PORT": a template with a slot to fill
    return not _NUMBERISH.fullmatch(name)


def _title(name: str) -> bool:
    """A quoted span that reads as a title: opens with a capital or a digit, is no sentence
    or greeting, and is mostly capitalised or short ("Dune", "The Art of Code")."""
    first = name[0]
    if not (first.isupper() or first.isdigit()) or name.endswith(("?", "!")):
        return False
    words = name.split()
    if len(words) > 1 and all(w.lower().strip(",.!") in GREETINGS for w in words[:2]):
        return False
    content = [w for w in words if len(w) > 3]
    capitalised = sum(1 for w in content if w[0].isupper() or not w[0].isalpha())
    return len(words) <= 3 or capitalised * 2 >= len(content)
