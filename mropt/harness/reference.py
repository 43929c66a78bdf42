"""Reference values per instance, and the gaps measured against them.

A reference file (``reference.solu``) holds the best known values of instances, in the
spirit of MIPLIB's ``.solu`` files: plain text, one value per line, ``#`` comments::

    =sense=   max                                                    # the lines below: maximisation
    # tag     instance sha256     value   name
    =opt=     3f9c2d...e1         12345   amb-n30-L150-D1000-s1    # optimum proven
    =best=    77ab01...9c         11800   amb-n60-L150-D1000-s1    # best known feasible value, not proven
    =inf=     0c1d2e...44         -       swim-w3                  # proven infeasible
    =bound=   77ab01...9c         12410   amb-n60-L150-D1000-s1    # best known bound: an upper bound here
    =sense=   min                                                    # the lines below: minimisation
    =opt=     3dfb6b...8f         135     mpsa-l0.03pm-w1-s1
    =bound=   ...                 130     ...                      # a lower bound (minimisation)

Instances are keyed by the SHA-256 of their canonical JSON (``instance.content_hash()``),
so a renamed file keeps its values; the name is for people. An instance may have one
value line (``=opt=``, ``=best=`` or ``=inf=``) and one ``=bound=`` line. Every study
updates the file in its result folder (``DIR/reference.solu``) from its verified rows; a
file ``instances/NAME.solu`` beside an instance set ``instances/NAME.toml`` is read first,
so values can ship with a set (copy a study's file there to ship them).

**Sense.** Each instance kind declares whether it is maximised or minimised
(``SENSE`` of its class, :mod:`mropt.model.sense`; a row's ``kind`` says which). A
``=sense= max|min`` line sets the sense of the lines after it; a file without one (written
before senses were recorded) reads as maximisation. A file's entry whose sense disagrees
with its instance kind's is dropped with a warning (such a line was written under the
wrong sense), and the runs' own rows rebuild it.

Merging keeps the better value (larger when maximising, smaller when minimising) and
the tighter bound; a value is ``=opt=`` when an exact method proved it (status
``optimal``, verified) or when it meets the best bound within the relative objective
tolerance (``OBJECTIVE_RTOL``, :mod:`mropt.model.tolerance`).

**A bound that a verified plan refutes is no bound.** A bound below the
best known value by more than the relative objective tolerance (above it, when
minimising) proves its method wrong, and so does an exact method's ``optimal`` objective
below it (an optimum is its own bound): e.g. an exact method that returns the valid empty
plan as ``optimal`` with bound 0 while a heuristic's plan verifies at 42. The reference's
bound is the tightest bound that no known value refutes (every bound learned is kept, so a
value that arrives later refutes a bound that came first), and a value is ``=opt=`` only
by a proof no value refutes: a refuted claim is never in the file. The row keeps its
objective (its plan is still a plan, when it verifies: it may set the value) and gets
``bound_refuted`` true (:meth:`Reference.refuted`); ``mropt gap`` and ``mropt report``
warn, naming method and instance.

**Relaxations are bounds.** A method that solves a relaxation (``register(...,
relaxation=True)``, e.g. ``drf-lp``, continuous DRF for integer allocations; every
``bound=True`` method too) never provides a value: its proven optimum, or its proven
bound, is a bound of the instance, and its row's gap says how far it lies beyond the
reference, as for bound methods.

**Gaps** (``ref`` the reference value, ``b`` the best known bound; always >= 0)::

    gap          = (ref - objective) / max(|ref|, 1e-9)      maximisation: how much worse than the reference
                 = (objective - ref) / max(|ref|, 1e-9)      minimisation
    gap          = (value - ref) / max(|ref|, 1e-9)          bounds and relaxations, maximisation: how far
                 = (ref - value) / max(|ref|, 1e-9)          the bound lies beyond the reference (minimisation)
    gap_to_bound = (b - objective) / max(|b|, 1e-9)          a proven limit on the true gap (maximisation;
                 = (objective - b) / max(|b|, 1e-9)          minimisation)

A value within the relative objective tolerance of the reference has gap exactly 0 (never
``-0`` or ``1e-16``); a bound on the wrong side of a verified value has gap 0 too (and,
beyond the tolerance, ``bound_refuted``). ``gap_to_bound`` is measured against the
reference's bound (never a refuted one), or a proven optimum, and is missing without
either. ``gap`` is measured against the optimum when the tag is
``optimal`` and against the best known value otherwise (the row's ``reference_tag`` says
which); it is missing for runs without an objective (errors, kills), for answers
``verify`` rejected, and for infeasible instances.

**Simulations are not plans.** A policy study's rows (kind ``workload``, :data:`SIMULATION_KIND`)
measure what a simulated cluster did, in another model than the instance's (an admission
instance runs on the SEQ model's idealised cluster): they neither set a reference nor get a gap
(:mod:`mropt.harness.policy_report` reports them), so a simulated benefit can never refute an
exact method's optimum of the instance.

**Robust file.** Names are written with whitespace runs replaced by ``_`` and without
control characters or ``#`` (:func:`safe_name`), so a name can never start a new line or
a comment; a line the reader cannot use (an unknown tag, a value that
is not a finite number, a malformed hash) is skipped with a warning naming the file and
the line, never fatal.
"""

