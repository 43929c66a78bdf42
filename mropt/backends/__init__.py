"""Solver back ends shared by the problem packages, one module per solver family.

* :mod:`mropt.backends.pulp` -- MILP/LP through PuLP: CBC (``COIN_CMD``) and HiGHS
  (in-process, highspy): solver construction with threads, time limit and gaps,
  status mapping, the proven bound read in the problem's own sense, the solver record.
* :mod:`mropt.backends.cpsat` -- OR-Tools CP-SAT (snake_case API): parameters, status
  mapping, the proven bound (:attr:`~mropt.backends.cpsat.CpResult.proven_bound`), the
  solver record.
* :mod:`mropt.backends.starve` -- test support: stop chosen solver calls at once,
  deterministically (fault injection).

A bound is read here only, and only under a status that proves it: a problem package
never reads a raw solver bound (tests/test_starved_solvers.py checks the source).

They sit just above ``mropt.model`` and below the problem packages
(docs/architecture.md), so every problem package sets its solvers up the same way.
"""
