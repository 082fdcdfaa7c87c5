# ruff: noqa: RUF001, SIM905 - curly quotes are text here; cue lists read best as one string
"""Which parts of a text the speaker asserts: a clause classifier for the extractors.

A fact comes only from what the speaker says is so, now. Not from what someone else said
(quotes: straight, curly or single quotes, ``>`` block quotes, code spans and fences; reported
speech: "Bob wrote: I live in Berlin", "according to Ann, ..."), and not from a question ("Do I
prefer tea?", "Should I move to Lisbon"), a wish ("I wish I lived in Paris", "I'd love to ..."),
a condition or a supposition ("If I moved to Tokyo", "suppose I ...", "... if they hire me"), a
plan or a possibility ("next year I ...", "I might ..."), a negation ("not that I live in
Paris", "I work at Acme no longer") or a state in the simple past ("I lived in Paris": no
longer so).

`Reading` reads one text once: quoted spans blanked (offsets kept, so a match in the plain
text is a match in the original), sentences found, and `Reading.mood` classifies the clause
around any span: `ASSERTED` or the first of the other moods that applies. Cues are looked for
in the clause before the span (back to a comma, a semicolon, a colon, a dash, a bracket or a
conjunction), in the rest of its clause after it, and in its sentence's opening words; reported
speech in the whole sentence before it (a colon does not end what "Bob wrote" governs). A
reporter who is the speaker ("as I said, I live in Lisbon", "I think I prefer tea") still
asserts.

A noun phrase like "my sister Anna" is presupposed rather than asserted: it holds in a
question or a wish too ("Should I invite my sister Anna?"), so ``noun_phrase=True`` lets only
quotes and reported speech veto it (there "my" is somebody else's).
"""

from __future__ import annotations

import re
from bisect import bisect_right

__all__ = [
    "ASSERTED",
    "BLANK",
    "CONDITION",
    "EXAMPLE",
    "MOODS",
    "NEGATED",
    "PAST",
    "PLAN",
    "QUESTION",
    "QUOTED",
    "REPORTED",
    "RETRACTED",
    "UNREAD",
    "WISH",
    "Reading",
    "unquote",
]

ASSERTED = "asserted"
QUOTED = "quoted"
REPORTED = "reported"
QUESTION = "question"
CONDITION = "condition"
WISH = "wish"
PLAN = "plan"
NEGATED = "negated"
PAST = "past"
UNREAD = "unread"
RETRACTED = "retracted"
EXAMPLE = "example"
# Each read costs a pass over the sentence; a text made to ask for thousands of them (20,000
# characters of "in Lisbon, in Lisbon, ...") took minutes. A sentence longer than
# `MAX_SENTENCE` is a list or a paste, and past `READ_BUDGET` characters read for one text, the
# rest is `UNREAD`: nothing stands on text that was not read.
MAX_SENTENCE = 2_000
READ_BUDGET = 200_000
# Each mood in words, for the reason a fact was dropped ("said only in a question").
MOODS = {
    ASSERTED: "as a statement",
    QUOTED: "in a quote",
    REPORTED: "as what someone else said",
    QUESTION: "in a question",
    CONDITION: "in a condition or a supposition",
    WISH: "as a wish or a hope",
    PLAN: "as a plan or a possibility",
    NEGATED: "in a negation",
    PAST: "as something past",
    UNREAD: "in a sentence too long to read for it",
    EXAMPLE: "in an example or a story",
    RETRACTED: "and then taken back",
}

# ---- quotes: blanked, offsets kept -----------------------------------------------------------

_FENCE = re.compile(r"^[ \t]*(```|~~~).*?(?:^[ \t]*\1[ \t]*$|\Z)", re.MULTILINE | re.DOTALL)
_CODE = re.compile(r"`[^`\n]*`")
_BLOCK = re.compile(r"^[ \t]*>.*$", re.MULTILINE)
# A double quote up to its closer, or to the paragraph's end when it has none ("Bob wrote: "I
# live ... with no closing mark is still Bob's). Single quotes only where they cannot be an
# apostrophe: an opener not after a letter, a closer not before one ("I'm", "dogs' bowl").
# An opener never follows a letter or a digit (15" is inches).
_DOUBLE = re.compile(
    r"(?<![\w\"“”„«»])[\"“”„«»](?:[^\"“”„«»\n]|\n(?!\s*\n))*?(?:[\"“”„«»]|(?=\n\s*\n)|\Z)"
)
_SINGLE = re.compile(r"(?<![\w'‘’])['‘](?=\S)[^'‘’\n]{1,300}?(?<=\S)['’](?![\w'‘’])")


BLANK = "\ufffc"  # what stands for a quoted character: no word, space or punctuation


def unquote(text: str) -> str:
    """``text`` with every quoted character replaced by `BLANK` (newlines kept): same length,
    so offsets into the result are offsets into ``text``, and no pattern reads a quote's
    words or takes its place for the end of a phrase."""

    def blank(m: re.Match[str]) -> str:
        return re.sub(r"[^\n]", BLANK, m.group(0))

    for pattern in (_FENCE, _CODE, _BLOCK, _DOUBLE, _SINGLE):
        text = pattern.sub(blank, text)
    return text


