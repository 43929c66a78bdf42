"""The optimisation sense of each instance kind, and what "better" and "worse" mean in it.

Every instance class declares ``SENSE``, :data:`MAXIMISE` or :data:`MINIMISE`:
admission maximises the total benefit (AMB eq. 1), fairness the minimum weighted
dominant share (DDRF sec. 3.1), priority minimises the total number of reserved slots
(MPSA eq. 17). Generic code (references, gaps, reports) reads the sense of a kind with
:func:`mropt.model.io.objective_sense` and the helpers below, never with a branch on
the kind's name, so a new kind (a simulated response time: minimise) only declares it.

Comparisons use the relative objective tolerance of :mod:`mropt.model.tolerance`:
values within :data:`~mropt.model.tolerance.OBJECTIVE_RTOL` of each other are equal,
so float noise never makes one value "better" or shows as a gap.
"""

from __future__ import annotations

from mropt.model.tolerance import same_value

MAXIMISE = "max"
MINIMISE = "min"
SENSES = (MAXIMISE, MINIMISE)
#: the sense in words, for reports and file headers
WORDS = {MAXIMISE: "maximisation", MINIMISE: "minimisation"}


def check_sense(sense: str) -> str:
    if sense not in SENSES:
        raise ValueError(f"objective sense must be one of {', '.join(SENSES)}, got {sense!r}")
    return sense


def sign(sense: str) -> float:
    """+1 for maximisation, -1 for minimisation: ``sign * value`` is to be maximised."""
    return 1.0 if check_sense(sense) == MAXIMISE else -1.0


def better(sense: str, a: float, b: float) -> bool:
    """``a`` is strictly better than ``b`` (larger when maximising), beyond the tolerance."""
    return sign(sense) * (a - b) > 0 and not same_value(a, b)


def tighter(sense: str, bound: float, than: float) -> bool:
    """Bound ``bound`` is strictly tighter than ``than``: a smaller upper bound when
    maximising, a larger lower bound when minimising (exact comparison: a bound only
    tightens)."""
    return sign(sense) * (than - bound) > 0


def shortfall(sense: str, value: float, reference: float) -> float:
    """How much worse ``value`` is than ``reference``, relative to ``|reference|``, clamped at 0.

    ``(reference - value) / max(|reference|, 1e-9)`` when maximising,
    ``(value - reference) / max(|reference|, 1e-9)`` when minimising. Values within the
    relative objective tolerance of the reference, and values better than it, give
    exactly ``0.0`` (never ``-0.0`` or ``1e-16``).
    """
    if same_value(value, reference):
        return 0.0
    gap = sign(sense) * (reference - value) / max(abs(reference), 1e-9)
    return gap if gap > 0 else 0.0


def beyond(sense: str, bound: float, reference: float) -> float:
    """How far a bound lies beyond the reference (above it when maximising), relative, >= 0.

    ``(bound - reference) / max(|reference|, 1e-9)`` when maximising, ``(reference -
    bound) / ...`` when minimising; 0.0 within the tolerance. A bound on the wrong side
    of a verified value (solver noise of an LP bound) also gives 0.0.
    """
    if same_value(bound, reference):
        return 0.0
    gap = sign(sense) * (bound - reference) / max(abs(reference), 1e-9)
    return gap if gap > 0 else 0.0
