"""Red team of the read slots (`chrysalis.extract.worker.Foreground`, `Slots`): a read
interrupted while it waits, a `waiting` interrupted while it takes its slot back, `waiting`
nested or outside a read, a read nested inside `waiting`, a read that raises, a read left
open in a generator another thread closes, many threads at once. After each: exactly
``at_once`` reads compute at once (no slot lost, none made up) and none is counted in flight."""

from __future__ import annotations

import contextlib
import random
import signal
import threading
import time
from collections.abc import Callable, Iterator

import pytest

from chrysalis.extract.worker import Foreground
from tests.eventually import eventually

WAIT = 10.0
SHORT = 0.2  # long enough for a read that could get in to do so


class Interrupted(BaseException):
    """What a signal handler raises in the main thread (as Ctrl-C raises KeyboardInterrupt)."""


def queued(ground: Foreground) -> int:
    assert ground._slots is not None
    return len(ground._slots._waiting)


@contextlib.contextmanager
def interrupt_main_when(ready: Callable[[], bool]) -> Iterator[None]:
    """Raise `Interrupted` in the main thread (a signal, as Ctrl-C) once ``ready()`` holds."""
    if threading.current_thread() is not threading.main_thread():
        pytest.skip("signals are handled in the main thread only")
    fired = []

    def handler(signum: int, frame: object) -> None:
        if not fired:
            fired.append(signum)
            raise Interrupted

    def send() -> None:
        with contextlib.suppress(AssertionError):  # the test says what did not happen
            eventually(ready, timeout=WAIT, what="the main thread to wait")
        signal.pthread_kill(threading.main_thread().ident or 0, signal.SIGUSR1)

    old = signal.signal(signal.SIGUSR1, handler)
    sender = threading.Thread(target=send, daemon=True)
    try:
        sender.start()
        yield
    finally:
        sender.join(WAIT)
        signal.signal(signal.SIGUSR1, old)


def assert_admits(ground: Foreground, n: int) -> None:
    """Exactly ``n`` reads on other threads compute at once: n get in, one more waits."""
    inside, leave = threading.Semaphore(0), threading.Event()

    def hold() -> None:
        with ground.read():
            inside.release()
            leave.wait(WAIT)

    threads = [threading.Thread(target=hold, daemon=True) for _ in range(n + 1)]
    for t in threads:
        t.start()
    try:
        for i in range(n):
            assert inside.acquire(timeout=WAIT), f"only {i} of {n} reads got a slot: one was lost"
        assert not inside.acquire(timeout=SHORT), f"more than {n} reads computed at once"
    finally:
        leave.set()
    # With n = 0 the one more gets in once the caller's read ends: the caller waits for it.
    for t in threads if n else ():
        t.join(WAIT)


def finish(*threads: threading.Thread) -> None:
    for t in threads:
        t.join(WAIT)
        assert not t.is_alive()


def holder(ground: Foreground) -> tuple[threading.Thread, threading.Event, threading.Event]:
    """A thread holding a read's slot until ``leave`` is set."""
    entered, leave = threading.Event(), threading.Event()

    def hold() -> None:
        with ground.read():
            entered.set()
            leave.wait(WAIT)

    t = threading.Thread(target=hold, daemon=True)
    t.start()
    assert entered.wait(WAIT)
    return t, entered, leave


def test_a_read_interrupted_while_it_waits_for_a_slot_loses_none() -> None:
    """Ctrl-C in a library user's main thread queued for a slot: the slot the holder lets go
    must not go to the read that is no longer waiting."""
    ground = Foreground(at_once=1)
    t, _, leave = holder(ground)
    with (
        pytest.raises(Interrupted),
        interrupt_main_when(lambda: queued(ground) == 1),
        ground.read(),
    ):
        pytest.fail("computed without a slot")
    leave.set()
    finish(t)
    assert ground.reads == 0
    assert_admits(ground, 1)


def test_a_read_interrupted_while_it_takes_its_slot_back_releases_none_twice() -> None:
    """Ctrl-C while `waiting` takes the slot back: the read holds none, so it lets none go
    (else the next in line computes beside the holder)."""
    ground = Foreground(at_once=1)
    other_in = threading.Event()

    def other() -> None:
        with ground.read():
            other_in.set()

    with (
        pytest.raises(Interrupted),
        ground.read(),
        interrupt_main_when(lambda: queued(ground) == 2),
        ground.waiting(),
    ):
        t, _, leave = holder(ground)  # the slot let go is taken meanwhile
        o = threading.Thread(target=other, daemon=True)
        o.start()
        eventually(lambda: queued(ground), timeout=WAIT, what="another read to queue")
    assert not other_in.wait(SHORT), "two reads computed at once with one slot"
    leave.set()
    assert other_in.wait(WAIT)
    finish(t, o)
    assert ground.reads == 0
    assert_admits(ground, 1)