# ---- sentences and clauses ------------------------------------------------------------------

# (A line break's blanks are matched from a run's first blank only: tried at each blank of a
# long run that ends in no line break, they cost a pass over the rest of it each, 5 s for
# 19,000 spaces.)
# An emoji ends a chat sentence as a full stop does ("it's X now 🎉 can you help me ...?").
_SENTENCE_END = re.compile(
    r"(?<=[.!?…\u2600-\u27bf\U0001f300-\U0001faff])[\"'”’)\]]*[ \t]+(?:\n[ \t\n]*)?|"
    r"(?<![ \t])[ \t]*\n[ \t\n]*"
)
# Where a clause ends (the cues of one clause do not reach into the next).
_BOUNDARY = re.compile(
    r"[,;:()\[\]—–]|\s-\s|\b(?:but|and|so|because|since|although|though|while|whereas|yet|or|"
    r"then|which|who|where|when)\b",
    re.IGNORECASE,
)


def _words(*phrases: str) -> re.Pattern[str]:
    alternatives = "|".join(p.replace(" ", r"\s+") for p in "".join(phrases).split("|") if p)
    # A contraction ("'d love", "'ll") starts inside its word ("I'd"): no boundary before it.
    return re.compile(r"(?:(?<![\w'’])|(?=['’]))(?:" + alternatives + r")(?![\w'’])", re.I)


