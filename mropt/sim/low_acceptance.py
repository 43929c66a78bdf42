"""One warning for a run that rejected almost every job while the cluster stood idle.

AMB (AMB paper sec. 3-4) admits a job only if the SEQ model meets every accepted deadline: the
map phases run one job at a time in the sequence S (Definition 1), each phase taking its job's
map work in whole waves of the cluster's map slots (sec. 4.1), so a job of one map task holds
the model's whole cluster for one task time. On a trace of many small jobs on a large cluster
the model is saturated while the real cluster is nearly empty: AMB on the SWIM day (5,894
jobs, 1,200 map slots) accepts 209 jobs with the cluster 0.5 % busy, the day's map phases
summing to 308,301 s of the model's time in 86,400 s. That is the paper's model, not a fault
of the run; ``docs/simulation.md`` ("Few jobs accepted on an idle cluster") says what to run
instead. :func:`low_acceptance_warning` says so in one line when

* the run has at least :data:`MIN_JOBS` jobs (a handful of jobs is no evidence),
* it accepted fewer than :data:`MAX_ACCEPTED` of them, and
* every utilisation of the summary (``map`` and ``reduce``, or ``cpu`` and ``memory``: busy
  capacity over the capacity up, on [0, makespan]) is below :data:`MAX_BUSY`,

and the run was not stopped early (a summary with ``stopped``: jobs not yet submitted are no
rejections). ``mropt simulate`` prints it on stderr (:func:`warn_low_acceptance`).
"""

from __future__ import annotations

import sys
from collections.abc import Mapping
from typing import Any, TextIO

#: fewest jobs a run needs for its acceptance to warn about
MIN_JOBS = 10
#: the warning needs accepted / jobs below this
MAX_ACCEPTED = 0.10
#: ... and every utilisation of the summary below this
MAX_BUSY = 0.10
#: where the docs explain it
DOCS = 'docs/simulation.md, "Few jobs accepted on an idle cluster"'

_WHY = {
    "amb": "amb admits by the AMB paper's SEQ model, which runs map phases one job at a time",
    "seq": "seq runs a plan of the AMB paper's SEQ model, which runs map phases one job at a time",
}


def low_acceptance_warning(summary: Mapping[str, Any]) -> str | None:
    """The warning's text for a run's summary (``mropt simulate --json``'s object), or None (module docstring)."""
    jobs, accepted = summary.get("jobs"), summary.get("accepted")
    if summary.get("stopped") or not isinstance(jobs, int) or not isinstance(accepted, int) or jobs < MIN_JOBS:
        return None
    busy = {k: v for k, v in (summary.get("utilisation") or {}).items() if isinstance(v, (int, float))}
    if not busy or accepted >= MAX_ACCEPTED * jobs or max(busy.values()) >= MAX_BUSY:
        return None
    policy = str(summary.get("policy"))
    use = ", ".join(f"{k} {100 * v:.1f} %" for k, v in busy.items())
    why = _WHY.get(policy, f"{policy}'s admission rejected the rest")
    return (
        f"{policy} accepted {accepted} of {jobs} jobs ({100 * accepted / jobs:.1f} %) while the cluster "
        f"was nearly idle (utilisation {use}): {why}; see {DOCS}"
    )


def warn_low_acceptance(summary: Mapping[str, Any], stream: TextIO | None = None) -> bool:
    """Print :func:`low_acceptance_warning` as one ``mropt: warning:`` line on ``stream`` (stderr); True if printed."""
    text = low_acceptance_warning(summary)
    if text is not None:
        print(f"mropt: warning: {text}", file=stream or sys.stderr)
    return text is not None