def test_waiting_nested_lets_the_one_slot_go_once() -> None:
    ground = Foreground(at_once=1)
    with ground.read(), ground.waiting(), ground.waiting():
        assert_admits(ground, 1)
    assert ground.reads == 0
    assert_admits(ground, 1)


def test_waiting_outside_a_read_lets_nothing_go() -> None:
    ground = Foreground(at_once=1)
    with ground.waiting():
        assert_admits(ground, 1)
    with ground.read():
        pass
    with ground.waiting():  # after a read ended on this thread too
        assert_admits(ground, 1)
    assert ground.reads == 0


def test_a_read_nested_inside_waiting_computes_in_a_slot() -> None:
    """Inside `waiting` the thread holds none: a read nested there waits its turn like any
    other (else it computes beside every slot's read)."""
    ground = Foreground(at_once=1)
    order: list[str] = []
    with ground.read(), ground.waiting():
        t, _, leave = holder(ground)

        def let_go() -> None:
            with contextlib.suppress(AssertionError):
                eventually(lambda: queued(ground), timeout=WAIT, what="the nested read to queue")
            order.append("holder out")
            leave.set()

        releaser = threading.Thread(target=let_go, daemon=True)
        releaser.start()
        with ground.read():
            order.append("nested in")
        finish(t, releaser)
    assert order == ["holder out", "nested in"]
    assert ground.reads == 0
    assert_admits(ground, 1)


def test_a_read_that_raises_lets_its_slot_go_and_the_next_takes_one() -> None:
    ground = Foreground(at_once=1)
    with pytest.raises(ValueError), ground.read():
        with pytest.raises(KeyError), ground.read():  # a nested one raising keeps the slot
            raise KeyError("inner")
        assert_admits(ground, 0)
        raise ValueError("outer")
    eventually(lambda: ground.reads == 0, timeout=WAIT, what="the reads to end")
    assert_admits(ground, 1)
    with ground.read():  # this thread's next read takes the slot again
        assert_admits(ground, 0)
    eventually(lambda: ground.reads == 0, timeout=WAIT, what="the reads to end")
    assert_admits(ground, 1)


def test_a_read_left_open_in_a_generator_closed_on_another_thread() -> None:
    """A generator suspended inside a read and closed (or collected) on another thread: the
    bookkeeping is the opening thread's, not the closing one's."""
    ground = Foreground(at_once=2)

    def reading() -> Iterator[None]:
        with ground.read():
            yield

    g = reading()
    next(g)  # this thread holds a slot, suspended
    closed = threading.Event()
    leave = threading.Event()

    def closer() -> None:
        with ground.read():  # the closer holds the other slot
            g.close()
            with ground.read():  # still nested in its own read: takes none
                closed.set()
                leave.wait(WAIT)

    c = threading.Thread(target=closer, daemon=True)
    c.start()
    try:
        assert closed.wait(WAIT)
        assert_admits(ground, 1)  # the closer holds one slot, the generator's went free
    finally:
        leave.set()
    finish(c)
    with ground.read():  # this thread's read is a first one again: it takes a slot
        assert_admits(ground, 1)
    assert ground.reads == 0
    assert_admits(ground, 2)


def test_many_threads_never_compute_more_than_at_once_and_lose_no_slot() -> None:
    """Reads nesting, waiting (a read nested inside the wait), raising, from many threads:
    never more than ``at_once`` compute at once; after, every slot is free again."""
    ground = Foreground(at_once=2)
    lock = threading.Lock()
    computing = [0, 0]  # now, most seen

    def count(by: int) -> None:
        with lock:
            computing[0] += by
            computing[1] = max(computing[1], computing[0])

    @contextlib.contextmanager
    def computes() -> Iterator[None]:
        count(1)
        try:
            yield
        finally:
            count(-1)

    def client(seed: int) -> None:
        rng = random.Random(seed)
        for _ in range(30):
            with contextlib.suppress(RuntimeError), ground.read():
                with computes():
                    time.sleep(rng.random() / 1000)
                    if rng.random() < 0.3:
                        with ground.read():  # in the same slot: no more computing
                            time.sleep(rng.random() / 1000)
                if rng.random() < 0.5:
                    with ground.waiting():
                        time.sleep(rng.random() / 1000)
                        if rng.random() < 0.3:
                            with ground.read(), computes():
                                pass
                with computes():
                    if rng.random() < 0.2:
                        raise RuntimeError("a failed read")

    threads = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(8)]
    for t in threads:
        t.start()
    finish(*threads)
    assert computing[1] <= 2, f"{computing[1]} reads computed at once with 2 slots"
    assert ground.reads == 0
    assert_admits(ground, 2)