_CONDITION = _words(
    "if|unless|suppose|supposing|imagine|imagining|assume|assuming|pretend|pretending|",
    "what if|as if|as though|in case|let's say|let’s say|say that|hypothetically|",
    "were I|had I|in theory|in a parallel universe|in another life",
)
_WISH = _words(
    "wish|wished|wishing|hope|hoped|hopes|hoping|hopefully|dream|dreamed|dreamt|dreaming|",
    "would love|'d love|’d love|would like|'d like|’d like|would rather|'d rather|’d rather|",
    "want|wants|wanted|wanna|long to|longing|if only|ideally|fantasize|fantasise|",
    # advice is no fact ("Dr Okafor recommended I drink more X")
    "recommend|recommends|recommended|suggest|suggests|suggested|advise|advises|advised|",
    "urge|urges|urged",
)
_PLAN = _words(
    "will|'ll|’ll|shall|going to|gonna|plan|plans|planning|planned|intend|intends|intending|",
    "about to|next week|next month|next year|someday|some day|one day|eventually|soon|",
    "tomorrow|later this|thinking of|thinking about|considering|might|could|would|",
    "should|'d|’d|maybe|perhaps|possibly|probably|potentially",
)
_NEGATED = _words(
    "not|never|no longer|no more|nobody|neither|nor|hardly|far from|",
    r"\w+n't|\w+n’t|cannot|anymore|any more|",
    # What came close and did not happen ("we almost rented a flat in X"; not "almost every").
    r"(?:almost|nearly)\s+(?:\w+ed|took|bought|got|went|made|left|sold|quit|had|became|ran)|",
    r"(?:almost|nearly)\s*$",  # ... right before the span read ("we almost [rented a flat]")
)
_COORDINATE = re.compile(
    r";|\b(?:and|but|so|or|yet|because|since|although|though|whereas|while)\b", re.IGNORECASE
)
_AFTER_CONDITION = re.compile(r"(?<!even\s)\b(?:if|unless)\b", re.IGNORECASE)
_AFTER_NEGATED = _words(
    "no longer|no more|anymore|any more|not anymore|",
    # A plan that came to nothing ("the move to Tallinn fell through").
    "fell through|falls through|fallen through|is off|was off|is cancelled|was cancelled|",
    "got cancelled|is canceled|was canceled|got canceled|called off|collapsed|",
    "never happened|didn't happen|did not happen|not happening|went nowhere",
)
# "I'd" before a past participle is "I had" ("I'd already registered there", "we'd moved"),
# no plan: an adverb or two may come between.
_HAD = re.compile(
    r"['’]d\s+(?:(?:already|just|never|finally|recently|long|since|all|both|only|also)\s+)*"
    r"(?:\w+ed|been|had|got|gotten|gone|done|made|taken|seen|known|found|left|bought|met|"
    r"begun|become|come|sold|grown|given|won|run|paid|spent|put|set)\b",
    re.IGNORECASE,
)
# "may" is a plan only in lower case ("we may move"; "in May I moved" is a month).
_MAY = re.compile(r"\bmay\b")
# The speaker taking back what they just said ("Graz. Scratch that, it's Linz").
_RETRACT = _words(
    "scratch that|strike that|correction|i mean|i meant|no wait|wait no|my mistake|my bad|",
    "typo|i misspoke|ignore that|disregard that|not true|that's wrong|that’s wrong",
)
# Words a retraction may open with ("oh wait, scratch that", "sorry, I mean ...").
_FILLER = re.compile(r"^(?:(?:oh|ah|um|uh|er|sorry|wait|ok|okay|actually)\W+)+", re.IGNORECASE)
# A correction right after a value, before the one meant ("Porto no sorry Lyon", "tea, I
# mean matcha", "the Honda Civic no the Kia Niro"): a word of correcting, then another name.
# Words that correct a slip, between the slip and the one meant ("Porto, sorry, Lyon").
CORRECTING = r"(?:no\s+)?(?:sorry|oops)|i\s+mean|i\s+meant|no\s+wait|wait\s+no|or\s+rather"
_CORRECTED = re.compile(
    r"\s*[,;—–-]?\s*(?:" + CORRECTING + r"|mean|meant|"
    r"no\s+no|no(?=[\s,]+(?:the\s+|a\s+|an\s+)?(?-i:[A-Z])))[\s,]+(?:it['’]s\s+)?"
    r"(?:the\s+|a\s+|an\s+)?(?!(?:not|about|for|to|but|that|if|i|i['’]m|guys|everyone|all)\b)\w",
    re.IGNORECASE,
)
_RETRACT_REACH = 40  # characters into the next clause or sentence a retraction opens in
# A negation of doing without the span affirms it ("can't start my day without X", "never
# leave home without X"): "without" in the two words before it, a negation before that.
_DO_WITHOUT = re.compile(
    r"(?:\b(?:not|never|cannot|\w+n't|\w+n’t)\b).*\bwithout(?:\s+\S+){0,2}\s*$",
    re.IGNORECASE | re.DOTALL,
)
_SPEECH = (
    "say|says|said|saying|tell|tells|told|telling|write|writes|wrote|written|writing|texted|"
    "emailed|ask|asks|asked|claimed|mention|mentions|mentioned|insist|insists|"
    # (a claim filed is no saying: "mileage claim", "my expense claims")
    r"(?<!mileage\s)(?<!expense\s)(?<!expenses\s)(?<!insurance\s)(?<!travel\s)(?<!\ba\s)"
    r"(?<!\bthe\s)(?<!\bmy\s)(?<!\bour\s)(?<!\ban\s)(?<!\bthis\s)claims?|"
    "insisted|posted|tweeted|replied|answered|announce|announced|joked|swear|swore|quoted|"
    r"according\s+to"
)
_THOUGHT = "think|thinks|thought|believe|believes|believed|reckon|reckons|reckoned|hear|heard"
# A verb of saying or thinking, and who did it: the (up to four) words right before it. The
# verb is found first and its words read after (one pattern for both tried four words at
# every character: 14 ms for a 2,000-character sentence, per value read in it).
_REPORTING = re.compile(
    rf"(?<![\w'’])(?:(?P<speech>{_SPEECH})|{_THOUGHT})(?![\w'’])", re.IGNORECASE
)
_WHO = re.compile(r"(?:[\w'’]+\s+){0,4}$")
_WHO_REACH = 200  # characters before a verb its four words are looked for in
# A reporter who is the speaker asserts ("I said", "as I've told you", "I think", "I want to
# tell you"); "let's say" supposes (a condition, below).
# (An imperative asks the one addressed to pass on the speaker's own words: "please mention
# that I'm based in X".)
_SPEAKER = frozenset(
    {"i", "i've", "i’ve", "i'd", "i’d", "i'm", "i’m", "to", "let's", "let’s", "please", "pls",
     "plz", "kindly"}
)  # fmt: skip
_QUESTION_OPENING = re.compile(
    r"^\W*(?:(?:and|but|so|also|then|ok|okay|well|hey|btw|now)\W+)*"
    # "whats the fastest way ...", "hows the ...": a question typed without its "?"
    r"(?:(?:whats|wheres|hows|whos|whens|whys)\b|"
    r"(?:(?:what|where|when|why|how|who|whom|which|whose)\s+)?"
    r"(?:do|does|did|should|shall|would|could|can|will|am|is|are|was|were|have|has|had|may|"
    r"might|must)(?:n't|n’t)?\s+(?:i|you|we|my|he|she|they|it|there|the|your|our|anyone)\b)"
    # ("Had my leaving drinks on Friday ...": a clipped "I had", unless it asks with a "?")
    r"(?<!\bhad\s\bmy)(?<!\bhad\s\bthe)(?<!\bhad\s\bour)",
    re.IGNORECASE,
)
# ... but "Had the car been cheaper, I'd have bought it": an "if" inverted, its would-clause
# after it, not a clipped "I had".
_HAD_IF = re.compile(
    r"^\W*had\s+(?:my|the|our)\b[^.!?;]*?(?:\b(?:would|could|might)\b|['’]d\b)", re.IGNORECASE
)
_LATER_QUESTION = re.compile(
    r"(?:[,;:—–]|\b(?:and|but|so|or)\b)\s*(?:(?:and|but|so|or)\s+)?(?:what|where|when|why|how|who|"
    r"which|do|does|did|is|are|am|was|were|can|could|would|will|should|shall|may|might|must|"
    r"have|has|you|yours|any)\b",
    re.IGNORECASE,
)
_SIMPLE_PAST = re.compile(r"^I\s+(?:\w+ly\s+)?(?:lived|worked)\b")  # "I lived in X": no longer
# Someone else's words pasted in: a forwarded or quoted email (all of it from its header on),
# or a line of a chat log under another speaker's label ("Dana: I live in Tallinn now").
_EMAIL_HEADER = re.compile(
    r"^[ \t>]*(?:-{2,}[ \t]*)?(?:forwarded\s+message|original\s+message|begin\s+forwarded)\b"
    r"|^[ \t>]*(?:from|sent|subject|reply-to)[ \t]*:[ \t]*\S"
    r"|^[ \t>]*on\b[^\n]{0,200}\bwrote:[ \t]*$",
    re.IGNORECASE | re.MULTILINE,
)
# A chat log's time stamp before its speaker ("[18:40] Noor:", "2024-05-02 09:15 - Ravi:").
_STAMP = re.compile(
    r"[ \t]*[\[(]?(?:\d{4}-\d{2}-\d{2}[ \tT,]*)?\d{1,2}[:.]\d{2}(?::\d{2})?(?:[ \t]*[ap]\.?m\.?)?"
    r"[\])]?[ \t,–—-]*",
    re.IGNORECASE,
)
# A head: a line's opening words up to a colon (not a URL's), introducing what follows.
_HEAD = re.compile(r"[^\n:]{1,120}?:(?!//)")
# A bare speaker's label: one or two capitalised words ("Noor", "Aunt Rosa"), maybe bracketed.
_LABEL = re.compile(r"[\[(<]?([A-Z][\w.'’-]*(?:[ \t][A-Z][\w.'’-]*)?)[\])>]?")
_HEAD_PARTS = re.compile(r"\s(?:-{1,2}|[–—])\s|[\])>|]")
# Labels that head the speaker's own line, not another speaker's.
_OWN_LABELS = frozenset(
    """user me i myself note notes update updates edit ps pps summary reminder fyi btw also
    context fact facts memory re status today yesterday tonight tldr important todo done
    diary journal entry log news morning evening night weekend monday tuesday wednesday
    thursday friday saturday sunday january february march april may june july august
    september october november december correction corrected fix oops sorry actually
    clarification addendum afterthought noted understood okay ok alright sure expense
    expenses receipt memo""".split()
)


