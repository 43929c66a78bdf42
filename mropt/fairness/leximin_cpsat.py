"""``drf-cpsat``'s leximin model: OR-Tools CP-SAT on integer-scaled data (DDRF sec. 3.1).

The data become the smallest proportional integers per resource and for the share
coefficients (:func:`integer_data`), the same in any units; where they would be too
large the data are rounded (``scaling: rounded``, status ``feasible``): see
:mod:`mropt.fairness.exact`'s module docstring.
"""

from __future__ import annotations

import math
import time
from fractions import Fraction
from typing import Any

import numpy as np

from mropt.backends import cpsat as cpsat_backend
from mropt.fairness.leximin import LevelResult, Values, _leximin, _remaining, _upper_bounds
from mropt.model.fairness import FairnessInstance
from mropt.model.tolerance import CAPACITY_RTOL

_COEF_LIMIT = 10**5
_RTOL = Fraction(repr(CAPACITY_RTOL))  # 1/10**9


def _decimal(value: float) -> Fraction:
    """A number as the data mean it: its decimal to 15 significant digits.

    A unit conversion leaves float noise in the 16th and 17th digits (``3 * 1e-7`` is
    ``3.0000000000000004e-07``); reading 15 digits drops it, so the same data in other
    units give the same integers, at a change of 5e-16 relative at most (far below
    CAPACITY_RTOL).
    """
    return Fraction(f"{float(value):.15g}")


