"""Facts that change over months: does `context` name what holds at the time asked about?

Generates users whose home, employer, drink, partner and car change over eighteen months, told
in varied words among everyday chatter (trips to other cities, friends' jobs, other drinks),
then asks about now ("where do I live these days?") and about a past time ("which company was
I at in March 2025?", "what did I drive last summer?"). A question is right when, of the
values that attribute ever had, the first one the context's text names is the one that held
then. The same is measured for retrieve(k=10) (its items' texts in rank order) for reference.

    .venv/bin/python bench/changing_facts.py [--users N] [--seed S] [--embedder SPEC]
        [--extractor rules|none] [--wordings old|new|all|held|held2|...|held22]
        [--quick] [--json] [--show-misses]

Each user is a memory of its own (the rules extractor derives the facts it can; statements it
cannot read reach the context as beads only). Wording, people, places and times are drawn
from lists below with the seed: another seed gives another set.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from chrysalis import Memory

START = datetime(2024, 7, 1, tzinfo=UTC)
MONTHS = 18
NOW = START + timedelta(days=MONTHS * 30 + 12)

CITIES = [
    "Lisbon", "Porto", "Berlin", "Hamburg", "Vienna", "Prague", "Krakow", "Lyon", "Bordeaux",
    "Valencia", "Seville", "Turin", "Bologna", "Ghent", "Utrecht", "Aarhus", "Gothenburg",
    "Tallinn", "Ljubljana", "Zagreb", "Galway", "Edinburgh", "Leeds", "Bristol", "Montreal",
]  # fmt: skip
EMPLOYERS = [
    "Northwind Labs", "Bluefin Analytics", "Kestrel Robotics", "Harbor Health", "Quillsoft",
    "Tidewater Energy", "Ardent Foods", "Juniper Logistics", "Cobalt Media", "Meridian Bank",
    "Lumen Optics", "Pinecrest Games", "Redwood Insurance", "Solstice Travel", "Vantage Print",
]  # fmt: skip
DRINKS = [
    "oolong tea", "flat whites", "yerba mate", "rooibos", "cold brew", "matcha lattes",
    "chai", "espresso", "kombucha", "hot chocolate", "peppermint tea", "sparkling water",
]  # fmt: skip
PARTNERS = ["Imogen", "Tariq", "Soledad", "Mateus", "Ingrid", "Kwame", "Noor", "Felix", "Yuki"]
CARS = [
    "Skoda Octavia", "Honda Civic", "Volvo V60", "Renault Zoe", "Mazda MX-5", "Kia Niro",
    "Fiat Panda", "Tesla Model 3", "Toyota Yaris", "Subaru Outback",
]  # fmt: skip

# How a change is told: some in words the rules extractor reads ("I moved to X"), many not.
SAY: dict[str, list[str]] = {
    "home": [
        "I moved to {x} last week, still unpacking boxes.",
        "Big news: we relocated to {x} over the weekend.",
        "I live in {x} now, the flat is tiny but bright.",
        "Just signed the lease on an apartment in {x}.",
        "I'm based in {x} these days, settling in slowly.",
        "Home is {x} now; the move finally happened.",
        "I've just moved to {x} and I love the neighbourhood.",
    ],
    "employer": [
        "I started at {x} on Monday, lots of onboarding.",
        "I work at {x} now, on the platform team.",
        "Accepted the offer from {x} today!",
        "I joined {x} this month as a senior engineer.",
        "First week at my new job with {x} went fine.",
        "I'm working for {x} since the start of the month.",
    ],
    "drink": [
        "I prefer {x} these days, coffee makes me jittery.",
        "I've switched to {x} in the mornings.",
        "My favourite drink is {x} at the moment.",
        "Lately it's {x} for me, every single day.",
        "I drink {x} now instead of my old usual.",
    ],
    "partner": [
        "My partner {x} and I went hiking on Sunday.",
        "I've been seeing {x} for a few weeks, it's going well.",
        "{x} and I just moved in together, my girlfriend is great.",
        "Started dating {x}, we met at a climbing gym.",
    ],
    "car": [
        "I bought a {x} yesterday, second hand but clean.",
        "Traded in my old car for a {x}.",
        "I drive a {x} now, much better on fuel.",
        "Picked up my new {x} from the dealer this morning.",
    ],
}
# A second family of wordings (`--wordings new`), written apart from the first and from the
# extractor's patterns, to see whether what works on the first generalises.
SAY_NEW: dict[str, list[str]] = {
    "home": [
        "After months of searching we finally bought a place in {x}.",
        "Settled into my new flat in {x} this week.",
        "We packed up everything and headed to {x} for good.",
        "My new address is in {x}, near the old harbour.",
        "Living in {x} now and the commute is so much shorter.",
        "The movers dropped the last boxes at our place in {x}.",
    ],
    "employer": [
        "Signed my contract with {x} yesterday, desk and all.",
        "Handed in my notice and took a job at {x}.",
        "My new employer is {x}, the team is lovely.",
        "I'm now an analyst at {x}.",
        "Got hired by {x} after the third interview.",
        "Day one at {x}: badge, laptop, and too many meetings.",
    ],
    "drink": [
        "These days I'm all about {x}.",
        "I've gotten hooked on {x} lately.",
        "My go-to drink right now is {x}.",
        "Can't start my day without {x} anymore.",
        "I've been drinking {x} every afternoon.",
        "Gave up my old habit, it's only {x} now.",
    ],
    "partner": [
        "I'm in a relationship with {x} now.",
        "{x} asked me out last week and we've been together since.",
        "Introduced {x} to my parents as my partner.",
        "Things with {x} are getting serious, we're a couple now.",
    ],
    "car": [
        "Our new car is a {x}, we collected it on Friday.",
        "Finally upgraded to a {x}.",
        "I'm driving a {x} these days.",
        "Sold the old car and got a {x}.",
    ],
}
# A third family (`--wordings held`), written before any miss of the others was looked at and
# never used to tune anything: colloquial, typos, other sentence shapes, some told by someone
# else or in the third person. Only `held` reads it; `all` stays the first two.
SAY_HELD: dict[str, list[str]] = {
    "home": [
        "finally got the keys to our place in {x}!! so tired",
        "ok so we're officially {x} people now lol",
        "moved in to a rented house in {x}, the heating is ancient",
        "aparment hunting is over, we got one in {x}",
        "Jo told everyone I relocated to {x} before I could even post about it",
        "New postcode, new life: {x}.",
        "transferred my gym membership to the branch in {x} since thats where i live now",
        "Per today's chat, the user has moved house and lives in {x}.",
        "the landlord in {x} seems decent, we moved in on friday",
    ],
    "employer": [
        "got the job!!! {x} want me to start asap",
        "my manager at {x} is way more chill than my last one",
        "I've been at {x} a couple weeks now, still learning the codebase",
        "left the old place, now doing contract work for {x}",
        "new badge says {x} on it, weird to see",
        "signed w/ {x}, start date was monday",
        "teh onboarding at {x} is endless",
        "User mentioned they now work for {x}.",
        "Jo says I'm the newest hire at {x}, and she's right",
    ],
    "drink": [
        "honestly cant get enough of {x} rn",
        "swapped my morning coffee for {x}, feel way better",
        "{x} is my thing now, ordered a big box of it",
        "the barista already knows my order: {x}",
        "i've been on a {x} kick for weeks",
        "My flatmate laughs that I only drink {x} these days.",
        "The user's daily drink has become {x}.",
    ],
    "partner": [
        "{x} stayed over again, think it's official now",
        "been going out with {x} since the party at Lena's",
        "{x} (my other half) says hi",
        "me and {x} are official!! posted it and everything",
        "told my sister about {x}, she wants to meet them",
        "The user is now in a relationship with {x}.",
    ],
    "car": [
        "new wheels: a {x}, picked it up today",
        "the {x} is parked outside, finally have my own car again",
        "insurance for the {x} cost more than i thought, but she's mine",
        "we got a {x} off a neighbour, runs great",
        "just drove the {x} home from the dealership",
        "The user now drives a {x}.",
    ],
}
ASK_NOW_HELD: dict[str, list[str]] = {
    "home": ["what city am i in these days?", "where's home right now?",
             "Which place do I live in at present?"],
    "employer": ["who's paying my salary these days?", "what's the company i'm at now?",
                 "where's my job nowadays?"],
    "drink": ["what do i usually drink lately?", "what's my drink of choice now?"],
    "partner": ["who's my other half these days?", "who am i going out with now?"],
    "car": ["what am i driving now?", "which car is mine at the moment?"],
}  # fmt: skip
ASK_THEN_HELD: dict[str, list[str]] = {
    "home": ["where was home {t}?", "what city was i in {t}?"],
    "employer": ["who was paying me {t}?", "what company was i with {t}?"],
    "drink": ["what was my drink of choice {t}?", "what did i usually drink {t}?"],
    "partner": ["who was my other half {t}?", "who was i going out with {t}?"],
    "car": ["which car was i driving {t}?", "what did i have for wheels {t}?"],
}  # fmt: skip
# Its chatter names other cities, companies, drinks, cars and people too.
CHATTER_HELD = [
    "my cousin is flying into {city} next month, might meet her there",
    "{org} just posted a job ad, pay looks rubbish",
    "Jo drinks {drink} by the litre, gross",
    "rented a {car} on holiday, hated it",
    "{partner} from my old team got engaged!",
    "weekend in {city} was rainy but fun",
    "helping a friend prep for an interview at {org}",
    "haha no im never moving to {city}, way too expensive",
    "thinking of trying {drink} but idk",
    "laundry day. riveting.",
    "my knee is acting up after football",
    "booked the dentist for tuesday",
    "watched the match at the pub with {partner} and a few others",
    "my dad's {car} broke down on the motorway again",
]
# A fourth family (`--wordings held2`), written before the work on issue 31 changed any code
# and never looked at while tuning: long chatty sentences with the value in the middle, loan
# words, typos, implicit changes, notes and summaries in the third person.
SAY_HELD2: dict[str, list[str]] = {
    "home": [
        "so after three viewings and one very sketchy estate agent we ended up renting a "
        "two-bed in {x}, which still feels unreal, anyway how was your week",
        "Neue Wohnung in {x}! the Kaution nearly killed me but worth it",
        "changed my address on every website today, {x} it is from now on",
        "Summary of the earlier conversation: the user relocated to {x} and is still getting "
        "used to the area.",
        "teh new neighbourhood in {x} has the best bakery, we moved in last month",
        "my commute is a ten-minute walk since the move to {x}",
        "registered with a doctor in {x} now that this is where we live",
        "boxes everywhere, the {x} flat is chaos but it's ours",
        "déménagement done - {x} is home now",
    ],
    "employer": [
        "first paycheck from {x} landed today, feels good",
        "so the recruiter came through and I'm officially on the payroll at {x}, which means "
        "goodbye old commute and hello standups at nine",
        "my new colleagues at {x} took me out for a welcome lunch",
        "Probezeit at {x} starts monday, wish me luck",
        "Note: the user changed jobs; their employer is now {x}.",
        "onboarding laptop from {x} arrived, IT setup took all morning",
        "wrking for {x} now, dm me if u need a referral",
        "got my {x} email address today, so it's real",
        "the user's new job is at {x}, per this morning's chat",
    ],
    "drink": [
        "lately my whole personality is {x}, sorry not sorry",
        "the cafe near the office does a great {x} and i'm there every morning now",
        "gave up on coffee completely, it's {x} all the way",
        "bought a proper kit for making {x} at home, it's my daily ritual now",
        "User's current beverage of choice: {x}.",
        "mon petit rituel du matin: {x}, every day without fail",
        "can't remember the last time i had anything but {x} with breakfast",
    ],
    "partner": [
        "{x} and me are moving our stuff into one place, it's getting serious",
        "dinner with {x}'s parents went well, I think they like me",
        "so yeah i'm seeing {x}, we met through friends at a barbecue",
        "The user has a new partner, {x}.",
        "one month with {x} today lol, cheesy dinner planned",
        "my amore {x} made dinner tonight",
    ],
    "car": [
        "the insurance papers for my {x} came through, officially a car owner again",
        "So the old hatchback finally died and, after a week of test drives and haggling, I "
        "went home in a {x}, which I'm weirdly proud of",
        "parking the {x} on this street is a nightmare",
        "The user recently bought a {x}.",
        "filled up the {x} for the first time, ouch",
        "just registered my {x}, new plates and everything",
    ],
}
ASK_NOW_HELD2: dict[str, list[str]] = {
    "home": ["whats my current city?", "where am I living nowadays?",
             "Which city is my home at this point?"],
    "employer": ["which company employs me at the moment?", "who's my employer these days?",
                 "where do i work rn?"],
    "drink": ["what's my usual beverage currently?", "what drink am i into these days?"],
    "partner": ["who am I in a relationship with right now?", "who's my partner currently?"],
    "car": ["what's my current car?", "which vehicle am i driving these days?"],
}  # fmt: skip
ASK_THEN_HELD2: dict[str, list[str]] = {
    "home": ["where did i call home {t}?", "what was my city {t}?"],
    "employer": ["who was my employer {t}?", "where did i have a job {t}?"],
    "drink": ["what was I mostly drinking {t}?", "which drink was my usual {t}?"],
    "partner": ["who was I in a relationship with {t}?", "who was my significant other {t}?"],
    "car": ["what vehicle was I driving {t}?", "which car did i own {t}?"],
}  # fmt: skip
# Its chatter: trips, friends' and family's jobs, homes and cars, drinks tried once, plans,
# questions and negations naming other values.
CHATTER_HELD2 = [
    "my flatmate just got an offer from {org}, so jealous",
    "long weekend in {city} booked, flights were cheap",
    "conference in {city} next week, I'll be living out of a suitcase",
    "ordered a {drink} on a whim, never again",
    "should I move to {city}? the rent is half what I pay",
    "my boss used to work at {org} years ago",
    "my neighbour just bought a {car}, she won't stop talking about it",
    "test drove a {car} for fun, not buying one though",
    "{partner} from the running club is moving abroad",
    "if I ever quit, {org} would be my dream employer",
    "haven't had {drink} in years",
    "my sister lives in {city} and wants me to visit",
    "cleaned the oven, it was grim",
    "long day, going to bed early",
    "dropped off the recycling and got caught in the rain",
    "{partner} and her husband invited us to a barbecue",
]
# A fifth family (`--wordings held3`), written for the typed-mention timeline before any code
# changed and never looked at while tuning: terse shorthand, the value as the first word, a
# statement inside a longer story, corrections ("scratch that, it's X", where {y} is a value
# of the same kind the user never had), "since ..." dates, lists, British and American
# spellings, other people speaking of the user, and the assistant summarising (a template
# that starts with "A: " is the assistant's turn).
SAY_HELD3: dict[str, list[str]] = {
    "home": [
        "addr change: {x}. done w/ the old place",
        "{x}, finally! the van came at seven and we had the sofa up four flights by noon",
        "we're off to {y} - actually scratch that, the {y} flat fell through, it's {x}",
        "been living in {x} since the spring and I still get lost on the trams",
        "mum came to see our new flat in {x} and cried at the view from the balcony, then "
        "complained about the stairs for an hour",
        "A: Noted - you've settled in {x} now, so I'll suggest places near there.",
        "things to sort after the move to {x}: council tax, broadband, a new dentist",
        "Sam keeps telling people we live in {x} these days, which I suppose is true now",
        "neighborhood: loud. city: {x}. rent: ouch. still happy we made the move",
    ],
    "employer": [
        "new gig: {x}. started tues",
        "{x} it is - signed yesterday, start right after the holidays",
        "job update: joining {y}... no wait, {y} pulled the offer, so I said yes to {x} instead",
        "I've been with {x} since the autumn, mostly wrangling data pipelines",
        "A: Congratulations on the new role at {x}! Tell me how the first weeks go.",
        "todo: hand back old laptop, set up the {x} VPN, update my CV",
        "my brother brags to his mates that I'm at {x} now, bless him",
        "the organization I work for changed - {x} took me on as a designer",
        "stood in the lift with the CEO of {x} this morning. my CEO now, which is weird",
    ],
    "drink": [
        "{x} >> coffee. converted.",
        "{x}, every morning, no exceptions - it has quietly become my whole routine",
        "tried to get into {y}, scratch that, hated it; the thing I actually drink now is {x}",
        "A: So your go-to these days is {x} - I'll keep that in mind.",
        "grocery run: eggs, bread, {x}, more {x}",
        "people at work call me the {x} person because it's all I drink now",
        "favorite drink at present? easy. {x}",
        "the flavour of every morning since I switched: {x}",
    ],
    "partner": [
        "{x} & me, official since saturday",
        "{x}! we got together at new year and it's been lovely",
        "the date with {y} was a flop but then I met {x} and we're properly together now",
        "A: It's lovely that you and {x} are a couple now.",
        "mum keeps asking when she gets to meet {x}, my new boyfriend",
        "Rosa told the whole office I'm with {x} now, so much for keeping it quiet",
        "anniversary plans with {x}, my girlfriend: a cabin, no phones",
    ],
    "car": [
        "car: {x}. finally",
        "{x} in the driveway, all mine, bought it off a retired teacher",
        "nearly went for a {y} but scratch that, came home with a {x}",
        "A: Enjoy the new {x}! Good luck on the first long drive.",
        "checklist for the {x}: mats, phone mount, residents' parking permit",
        "my dad says my {x} is the nicest car I've ever owned, and he's right",
        "been driving my own {x} since the summer, bye bye bus pass",
    ],
}
ASK_NOW_HELD3: dict[str, list[str]] = {
    "home": ["where am i based atm?", "my city today?", "Remind me where I live currently."],
    "employer": ["who am i employed by as of now?", "which firm am I with today?",
                 "Remind me who I work for."],
    "drink": ["what's in my mug most mornings now?", "remind me of my usual drink today?"],
    "partner": ["who's my person nowadays?", "remind me who I'm with at present"],
    "car": ["what do i drive atm?", "remind me what car I've got now"],
}  # fmt: skip
ASK_THEN_HELD3: dict[str, list[str]] = {
    "home": ["which city was I living in {t}?", "where was my flat {t}?"],
    "employer": ["which firm was I with {t}?", "who was I employed by {t}?"],
    "drink": ["what was in my mug {t}?", "what was I having every morning {t}?"],
    "partner": ["who was I together with {t}?", "who was my person {t}?"],
    "car": ["what was I driving around in {t}?", "what car had I got {t}?"],
}  # fmt: skip
# Its chatter: friends' jobs, trips, the assistant naming another city, lists, negations,
# relatives' cars, people from the past.
CHATTER_HELD3 = [
    "my mate's just taken a job at {org}, good for him",
    "stag do in {city} in june, dreading it",
    "A: {city} sounds like a great trip! Want some restaurant ideas?",
    "someone at the party was raving about {drink}, not my thing",
    "list for the weekend: tidy up, call gran, look at {car} prices just for fun",
    "we won't be moving to {city}, the schools there are not great",
    "{org} turned me down years ago, still salty",
    "my aunt drives a {car} and refuses to upgrade",
    "{partner} from uni messaged out of the blue",
    "sunday. did nothing. bliss.",
    "the boiler is making that noise again",
    "read that {org} is opening an office in {city}",
    "grew up near {city}, haven't been back in ages",
    "my friend painted her kitchen a very bold colour",
]
# A sixth family (`--wordings held4`), written blind on 2026-11-25 by a helper session (brief
# r3s8/held4) without reading the extractor, the context code or the other families' texts:
# chat-assistant logs where the fact is incidental to a longer request, short casual lines
# (some lowercase, a few typos), the assistant restating what it was told ("A: "), the value
# before the verb, and present or past perfect statements.
SAY_HELD4: dict[str, list[str]] = {
    "home": [
        "I need help planning a weekly grocery budget. Since we moved to {x} everything costs "
        "more than I expected, and I'd like to stay under 80 euros for two people.",
        "Can you suggest a weekend hike near {x}? We moved to {x} in the spring and I don't "
        "know the area yet.",
        "just got the keys to our flat in {x}!! boxes everywhere lol",
        "{x} is home now, finally unpacked the last box",
        "We've been renting in {x} since the start of the month and the landlord still hasn't "
        "fixed the heating. How do I write a polite but firm email about it?",
        "A: Since you've just settled in {x}, here are a few neighbourhood libraries worth "
        "signing up at.",
        "what's a good gym chain in {x}? i live there now and my old membership doesn't transfer",
        "By the time the lease started I'd already registered at the town hall in {x}, so my "
        "address there is official. What else should I sort out after a move?",
        "ok so change of adress: its {x} now, can you remember that for the dentist reminders",
        "A: Noted, your new home is {x}, so I'll suggest things around there from now on.",
    ],
    "employer": [
        "Could you help me put together a packed-lunch plan for the week? My new job at {x} "
        "only gives me half an hour at noon and there's no microwave on our floor.",
        "first week at {x} done. brain = fried",
        "{x} made me an offer and I said yes! I start on Monday.",
        "I've been working at {x} for about three weeks now and I still don't understand the "
        "expense system. How do people usually keep their receipts organised?",
        "A: Congratulations on joining {x}! Would you like help drafting an intro message for "
        "your new team?",
        "can you help me rewrite my linkedin headline? i'm at {x} now, not the old place",
        "Signed the contract with {x} this morning, so I'm handing in my notice today. Can you "
        "help me word the resignation letter, and maybe look up what {x} expects from new hires?",
        "my badge for {x} finaly came through so i can actualy get in the building now",
        "A: Got it, you've moved over to {x}. I'll keep that in mind when we talk about your "
        "commute.",
        "Before I had even finished my notice period, {x} had already sent me a laptop and a "
        "welcome pack. Is it normal to start onboarding that early?",
    ],
    "drink": [
        "I'm trying to cut back on sugar. These days my morning routine is just {x} and some "
        "toast, could you suggest a breakfast that keeps me full until lunch?",
        "{x} every morning now, the old habit is gone",
        "I've been drinking {x} since my doctor told me to sleep better. Can you explain how "
        "caffeine affects sleep?",
        "A: Since {x} is your go-to drink now, I've added it to your shopping list.",
        "lol i'm fully hooked on {x} now, bought a whole box of it",
        "Can you help me work out whether it's cheaper to make {x} at home? I'm having {x} "
        "twice a day now and the café bills add up.",
        "swichted to {x} last week, not going back",
        "A: You mentioned you've switched to {x}; would you like some snacks that go well with it?",
        "By the time winter came I had completely replaced my old drink with {x}. Is it okay to "
        "have it late in the evening?",
    ],
    "partner": [
        "I need gift ideas for my partner {x}'s birthday next week. We've only been together a "
        "couple of months so nothing too over the top.",
        "{x} and I are officially a couple now :)",
        "Could you help me plan a weekend away? It's for me and {x}; we've been dating for a "
        "while and haven't travelled together yet.",
        "A: That's lovely news about you and {x}. Would you like ideas for a first weekend "
        "away together?",
        "moving in with {x} next month, eek",
        "been seeing {x} for a few weeks now, its going realy well",
        "How do I split household bills fairly with my partner? {x} earns a bit more than me "
        "and we've just moved in together.",
        "A: Noted, {x} is your partner now; I'll use that name when you ask about plans for two.",
        "I'd never met anyone like {x} before we started going out. Anyway, what's a good "
        "restaurant for a date with a vegetarian? {x} doesn't eat meat.",
    ],
    "car": [
        "What's the recommended tyre pressure for a {x}? I bought one second-hand last weekend "
        "and the dashboard light keeps coming on.",
        "{x} picked up from the dealer today, smells brand new",
        "I've been driving the {x} for a month now and the fuel consumption seems high. Is 7 "
        "litres per 100 km normal?",
        "A: Since you now drive a {x}, here are the service intervals the maker recommends.",
        "finally sold the old car, the {x} is mine now",
        "can you remind me how often to rotate tires? new car is a {x}",
        "Could you help me plan a road trip for the long weekend? We'll be taking my {x}, "
        "which I've had for a few weeks, so I'd rather avoid toll roads.",
        "insurence for the {x} went through today, so i can finaly drive it",
        "A: Congratulations on the {x}! Would you like a checklist for its first service?",
        "By the time I sold my old car I had already put a deposit down on a {x}.",
    ],
}
ASK_NOW_HELD4: dict[str, list[str]] = {
    "home": ["remind me, what city is my home base these days?",
             "If someone posted me a letter today, which city would it go to?",
             "where's my home right now?"],
    "employer": ["What's the name of the company paying my salary now?",
                 "where do i clock in these days?", "Which employer am I at right now?"],
    "drink": ["What do I usually reach for to drink at the moment?",
              "whats my daily drink right now?"],
    "partner": ["Who's my other half these days?", "what's my partner's name currently?"],
    "car": ["Which car is mine at the moment?", "what are my current wheels?"],
}  # fmt: skip
ASK_THEN_HELD4: dict[str, list[str]] = {
    "home": ["What city was home for me {t}?", "where did i have my place {t}?"],
    "employer": ["What was the name of my employer {t}?", "where was i clocking in {t}?"],
    "drink": ["What was my daily drink {t}?", "what did i usually reach for to drink {t}?"],
    "partner": ["Who was my other half {t}?", "whose name would I have given as my partner {t}?"],
    "car": ["Which car was mine {t}?", "what were my wheels {t}?"],
}  # fmt: skip
CHATTER_HELD4 = [
    "My sister just moved to {city} for her master's, so I'll probably visit a lot.",
    "Can you tell me the best time of year to visit {city}? Thinking about a long weekend.",
    "my mate got a job at {org}, says the canteen is amazing",
    "I lived in {city} as a student but I barely remember it now.",
    "Nearly applied to {org} last year but didn't in the end.",
    "A: Here's a three-day plan for {city}, starting with the old town on day one.",
    "Is a {car} reliable? My dad is thinking of buying one.",
    "I don't drink {drink}, never liked the taste.",
    "{partner} from my running club is getting married in {city} in June.",
    "Saw on the news that {org} is laying off staff in {city}.",
    "We almost rented a flat in {city} once, but the commute would have been awful.",
    "my cousin {partner} just bought a {car}, it's bright orange",
    "The office ordered {drink} for the whole team today, nice surprise.",
    "A: You asked earlier about {city}: the trains from the airport run every 20 minutes.",
    "Can you summarise this article for me? It's about remote work and productivity.",
    "rainy all day, stayed in and did the crossword",
    "Went to a friend's leaving do, she's off to {org} and moving to {city} for it.",
    "Borrowed my neighbour's {car} for the day to move a sofa.",
]
# A seventh family (`--wordings held5`), written blind on 2026-11-25 by a helper session (brief
# r3s10/held5) without reading the extractor, the context code or the other families' texts:
# what people tell an assistant over a year and a half, plain statements among requests that
# carry the fact, households ("we"), dates inline, the old value implied, the assistant's own
# turn ("A: "), corrections ({y}: what was said by mistake), lowercase and a few typos.
SAY_HELD5: dict[str, list[str]] = {
    "home": [
        "Just moved into a flat in {x}.",
        "I live in {x} now.",
        "We've finally moved to {x}, there are boxes everywhere.",
        "Can you help me find a GP near my new place? I'm in {x} now, on the north side.",
        "i relocated to {x} last weekend, still figuring out the trams lol",
        "Since the start of this month I've been living in {x}, so use that for the weather.",
        "A: Got it, you're based in {x} now. I'll give times and forecasts for there.",
        "Sorry, I wrote {y} earlier but I meant {x}. That's where we moved.",
        "The lease on the old apartment is done, we're settled in {x} as of this week.",
        "What does a monthly transit pass cost in {x}? Moved here a few days ago.",
        "Home is {x} these days. Still getting used to the weather here.",
        "Signed the rental contract and got the keys, officially a {x} resident!",
    ],
    "employer": [
        "I started a new job at {x} today.",
        "I work at {x} now.",
        "handed in my notice last month, first day at {x} is monday",
        "Could you help me write a short intro for my new team? I just joined {x} as an analyst.",
        "Left my old job. Working for {x} now, it's a big change.",
        "A: Congratulations on the new role at {x}! Want help planning your first week?",
        "Small correction: my new employer is {x}, not {y}.",
        "Been at {x} since the first of the month and the onboarding is a lot.",
        "My employer is {x} now, in case that matters for the pension question.",
        "Do you know what the parental leave policy at {x} is like? I work there since this week.",
        "we had our first team lunch at {x} today, everyone seems nice so far",
    ],
    "drink": [
        "I've switched to {x} in the mornings.",
        "These days I mostly drink {x}.",
        "Changed my morning routine, it's {x} every day now.",
        "Can you suggest snacks that go with {x}? It has become my daily drink.",
        "doctor told me to change things up so im on {x} now",
        "Since about two weeks I'm hooked on {x}, honestly can't stop.",
        "A: Noted, {x} is your go-to drink now. I'll keep that in mind for café suggestions.",
        "Not {y}, I meant {x}. That's what I drink every morning now.",
        "We buy {x} in bulk now, it's what everyone in the house drinks.",
        "My new thing is {x}. Where can I buy it cheaper online?",
        "Finally found my drink: {x}. I've had it every day this week.",
    ],
    "partner": [
        "I'm seeing someone new, {x}.",
        "{x} and I are officially together.",
        "Can you help me plan a dinner for {x}? We've been together a month tomorrow.",
        "me and {x} made it official last night :)",
        "Since last month I've been dating {x}, so we're two for the holiday booking.",
        "A: That's lovely news about you and {x}! Would you like some gift ideas?",
        "Quick fix: my partner's name is {x}, not {y}. I was typing too fast.",
        "After the breakup I didn't expect to meet anyone so soon, but {x} and I are together now.",
        "My partner {x} is moving in with me, so please plan groceries for two.",
        "Going out with {x} now. It's still early but it feels good.",
        "My other half is {x} now, we met at a friend's birthday.",
    ],
    "car": [
        "Bought a {x} last week.",
        "I drive a {x} now.",
        "Traded in the old car for a {x}.",
        "What tyre pressure should I use on a {x}? Just picked it up from the dealer.",
        "finally got a car of my own, a used {x}, pretty happy with it",
        "We've replaced the family car, it's a {x} now.",
        "A: Nice, congrats on the {x}! Shall I remind you about its first service?",
        "Sorry, typo: it's a {x} I bought, not a {y}.",
        "From this week on I'm driving a {x}, so the insurance quotes should be for that.",
        "Leasing a {x} from this month, the old one went back to the dealer.",
        "Can you compare winter tyres for my {x}? I've only had it a few days.",
    ],
}
ASK_NOW_HELD5: dict[str, list[str]] = {
    "home": [
        "Which city am I living in at the moment?",
        "Remind me, where do I live now?",
        "where's home for me these days",
    ],
    "employer": [
        "Who am I working for right now?",
        "What's my current employer?",
        "which company do I work at now",
    ],
    "drink": [
        "What's my usual drink these days?",
        "What do I drink most mornings now?",
        "whats my go-to drink at the moment",
    ],
    "partner": [
        "Who's my partner at the moment?",
        "Who am I with these days?",
        "Remind me who I'm dating now?",
    ],
    "car": [
        "What car do I have right now?",
        "What am I driving these days?",
        "which car is mine at the moment",
    ],
}
ASK_THEN_HELD5: dict[str, list[str]] = {
    "home": [
        "Which city did I live in {t}?",
        "Where was home for me {t}?",
        "Remind me, where was I living {t}?",
    ],
    "employer": [
        "Who was I working for {t}?",
        "Which company employed me {t}?",
        "where did i work {t}",
    ],
    "drink": [
        "What was my go-to drink {t}?",
        "What did I usually drink {t}?",
        "Which drink was I into {t}?",
    ],
    "partner": [
        "Who was I dating {t}?",
        "Who was my partner {t}?",
        "who was i with {t}",
    ],
    "car": [
        "What car was I driving {t}?",
        "Which car did I own {t}?",
        "what did i drive {t}",
    ],
}
CHATTER_HELD5 = [
    "My brother just moved to {city} for work.",
    "Flying to {city} next Thursday for a conference, any tips?",
    "Thinking about moving to {city} some day. Is it expensive to live there?",
    "What's the best time of year to visit {city}?",
    "My sister got a job at {org}, she's thrilled.",
    "Saw in the news that {org} is laying people off.",
    "Had a call with a recruiter from {org} but I'm not sure I'd want to work there.",
    "Tried {drink} at a café yesterday, not for me.",
    "My mum swears by {drink}, I don't get it.",
    "If I won the lottery I'd get a {car}, just for fun.",
    "Rented a {car} for the weekend trip, it was fine.",
    "My neighbour just bought a {car} and won't stop talking about it.",
    "{partner} from work is getting married in May.",
    "Had lunch with my old friend {partner} today.",
    "My cousin {partner} lives in {city} and works at {org}.",
    "What's the weather going to be like in {city} this weekend?",
    "Does {org} have offices outside Europe?",
    "Is {drink} high in caffeine?",
    "Can you recommend a podcast about history?",
    "Remind me to call the dentist on Friday.",
    "How long should I boil an egg for a runny yolk?",
    "the train to {city} was delayed two hours, ugh",
    "My dad is thinking of trading his car in for a {car}.",
    "what's a good birthday gift for a 10 year old",
    "Watched a documentary about {org} last night, wild story.",
    "Would a {car} fit three car seats in the back? Asking for my friend {partner}.",
    "Help me write a polite email declining a wedding invite.",
    "Stayed with {partner} in {city} over the long weekend.",
    "A colleague of mine left for {org} last week.",
    "Ordered {drink} by mistake today, it was actually nice.",
    "Need a vegetarian recipe for six people, nothing too spicy.",
    "My back hurts from sitting all day, any stretches?",
    "Should I learn Spanish or Portuguese first?",
]
# An eighth family (`--wordings held6`), written blind on 2026-11-25 by a helper session (brief
# r3s10/held6) without reading the extractor, the context code or the other families' texts:
# messages of several sentences mixing topics, non-native English, comparisons naming two values
# of a kind ({y}: one this user never has), the value as a bare reply, the old value and the new
# told together, voice-dictated run-on lines, emoji, the assistant's own turn ("A: "),
# corrections, and still about a third plain statements.
SAY_HELD6: dict[str, list[str]] = {
    "home": [
        "Just moved to {x}.",
        "We live in {x} now.",
        "Our new flat is in {x}, we moved in on the weekend.",
        "I am living now in {x} since two weeks, the flat is small but the light is beautiful. "
        "Can you help me write an email to the landlord about the heating?",
        "{y} was cheaper but we chose {x} in the end, the schools are better. Movers came on "
        "Tuesday and nothing broke 🙏",
        "{x}. Moved there last week.",
        "no more {y} for me, it's {x} now 🏠",
        "ok so boxes everywhere lol we finally got the keys to the place in {x} yesterday can "
        "you give me a checklist for changing my address",
        "A: Congratulations on settling into {x}! Here are a few things to sort out in your "
        "first weeks in a new city.",
        "Sorry, I wrote {y} before, I meant {x}. That's where I live now. Can you redo the "
        "weather tips?",
        "Gave back the keys of the old apartment today. New lease in {x} started on the 1st 📦 "
        "Also, how do I get rid of the smell of paint?",
        "Long day. Unpacked the kitchen, fought with the internet company, and realised I "
        "don't know a single person in {x} yet 😅 Any ideas for meeting people?",
    ],
    "employer": [
        "I started a new job at {x}.",
        "I work at {x} now.",
        "First day at {x} today, so nervous!",
        "I am working now for {x} since three weeks, is a good company but the commute is "
        "long. How I can ask for remote days in a polite way?",
        "{y} offered more money but I went with {x}, the team felt right. Signed the contract "
        "this morning ✍️",
        "{x}. Signed on Friday.",
        "no more {y}, it's {x} now 🎉 can you help me update my LinkedIn headline?",
        "handed in my notice last month and today was my first day at {x} can you remind me "
        "what i should ask HR about the pension",
        "A: Good luck in your new role at {x}! Here's a simple plan for your first 30 days.",
        "wait correction, it's {x} not {y}, I mixed them up. {y} was the other offer, the one "
        "I turned down.",
        "We're celebrating tonight, I got the job at {x}!! 🥂 What's a nice cocktail I can "
        "make with gin and lemons?",
        "Left my old job. Onboarding at {x} all this week, so many passwords. Also what's a "
        "good lunch that travels well?",
    ],
    "drink": [
        "I drink {x} every morning now.",
        "Switched to {x}, my stomach is much happier.",
        "These days it's {x} for me.",
        "I am drinking now {x} every day since one month, my doctor told me less sugar. Is ok "
        "to drink it in the evening also?",
        "{y} was fine but {x} is what I actually drink now, I even buy it in bulk.",
        "{x} 😊 every morning since last week",
        "no more {y}, it's {x} now ☕",
        "gave up my old morning drink and now its {x} all day long my partner thinks im "
        "obsessed what are the health effects",
        "A: Since you've switched to {x}, here are some ways to make it at home for less.",
        "Correction: I don't drink {y}, I drink {x}. Please remember that for the shopping list.",
        "Long week. Work was crazy, the kids were sick, and I've basically been living on {x} "
        "since Monday. Can you suggest an easy dinner?",
        "We only buy {x} at home now, cancelled the old subscription.",
    ],
    "partner": [
        "I'm seeing someone new, {x}.",
        "{x} and I are together now.",
        "My partner {x} and I just made it official 💕",
        "I am together with {x} now since six weeks, we met in the language course. What we "
        "can cook together for a date night at home?",
        "{y} was sweet but it's {x} I fell for, we made it official this weekend.",
        "{x}. We've been together a few weeks now ❤️",
        "no more {y} drama, I'm with {x} now and it's so calm 😌",
        "so i finally asked {x} to be my partner and they said yes can you help me plan "
        "something nice for saturday",
        "A: That's lovely news about you and {x}! Here are some ideas for a first weekend "
        "away together.",
        "sorry typo, my partner is {x} not {y} 🙈",
        "After the breakup I didn't think I'd date again for a while, but {x} and I have "
        "been together a month now. Anyway, how do I fix a dripping tap?",
        "We're a couple now, me and {x} 🥰 my mum already wants to meet them",
    ],
    "car": [
        "I bought a {x}.",
        "My new car is a {x}.",
        "Just picked up my {x} from the dealer.",
        "I have now a {x} since two weeks, second hand but very clean. How often I must "
        "change the oil?",
        "The {y} was cheaper but we chose the {x} because the dog crate fits in the back.",
        "{x}, bought it used this week.",
        "no more {y}, it's a {x} now 🚗",
        "sold the old car on saturday and drove the {x} home today its so quiet can you "
        "explain how the lane assist works",
        "A: Nice, a {x}! Here's a maintenance schedule for your first year with it.",
        "I wrote {y} before but that was wrong, it's a {x} that I drive.",
        "We traded in our old car for a {x}, the kids love the back seat. Also, what's a good "
        "road trip under three hours?",
        "finally got the keys to my {x} 🔑 insurance was a nightmare tho",
    ],
}
ASK_NOW_HELD6: dict[str, list[str]] = {
    "home": [
        "Where am I living at the moment?",
        "what city am I in these days",
        "Remind me, where is home for me right now?",
    ],
    "employer": [
        "Who do I work for now?",
        "where am I working these days?",
        "What's my current employer?",
    ],
    "drink": [
        "What do I usually drink these days?",
        "whats my go-to drink right now",
        "Which drink do I have every day at the moment?",
    ],
    "partner": [
        "Who am I with at the moment?",
        "who's my partner now?",
        "Who am I dating these days?",
    ],
    "car": [
        "What car do I drive now?",
        "which car do I have at the moment",
        "Remind me what I'm driving these days?",
    ],
}
ASK_THEN_HELD6: dict[str, list[str]] = {
    "home": [
        "Where did I live {t}?",
        "which city was I based in {t}?",
        "Remind me what city I was living in {t}.",
    ],
    "employer": [
        "Which company was I working at {t}?",
        "who was my employer {t}?",
        "where did I work {t}",
    ],
    "drink": [
        "What was I drinking every day {t}?",
        "what was my usual drink {t}?",
        "Which drink did I have most mornings {t}?",
    ],
    "partner": [
        "Who was I dating {t}?",
        "who was my partner {t}?",
        "Who was I together with {t}?",
    ],
    "car": [
        "What was I driving {t}?",
        "which car did I have {t}?",
        "What car did I own {t}?",
    ],
}
CHATTER_HELD6 = [
    "My sister just got a job at {org}, she starts in two weeks. Can you help her with a "
    "thank-you note?",
    "My brother lives in {city} and keeps asking me to visit.",
    "Flying to {city} on Thursday for a conference, what should I pack?",
    "thinking about moving to {city} some day when the kids are older",
    "Is {city} expensive to live in? Asking for a friend 😄",
    "Had {drink} at a cafe today for the first time, not sure I liked it.",
    "My colleague swears by {drink}, I tried a sip and nope 😂",
    "What does {org} actually do? Saw an ad for them on the train.",
    "Read in the news that {org} is laying people off, scary.",
    "If I won the lottery I would buy a {car} and drive around Europe.",
    "My dad just bought a {car}, he won't stop talking about it.",
    "Rented a {car} for the weekend trip, it was ok but the boot is tiny.",
    "My friend {partner} is getting married in {city} next spring, what should I wear?",
    "My cousin and her husband moved to {city} last year, they love it.",
    "Had an interview at {org} but didn't get it, oh well. On to the next one.",
    "weekend in {city} was amazing the food omg 😍 we have to go back",
    "Can you translate 'where is the train station' into Portuguese?",
    "my neighbour {partner} keeps parking the {car} in front of my gate 😤 how do I say "
    "something without a fight",
    "my friend {partner} works at {org} and says they're hiring, should I apply? I don't know",
    "Do you know if {org} has an office in {city}?",
    "If I ever get a big dog I'd need a bigger car, something like a {car} maybe.",
    "What is the best way to descale a kettle?",
    "I can't sleep again. Any tips that aren't 'put the phone away'?",
    "Help me write a birthday message for my mum, she is turning 70.",
    "The weather has been awful all week 🌧️",
    "A: Here are three day trips from {city} you might enjoy, if you ever go.",
    "Bought a bag of {drink} as a gift for my boss, is that weird?",
    "tried {drink} at my aunts place she drinks it all day long i dont get it",
    "In my country we don't have {drink}, what is it made of exactly?",
    "Is it safe to walk alone at night in {city}? Going there for two days in May.",
    "my boss was in a bad mood all day and then the printer broke lol what a monday",
    "{partner} from the book club lent me a novel, can you tell me what it's about without "
    "spoilers? It's called The Remains of the Day.",
    "Which is better for a family of five, a {car} or a minivan? Just curious.",
]
# A ninth family (`--wordings held7`), written blind on 2026-11-25 by a helper session (brief
# r3s10/held7) without reading the extractor, the context code or the other families' texts:
# chat-assistant sessions in the style of LongMemEval, where the user asks for help with a task
# (a budget, a cover letter, a trip, a workout, code) and the fact comes out incidentally or as
# a reply; relative times ("a couple of weeks ago", "as of this month"); the assistant's
# third-person notes and profile summaries ("A: "); the old value named with the new ({y}: one
# this user never has); hedged but true statements; corrections; about a third plain statements.
SAY_HELD7: dict[str, list[str]] = {
    "home": [
        "Just moved to {x}.",
        "I live in {x} now.",
        "We moved to {x} last weekend, there are boxes everywhere.",
        "Can you help me set a grocery budget? Prices in {x} are higher than I'm used to, we "
        "only moved here a couple of weeks ago.",
        "oh we're in {x} now, moved in at the start of the month",
        "A: Noted: the user now lives in {x}.",
        "Left {y} after six years and settled in {x}. Are there any good running clubs there?",
        "I guess {x} is home now. Still getting used to the trams though.",
        "Sorry, I gave you the wrong city earlier: it's {x} I moved to, not {y}.",
        "Need a cover letter for a local role. Please mention that as of this month I'm based "
        "in {x}, so no relocation needed.",
        "A: Your profile: lives in {x} (recently relocated). Shall I plan the trip from there?",
        "we signed the lease in {x} yesterday, finally out of my parents' place",
    ],
    "employer": [
        "I started a new job at {x}.",
        "I work at {x} now.",
        "Got the offer from {x} and accepted it! Started today.",
        "Can you tidy up my LinkedIn headline? I joined {x} as a product analyst a couple of "
        "weeks ago.",
        "left {y} after five years, starting at {x} next week",
        "A: Noted: the user now works at {x}.",
        "Help me write an out-of-office reply. As of this month I'm with {x}, so sign it from "
        "there.",
        "first week at {x} done, im exhausted lol",
        "Correction: the new job is at {x}, not {y}, I mixed up the two offers in my last message.",
        "I guess I'm officially a {x} employee now, badge and lanyard and all.",
        "A: Your profile: works at {x} since this month. Want me to redo the commute plan?",
        "Can you write a python script to parse my payslips? The PDF layout changed when I "
        "moved over to {x}.",
    ],
    "drink": [
        "I drink {x} these days.",
        "I've switched to {x}.",
        "My go-to drink is {x} now.",
        "Trying to cut down on sugar, so as of this month it's {x} for me in the mornings.",
        "Make me a shopping list for the week: the usual stuff plus {x}, that's all I drink at "
        "the moment.",
        "A: Noted: the user's usual drink is now {x}.",
        "swapped {y} for {x} a couple of weeks ago and honestly i sleep better",
        "I guess I'm a {x} person now, who knew.",
        "Small correction to what I said before: my morning drink is {x}, not {y}.",
        "We've both got hooked on {x} lately and buy it by the crate. Which shop is cheapest "
        "online?",
        "A: Your profile: drinks {x} daily, unsweetened. I'll leave coffee out of the plan.",
    ],
    "partner": [
        "I'm seeing someone, {x}.",
        "My partner is {x}.",
        "{x} and I got together a couple of weeks ago.",
        "Can you suggest a gift for a one-month anniversary? {x} and I have been together since "
        "the start of last month.",
        "A: Noted: the user's partner is now {x}.",
        "Broke up with {y} a while ago, and now there's {x}. Is it too soon to introduce them to "
        "my parents?",
        "moving in with {x} soon!! any tips for sharing a flat for the first time?",
        "I guess {x} and I are officially a thing now, we said it out loud on Saturday.",
        "Correction: my partner's name is {x}, not {y}, autocorrect got me.",
        "Write a short poem for {x}, please. We started dating recently and I want to surprise "
        "them.",
        "A: Your profile: in a relationship with {x}. I'll plan the weekend away for two.",
        "we're a couple now, me and {x}, so the holiday budget is for two people",
    ],
    "car": [
        "I bought a {x}.",
        "I drive a {x} now.",
        "Just picked up my new {x} from the dealer.",
        "What's the recommended tyre pressure for a {x}? I've only had mine since last week.",
        "A: Noted: the user now drives a {x}.",
        "traded in the {y} for a {x} a couple of weeks ago, way better on fuel",
        "I guess the {x} is my daily driver now, the bike is for weekends.",
        "Sorry, correction: the car I bought is a {x}, not a {y}. Can you redo the insurance "
        "comparison?",
        "We finally replaced the old car, it's a {x} as of this month. Can you make me a "
        "maintenance schedule?",
        "A: Your profile: drives a {x} (bought recently). Shall I add its service dates to your "
        "calendar?",
        "Help me update my budget spreadsheet: new line for the car loan on the {x}, 240 a "
        "month, started this month.",
    ],
}
ASK_NOW_HELD7: dict[str, list[str]] = {
    "home": [
        "Where do I live these days?",
        "What should you assume about where I live?",
        "If you had to send me a parcel today, which city would it go to?",
    ],
    "employer": [
        "Who's my employer at the moment?",
        "Remind me which company I work for now.",
        "If a recruiter asked you where I currently work, what would you say?",
    ],
    "drink": [
        "What do I usually drink now?",
        "If you were getting me a drink right now, what would you order?",
        "What's my go-to drink these days?",
    ],
    "partner": [
        "Who am I with at the moment?",
        "What's my partner's name these days?",
        "Who would I be bringing as my plus-one right now?",
    ],
    "car": [
        "What car do I have now?",
        "Which car should you assume I drive today?",
        "If I asked you for my tyre size today, which car would you look it up for?",
    ],
}
ASK_THEN_HELD7: dict[str, list[str]] = {
    "home": [
        "Where was I living {t}?",
        "Which city was home for me {t}?",
        "If you'd sent me a parcel {t}, which city would it have gone to?",
    ],
    "employer": [
        "Which company was I at {t}?",
        "Who was paying my salary {t}?",
        "Where did I work {t}?",
    ],
    "drink": [
        "What was I drinking {t}?",
        "What was my usual drink {t}?",
        "If you'd made me a drink {t}, what would it have been?",
    ],
    "partner": [
        "Who was I dating {t}?",
        "Who was my partner {t}?",
        "Who was I with {t}?",
    ],
    "car": [
        "What did I drive {t}?",
        "Which car did I have {t}?",
        "What was parked outside my place {t}?",
    ],
}
CHATTER_HELD7 = [
    "My sister just got a job at {org}, so proud of her.",
    "Can you plan a three-day trip to {city}? Museums and food, mostly.",
    "Thinking about moving to {city} some day, what's the cost of living like?",
    "My dad finally sold his old car and bought a {car}.",
    "Tried {drink} at a cafe today, not for me.",
    "What's {org} like as an employer? A friend has an interview there.",
    "My friend {partner} is visiting next weekend, any ideas for a rainy Saturday?",
    "Give me a 30-minute bodyweight workout I can do in a hotel room.",
    "We're changing planes in {city} on the way back, is a six-hour layover enough to see the "
    "old town?",
    "My colleague swears by {drink}, says it fixed her afternoon slump.",
    "If I won the lottery I'd buy a {car} and drive around Scotland for a month.",
    "Did you see the news about {org} laying people off?",
    "Can you help me debug this? My list comprehension returns None for every item.",
    "Recipe for a vegetarian lasagne that serves six, please.",
    "My brother lives in {city}, I'm staying with him over Easter.",
    "{partner} from book club asked if I could host next month, what snacks are easy?",
    "A: Here's a draft itinerary for {city}: day one, the old town and the market; day two, a "
    "day trip to the coast.",
    "my cousin drives a {car} and its always in the garage lol",
    "What's the weather usually like in {city} in October?",
    "Write a thank-you note to my landlord for fixing the boiler so quickly.",
    "Is {drink} actually healthier than coffee or is that just marketing?",
    "Had a call with some people from {org} today, they might become a client.",
    "How do I split a restaurant bill fairly when some people didn't drink?",
    "Test-drove a {car} just for fun, lovely but way over budget.",
    "My best friend is marrying {partner} in June and I'm giving a speech. Can you help?",
    "What's the capital gains tax allowance this year?",
    "We might spend Christmas in {city} with the in-laws.",
    "A: You could also ask {partner} for a recommendation, since they used to work at {org}.",
    "Can you explain how compound interest works like I'm five?",
    "Would it be crazy to quit everything and open a bar in {city}?",
    "My mum has switched to {drink} and keeps sending me articles about it.",
    "Watched a documentary about {org} last night, wild how fast they grew.",
    "Suggest a name for a grey kitten.",
]
# A tenth family (`--wordings held8`), written blind on 2026-11-25 by a helper session (brief
# r3s10/held8) without reading the extractor, the context code or the other families' texts:
# terse phone-typed notes and journal lines. {xl}: the value in lower case, as typed on a phone;
# {d}: the message's own date (YYYY-MM-DD) at the front of a journal line; {y}: a value of the
# kind this user never has (an arrow's old side, a correction's first guess). Abbreviations
# (bf, gf, hq, wfh, tmrw), to-do lists, hashtags, one-word replies, the assistant's turn
# ("A: "), longer journal entries naming several things, and still about a third plain
# statements. The chatter uses {cityl}, {orgl}, {carl}, {partnerl} for the lower-case forms.
SAY_HELD8: dict[str, list[str]] = {
    "home": [
        "Moved to {x} today.",
        "I live in {x} now.",
        "We're in {x} now, finally.",
        "{d}: keys collected. officially living in {x} 🏠",
        "todo: change address to {x}, cancel old gym, redirect post, new doctor",
        "moving day done. {xl} it is. so tired i could cry",
        "{y} -> {x}. new flat, same chaos",
        "first night in the new place, no curtains yet #movingday #{xl}",
        "can u find me a dentist near my new flat in {x}? just moved, dont know anyone here",
        "A: Noted, you're living in {x} now. I'll use that for anything local from here on.",
        "journal {d}. last boxes out of the van, rest of our stuff is in {xl} now. neighbours "
        "seem nice, bins go out thurs, internet comes tmrw. ate pizza on the floor.",
        "sorry, meant {x} not {y}. thats where we moved, autocorrect hates me",
    ],
    "employer": [
        "Started at {x} today.",
        "I work at {x} now.",
        "New job at {x}.",
        "{d}: first day @ {x}. laptop didn't work till 3pm lol",
        "left the old place, starting at {xl} monday. nervous tbh",
        "{y} -> {x}. signed the offer tonight",
        "todo: send bank details to HR at {x}, return old badge, update linkedin",
        "help me write a short hi msg for my new team at {x}? i'm the new data person, want "
        "to sound friendly not cringe",
        "A: Congrats on the new role at {x}! Want help planning your first 90 days?",
        "wfh till my hq badge comes thru. {xl} onboarding is all video calls so far",
        "journal {d}. week 1 at {xl} done. manager ok, coffee machine bad, commute 40 min. "
        "gf says i look less stressed already",
        "no i said {x}, not {y}. {x} is who hired me",
    ],
    "drink": [
        "Switched to {x}.",
        "Mostly drinking {x} these days.",
        "{x} is my go-to now.",
        "{d}: day 1 of {xl} instead of my usual. trying to be good",
        "{y} -> {x}. stomach says thanks",
        "shopping list: oat milk, eggs, more {x} (new daily thing), bin bags",
        "can u suggest a cheap way to make {x} at home? i have it every day now and cafe "
        "prices are killing me",
        "A: Got it, {x} is your daily drink now. I'll keep that in mind.",
        "we've both gone over to {xl} in the mornings. kettle on at 7, no discussion",
        "morning ritual sorted: {x} every day now #habits #slowmornings",
        "correction: it's {x} i drink now, not {y}, u had that wrong",
        "re ur q about my morning drink: {x}. that's it",
    ],
    "partner": [
        "I'm seeing {x} now.",
        "My partner is {x}.",
        "{x} and I are a couple now.",
        "Together with {x} now.",
        "{d}: official w/ {xl} ❤️",
        "moved on from the ex. me and {x} now, going really well",
        "need gift ideas for {x}, we just got together, nothing too intense, budget ~50",
        "A: That's lovely news about you and {x}. How did you two meet?",
        "journal: long day. {xl} came over, cooked, stayed. think this is a real thing now. "
        "told mum about us. work tmrw ugh",
        "date night w/ {x} 🥰 #us #finally",
        "sorry typo earlier: my bf/gf is {x}, not {y}",
        "who's my +1 for the wedding? easy. {xl}. we're together now",
    ],
    "car": [
        "Bought a {x}.",
        "I drive a {x} now.",
        "New car: {x}.",
        "{d}: picked up the {x} from the dealer. smells new",
        "{y} -> {x}. the old one's gone",
        "sold the old car, got a used {xl}. 60k km, decent",
        "todo: insure the {x}, get parking permit, cancel old policy",
        "what tyre pressure should a {x} run at? just got one and the light keeps coming on",
        "A: Nice, congrats on the {x}! Want a reminder for its first service?",
        "we finally replaced the car, {xl} now, kids love the boot",
        "no, correction, i went with the {x} in the end, not the {y}",
        "#newcar 🚗 {xl}. first drive to the coast sat",
    ],
}
ASK_NOW_HELD8: dict[str, list[str]] = {
    "home": ["where do i live now?", "remind me my current city?",
             "What city am I based in these days?"],
    "employer": ["who do i work for atm?", "Which company am I at now?",
                 "where's my job these days"],
    "drink": ["what's my usual drink now?", "what do i drink these days", "my go-to drink atm?"],
    "partner": ["who's my partner right now?", "who am i with these days?",
                "remind me my bf/gf's name"],
    "car": ["what car do i have now?", "which car am i driving atm?", "my car these days?"],
}  # fmt: skip
ASK_THEN_HELD8: dict[str, list[str]] = {
    "home": ["where did i live {t}?", "Which city was I living in {t}?",
             "{t}, where was home?"],
    "employer": ["who was i working for {t}?", "Which company did I work at {t}?",
                 "where was my job {t}"],
    "drink": ["what was i drinking {t}?", "what was my usual drink {t}?"],
    "partner": ["who was i with {t}?", "Who was my partner {t}?", "who was i dating {t}"],
    "car": ["what did i drive {t}?", "which car did i have {t}?"],
}  # fmt: skip
CHATTER_HELD8 = [
    "sis just moved to {city}, helping her sat",
    "my mate {partner} got a job at {org}, so jealous",
    "weekend in {cityl}. rained the whole time lol",
    "tried {drink} at the new cafe, not for me",
    "thinking about moving to {cityl} some day. is it cheap?",
    "is {org} a good company to work for? friend has an interview",
    "dad bought a {car}, won't shut up about it",
    "rented a {carl} for the trip, fine but loud",
    "todo: dentist, taxes, call nan",
    "what's the weather like in {city} in october?",
    "news says {orgl} is laying people off. scary",
    "gym 6am. dead.",
    "recipe for 4, veggie, 30 min max?",
    "coworker swears by {drink}. might try",
    "{partner} from uni is getting married in {city}!! flights booked",
    "if i won the lottery: house in {city}, a {car}, never work again",
    "my cousin drives a {car} and it's always in the shop",
    "#tbt to that week in {cityl} ☀️",
    "lunch w/ {partnerl} and their new bf, he works at {org}",
    "conference at {org} hq tmrw, need to look smart",
    "whats a good podcast for a long drive",
    "bored. tell me a fun fact",
    "flight to {city} delayed 3h. airport {drink} is awful",
    "anyone at {orgl} i could ask about their grad scheme? asking for my nephew",
    "test drove a {car}, meh. not buying",
    "slept 5h. need a nap.",
    "what does a {carl} cost used these days?",
    "{partner}'s dog chewed my shoe lol",
    "book club picks pls, something short",
    "A: Have a great trip to {city}! Want a packing list?",
    "reminder: {partnerl}'s bday fri, get cake",
    "journal: rainy. read, walked, called gran. nothing else happened.",
    "ok",
    "mum's having {drink} with everything lately, new health kick",
]
# An eleventh family (`--wordings held9`), written blind on 2026-11-25 by a helper session
# (brief r3s10/held9) without reading the extractor, the context code or the other families'
# texts: what people tell a general chat assistant over a year and a half. About a third plain
# statements; the rest inside requests (a change-of-address email, insurance quotes), "we" for
# the household, relative dates ("since last week"), the old value only implied ("traded in the
# old car"), lowercase and typos, corrections ({y}: a value of the kind this user never has, the
# slip being corrected), and the assistant's own turn ("A: "): replies that restate the change
# and third-person notes it keeps. The chatter: relatives' and colleagues' moves, jobs, cars and
# drinks, trips, wishes, hypotheticals, news, a friend who shares a partner's name, plain chores.
SAY_HELD9: dict[str, list[str]] = {
    "home": [
        "I live in {x} now.",
        "Home is {x} these days.",
        "We've finally got the keys to our new flat in {x}!",
        "Can you find me a dentist near where I live? That's {x} now, new address since last week.",
        "moved to {x} over the weekend, boxes everywhere lol",
        "A: Noted - the user has relocated to {x}.",
        "A: Now that you've settled in {x}, a few things to sort out: registering with a local "
        "doctor, a library card and the bin collection days.",
        "Sorry, I got that wrong before: the move was to {x}, not {y}.",
        "Our lease on the old place ran out, so we're renting in {x} from this month.",
        "Been living in {x} for about two weeks and I still get lost going to the shops.",
        "Help me write an email to my bank to update my address. My new home is in {x}.",
        "finaly unpacked the last box here in {x}. it feels like home now",
    ],
    "employer": [
        "I work at {x} now.",
        "Got the job at {x}! First day was today.",
        "Left my old job last week, started at {x} this morning.",
        "Can you help me rewrite my LinkedIn headline? I've joined {x} as a senior analyst.",
        "A: Noted - the user now works for {x}.",
        "A: Congratulations on the new role at {x}! Would you like a plan for your first 90 days?",
        "my new employer is {x}, hr wants my bank details by friday",
        "Quick correction: the company I joined is {x}, not {y}. I had two offers and mixed "
        "them up.",
        "I've been at {x} for a couple of weeks now and onboarding is finally over.",
        "How do I introduce myself to my new team at {x}? I just started there.",
        "just startd at {x}, the coffee machine is terrible but the people are nice",
        "We're both adjusting to my new hours since I moved over to {x}.",
    ],
    "drink": [
        "I drink {x} these days.",
        "Switched my morning coffee for {x}.",
        "It's been {x} every morning for me since the start of the month.",
        "ok new habit: {x} first thing, every day",
        "A: Noted - the user's usual drink is now {x}.",
        "A: Since you're having {x} most days now, I've added it to your weekly shopping list.",
        "Sorry, I said {y} earlier but I meant {x}. That's what I drink now.",
        "Can you suggest snacks that go with {x}? It's what I have every afternoon now.",
        "we've started buying {x} in bulk, both of us are hooked",
        "My doctor told me to cut down on caffeine, so I've moved on to {x}.",
        "my drink of choice lately: {x}",
        "Ordered {x} again this morning, I think that's my thing now.",
    ],
    "partner": [
        "I'm seeing someone new, {x}.",
        "{x} and I are officially together!",
        "My partner is {x}.",
        "Can you suggest somewhere nice for dinner? It's been a month since {x} and I got "
        "together.",
        "A: Noted - the user is in a relationship with {x}.",
        "A: That's lovely news about you and {x}. Would you like me to remember their "
        "birthday once you know it?",
        "broke up with my ex a while back, been with {x} since last week",
        "{x} moved in with me at the weekend, so it's officially the two of us here.",
        "Correction to what I told you: my partner's name is {x}, not {y}.",
        "Help me plan a weekend away for me and {x}, we've just started dating.",
        "been going out with {x} for a couple of weeks, early days but it's going really well",
        "I'm with {x} now, we met at a friend's birthday party.",
    ],
    "car": [
        "I bought a {x}.",
        "Just picked up my new car, a {x}.",
        "Traded in the old car for a {x}.",
        "What's the recommended tyre pressure for a {x}? Just got one.",
        "A: Noted - the user now drives a {x}.",
        "A: Since you've got the {x} now, I've set a reminder for its first service in a year.",
        "we finally replaced the family car, it's a {x} now",
        "Correction: it's a {x}, not a {y}. Autocorrect and my brain both failed.",
        "been driving my {x} for two weeks and I love it",
        "Need insurance quotes for my {x}, I bought it on Saturday.",
        "sold the old one, there's a {x} parked outside now",
        "My car is a {x} now.",
    ],
}
ASK_NOW_HELD9: dict[str, list[str]] = {
    "home": ["Where do I live?", "Which city am I based in at the moment?",
             "What's my current city?"],
    "employer": ["Who do I work for?", "Where am I working these days?",
                 "Which company am I at currently?"],
    "drink": ["What do I usually drink?", "What's my drink lately?",
              "If you were ordering for me at a café, what would you get?"],
    "partner": ["Who's my partner?", "Who am I dating at the moment?",
                "What's my partner's name?"],
    "car": ["What do I drive?", "What car do I have at the moment?", "Which car is mine?"],
}  # fmt: skip
ASK_THEN_HELD9: dict[str, list[str]] = {
    "home": ["Where did I live {t}?", "Which city was home for me {t}?",
             "Remind me which city I was living in {t}."],
    "employer": ["Who was I working for {t}?", "Which company employed me {t}?",
                 "Remind me where I had a job {t}."],
    "drink": ["What did I usually drink {t}?", "Which drink was I into {t}?",
              "What was my regular drink {t}?"],
    "partner": ["Who was my partner {t}?", "Who was I dating {t}?",
                "Who was I in a relationship with {t}?"],
    "car": ["What car did I have {t}?", "What did I drive {t}?", "Which car did I own {t}?"],
}  # fmt: skip
CHATTER_HELD9 = [
    "My sister just moved to {city} for her master's.",
    "Flying to {city} for a conference next Thursday, can you suggest a hotel near the centre?",
    "Thinking about moving to {city} some day, what's the cost of living like?",
    "My brother got a job at {org}, he's thrilled.",
    "Is {org} a good company to work for? A friend has an interview there.",
    "Saw in the news that {org} is laying people off.",
    "Tried {drink} at a café today, not for me.",
    "My colleague drinks {drink} all day, I don't know how.",
    "Dad's buying a {car}, any thoughts on reliability?",
    "Rented a {car} on holiday, it was fine.",
    "If I ever won the lottery I'd get a {car}. Just saying.",
    "My friend {partner} is getting married in {city} in May!",
    "My coworker {partner} is leaving for {org} next month.",
    "What's the weather like in {city} this weekend?",
    "Remind me to call the plumber tomorrow.",
    "Can you give me a recipe for a quick vegetarian dinner?",
    "How do I stop a pipe from freezing?",
    "A: Here's a three-day plan for {city}: the old town first, museums on day two, then a day "
    "trip.",
    "A: Noted - the user's cousin lives in {city}.",
    "My in-laws drive a {car} and won't stop talking about it.",
    "We visited {city} for the long weekend, the food was amazing.",
    "Should I apply to {org}? The role looks interesting but the commute would be long.",
    "My neighbour's {car} alarm went off at 3am again.",
    "ugh, the café was out of {drink} so I just had water",
    "What's the difference between green tea and {drink}?",
    "Watched a documentary about {city} last night.",
    "Can you summarise this article for me? It's about {org}'s new product launch.",
    "feeling tired today, too many meetings",
    "It's my birthday today, any ideas for a small celebration?",
    "My old school friend lives in {city} now, I might visit her in the autumn.",
    "Help me compare a {car} with a hybrid for a 30 km daily commute.",
    "A: If you ever do move to {city}, the rental market there is tight, so start looking early.",
    "my mum keeps sending me articles about {drink} being good for you",
]
# A twelfth family (`--wordings held10`), written blind on 2026-11-25 by a helper session
# (brief r3s10/held10) without reading the extractor, the context code or the other families'
# texts: several voices (formal and wordy, terse, chatty) telling a chat assistant about their
# lives over a year and a half. About a third plain statements; the rest told in passing inside
# a request (a GP, a pairing manual, a slide deck), "we" for the household, relative dates ("as
# of this week"), the old value only implied ("handed in my notice"), lowercase and typos,
# corrections ({y}: a value of the kind this user never has), and the assistant's own turn
# ("A: "): replies that restate the change and third-person notes it keeps. The chatter:
# relatives', friends' and colleagues' homes, jobs, cars and drinks, trips, wishes, news,
# hypotheticals, a drink tried once, and lines naming nothing at all.
SAY_HELD10: dict[str, list[str]] = {
    "home": [
        "Just moved to {x}. Boxes everywhere.",
        "I live in {x} now.",
        "Moved. {x}. Need a decent gym nearby, any ideas?",
        "Can you help me find a GP that's taking new patients? I'm new in {x} and don't know "
        "anyone here yet.",
        "i live in {x} now btw so any weather stuff should be for there",
        "We signed the lease last week and we've been living in {x} since Saturday. The flat is "
        "tiny but the light is amazing.",
        "Could you draft a short change-of-address email to my bank? My new address is in {x}, "
        "flat 3, I moved in on the 1st.",
        "Sorry, I wrote {y} earlier but I meant {x}, that's where we actually ended up moving.",
        "Good morning. I wish to let you know that I have taken up residence in {x}; kindly take "
        "this into account in any future recommendations.",
        "been in {x} about two weeks now and still getting lost on the trams lol",
        "A: Welcome to {x}! Since you've just moved there, a few things worth sorting out in the "
        "first weeks: register locally, find a GP and update your address with your bank.",
        "A: Noted - the user has relocated and now lives in {x}.",
    ],
    "employer": [
        "Started a new job at {x} today.",
        "I work at {x} now.",
        "Handed in my notice at the old place last month, and on Monday I start at {x}.",
        "Can you help me write a short intro for my first team meeting at {x}? Bit nervous.",
        "got the job!!! {x} said yes, starting in two weeks",
        "Correction: the offer I accepted was from {x}, not {y}. Long week.",
        "As of the beginning of this month I am employed by {x}, in their operations team. Could "
        "you summarise what a standard probation period usually involves?",
        "new badge, new laptop, new commute. {x} it is.",
        "We're both still adjusting - I joined {x} a couple of weeks ago and the hours are longer "
        "than I expected, so dinners are later now.",
        "my manager at {x} wants a slide deck by friday, can you outline one? only just started "
        "there so i dont know their style yet",
        "A: Congratulations on joining {x}! Would you like help preparing for your first week?",
        "A: Noted - the user has changed jobs and now works at {x}.",
    ],
    "drink": [
        "I've switched to {x}.",
        "These days it's {x} every morning for me.",
        "Dropped my old morning habit, it's {x} now. Any tips for making it properly at home?",
        "Could you recommend a good flask? I've started taking {x} with me on the commute.",
        "Not {y}, sorry - my go-to has been {x} for a few weeks now.",
        "My doctor told me to cut back on what I was drinking, so I'm on {x} now.",
        "We've gone full {x} in this house, my partner converted me.",
        "honestly hooked on {x} lately, had three today",
        "I would like to note a change in my preferences: I now drink {x} in the mornings rather "
        "than what I used to have.",
        "Bought a whole kit for {x} this weekend, it's my daily thing now.",
        "A: Since you've moved over to {x}, I'll suggest cafés that do it well.",
        "A: Noted - the user's usual drink is now {x}.",
    ],
    "partner": [
        "I'm seeing someone new - {x}.",
        "{x} and I are officially together!",
        "Any ideas for a low-key date night? It's early days with {x} and I don't want to overdo "
        "it.",
        "Things ended with my ex a while back. I've been with {x} for a few weeks now and it's "
        "going really well.",
        "autocorrect strikes again, my partner's name is {x} not {y}",
        "Moving in with {x} next month, can you help me put together a checklist?",
        "I should mention that I am now in a relationship with {x}; we met through a mutual "
        "friend at a dinner party.",
        "me and {x} went official last night haha",
        "Planning a weekend away for me and my partner {x}, somewhere with a spa within three "
        "hours by train?",
        "A: That's lovely news about you and {x}. How did you two meet?",
        "A: Noted - the user is in a new relationship; their partner is {x}.",
    ],
    "car": [
        "Bought a {x} yesterday.",
        "I drive a {x} now.",
        "Traded in the old car for a {x}. What's a sensible service interval?",
        "Picked up the keys to our {x} this morning!!",
        "Correction, it's a {x}, not a {y} - I mixed up the two I test drove.",
        "how do i pair my phone with the {x}? just got it and the manual is useless",
        "Could you estimate my annual running costs? I recently purchased a {x} and drive roughly "
        "12,000 km a year.",
        "finally got rid of the old banger, we're a {x} household now",
        "I'd like to update my details: my vehicle is now a {x}, registered last week.",
        "Insurance renewal is due and the car's been a {x} since the start of the month, does "
        "that change anything?",
        "A: Now that you have the {x}, you may want to check whether your insurance needs "
        "updating.",
        "A: Noted - the user has a new car, a {x}.",
    ],
}
ASK_NOW_HELD10: dict[str, list[str]] = {
    "home": [
        "Where do I live these days?",
        "Which city am I based in at the moment?",
        "remind me what city im in currently",
        "What's my home city?",
    ],
    "employer": [
        "Who do I work for?",
        "Where am I employed at present?",
        "what company am i at right now",
    ],
    "drink": [
        "What do I usually drink these days?",
        "What's my go-to drink at the moment?",
        "If you were getting me my usual drink today, what would it be?",
    ],
    "partner": [
        "Who am I dating?",
        "What's my partner's name?",
        "who's my other half currently",
    ],
    "car": [
        "What car do I drive?",
        "What am I driving these days?",
        "Which car do we have at the moment?",
    ],
}
ASK_THEN_HELD10: dict[str, list[str]] = {
    "home": [
        "Where was I living {t}?",
        "Which city did I call home {t}?",
        "{t} where did i live?",
    ],
    "employer": [
        "Who was I working for {t}?",
        "Which company employed me {t}?",
        "where did i work {t}",
    ],
    "drink": [
        "What was I drinking {t}?",
        "What was my usual drink {t}?",
        "{t}, what did I have every morning?",
    ],
    "partner": [
        "Who was I seeing {t}?",
        "Who was my partner {t}?",
        "who was i with {t}",
    ],
    "car": [
        "What car did I have {t}?",
        "What was I driving {t}?",
        "Which car did we own {t}?",
    ],
}
CHATTER_HELD10 = [
    "My sister just moved to {city} for a job at {org}.",
    "Thinking about moving to {city} some day, what's the cost of living like?",
    "Is {org} a good company to work for? A friend has an interview there.",
    "Tried {drink} at a café today, not for me.",
    "My colleague {partner} drives a {car} and won't stop talking about it.",
    "Off to {city} for a conference next week, any food tips?",
    "What's the weather usually like in {city} in November?",
    "My dad's thinking of getting a {car}. Are they reliable?",
    "Saw in the news that {org} is laying people off, grim.",
    "Can you give me a recipe for banana bread? The one without nuts.",
    "How do I politely decline a wedding invite?",
    "A: Here's a three-day itinerary for {city}: day one, the old town and a food market...",
    "If I ever won the lottery I'd buy a {car} and move to {city}, no question.",
    "{partner} from my book club swears by {drink}.",
    "remind me to call mum on sunday",
    "Our neighbours are moving to {city}, we'll really miss them.",
    "What's a good stretching routine for lower back pain?",
    "My brother got an offer from {org} but he's not sure about relocating.",
    "We rented a {car} on holiday and it was fine, a bit sluggish on the hills.",
    "Had a long weekend in {city} visiting {partner}, an old uni friend.",
    "Is {drink} actually healthier or is that just marketing?",
    "A: Noted - the user's friend {partner} is starting at {org} next month.",
    "can you explain what an ETF is like im five",
    "My cousin lives in {city} and keeps inviting us over.",
    "I interviewed at {org} years ago and didn't get it, no hard feelings.",
    "Should I try {drink}? Everyone at the office is obsessed with it.",
    "Hypothetically, if I took a job at {org}, what would a commute from {city} look like?",
    "The taxi back from the airport was a {car}, surprisingly comfy.",
    "Just watched a documentary about the history of {city}, fascinating stuff.",
    "Need a birthday gift idea for my boss, {partner}. Nothing too personal.",
    "ugh, Monday again",
    "Can you proofread this for me? 'We are pleased to announce our new opening hours.'",
    "A: If you do visit {city}, the train from the airport is the easiest option.",
    "My friend {partner} just bought a flat in {city}, very jealous.",
    "Ordered {drink} by mistake at lunch, it wasn't bad actually.",
]
# A thirteenth family (`--wordings held11`), written blind on 2026-11-25 by a helper session
# (brief r3s11/held11) without reading the extractor, the context code or the other families'
# texts: a user whose assistant runs errands for them, so the changes mostly surface inside
# tasks and their records (forms, address updates, bookings, reminders, expense notes, messages
# to draft, the assistant's "A: " confirmations and notes), with about a third plain statements
# and a correction now and then ({y}: a value of the kind this user never has). The chatter:
# errands about relatives', friends' and colleagues' homes, jobs, cars and drinks, trips and
# bookings in other cities, questions about a city or company, news, a drink tried once,
# hypotheticals, and chores that name nothing at all.
SAY_HELD11: dict[str, list[str]] = {
    "home": [
        "Can you change my delivery address on the grocery app? I'm in {x} now, the new flat.",
        "Fill in the bank's change-of-address form for me: new place of residence {x}, moved "
        "in on Saturday.",
        "A: Done. Your address with the GP surgery, the electricity supplier and the council "
        "now reads {x}.",
        "Remind me on Monday to register with a dentist here in {x}, I still haven't since the "
        "move.",
        "Fix the parcel redirect please: I put {y} by mistake, my new home address is in {x}.",
        "A: Note for later: the user has relocated to {x}. I switched the default location for "
        "weather and commute searches.",
        "Book a locksmith for Thursday morning, the flat in {x} only came with one key.",
        "Expense note for the relocation: removal van, and two nights in a hotel while the keys "
        "to my {x} place came through.",
        "We finally moved! Living in {x} now, boxes everywhere.",
        "I live in {x} these days, in case I haven't said.",
        "Got the keys to the flat in {x} today and slept there for the first time.",
        "Just moved to {x}. Still learning which bus goes where.",
    ],
    "employer": [
        "Fill in the new-starter form for me: employer {x}, start date today, job title senior "
        "analyst.",
        "Update my LinkedIn headline, I'm at {x} now as of this week.",
        "Expense report for my first trip with {x}: train tickets, one hotel night, dinner with "
        "the client.",
        "Draft an out-of-office for my old work email saying I've left and can be reached at "
        "{x} from now on.",
        "A: I've added your {x} work calendar and moved your Monday gym slot so it doesn't clash "
        "with their stand-up.",
        "Set a reminder to bring my passport and bank details for HR tomorrow, it's my first day "
        "at {x}.",
        "On the mortgage application the employer should say {x}, not {y}. That was the offer I "
        "turned down.",
        "A: Noted that you now work at {x}; I changed the work address on your commute alerts.",
        "Can you order business cards with the {x} logo? They said I can expense them.",
        "I started at {x} this week. Nice people so far.",
        "Work news: I've joined {x}. First week done.",
        "I'm with {x} now. The commute is longer but the job is better.",
    ],
    "drink": [
        "Put {x} on the shopping list, that's what I drink now instead of the old stuff.",
        "When you book the café for Saturday, note that I'll have {x}. It's all I drink these "
        "days.",
        "Log this in my spending tracker: £4.20 for {x} again. It's my daily drink now, so make "
        "it a recurring category.",
        "A: I've set your usual order in the café app to {x}, since you said that's your drink "
        "now.",
        "Remind me at 3pm to go for {x}, that's my afternoon thing now.",
        "On the catering form for the offsite, change my drink from {y} to {x}, I ticked the "
        "wrong box.",
        "Reply to Sam about the team order: put me down for {x}, it's what I drink now.",
        "A: Added to your profile notes: favourite drink is now {x}.",
        "I've gone over to {x}. Can't remember the last time I had anything else.",
        "These days my drink is {x}, morning and afternoon.",
        "Swapped my usual for {x} and I'm not going back.",
        "My go-to drink now is {x}.",
    ],
    "partner": [
        "Add {x} as my emergency contact on the gym form, we're together now.",
        "Book a table for two on Friday for me and {x}, our first proper date night as a couple.",
        "Draft a message to Mum telling her I'm seeing someone, {x}. Keep it short, she'll ask "
        "a million questions anyway.",
        "A: I've shared your weekend calendar with {x}, your partner, as you asked.",
        "Change the plus-one on the wedding RSVP to {x}, that's who I'm with now.",
        "On the travel insurance the second traveller is {x}, my partner, not {y}. {y} is my "
        "cousin.",
        "Put {x} on the car insurance as a named driver, we're a couple now and share the car.",
        "Remind me two weeks before {x}'s birthday. First one since we got together, I want to "
        "get it right.",
        "I'm with {x} now. Early days, but it feels right.",
        "{x} and I are officially a couple.",
        "{x} asked me out and I said yes, so that's where things are.",
        "I've got a partner now, {x}. We met through friends.",
    ],
    "car": [
        "Update the parking permit application: the vehicle is now a {x}, reg to follow.",
        "Book the {x} I just bought in for a check-up at a garage near work.",
        "Get me an insurance quote for the new car, a {x}, bought yesterday, second-hand.",
        "A: I've updated the car on your toll account and the parking app to your new {x}.",
        "Expense note: first mileage claim with the new {x}, 62 miles to the client site.",
        "The dealer's invoice says {y}, which is wrong, I bought the {x}. Draft a reply asking "
        "them to fix it.",
        "Draft a listing for my old car, I don't need it now that I've got the {x}.",
        "Remind me in a year to service the {x}, picked it up from the dealer today.",
        "I bought a {x}. Finally got rid of the old one.",
        "New car: a {x}. Drives like a dream.",
        "I drive a {x} now.",
        "Traded in the old car for a {x} this afternoon.",
    ],
}
ASK_NOW_HELD11: dict[str, list[str]] = {
    "home": [
        "What city do I live in now?",
        "Where's home for me these days?",
        "Which city should go on this form as my home address?",
    ],
    "employer": [
        "Who do I work for at the moment?",
        "What's my current employer, for this form?",
        "Where am I working these days?",
    ],
    "drink": [
        "What's my usual drink now?",
        "If you order for me today, what drink should you get?",
        "What do I drink these days?",
    ],
    "partner": [
        "Who am I with at the moment?",
        "Who's my partner now?",
        "Who should go down as my partner on this form?",
    ],
    "car": [
        "What car do I have now?",
        "Which car should the parking permit be for?",
        "What do I drive these days?",
    ],
}
ASK_THEN_HELD11: dict[str, list[str]] = {
    "home": [
        "Where was I living {t}?",
        "Which city was my home {t}?",
        "What city was on my address {t}?",
    ],
    "employer": [
        "Who was I working for {t}?",
        "Which company employed me {t}?",
        "For the reference check: where did I work {t}?",
    ],
    "drink": [
        "What was I drinking {t}?",
        "What was my usual order {t}?",
        "Which drink did I always have {t}?",
    ],
    "partner": [
        "Who was I seeing {t}?",
        "Who was my partner {t}?",
        "Who was I going out with {t}?",
    ],
    "car": [
        "What was I driving {t}?",
        "Which car did I have {t}?",
        "What car was on my insurance {t}?",
    ],
}
CHATTER_HELD11 = [
    "Book me a hotel in {city} for the conference, two nights, near the station.",
    "My sister just got a job at {org}. Can you find out what they actually do?",
    "Remind me to send my brother a housewarming card, he's moved to {city}.",
    "What's the weather like in {city} next week? I might go for the weekend.",
    "Draft a thank-you email to {partner} from the book club for lending me the tent.",
    "Tried {drink} at the new café today. Not for me.",
    "A: I found three trains to {city} on the 14th; the 8:05 is the cheapest.",
    "My dad is thinking about buying a {car}. Can you pull up some reviews?",
    "Expense note: client lunch with two people from {org}, £58.",
    "If I ever moved to {city}, what would rent look like for a one-bed?",
    "Is {org} a decent place to work? A recruiter messaged me out of the blue.",
    "Rented a {car} for the holiday, dropped it back this morning.",
    "Order a box of {drink} for the office kitchen, people keep asking for it.",
    "{partner} from work has bought a {car}, apparently. Remind me to ask how it drives.",
    "A: Reminder set: pay the water bill by Friday.",
    "What documents do I need to renew my passport?",
    "Cancel Tuesday's yoga class, I won't make it.",
    "Saw on the news that {org} is opening an office in {city}.",
    "My neighbour's {car} is blocking the driveway again. Draft a polite note.",
    "Find a birthday present for {partner}, my oldest friend. They love {drink}.",
    "Write a short review of the restaurant we tried in {city} last night, four stars.",
    "My aunt lives in {city}; plan a day trip to see her next month.",
    "What time does the pharmacy close today?",
    "A: Your parcel was delivered to the front desk at 11:40.",
    "Add milk, eggs and bread to the shopping list.",
    "Look up flights to {city} for a friend's wedding in June.",
    "My cousin got an offer from {org}. Draft a congratulations message.",
    "A: I compared the {car} with two others for your friend; the figures are in your notes.",
    "Remind me to water the plants while I'm away.",
    "Would I like {drink}? Everyone at the gym swears by it.",
    "Someone scratched my car in the supermarket car park. Find me a body shop nearby.",
    "Find me a plumber, the kitchen sink is blocked again.",
]
# Questions about now, and about a past time ({t}: a time phrase).
ASK_NOW: dict[str, list[str]] = {
    "home": ["Where do I live now?", "Which city am I based in at the moment?",
             "Where is home for me these days?", "What city do I currently live in?"],
    "employer": ["Who do I work for now?", "Where am I employed currently?",
                 "What company do I work at these days?", "Which employer am I with now?"],
    "drink": ["What do I drink these days?", "What is my usual drink now?",
              "What drink do I prefer currently?"],
    "partner": ["Who is my partner now?", "Who am I dating these days?"],
    "car": ["What car do I drive now?", "Which car do I have at the moment?"],
}  # fmt: skip
ASK_THEN: dict[str, list[str]] = {
    "home": ["Where did I live {t}?", "Which city was I based in {t}?",
             "What was home for me {t}?"],
    "employer": ["Who did I work for {t}?", "Which company was I at {t}?",
                 "Where was I employed {t}?"],
    "drink": ["What did I drink {t}?", "What was my usual drink {t}?"],
    "partner": ["Who was my partner {t}?", "Who was I dating {t}?"],
    "car": ["What car did I drive {t}?", "Which car did I have {t}?"],
}  # fmt: skip
ASK_NOW_NEW: dict[str, list[str]] = {
    "home": ["Where am I living currently?", "Which town do I call home now?"],
    "employer": ["Who is my employer at present?", "Where do I work now?"],
    "drink": ["What's my go-to drink lately?", "What am I drinking these days?"],
    "partner": ["Who am I with now?", "Who is my current partner?"],
    "car": ["What's my car right now?", "What vehicle do I own now?"],
}
ASK_THEN_NEW: dict[str, list[str]] = {
    "home": ["Where was I living {t}?", "Which town did I call home {t}?"],
    "employer": ["Who employed me {t}?", "Where was I working {t}?"],
    "drink": ["What was I drinking {t}?", "What was my go-to drink {t}?"],
    "partner": ["Who was I seeing {t}?", "Who was I with {t}?"],
    "car": ["What was I driving {t}?", "What vehicle did I own {t}?"],
}
# Chatter of the second family: other people's moves and jobs, plans, drinks not taken.
CHATTER_NEW = [
    "My brother just moved to {city} for his studies.",
    "We might look at flats in {city} someday, who knows.",
    "A recruiter from {org} keeps emailing me, not interested.",
    "My colleague swears by {drink}, I can't stand it.",
    "Rented a car for the trip, a tiny thing with no boot.",
    "Cooked a big pot of chilli for the week.",
    "The neighbours' dog barked all night again.",
    "Spent Saturday fixing my bike's gears.",
    "Went to a gig in {city} with old school friends.",
    "Read an article about {org} doing layoffs.",
    "Finally cleaned out the garage.",
    "Started a pottery class on Wednesday evenings.",
]
CHATTER = [
    "Spent the weekend in {city} for a friend's wedding.",
    "My friend Dana works at {org} and hates the commute.",
    "Tried {drink} at a cafe today, not for me.",
    "Watched a documentary about octopuses, fascinating stuff.",
    "The weather has been grim all week.",
    "Booked a trip to {city} for next spring.",
    "Finished reading a novel about a lighthouse keeper.",
    "My sister visited and we cooked a huge paella.",
    "Went for a long run along the river this morning.",
    "Our team shipped the release a day late again.",
    "I need to renew my passport before the summer.",
    "Played board games until midnight with neighbours.",
    "Someone at {org} gave a great talk about caching.",
    "Fixed the leaking tap in the bathroom myself.",
    "Had a lovely dinner with old colleagues.",
    "Thinking about learning the cello this year.",
]
POOLS = {"home": CITIES, "employer": EMPLOYERS, "drink": DRINKS, "partner": PARTNERS,
         "car": CARS}  # fmt: skip
MONTH_NAMES = ["January", "February", "March", "April", "May", "June", "July", "August",
               "September", "October", "November", "December"]  # fmt: skip


@dataclass
class User:
    beads: list[dict[str, Any]] = field(default_factory=list)
    # attribute -> [(since, value)], in time order
    history: dict[str, list[tuple[float, str]]] = field(default_factory=dict)
    questions: list[dict[str, Any]] = field(default_factory=list)


def value_at(history: list[tuple[float, str]], at: float) -> str | None:
    current = None
    for since, value in history:
        if since <= at:
            current = value
    return current


def _phrases(rng: random.Random, at: datetime) -> list[tuple[str, float, float]]:
    """Time phrases naming a span around ``at``: (phrase, start, end)."""
    month_start = at.replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    nxt = (month_start + timedelta(days=32)).replace(day=1)
    out = [
        (f"in {MONTH_NAMES[at.month - 1]} {at.year}", month_start.timestamp(), nxt.timestamp()),
        (f"back in {MONTH_NAMES[at.month - 1]} {at.year}", month_start.timestamp(),
         nxt.timestamp()),
        (f"during {MONTH_NAMES[at.month - 1]} of {at.year}", month_start.timestamp(),
         nxt.timestamp()),
    ]  # fmt: skip
    months_ago = round((NOW - at).days / 30)
    if 2 <= months_ago <= 16:
        days = months_ago * 30
        slack = 0.25 * days
        out.append((f"{months_ago} months ago", (NOW - timedelta(days=days + slack)).timestamp(),
                    (NOW - timedelta(days=days - slack)).timestamp()))  # fmt: skip
    for season, first in (("summer", 6), ("winter", 12), ("spring", 3), ("autumn", 9)):
        year = at.year if at.month >= first or season != "winter" else at.year - 1
        start = datetime(year, first, 1, tzinfo=UTC)
        end = (start + timedelta(days=92)).replace(day=1)
        if start <= at < end:
            out.append((f"in the {season} of {year}", start.timestamp(), end.timestamp()))
    rng.shuffle(out)
    return out


# A fourteenth family (`--wordings held12`), written blind on 2026-11-25 by a helper session
# (brief r3s11/held12) without reading the extractor, the context code, the tests, the docs or
# the other families' texts: long chatty messages in British or Australian colloquial English
# where the change is one sentence among news of the day, family and friends (other people's
# homes, jobs and cars, none of them from the pools), mostly in narrative past or present
# perfect, with about a third of the statements short and plain.
SAY_HELD12: dict[str, list[str]] = {
    "home": [
        "Right, big news: we've moved to {x}. Signed the lease on Thursday and the removalists "
        "turned up two hours late, classic. Mum rang halfway through to tell me my brother's "
        "finally bought a place in Geelong, so she was over the moon about that too. Still "
        "haven't found the kettle.",
        "Moved to {x} last weekend.",
        "Been a mad fortnight. Shaz and Dev helped me lug everything up three flights of "
        "stairs and Dev's ute nearly didn't make it. Anyway I'm living in {x} now, tiny flat "
        "but the light's lovely. My sister reckons I'll be back in Newcastle within a year, "
        "cheeky cow.",
        "I live in {x} now.",
        "Had the worst week at work but at least the move's done, I've officially relocated to "
        "{x}. My cousin lives about twenty minutes out in the suburbs so I'll have someone to "
        "nag for Sunday roasts. Boxes everywhere and the cat's sulking under the bed.",
        "Quick one before I forget: we got the keys yesterday, so home is {x} from now on. "
        "Gran's still in her bungalow in Hove and says she'll visit once we've got a spare bed. "
        "My mate Tom has kept his flat in Croydon, he thinks we're bonkers.",
        "We've packed up and moved to {x}, finally.",
        "Everyone assumed we'd end up in {y} but we've actually moved to {x}. The agent showed "
        "us a place there first and we couldn't say no. Lachie still rents in Fitzroy and "
        "keeps telling us we'll regret leaving.",
        "Cheers for the packing tips. We made it, been living in {x} since Saturday. Dad drove "
        "up in his old Land Cruiser with the trailer and whinged about the tolls the whole way. "
        "The neighbours seem nice, one of them works at the hospital round the corner.",
        "Home is {x} now.",
        "A: Noted that you've moved to {x}, congratulations on the new place.",
        "So I've done it, handed back the keys and moved to {x} for good. Bit emotional, "
        "honestly, my best mate Priya lives two doors down from the old place and we did Friday "
        "drinks every week for years. She's promised to come and stay once her visa stuff is "
        "sorted.",
    ],
    "employer": [
        "Started at {x} on Monday.",
        "First week at {x} done and dusted. The team's lovely, though the bloke next to me eats "
        "tuna at his desk every single day. Picked the kids up after and Liam told me his "
        "mate's dad just got a job at Qantas, so now he wants to be a pilot. Knackered but "
        "happy.",
        "I work at {x} now.",
        "Had my leaving drinks on Friday and this week I started at {x}. Sarah from accounts "
        "cried, which set me off too. My brother-in-law is still at the council and reckons "
        "he'll never leave, good on him.",
        "Well that's me joined {x}. Did the induction this morning and got lost twice looking "
        "for the loos. Mum wanted a full report over the phone, then spent twenty minutes on my "
        "auntie's new job at the post office in Ballarat. Early night for me.",
        "I was meant to be going to {y} but they pulled the offer, so I've taken the job at {x} "
        "instead. Probably dodged a bullet. My mate Jono works at a bank in the city and says "
        "the hours there are brutal anyway.",
        "New job at {x} now.",
        "A: Congratulations on the new role at {x}. I'll keep that in mind when you ask about "
        "work.",
        "Bit of a change of scene: I've moved over to {x}. Same sort of work, better money and "
        "a shorter commute, which my back is thanking me for. Caught up with Ellie at the "
        "weekend, she's still at the hospital and still drives that ancient Corolla that "
        "sounds like a lawnmower.",
        "Handed my notice in a while back and this week I started at {x}. Still getting my "
        "head round all the acronyms. Dad's been at the same firm for thirty years and can't "
        "understand why anyone would move.",
        "Mostly settled in now, I'm with {x} these days.",
    ],
    "drink": [
        "I've switched to {x}.",
        "Been trying to be a bit healthier, so it's {x} every morning now. My flatmate thinks "
        "I've joined a cult. Went to Maddie's on Sunday and her new place in Brunswick is "
        "gorgeous, she's even got a proper garden.",
        "I mostly drink {x} these days.",
        "Went round to Nan's and she put the kettle on like always, bless her. Didn't have the "
        "heart to tell her I've gone over to {x} now, I'll break it to her gently. Uncle Pete "
        "was there showing off his new Hilux, as if anyone asked.",
        "Tried {y} at the market and it was rank, so I'm sticking with {x}. That's my daily "
        "drink now, can't get enough of it. Hannah's brother works at the stall next door and "
        "gave me a free pastry.",
        "Right, new habit: {x} first thing every morning. Picked it up on holiday and it's "
        "stuck. The kids have been at my mum's all week so the house is weirdly quiet.",
        "Got hooked on {x} over the last couple of weeks and it's pretty much all I drink now.",
        "My go-to now is {x}.",
        "Spent the whole of Saturday at the footy with Dazza and the boys and froze half to "
        "death. Came home and made myself some {x}, which is basically my thing now, I have it "
        "every day. Dazza's missus has just started at a school out in Penrith so he's doing "
        "all the school runs.",
        "Honestly I've gone off my old morning drink completely. It's {x} for me now, every "
        "single day without fail. Work's been a bit grim but the new manager seems alright.",
        "Gave up the fizzy drinks this month and replaced them with {x}. Day four and no "
        "headache yet. Jess reckons I won't last, she lives on energy drinks.",
    ],
    "partner": [
        "I'm seeing {x} now.",
        "Had a lovely weekend. {x} and I are officially together now, made it Facebook "
        "official and everything. My sister's been teasing me non-stop, which is rich from "
        "someone who met her fiancé on an app in Perth. Mum already wants to meet {x} at "
        "Christmas.",
        "Went on a proper date with {x} on Friday and we've decided we're a couple now. Dinner "
        "at that Thai place near the station, then a walk along the river. My mate Gav met us "
        "for a drink after and wouldn't stop grinning.",
        "{x} is my partner now.",
        "So, bit of personal news: I've got together with {x}. We met at Kate's birthday do in "
        "the spring and kept bumping into each other. Kate's dead chuffed, says she saw it "
        "coming. Her husband's just got a job at the uni in Sheffield so they'll be moving soon "
        "anyway.",
        "Me and {x} are together now, early days but it feels right.",
        "A: That's lovely news about you and {x}. I'll remember that you two are together.",
        "Everyone keeps asking if I'm with {y}, but I never was, mate, that was just gossip. "
        "It's {x} I'm with now, we've been a couple for a couple of weeks.",
        "Took {x} down to meet the folks on Sunday, so I suppose it's official, we're an item. "
        "Dad grilled us about the footy for an hour. My brother turned up late in his new "
        "Ranger and talked about nothing else all lunch.",
        "My new partner's {x}.",
        "Big week. Got the promotion sorted at last, the dog's finally off his antibiotics, and "
        "{x} and I have gone from just mates to properly together. Told my best friend Amira "
        "and she screamed down the phone. She's just moved back to Dublin and wants us both "
        "to visit.",
    ],
    "car": [
        "Bought a {x}.",
        "Picked up the {x} from the dealer this morning, my first new car in about ten years. "
        "Dad came along to kick the tyres and tell the salesman he was having a laugh. My "
        "cousin still drives that clapped-out Commodore and says I've gone soft.",
        "I drive a {x} now.",
        "The old banger finally died on the motorway so I've gone and got a {x}. Only second "
        "hand but it's mint. Stopped at my sister's on the way home, she's just moved into a "
        "new build outside Swindon and it's all beige.",
        "My car now is a {x}.",
        "Nearly went for a {y} but the {x} was a better deal, so that's what's on the drive "
        "now. The bloke at the garage threw in a full tank. Mum's already asked if I'll run her "
        "to her hospital appointments, which is fair enough.",
        "Been a long week. Kids had nits, the boiler packed in, and on Thursday I finally "
        "traded in the old car and bought a {x}. At least something went right. Mick next door "
        "has a ute the same colour and keeps joking we're twins.",
        "New wheels: a {x}. Absolutely stoked with it.",
        "Spent Saturday driving the new {x} up the coast with the windows down, bliss. Only "
        "bought it on Wednesday and I've already done four hundred k's. We stopped in at Aunty "
        "Bev's in Port Macquarie and she made scones.",
        "A: Nice one on the {x}. I'll note that's what you drive now.",
        "Sold the hatchback and got myself a {x} this week. Insurance is a bit steeper but "
        "worth it. Rob at work drives a Golf and he's already jealous.",
    ],
}
ASK_NOW_HELD12: dict[str, list[str]] = {
    "home": [
        "Where am I living these days?",
        "Remind me which city I'm based in now?",
        "What city do I call home at the moment?",
    ],
    "employer": [
        "Who do I work for these days?",
        "Which company am I at right now?",
        "Remind me where I'm working at the moment?",
    ],
    "drink": [
        "What's my usual drink these days?",
        "What do I tend to drink every morning now?",
        "Remind me what my go-to drink is at the moment?",
    ],
    "partner": [
        "Who am I with these days?",
        "Who's my partner at the moment?",
        "Who am I seeing right now?",
    ],
    "car": [
        "What car do I drive these days?",
        "What am I driving at the moment?",
        "Remind me what car I've got now?",
    ],
}
ASK_THEN_HELD12: dict[str, list[str]] = {
    "home": [
        "Where was I living {t}?",
        "Which city was I based in {t}?",
        "What city did I call home {t}?",
    ],
    "employer": [
        "Who was I working for {t}?",
        "Which company was I at {t}?",
        "Where did I work {t}?",
    ],
    "drink": [
        "What was my usual drink {t}?",
        "What was I drinking every morning {t}?",
        "What was my go-to drink {t}?",
    ],
    "partner": [
        "Who was I with {t}?",
        "Who was my partner {t}?",
        "Who was I seeing {t}?",
    ],
    "car": [
        "What car was I driving {t}?",
        "What did I drive {t}?",
        "Which car did I have {t}?",
    ],
}
CHATTER_HELD12 = [
    "My brother's just moved to {city} for work, found a flat near the river and won't shut up "
    "about the bakeries.",
    "Flying to {city} on Friday for my cousin's hen do, back Monday, wish me luck.",
    "Anyone know what the weather's like in {city} in October? Thinking about a long weekend.",
    "Mate of mine got a job at {org} and reckons the free lunches are the only perk.",
    "Saw on the news that {org} is laying off a few hundred people, poor buggers.",
    "Is {org} any good to work for? My niece has got an interview there next week.",
    "Tried {drink} at a café in town today. Not for me, but glad I gave it a go.",
    "Mum's gone mad for {drink}, she's got a whole cupboard of the stuff now.",
    "My sister just bought a {car} and took me for a spin, she drives like a maniac.",
    "If I won the lotto I'd get a {car} and a little shack by the beach, no question.",
    "Borrowed Dad's {car} for the weekend while he's away, it's a lot bigger than I'm used to.",
    "{partner} from my book club has moved to {city}, we're all gutted.",
    "{partner} from uni came round for brunch, still at {org} and still moaning about the boss.",
    "Had a long chat with {partner} and their other half about moving to {city}. Sounds like "
    "they're going for it.",
    "Our neighbours have gone to {city} for a month and asked us to water the tomatoes.",
    "Might apply for something at {org} one day, if they ever open an office near here.",
    "Had a {drink} at the airport while the flight was delayed, cost me seven quid.",
    "The in-laws are visiting this weekend, so the house needs a proper clean.",
    "Rained all day, watched three episodes of that baking show and ate far too many biscuits.",
    "Took the dog to the vet, she's fine, just eaten something she shouldn't have again.",
    "Footy's on tonight so I've got the snags and a few cold ones ready.",
    "What's a decent day trip from {city}? We've got a spare afternoon there next month.",
    "My old boss has taken a job at {org}, small world.",
    "{partner} reckons the {car} is the most reliable car ever made. I'm not convinced.",
    "If we ever did move abroad I'd fancy {city}, but it's a pipe dream really.",
    "Auntie Jan drinks {drink} by the litre and swears it's why she never gets colds.",
    "Got stuck behind a {car} doing thirty on the motorway, nearly lost my mind.",
    "Finally booked the dentist after putting it off since Easter.",
    "Son's school concert was tonight, he was a tree and he was brilliant.",
    "A: Have a great time in {city}! Let me know if you'd like a few restaurant ideas.",
    "Read that {org} might be bought out by some American outfit, no idea if that's true.",
    "Workmate's been banging on about {drink} all week, might give it a go at some point.",
]


# A fifteenth family (`--wordings held13`), written blind on 2026-11-25 by a helper session
# (brief r3s11/held13) without reading the extractor, the context code, the tests, the docs or
# the other families' texts: a user who mostly asks the assistant for help and gives the change
# as the premise of a request ("now that I'm at X, how do I ..."), some messages dictated by
# voice without punctuation, some short replies to a question the assistant asked earlier
# ("yep, X, since last week"), and about a third plain statements.
SAY_HELD13: dict[str, list[str]] = {
    "home": [
        "now that I live in {x}, what's the easiest way to register with a doctor here?",
        "Since moving to {x} my commute has basically doubled. Any tips for making a long "
        "train ride less miserable?",
        "what's the weather looking like this week? I'm in {x} now so use that, not the old place",
        "hey can you help me write a change of address email to my bank I just moved to {x} "
        "and the old address is still on everything",
        "remind me to sort out the council tax for the new flat in {x} on monday",
        "yep, {x}. signed the lease on friday",
        "{x}, since the start of the month.",
        "We moved to {x} this weekend. The flat is tiny but the light is great.",
        "I've relocated to {x}.",
        "Just so you know, I'm living in {x} now.",
        "sorry, typo earlier: the new flat is in {x}, not {y}. can you redo the moving checklist?",
        "A: Got it, you're living in {x} now, so I'll use that for weather and local "
        "suggestions from here on.",
    ],
    "employer": [
        "now that I'm at {x}, how do I set up my calendar so work and personal stuff don't mix?",
        "Can you help me prep for my first week at {x}? I start Monday and I'm a bit nervous.",
        "since I joined {x} I've been doing way more presentations, any advice on not rambling?",
        "draft a linkedin post saying I've joined {x} keep it short and not cringe",
        "ok so the new job at {x} has a pension scheme what should I be asking HR about it",
        "yeah, {x}. accepted the offer yesterday",
        "{x} - they made me an offer and I took it.",
        "I started a new job at {x} this week.",
        "I work for {x} now, in the operations team.",
        "it's {x}, not {y}! please fix the email signature you drafted for me",
        "A: Congratulations on the new role at {x}! Want me to put together a plan for your "
        "first 90 days?",
    ],
    "drink": [
        "what snacks go well with {x}? it's basically all I drink now",
        "Is it bad to have {x} late in the afternoon? I've switched to it completely and I'm "
        "sleeping worse.",
        "how much caffeine is in {x}? I've been having two or three a day since I changed over",
        "add {x} to the shopping list its my go to drink now",
        "whats the best way to make {x} at home I drink it every day now and the cafe ones "
        "are costing a fortune",
        "{x}, these days. gave up the old stuff",
        "yep, switched to {x} last month.",
        "I've switched to {x}, I have it every morning now.",
        "My drink these days is {x}.",
        "not {y}, {x}! that's what I drink now. can you redo the cafe list with places that "
        "do it well?",
        "A: Since {x} is your usual now, here are a few cafes near you that are known for it.",
    ],
    "partner": [
        "I've started seeing {x}, what's a nice low-key idea for a second date?",
        "{x} and I have been together a few weeks now, can you help me plan something for "
        "their birthday?",
        "since getting together with {x} I've barely seen my friends, how do people balance that?",
        "I'm seeing someone new their name is {x} can you remind me their birthday is on the 14th",
        "what should I cook for {x} tonight we've been dating a month and I want to impress them",
        "yes, {x}! we made it official on saturday",
        "{x}. we met at a friend's party and it just clicked.",
        "I'm in a relationship with {x} now.",
        "{x} is my partner, we got together last month.",
        "no, {x}, not {y} - {y} is my cousin. {x} is the person I'm dating. can you fix the "
        "dinner invite?",
        "A: That's lovely news about you and {x}. Would you like me to remember their "
        "birthday and favourite things?",
    ],
    "car": [
        "now that I drive a {x}, how often does it need servicing?",
        "Just bought a {x}, what kind of insurance should I be looking at?",
        "what's the best way to keep the {x} clean? it's my everyday car now",
        "how do I pair my phone with the {x} I picked up on saturday the bluetooth menu makes "
        "no sense",
        "remind me the first service on the {x} is due in six months",
        "a {x}. second hand but barely driven",
        "yep, the {x}, picked it up on Tuesday.",
        "I bought a {x} last week.",
        "My car is a {x} now, I sold the old one.",
        "not a {y}, a {x}. can you redo the insurance comparison with the right car?",
        "A: Congrats on the {x}! Want me to set a reminder for its first service?",
    ],
}
ASK_NOW_HELD13: dict[str, list[str]] = {
    "home": [
        "where am I living at the moment?",
        "which city do I live in these days?",
        "for the weather, which city should you use? where do I live now?",
    ],
    "employer": [
        "who do I work for right now?",
        "what's the name of the company I'm at now?",
        "where do I currently work?",
    ],
    "drink": [
        "what's my usual drink these days?",
        "what do I mostly drink now?",
        "if you were getting me a drink right now, what would it be?",
    ],
    "partner": [
        "who am I with at the moment?",
        "what's my partner's name?",
        "who am I dating these days?",
    ],
    "car": [
        "what car do I have now?",
        "which car am I driving at the moment?",
        "what do I drive currently?",
    ],
}
ASK_THEN_HELD13: dict[str, list[str]] = {
    "home": [
        "where was I living {t}?",
        "which city was home for me {t}?",
        "what city did I live in {t}?",
    ],
    "employer": [
        "who was I working for {t}?",
        "which company employed me {t}?",
        "where did I work {t}?",
    ],
    "drink": [
        "what was I drinking {t}?",
        "what was my go-to drink {t}?",
        "what did I usually drink {t}?",
    ],
    "partner": [
        "who was I seeing {t}?",
        "who was my partner {t}?",
        "who was I dating {t}?",
    ],
    "car": [
        "what car did I have {t}?",
        "what was I driving {t}?",
        "which car did I own {t}?",
    ],
}
CHATTER_HELD13 = [
    "my sister just moved to {city}, what's a good housewarming gift I can post to her?",
    "planning a long weekend in {city} next month, what shouldn't I miss?",
    "is {org} a good company to work for? a friend has an interview there",
    "my brother got a job at {org}, can you help me write him a congrats card",
    "what drinks should I get in for guests on saturday? one of them only drinks {drink}",
    "tried {drink} at a cafe today, honestly not for me",
    "my dad is thinking of buying a {car}, are they reliable?",
    "{partner} from work drives a {car} and won't stop talking about it lol",
    "whats the fastest way from the airport to the centre of {city} I land at 11pm",
    "can you summarise the news about {org} this week? something about layoffs",
    "if I ever moved to {city} would I need to learn the language?",
    "my neighbour {partner} has started working at {org}, small world",
    "what's a good recipe for a rainy sunday",
    "remind me to call mum on thursday",
    "help me write a polite message declining a wedding invite",
    "how long do I boil an egg for a runny yolk",
    "we're hosting {partner} and their kids this weekend, what can I make that kids actually eat?",
    "A: Here's a three-day itinerary for {city}, with half a day set aside for the old town.",
    "my cousin rented a {car} on holiday and loved it, would one make sense for me someday?",
    "would love to visit {city} in the spring one day",
    "my mate's taken an offer at {org} in {city}, is it a nice place to live?",
    "recommend a podcast for a long drive",
    "how much caffeine is in {drink} compared to a normal coffee?",
    "set a timer for 20 minutes",
    "ugh monday. what's a lunch I can make in ten minutes",
    "{partner} asked me what to get their other half for christmas, any ideas under 50?",
    "short version please: what does {org} actually do?",
    "A: If you do go to {city}, the trams are the easiest way around and a day pass is good value.",
    "my friend {partner} swears by {drink} for hangovers, is that a thing?",
    "would a {car} be too small for a family of four? just curious",
    "what should I pack for a work trip to {city} in november",
    "my aunt's been at {org} for twenty years and they're finally letting her retire",
    "can you proofread this: 'Dear team, thanks for a great quarter.'",
]


# A sixteenth family (`--wordings held14`), written blind on 2026-11-25 by a helper session
# (brief r3s11/held14) without reading the extractor, the context code, the tests, the docs or
# the other families' texts: an older, formal user who writes long, careful paragraphs, as in
# letters to a secretary (the change embedded in an account of the week, courteous requests,
# relatives and companions named, dates written out), with the assistant's brief formal
# acknowledgements ("A: ") in between, and about a third plain statements.
SAY_HELD14: dict[str, list[str]] = {
    "home": [
        "Dear assistant, I write to let you know that we have at last completed the move to "
        "{x}. The removal men arrived on Tuesday morning and were gone by four, and I am pleased "
        "to say that nothing was broken apart from one of my late mother's saucers. Would you "
        "kindly update my address wherever you keep such things?",
        "A: Thank you for letting me know. I have noted that your home is now in {x}, and I shall "
        "use that address for your correspondence from today.",
        "I now live in {x}.",
        "Please be advised that as of the first of this month my permanent residence is in {x}. "
        "The flat is smaller than the house was, but it has a pleasant view of the river and I am "
        "within walking distance of the library, which at my age is no small consideration.",
        "It has been rather a full week. On Monday I saw the dentist, on Wednesday I signed the "
        "lease on the new flat in {x}, and on Friday I moved in, with my nephew's help and a "
        "great deal of tea. I should be grateful if you would remind me next week to notify the "
        "bank and the pension office of the change of address.",
        "I must correct something I told you earlier. We have not moved to {y} after all; the "
        "purchase there fell through in the final week. We have instead bought a house in {x} "
        "and have been living here since Saturday.",
        "My home is now in {x}, and I intend to remain here for the foreseeable future.",
        "A: Very good. Your new address in {x} has been recorded, and I have removed the old one "
        "from your list of contacts.",
        "You may be amused to learn that after forty years of saying I should never leave, I have "
        "sold up and moved to {x}. My daughter thinks it a great adventure; my neighbours thought "
        "me quite mad. The first fortnight has been spent largely in unpacking books.",
        "Would you be so kind as to draft a short note to my friends informing them that I have "
        "moved to {x}, and that my new telephone number will follow in due course? Something "
        "warm but not effusive, if you please.",
        "I have settled in {x} now, and I find the place agrees with me.",
    ],
    "employer": [
        "I am writing to tell you that I have accepted a position with {x}, and that I began "
        "there on Monday. It is part-time, three days a week, which suits me very well, and the "
        "people seem pleasant and competent, which is more than one can say of some firms.",
        "A: Congratulations on the new position. I have noted that you are now employed by {x}.",
        "I work for {x} now.",
        "This has been rather an eventful week. I concluded my last day at my former employer on "
        "Friday, with a small presentation and a clock, and on Monday morning I presented myself "
        "at the offices of {x}, where I am to be engaged as a consultant in the finance "
        "department.",
        "Please note that my employer is now {x}. I should be grateful if you would update my "
        "details accordingly and remind me to send my new tax code to the accountant.",
        "For the avoidance of doubt: I had mentioned that I might join {y}, but in the end I "
        "declined their offer. I have taken up the post with {x} instead and have been there for "
        "a week now.",
        "I have taken a new post with {x}, beginning this week.",
        "A: Thank you. From now on I shall treat {x} as your place of work, and I shall file your "
        "correspondence with them under that heading.",
        "You will recall that I was rather unsettled at work in the spring. I am glad to say the "
        "matter has resolved itself: {x} approached me with an offer, and I started with them on "
        "the fifteenth. My companion says I have been a different person since.",
        "Would you kindly prepare a letter to the personnel office at {x} confirming my start "
        "date and requesting that my salary be paid into the same account as before? I joined "
        "them last Monday and they still have not had the form.",
        "I am now employed by {x}.",
    ],
    "drink": [
        "On the advice of my physician I have given up coffee altogether, and I now take {x} in "
        "the mornings instead. I confess I did not expect to enjoy it, but I have quite come "
        "round to it.",
        "A: Noted. I shall remember that your usual drink is now {x}.",
        "I drink {x} these days.",
        "Please add {x} to the standing grocery order, and remove my old drink from it entirely; "
        "I have switched over and shall not be wanting the other again.",
        "It has been a quiet week, for which I am grateful. I have read two novels, written to my "
        "sister Margaret, and made the discovery, courtesy of my granddaughter, of {x}, which has "
        "now replaced my usual morning cup entirely.",
        "I ought to correct myself: I told you I had taken to {y}, but I was muddling my words. "
        "It is {x} that I have been drinking every day since last week.",
        "My habitual drink is now {x}.",
        "A: Very good. When I arrange refreshments for your meetings I shall ask for {x}.",
        "You may wish to know, when ordering for guests, that I myself take only {x} nowadays. "
        "My tastes have changed rather late in life, but there it is.",
        "I have switched to {x}; I find it kinder to the stomach.",
        "Would you be so good as to find a reliable supplier of {x}? I have made it my regular "
        "drink, and the shop in the village seldom has it in stock.",
    ],
    "partner": [
        "I have some personal news which I should like you to record. {x} and I have become "
        "companions, and we are to spend a good deal of time together from now on. I do not "
        "think I have been so content in many years.",
        "A: How lovely. I have noted {x} as your companion, and I shall include {x} in "
        "invitations addressed to you.",
        "My partner is {x}.",
        "This week has been quite extraordinary. On Thursday evening {x} took me to dinner at "
        "the hotel and, over the pudding, asked whether we might make things official. I said "
        "yes, of course. We are now, as my grandchildren put it, an item.",
        "Please note that my companion is now {x}. I would be grateful if future invitations "
        "could be addressed to the two of us together.",
        "I must correct what I told you. It was not {y} whom I have been seeing; you must have "
        "misheard me, or I misspoke. My companion is {x}, and has been since last week.",
        "I am seeing {x} now.",
        "A: Thank you for telling me. I shall remember that you are now with {x}.",
        "You may recall that I was widowed some years ago and had rather given up on such things. "
        "Well, I have met someone: {x}, a retired schoolteacher, and we have been keeping company "
        "since the harvest supper. My son is delighted.",
        "{x} and I were married on Saturday in a small ceremony at the register office, with only "
        "family present. Would you kindly draft a notice for the parish newsletter?",
        "I have a new companion, {x}.",
    ],
    "car": [
        "I took delivery of the new car on Wednesday: a {x}, in a rather sober dark grey. The "
        "salesman was a tiresome young man, but the car itself is a pleasure to drive.",
        "A: Noted. I have recorded that you now drive a {x}, and I shall update the insurance "
        "reminder accordingly.",
        "I drive a {x} now.",
        "Please arrange for the insurance to be transferred to the {x}; I have sold the old car "
        "to my neighbour's son and shall not be driving it again.",
        "A full week, I am afraid. Monday was the hospital appointment, Tuesday the solicitor, "
        "and on Thursday I finally went to the garage and bought a {x}, after three months of "
        "dithering. My wife says it is the most sensible thing I have done all year.",
        "I should correct something I told you last time. I said I had bought a {y}, but that was "
        "the car I test-drove and rejected. The car I actually bought is a {x}, and I have been "
        "driving it since Friday.",
        "My car is now a {x}.",
        "A: Thank you. I shall note the {x} as your car for the parking permit and the service "
        "reminders.",
        "Would you be so kind as to book the first service for my {x}? I bought it only last "
        "week, but the dealer advises an early inspection.",
        "After a great deal of deliberation I have replaced the old car with a {x}. It is smaller "
        "than I am used to, but parking in town has become such an ordeal that I thought it wise.",
        "I have bought a {x}.",
    ],
}
ASK_NOW_HELD14: dict[str, list[str]] = {
    "home": [
        "Would you remind me of my present address? In which city do I live at the moment?",
        "Where do I currently reside?",
        "In which city am I living now?",
    ],
    "employer": [
        "For which firm do I work at present?",
        "Could you remind me who my current employer is?",
        "Where am I employed these days?",
    ],
    "drink": [
        "What is my usual drink at present?",
        "What do I customarily drink nowadays?",
        "When guests call, what should I ask to be served for myself these days?",
    ],
    "partner": [
        "Who is my companion at present?",
        "Would you remind me whom I am with at the moment?",
        "Who is my partner these days?",
    ],
    "car": [
        "What car do I drive at present?",
        "Could you remind me which car I have at the moment?",
        "What make of car is mine now?",
    ],
}
ASK_THEN_HELD14: dict[str, list[str]] = {
    "home": [
        "Where was I living {t}?",
        "Would you remind me in which city I resided {t}?",
        "What was my address {t}? The city will do.",
    ],
    "employer": [
        "For which firm was I working {t}?",
        "Who employed me {t}?",
        "Could you remind me where I was employed {t}?",
    ],
    "drink": [
        "What was my usual drink {t}?",
        "What did I customarily drink {t}?",
        "What was I taking in the mornings {t}?",
    ],
    "partner": [
        "Who was my companion {t}?",
        "Whom was I seeing {t}?",
        "Could you remind me who my partner was {t}?",
    ],
    "car": [
        "What car was I driving {t}?",
        "Which car did I own {t}?",
        "Would you remind me what I drove {t}?",
    ],
}
CHATTER_HELD14 = [
    "My sister Margaret writes from {city} that her husband has finally retired from {org}, "
    "after thirty-one years. She fears he will be under her feet all day.",
    "We had the Hendersons to stay over the weekend. I gave them the blue room and laid in a "
    "supply of {drink}, which is all Mrs Henderson will touch. They left on Sunday after lunch.",
    "A: Very good. I have added the Hendersons' visit to your diary and noted that Mrs "
    "Henderson takes {drink}.",
    "Would you be kind enough to find me a decent hotel in {city} for the second week of "
    "October? My companion and I are thinking of a short visit, and I should prefer somewhere "
    "quiet and not too far from the old town.",
    "I received a most peculiar letter from {org} this morning, addressed to a previous occupant "
    "of this house. Please draft a reply informing them that the gentleman in question has not "
    "lived here for some years.",
    "My nephew has bought himself a {car}, of which he is immensely proud. I do not have the "
    "heart to tell him it is the same colour as a hearse.",
    "Could you tell me something of the history of {city}? We may go there in the spring and I "
    "like to be prepared.",
    "My granddaughter has become engaged to a young man called {partner}. We are to meet him at "
    "Christmas. I reserve judgement.",
    "A: I have written to {org} on your behalf regarding the invoice, and asked that they reply "
    "by post.",
    "The weather has been dreadful all week and I have not left the house except for church on "
    "Sunday.",
    "My old friend Dorothy has moved into sheltered accommodation in {city}. She says the food "
    "is indifferent but the company excellent.",
    "If I were twenty years younger I should very much like to live in {city}, but I am too set "
    "in my ways for such things now.",
    "Please remind me to telephone my brother on the morning of Tuesday the fourteenth of May; "
    "it is his eightieth birthday.",
    "I read in this morning's paper that {org} is to close its regional offices. What a pity; "
    "they used to be such a good firm.",
    "At the Mitchells' on Saturday I was offered {drink}, which I tried out of politeness. I "
    "cannot say I shall be having it again.",
    "My son-in-law is thinking of buying a {car}. Would you be so kind as to find out what the "
    "consumer magazines have said about its reliability?",
    "A: Thank you for your letter. I have confirmed your table for four at the restaurant on "
    "Friday at half past seven.",
    "Would you please draft a thank-you letter to the Robertsons for their hospitality in "
    "{city}? We stayed with them for four nights and they could not have been kinder.",
    "Our neighbour's daughter has taken a position with {org} in {city}. Her mother is very "
    "proud, though she worries about the rent.",
    "I have been asked to give a short talk to the Women's Institute on the subject of my "
    "travels. I thought I might speak about the summer we spent touring the Continent.",
    "My cousin {partner} has written again, asking whether we might put him up for a week in "
    "August. I am minded to say yes, though the spare room needs airing.",
    "What would be the most sensible way of getting from here to {city} by train? I no longer "
    "care to drive long distances.",
    "A: I have noted your appointment with the optician on Wednesday the ninth of October at "
    "eleven o'clock.",
    "The vicar's wife came to tea on Thursday and stayed until six. She takes her {drink} very "
    "strong, I noticed.",
    "My father always used to say that one should never buy a {car}. I never understood why, "
    "and now I suppose I never shall.",
    "Would you kindly find out whether {org} still offers its pension advice service? My friend "
    "Evelyn is anxious to know.",
    "We have had a letter from my godson, who is now in {city}, studying architecture. He "
    "sounds happy, if rather short of money.",
    "I should like to send a hamper to my brother and his wife for their anniversary. Could you "
    "suggest a firm that delivers reliably?",
    "Suppose I were to take a short holiday in {city} in the autumn. Would the weather be "
    "tolerable, do you think?",
    "An old colleague of mine, {partner}, telephoned out of the blue on Sunday. We had not "
    "spoken in twenty years, and talked for well over an hour.",
    "A: Very good. I have forwarded the brochure from {org} to your daughter as requested.",
    "I find I have nothing of consequence to report this week. The garden is coming along, and "
    "the cat continues to disapprove of everything.",
]


# A seventeenth family (`--wordings held15`), written blind on 2026-11-25 by a helper session
# (brief r3s11/held15) without reading the extractor, the context code, the tests, the docs or
# the other families' texts: a young adult texting the assistant, mostly lower case, slang and
# abbreviations (tbh, ngl, rn, lol), emoji, very short messages, sometimes two thoughts run
# together without punctuation; now and then a correction of a slip ({y}) or the assistant's
# reply. The chatter is the same voice: friends' and family's places, jobs, cars and drinks,
# trips, wishes, drinks tried once, questions about a city or a company, and plain noise.
SAY_HELD15: dict[str, list[str]] = {
    "home": [
        "moved to {x} this weekend 📦📦 my back is dead",
        "officially living in {x} now lol",
        "new flat in {x} is sooo cute ngl 🥹",
        "ok so i live in {x} now?? still feels weird",
        "A: Congrats on the move to {x}! How's the new place treating you?",
        "first night in {x} and the neighbours are already loud smh",
        "typo lol i moved to {x} not {y} 🤦",
        "finally out of my old place, living in {x} now w 2 flatmates",
        "just moved into my new place in {x} rent is insane tbh but worth it",
        "lease signed n moved in the same day, {x} life starts now 🏙️",
        "home is {x} now btw, update ur notes 📝",
    ],
    "employer": [
        "got the job at {x}!!!! 😭😭 starting monday",
        "first day at {x} today, so nervous lol",
        "new job at {x} ngl the free snacks are elite",
        "quit my old job, im at {x} now",
        "A: Congrats on starting at {x}! How was the first week?",
        "signed the {x} offer 🖊️ its happening",
        "work update: im with {x} now, onboarding is boring af",
        "ok my {x} badge just came so i guess i work there now lmao",
        "wait no i started at {x} not {y} my bad 😅",
        "week 1 at {x} done and i survived 💪",
        "left the old place, {x} hired me 🎉",
    ],
    "drink": [
        "switched to {x} lately, my old go-to was making me jittery af",
        "ok im obsessed w {x} rn 😍 like every single day",
        "{x} is my whole personality now lol",
        "new go-to drink: {x} no notes",
        "A: Noted, {x} is your go-to now. Want me to keep that in mind for café picks?",
        "been on {x} every morning for like 2 weeks straight its a habit now",
        "my daily drink is {x} now btw",
        "sorry meant {x} not {y}, thats what i drink now",
        "gave up my old drink for {x} ngl never going back",
        "{x} > everything else tbh, having it daily now",
        "not me drinking {x} again today 💀 its every day now",
    ],
    "partner": [
        "omg so me and {x} are official now 🥰",
        "{x} asked me out and i said yes!!! 💕",
        "so i have a partner now lol its {x} 🙈",
        "A: That's lovely news about you and {x}! How did you two meet?",
        "moved on from my ex, seeing {x} now and its going really well",
        "{x} and i made it official last night lol",
        "relationship status update 👀 me + {x}",
        "i meant {x} not {y} lol {x} is who im dating",
        "been seeing {x} for a few weeks and we're exclusive now 🥹",
        "new partner alert 🚨 its {x}",
        "me n {x} are a thing now dont make it weird",
    ],
    "car": [
        "bought a {x}!!! 🚗 she's beautiful",
        "picked up my {x} today vroom vroom",
        "sold the old car, driving a {x} now",
        "A: Nice, enjoy the {x}! Want me to set a reminder for its first service?",
        "got a {x} lol dont ask how much",
        "the {x} is officially mine 🔑 paperwork done",
        "traded in my old one for a {x} ngl so happy",
        "new whip: {x} 😎",
        "im a {x} driver now apparently lmao",
        "the car i bought is a {x} not a {y} lol i keep mixing them up 🙃",
        "{x} delivered this morning 🥲 cant stop staring at it",
    ],
}
ASK_NOW_HELD15: dict[str, list[str]] = {
    "home": [
        "where do i live rn?",
        "wait which city am i in these days",
        "remind me where im living now lol",
    ],
    "employer": [
        "where do i work rn",
        "who am i working for these days?",
        "whats my current job again lol",
    ],
    "drink": [
        "whats my go to drink rn",
        "what do i usually drink these days?",
        "remind me what drink im into now",
    ],
    "partner": [
        "who am i dating rn",
        "whos my partner these days?",
        "remind me who im with now lol",
    ],
    "car": [
        "what car do i drive rn",
        "what am i driving these days?",
        "which car do i have now",
    ],
}
ASK_THEN_HELD15: dict[str, list[str]] = {
    "home": [
        "where was i living {t}?",
        "which city did i live in {t}",
        "where did i live {t} lol i forgot",
    ],
    "employer": [
        "where was i working {t}?",
        "who was i working for {t}",
        "which company was i at {t}",
    ],
    "drink": [
        "what was i drinking {t}?",
        "what was my go to drink {t}",
        "what did i usually drink {t}",
    ],
    "partner": [
        "who was i dating {t}?",
        "who was i with {t}",
        "who was my partner {t}",
    ],
    "car": [
        "what car did i drive {t}?",
        "what was i driving {t}",
        "which car did i have {t}",
    ],
}
CHATTER_HELD15 = [
    "ugh my sis just moved to {city} and wont stop sending pics 🙄",
    "weekend trip to {city} was soo good 😭 already miss it",
    "is {city} worth visiting in winter or nah",
    "my bestie got a job at {org} lol so proud of her",
    "anyone know if {org} pays well? asking for a friend 👀",
    "saw {org} in the news again smh what r they doing",
    "tried {drink} for the first time today… not for me 😬",
    "my mum is obsessed w {drink} its kinda cute",
    "dad bought a {car} lmao midlife crisis",
    "my roommate's {car} broke down again 💀",
    "if i won the lottery id get a {car} ngl",
    "{partner} from uni is coming over tonight, we're watching love island",
    "lowkey want to live in {city} someday 🥺",
    "flying to {city} next month for a wedding need an outfit asap",
    "applied to {org} for fun lol we'll see",
    "my cousin in {city} says the rent there is crazy",
    "rented a {car} for the road trip, it was ok i guess",
    "{partner}'s bday party was so fun 🎉 hungover rn tho",
    "ok what do i make for dinner i have eggs and rice and thats it",
    "cant sleep lol",
    "gym at 7am tomorrow pray for me 🙏",
    "need a show to binge, give me recs",
    "the barista gave me {drink} instead of my order and i just drank it 😂",
    "what time zone is {city} in?",
    "interview w {org} went meh tbh dont think i got it",
    "would u rather live in {city} or by the sea",
    "my ex just started at {org} lmaooo small world",
    "A: Here are a few things to do in {city} this weekend: the old town, a food market and "
    "a walk by the river.",
    "is it normal to be this tired every day lol",
    "test drove a {car} for fun, not buying tho 😅",
    "{partner} just got engaged omg 💍",
    "payday 🤑 finally",
    "someone at work brought {drink} for everyone, cute",
    "raining again 🌧️ of course",
]


# An eighteenth family (`--wordings held16`), written blind on 2026-11-25 by a helper session
# (brief r3s11/held16) without reading the extractor, the context code, the tests, the docs or
# the other families' texts: a busy parent whose messages are mostly about the kids, school
# runs, meals and logistics, the change told as the background of a plan or a problem ("since
# we moved to X the school run is ..."), the partner as a co-parent or a new partner, with some
# of the assistant's short confirmations ("A: ") in between.
SAY_HELD16: dict[str, list[str]] = {
    "home": [
        "Since we moved to {x} the school run takes twenty minutes longer each way. Any ideas "
        "for keeping a 4 and a 7 year old happy in the car that aren't a screen?",
        "Finally finished unpacking in {x}. Can you plan me a week of dinners from what's in "
        "the freezer? Mince, peas, fish fingers, half a bag of chips. Nobody eats salmon.",
        "Need to register the kids with a GP now that we live in {x}. What do I normally have "
        "to bring, proof of address and the red books?",
        "A: Noted, you're living in {x} now. I'll look for nurseries and after-school clubs "
        "near there from now on.",
        "Moving day went OK! We're in {x} now and the kids have already fought over the "
        "bedrooms. What's a one-pan dinner I can make when I don't know where anything is?",
        "My mum keeps telling people we went to {y}. We didn't, we moved to {x}, she just "
        "can't keep track. Anyway, can you help me word the invite for Leo's 6th birthday?",
        "The new house in {x} has a garden at last, so the trampoline is coming out of the "
        "loft. Is a trampoline safe for a 4 year old if it has a net?",
        "Signed for a flat in {x} this morning, keys on Friday. Can you make me a checklist "
        "for changing primary schools in the middle of the year?",
        "A: Got it, home is {x} now. Do you want me to redo the school-run timings from there?",
        "We relocated to {x} in the end, and the walk to the new school is uphill the whole "
        "way. How early should we leave if it's about a mile and the little one dawdles?",
        "Half term is coming and we've only just settled in {x}, so I'd rather stay local. "
        "Rainy-day ideas for a 6 and 9 year old that won't cost a fortune?",
    ],
    "employer": [
        "Started at {x} on Monday. The hours are better for pickups, I can leave at half three "
        "on Tuesdays and Thursdays. Can you help me redo the rota with the childminder?",
        "Now that I work for {x} I've got a 9am standup every day, which is right when I "
        "should be at the school gate. How do other parents deal with this?",
        "A: Congratulations on the job at {x}! I've noted it. Shall I remind you about the "
        "first-day paperwork on Sunday night?",
        "First week at {x} done and nobody cried, not even me. The kids are wiped out from "
        "breakfast club though. Easy Friday dinner ideas?",
        "Got the offer from {x} and said yes! They do salary sacrifice for childcare. How "
        "does that work alongside tax-free childcare, can I have both?",
        "Handed my notice in, I'm joining {x} at the start of next month. Now I need to work "
        "out who does the Wednesday swimming run.",
        "The new job at {x} has a workplace nursery, which honestly is half the reason I took "
        "it. What should I ask on the settling-in visit for a 2 year old?",
        "I turned down {y} in the end and went with {x}, because they let me do school hours "
        "on Fridays. Can you help me write a polite no-thank-you to the other one?",
        "A: Understood, you're at {x} now. I'll plan your week around their core hours.",
        "Just joined {x} and my new manager already said I can work from home on inset days, "
        "thank god. When are the inset days this term again?",
        "I'm at {x} now, so I'll do the Tuesday and Thursday pickups and my sister covers the "
        "rest. Can you turn that into a simple table I can stick on the fridge?",
    ],
    "drink": [
        "It's all {x} for me now, coffee was wrecking my sleep and the baby is up at 4 "
        "anyway. Any other tips for surviving the early feeds?",
        "New rule in this house: mornings are {x} for me, no more coffee. Can you suggest "
        "breakfasts the kids can get themselves so I get ten quiet minutes?",
        "A: Noted that you've switched to {x}. I'll add it to the weekly shop.",
        "Add {x} to the shopping list please, that's what I drink these days. Also we're out "
        "of nappies, bananas, wraps and the yoghurt tubes.",
        "Swapped my afternoon coffee for {x} and I honestly don't miss it. What are good "
        "snacks for the after-school meltdown hour?",
        "The other mums at the gate got me onto {x}, and now I have one every morning after "
        "drop-off. Is that a lot of caffeine for someone who's breastfeeding?",
        "My sister swears by {y} but I've settled on {x}, I have it while the kids do "
        "homework. How do I get a 10 year old to start homework without a fight?",
        "My go-to is {x} now, a flask of it for the football touchline on Saturdays. What else "
        "should I pack for a freezing morning match with a 7 year old?",
        "A: Got it, {x} is your usual now. Want me to put it on the recurring order?",
        "Gave up the energy drinks, {x} from now on. Meal plan for the week please, nothing "
        "with nuts because of the nursery rule.",
    ],
    "partner": [
        "{x} and I have been together a couple of months and I think it's time they met the "
        "kids. How do I introduce a new partner to a 5 and an 8 year old?",
        "I'm with {x} now, so weekends are split: they take the kids to swimming while I do "
        "the big shop. Can you plan a Saturday lunch that's ready when we're all back?",
        "A: That's lovely news about you and {x}. I'll remember them as your partner when "
        "planning family things.",
        "{x} is moving in with us next month, which means two sets of bedtimes to merge. Can "
        "you help me draft a family routine that works for everyone?",
        "{x} is my partner now and the kids adore them, mostly because of the Sunday pancakes. "
        "Do you have a good pancake recipe without eggs?",
        "Got together with {x} over the summer and they're brilliant with the kids. We're "
        "planning our first holiday all together, any tips for a week with four children?",
        "{x} and I got married on Saturday! Tiny do, the kids were flower girl and ring "
        "bearer. Now I need wording for the thank-you cards.",
        "My new partner {x} is doing the Thursday pickup from now on. Can you draft a note to "
        "the school adding them as an authorised adult?",
        "It's official, {x} and I are together. My aunt told the family group chat it was "
        "{y}, so now everyone's confused. How do I correct that without making it weird?",
        "A: Noted, {x} is your partner now. Shall I include them in the weekend plans?",
        "{x} moved in at the weekend so the hall is full of boxes and the kids are "
        "overexcited. Quick dinner for five tonight, please?",
    ],
    "car": [
        "Picked up our {x} yesterday, the old car was falling apart. How often should I check "
        "the car seats are still fitted properly?",
        "Since we got the {x} the school run is so much calmer, the kids can't reach to kick "
        "each other anymore. Small wins.",
        "A: Congratulations on the {x}! I've noted it as your car. Want a reminder for its "
        "first service?",
        "We traded the old car in for a {x}. What should I keep in the boot for emergencies "
        "with small kids?",
        "The {x} is ours now, second-hand but really clean. Can you help me make a rota for "
        "who drives to Saturday football?",
        "I drive a {x} now, so I can take two more kids in the carpool. Can you draft a message "
        "to the other parents?",
        "We nearly got a {y} but went for the {x} in the end because the double buggy fits in "
        "the boot without taking the wheels off.",
        "New car day: it's a {x}! The kids have already named it. How do I stop crisps ending "
        "up in every gap in the seats?",
        "A: Got it, you're driving a {x} now. I'll use that for the fuel estimates for the trip.",
        "Collected the {x} from the dealer straight after school pickup, with both kids in "
        "tow. Never again. What's a good car game for long drives?",
        "Our family car is a {x} since last week. What's the cheapest way to get a roof box "
        "for the camping trip?",
    ],
}
ASK_NOW_HELD16: dict[str, list[str]] = {
    "home": [
        "Where do we live at the moment? I need it for a school form.",
        "Which city am I living in now?",
        "Remind me where home is these days, I'm filling in the nursery application.",
    ],
    "employer": [
        "Who do I work for right now?",
        "Which company am I at these days? The childminder needs my employer for her records.",
        "Where am I working at the moment?",
    ],
    "drink": [
        "What do I usually drink these days?",
        "What's my go-to drink at the moment? I'm doing the shopping list.",
        "Remind me what I've been drinking lately in the mornings.",
    ],
    "partner": [
        "Who's my partner now?",
        "Who am I with these days? I need the name for the emergency contact form.",
        "What's my partner's name at the moment?",
    ],
    "car": [
        "What car do we drive now?",
        "Which car have I got at the moment? The parking permit form asks.",
        "Remind me what I'm driving these days.",
    ],
}
ASK_THEN_HELD16: dict[str, list[str]] = {
    "home": [
        "Where were we living {t}?",
        "Which city did we live in {t}? The new school wants previous addresses.",
        "Where was home for us {t}?",
    ],
    "employer": [
        "Who was I working for {t}?",
        "Which company was I at {t}? It's for a reference form.",
        "Where did I work {t}?",
    ],
    "drink": [
        "What was I drinking {t}?",
        "What was my usual drink {t}?",
        "Which drink was I always having {t}?",
    ],
    "partner": [
        "Who was I with {t}?",
        "Who was my partner {t}?",
        "Who was I seeing {t}? I'm trying to work out when a photo was taken.",
    ],
    "car": [
        "What car did we have {t}?",
        "Which car was I driving {t}?",
        "What were we driving {t}? The kids are asking about the old car.",
    ],
}
CHATTER_HELD16 = [
    "My sister just moved to {city} with her two, so the cousins will only see each other at "
    "Christmas now. Ideas for keeping them in touch?",
    "We're driving to {city} for half term to see my in-laws. How many stops should I plan "
    "with a toddler who gets car sick?",
    "Is {city} a good place for a weekend with kids, or is it more of a grown-up city?",
    "My brother-in-law got a job at {org}. He says they're hiring, not that I'm looking.",
    "Have you heard anything about {org}? A friend from antenatal class has an interview there "
    "on Monday and she's nervous.",
    "Tried a {drink} at the soft play cafe today. Never again, it tasted like pond water.",
    "My neighbour drinks {drink} all day long, I don't know how she sleeps.",
    "Our childminder just bought a {car}. She says all three car seats fit across the back, is "
    "that true?",
    "If we ever had a third kid we'd need something bigger, like a {car}. Not happening though.",
    "Borrowed my dad's {car} for the tip run this morning. Smells of his dog now.",
    "{partner} from the PTA has roped me into running the cake stall at the summer fair again.",
    "Leo's best friend is {partner}'s little boy, they're inseparable. Playdate Saturday?",
    "My ex and his new girlfriend took the kids to {city} for the weekend, so the house is "
    "eerily quiet.",
    "Wouldn't it be nice to live somewhere like {city}, with the beach on the doorstep? One "
    "day, maybe.",
    "Saw on the news that {org} is laying people off. Hope my cousin's OK, she's been there "
    "for years.",
    "The school trip is to {city} this year and it's forty pounds. Is that normal for Year 4?",
    "Grandma is flying back from {city} on Thursday, can you remind me to pick her up at 6?",
    "What's the weather looking like in {city} next week? We might pop over for a day.",
    "Reminder: PE kit on Tuesday, library books on Thursday, and the dentist at 4:15 on Friday.",
    "Can you give me a fish pie recipe that a fussy 5 year old might actually eat?",
    "Maya lost a tooth today and I have no cash for the tooth fairy. How much is the going "
    "rate now?",
    "What's a good bedtime for a 9 year old on a school night?",
    "The car failed its MOT, two new tyres. Can you help me move some money around this month?",
    "Nits again. Third time this term. What actually works?",
    "Help me write a message to the class WhatsApp about the lost water bottle, the blue one.",
    "Sports day got cancelled because of rain, and the kids are gutted. Indoor ideas for this "
    "afternoon?",
    "My friend's husband works at {org} and apparently the canteen is amazing. Jealous.",
    "We had a {drink} at my friend's house after the school run, it was nice but too sweet for me.",
    "Should I get the kids' passports renewed before we book anything for next summer?",
    "The toddler has decided he only eats beige food. Is this a phase?",
    "My friend {partner} offered to have the kids on Saturday night. What shall we do with a "
    "free evening for once?",
    "My colleague is thinking of buying a {car}, do you know if they're reliable?",
]


# A nineteenth family (`--wordings held17`), written blind on 2026-11-25 by a helper session
# (brief r3s11/held17) without reading the extractor, the context code, the tests, the docs or
# the other families' texts: a software engineer writing as in Slack (terse, lower case, jargon,
# status updates with bullet points in one message, the change sometimes one item of the list),
# ticket numbers and links in the chatter, colleagues' and relatives' cities, jobs, cars and
# drinks around it, and now and then the assistant's short acknowledgement ("A: ").
SAY_HELD17: dict[str, list[str]] = {
    "home": [
        "status update:\n- moved to {x} over the weekend\n- no fiber yet, tethering off my "
        "phone\n- slow on PR reviews till thurs",
        "fyi relocated to {x}, same TZ so standups unaffected",
        "lease signed 🎉 officially living in {x} as of today",
        "- boxes mostly unpacked\n- new address in {x} is in my profile now\n- still need a "
        "proper desk chair",
        "ok the move is done. {x} it is. commute is 0 min bc remote lol",
        "can you update my home city to {x}? the old one is stale",
        "wfh from the new place in {x} starting today, ping me if the vpn acts up",
        "typo earlier, not {y}, I meant {x}. that's where the new apartment is",
        "weekly notes\n- shipped the auth refactor\n- moved into the new flat in {x}\n- "
        "dentist tues",
        "A: Got it, I'll treat {x} as your home base from now on.",
        "TIL what a moving van costs 💸 anyway, living in {x} now, send coffee shop recs",
    ],
    "employer": [
        "personal update: last day at the old place was fri, started at {x} today. onboarding "
        "all week",
        "- laptop from {x} IT arrived\n- badge works\n- already 14 jira tickets assigned on "
        "day 2 😅",
        "signed the offer, starting at {x} on monday",
        "new job at {x}, backend team, mostly go + postgres",
        "heads up I'm at {x} now, so my old work email is dead",
        "status:\n- handed in my notice at the old place\n- joined {x} this week as staff eng\n"
        "- new 1:1 cadence tbd",
        "first PR merged at {x} 🚀 new gig feels good so far",
        "not {y}, I ended up taking the {x} offer. started this week",
        "A: Noted, you now work at {x}.",
        "switched jobs → {x}. update my bio pls",
        "1:1 with my new manager at {x} went fine, still figuring out their monorepo",
    ],
    "drink": [
        "switched my daily caffeine to {x}, the old setup was wrecking my sleep",
        "- {x} every morning now\n- standing desk\n- trying to actually take lunch breaks",
        "new default drink: {x}. the office machine finally does it properly",
        "on a {x} kick lately, like 3 a day",
        "my go-to is {x} now, fyi if you're suggesting cafés",
        "daily routine v2:\n- 7am run\n- {x} instead of my usual\n- deep work till 11",
        "not {y}, it's {x}. that's what I drink now, you had it wrong last time",
        "bought the whole setup for {x} at home, fully committed now",
        "A: Updated: your usual drink is now {x}.",
        "ordered {x} again. guess that's my thing now",
        "dropped the old habit, it's {x} all day these days",
    ],
    "partner": [
        "personal: seeing someone new, {x} 🙂 early days but good",
        "- {x} and I are official\n- planning a trip for spring\n- need gift ideas lol",
        "been dating {x} for a few weeks now, going well",
        "{x} and I made it official last night. ok back to debugging",
        "relationship status: with {x}. that's the update",
        "A: That's lovely, I'll remember that you're with {x} now.",
        "typo: my partner is {x}, not {y}. autocorrect 🙄",
        "started going out with {x}, they're a designer, we met at a meetup",
        "weekend recap\n- hiking\n- first proper date with {x}, we're together now\n- fixed "
        "the flaky CI test",
        "update: {x} is my partner now, add them to the birthday reminders pls",
    ],
    "car": [
        "- bought a {x}\n- sold the old one on marketplace\n- insurance sorted",
        "picked up my {x} from the dealer today 🚗",
        "new whip: {x}. yes I'm that person now",
        "traded in the old car for a {x}, 40k km on it",
        "driving a {x} now, so expect fewer 'train delayed' messages",
        "car update: went with the {x} after all",
        "not the {y}, ended up buying the {x}. better deal",
        "A: Noted, your car is now a {x}.",
        "status\n- {x} registered in my name\n- parking permit pending\n- winter tyres booked",
        "my {x} arrived, took it for a spin after standup",
        "swapped cars, it's a {x} now. mileage is way better",
    ],
}
ASK_NOW_HELD17: dict[str, list[str]] = {
    "home": [
        "where am I based rn?",
        "which city do I live in these days?",
        "remind me, what's my current city?",
    ],
    "employer": [
        "who's my employer atm?",
        "where do I work now?",
        "which company am I at currently?",
    ],
    "drink": [
        "what's my usual drink these days?",
        "what do I drink most rn?",
        "my go-to drink atm?",
    ],
    "partner": [
        "who am I dating now?",
        "what's my partner's name again?",
        "who's my partner at the moment?",
    ],
    "car": [
        "what car do I drive now?",
        "which car is mine atm?",
        "what am I driving these days?",
    ],
}
ASK_THEN_HELD17: dict[str, list[str]] = {
    "home": [
        "where was I living {t}?",
        "which city was I based in {t}?",
        "quick q: what city did I live in {t}?",
    ],
    "employer": [
        "where was I working {t}?",
        "who was my employer {t}?",
        "which company was I at {t}?",
    ],
    "drink": [
        "what was my usual drink {t}?",
        "what was I drinking {t}?",
    ],
    "partner": [
        "who was I with {t}?",
        "who was my partner {t}?",
        "who was I dating {t}?",
    ],
    "car": [
        "what car did I have {t}?",
        "what was I driving {t}?",
        "which car was mine {t}?",
    ],
}
CHATTER_HELD17 = [
    "flying to {city} for a conf next week, any food recs?",
    "my brother just started at {org}, small world",
    "recruiter call w/ {org} tmrw just to see, not planning to leave",
    "tried {drink} at the offsite. meh, not for me",
    "{partner} from the platform team bought a {car}, won't stop talking about it",
    "PROJ-4821 blocked again, waiting on the {org} API team https://status.example.com",
    "is {city} expensive to live in? asking for a friend (the friend is hypothetical me)",
    "my parents still live in {city}, visiting them over xmas",
    "rented a {car} for the trip, it was fine",
    "- standup notes\n- INC-2231 postmortem\n- oncall handoff to {partner}",
    "saw {org} laid off 20% 😬 https://news.ycombinator.com/item?id=41234567",
    "if I ever got a {car} would a bike fit in the back?",
    "my sister's drink of choice is {drink}, got her a tin for her birthday",
    "conf talk accepted! it's in {city} in october",
    "PR #1187 finally green. flaky test was a timezone bug, as always",
    "does {org} have an office in {city}?",
    "what's a good gift for someone who loves {drink}?",
    "6h layover in {city}, worth leaving the airport?",
    "my friend {partner} moved to {city} last month, jealous tbh",
    "reading the {org} eng blog on their rust migration, good stuff: "
    "https://example.com/blog/rust-migration",
    "ordered {drink} by accident at lunch, not my thing",
    "pairing with {partner} on the rate limiter today",
    "dad's thinking about getting a {car}. thoughts on reliability?",
    "café in {city} had the best {drink} I've ever had, only there for a day though",
    "oncall this week. pager went off at 3am for a disk full alert 🙃",
    "can you summarise RFC-042 for me? https://wiki.internal/rfc/042",
    "- gym\n- grocery run\n- fix the dotfiles repo",
    "A: Here's the gist of the ticket you pasted: the retry logic double-counts timeouts.",
    "someone from {org} at the meetup was hiring, took their card",
    "thinking about a weekend in {city}, is march too cold?",
    "my cousin drives a {car} and swears by it",
    "laptop fan sounds like a jet engine. time to kill some docker containers",
    "A: Reminder: {partner}'s farewell drinks are on thursday.",
    "teammate brought {drink} to the retro, it was decent",
]


# A twentieth family (`--wordings held18`), written blind on 2026-11-25 by a helper session
# (brief r3s11/held18) without reading the extractor, the context code, the tests, the docs or
# the other families' texts: a user who writes English as a second language, mixing Spanish-,
# German- and Indian-English habits (word order turned round, articles dropped or added, "since
# two months I am ...", "I am working in X only", "my husband and me we ...", "shifted to",
# "picked the car"), about ordinary topics, with a few corrections, the assistant's short
# acknowledgements ("A: ") and chatter about relatives', friends' and colleagues' homes, jobs,
# cars and drinks, trips, wishes and questions.
SAY_HELD18: dict[str, list[str]] = {
    "home": [
        "Since two weeks I am living in {x}, the flat is small but the light is very nice.",
        "Finally we have shifted to {x}! All the boxes are still in the corridor.",
        "My husband and me we moved to {x} last weekend, is very cold here compared to before.",
        "Now I am staying in {x} itself, the new address I will give you later for the letters.",
        "We are not anymore in the old flat, since this month we live in {x}.",
        "Please correct: I live in {x}, not in {y}. I wrote it wrong before, sorry.",
        "A: Okay, I have noted that your home is now in {x}.",
        "The moving company has brought everything to {x} yesterday, only one chair is broken.",
        "In {x} I found finally a flat, two rooms with balcony, I am here since Monday.",
        "Is so strange to wake up in {x} now, I still take the wrong way to the supermarket.",
        "I have registered my new residence in {x} today at the town hall, so now is official.",
    ],
    "employer": [
        "Since two months I am working in {x} only, as backend developer.",
        "I have joined {x} on Monday, people are very friendly but the onboarding is too long.",
        "From this month my company is {x}. The old one I have left, was too much stress.",
        "My first day at {x} was today! They gave me laptop and one plant for the desk.",
        "Now I am employee of {x}, can you help me to write a small introduction for the team?",
        "A: Congratulations on the new position at {x}! Tell me if you want help with the "
        "first week.",
        "I am doing my job in {x} since the 1st, is a big change from before.",
        "They made me the offer at {x} and I accepted, so now every day I go there by train.",
        "My employer is {x} now, not {y}. With {y} was only the interview, I did not take it.",
        "In the new office of {x} the coffee machine is already broken, welcome to new job haha.",
        "I signed the contract with {x} and started this week, the manager seems a good person.",
    ],
    "drink": [
        "Since some weeks I am drinking only {x}, the doctor said less sugar.",
        "I changed to {x} in the mornings, my stomach is more happy now.",
        "Every day now I take {x}, is becoming my habit without I notice.",
        "For me it is {x} always now, my husband he laughs about it.",
        "My colleague showed me {x} and now I cannot stop, three times a day I drink it.",
        "A: Got it, {x} is your usual drink now. I'll keep that in mind for café suggestions.",
        "No more of the old stuff, from now I want {x} only. Where I can buy a good one?",
        "Please remember my drink is {x} now. Not {y}, {y} I tried one time and did not like.",
        "Whole year I was drinking different things but since this month is {x} every morning.",
        "I bought everything for making {x} at home, so now I have it daily.",
        "My daily drink has become {x}, even in the office I bring it in my bottle.",
    ],
    "partner": [
        "I am together with {x} since two months, I think this time is serious.",
        "{x} and me we are a couple now! I am very happy, I wanted to tell someone.",
        "I have a new partner, {x}, we met in the salsa class of my cousin.",
        "Me and {x} we decided to be together officially, we told already to our families.",
        "{x} is my partner now, so please when I say 'we' it means me and {x}.",
        "A: That's lovely news about you and {x}. How did you two meet?",
        "Yesterday {x} asked me to be in relationship and I said yes of course!",
        "We got married! {x} and me, small ceremony only with the family, maybe party later.",
        "I am going out with {x} now, since the birthday party at my friend's house.",
        "My partner is {x}, not {y}. {y} is only colleague, please don't mix.",
        "With {x} I am in a relationship since this month, first time I am so sure of someone.",
    ],
    "car": [
        "Since last week I am driving a {x}, second hand but very good condition.",
        "We bought a {x}! My husband and me we took it from the dealer today.",
        "Finally I sold the old car and got a {x}, is much more comfortable.",
        "My new car is {x}, grey colour, I am still learning where are all the buttons.",
        "I have taken a {x} on leasing for three years, starting from this month.",
        "A: Nice, enjoy the new {x}! Do you want me to remind you about the first service?",
        "Now I go to work with my {x}, no more waiting for the bus in the rain.",
        "Today I picked the {x} from the showroom, I was so excited I drove one hour for nothing.",
        "The car I have now is {x}. Not {y}, {y} was only the test drive.",
        "How often I must change the oil in a {x}? I just bought one.",
        "Since the beginning of month I am owning a {x}, the insurance was more than I thought.",
    ],
}
ASK_NOW_HELD18: dict[str, list[str]] = {
    "home": [
        "Where I am living now?",
        "Which city is my home at the moment, can you remind me?",
        "In what city I stay these days?",
    ],
    "employer": [
        "For which company I am working now?",
        "Remind me please, where is my job currently?",
        "What is the name of my present employer?",
    ],
    "drink": [
        "What I am drinking normally these days?",
        "Which drink is my usual one now?",
        "What is my daily drink at the moment?",
    ],
    "partner": [
        "Who is my partner now?",
        "With whom I am together currently?",
        "Who I am in relationship with these days?",
    ],
    "car": [
        "Which car I am driving now?",
        "What car I have at the moment?",
        "Which model is my car currently?",
    ],
}
ASK_THEN_HELD18: dict[str, list[str]] = {
    "home": [
        "Where I was living {t}?",
        "{t}, in which city I was staying?",
        "Which city was my home {t}?",
    ],
    "employer": [
        "For which company I was working {t}?",
        "Where I had my job {t}?",
        "{t} who was my employer, do you know?",
    ],
    "drink": [
        "What I was drinking {t}?",
        "Which drink was my usual {t}?",
        "What was my daily drink {t}?",
    ],
    "partner": [
        "With whom I was together {t}?",
        "Who was my partner {t}?",
        "{t} I was in relationship with whom?",
    ],
    "car": [
        "Which car I was driving {t}?",
        "What car I had {t}?",
        "{t}, what was my car?",
    ],
}
CHATTER_HELD18 = [
    "My sister is living in {city} since many years, she wants that I visit her in summer.",
    "Next month I have a conference in {city}, can you suggest cheap hotel near the centre?",
    "My brother-in-law he works in {org}, he says salary is good but the manager is terrible.",
    "Is {org} a good company to work? I saw one job opening there.",
    "Tried {drink} today in the café downstairs, was okay but is not for me.",
    "My neighbour bought a {car}, he is showing it to everybody in the street.",
    "{partner} from my yoga class invited us for dinner on Saturday.",
    "If I would have more money I would buy a {car}, but is only a dream.",
    "We were in {city} for the long weekend, too many tourists but the food was very good.",
    "How is the weather normally in {city} in November?",
    "My mother-in-law drinks only {drink}, she brings her own when she visits us.",
    "I read in the news that {org} is doing layoffs, is it true?",
    "Today was very long day, I am just tired, nothing special.",
    "How to say 'sorry for the late reply' more polite in an email to my boss?",
    "My cousin is getting married with {partner} in September, we must buy a present.",
    "Maybe one day I want to live in {city}, I like very much the old town.",
    "The kids have holidays next week, I don't know what to do with them whole day.",
    "My friend rented a {car} for the trip to {city}, it was very small for four people.",
    "Do you know if {org} has an office in {city}?",
    "A: Here is the recipe you asked for. Tell me if you need the quantities for four people.",
    "At the office party they served {drink}, I took one glass only to be polite.",
    "My old school friend {partner} is coming to visit, we have not seen since ten years.",
    "Please help me to write a complaint to the landlord, the heating is not working since "
    "three days.",
    "My father still drives his old {car}, he refuses to change it.",
    "I am thinking to do a course in data science, what you think, is it too late at my age?",
    "We watched a documentary about {city} yesterday, now my husband wants to go there.",
    "A: {city} is lovely in spring: the old town is easy to walk and there are good day trips.",
    "My colleague left to {org} last month, now our team is very small.",
    "Should I try {drink}? Everybody on Instagram is drinking it.",
    "Is raining since the morning, I stay at home whole day with a book.",
    "The {car} of my boss has a scratch and he thinks I did it, I did not!",
    "My daughter's teacher, {partner}, said she is doing very well in maths.",
]


# A twenty-first family (`--wordings held19`), written blind on 2026-11-25 by a helper session
# (brief r3s12/held19) without reading the extractor, the context code, the tests, the docs or
# the other families' texts: a busy software developer who uses the assistant as a work
# companion in a terminal, in terse, lower-case, telegraphic notes and commands with
# abbreviations and typos (tickets, standups, laptops, VPNs, timezones, payroll forms,
# commutes); the change is often a side remark inside a work request or a status line, some
# messages run over several lines, and questions about themselves are asked indirectly.
SAY_HELD19: dict[str, list[str]] = {
    "home": [
        "update my tz to whatever {x} is. moved there last wk, still living out of boxes",
        "standup notes:\n- JIRA-4412 blocked on review\n- ooo thu/fri, moving to {x}\n- no "
        "blockers otherwise",
        "vpn keeps dropping since the move. new flat in {x}, isp router is garbage. how do i "
        "force wireguard mtu to 1380?",
        "payroll wants the adress change form. new address is in {x}. whats the diff between "
        "'fiscal residence' and 'domicile' on this thing",
        "status: relocated to {x}. commute is 12 min by bike now instead of 50 on the train lol",
        "fyi i live in {x} now, not {y}. typed the wrong city earlier",
        "ok move is done, {x} from today. remind me to update my github location + the hr system",
        "signed the lease in {x} finaly. anyway can u help me debug this docker compose, "
        "postgres container wont come up",
        "home internet in {x} connected at last (took 3 wks). ping to eu-west-1 is 18ms, nice",
        "A: Got it, you've moved to {x}. I'll use that for your local time and commute questions "
        "from now on.",
        "lol forgot to tell u, we moved. {x}. new place has an actual office room so no more "
        "coding on the couch",
        "shipping my monitor to the new apt in {x}, or is it cheaper to just buy a new one? 27in "
        "4k, ~2 yrs old",
    ],
    "employer": [
        "first day at {x} tmrw. need to set up the laptop: brew, nvm, pyenv. give me a bootstrap "
        "script",
        "standup:\n- last day at the old place was fri\n- onboarding at {x} all week\n- no "
        "tickets yet, just reading the monorepo",
        "signed the offer from {x}. notice period is 1 month so i start on the 1st",
        "new employer = {x}. need to redo the payroll forms + tax code. whats a P45 again",
        "ugh {x} makes everyone use okta + some custom vpn client. 2 days in and still cant get "
        "2fa working on linux, any tips",
        "started at {x} this week (not {y}, turned that one down). team is 6 ppl, backend is go",
        "status: employed again, {x}, platform team",
        "pls rewrite my linkedin headline: backend eng @ {x}, previously freelance-ish",
        "A: Congrats on the new role at {x}! Want me to draft a 30-60-90 day plan for your first "
        "months there?",
        "switched jobs. {x} now. commute is worse but the pay is way better",
        "laptop from {x} arrived (m3 pro), old work one goes back to IT fri. how do i move my "
        "dotfiles w/o dragging the old company's ssh keys along",
    ],
    "drink": [
        "quit coffee lol. on {x} now, 2-3 a day. still sleepy at the 3pm standup tho",
        "note to self: order more {x}, last box. its basically all i drink at my desk now",
        "switched to {x} bc the coffee machine on our floor died, and honestly i like it better",
        "my new thing is {x}, replaced the 4pm energy drink habit. productivity ok so far",
        "standup:\n- pairing w/ sam on the auth refactor\n- flaky e2e test still flaky\n"
        "(unrelated: gone full {x}, there's a kettle on my desk now)",
        "i drink {x} now, not {y}. fix that in ur notes",
        "A: Noted, {x} is your go-to drink these days instead of coffee.",
        "gave up on the office coffee. {x} from now on",
        "how much caffeine is in 4 cups of {x}/day? thats my daily intake now, want to know if "
        "its too much",
        "been drinking {x} every morning for like 2 wks. way better than the 3 coffees i used to "
        "have",
        "bought a proper setup for making {x} at home. wfh days are so much better",
    ],
    "partner": [
        "ooo fri, taking {x} to the coast for the wknd. we're officially together now so yeah",
        "need to add {x} as emergency contact in the hr portal. we're together now, figured it "
        "should be them and not my mum",
        "status: in a relationship w/ {x} :) anyway back to the k8s thing",
        "started seeing {x}. dinner tmrw so i need to leave at 6 sharp, remind me to push before",
        "calendar: block sat for {x}'s bday. first one as a couple, dont let me forget a gift",
        "my partner is {x} now, not {y}. no idea where u got that name",
        "moving in w/ {x} maybe next yr, for now we're just dating. how do ppl split rent fairly "
        "if salaries are v different?",
        "A: That's lovely news about you and {x}! I'll keep it in mind when you plan time off.",
        "{x} and i are officially a thing. they say my mech keyboard is too loud on calls lol",
        "got together w/ {x} last wk. need a gift idea under 50 eur, they like board games",
        "wfh today, {x} (my partner, new-ish) is off sick so i'm on soup duty between tickets",
    ],
    "car": [
        "bought a {x}. used, 60k km. how do i get carplay to work with my work phone without mdm "
        "complaining",
        "status: car owner again, {x}. drive to the office is 25 min now",
        "picked up the {x} today. need to add it to the parking permit form at work, what plate "
        "format do they want",
        "sold the old car, got a {x}. insurance quote is insane, is 1100/yr normal?",
        "my car is a {x} now, not a {y}. update that",
        "standup:\n- deploy went fine\n- in late tmrw, collecting my {x} from the dealer at 9",
        "A: Nice, enjoy the {x}! Want me to set a reminder for its first service?",
        "drive a {x} now. office garage wants the reg number for the badge system, where do i "
        "find it in the papers",
        "new wheels: {x}. the old one died on the motorway last month, long story",
        "is the {x} ok for 2h commutes? already bought it lol so pls say yes",
        "expense form asks for vehicle make/model for mileage claims: {x} (got it this week)",
    ],
}
ASK_NOW_HELD19: dict[str, list[str]] = {
    "home": [
        "where am i based rn? need it for the tz in my calendar",
        "which city do i live in these days?",
        "remind me where i'm living now, filling in a form",
        "current location pls, for the shipping address",
    ],
    "employer": [
        "who do i work for atm?",
        "which company am i at now",
        "whats my current employer? payroll form again",
    ],
    "drink": [
        "what do i usually drink these days",
        "whats my go-to drink rn? ordering for the office",
        "what's in my mug most days now?",
    ],
    "partner": [
        "who am i seeing these days?",
        "who's my partner now",
        "remind me who my s/o is, the emergency contact field wants a name",
    ],
    "car": [
        "what am i driving now?",
        "which car do i have atm? need make+model for the parking form",
        "what car is mine these days",
    ],
}
ASK_THEN_HELD19: dict[str, list[str]] = {
    "home": [
        "where was i living {t}?",
        "which city was i based in {t}? need it for a tax thing",
        "where did i live {t}",
    ],
    "employer": [
        "who was i working for {t}?",
        "which company employed me {t}? filling out a background check",
        "where was i employed {t}",
    ],
    "drink": [
        "what was i drinking {t}?",
        "what was my usual drink {t}",
        "what did i have in my mug {t}",
    ],
    "partner": [
        "who was i with {t}?",
        "who was i dating {t}",
        "who was my partner {t}?",
    ],
    "car": [
        "what was i driving {t}?",
        "which car did i have {t}",
        "what car did i own {t}? insurance wants my history",
    ],
}
CHATTER_HELD19 = [
    "my brother just got a job at {org}, asked me to review his cv. can u help",
    "flying to {city} for a conf next month, best area to stay near the venue?",
    "recruiter from {org} pinged me again on linkedin. not interested but whats their eng "
    "culture like?",
    "tried {drink} at the offsite today. meh",
    "my manager drives a {car} and wont shut up about it",
    "{partner} from the qa team is out this week so i'm covering their tickets",
    "what time is it in {city} rn? call w/ a client there in 10",
    "news: {org} laid off 20% apparently. glad i'm not there",
    "if i ever moved to {city} would i need a visa to work remote for a us company?",
    "sister moved to {city} last wk, helping her set up wifi over zoom lol",
    "deploy failed again. rollback. sigh",
    "write a bash one-liner to find files >100mb in ~",
    "colleague's {car} got towed from the office lot lmao",
    "dad's thinking of buying a {car}, is it reliable?",
    "standup:\n- PR #231 merged\n- investigating memory leak in the worker\n- no blockers",
    "team lunch, everyone ordered {drink} except me",
    "would love to work at {org} someday tbh, their oss stuff is great",
    "mate of mine, {partner}, just started at {org}. small world",
    "weekend trip to {city}, any good coffee places near the old town?",
    "reminder: renew passport before it expires, its in the drawer under the router",
    "my mum keeps sending me articles about {city} house prices, she wants to retire there",
    "got an interview w/ {org} on thu, not sure i'd even take it. mock sys design q pls?",
    "rental car in {city} was a {car}. drove fine, wouldnt buy one",
    "is {drink} actually healthier than coffee or is that just marketing",
    "A: Here's the regex: ^[A-Z]+-\\d+$ matches ticket keys like ABC-123.",
    "slack is down. again.",
    "{partner}'s bday party on sat, friend from uni. what do i bring",
    "coworker in the {city} office says the vpn is fine there, only ours is broken",
    "pls summarize this rfc in 3 bullets",
    "neighbour just got a {car}, parks it across my spot every time",
    "timezone math: standup is 9:30 {city} time, what is that in utc",
    "might try {drink} tmrw, the barista at the place downstairs recommended it",
    "ex-colleague now at {org} says they're hiring senior backend. tempted? nah",
]


# A twenty-second family (`--wordings held20`), written blind on 2026-11-25 by a helper session
# (brief r3s12/held20) without reading the extractor, the context code, the tests, the docs or
# the other families' texts: a voice-assistant user whose messages are speech-to-text
# transcripts (run-on sentences, little punctuation, fillers, self-corrections, numbers as
# spoken, a few mis-heard words such as "witch" or "four"), the change told in passing among
# the day, the kids and cooking, a couple of the assistant's confirmations ("A: "), spoken
# questions, and chatter about relatives', friends' and neighbours' homes, jobs, cars and drinks,
# trips, plans and wishes.
SAY_HELD20: dict[str, list[str]] = {
    "home": [
        "okay so um we got the keys today and we're officially in {x} now the kids already "
        "picked their rooms so yeah",
        "hey can you remind me to change my address on the uh the bank thing because I moved to "
        "{x} last weekend and everything still goes to the old place",
        "so we're living in {y} no sorry {x} I always mix those two up we live in {x} now since "
        "like Saturday",
        "um set a timer for twenty minutes for the lasagna and also we're all settled in {x} "
        "now the new kitchen is tiny but whatever it works",
        "ugh unpacking is the worst we been in {x} a week now and I still can't find the good "
        "knives they're in some box somewhere",
        "hey what's the weather gonna be tomorrow in {x} that's where I live now by the way we "
        "moved",
        "the kids start at the new school Monday witch is like a ten minute walk from our new "
        "apartment here in {x} so that's nice",
        "so yeah the big news is we relocated to {x} it was a whole thing with the least and "
        "the movers but we're finally here",
        "my mom keeps asking when she can come see the new place in {x} and I'm like let me at "
        "least get the curtains up first you know",
        "find me a pediatrician near me um I just moved to {x} and I don't really know anybody "
        "here yet",
        "A: Okay, I've updated your home city to {x}. Congratulations on the move!",
        "okay note to self we live in {x} now so I gotta update like the Amazon address and the "
        "uh the dentist and the school forms",
    ],
    "employer": [
        "so first day at {x} went okay I think um my badge didn't work and I sat in the lobby "
        "for like forty minutes but yeah I'm in",
        "hey remind me to pack a lunch tomorrow because {x} doesn't have a cafeteria like my "
        "old job did",
        "um I took the offer from {x} and I've been working there since Monday it's a lot more "
        "money and the commute is whatever",
        "so I started at {y} wait no {x} sorry I interviewed at both of them I'm at {x} it's "
        "been two weeks already",
        "can you help me write a uh a short hello for the team chat I just joined {x} as like a "
        "senior analyst and I wanna say hi to everyone",
        "the kids were asking what I do at my new job and I said I work at {x} now and they "
        "just said oh okay and went back to their cartoon",
        "so yeah I handed in my notice at the old place and um I'm with {x} now since the first "
        "of the month",
        "traffic was awful this morning and it's only my second week at {x} so I really really "
        "didn't want to be late again",
        "okay add to the calendar uh onboarding training Thursday at nine that's four {x} my "
        "new job",
        "A: Noted, you're working at {x} now. Good luck in the new role!",
        "honestly working for {x} is so much better than where I was before my manager actually "
        "like answers emails",
        "hey so I got the job at {x} and I already started so can you stop sending me those job "
        "listing things",
    ],
    "drink": [
        "so I quit coffee basically it's all {x} now and my stomach feels way better honestly",
        "add {x} to the shopping list I go through it like crazy these days it's my morning "
        "thing now",
        "um I've switched to {x} in the mornings because the doctor said cut back on the uh the "
        "other stuff",
        "my husband makes fun of me but I'm totally on {x} now like every single day I can't stop",
        "so yeah I make myself {x} every morning before the kids get up it's like my five "
        "minutes of peace",
        "my go to is {y} oh no actually not anymore it's {x} now I changed like a few weeks back",
        "hey how much caffeine is in {x} because that's what I drink every day now instead of "
        "my old thing",
        "order more {x} the big pack um I'm having it like three times a day since I switched",
        "I don't really do my old drink anymore it's {x} for me these days my sister got me hooked",
        "the barista knows my order now it's {x} every morning no questions asked it's kind of "
        "embarrassing",
        "so um new habit I'm drinking {x} instead of what I used to have and it's been great "
        "for my sleep",
    ],
    "partner": [
        "so um me and {x} are official now like we had the talk and everything so yeah I'm "
        "seeing someone",
        "hey help me plan something cute for our one month it's me and {x} we just got together",
        "okay so after the breakup I wasn't gonna date for a while but then I met {x} and we're "
        "together now so",
        "so my partner is um {y} no sorry that's my cousin's wife I'm so tired it's {x} my "
        "partner is {x}",
        "the kids really like {x} which is a relief because we've been together a few weeks now "
        "and I was so nervous about introducing them",
        "um remind me {x}'s birthday is coming up that's who I'm with now we've been dating a "
        "couple months",
        "so yeah I've been dating {x} for a bit now and it's serious I think like they might be "
        "the one honestly",
        "me and {x} cooked that curry you gave me last night it came out great it's the first "
        "time we cooked together as a couple",
        "um I'm with {x} now we met at my friend's barbecue and we just like clicked you know",
        "hey what's a good gift for my partner {x} we've only been together a month so nothing "
        "too crazy",
        "my mom finally met {x} today and she liked them which is huge because she hated my ex",
    ],
    "car": [
        "so we traded in the old car and got a {x} um the kids are obsessed with the big screen",
        "picked up the {x} from the dealership today it's mine now finally so yeah",
        "hey how often do I need to service a {x} because that's what I drive now",
        "okay um I bought a {y} oh no sorry a {x} I always say the wrong one it's a {x} used "
        "but really clean",
        "the new car's a {x} and um parking it at school pickup is so much easier than with the "
        "old one",
        "so I'm driving a {x} now my brother sold me his when he moved and I gave him like a "
        "good price",
        "remind me to call the insurance about the {x} I just bought so it's covered before Monday",
        "ugh the {x} needs a wash already I've only had it a week and the kids got cheerios "
        "everywhere",
        "we finally got rid of the old car so it's a {x} now for the family stuff and honestly "
        "it's great",
        "uh can you tell me how to pair my phone with a {x} I just got one and the blue tooth "
        "is confusing",
        "so yeah I'm a {x} owner now as of this morning signed all the paperwork and everything",
    ],
}
ASK_NOW_HELD20: dict[str, list[str]] = {
    "home": [
        "hey so where am I living now again",
        "um what city am I in these days remind me",
        "okay where's home for me right now like what town",
    ],
    "employer": [
        "hey who do I work for right now",
        "um where am I working these days",
        "what company am I at currently",
    ],
    "drink": [
        "hey what do I usually drink these days",
        "um what's my like go to drink right now",
        "what am I drinking in the mornings lately",
    ],
    "partner": [
        "hey who am I with right now like who's my partner",
        "um who am I seeing these days",
        "who's my other half at the moment",
    ],
    "car": [
        "what car do I drive these days",
        "um what am I driving right now",
        "hey what's my car at the moment",
    ],
}
ASK_THEN_HELD20: dict[str, list[str]] = {
    "home": [
        "hey where was I living {t}",
        "um what city did I live in {t}",
        "where was home for me {t}",
    ],
    "employer": [
        "who was I working for {t}",
        "um where did I work {t}",
        "what company was I at {t} do you remember",
    ],
    "drink": [
        "what was I drinking {t}",
        "um what was my usual drink {t}",
        "what did I have in the mornings {t}",
    ],
    "partner": [
        "who was I with {t}",
        "um who was I dating {t}",
        "who was my partner {t}",
    ],
    "car": [
        "what was I driving {t}",
        "um what car did I have {t}",
        "which car was mine {t}",
    ],
}
CHATTER_HELD20 = [
    "my sister just moved to {city} for her husband's job and she already hates the rain there",
    "hey what's there to do in {city} with kids we're going for a long weekend",
    "um my buddy got hired at {org} and he won't stop talking about the free snacks",
    "we tried {drink} at the cafe by the park today it was okay I don't think I'd get it again",
    "my dad's thinking about buying a {car} what do you think is it reliable",
    "is {org} hiring right now just curious my cousin's looking",
    "my neighbor {partner} backed their new {car} into the recycling bins this morning it was "
    "hilarious",
    "set a timer for twelve minutes for the pasta",
    "okay so the kids have soccer at four thirty and then I gotta make dinner what's something "
    "quick with chicken and rice",
    "if we ever moved to {city} would the kids need to learn another language or",
    "my brother in law works at {org} and he says they're doing layoffs is that in the news",
    "we had {drink} at my in-laws and my mother in law kept going on about how healthy it is",
    "remind me to call the plumber tomorrow the kitchen sink is leaking again",
    "um what's the news today anything big",
    "my friend {partner} is visiting from {city} next week where should we take them for dinner",
    "I rented a {car} on vacation one time and honestly it was kind of fun to drive",
    "hey do you know if {org} is a good company to work for like what are the reviews",
    "someday I wanna live somewhere like {city} near the water you know",
    "the kids spilled juice all over the couch again so yeah that was my morning",
    "what's the difference between {drink} and regular coffee like caffeine wise",
    "my coworker {partner} just got engaged we're doing a little cake thing for them Friday",
    "we drove up to {city} for my nephew's graduation it was like five hours each way",
    "um how do I get crayon off a painted wall asking for a friend",
    "{partner} from the PTA asked if I could bake something for the sale I said sure I guess",
    "my uncle just retired from {org} after like thirty years and they gave him a watch",
    "should I get a {car} if I ever replace mine what are they like in the snow",
    "hey play some music for cooking something upbeat",
    "my best friend swears by {drink} but I just don't get it",
    "the conference is in {city} in the fall I might go if work pays for it",
    "my teenager wants a {car} for her first car like no way we're not made of money",
    "so the dog got out again and ran like three blocks and I was chasing him in my slippers",
    "they're opening a {org} office downtown I saw it in the paper",
    "how long does it take to fly from here to {city} roughly",
    "um what should I make for my mom's birthday dinner she likes fish but not salmon",
]


# A twenty-third family (`--wordings held21`), written blind on 2026-11-25 by a helper session
# (brief r3s12/held21) without reading the extractor, the context code, the tests, the docs or
# the other families' texts: a software engineer who talks to the assistant between tasks in
# lower-case shorthand (slack-style status lines, git/CI and on-call jargon, timezone and expense
# admin, tz/wfh/ooo/pto/rn/tbh, a few typos), the change told as a status line or a one-line
# aside, a couple of the assistant's confirmations ("A: "), terse indirect questions, and
# chatter about teammates', flatmates' and family's homes, jobs, cars and drinks, trips,
# offsites, recruiters, news and wishes.
SAY_HELD21: dict[str, list[str]] = {
    "home": [
        "status: ooo thu/fri, moving flats. new addr is in {x}, will update it in workday when "
        "i'm back",
        "ok the move is done. living in {x} as of saturday. router's still in a box so "
        "hotspotting off my phone rn",
        "can you tell me what tz {x} is in? just moved there and my calendar shows everything "
        "an hour off",
        "fyi i put {y} on the expense form by mistake, the new place is in {x}. moved there last "
        "week, need to fix my home address before finance bounces it",
        "signed the lease in {x}!! flatmate situation tbd but at least the commute is 20 min",
        "wfh from the new flat in {x} today, boxes everywhere, the desk is a ironing board lol",
        "need to update my home location in the on-call rota, i'm in {x} now not the old place. "
        "who owns the pagerduty config again",
        "A: Noted, your home is in {x} now. Want me to switch your calendar's default timezone "
        "to match?",
        "day 3 in {x}. found a decent bakery, still no idea which bin the recycling goes in",
        "relocation expense q: movers to {x} came to 1840 eur, is that under the cap or do i need "
        "vp approval",
        "finally unpacked the last box. {x} is home now i guess. upstairs neighbour practises "
        "drums at 11pm which is a vibe",
        "handed back the keys to the old flat. new place is in {x}, same rent more light. my "
        "sister says i'll regret the stairs",
    ],
    "employer": [
        "first day at {x} tomorrow. laptop arrived, sso doesn't work yet, classic",
        "accepted the offer from {x}. giving notice monday, pls help me write a not-awkward "
        "resignation msg",
        "onboarding at {x} is wild, 47 repos and none of the READMEs build. day 2 of my new job",
        "new slack workspace new me. i'm at {x} now btw, platform team",
        "signed the contract with {x}, starting on the 3rd. negotiated an extra 5 days pto which "
        "tbh i didn't expect to get",
        "recruiter from {y} pinged again, told them i already joined {x} last month. they will "
        "not stop",
        "my first pr at {x} got merged. 3 line change, 40 comments. welcome to the monorepo",
        "A: Congrats on starting at {x}! I'll keep that in mind when you ask about work.",
        "leaving drinks were yesterday, v hungover. start at {x} on monday, need to sort the new "
        "2fa",
        "update my linkedin headline pls, something like 'backend eng @ {x}' but less cringe",
        "got my badge photo taken today, officially a {x} employee. the photo is terrible",
        "expense q: does {x} reimburse home office stuff? i just started there and the handbook "
        "is 90 pages",
    ],
    "drink": [
        "switched to {x} for the afternoon slump, the machine on 3 is broken anyway and tbh i "
        "feel better for it",
        "ok new regime, it's {x} from now on. my heart rate during incidents was getting silly",
        "ordered a bulk pack of {x} to my desk, expensing it as 'team morale'",
        "standup ran long so i'm on my second {x} already. it's my thing now",
        "daily {x} habit fully locked in. the guy at the corner place knows my order",
        "gave up on {y}, it was doing nothing for me. {x} every morning now",
        "A: Got it, {x} is your go-to drink these days. I'll stop suggesting other places.",
        "my drink these days is {x}, before anyone asks what's in the mug on camera",
        "office kitchen stocks {x} and i've had it every day since. converted",
        "been on {x} for a couple weeks now, haven't touched the old stuff",
        "rip my old order. it's {x} now, every day, no notes",
        "teammate got me hooked on {x}, now i make one before every standup",
    ],
    "partner": [
        "ooo friday, taking {x} to the coast for our first weekend away. yes we're official now",
        "so i'm seeing someone. {x}. met at a friend's bbq, going well tbh",
        "{x} moved in with me last weekend, half the wardrobe is gone and i regret nothing",
        "A: That's lovely news about you and {x}. Should I add their birthday to your calendar?",
        "pto request for the 14th-15th, my partner {x}'s sister is getting married and i'm the "
        "plus one",
        "ok it's official, {x} and i are together. told my mum, she somehow already knew",
        "had our 3rd date last night, me and {x}. think this is a thing now",
        "i typo'd it as {y} earlier, it's {x}. the person i'm dating. pls keep up lol",
        "swapping my on-call saturday bc {x} and i have a date night thing. new relationship, "
        "trying not to cancel on them",
        "been dating {x} for a month now so i'd really like to not get paged on weekends",
        "{x} is my partner now, so change my emergency contact to them instead of my dad",
        "my bf/gf status changed lol. it's {x}. we made it official over dumplings",
    ],
    "car": [
        "picked up the {x} today. used, 60k km, smells like someone else's dog",
        "sold the old car, bought a {x}. parking at the office is still a nightmare though",
        "ooo this afternoon, collecting my new {x} from the dealer",
        "A: Nice, you're driving a {x} now. Want a reminder for its first service?",
        "insurance for the {x} is due, it's mine as of last week. quote is way higher than the "
        "last car",
        "finally a car person. got a {x}, second hand, my dad checked it over",
        "was gonna go for a {y} but ended up with a {x}, better boot space for the climbing gear",
        "mileage claim q: i drive my own {x} to the datacenter now, what's the per-km rate",
        "new (to me) {x} in the driveway. kid next door asked if it's fast, i said no comment",
        "bought a {x} off a guy at work, 3k, no regrets so far",
        "parking permit form wants my plate, i just got a {x} and haven't memorised it yet",
        "registered the {x} in my name today. bye bike commute",
    ],
}
ASK_NOW_HELD21: dict[str, list[str]] = {
    "home": [
        "where am i based rn?",
        "what city do i live in these days",
        "filling in a tax form, remind me which city i'm in now",
    ],
    "employer": [
        "who's my employer rn",
        "which company am i at now?",
        "need it for a form: what company do i currently work for",
    ],
    "drink": [
        "what's my usual drink these days?",
        "what do i drink most days now",
        "my go-to drink rn?",
    ],
    "partner": [
        "who am i with these days?",
        "who's my partner now",
        "remind me who i'm dating rn",
    ],
    "car": [
        "what do i drive rn",
        "which car do i have now?",
        "what car is mine these days, need it for the parking form",
    ],
}
ASK_THEN_HELD21: dict[str, list[str]] = {
    "home": [
        "where did i live {t}?",
        "which city was i in {t}",
        "{t}, what city was home?",
    ],
    "employer": [
        "where was i working {t}?",
        "who was i employed by {t}",
        "background check q: which company was i at {t}",
    ],
    "drink": [
        "what was i drinking {t}?",
        "{t}, what was my usual drink",
        "what was my go-to drink {t}",
    ],
    "partner": [
        "who was i seeing {t}?",
        "who was my partner {t}",
        "{t}, who was i dating",
    ],
    "car": [
        "what did i drive {t}?",
        "which car did i have {t}",
        "{t}, what car was i driving",
    ],
}
CHATTER_HELD21 = [
    "ci is red again on main, someone force-pushed over the lockfile",
    "on-call handover: 2 pages overnight, both the flaky disk alert. snoozed till monday",
    "flying to {city} on the 12th for the offsite, what tz are they in vs me",
    "my flatmate just got a job at {org}, she's insanely happy about it",
    "tried {drink} at the offsite, not for me tbh",
    "my brother bought a {car}, keeps sending me pics of it like it's a baby",
    "{partner} from the data team is leaving, we're doing a card",
    "what's {org}'s eng culture like? got a recruiter email, not planning to move, just curious",
    "thinking about a long weekend in {city} in spring, any neighbourhoods worth staying in",
    "expense report rejected again bc the receipt was 'illegible'. it's a photo of a receipt",
    "my mum's visiting from {city} next week so i'll be wfh a lot",
    "if i ever moved to {city} would my salary even cover rent lol",
    "teammate's {car} got towed from the office lot, we all feel bad and also it's hilarious",
    "pto approved for the 23rd to the 2nd. actually going to switch slack off this time",
    "office kitchen ran out of everything except {drink}, grim",
    "news says {org} is laying off 10%, hope my uni friends there are ok",
    "dad's thinking of getting a {car}, told him to test drive it first",
    "my sister moved to {city} for her phd, we're in the same tz for once",
    "k8s upgrade postponed to next sprint, nobody's surprised",
    "rn i'm just trying to get through the quarter tbh",
    "incident retro at 3, need to write the timeline before then",
    "what's the weather doing in {city} this week? conf is there thu-fri",
    "{partner} from my climbing group got a {car}, nicest car in our whole friend group",
    "someone at {org} open-sourced a really nice tracing lib, might try it in our stack",
    "flatmate brought home some {drink}, apparently it's the new thing. had a sip, jury's out",
    "gonna rewrite the deploy script in python, bash has betrayed me for the last time",
    "lunch with an old coworker who's at {org} now, she says they're hiring",
    "would you ever get a {car}? not seriously, just window shopping",
    "my cousin's wedding is in {city} in june, need to book flights before they get silly",
    "standup notes: blocked on review, pls someone look at my pr",
    "is it weird to drink {drink} after 6pm? teammate swears by it",
    "{partner} from the old team just moved to {city} with their family, wfh permanently now",
    "tz math is killing me, the team in {city} starts when i'm eating dinner",
    "laptop fan is screaming, pretty sure it's the docker vm again",
    "my landlord wants to 'pop round' at 9am on a tuesday. no.",
]

# A twenty-fourth family (`--wordings held22`), written blind on 2026-11-25 by a helper session
# (brief r3s12/held22) without reading the extractor, the context code, the tests, the docs or
# the other families' texts: a busy parent dictating to a phone assistant, as speech-to-text
# writes it down: no capitals but names, run-on sentences joined by "and then" and "so",
# fillers (uh, like, okay so), homophones and misheard words (there/their, were/we're,
# too/to, weak/week, right/write), with the kids, the school run, the in-laws, the neighbours
# and friends in most lines; the questions are asked by voice.
SAY_HELD22: dict[str, list[str]] = {
    "home": [
        "okay so uh note that we moved to {x} on saturday and then the kids wanted pizza on the "
        "floor of the empty living room so that was dinner",
        "remind me to change our address with the school because we live in {x} now and the "
        "new term starts on the ninth",
        "so the move is done were in {x} now and then my mother in law rang to ask if the beds "
        "are up yet which no they are not",
        "uh we got the keys for the house in {x} yesterday and moved everything in today so "
        "thats us living there now and the neighbour came round with a lasagne which was nice",
        "okay so my ex wanted the kids to stay near {y} but we ended up moving to {x} because "
        "of the schools and honestly i think it was the right call",
        "new address is in {x} so can you like remember that for me were officially living "
        "there since tuesday",
        "we live in {x} now by the way",
        "A: Got it, you and the kids have moved to {x}. I'll treat that as home from now on.",
        "so we've moved too {x} and the kids started at there new school this week and then my "
        "old neighbour texted to say the street is too quiet without us",
        "okay so todays the day we officially live in {x} the van left at seven and we drove "
        "behind it the whole way with the kids asking are we there yet like every five minutes",
        "moving day was a nightmare but were settled in {x} now and then my in laws came to "
        "stay for the weekend to help unpack so you know how that went",
        "uh put down that home is {x} now we sold the old place and the removal men finished "
        "this morning so its just boxes and a very confused dog",
    ],
    "employer": [
        "okay so first day at {x} went fine and then i was late for pick up so my neighbour "
        "grabbed the twins for me bless her",
        "uh remember i work at {x} now i started on monday",
        "so i got the job at {x} and then i told the kids and they just asked if that means "
        "they get more screen time",
        "started my new job at {x} this week so the school run is my mother in laws on "
        "tuesdays and thursdays now",
        "so i turned down {y} in the end and took the offer from {x} instead start date was "
        "the third and its going good so far",
        "new job new me i'm at {x} now and then the after school club wants my new work number "
        "so remind me to send it",
        "okay so i'm officially a {x} employee as of today got my badge and everything and the "
        "car park is like a mile from the door",
        "A: Noted, you've started working at {x}. Good luck with the new role.",
        "uh so i left the old place on friday and started at {x} this morning and then had too "
        "rush back for the nativity play which my new boss was actually fine about",
        "i'm with {x} now by the way the contract got signed last week and the commute is way "
        "better for drop off",
        "so my sister in law works in hr and she put me forward and i got it i've been working "
        "for {x} since the fifteenth",
        "weak one at {x} done and dusted and then i fell asleep on the sofa at half eight with "
        "the kids still up",
    ],
    "drink": [
        "okay so i've swapped my morning coffee for {x} and then the kids tried a sip and made "
        "the funniest faces",
        "uh i basically live on {x} now like three a day at my desk",
        "so i'm drinking {x} these days instead of the old stuff and my mother in law thinks "
        "its a fad",
        "note that my usual drink is {x} now the neighbour got me into it over the garden fence "
        "of all places",
        "so i tried {y} at the soft play cafe and it was horrible so i had {x} instead which is "
        "honestly my every day drink now",
        "{x} is my go to now so add another pack to the shopping list",
        "A: Okay, {x} is your regular drink now. I'll remember that.",
        "so uh the school mums all go for a coffee after drop off and i just get {x} every time "
        "now thats my drink these days",
        "okay so new habit i've been having {x} every morning since the kids went back to "
        "school and honestly i feel way less jittery",
        "so like i switched too {x} full time and then my father in law asked if it was a diet "
        "thing which rude",
        "i only drink {x} now remind me to buy more on the way back from swimming",
        "uh my sister got me hooked on {x} when she stayed over and now its all i drink in the "
        "mornings",
    ],
    "partner": [
        "okay so uh i'm seeing someone now it's {x} and then the kids met them on sunday at the "
        "park and it went ok i think",
        "so {x} and me are officially together now and my sister said about time",
        "so i've started going out with {x} properly now and then my ex found out from the "
        "kids before i could tell him which great",
        "A: That's lovely news about you and {x}. I'll remember that you're together now.",
        "okay so my partner is {x} now and we told my mum and dad at sunday lunch and nobody "
        "choked on a roast potato so",
        "uh everyone thought i'd end up with {y} from the pta but actually i'm with {x} now we "
        "made it official on friday",
        "so me and {x} are a thing now and the babysitter is booked every other friday for date "
        "night",
        "note for later {x} is my other half now",
        "so {x} moved in with me and the kids this weekend and then the cat hid under the bed "
        "for two days",
        "okay so i've been dating {x} for a few weeks and its serious now so yeah were together",
        "got together with {x} after the school quiz night of all places and then we had our "
        "first proper date yesterday while the in laws had the kids",
        "uh so the neighbours saw {x} leaving this morning so i guess everyone knows were "
        "together now",
    ],
    "car": [
        "okay so we bought a {x} on saturday and then the kids argued about who gets to sit in "
        "the front",
        "uh i drive a {x} now so update that",
        "so the old car failed its mot and i picked up a second hand {x} from a dealer near my "
        "in laws",
        "new car is a {x} fits all the car seats just about",
        "A: Noted, you're driving a {x} now.",
        "so i nearly went for a {y} but the boot was too small for the buggy so we got the {x} "
        "instead",
        "okay so i collected the {x} this morning and then did the school run in it and one of "
        "the dads at the gate was like nice wheels",
        "my car is a {x} now the lease started on monday",
        "so the neighbours helped me put the roof bars on the {x} we just bought and then we "
        "all had a barbecue",
        "uh traded in the old one and got a {x} its the family car now",
        "so i'm driving a {x} these days and the school run is ten minutes quicker because i "
        "can actually park it",
        "finally bought the {x} outright so its ours now and no more borrowing my mother in "
        "laws car on saturdays",
    ],
}
ASK_NOW_HELD22: dict[str, list[str]] = {
    "home": [
        "hey where do we live now",
        "uh what city am i living in at the moment",
        "okay so which city is home these days",
    ],
    "employer": [
        "where do i work these days",
        "uh who's my employer at the moment",
        "okay so what company am i working for now",
    ],
    "drink": [
        "what do i usually drink these days",
        "whats my go to drink right now",
        "uh what's my regular drink at the moment",
    ],
    "partner": [
        "who am i going out with now",
        "who's my partner these days",
        "okay so who am i with at the moment",
    ],
    "car": [
        "what car am i driving now",
        "uh what do i drive these days",
        "which car have we got at the moment",
    ],
}
ASK_THEN_HELD22: dict[str, list[str]] = {
    "home": [
        "where were we living {t}",
        "uh which city did i live in {t}",
        "okay so where was home {t}",
    ],
    "employer": [
        "where was i working {t}",
        "uh who did i work for {t}",
        "hey which company was i at {t}",
    ],
    "drink": [
        "what was i drinking {t}",
        "uh what was my usual drink {t}",
        "okay so what did i like to drink {t}",
    ],
    "partner": [
        "who was i seeing {t}",
        "uh who was my partner {t}",
        "okay so um who was i going out with {t}",
    ],
    "car": [
        "what car did i have {t}",
        "uh what was i driving {t}",
        "hey which car did we drive {t}",
    ],
}
CHATTER_HELD22 = [
    "okay so my sister in law just moved to {city} with the twins and wants us to visit at "
    "half term",
    "remind me the school trip to {city} needs the consent form back by friday",
    "uh whats the whether like in {city} this weekend were driving up for my nephews christening",
    "so my neighbour got a job at {org} and now she can't do the school run on wednesdays so i "
    "need a plan b",
    "is {org} a good company to work for my brother in law has an interview there next week",
    "okay so the kids dad bought a {car} and now they think my car is boring",
    "my father in law keeps going on about his {car} like its a member of the family",
    "tried {drink} at the school fete and honestly never again",
    "so my friend {partner} from baby group is coming over tomorrow with the little one",
    "{partner} from next door has offered to feed the cat while were away",
    "remind me to get a birthday present for {partner}s little boy hes turning five",
    "uh add nappies wipes bread and milk to the shopping list",
    "what time does the swimming lesson finish on thursday",
    "set a timer for twenty minutes for the fish fingers",
    "okay so if i ever got offered something at {org} would i have to move",
    "we might go to {city} for a long weekend in may if my mum can have the dog",
    "my mother in law only drinks {drink} and she brings her own to our house like we don't "
    "have a kettle",
    "read me the news about {org} something about job cuts the mums were talking about it at "
    "the gate",
    "how far is {city} from here by car with two toilet stops",
    "so my best friend just bought a {car} and i'm a bit jealous not going to lie",
    "if we won the lottery i'd get a {car} and a cleaner in that order",
    "uh the neighbours are selling there {car} should i tell my cousin",
    "my brother lives in {city} and he says the rent there is mad now",
    "okay so i'm doing the school rum tomorrow so dont book anything before nine",
    "right down that the dentist is on the twelfth at four fifteen",
    "okay so the in laws are flying back from {city} on sunday and need picking up from the "
    "airport",
    "we had {drink} at my friends house and the kids wanted some too so that was a fun bedtime",
    "is {drink} ok for kids or has it got caffeine in it",
    "so {partner} at work got engaged and we're all chipping in for a present",
    "my cousin got an offer from {org} in {city} and can't decide whether to take it",
    "what's a good thing to do in {city} with a six year old and a toddler",
    "uh cancel that last reminder the party got moved",
    "so apparently my ex is seeing {partner} now which is fine totally fine",
    "the neighbours {car} alarm went off at three in the morning again and woke the baby",
    "book the car in for a service next tuesday morning after drop off",
]


# The held-out families by name: what each tells the changes with, asks, and chatters.
HELD_OUT: dict[
    str, tuple[dict[str, list[str]], dict[str, list[str]], dict[str, list[str]], list[str]]
] = {
    "held": (SAY_HELD, ASK_NOW_HELD, ASK_THEN_HELD, CHATTER_HELD),
    "held2": (SAY_HELD2, ASK_NOW_HELD2, ASK_THEN_HELD2, CHATTER_HELD2),
    "held3": (SAY_HELD3, ASK_NOW_HELD3, ASK_THEN_HELD3, CHATTER_HELD3),
    "held4": (SAY_HELD4, ASK_NOW_HELD4, ASK_THEN_HELD4, CHATTER_HELD4),
    "held5": (SAY_HELD5, ASK_NOW_HELD5, ASK_THEN_HELD5, CHATTER_HELD5),
    "held6": (SAY_HELD6, ASK_NOW_HELD6, ASK_THEN_HELD6, CHATTER_HELD6),
    "held7": (SAY_HELD7, ASK_NOW_HELD7, ASK_THEN_HELD7, CHATTER_HELD7),
    "held8": (SAY_HELD8, ASK_NOW_HELD8, ASK_THEN_HELD8, CHATTER_HELD8),
    "held9": (SAY_HELD9, ASK_NOW_HELD9, ASK_THEN_HELD9, CHATTER_HELD9),
    "held10": (SAY_HELD10, ASK_NOW_HELD10, ASK_THEN_HELD10, CHATTER_HELD10),
    "held11": (SAY_HELD11, ASK_NOW_HELD11, ASK_THEN_HELD11, CHATTER_HELD11),
    "held12": (SAY_HELD12, ASK_NOW_HELD12, ASK_THEN_HELD12, CHATTER_HELD12),
    "held13": (SAY_HELD13, ASK_NOW_HELD13, ASK_THEN_HELD13, CHATTER_HELD13),
    "held14": (SAY_HELD14, ASK_NOW_HELD14, ASK_THEN_HELD14, CHATTER_HELD14),
    "held15": (SAY_HELD15, ASK_NOW_HELD15, ASK_THEN_HELD15, CHATTER_HELD15),
    "held16": (SAY_HELD16, ASK_NOW_HELD16, ASK_THEN_HELD16, CHATTER_HELD16),
    "held17": (SAY_HELD17, ASK_NOW_HELD17, ASK_THEN_HELD17, CHATTER_HELD17),
    "held18": (SAY_HELD18, ASK_NOW_HELD18, ASK_THEN_HELD18, CHATTER_HELD18),
    "held19": (SAY_HELD19, ASK_NOW_HELD19, ASK_THEN_HELD19, CHATTER_HELD19),
    "held20": (SAY_HELD20, ASK_NOW_HELD20, ASK_THEN_HELD20, CHATTER_HELD20),
    "held21": (SAY_HELD21, ASK_NOW_HELD21, ASK_THEN_HELD21, CHATTER_HELD21),
    "held22": (SAY_HELD22, ASK_NOW_HELD22, ASK_THEN_HELD22, CHATTER_HELD22),
}


def make_user(rng: random.Random, attributes: list[str], wordings: str = "old") -> User:
    """One user's eighteen months: changes of each attribute, chatter, and questions, told in
    the first family of wordings (``old``), the second (``new``), either (``all``), or the
    held-out third (``held``), fourth (``held2``), fifth (``held3``), sixth (``held4``),
    seventh (``held5``), eighth (``held6``), ninth (``held7``), tenth (``held8``), eleventh
    (``held9``), twelfth (``held10``), thirteenth (``held11``), fourteenth (``held12``),
    fifteenth (``held13``), sixteenth (``held14``), seventeenth (``held15``), eighteenth
    (``held16``), nineteenth (``held17``), twentieth (``held18``), twenty-first
    (``held19``), twenty-second (``held20``), twenty-third (``held21``) or twenty-fourth
    (``held22``)."""
    say, ask_now, ask_then, chatter = SAY, ASK_NOW, ASK_THEN, CHATTER
    if wordings in HELD_OUT:
        say, ask_now, ask_then, chatter = HELD_OUT[wordings]
    elif wordings != "old":
        both = wordings == "all"
        say = {a: (SAY[a] if both else []) + SAY_NEW[a] for a in SAY}
        ask_now = {a: (ASK_NOW[a] if both else []) + ASK_NOW_NEW[a] for a in ASK_NOW}
        ask_then = {a: (ASK_THEN[a] if both else []) + ASK_THEN_NEW[a] for a in ASK_THEN}
        chatter = (CHATTER if both else []) + CHATTER_NEW
    u = User()
    span = (NOW - START).days - 20
    events: list[tuple[float, str]] = []
    for attr in attributes:
        values = rng.sample(POOLS[attr], rng.randint(2, 4))
        days = sorted(rng.sample(range(0, span, 25), len(values)))
        days[0] = rng.randint(0, 10)
        history = []
        for day, value in zip(days, values, strict=True):
            ts = (START + timedelta(days=day, hours=rng.randint(8, 21))).timestamp()
            history.append((ts, value))
            template = rng.choice(say[attr])
            # {y}: a value of the same kind this user never has (a correction's first guess)
            other = (
                rng.choice([v for v in POOLS[attr] if v not in values]) if "{y}" in template else ""
            )
            if wordings == "held8":  # {xl}: the value in lower case; {d}: the message's date
                day_ = datetime.fromtimestamp(ts, UTC).strftime("%Y-%m-%d")
                text = template.format(x=value, y=other, xl=value.lower(), d=day_)
            else:
                text = template.format(x=value, y=other)
            events.append((ts, text))
        u.history[attr] = history
    for _ in range(rng.randint(50, 80)):
        ts = (START + timedelta(days=rng.uniform(0, span))).timestamp()
        fill = {"city": rng.choice(CITIES), "org": rng.choice(EMPLOYERS),
                "drink": rng.choice(DRINKS)}  # fmt: skip
        # (drawn only here, so the other families stay as they were)
        held = ("held", "held2", "held3", "held4", "held5", "held6", "held7", "held8", "held9",
                "held10", "held11", "held12", "held13", "held14", "held15", "held16", "held17",
                "held18", "held19", "held20", "held21", "held22")  # fmt: skip
        if wordings in held:
            fill |= {"car": rng.choice(CARS), "partner": rng.choice(PARTNERS)}
        if wordings == "held8":  # the lower-case forms, as typed on a phone (no draw)
            fill |= {k + "l": v.lower() for k, v in fill.items()}
        line = rng.choice(chatter).format(**fill)
        events.append((ts, line))
    events.sort()
    for n, (ts, text) in enumerate(events):
        session = datetime.fromtimestamp(ts, UTC).strftime("s%Y%m%d")
        bead = {"content": text, "ts": ts, "session_id": session, "id": f"b{n:04d}"}
        if text.startswith("A: "):  # held3 on: the assistant's turn (a summary, a suggestion)
            bead |= {"content": text[3:], "role": "assistant"}
        u.beads.append(bead)
        if rng.random() < 0.3:  # an assistant reply now and then
            u.beads.append({"content": "That sounds good, thanks for telling me.",
                            "ts": ts + 30, "session_id": session, "role": "assistant",
                            "id": f"b{n:04d}r"})  # fmt: skip
    for attr in attributes:
        history = u.history[attr]
        values = [v for _, v in history]
        u.questions.append({"attr": attr, "q": rng.choice(ask_now[attr]), "when": "now",
                            "expect": history[-1][1], "values": values})  # fmt: skip
        # A past time well inside an earlier value's period (not the current one).
        for i, (since, value) in enumerate(history[:-1]):
            until = history[i + 1][0]
            for phrase, lo, hi in _phrases(rng, _mid(since, until)):
                if since + 3 * 86400 < lo and hi < until - 3 * 86400:
                    q = rng.choice(ask_then[attr]).format(t=phrase)
                    u.questions.append({"attr": attr, "q": q, "when": "then", "expect": value,
                                        "values": values})  # fmt: skip
                    break
    return u


def _mid(a: float, b: float) -> datetime:
    return datetime.fromtimestamp((a + b) / 2, UTC)


def first_named(text: str, values: list[str]) -> str | None:
    """The value ``text`` names first (case-insensitive), or None."""
    low = text.lower()
    found = [(low.find(v.lower()), v) for v in values if v.lower() in low]
    return min(found)[1] if found else None


# Which attribute each predicate of a derived fact says (for the precision of what is written).
FACT_ATTRIBUTE = {
    "lives_in": "home", "works_at": "employer", "drinks": "drink", "prefers": "drink",
    "favourite_drink": "drink", "partner": "partner", "married_to": "partner",
    "girlfriend": "partner", "boyfriend": "partner", "wife": "partner", "husband": "partner",
    "drives": "car",
}  # fmt: skip


def user_facts(mem: Memory, user: User) -> tuple[int, list[str]]:
    """How many facts about the user's five attributes were derived, and the wrong ones: a
    value the attribute never had (a trip taken for a home, a friend's employer, a drink tried
    once). Every version counts, superseded or not."""
    names = {n.id: n.name or "" for n in mem.all_nodes()}
    me = {mem.entity_id("user"), "user"}
    written, wrong = 0, []
    for edge in mem.all_edges(include_invalid=True):
        attr = FACT_ATTRIBUTE.get(edge.predicate)
        if attr is None or edge.derived_by is None or edge.source not in me:
            continue
        written += 1
        value = names.get(edge.target, edge.target)
        if value.lower() not in {v.lower() for _, v in user.history[attr]}:
            wrong.append(f"{edge.predicate} {value!r}")
    return written, wrong


def evaluate(
    users: int,
    seed: int,
    embedder: str,
    extractor: str,
    show_misses: bool = False,
    wordings: str = "old",
) -> dict[str, Any]:
    rng = random.Random(seed)
    attributes = list(POOLS)
    tally: dict[str, dict[str, list[int]]] = {
        name: {"now": [], "then": []} for name in ("context", "retrieve")
    }
    latencies: list[float] = []
    misses: list[dict[str, Any]] = []
    tokens: list[int] = []
    written, wrong = 0, []
    for n in range(users):
        user = make_user(rng, attributes, wordings)
        with (
            tempfile.TemporaryDirectory(prefix="facts-") as tmp,
            Memory.open(Path(tmp) / "m", sync=False, embedder=embedder, extractor=extractor,
                        summary_after=None) as mem,
        ):  # fmt: skip
            mem.append_beads(user.beads)
            mem.wait_indexed(timeout=300)
            mem.wait_learned(timeout=300)
            n_written, n_wrong = user_facts(mem, user)
            written += n_written
            wrong += [f"user {n}: {w}" for w in n_wrong]
            for q in user.questions:
                t0 = time.perf_counter()
                ctx = mem.context(q["q"], now=NOW)
                latencies.append((time.perf_counter() - t0) * 1000)
                tokens.append(ctx.tokens)
                got = first_named(ctx.text, q["values"])
                tally["context"][q["when"]].append(int(got == q["expect"]))
                if got != q["expect"] and show_misses:
                    misses.append({"user": n, **q, "got": got, "text": ctx.text})
                found = mem.retrieve(q["q"], k=10, now=NOW)
                named = first_named("\n".join(i.text for i in found.items), q["values"])
                tally["retrieve"][q["when"]].append(int(named == q["expect"]))
    out: dict[str, Any] = {
        "users": users, "seed": seed, "embedder": embedder, "extractor": extractor,
        "wordings": wordings,
        "context_ms_p50": round(sorted(latencies)[len(latencies) // 2], 2),
        "context_tokens_mean": round(sum(tokens) / max(1, len(tokens)), 1),
    }  # fmt: skip
    # Facts written about the user's attributes, and the share of them that are wrong.
    out["facts_written"] = written
    out["facts_wrong"] = len(wrong)
    out["facts_wrong_share"] = round(len(wrong) / max(1, written), 3)
    for name, by in tally.items():
        for when_, hits in by.items():
            out[f"{name}_{when_}"] = round(sum(hits) / max(1, len(hits)), 3)
            out[f"{name}_{when_}_n"] = len(hits)
    if show_misses:
        out["misses"] = misses
        out["wrong_facts"] = wrong
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--users", type=int, default=20)
    parser.add_argument("--seed", type=int, default=7)
    parser.add_argument("--embedder", default="deterministic")
    parser.add_argument("--extractor", default="rules")
    parser.add_argument("--quick", action="store_true", help="3 users (the suite runs this)")
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--show-misses", action="store_true")
    parser.add_argument(
        "--wordings", default="old",
        choices=("old", "new", "all", "held", "held2", "held3", "held4", "held5", "held6",
                 "held7", "held8", "held9", "held10", "held11", "held12", "held13", "held14",
                 "held15", "held16", "held17", "held18", "held19", "held20", "held21",
                 "held22"),
        help="which family of wordings tells the changes and asks (SAY_NEW; SAY_HELD and "
        "SAY_HELD2 to SAY_HELD22: never used to tune)",
    )  # fmt: skip
    args = parser.parse_args(argv)
    users = 3 if args.quick else args.users
    out = evaluate(users, args.seed, args.embedder, args.extractor, args.show_misses, args.wordings)
    if args.json:
        print(json.dumps(out, indent=2))
        return 0
    show: Callable[[str], str] = lambda k: f"{out[k]:.3f} (n={out[k + '_n']})"  # noqa: E731
    print(f"changing facts: {users} users, seed {args.seed}, embedder={args.embedder}, "
          f"extractor={args.extractor}, wordings={args.wordings}")  # fmt: skip
    print(f"  context : now {show('context_now')}  then {show('context_then')}  "
          f"p50 {out['context_ms_p50']} ms, {out['context_tokens_mean']} tokens")  # fmt: skip
    print(f"  retrieve(k=10): now {show('retrieve_now')}  then {show('retrieve_then')}")
    print(f"  facts about the user written {out['facts_written']}, wrong "
          f"{out['facts_wrong']} ({out['facts_wrong_share']:.3f})")  # fmt: skip
    for line in out.get("wrong_facts", []):
        print(f"  wrong fact: {line}")
    for miss in out.get("misses", []):
        print(f"\n--- user {miss['user']} {miss['q']!r} expect {miss['expect']} got {miss['got']}")
        print(miss["text"])
    return 0


if __name__ == "__main__":
    sys.exit(main())