from __future__ import annotations

import math
import re
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from mropt.model.files import write_text
from mropt.model.sense import MAXIMISE, SENSES, WORDS, better, beyond, shortfall, tighter
from mropt.model.tolerance import same_value
from mropt.model.workload import KIND as WORKLOAD_KIND

TAGS = {"=opt=": "optimal", "=best=": "best_known", "=inf=": "infeasible"}
_TAG_OF = {v: k for k, v in TAGS.items()}
_FEASIBLE = ("optimal", "feasible", "time_limit")
#: the kind of a simulation's row (mropt.harness.experiment.POLICY_KIND): not a plan, no reference, no gap
SIMULATION_KIND = WORKLOAD_KIND
#: an instance key in a file: one token, no comment sign (content hashes are 64 hex digits)
_DIGEST = re.compile(r"[^\s#]+")


_WARNED: set[str] = set()


def warn(message: str) -> None:
    """One line on stderr, once per process: ``mropt: warning: ...`` (a reference problem is never fatal)."""
    if message not in _WARNED:
        _WARNED.add(message)
        print(f"mropt: warning: {message}", file=sys.stderr)


def safe_name(name: Any) -> str:
    """An instance name fit for one field of a line: printable characters only, every run of
    whitespace (newlines and Unicode line separators included) and every ``#`` replaced by
    ``_``; other control characters dropped."""
    out: list[str] = []
    for ch in str(name or ""):
        if ch.isspace() or ch == "#":
            if not out or out[-1] != "_" or ch == "#":
                out.append("_")
        elif ch.isprintable():
            out.append(ch)
    return "".join(out)


@dataclass
class Entry:
    name: str = ""
    tag: str | None = None  # optimal | best_known | infeasible
    value: float | None = None
    bound: float | None = None  # the tightest bound that no known value refutes
    sense: str = MAXIMISE
    #: every bound learned, refuted ones included (a later, better value may refute more of them)
    offered: list[float] = field(default_factory=list, repr=False)

    def __post_init__(self) -> None:
        if self.bound is not None and self.bound not in self.offered:
            self.offered.append(self.bound)

    def add_value(self, value: float, proven: bool) -> None:
        if self.tag == "infeasible":
            return
        if self.value is None or better(self.sense, value, self.value):
            self.value, self.tag = value, ("optimal" if proven else "best_known")
        elif proven and same_value(value, self.value):
            self.tag = "optimal"
        self._settle()

    def add_bound(self, bound: float) -> None:
        if bound not in self.offered:
            self.offered.append(bound)
        self._settle()

    def refutes(self, bound: float) -> bool:
        """The best known value lies beyond ``bound`` by more than the relative objective
        tolerance (above it when maximising), so ``bound`` is no bound: its method is wrong."""
        return self.value is not None and self.tag != "infeasible" and better(self.sense, self.value, bound)

    def _settle(self) -> None:
        """The tightest bound not refuted; a value that bound does not beat (within the tolerance) is optimal."""
        kept = [b for b in self.offered if not self.refutes(b)]
        self.bound = None
        for b in kept:
            if self.bound is None or tighter(self.sense, b, self.bound):
                self.bound = b
        if (
            self.value is not None
            and self.bound is not None
            and self.tag != "infeasible"
            and not better(self.sense, self.bound, self.value)
        ):
            self.tag = "optimal"

    def has_data(self) -> bool:
        return self.tag is not None or self.bound is not None


