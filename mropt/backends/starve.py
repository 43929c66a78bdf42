"""Test support: stop chosen solver calls at once, deterministically (fault injection).

An exact method must never claim an optimum or a bound its solver did not prove, even
when a solve is cut short (a CP-SAT master once stopped before its first solution
reported CP-SAT's unproven "bound" of 0, and the run ended ``optimal`` below the true
optimum). Timing cannot reproduce such a stop reliably; this module can::

    from mropt.backends.starve import starved

    with starved({3}) as run:  # the 3rd solver call of the block stops at once
        sol = mropt.registry.solve(instance, "cpsat")
    run.calls    # solver calls made in the block, every back end counted
    run.starved  # [(3, "cpsat")]: which calls were stopped, by which back end

``starved()`` with no selection only counts (the calls of an unstarved run); a
selection is a collection of call numbers (1-based, counted from the block's start) or
a predicate on the number. Every back-end solve of the process is counted, in the
order made: CP-SAT (:func:`mropt.backends.cpsat.solve`) and each PuLP solve through
:func:`mropt.backends.pulp.cbc_solver` or :func:`~mropt.backends.pulp.highs_solver`.
A stopped call is the solver's own outcome of a limit reached before any search, the
same on every run:

* CP-SAT: solved with a wall-clock and a deterministic time limit of 0 (status
  ``UNKNOWN``, no solution; CP-SAT then reports a "best bound" it has not proven);
* HiGHS: solved with a time limit of 0 (model status ``kTimeLimit`` before presolve:
  no proven bound, and no MIP solution);
* CBC: not run; the problem gets the status PuLP gives a CBC run stopped by its time
  limit before a first solution (``Not Solved``, no solution), since CBC itself may
  finish small problems in its root heuristics before it reads the clock.

The count is one global of the process (test support: one block at a time, not
across threads). Outside a block it costs one global read per solve.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Collection, Iterator
from dataclasses import dataclass, field
from typing import Any

Selection = Collection[int] | Callable[[int], bool]


@dataclass
class Starvation:
    """The solver calls of one :func:`starved` block: how many, and which were stopped."""

    select: Callable[[int], bool]
    calls: int = 0
    starved: list[tuple[int, str]] = field(default_factory=list)

    def tick(self, backend: str) -> bool:
        """Count one solve by ``backend``; True when it is to stop at once."""
        self.calls += 1
        if self.select(self.calls):
            self.starved.append((self.calls, backend))
            return True
        return False


#: the block in force (None: solves run as asked)
_active: Starvation | None = None


@contextlib.contextmanager
def starved(calls: Selection = ()) -> Iterator[Starvation]:
    """Within the block, stop the selected solver calls at once (module docstring)."""
    global _active
    if _active is not None:
        raise RuntimeError("starved() blocks do not nest")
    select = calls if callable(calls) else frozenset(calls).__contains__
    _active = Starvation(select)
    try:
        yield _active
    finally:
        _active = None


def starve_call(backend: str) -> bool:
    """Count one solve of ``backend`` (in a :func:`starved` block); True when it is to stop at once."""
    block = _active
    return block is not None and block.tick(backend)


def starvable(solver: Any, backend: str) -> Any:
    """``solver`` (a PuLP solver) made to count its solves and stop the selected ones at once.

    Outside a :func:`starved` block the solver is returned untouched.
    """
    if _active is None:
        return solver
    solve = solver.actualSolve

    def actual_solve(lp: Any, **kwargs: Any) -> Any:
        if not starve_call(backend):
            return solve(lp, **kwargs)
        if backend == "highs":
            solver.timeLimit = 0.0  # HiGHS's own stop: kTimeLimit before presolve
            return solve(lp, **kwargs)
        import pulp

        lp.assignStatus(pulp.LpStatusNotSolved, pulp.LpSolutionNoSolutionFound)
        return lp.status

    solver.actualSolve = actual_solve
    return solver
