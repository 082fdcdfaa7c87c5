# ruff: noqa: RUF001, SIM905 - curly quotes are text here; word lists read best as one string
"""The words of each typed attribute (`CUES`) and of what makes a value something else
(`AGAINST`), the words naming people, and the lookup of a sentence's words among them: a word,
a stem ("relocat*"), or one typo in a long word, each word looked up once for all attributes.

Read by `chrysalis.extract.typed` (whether a sentence is a home's, a job's ...) and
`chrysalis.extract.values` (which names are people)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache, lru_cache
from itertools import pairwise

from chrysalis.extract.facts import OTHER_PEOPLE

# Words of each attribute (stems end in "*"). A sentence must hold one for its value to count.
CUES: dict[str, frozenset[str]] = {
    "lives_in": frozenset(
        """live lives living lived move* moving relocat* keys key landlord* landlady flat
        flats apartment* house home homes rent rented renting lease* postcode* zipcode address
        neighbourhood* neighborhood* neighbour* neighbor* unpack* boxes movers settled chose
        chosen picked went_with went_for opted ended_up
        settling settle based resident* residence removal* mortgage two-bed one-bed studio condo
        wohnung casa appartement déménag* mudanza mudado commute our_place my_place
        new_place own_place for_good city town addr""".split()
    ),
    "works_at": frozenset(
        """job jobs work working workplace employer* employed employee hire* hiring manager
        boss onboarding badge salary paycheck payslip payroll contract colleague* coworker*
        co-workers team office start* standup* codebase intern internship offer signed
        probezeit probation career position role notice desk shift join chose chosen
        went_with went_for opted ended_up accepted
        joined joining gig company firm first_day first_week taken_up take_up new_post first_pr
        first_commit first_deploy first_ticket""".split()
    ),
    "drinks": frozenset(
        """drink drinking drinks lately rn nowadays every daily always usually usual only
        gone_over went_over going_over
        morning mornings afternoon afternoons ritual routine kick hooked addicted obsessed
        switched swapped switch thing go-to order choice favourite favorite favourite
        personality habit staple anything cup cups mug breakfast enough prefer settled_on
        prefers these_days beverage having twice a_day per_day each_day living_on""".split()
    ),
    "drives": frozenset(
        """bought buy got purchased purchase whip mileage drive drives driving drove driven driver
        wheels
        picked pick parked parking
        insurance insured registered plates dealer dealership owner own mine filled fuel
        petrol charging traded lease leased collected upgraded garage car vehicle chose
        chosen went_with went_for opted ended_up
        congratulations congrats delivered delivery keys""".split()
    ),
    "partner": frozenset(
        """partner girlfriend boyfriend gf bf official dating dated seeing together
        anniversary relationship love amore fiancé fiancée fiance fiancee kissed parents
        other_half going_out stayed_over couple moving_in_with moved_in_with move_in_with a_thing
        an_item date_night first_date second_date third_date 2nd_date 3rd_date married wedding
        got_married""".split()
    ),
}


# Words that make the value something other than the attribute's current value.
AGAINST: dict[str, frozenset[str]] = {
    "lives_in": frozenset(
        """flew fly flying flight flights visit visiting visited trip trips conference
        holiday holidays vacation wedding gig hotel hostel airbnb tour sightseeing layover
        stopover weekend_in weekend_away booked festival should almost nearly favourite
        favorite dream honeymoon""".split()
    ),
    "works_at": frozenset(
        """ad ads advert posting posted recruiter interview interviews interviewing applied
        applying application rejected dream layoffs layoff article talk news shares stock
        customer client competitor podcast almost nearly turned_down declined passed_on
        other_offer dating girlfriend boyfriend opening openings vacancy vacancies
        listing listings""".split()
    ),
    "drinks": frozenset(
        """tried try trying whim gross hate hated stand sample taste once idk almost
        nearly accident accidentally mistake mistakenly ever tomorrow tonight""".split()
    ),
    "drives": frozenset(
        """rented rent rental hire borrowed test holiday taxi uber fun almost nearly
        dream""".split()
    ),
    "partner": frozenset("""ex broke split divorced engaged almost nearly""".split()),
}


# Words that open a sentence capitalised without being a name doing something ("Since X is
# ...", "Noted, X ...").
_OPENERS = frozenset(
    """since because after before by once until till while though although unless whether
    during from for with at in on to as like congratulations congrats noted got thanks
    thank anyway besides can could would should did does do is are was were has have had
    shall must might took met told saw went came made brought found left gave kept sent spent
    felt heard ran sat put let said rang drove flew wrote ate drank thought add order book buy
    fill draft change update remind email send schedule cancel find check call text ask make
    grab reserve renew print pay submit register sort forward reply list any some every each
    all no more most anyone anything""".split()
)


_WORD = re.compile(r"[^\W\d_][\w'’-]*", re.UNICODE)


_USER = frozenset(
    """i i'm i’m im i've i’ve ive i'd i’d i'll me my mine myself we we're we’re we've we’ve
    our ours us user user's user’s""".split()
)