class Reference:
    def __init__(self) -> None:
        self.entries: dict[str, Entry] = {}

    def entry(self, digest: str, name: str = "", sense: str | None = None, *, source: str = "") -> Entry:
        """The entry of ``digest``; ``sense`` (when known) replaces one of another sense, with a warning."""
        e = self.entries.get(digest)
        if e is None:
            e = self.entries[digest] = Entry(name, sense=sense or MAXIMISE)
        elif sense is not None and sense != e.sense:
            if e.has_data():
                warn(
                    f"reference of instance {e.name or name or digest[:12]} was recorded as {WORDS[e.sense]}"
                    f"{source}, but its kind is {WORDS[sense]}: those values are dropped"
                )
            e = self.entries[digest] = Entry(e.name or name, sense=sense)
        if name and not e.name:
            e.name = name
        return e

    # -- learning from runs -----------------------------------------------------------------
    def add_row(self, row: Any) -> None:
        """Learn from one stored row (a dict or a pandas row): verified values and bounds; nothing
        from a simulation's row (:data:`SIMULATION_KIND`)."""
        get = row.get
        if get("kind") == SIMULATION_KIND:
            return
        e = self.entry(get("instance_hash"), get("instance_id") or "", _row_sense(row))
        status, obj = get("status"), _num(get("objective"))
        exact = _true(get("exact"))
        if status == "infeasible" and exact and e.value is None:
            e.tag = "infeasible"  # a relaxation proven infeasible proves the problem infeasible too
            return
        for bound in row_bounds(row):
            e.add_bound(bound)
        if status == "bound" or is_relaxation(row):
            return  # a relaxation's optimum is a bound of the problem, never a value of it
        if status in _FEASIBLE and obj is not None and _true(get("verified")):
            e.add_value(obj, proven=status == "optimal" and exact)

    def merge(self, other: Reference, source: str = "") -> None:
        for digest, o in other.entries.items():
            e = self.entry(digest, o.name, o.sense, source=source)
            if o.tag == "infeasible" and e.value is None:
                e.tag = "infeasible"
            if o.value is not None:
                e.add_value(o.value, proven=o.tag == "optimal")
            if o.bound is not None:
                e.add_bound(o.bound)

    def refuted(self, row: Any) -> tuple[float, float] | None:
        """``(claim, value)`` when the best known value of the row's instance, ``value``,
        refutes a bound the row claims (:func:`claimed_bounds`); None otherwise."""
        e = self.entries.get(row.get("instance_hash"))
        if e is None:
            return None
        for claim in claimed_bounds(row):
            if e.value is not None and e.refutes(claim):
                return claim, e.value
        return None

    # -- gaps -------------------------------------------------------------------------------
    def gaps(self, row: Any) -> dict[str, Any]:
        """``reference``, ``reference_tag``, ``gap``, ``gap_to_bound`` and ``bound_refuted`` of one row."""
        e = self.entries.get(row.get("instance_hash"))
        out: dict[str, Any] = {
            "reference": None,
            "reference_tag": None,
            "gap": None,
            "gap_to_bound": None,
            "bound_refuted": False,
        }
        if e is None or row.get("kind") == SIMULATION_KIND:
            return out
        out["reference"], out["reference_tag"] = e.value, e.tag
        out["bound_refuted"] = self.refuted(row) is not None
        status, obj, bound = row.get("status"), _num(row.get("objective")), _num(row.get("bound"))
        if status == "bound" or is_relaxation(row):
            if status == "bound":
                value = bound if bound is not None else obj
            else:
                value = obj if status == "optimal" and obj is not None else bound
            if value is not None and e.value is not None and e.tag != "infeasible" and status in (*_FEASIBLE, "bound"):
                out["gap"] = beyond(e.sense, value, e.value)
            return out
        if obj is None or status not in _FEASIBLE or e.tag == "infeasible" or _false(row.get("verified")):
            return out  # no answer, or one verify rejected: its objective is no number to report
        if e.value is not None:
            out["gap"] = shortfall(e.sense, obj, e.value)
        limit = e.bound if e.bound is not None else (e.value if e.tag == "optimal" else None)
        if limit is not None:
            out["gap_to_bound"] = shortfall(e.sense, obj, limit)
        return out

    # -- the file ---------------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | Path) -> Reference:
        """Read a reference file; lines it cannot use are skipped with a warning (never fatal)."""
        ref = cls()
        path = Path(path)
        if not path.exists():
            return ref
        try:
            text = path.read_text(encoding="utf-8", errors="replace")
        except OSError as exc:
            warn(f"{path}: cannot read ({exc.strerror or exc}); no reference values from it")
            return ref
        sense: str | None = MAXIMISE  # files written before senses were recorded: maximisation
        for lineno, raw in enumerate(text.split("\n"), 1):
            line = raw.split("#", 1)[0].split()
            if not line:
                continue

            def skip(why: str, lineno: int = lineno, raw: str = raw) -> None:
                warn(f"{path}, line {lineno}: {why}; line skipped: {raw.strip()[:120]!r}")

            tag = line[0]
            if tag == "=sense=":
                if len(line) != 2 or line[1] not in SENSES:
                    skip(f"expected '=sense= {' or '.join(SENSES)}'")
                    sense = None  # values under an unreadable sense are skipped too
                else:
                    sense = line[1]
                continue
            if tag not in (*TAGS, "=bound="):
                skip(f"unknown tag {tag!r} (known: =sense= =opt= =best= =inf= =bound=)")
                continue
            if len(line) < 3:
                skip("expected 'TAG SHA256 VALUE [NAME]'")
                continue
            if sense is None:
                skip("no valid '=sense=' line before it")
                continue
            digest, value = line[1], line[2]
            if not _DIGEST.fullmatch(digest):
                skip(f"malformed instance hash {digest!r}")
                continue
            name = safe_name(" ".join(line[3:]))
            if tag == "=inf=":
                ref.entry(digest, name, sense, source=f" in {path}").tag = "infeasible"
                continue
            number = _num(value) if value != "-" else None
            if number is None:
                skip(f"value {value!r} is not a finite number")
                continue
            e = ref.entry(digest, name, sense, source=f" in {path}")
            if tag == "=bound=":
                e.add_bound(number)
            else:
                e.add_value(number, proven=tag == "=opt=")
        return ref

    def text(self) -> str:
        lines = [
            "# mropt reference values. Format: see mropt.harness.reference.",
            "# '=sense= max': the lines below are of maximisation (=bound= an upper bound); "
            "'=sense= min': minimisation (=bound= a lower bound).",
        ]
        for sense in SENSES:
            digests = [d for d, e in self.entries.items() if e.sense == sense and e.has_data()]
            if not digests:
                continue
            lines += [f"{'=sense=':<9} {sense}", "# tag     instance sha256" + " " * 52 + "value  name"]
            for digest in sorted(digests, key=lambda d: (self.entries[d].name, d)):
                if not _DIGEST.fullmatch(str(digest)):
                    warn(f"reference: instance key {str(digest)[:80]!r} is not one word; not written")
                    continue
                e = self.entries[digest]
                name = safe_name(e.name)
                if e.tag is not None and (e.tag == "infeasible" or e.value is not None):
                    value = "-" if e.tag == "infeasible" or e.value is None else _fmt(e.value)
                    lines.append(f"{_TAG_OF[e.tag]:<9} {digest} {value:>12} {name}".rstrip())
                if e.bound is not None and e.tag != "optimal":
                    lines.append(f"{'=bound=':<9} {digest} {_fmt(e.bound):>12} {name}".rstrip())
        return "\n".join(lines) + "\n"

    def save(self, path: str | Path) -> None:
        """Write the file atomically (:func:`mropt.model.files.write_text`)."""
        write_text(path, self.text())


