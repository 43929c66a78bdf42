"""Dominant Resource Fairness and DDRF (the DDRF paper, ``docs/papers.md``).

Importing this package registers its methods: ``drf`` (progressive filling,
sec. 3.1), ``drf-lp`` (continuous DRF), ``drf-milp`` and ``drf-cpsat`` (integer
leximin of weighted dominant shares; registered by name, :mod:`mropt.fairness.table`, so
that importing this package loads no solver). DDRF's sec. 4.1 listing runs one scheduling
round in :func:`mropt.fairness.ddrf.ddrf_round` (``mropt locality round``); locality
analysis (sec. 3.2, 4.2) is in :mod:`mropt.fairness.locality`.
"""

from mropt.fairness import drf, table  # noqa: F401  (registers methods: drf, then the exact ones by name)
from mropt.fairness.drf import FillingResult, progressive_filling
from mropt.fairness.metrics import envy_pairs, gaps, lex_compare
from mropt.fairness.verify import FairnessVerdict, verify
from mropt.registry import register_verifier

register_verifier("fairness", verify)

__all__ = ["FairnessVerdict", "FillingResult", "envy_pairs", "gaps", "lex_compare", "progressive_filling", "verify"]