def _who(text: str, start: int, end: int) -> str:
    """The words (up to four, lower-cased) right before ``end``, none before ``start``; a
    word cut by ``start`` is not one of them (its tail might read "i")."""
    m = _WHO.search(text, start, end)
    who = m.group(0) if m else ""
    if (
        m
        and m.start() == start
        and start > 0
        and (text[start - 1].isalnum() or text[start - 1] in "_'’")
    ):
        who = who.split(maxsplit=1)[1] if len(who.split()) > 1 else ""
    return who.lower()


# Words that say the text is made up or someone's lines, not the speaker's life: an example,
# an exercise, a story ("sample story for the class: I live in Kyoto now"). Not the idioms that
# open the speaker's own account ("for example, I ...", "long story short", "true story").
_FRAME = _words(
    "example|examples|sample|samples|exercise|exercises|homework|template|prompt|prompts|",
    "story|stories|novel|novels|fiction|fictional|narrator|protagonist|character|characters|",
    "screenplay|script|scene|roleplay|role-play|role play|dialogue|dialog|poem|lyrics|",
    "made-up|made up|imaginary|invented|translate|translation|rewrite|paraphrase|",
    "for the class|for class|my students|practice sentence|practise sentence",
)
# Not a word of an address ("example.org/flat", "docs/sample"): only a word of prose frames.
_FRAME = re.compile(r"(?<![./@#])" + _FRAME.pattern + r"(?![./@]\w)", re.IGNORECASE)
_FRAME_IDIOM = _words(
    "for example|for instance|long story short|true story|story time|to cut a long story short|",
    "same story|different story|the story of my life|change of scene|change of scenery|",
    "behind the scenes",
)
# What others say, second-hand ("rumour has it", "word is"; "apparently" hedges, own words).
_HEARSAY = _words(
    "rumour|rumours|rumor|rumors|rumoured|rumored|gossip|allegedly|",
    "word is|word has it|people say|they say",
)
# A head naming someone else as the writer: a message, a reply or a letter from or by someone,
# someone's message, his/her/their answer, what someone sent or said.
_MEDIUM = (
    "message|messages|msg|text|texts|sms|dm|dms|email|e-mail|mail|voicemail|voice note|note|"
    "letter|card|reply|replies|answer|answers|response|comment|comments|post|tweet|review|"
    "whatsapp|chat|thread|transcript|quote|words|status|caption|bio|profile"
)
_OTHER_WORDS = (
    "he|she|they|him|his|her|hers|them|their|theirs|"
    "sister|brother|mum|mom|mother|dad|father|parents|aunt|uncle|cousin|grandma|grandpa|"
    "wife|husband|partner|girlfriend|boyfriend|friend|friends|flatmate|roommate|housemate|"
    "neighbour|neighbor|colleague|coworker|boss|landlord|landlady|client|customer|someone|"
    "somebody|everyone|everybody|stranger|guy|girl|woman|man"
)
_OTHER_WRITER = re.compile(
    # "message from Ilse", "from Noor", "Kemal's message", "his answer", "what Dad sent"
    rf"\b(?i:{_MEDIUM})\s+(?i:from|by|of)\s+\S"
    rf"|(?:\b(?i:from|by)\s+(?:(?i:the|my|our|a|an)\s+)?(?:(?i:{_OTHER_WORDS})\b|[A-Z]))"
    rf"|\b(?:[A-Z][\w’-]*|(?i:{_OTHER_WORDS}))['’]s?\s+(?:\w+\s+)?(?i:{_MEDIUM})\b"
    rf"|\b(?i:{_OTHER_WORDS})\b"  # "his answer was", "what she sent"
    rf"|\b(?!I\b)[A-Z][\w’-]*\s+(?:said|says|wrote|writes|sent|texted|replied|answered|posted|"
    rf"asked|forwarded|shared|messaged)\b",  # "what Dad sent"
)
_FIRST_PERSON_HEAD = re.compile(r"^\W*(?:I|I['’]\w+|my|me|we|our|us)\b", re.IGNORECASE)


