"""Context for an agent's next turn (DESIGN §18): not search results, but what to put in the
prompt: the facts that bear on the question as of the time it is about, then the beads and
session summaries that are evidence, each cited, cut where relevance ends.

    frame.py   the time a question is about ("now", "in June 2025", "before I moved")
    facts.py   the facts that bear on it, ordered for that time
    build.py   retrieval, exclusions, the relevance floor, near-duplicates, the token budget

It reads through `chrysalis.read.reader.Reader` and `chrysalis.search.Retriever`; it never writes.
"""

from chrysalis.context.build import DEFAULT_BUDGET, RECENT, Source, build
from chrysalis.context.frame import Frame, frame

__all__ = ["DEFAULT_BUDGET", "RECENT", "Frame", "Source", "build", "frame"]
