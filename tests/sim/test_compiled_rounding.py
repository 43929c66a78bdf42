"""``mropt.sim.compiled.rounding.sig12`` against its definition ``float(format(x, ".12g"))``.

Bit patterns are compared (``-0.0`` and ``0.0`` differ), for the compiled function over about two
million doubles and for the pure-Python ``py_func`` (with the helpers it calls swapped for theirs)
over a sample; then the cases where a fast rounding could go wrong: decimals half-way between two
12-digit neighbours and the doubles around them, exact ties, powers of ten and of two, shares.
The exact fallback helpers are checked on their own against Python integers and fractions.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterator
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest

pytest.importorskip("numba")

from mropt.sim.compiled import rounding  # noqa: E402
from mropt.sim.compiled.rounding import sig12, sig12_array  # noqa: E402


def _reference(xs: np.ndarray) -> np.ndarray:
    return np.array([float(format(x, ".12g")) for x in xs.tolist()], dtype=np.float64)


def _assert_bits(got: np.ndarray, xs: np.ndarray) -> None:
    want = _reference(xs)
    bad = np.nonzero(np.asarray(got, np.float64).view(np.uint64) != want.view(np.uint64))[0]
    shown = ", ".join(f"{xs[i]!r} -> {got[i]!r} (want {want[i]!r})" for i in bad[:5])
    assert bad.size == 0, f"{bad.size} of {xs.size} differ: {shown}"


def _neighbours(xs: list[float], steps: int) -> np.ndarray:
    """``xs`` and the doubles up to ``steps`` places either side of each."""
    out = []
    for x in xs:
        lo = hi = x
        out.append(x)
        for _ in range(steps):
            lo, hi = math.nextafter(lo, 0.0), math.nextafter(hi, math.inf)
            out += [lo, hi]
    a = np.array(out)
    return a[np.isfinite(a)]


def _random_sets(n: int, seed: int) -> Iterator[tuple[str, np.ndarray]]:
    rng = np.random.default_rng(seed)
    yield "uniform [0, 1)", rng.random(n)
    yield "log-uniform 1e-308..1e308", 10.0 ** rng.uniform(-308.0, 308.0, n)
    yield "random bits", rng.integers(1, 0x7FF0000000000000, n, dtype=np.uint64).view(np.float64)
    yield "subnormals", rng.integers(1, 2**52, n // 2, dtype=np.uint64).view(np.float64)
    yield "log-uniform 1e-13..1e36", 10.0 ** rng.uniform(-13.0, 36.0, n)
    yield "shares", rng.integers(0, 83_200, n // 2) / 83_200.0
    yield "negative", -rng.random(n // 4) * 10.0 ** rng.integers(-320, 300, n // 4)


@pytest.mark.parametrize(("name", "xs"), list(_random_sets(400_000, 20261127)))
def test_compiled_random(name: str, xs: np.ndarray) -> None:
    _assert_bits(sig12_array(xs), xs)


@pytest.fixture
def pure_python(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make ``sig12.py_func`` all Python: the helpers it calls by their global names too."""
    for name in ("_two_prod", "_big", "_cmp3", "_exact_double", "_general"):
        monkeypatch.setattr(rounding, name, getattr(rounding, name).py_func)


@pytest.mark.usefixtures("pure_python")
def test_py_func() -> None:
    sets = [xs for _, xs in _random_sets(3_000, 7)]
    sets += [_neighbours(_half_way(1, 8), 1), np.array(_exact_ties(9)[::4])]
    for xs in sets:
        _assert_bits(np.array([sig12.py_func(x) for x in xs.tolist()]), xs)


def _half_way(per_exponent: int, seed: int) -> list[float]:
    """The doubles nearest to 13-digit decimals ending in 5, (10 D + 5) 10**e, over all decades."""
    rng = np.random.default_rng(seed)
    xs = []
    for e in range(-336, 296):
        ds = [10**11, 10**12 - 1, *rng.integers(10**11, 10**12, per_exponent).tolist()]
        xs += [float(f"{10 * d + 5}e{e}") for d in ds]
    return [x for x in xs if 0.0 < x < math.inf]