def _head_voice(head: str) -> str | None:
    """Whose words follow a line's head (the words before its colon): `REPORTED` when it names
    another writer ("Noor", "[18:40] Noor", "Message from Ilse", "His answer was", "what Dad
    sent"), `EXAMPLE` when it frames them as made up ("Sample story for the class"), None when
    they are the speaker's own ("Update", "Note to self", "My reply to Ilse", "Big news")."""
    if _FRAME.search(head) and not _FRAME_IDIOM.search(head):
        return EXAMPLE
    last = [p for p in _HEAD_PARTS.split(head) if p.strip()]
    label = _LABEL.fullmatch(last[-1].strip()) if last else None
    if label:  # a bare speaker's name, maybe after a stamp or a dash ("chat -- Ravi:")
        words = label.group(1).lower().rstrip(".").split()
        return None if words[0] in _OWN_LABELS or _common_label(words) else REPORTED
    if _FIRST_PERSON_HEAD.match(head) and not re.search(r"\b(?:from|by)\b|['’]s\b", head):
        return None  # "My reply to Ilse:", "I texted Mum:": the speaker's own words
    return REPORTED if _OTHER_WRITER.search(head) else None


# Common words that, capitalised, head a line as a topic, not a speaker ("New job:", "Big news:").
_COMMON_LABEL = frozenset(
    """new big good bad great quick small huge job home work life news car drink coffee tea
    house flat move moving plan plans goal goals question answer reply thought thoughts idea
    ideas week month year day status progress random fun personal private""".split()
)


def _common_label(words: list[str]) -> bool:
    return all(w in _COMMON_LABEL for w in words)


def _pasted(text: str) -> list[tuple[int, int, str]]:
    """The spans of ``text`` that are not the speaker's own words, each with its mood: an
    email from its header to the end (`REPORTED`); the rest of a line after a head naming
    another writer or an example (`_head_voice`), and the paragraph under it when the head
    ends its line; a line opening with a bracketed name ("[Noor] ...")."""
    spans: list[tuple[int, int, str]] = []
    header = _EMAIL_HEADER.search(text)
    if header:
        spans.append((header.start(), len(text), REPORTED))
        text = text[: header.start()]
    at = 0
    lines = text.splitlines(keepends=True)
    until = -1  # a head ending its line governs the lines after it, to a blank line
    under, governed = REPORTED, False  # governed: the head's paragraph has begun
    for n, line in enumerate(lines):
        end = at + len(line)
        if n <= until:
            if not line.strip() and governed:
                until = -1
            else:
                governed = governed or bool(line.strip())
                spans.append((at, end, under))
                at = end
                continue
        stamp = _STAMP.match(line)
        body = stamp.end() if stamp and stamp.end() > 0 and ":" in line[: stamp.end()] else 0
        head = _HEAD.match(line, body)
        bracketed = re.match(r"[ \t]*\[([A-Z][\w.'’-]*(?:[ \t][A-Z][\w.'’-]*)?)\]", line)
        voice = _head_voice(line[body : head.end() - 1]) if head else None
        if voice is None and bracketed and bracketed.group(1).lower() not in _OWN_LABELS:
            voice = REPORTED
        if voice is not None:
            spans.append((at, end, voice))
            if head and not line[head.end() :].strip():
                until, under, governed = len(lines), voice, False
        at = end
    return spans