_PRONOUN = frozenset("he she they him her his hers their theirs them".split()) | frozenset(
    # ... and their contractions, as typed ("she's moving to X" is hers)
    f"{who}{q}{tail}"
    for who, tails in (("he", "s d ll"), ("she", "s d ll"), ("they", "re ve d ll"))
    for tail in tails.split()
    for q in ("'", "’", "")
    if not (q == "" and f"{who}{tail}" in ("hell", "shed", "shell", "theyd"))
)


# People other than the user whom a sentence may be about ("my sister", "a friend").
_OTHERS = (
    frozenset(
        """friend friends flatmate flatmates roommate roommates housemate sister sisters brother
    brothers mum mom dad father mother parents cousin cousins neighbour neighbor neighbours
    neighbors aunt uncle grandma grandpa wife husband son daughter kids children someone
    somebody everyone everybody nobody partner girlfriend boyfriend fiancé fiancée fiance
    fiancee spouse""".split()
    )
    | OTHER_PEOPLE
)


# Words naming a person other than the speaker ("nobody", "everyone" name none).
_SOMEONE_ELSE = (_OTHERS | _PRONOUN) - {"nobody", "everyone", "everybody", "anyone", "anybody"}


# Of `_OTHERS`, the words that name the user's partner: for the attribute "partner" they are
# the user's own relationship ("my partner Sam"), for the others someone else's home or job.
_PARTNER_WORDS = frozenset(
    """parents partner girlfriend boyfriend fiancé fiancée fiance fiancee spouse bf gf hubby
    wifey missus half""".split()
)


def _words(text: str) -> set[str]:
    """The lower-case words of ``text`` and its two-word phrases joined by "_" ("other_half");
    "couple" only where it is a pair, not a number ("a couple of weeks")."""
    words = _WORD.findall(text.lower())
    out = set(words) | {f"{x}_{y}" for x, y in pairwise(words)}
    # "moved in with": a partner's words, where "moved in" alone is a home's
    out |= {
        f"{x}_in_with"
        for x, y, z in zip(words, words[1:], words[2:], strict=False)
        if (y, z) == ("in", "with")
    }
    couples = [y for x, y in pairwise([*words, ""]) if x == "couple"]
    if couples and all(y in _A_NUMBER_OF for y in couples):
        out.discard("couple")
    return out


_A_NUMBER_OF = frozenset("of days weeks months years hours times more".split())


def _cued(words: set[str], cues: frozenset[str], *, typos: bool = True) -> bool:
    """Whether any of ``words`` is a cue: a word, a stem ("relocat*"), or, in a word of six
    letters or more, a cue with one letter missing, extra or swapped ("aparment")."""
    lexicon = _lexicon(cues)
    for w in words:
        if w in cues or w.rstrip("'’s") in cues:
            return True
        if any(w.startswith(stem) for stem in lexicon.stems.get(w[0], ())):
            return True
        if typos and 6 <= len(w) <= lexicon.longest + 1 and _one_off(w, lexicon):
            return True
    return False