def _primitive(values: list[Fraction]) -> list[int]:
    """The integers proportional to ``values`` with no common divisor.

    The same for ``values`` times any positive factor, so the CP-SAT model does not
    depend on the data's units.
    """
    den = 1
    for v in values:
        den = math.lcm(den, v.denominator)
    ints = [int(v * den) for v in values]
    g = math.gcd(*ints)
    return [k // g for k in ints] if g > 1 else ints


def _with_tolerance(capacity: int) -> int:
    """The most an integer load may reach on an integer ``capacity``: ``floor(c (1 + CAPACITY_RTOL))``.

    verify accepts a load up to ``c (1 + 1e-9)`` (docs/tolerances.md), and so do drf-milp's
    rows; a load of whole units meets that bound iff it meets its floor, ``c + c // 10**9``
    (a demand 1e9 times smaller than the others once made that slack a task: CP-SAT, held to
    ``c``, left it out and claimed optimal).
    """
    return capacity + capacity * _RTOL.numerator // _RTOL.denominator


def integer_data(instance: FairnessInstance) -> dict[str, Any]:
    """Demands, capacities (aggregate and per node) and share coefficients as integers for CP-SAT.

    Each resource's column (demands, total, node capacities) and the share coefficients
    ``dom_i / w_i`` become the smallest proportional integers (:func:`_primitive`):
    exact, and the same in any units, when they stay below 2**50 / (tasks + 1) (and the
    coefficients below 1e5); else the rounded grids of the module docstring.
    """
    n, m = instance.n, len(instance.resource_names)
    bound = int(_upper_bounds(instance).sum()) + 1
    d = [[0] * m for _ in range(n)]
    cap, ncap, scaling = [0] * m, [[0] * m for _ in instance.node_ids], "exact"
    for j, name in enumerate(instance.resource_names):
        col = [_decimal(u.demand.get(name, 0.0)) for u in instance.users]
        caps = [_decimal(instance.resources[name])] + [
            _decimal(nd.capacity.get(name, 0.0)) for nd in instance.nodes or ()
        ]
        ints = _primitive(col + caps)
        if max(ints) * bound < 2**50:
            for i in range(n):
                d[i][j] = ints[i]
            cap[j] = _with_tolerance(ints[n])
            for k in range(len(instance.node_ids)):
                ncap[k][j] = _with_tolerance(ints[n + 1 + k])
        else:  # demands up, capacities down on a grid of 1e-6 of the total: every scaled-feasible allocation is feasible
            scaling = "rounded"
            q = 1e6 / float(caps[0])
            for i in range(n):
                d[i][j] = math.ceil(float(col[i]) * q - 1e-9)
            cap[j] = math.floor(float(caps[0]) * q + 1e-9)
            for k in range(len(instance.node_ids)):
                ncap[k][j] = math.floor(float(caps[1 + k]) * q + 1e-9)
    coef = []
    for u in instance.users:
        coef.append(
            max(_decimal(u.demand.get(r, 0.0)) / _decimal(instance.resources[r]) for r in instance.resource_names)
            / _decimal(u.weight)
        )
    ints = _primitive(coef)
    if max(ints) > _COEF_LIMIT:
        # CP-SAT 9.15 was seen to ignore its time limit and grow to gigabytes on the last
        # leximin levels with share coefficients of 1e6 and more (Alibaba's 9-decimal
        # memory requests); such instances get shares on a 1e5 grid and status feasible
        scaling = "rounded"
        top = float(max(coef))
        ints = [max(1, round(float(cf) / top * _COEF_LIMIT)) for cf in coef]
    return {"demand": d, "capacity": cap, "node_capacity": ncap, "coef": ints, "scaling": scaling}


class _CpsatLeximin:
    """The leximin model in CP-SAT on the integers of :func:`integer_data` (``drf-cpsat``)."""

    def __init__(self, instance: FairnessInstance, data: dict[str, Any], *, threads: int, seed: int) -> None:
        from ortools.sat.python import cp_model

        self.threads, self.seed, self.n = threads, seed, instance.n
        n, m = instance.n, len(instance.resource_names)
        ub = _upper_bounds(instance)
        model = self.model = cp_model.CpModel()
        self.per_node = None
        if instance.nodes is not None:
            v = len(instance.node_ids)
            xv = [[model.new_int_var(0, int(ub[i]), f"x_{i}_{k}") for k in range(v)] for i in range(n)]
            x = [model.new_int_var(0, int(ub[i]), f"x_{i}") for i in range(n)]
            for i in range(n):
                model.add(x[i] == sum(xv[i]))
            for k in range(v):
                for j in range(m):
                    terms = [data["demand"][i][j] * xv[i][k] for i in range(n) if data["demand"][i][j] > 0]
                    if terms:
                        model.add(sum(terms) <= data["node_capacity"][k][j])
            self.per_node = xv
        else:
            x = [model.new_int_var(0, int(ub[i]), f"x_{i}") for i in range(n)]
        for j in range(m):
            terms = [data["demand"][i][j] * x[i] for i in range(n) if data["demand"][i][j] > 0]
            if terms:
                model.add(sum(terms) <= data["capacity"][j])
        coef = data["coef"]
        self.ymax = max(coef[i] * int(ub[i]) for i in range(n))
        self.x = x
        self.y = [coef[i] * x[i] for i in range(n)]

    def add_level(self, k: int) -> Any:
        model, n = self.model, self.n
        r = model.new_int_var(0, self.ymax, f"r_{k}")
        dev = [model.new_int_var(0, self.ymax, f"d_{k}_{i}") for i in range(n)]
        for i in range(n):
            model.add(dev[i] >= r - self.y[i])
        return k * r - sum(dev)

    def maximise(self, k: int, s_k: Any, stop_at: float | None, levels: list[float]) -> LevelResult:
        self.model.maximize(s_k)
        res = cpsat_backend.solve(self.model, threads=self.threads, seed=self.seed, time_limit=_remaining(stop_at))
        if res.status != "optimal":
            return LevelResult("timeout" if res.status in ("feasible", "unknown") else "error", message=res.message)
        solver = res.solver
        values = (
            np.array([float(solver.value(e)) for e in self.x]),
            None
            if self.per_node is None
            else np.array([[float(solver.value(e)) for e in row] for row in self.per_node]),
        )
        assert res.proven_bound is not None  # optimal: the proven bound is the optimum
        return LevelResult("proven", values, float(int(res.proven_bound)))

    def fix(self, s_k: Any, level: float, values: Values) -> None:
        self.model.add(s_k >= int(level))
        self.model.clear_hints()
        for i in range(self.n):
            self.model.add_hint(self.x[i], int(values[0][i]))


def _leximin_cpsat(instance: FairnessInstance, *, time_limit: float | None, threads: int, seed: int):
    stop_at = None if time_limit is None else time.perf_counter() + time_limit
    data = integer_data(instance)
    model = _CpsatLeximin(instance, data, threads=threads, seed=seed)
    status, values, levels, _, _ = _leximin(model, instance.n, stop_at)
    info: dict[str, Any] = {"solves": len(levels), "scaling": data["scaling"]}
    if status == "optimal" and data["scaling"] == "rounded":
        # optimal for the rounded data only: a feasible allocation of the real one
        status, info["message"] = (
            "feasible",
            "data or share coefficients rounded to integers: optimal for the rounded data only",
        )
    return status, values, info