class Reading:
    """One text read for mood: its quotes blanked (`plain`) and its sentences found."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.plain = unquote(text)
        starts, ends, at = [], [], 0
        for m in _SENTENCE_END.finditer(self.plain):
            if m.start() > at:
                starts.append(at)
                ends.append(m.start())
            at = m.end()
        if at < len(self.plain):
            starts.append(at)
            ends.append(len(self.plain))
        self._starts, self._ends = starts, ends
        self._read = 0  # characters of sentences `mood` has read (`READ_BUDGET`)
        self._pasted = _pasted(self.plain)

    def pasted(self, at: int) -> bool:
        """Whether ``text[at]`` is in someone else's words pasted in (an email from its
        header on, a chat line under another's label): `mood` calls it `REPORTED`."""
        return self._voice(at) is not None

    def _voice(self, at: int) -> str | None:
        return next((mood for a, b, mood in self._pasted if a <= at < b), None)

    def _retracted(self, i: int, end: int) -> bool:
        """Whether the speaker takes back the clause ending at ``end`` (in sentence ``i``):
        the next clause or sentence opens with a retraction ("..., I mean Linz", "Scratch
        that, ...")."""
        b = self._ends[i]
        rest = self.plain[end:b]
        if _CORRECTED.match(rest):
            return True  # "we live in Porto, no sorry, Lyon": corrected on the spot
        tail = _BOUNDARY.search(rest)
        if tail is not None:
            at = end + tail.end()
        elif i + 1 < len(self._starts):
            at = self._starts[i + 1]
        else:
            return False
        opening = _FILLER.sub("", self.plain[at : at + _RETRACT_REACH].lstrip(" ,;:—–-"))
        return _RETRACT.match(opening) is not None

    def _noted_asks(self, i: int, after: str) -> bool:
        """Whether a request to note something ending in "?" asks about what it notes too:
        a tag or an alternative after it ("..., don't I?", "..., right?", "... or Bath?"), or
        a next sentence that doubts it ("... Bristol? Or was it Bath?")."""
        if _NOTED_TAG.search(after):
            return True
        nxt = (
            self.plain[self._starts[i + 1] : self._ends[i + 1]] if i + 1 < len(self._starts) else ""
        )
        nxt = nxt.strip(" \t\n\"'()")
        return nxt.endswith("?") and _NOTED_DOUBT.match(nxt) is not None

    def sentences(self) -> list[tuple[int, int]]:
        """Each sentence as ``(start, end)`` offsets (quotes blanked in `plain`)."""
        return list(zip(self._starts, self._ends, strict=True))

    def mood(
        self, start: int, end: int, *, noun_phrase: bool = False, reported: bool = True
    ) -> str:
        """The mood of the clause holding ``text[start:end]``: `ASSERTED`, or why not.

        With ``noun_phrase`` the span is a presupposed phrase ("my sister Anna"): only
        `QUOTED` and `REPORTED` apply to it. `UNREAD` when its sentence is longer than
        `MAX_SENTENCE` or this reading has read `READ_BUDGET` characters already. With
        ``reported=False`` a verb of saying before the span is not looked for: the mood of
        a telling itself ("if I told you ...", "does the lease say ...")."""
        if self.plain[start:end] != self.text[start:end]:
            return QUOTED
        voice = self._voice(start)
        if voice is not None:
            return voice
        i = bisect_right(self._starts, start) - 1
        if i < 0 or start >= self._ends[i]:
            return ASSERTED  # between sentences: only blanks
        a, b = self._starts[i], self._ends[i]
        self._read += b - a
        if self._read > READ_BUDGET:
            return UNREAD
        if b - a > MAX_SENTENCE:
            return UNREAD
        before, after = self.plain[a:start], self.plain[end:b]
        # Reported speech governs up to a coordinating conjunction ("Bob said hi, and I ...").
        joins = list(_COORDINATE.finditer(before))
        after_last = joins[-1].end() if joins else 0
        for m in _REPORTING.finditer(before, after_last) if reported else ():
            who = set(_who(before, max(after_last, m.start() - _WHO_REACH), m.start()).split())
            after_last = m.end()
            speech = m.group("speech") or ""
            if (not who & _SPEAKER or speech.lower().startswith("according")) and (
                speech or not noun_phrase  # "Do you think my cat Luna ...": still my cat
            ):
                return REPORTED
        if reported and _HEARSAY.search(before):
            return REPORTED  # "rumour has it I'm moving to Lille": someone else's word
        if noun_phrase:
            return ASSERTED
        if _FRAME.search(before) and not _FRAME_IDIOM.search(before):
            return EXAMPLE  # "in the story I'm drafting, the narrator lives in Tbilisi"
        if self._retracted(i, end):
            return RETRACTED
        # "I'd like to let you know that ...": what is told, read alone
        noted = _NOTE_THAT.search(before)
        if noted is not None and _NOTE_ASKED.search(before, 0, noted.start()):
            noted = None  # ("How could you remember that I live in X?": asked, not told)
        told = noted or _TELLING.search(before)  # ("Would you kindly note that ...?": kept)
        if told is not None and not _BUT_NOT.search(after):
            a, before = a + told.end(), before[told.end() :]
        bounds = list(_BOUNDARY.finditer(before))
        clause = before[bounds[-1].end() :] if bounds else before
        tail = _BOUNDARY.search(after)
        rest = after[: tail.start()] if tail else after
        # A question opens like one ("Do I ...", "Where should I ..."), or ends with a "?"
        # that a later clause does not ask for itself ("I live in Lisbon, and you?").
        sentence = self.plain[a:b].strip()
        asks = (
            sentence.rstrip("\"'”’)] ").endswith("?")
            and not _LATER_QUESTION.search(after)
            and (noted is None or self._noted_asks(i, after))
        )  # (a request's "?" is its own, unless a tag asks about what it keeps)
        if asks or _QUESTION_OPENING.match(sentence):
            return QUESTION
        if _HAD_IF.match(sentence):
            return CONDITION
        opening = before[: bounds[0].start()] if bounds else before
        for cues, mood in ((_WISH, WISH), (_CONDITION, CONDITION)):
            if cues.search(clause) or cues.match(opening.lstrip()):
                return mood
        if _AFTER_CONDITION.search(rest):
            return CONDITION
        if (
            (_planned(clause) and not _scheduled(clause, rest, after)) or _MAY.search(clause)
        ) and not _DO_WITHOUT.search(clause):
            return PLAN  # ("couldn't get through a day without X": no plan, a habit)
        if (_NEGATED.search(clause) or _AFTER_NEGATED.search(rest)) and not _DO_WITHOUT.search(
            clause
        ):
            return NEGATED
        if _SIMPLE_PAST.match(self.plain[start:end]):
            return PAST
        return ASSERTED