def _exact_ties(seed: int) -> list[float]:
    """Doubles exactly half-way between two 12-digit decimals: ``(2 D + 1) / 2 * 10**k``."""
    rng = np.random.default_rng(seed)
    xs = []
    for k in range(-17, 8):
        f = 5 ** max(-k, 0)  # 2 D + 1 must be a multiple of 5**-k for the value to be dyadic
        lo, hi = (2 * 10**11 // f) // 2, (2 * 10**12 // f - 1) // 2
        for j in set(rng.integers(lo, hi + 1, 200).tolist()):
            odd = (2 * j + 1) * f
            t = Fraction(odd, 2) * Fraction(10) ** k
            if 2 * 10**11 < odd < 2 * 10**12 and Fraction(float(t)) == t:
                xs.append(float(t))
    assert len(xs) > 2000
    return xs


def test_half_way_and_ties() -> None:
    xs = _neighbours(_half_way(20, 3), 2)
    ties = np.array(_exact_ties(4))
    for a in (xs, ties, -ties):
        _assert_bits(sig12_array(a), a)


def test_powers_and_decade_edges() -> None:
    tens = [float(f"{m}e{j}") for j in range(-324, 309) for m in ("1", "9.99999999999", "9.999999999995")]
    twos = [math.ldexp(1.0, j) for j in range(-1074, 1024)]
    # d * 10**k exactly half-way between two doubles: d = 2**37..2**39, k = 23 (5**23 has 54 bits)
    mids = [float(f"{2**j}e{k}") for j in (37, 38, 39) for k in range(20, 27)]
    xs = _neighbours(tens + twos + mids + [5e-324, 2.2250738585072014e-308, 1.7976931348623157e308], 3)
    _assert_bits(sig12_array(xs), xs)


def test_fractions_and_shares() -> None:
    ks = np.arange(0, 3001, dtype=np.float64)
    thirds = np.concatenate([ks / 3.0, ks * (1.0 / 3.0), 1.0 - ks / 3.0 / 1000.0])
    shares = np.arange(0, 1300 * 64 + 1, dtype=np.float64) / (1300 * 64)
    for xs in (thirds, shares, shares * 2.0 / 3.0, shares / 3.0 * 2.0):
        _assert_bits(sig12_array(xs), xs)
    assert sig12(2.0 / 3.0) == sig12(1.0 - 1.0 / 3.0) == 0.666666666667


def test_special_values() -> None:
    assert math.copysign(1.0, sig12(-0.0)) == -1.0 and sig12(-0.0) == 0.0
    assert math.copysign(1.0, sig12(0.0)) == 1.0 and sig12(0.0) == 0.0
    assert sig12(math.inf) == math.inf and sig12(-math.inf) == -math.inf
    assert math.isnan(sig12(math.nan))
    for x in (0.1, 1 / 3, 5e-324, 1.7976931348623157e308, 123456789012.5):
        assert sig12(-x) == -sig12(x) == -float(format(x, ".12g"))
    a = np.array([[0.5, -1 / 3], [1e-300, 2.5]])
    assert sig12_array(a).shape == (2, 2)
    _assert_bits(sig12_array(a).ravel(), a.ravel())


@pytest.mark.parametrize("compiled", [True, False])
def test_general_tier_everywhere(compiled: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """The approximate-then-exact tier, also on the fast tier's range (where exact ties exist)."""
    if not compiled:
        for name in ("_two_prod", "_big", "_cmp3", "_exact_double"):
            monkeypatch.setattr(rounding, name, getattr(rounding, name).py_func)
    general = rounding._general if compiled else rounding._general.py_func
    rng = np.random.default_rng(11)
    xs = [*_exact_ties(5)[:: 1 if compiled else 10], *(10.0 ** rng.uniform(-11, 34, 3000 if compiled else 300))]
    xs += _neighbours(_half_way(1, 6)[:: 1 if compiled else 10], 1).tolist()
    got = np.array([general(x, Decimal(x).adjusted() - 11) for x in xs])
    _assert_bits(got, np.array(xs))


@pytest.mark.parametrize("compiled", [True, False])
def test_exact_double(compiled: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """``_exact_double`` finds the nearest double to ``d * 10**k`` from guesses a few places off."""
    exact_double: Callable[[int, int, int, int], float] = rounding._exact_double
    if not compiled:
        for name in ("_big", "_cmp3"):
            monkeypatch.setattr(rounding, name, getattr(rounding, name).py_func)
        exact_double = rounding._exact_double.py_func
    rng = np.random.default_rng(12)
    n = 1500 if compiled else 100
    cases = [(2**j, 23) for j in (37, 38, 39)]
    cases += [(int(d), int(k)) for d, k in zip(rng.integers(10**11, 10**12 + 1, n), rng.integers(-335, 297, n))]
    cases += [(int(d), -335) for d in rng.integers(10**11, 10**12 + 1, n // 10)]  # subnormal results
    for d, k in cases:
        want = float(Fraction(d) * Fraction(10) ** k)
        if want < 5e-324:  # below sig12's range: its results are at least the smallest double
            continue
        mant, ex = math.frexp(want)
        ue = max(ex - 53, -1074)
        um = int(math.ldexp(want, -ue))
        for step in (-3, -1, 0, 1, 2):
            got = exact_double(d, k, max(um + step, 1), ue)
            assert got == want, (d, k, step, got, want)


def test_cmp3() -> None:
    rng = np.random.default_rng(13)
    for i in range(3000):
        v1, v2 = (int(v) for v in rng.integers(0, 2**62, 2))
        a1, a2 = (int(v) for v in rng.integers(-170, 171, 2) // (1 if i % 2 else 34))
        b1, b2 = (int(v) for v in rng.integers(-400, 401, 2) // (1 if i % 2 == 0 else 8))
        if i % 3 == 0:  # equal values written two ways
            v1 -= v1 % 10
            v2, a2, b2 = v1 // 10, a1 + 1, b1 + 1
        lhs = Fraction(v1) * Fraction(5) ** a1 * Fraction(2) ** b1
        rhs = Fraction(v2) * Fraction(5) ** a2 * Fraction(2) ** b2
        assert rounding._cmp3(v1, a1, b1, v2, a2, b2) == (lhs > rhs) - (lhs < rhs), (v1, a1, b1, v2, a2, b2)
    with pytest.raises(OverflowError):
        rounding._cmp3(1, 0, 0, 1, 500, 0)
