"""``float(format(x, ".12g"))`` compiled with numba: a double rounded to 12 significant digits.

The definition is CPython's: ``format(x, ".12g")`` writes the exact binary value of ``x`` rounded to
12 significant decimal digits, round-half-even on exact ties, and ``float()`` reads that decimal
back as the nearest double (ties to even). So ``sig12(x)`` is ``D * 10**k`` correctly rounded,
where ``D = RHE(x / 10**k)`` and ``k = floor(log10(x)) - 11`` (the exact decade). ``sig12`` gives
that bit for bit for every double: ``sig12(-x) == -sig12(x)``, ``±0.0``, ``±inf`` and NaN are returned
as they are (``float('nan')`` from the string has no sign, a NaN's sign is kept here).

No strings and no Python objects; three steps, each exact:

1. The decade: an estimate from the binary exponent, corrected by exact comparisons with a table
   of the smallest doubles ``>= 10**j`` (built from exact fractions at import), so ``x / 10**k`` is
   in ``[1e11, 1e12)`` even for ``x`` next to a power of ten.
2. Fast path, ``|k| <= 22`` (``1e-11 <= x < 1e34``): ``P = 10**|k|`` is an exact double. With
   Dekker's error-free TwoProduct (Veltkamp splitting; T. J. Dekker, "A floating-point technique for
   extending the available precision", Numer. Math. 18, 1971) ``x * P == h + l`` exactly, and for
   the candidate ``n = floor(h)`` the sign of ``x * P - (n + 0.5)`` is the sign of ``(h - (n + 0.5))
   + l``: the subtraction is exact (Sterbenz), the one rounded addition keeps the sign and is zero
   only on an exact tie. For ``k > 0``, ``q = x / P``, and the sign of ``x - (n + 0.5) * P`` comes
   likewise from TwoProduct(``n + 0.5``, ``P``). ``D * P`` or ``D / P`` is then one correctly rounded
   operation on exact operands: the same double as ``float()`` of the decimal.
3. Other ``k``: ``x / 10**k`` is approximated as ``x * 5**-k * 2**-k`` (correctly rounded ``5**n``
   table, exact ``ldexp``; error < 2.3e-4 on a value < 1e12), which fixes ``D`` unless the fraction is
   within 1e-3 of one half (then an exact comparison decides); ``D * 5**k`` is computed as a double-double (``5**n`` stored as two
   doubles, TwoProduct, Fast2Sum; relative error < 2**-100), scaled to units of the result's last
   place (normal or subnormal), and rounded unless it lies within 2**-40 units of a half-way point
   or the sum is a power of two. Those rare cases (``_exact_double``) step from the guess to the
   double whose half-way points bracket ``D * 10**k``. Exact comparisons are of integers
   ``v * 5**a * 2**b`` held in 32 limbs of 32 bits (``_cmp3``; all operands here are < 2**900).

Compiled cost (a numba loop over 10**7 doubles, CPU time, one core of the 2-core dev machine):
about 13 ns a call for ``1e-11 <= x < 1e34`` (uniform [0, 1), shares), about 57 ns elsewhere.
Tests: ``tests/sim/test_compiled_rounding.py``.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numba
import numpy as np

__all__ = ["sig12", "sig12_array"]


def _ceil_pow10(j: int) -> float:
    """The smallest double ``>= 10**j`` (inf past the largest double)."""
    v = Fraction(10) ** j
    try:
        f = float(v)
    except OverflowError:
        return math.inf
    return f if Fraction(f) >= v else math.nextafter(f, math.inf)


def _pow5(n: int) -> tuple[float, float]:
    """``5**n`` as ``hi + lo``: ``hi`` the nearest double, ``lo`` the nearest double to the rest."""
    v = Fraction(5) ** n
    hi = float(v)
    return hi, float(v - Fraction(hi))


_C_OFF = 325  # _CEIL10[j + _C_OFF] = smallest double >= 10**j, j in [-325, 309]
_CEIL10 = np.array([_ceil_pow10(j) for j in range(-_C_OFF, 310)])
_P5_OFF = 340  # _P5H[n + _P5_OFF] + _P5L[n + _P5_OFF] ~ 5**n, n in [-340, 340]
_P5H, _P5L = (np.array(t) for t in zip(*(_pow5(n) for n in range(-_P5_OFF, _P5_OFF + 1))))
_P10 = np.array([float(10**p) for p in range(23)])  # exact doubles
_SPLIT = 134217729.0  # 2**27 + 1, Veltkamp's splitter for 53-bit significands
_LIMBS = 32
_M32 = np.uint64(0xFFFFFFFF)
_S32 = np.uint64(32)
_P5_SMALL = np.array([5**i for i in range(14)], dtype=np.uint64)
_HALF_MARGIN = 2.0**-40


@numba.njit(cache=True)
def _two_prod(a: float, b: float) -> tuple[float, float]:
    """Dekker's TwoProduct: ``(p, e)`` with ``p = fl(a * b)`` and ``a * b == p + e`` exactly
    (no overflow, no underflow of ``e``)."""
    p = a * b
    t = _SPLIT * a
    ah = t - (t - a)
    al = a - ah
    t = _SPLIT * b
    bh = t - (t - b)
    bl = b - bh
    return p, ((ah * bh - p) + ah * bl + al * bh) + al * bl


@numba.njit(cache=True)
def _big(v: int, p5: int, p2: int) -> np.ndarray:
    """``v * 5**p5 * 2**p2`` (``0 <= v < 2**63``, ``p5, p2 >= 0``) as little-endian 32-bit limbs."""
    if 64 + (7 * p5) // 3 + p2 >= 32 * _LIMBS:  # 7/3 > log2(5): never true for sig12's operands
        raise OverflowError("sig12: integer too wide")
    r = np.zeros(_LIMBS, np.uint64)
    u = np.uint64(v)
    r[0] = u & _M32
    r[1] = u >> _S32
    n = 2
    while p5 > 0:
        s = min(p5, 13)
        f = _P5_SMALL[s]
        carry = np.uint64(0)
        for i in range(n):
            t = r[i] * f + carry
            r[i] = t & _M32
            carry = t >> _S32
        r[n] = carry
        n += 1
        p5 -= s
    q = p2 // 32
    b = np.uint64(p2 % 32)
    cb = np.uint64(32 - p2 % 32)
    if p2 > 0:
        for i in range(_LIMBS - 1, -1, -1):
            w = (r[i - q] << b) & _M32 if i >= q else np.uint64(0)
            if i > q and b > 0:
                w |= r[i - q - 1] >> cb
            r[i] = w
    return r


@numba.njit(cache=True)
def _cmp3(v1: int, a1: int, b1: int, v2: int, a2: int, b2: int) -> int:
    """Sign of ``v1 * 5**a1 * 2**b1 - v2 * 5**a2 * 2**b2``, exactly (``v1, v2`` in ``[0, 2**63)``)."""
    c = min(a1, a2)
    d = min(b1, b2)
    x = _big(v1, a1 - c, b1 - d)
    y = _big(v2, a2 - c, b2 - d)
    for i in range(_LIMBS - 1, -1, -1):
        if x[i] != y[i]:
            return 1 if x[i] > y[i] else -1
    return 0


@numba.njit(cache=True)
def _exact_double(d: int, k: int, um: int, ue: int) -> float:
    """The double nearest ``d * 10**k`` (ties to even), searched from the guess ``um * 2**ue`` by
    exact comparisons with the half-way points between neighbouring doubles."""
    while um >= 2**53:
        um //= 2
        ue += 1
    while 0 < um < 2**52 and ue > -1074:
        um *= 2
        ue -= 1
    while True:
        c = _cmp3(d, k, k, 2 * um + 1, 0, ue - 1)  # against the point half-way up
        if c > 0 or (c == 0 and um % 2 == 1):
            um += 1
            if um == 2**53:
                um, ue = 2**52, ue + 1
            if c == 0:
                break
            continue
        if c == 0 or um == 0:
            break
        bottom = um == 2**52 and ue > -1074  # the double below is in the binade below
        c = _cmp3(d, k, k, 4 * um - 1 if bottom else 2 * um - 1, 0, ue - 2 if bottom else ue - 1)
        if c < 0 or (c == 0 and um % 2 == 1):
            um, ue = (2**53 - 1, ue - 1) if bottom else (um - 1, ue)
            if c == 0:
                break
            continue
        break
    return math.ldexp(float(um), ue)


@numba.njit(cache=True)
def _general(ax: float, k: int) -> float:
    """Tier 3 of the module docstring: ``sig12(ax)`` for ``ax > 0`` whose decade gives ``|k| > 22``."""
    y = math.ldexp(ax * _P5H[_P5_OFF - k], -k)  # ax / 10**k within 2.3e-4, in [1e11, 1e12]
    n0 = math.floor(y)
    f = y - n0
    if abs(f - 0.5) > 1e-3:
        d = n0 + 1 if f > 0.5 else n0
    else:
        m, e = math.frexp(ax)
        c = _cmp3(2 * int(math.ldexp(m, 53)), -k, e - 53 - k, 2 * n0 + 1, 0, 0)
        d = n0 + 1 if c > 0 or (c == 0 and n0 % 2 == 1) else n0
    # d * 5**k as a double-double s + e2, then rounded to the result's last place 2**ue
    p, t = _two_prod(float(d), _P5H[_P5_OFF + k])
    t += d * _P5L[_P5_OFF + k]
    s = p + t
    e2 = t - (s - p)  # Fast2Sum: |p| >= |t|
    mant, ex = math.frexp(s)
    ue = max(ex + k - 53, -1074)
    a = math.ldexp(s, k - ue)  # in [0.5, 2**53)
    n = math.floor(a)
    g = ((a - n) - 0.5) + math.ldexp(e2, k - ue)  # position in [n - 0.5, n + 1.5] as [-1, 1]
    if mant != 0.5 and _HALF_MARGIN < abs(g) < 1.0 - _HALF_MARGIN:
        return math.ldexp(float(n + 1 if g > 0 else n), ue)
    return _exact_double(d, k, n, ue)


@numba.njit(cache=True)
def sig12(x: float) -> float:
    """``float(format(x, ".12g"))`` bit for bit, for every double ``x`` (module docstring)."""
    ax = abs(x)
    if not ax < math.inf or ax == 0.0:
        return x
    e10 = math.floor((math.frexp(ax)[1] - 1) * 0.3010299956639812)  # log10(2): off by at most 1
    while ax < _CEIL10[e10 + _C_OFF]:
        e10 -= 1
    while ax >= _CEIL10[e10 + 1 + _C_OFF]:
        e10 += 1
    k = e10 - 11  # ax / 10**k in [1e11, 1e12)
    if k > 22 or k < -22:
        r = _general(ax, k)
    elif k <= 0:
        pw = _P10[-k]
        h, lo = _two_prod(ax, pw)
        n0 = np.floor(h)
        s = (h - (n0 + 0.5)) + lo  # sign of ax * 10**-k - (n0 + 0.5), exact
        if s == 0.0:  # a tie: to even
            s = n0 % 2.0 - 0.5
        r = (n0 + (s > 0.0)) / pw
    else:
        pw = _P10[k]
        n0 = np.floor(ax / pw)
        bh, bl = _two_prod(n0 + 0.5, pw)
        s = (ax - bh) - bl  # sign of ax - (n0 + 0.5) * 10**k, exact
        if s == 0.0:
            s = n0 % 2.0 - 0.5
        r = (n0 + (s > 0.0)) * pw
    return r if x > 0 else -r


@numba.njit(cache=True)
def sig12_array(xs: np.ndarray) -> np.ndarray:
    """:func:`sig12` of each element of a float64 array (any shape)."""
    flat = xs.ravel()
    out = np.empty(flat.size)
    for i in range(flat.size):
        out[i] = sig12(flat[i])
    return out.reshape(xs.shape)