# A change already arranged, told in the future ("I'll be joining X in March", "we shall be
# living in X from the 3rd", "I'm going to start at X on Monday"): as good as told done, so
# it holds from its telling (the bench's users, and people, say so the day they know). Not
# a hope or a maybe ("I'll probably move", "I might be joining"), and not `_PLAN`'s own words
# of intent ("planning to", "thinking of", "someday").
_FIRM = re.compile(
    r"\b(?:will|shall)\s+be\s+\w+ing\b|['’]ll\s+be\s+\w+ing\b|"
    r"(?:\b(?:will|shall|going\s+to|gonna)\s+|['’]ll\s+)(?:start|begin|join|move|relocate|"
    r"take\s+up|be\s+(?:at|in|with|on)\b)",
    re.IGNORECASE,
)
_WHEN = re.compile(
    r"\b(?:on|from|by|in|this|next|starting|as\s+of)\s+(?:the\s+)?(?:monday|tuesday|wednesday|"
    r"thursday|friday|saturday|sunday|week|month|weekend|january|february|march|april|may|june|"
    r"july|august|september|october|november|december|\d{1,2}(?:st|nd|rd|th)?|first|spring|"
    r"summer|autumn|fall|winter)\b|\btomorrow\b|\bnext\s+(?:week|month)\b",
    re.IGNORECASE,
)
_HEDGE = _words(
    "might|could|would|should|'d|’d|maybe|perhaps|possibly|probably|potentially|plan|plans|",
    "planning|planned|intend|intends|intending|thinking|considering|someday|some day|one day|",
    "eventually|hope|hoping|if|unless|may|whether|try|trying|not|n't|n’t|never",
)


# The speaker framing what they tell as a telling ("I would like to let you know that",
# "just wanted to say", "may I inform you that", "please note that"): the wish, the "may"
# and the "would" are the telling's; what is told is read as said.
_TELLING = re.compile(
    r"(?:\b(?:(?:i|we)\s+)?(?:(?:would|should|['’]d)\s+like\s+(?:you\s+)?to|"
    r"(?:just\s+)?want(?:ed)?\s+(?:you\s+)?to|(?:must|may|might|should|would)\s+|may\s+(?:i|we)\s+|"
    r"(?:am|are)\s+writing\s+to|(?:you\s+)?may\s+wish\s+to|please|kindly)\s*"
    r"(?:let\s+you\s+know|inform\s+you|tell\s+you|say|mention|note|share|update\s+you|"
    r"add|record|confirm|advise\s+you|be\s+advised)"
    # "you will be pleased to hear that", "I'm happy to report that", "as you may know,"
    r"|\byou(?:\s+will|['’]ll)\s+be\s+(?:pleased|glad|delighted|happy|interested|relieved|"
    r"amused|surprised|sorry)\s+to\s+(?:hear|know|learn)"
    r"|\b(?:i|we)(?:\s+am|\s+are|['’]m|['’]re)\s+(?:happy|pleased|glad|delighted|excited|"
    r"thrilled|proud)\s+to\s+(?:say|report|announce|tell\s+you|share)"
    r"|\bas\s+you\s+(?:may|might|will)\s+(?:know|remember|recall|have\s+heard))"
    r"(?:\s+(?:that|of))?\b[\s,:]*",
    re.IGNORECASE,
)