def row_bounds(row: Any) -> list[float]:
    """The bounds of its instance that a row gives the reference: a bound method's value, a
    relaxation's optimum (or its proven bound), an exact method's proven bound."""
    status, obj, bound = row.get("status"), _num(row.get("objective")), _num(row.get("bound"))
    if status == "bound":
        value = bound if bound is not None else obj
    elif status not in _FEASIBLE:
        value = None
    elif is_relaxation(row):
        value = obj if status == "optimal" and obj is not None else bound
    else:
        value = bound if _true(row.get("exact")) else None
    return [] if value is None else [value]


def claimed_bounds(row: Any) -> list[float]:
    """What a row claims no plan of its instance beats: :func:`row_bounds`, and an exact
    method's ``optimal`` objective (an optimum is its own bound), verified or not."""
    claims = row_bounds(row)
    obj = _num(row.get("objective"))
    if row.get("status") == "optimal" and _true(row.get("exact")) and obj is not None and not is_relaxation(row):
        claims.append(obj)
    return claims


def is_relaxation(row: Any) -> bool:
    """The row's method solves a relaxation (its value is a bound): the row's ``relaxation``
    column, or, for rows stored before that column, the method's registration."""
    flag = row.get("relaxation")
    if flag is not None and type(flag).__name__ != "NAType":
        return _true(flag)
    name = row.get("method_name")
    if not isinstance(name, str):
        return False
    from mropt.model.errors import InputError
    from mropt.registry import get_method

    try:
        return get_method(name).relaxation
    except InputError:  # a plug-in method not imported here
        return False


def _row_sense(row: Any) -> str | None:
    kind = row.get("kind")
    if not isinstance(kind, str):
        return None
    from mropt.model.errors import InputError
    from mropt.model.io import objective_sense

    try:
        return objective_sense(kind)
    except InputError:
        return None


def _fmt(value: float) -> str:
    """A value as written: integers without a decimal point, others with every digit (round trip)."""
    return str(int(value)) if value.is_integer() and abs(value) < 2**53 else repr(float(value))


def _true(x: Any) -> bool:
    """True for True (Python or numpy); False for False, None and pandas' NA."""
    return x is True or (type(x).__name__ == "bool_" and bool(x))


def _false(x: Any) -> bool:
    """False for False (Python or numpy); not for None or pandas' NA (unknown)."""
    return x is False or (type(x).__name__ == "bool_" and not bool(x))


def _num(x: Any) -> float | None:
    if x is None or type(x).__name__ == "NAType":
        return None
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None
