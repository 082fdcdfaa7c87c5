"""Cost of the credential scan per bead: `python bench/secrets_bench.py`.

Prints the median time of `secrets_scan.redact` over prose and code of 1 KiB, 64 KiB and
1 MiB: without a secret, with one (an AWS key) in the middle, and "hinted" (text that holds
every pattern's literal hint, e.g. URLs and the word aws, so every pattern runs: the worst case).
"""

from __future__ import annotations

import statistics
import time

from chrysalis.secrets_scan import redact

PROSE = (
    "The user prefers green tea in the morning and asked to deploy on Tuesdays. "
    "def handler(event): return {'status': 200, 'body': event.get('name')}\n"
)


HINTED = (
    "See https://example.com/docs for the aws setup; slack xox tokens, stripe k_live_ keys, "
    "mailchimp -us1 keys and npm _authToken lines are all described there.\n"
)


def text_of(size: int, secret: bool, base: str = PROSE) -> str:
    text = (base * (size // len(base) + 1))[:size]
    if secret:
        mid = size // 2
        text = text[:mid] + " AKIAIOSFODNN7EXAMPLE " + text[mid + 22 :]
    return text


def main() -> None:
    redact("warm up")
    for size, name in ((1024, "1 KiB"), (64 * 1024, "64 KiB"), (1024 * 1024, "1 MiB")):
        for label, text in (
            ("no secret", text_of(size, False)),
            ("one secret", text_of(size, True)),
            ("hinted", text_of(size, False, PROSE + HINTED)),
        ):
            runs = 50 if size < 1024 * 1024 else 7
            times = []
            for _ in range(runs):
                t0 = time.perf_counter()
                redact(text)
                times.append(time.perf_counter() - t0)
            ms = statistics.median(times) * 1000
            mb_s = size / statistics.median(times) / 1e6
            print(f"{name:>7} {label:<11} {ms:9.3f} ms  ({mb_s:6.1f} MB/s)")


if __name__ == "__main__":
    main()