# A request to keep what follows ("Would you kindly note that I have moved to X?", "I should
# be obliged if you would update my records: ...", "could you make a note that ..."): what
# follows is told, and a "?" after it is the request's.
_NOTE_THAT = re.compile(
    r"\b(?:(?:would|could|can|will)\s+you\s+(?:please\s+|kindly\s+)*|please\s+(?:be\s+so\s+"
    r"(?:good|kind)\s+as\s+to\s+)?|(?:perhaps\s+)?you\s+(?:would|might)\s+be\s+so\s+kind\s+as\s+to\s+|"
    r"(?:i|we)\s+(?:would|should|shall)\s+be\s+(?:grateful|obliged|glad)\s+if\s+you\s+"
    r"(?:would|could)\s+(?:kindly\s+|please\s+)?)"
    r"(?:note(?:\s+down)?|record|make\s+a\s+note|remember|bear\s+in\s+mind|keep\s+in\s+mind|"
    r"update\s+(?:my|our)\s+(?:records?|details|profile))(?:\s+(?:that|of))?\b"
    # (not "can you remember whether / where / which city ...": a question of what is kept)
    r"(?![\s,:]*(?:whether|if|which|what|where|when|why|how|who|whom|whose|to)\b)[\s,:]*",
    re.IGNORECASE,
)
# ... whose "?" asks about what it keeps: a tag or an alternative ("..., right?", "... or X?",
# "- do I though?"), not a courtesy ("..., please?", "..., if you could?")
_NOTED_TAG = re.compile(
    r"(?:[,;:–—]|\s-|\bor\b)\s*(?!(?:please|thanks|thank\s+you|for\s+me|if\s+you\b|would\s+you|"
    r"could\s+you|can\s+you|will\s+you)\b)\w[^?]*\?",
    re.IGNORECASE,
)
# ... or that the next sentence doubts ("... Bristol? Or was it Bath?", "... ? Right?")
_NOTED_DOUBT = re.compile(
    r"(?:or|right|correct|true|really|is\s+that\s+(?:right|correct|true)|am\s+i\s+right|"
    r"do\s+i|did\s+i|have\s+i|don['’]t\s+i|didn['’]t\s+i)\b",
    re.IGNORECASE,
)
# ... asked about itself ("Why would you note that I moved to X?"): no request, a question
_NOTE_ASKED = re.compile(r"\b(?:why|how|what|when|where|who|whom|which)\b", re.IGNORECASE)
# ... unless what is told is then denied ("I'd like to say I live in X, but I don't").
# (or told a lie or a joke: "..., but that's a lie", "... but couldn't", "... lol jk")
_BUT_NOT = re.compile(
    r"\bbut\s+(?:(?:i|we|it|that)(?:['’]s|['’]m)?\s*)?(?:(?:don['’]t|can['’]t|couldn['’]t|"
    r"didn['’]t|do\s+not|cannot|am\s+not|['’]m\s+not|haven['’]t|won['’]t|isn['’]t|is\s+not|"
    r"wasn['’]t|not)\b|(?:a\s+)?(?:lie|lying|kidding|joking)\b)"
    r"|\b(?:jk|j/k|just\s+kidding|kidding|joking|not\s+really|not\s+true|"
    r"that['’]s\s+a\s+lie|i['’]m\s+lying)\b",
    re.IGNORECASE,
)


# ... nor one taken back or hedged later in the sentence ("..., hopefully", "..., once the
# visa comes through", "... lol jk", "..., or so they keep telling me", "..., in the story").
_HEDGED_AFTER = _words(
    "hopefully|fingers crossed|touch wood|knock on wood|apparently|supposedly|allegedly|",
    "assuming|provided|providing|once|pending|if|unless|maybe|perhaps|probably|possibly|",
    "kidding|jk|joking|or not|or so|is what|in theory|tentatively|said|says|claims|told|",
    "in the story|in my story|in the novel|in my novel|in the game|in my dreams|in your dreams",
)
# A change of its own ("I'll be moving ..."), not a doing on a day ("I'll be seeing X on
# Friday", "I'll be drinking X at the conference tomorrow", "driving a X next week").
_CHANGE = re.compile(
    r"(?:moving|relocating|joining|starting|beginning|switching|transferring|settling|taking)$",
    re.IGNORECASE,
)
_ONE_OFF = re.compile(
    r"\b(?:tomorrow|tonight|today|this\s+(?:morning|afternoon|evening|weekend)|"
    r"(?:on|this|next)\s+(?:monday|tuesday|wednesday|thursday|friday|saturday|sunday|week|"
    r"weekend)|(?:at|for)\s+(?:the|a|an)\s+(?:conference|party|meeting|event|wedding|game|"
    r"match|day|night|weekend|trip|visit|holiday|dinner|lunch)|on\s+(?:holiday|vacation|"
    r"a\s+trip|business))\b",
    re.IGNORECASE,
)


def _scheduled(clause: str, rest: str, after: str = "") -> bool:
    """Whether ``clause`` (and the ``rest`` of its clause) tells an arranged change
    (`_FIRM`): a future progressive, or a start, a join or a move in the future with when;
    not one hedged in the rest of the sentence (``after``, `_HEDGED_AFTER`), and no doing
    on a day (`_ONE_OFF`) unless a change (`_CHANGE`)."""
    firm = _FIRM.search(clause)
    if firm is None or _HEDGE.search(clause) or _HEDGE.search(rest) or _HEDGED_AFTER.search(after):
        return False
    said = firm.group(0).lower()
    if " be " in said and said.endswith("ing"):
        return bool(_CHANGE.search(said)) or not _ONE_OFF.search(clause + " " + after)
    return _WHEN.search(clause + " " + rest) is not None


def _planned(clause: str) -> bool:
    """Whether ``clause`` speaks of a plan or a possibility: a word of `_PLAN`, but not the
    "'d" of "I'd already moved" (`_HAD`)."""
    return any(
        not (m.group(0) in ("'d", "’d") and _HAD.match(clause, m.start()))
        for m in _PLAN.finditer(clause)
    )
