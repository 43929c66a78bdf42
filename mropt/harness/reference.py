"""Reference values per instance, and the gaps measured against them.

A reference file (``reference.solu``) holds the best known values of instances, in the
spirit of MIPLIB's ``.solu`` files: plain text, one instance per line, ``#`` comments::

    # tag     instance sha256                                                   value   name
    =opt=     3f9c2d...e1   12345   amb-n30-L150-D1000-s1    # optimum proven
    =best=    77ab01...9c   11800   amb-n60-L150-D1000-s1    # best known feasible value, not proven
    =inf=     0c1d2e...44   -       swim-w3                  # proven infeasible
    =bound=   77ab01...9c   12410   amb-n60-L150-D1000-s1    # best known upper bound (maximisation)

Instances are keyed by the SHA-256 of their canonical JSON (``instance.content_hash()``),
so a renamed file keeps its values; the name is for people. An instance may have one
value line (``=opt=``, ``=best=`` or ``=inf=``) and one ``=bound=`` line. Every study
updates the file in its result folder (``DIR/reference.solu``) from its verified rows; a
file ``instances/NAME.solu`` beside an instance set ``instances/NAME.toml`` is read first,
so values can ship with a set (copy a study's file there to ship them).

Merging keeps the larger value (problems are maximisations: total benefit, AMB eq. 1) and
the smaller bound; a value is ``=opt=`` when an exact method proved it (status
``optimal``, verified) or when it meets the best bound within 1e-6 relative.

**Gaps** (maximisation; ``ref`` the reference value, ``ub`` the best known bound)::

    gap          = (ref - objective) / max(|ref|, 1e-9)     primal methods; 0 = best known
    gap          = (value - ref) / max(|ref|, 1e-9)          bound methods (status "bound"):
                                                               how far the bound lies above
    gap_to_bound = (ub - objective) / max(|ub|, 1e-9)         a proven upper limit on the true gap

``gap`` is measured against the optimum when the tag is ``optimal`` and against the best
known value otherwise (the row's ``reference_tag`` says which); it is missing for runs
without an objective (errors, kills) and for infeasible instances.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mropt.model.errors import InputError
from mropt.model.files import write_text

TAGS = {"=opt=": "optimal", "=best=": "best_known", "=inf=": "infeasible"}
_TAG_OF = {v: k for k, v in TAGS.items()}
RTOL = 1e-6
_FEASIBLE = ("optimal", "feasible", "time_limit")


def _close(a: float, b: float) -> bool:
    return math.isclose(a, b, rel_tol=RTOL, abs_tol=1e-6)


@dataclass
class Entry:
    name: str = ""
    tag: str | None = None  # optimal | best_known | infeasible
    value: float | None = None
    bound: float | None = None

    def add_value(self, value: float, proven: bool) -> None:
        if self.tag == "infeasible":
            return
        if self.value is None or value > self.value + 1e-9 * max(1.0, abs(value)):
            self.value, self.tag = value, ("optimal" if proven else "best_known")
        elif proven and _close(value, self.value):
            self.tag = "optimal"
        self._settle()

    def add_bound(self, bound: float) -> None:
        if self.bound is None or bound < self.bound:
            self.bound = bound
        self._settle()

    def _settle(self) -> None:
        if self.value is not None and self.bound is not None and self.tag != "infeasible":  # noqa: SIM102  (guard, then test)
            if self.value >= self.bound or _close(self.value, self.bound):
                self.tag = "optimal"


class Reference:
    def __init__(self) -> None:
        self.entries: dict[str, Entry] = {}

    def entry(self, digest: str, name: str = "") -> Entry:
        e = self.entries.setdefault(digest, Entry(name))
        if name and not e.name:
            e.name = name
        return e

    # -- learning from runs -----------------------------------------------------------------
    def add_row(self, row: Any) -> None:
        """Learn from one stored row (a dict or a pandas row): verified values and bounds."""
        get = row.get
        e = self.entry(get("instance_hash"), get("instance_id") or "")
        status, obj, bound = get("status"), _num(get("objective")), _num(get("bound"))
        verified, exact = _true(get("verified")), _true(get("exact"))
        if status == "bound":
            value = bound if bound is not None else obj
            if value is not None:
                e.add_bound(value)
            return
        if status == "infeasible" and exact and e.value is None:
            e.tag = "infeasible"
            return
        if status in _FEASIBLE and obj is not None and verified:
            e.add_value(obj, proven=status == "optimal" and exact)
        if bound is not None and exact and status in _FEASIBLE:
            e.add_bound(bound)

    def merge(self, other: Reference) -> None:
        for digest, o in other.entries.items():
            e = self.entry(digest, o.name)
            if o.tag == "infeasible" and e.value is None:
                e.tag = "infeasible"
            if o.value is not None:
                e.add_value(o.value, proven=o.tag == "optimal")
            if o.bound is not None:
                e.add_bound(o.bound)

    # -- gaps -------------------------------------------------------------------------------
    def gaps(self, row: Any) -> dict[str, Any]:
        """``reference``, ``reference_tag``, ``gap`` and ``gap_to_bound`` of one row."""
        e = self.entries.get(row.get("instance_hash"))
        out: dict[str, Any] = {"reference": None, "reference_tag": None, "gap": None, "gap_to_bound": None}
        if e is None:
            return out
        out["reference"], out["reference_tag"] = e.value, e.tag
        obj, bound = _num(row.get("objective")), _num(row.get("bound"))
        if row.get("status") == "bound":
            value = bound if bound is not None else obj
            if value is not None and e.value is not None:
                out["gap"] = (value - e.value) / max(abs(e.value), 1e-9)
            return out
        if obj is None or row.get("status") not in _FEASIBLE or e.tag == "infeasible":
            return out
        if e.value is not None:
            out["gap"] = (e.value - obj) / max(abs(e.value), 1e-9)
        ub = e.bound if e.bound is not None else (e.value if e.tag == "optimal" else None)
        if ub is not None:
            out["gap_to_bound"] = (ub - obj) / max(abs(ub), 1e-9)
        return out

    # -- the file ---------------------------------------------------------------------------
    @classmethod
    def load(cls, path: str | Path) -> Reference:
        ref = cls()
        path = Path(path)
        if not path.exists():
            return ref
        for lineno, raw in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            line = raw.split("#", 1)[0].split()
            if not line:
                continue
            where = f"{path}, line {lineno}"
            if len(line) < 3:
                raise InputError(f"{where}: expected 'TAG SHA256 VALUE [NAME]', got {raw.strip()!r}")
            tag, digest, value = line[0], line[1], line[2]
            name = " ".join(line[3:])
            e = ref.entry(digest, name)
            if tag == "=inf=":
                e.tag = "infeasible"
                continue
            try:
                number = float(value)
            except ValueError:
                raise InputError(f"{where}: value {value!r} is not a number") from None
            if tag == "=bound=":
                e.add_bound(number)
            elif tag in ("=opt=", "=best="):
                e.add_value(number, proven=tag == "=opt=")
            else:
                raise InputError(f"{where}: unknown tag {tag!r} (known: =opt= =best= =inf= =bound=)")
        return ref

    def text(self) -> str:
        lines = ["# mropt reference values (maximisation). Format: see mropt.harness.reference.",
                 "# tag     instance sha256" + " " * 52 + "value  name"]
        for digest in sorted(self.entries, key=lambda d: (self.entries[d].name, d)):
            e = self.entries[digest]
            if e.tag is not None:
                value = "-" if e.tag == "infeasible" else f"{e.value:.10g}"
                lines.append(f"{_TAG_OF[e.tag]:<9} {digest} {value:>12} {e.name}".rstrip())
            if e.bound is not None and e.tag != "optimal":
                lines.append(f"{'=bound=':<9} {digest} {e.bound:>12.10g} {e.name}".rstrip())
        return "\n".join(lines) + "\n"

    def save(self, path: str | Path) -> None:
        """Write the file atomically (:func:`mropt.model.files.write_text`)."""
        write_text(path, self.text())


def _true(x: Any) -> bool:
    """True for True (Python or numpy); False for False, None and pandas' NA."""
    return x is True or (type(x).__name__ == "bool_" and bool(x))


def _num(x: Any) -> float | None:
    if x is None or type(x).__name__ == "NAType":
        return None
    try:
        x = float(x)
    except (TypeError, ValueError):
        return None
    return x if math.isfinite(x) else None