def _cued_attrs(words: set[str]) -> set[str]:
    """The attributes any of ``words`` cues, as `_cued` with typos reads them: each word
    looked up once for all attributes (`_attrs_cued_by`), not once per attribute and
    sentence (20,000 characters of distinct six-letter words took 140 ms so)."""
    out: set[str] = set()
    for w in words:
        out |= _attrs_cued_by(w)
        if len(out) == len(CUES):
            break
    return out


@lru_cache(maxsize=1 << 16)
def _attrs_cued_by(w: str) -> frozenset[str]:
    """The attributes whose cues ``w`` is (`_cued`), a typo's variants of it built once."""
    every = _lexicon(_ALL_CUES)  # first: is it any attribute's cue at all? (mostly not)
    stripped = w.rstrip("'’s")
    variants: set[str] = set()
    if 6 <= len(w) <= every.longest + 1:  # one letter extra, or two neighbours swapped
        variants = {w[:i] + w[i + 1 :] for i in range(len(w))} | {
            w[:i] + w[i + 1] + w[i] + w[i + 2 :] for i in range(len(w) - 1) if w[i] != w[i + 1]
        }
    if not (
        w in _ALL_CUES
        or stripped in _ALL_CUES
        or any(w.startswith(stem) for stem in every.stems.get(w[0], ()))
        or (variants and (w in every.missing or not variants.isdisjoint(every.long)))
    ):
        return frozenset()
    out = []
    for attr, cues in CUES.items():
        lexicon = _lexicon(cues)
        if (
            w in cues
            or stripped in cues
            or any(w.startswith(stem) for stem in lexicon.stems.get(w[0], ()))
        ) or (
            6 <= len(w) <= lexicon.longest + 1
            and w not in lexicon.long
            and (w in lexicon.missing or not variants.isdisjoint(lexicon.long))
        ):
            out.append(attr)
    return frozenset(out)


_ALL_CUES = frozenset().union(*CUES.values())


@dataclass(frozen=True, slots=True)
class _Lexicon:
    stems: dict[str, tuple[str, ...]]  # first letter -> the stems ("relocat") starting with it
    long: frozenset[str]  # the cues of six characters or more (a stem's "*" counted), bare
    missing: frozenset[str]  # each of those with one letter left out
    longest: int


@cache
def _lexicon(cues: frozenset[str]) -> _Lexicon:
    """``cues`` indexed so a word is looked up, not compared with each cue (a text's every
    word against every cue cost 1.7 s for 20,000 characters)."""
    stems: dict[str, list[str]] = {}
    for c in cues:
        if c.endswith("*"):
            stems.setdefault(c[0], []).append(c[:-1])
    long = frozenset(c.rstrip("*") for c in cues if len(c) >= 6)
    missing = frozenset(c[:i] + c[i + 1 :] for c in long for i in range(len(c)))
    return _Lexicon(
        {k: tuple(v) for k, v in stems.items()},
        long,
        missing,
        max(map(len, long), default=0),
    )


def _one_off(w: str, lexicon: _Lexicon) -> bool:
    """Whether ``w`` is a long cue with one letter missing, extra, or two neighbours swapped."""
    if w in lexicon.long:
        return False  # the cue itself is no typo of it (a stem's bare form: matched above)
    if w in lexicon.missing:
        return True
    if any(w[:i] + w[i + 1 :] in lexicon.long for i in range(len(w))):
        return True
    return any(
        w[:i] + w[i + 1] + w[i] + w[i + 2 :] in lexicon.long
        for i in range(len(w) - 1)
        if w[i] != w[i + 1]
    )
