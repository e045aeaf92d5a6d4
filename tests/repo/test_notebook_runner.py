"""benchmarks/notebooks.py, the headless runner that executes the committed notebooks: its kernel client waits
for each message in short polls, so a message that reached the socket without waking a poll is still read."""

from __future__ import annotations

import asyncio
import sys
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from queue import Empty
from types import SimpleNamespace
from typing import Any

import pytest
import zmq
import zmq.asyncio
from jupyter_client.session import Session

ROOT = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(ROOT / "benchmarks"))

import notebooks  # noqa: E402


async def _get(timeout: float, *, reply_waiting: bool, miss_first_wakeup: bool,
               on_wait: Callable[[int], None] | None = None) -> tuple[dict | None, list[int]]:
    """``SlicedPollChannel.get_msg(timeout)`` on one end of a socket pair; the other end has sent an
    ``execute_reply`` before the call when ``reply_waiting``. With ``miss_first_wakeup`` the first poll sleeps
    through its whole wait and reports nothing, as a poll does whose wake-up was lost. ``on_wait(ms)`` is told
    each poll's wait once the poll is over. Returns the message (``None`` for ``Empty``) and the wait of each
    poll (ms)."""
    ctx = zmq.asyncio.Context()
    kernel, client = ctx.socket(zmq.PAIR), ctx.socket(zmq.PAIR)
    try:
        kernel.bind("inproc://runner-test")
        client.connect("inproc://runner-test")
        session = Session()
        channel = notebooks.SlicedPollChannel(client, session)
        if reply_waiting:
            session.send(kernel, "execute_reply", {"status": "ok"})
        waits: list[int] = []
        poll = client.poll

        async def recorded_poll(timeout: int | None = None, flags: int = zmq.POLLIN) -> int:
            waits.append(timeout)
            if miss_first_wakeup and len(waits) == 1:
                await asyncio.sleep(timeout / 1000)
                return 0
            ready = await poll(timeout, flags)
            if on_wait is not None:
                on_wait(timeout)
            return ready

        client.poll = recorded_poll
        try:
            msg = await channel.get_msg(timeout=timeout)
        except Empty:
            msg = None
        return msg, waits
    finally:
        kernel.close(linger=0)
        client.close(linger=0)
        ctx.term()


def _run(timeout: float, **kwargs: Any) -> tuple[dict | None, list[int]]:
    """:func:`_get` on an event loop of its own, in a thread of its own (a session's browser tests can leave
    a loop running in this one)."""
    with ThreadPoolExecutor(1) as pool:
        return pool.submit(lambda: asyncio.run(_get(timeout, **kwargs))).result()


def test_a_reply_whose_wakeup_was_lost_is_read_at_the_next_poll():
    msg, waits = _run(60, reply_waiting=True, miss_first_wakeup=True)
    assert msg is not None and msg["msg_type"] == "execute_reply" and msg["content"] == {"status": "ok"}
    # the lost wake-up cost one slice, not the 60 s the caller allowed
    assert waits == [notebooks.POLL_SLICE * 1000] * 2


def test_no_message_gives_empty_after_the_timeout_in_slices(monkeypatch):
    # the runner's clock moves on by exactly each poll's wait, so the slices do not depend on how long a
    # poll takes on a busy machine
    clock = [0.0]
    monkeypatch.setattr(notebooks, "time", SimpleNamespace(monotonic=lambda: clock[0]))

    def waited(ms: int) -> None:
        clock[0] += ms / 1000

    msg, waits = _run(1.25, reply_waiting=False, miss_first_wakeup=False, on_wait=waited)
    assert msg is None
    assert waits == [notebooks.POLL_SLICE * 1000] * 2 + [250]   # two whole slices, then what is left


@pytest.mark.parametrize("timeout", ["0", "-5"])
def test_timeout_below_one_second_is_refused(timeout, capsys, monkeypatch):
    monkeypatch.setattr(sys, "argv", ["notebooks.py", "--timeout", timeout])
    with pytest.raises(SystemExit) as stop:
        notebooks.main()
    assert stop.value.code == 2 and "--timeout: expected seconds >= 1" in capsys.readouterr().err
