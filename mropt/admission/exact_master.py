"""The set-selection relaxation shared by the exact methods and the bounds.

Variables ``x_j`` (accept job j). Every constraint below is necessary for a set to
have a valid SEQ sequence (AMB sec. 4.1), so maximising ``sum benefit_j x_j`` under
them gives an upper bound (:mod:`mropt.admission.bounds`), and it is the master
problem of the logic-based Benders decomposition of :mod:`mropt.admission.exact_benders`.

* fixing: ``x_j = 0`` when ``submit_j + TCm_j + TCr_j > deadline_j`` (job j alone is late);
* pair conflicts: ``x_i + x_j <= 1`` when neither order of {i, j} is valid;
* energy windows: for each window (R, D) of a submit value R and a deadline value D,
  the group ``g = {j : submit_j >= R, deadline_j <= D}`` satisfies

  - map energy: ``sum_g TCm_j x_j <= max_g(deadline_j - TCr_j) - R`` (every map of g
    runs after R on the whole map stage, and ends before its job's reduce must start);
  - reduce energy: ``sum_g TCr_j x_j <= max_g deadline_j - min_g(submit_j + TCm_j)``
    (every reduce of g runs on the whole reduce stage after some map of g is done).

  With equal submit times the windows are one per deadline value; otherwise one per
  (submit value, deadline value) pair with a non-empty group, duplicates removed.

Deadlines are the on-time limits ``deadline * (1 + TIME_RTOL)`` (the oracle's). The
rows are kept in the instance's units; :meth:`MasterData.scaled_rows` and
:attr:`MasterData.benefit_unit` give every solver the same well-conditioned numbers in
any unit of time or benefit (each row and the objective divided by a power of two,
which is exact).
"""

from __future__ import annotations

from dataclasses import dataclass, field

from mropt.admission.exact_oracle import SubsetOracle, pair_conflicts
from mropt.model.tolerance import pow2_scale


@dataclass
class MasterData:
    """Rows of the relaxation over the candidate jobs (indices into the instance)."""

    benefits: list[float]
    candidates: list[int]  # jobs that are feasible alone; the others are fixed to 0
    rows: list[tuple[dict[int, float], float]] = field(default_factory=list)  # sum coef x <= rhs
    conflicts: list[tuple[int, int]] = field(default_factory=list)

    @property
    def benefit_unit(self) -> float:
        """Power of two putting the largest candidate benefit in [1, 2): multiply to normalise."""
        return pow2_scale(max((abs(self.benefits[j]) for j in self.candidates), default=0.0))

    def scaled_rows(self) -> list[tuple[dict[int, float], float]]:
        """The rows, each divided by the power of two that puts its largest number in [1, 2)."""
        out = []
        for coefs, rhs in self.rows:
            f = pow2_scale(max(abs(rhs), *(abs(c) for c in coefs.values())))
            out.append(({j: c * f for j, c in coefs.items()}, rhs * f))
        return out


def energy_rows(oracle: SubsetOracle, candidates: list[int]) -> list[tuple[dict[int, float], float]]:
    """The map- and reduce-energy rows of the module docstring (only binding-capable ones)."""
    a, b, d, r = oracle.a, oracle.b, oracle.d, oracle.r
    releases = sorted(set(r[j] for j in candidates)) if not oracle.equal_release else [min(r)]
    deadlines = sorted(set(d[j] for j in candidates))
    # right sides loosened by float rounding's reach, so every row stays a relaxation
    loose = 1e-12 * max((abs(d[j]) + abs(r[j]) for j in candidates), default=0.0)
    seen: set[frozenset[int]] = set()
    rows: list[tuple[dict[int, float], float]] = []
    for rel in releases:
        for dl in deadlines:
            group = [j for j in candidates if r[j] >= rel and d[j] <= dl]
            key = frozenset(group)
            if not group or key in seen:
                continue
            seen.add(key)
            map_rhs = max(d[j] - b[j] for j in group) - rel + loose
            if sum(a[j] for j in group) > map_rhs:
                rows.append(({j: a[j] for j in group}, map_rhs))
            red_rhs = max(d[j] for j in group) - min(r[j] + a[j] for j in group) + loose
            if sum(b[j] for j in group) > red_rhs:
                rows.append(({j: b[j] for j in group if b[j] > 0}, red_rhs))
    return rows


def build_master(oracle: SubsetOracle, *, conflicts: bool = True) -> MasterData:
    """The relaxation of the module docstring for the oracle's instance."""
    candidates = [j for j in range(oracle.n) if oracle.alone_ok[j]]
    data = MasterData(
        benefits=[float(x) for x in oracle.instance.benefits],
        candidates=candidates,
        rows=energy_rows(oracle, candidates),
    )
    if conflicts:
        data.conflicts = pair_conflicts(oracle, candidates)
    return data
