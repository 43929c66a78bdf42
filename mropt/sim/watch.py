"""What watches a run while it goes: its progress bar, its wall-clock limit and Ctrl-C.

A :class:`Watch` handed to :class:`mropt.sim.engine.Simulation` is looked at by the event loop
at the end of an instant once at least :data:`EVERY` events have passed since the last look
(one integer comparison per instant otherwise: the loop is not measurably slower, and an
instant is a consistent state to stop in). At each look, :meth:`Watch.check`:

* returns ``"time_limit"`` once ``time_limit`` seconds of wall-clock time have passed since the
  run started (:meth:`Watch.begin`), ``"interrupted"`` once Ctrl-C was pressed, else None; the
  engine then stops (``Simulation.stopped``) and the run's tables hold what happened so far;
* redraws the progress bar, at most every :data:`REDRAW` seconds.

The third way to stop, ``until`` (a simulated time), is the engine's own (one float comparison
per instant: :attr:`Simulation.until`).

**Ctrl-C** (with ``stop_on_interrupt``, which ``mropt simulate`` sets): from :meth:`begin` to
:meth:`end` a SIGINT handler only notes the press (the handler of the main thread; another
thread gets none); the run stops at the next look, tells ``stream`` so, and returns what
happened. A second Ctrl-C raises :class:`KeyboardInterrupt` at once (a policy stuck in one long
decision never reaches a look), and nothing of the run is kept. Without ``stop_on_interrupt``
(the Python API's default) Ctrl-C raises :class:`KeyboardInterrupt` as usual, so a script that
runs many simulations stops as a whole.

**The bar** (``progress``): tqdm on ``stream`` (stderr), its position the simulated time against
the last job's submit time (or ``until`` when earlier: where the run will end), with the events
processed and the jobs finished; past the last submit it stays full while the rest of the
work drains, the simulated time still counting in its text. ``mropt simulate`` draws it only
when stderr is a terminal, and never with ``--no-progress``.
"""

from __future__ import annotations

import signal
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from types import FrameType
from typing import TYPE_CHECKING, Any, TextIO

if TYPE_CHECKING:
    from mropt.sim.engine import Simulation

#: the ways a run stops before its last event (the summary's ``stopped``; None: it ran to the end)
UNTIL, TIME_LIMIT, INTERRUPTED = "until", "time_limit", "interrupted"
STOPS = (UNTIL, TIME_LIMIT, INTERRUPTED)
#: events between two looks of the loop at the watch (a look is a clock read, some microseconds)
EVERY = 4096
#: seconds between two redraws of the bar
REDRAW = 0.2


class Watch:
    """The progress bar, the wall-clock limit and Ctrl-C of one run (module docstring)."""

    def __init__(
        self,
        *,
        time_limit: float | None = None,
        progress: bool = False,
        stop_on_interrupt: bool = False,
        stream: TextIO | None = None,
        clock: Callable[[], float] = time.perf_counter,
        every: int = EVERY,
    ) -> None:
        self.time_limit = time_limit
        self.progress = progress
        self.stop_on_interrupt = stop_on_interrupt
        self.stream = stream
        self.clock = clock
        self.every = every
        self.interrupted = False
        self._started = 0.0
        self._drawn = 0.0
        self._bar: Any = None
        self._span = 0.0
        self._old_handler: Any = None
        self._handler_set = False

    # -- the engine's calls -----------------------------------------------------------------
    def begin(self, sim: Simulation) -> None:
        """The run starts: the clock, the SIGINT handler, the bar (in that order)."""
        self._started = self._drawn = self.clock()
        if self.stop_on_interrupt and threading.current_thread() is threading.main_thread():
            self._old_handler = signal.signal(signal.SIGINT, self._on_sigint)
            self._handler_set = True
        if self.progress:
            self._bar = _bar(sim, self.stream or sys.stderr)
            self._span = self._bar.total or 0.0

    def check(self, sim: Simulation) -> str | None:
        """A look at the end of an instant: the reason to stop now, or None (module docstring)."""
        now = self.clock()
        if self._bar is not None and now - self._drawn >= REDRAW:
            self._drawn = now
            self._draw(sim)
        if self.interrupted:
            self._say(f"interrupted at simulated time {sim.now:g} s: keeping what happened so far")
            return INTERRUPTED
        if self.time_limit is not None and now - self._started >= self.time_limit:
            self._say(f"time limit of {self.time_limit:g} s reached at simulated time {sim.now:g} s")
            return TIME_LIMIT
        return None

    def end(self, sim: Simulation) -> None:
        """The run ended (or failed): the SIGINT handler restored, the bar drawn a last time and closed."""
        if self._handler_set:
            signal.signal(signal.SIGINT, self._old_handler)
            self._handler_set = False
        if self._bar is not None:
            self._draw(sim, refresh=False)
            self._bar.close()  # (draws it a last time)
            self._bar = None

    # -- helpers ----------------------------------------------------------------------------
    def _on_sigint(self, signum: int, frame: FrameType | None) -> None:
        if self.interrupted:  # the second press: stop at once
            raise KeyboardInterrupt
        self.interrupted = True  # (nothing written here: the main thread may be inside a write)

    def _draw(self, sim: Simulation, refresh: bool = True) -> None:
        bar = self._bar
        bar.n = min(sim.now, self._span)  # set, not update()d: tqdm's rate is then n / elapsed
        bar.set_postfix_str(
            f"t {sim.now:,.0f} s, {sim.events:,} events, {sim.jobs_finished:,}/{len(sim.jobs):,} jobs finished",
            refresh=False,
        )
        if refresh:
            bar.refresh()

    def _say(self, text: str) -> None:
        if self.progress or self.stop_on_interrupt:
            if self._bar is not None:
                self._bar.write(f"mropt: simulate: {text}", file=self.stream or sys.stderr)
            else:
                print(f"mropt: simulate: {text}", file=self.stream or sys.stderr, flush=True)


def _bar(sim: Simulation, stream: TextIO) -> Any:
    """A tqdm bar over the simulated time up to the last submit (or ``until``, when earlier)."""
    from tqdm import tqdm  # only when a bar is drawn: tqdm is not imported by every run

    class Bar(tqdm):
        monitor_interval = 0  # no monitor thread: the loop redraws it

    span = max((j.submit for j in sim.jobs), default=0.0)
    if sim.until is not None:
        span = min(span, sim.until)
    return Bar(
        total=span if span > 0 else None,
        file=stream,
        desc="simulate",
        unit="s",
        dynamic_ncols=True,
        # (tqdm puts ", " before the postfix)
        bar_format="{desc}: {percentage:3.0f}%|{bar}| [{elapsed}<{remaining}]{postfix}"
        if span > 0
        else "{desc}: [{elapsed}]{postfix}",
    )


@contextmanager
def held_interrupts(hold: bool = True) -> Iterator[None]:
    """Ctrl-C held while the block runs, then raised (:class:`KeyboardInterrupt`) once it is done.

    For writes that a press must not cut in two: ``mropt simulate --out DIR --force`` writes
    its files into ``DIR`` one by one (:mod:`mropt.sim.outputs`), so a press among them would
    leave files of two runs. A block that raises is not followed by the held press. Nothing
    is held with ``hold`` false or off the main thread.
    """
    if not hold or threading.current_thread() is not threading.main_thread():
        yield
        return
    pressed: list[int] = []
    old = signal.signal(signal.SIGINT, lambda signum, frame: pressed.append(signum))
    try:
        yield
    finally:
        signal.signal(signal.SIGINT, old)
    if pressed:
        raise KeyboardInterrupt
