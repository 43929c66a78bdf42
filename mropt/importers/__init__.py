"""Trace importers: one place per trace format, each registered by name (:mod:`mropt.importers.table`).

==============  =========================================  ==============================================
format          reader (the one parser of the format)      what it makes
==============  =========================================  ==============================================
``swim``        :mod:`.swim_trace`                         admission instances (:mod:`.swim`), workloads
                                                           (:mod:`.swim_workload`), job-history rows
``alibaba``     :mod:`.alibaba_trace`                      fairness instances (:mod:`.alibaba`), workloads
                                                           (:mod:`.alibaba_workload`), job-history rows
``jhist``       :mod:`.jhist`                              job-history rows; workloads (:mod:`.rumen_workload`)
``rumen``       :mod:`.rumen`                              job-history rows; workloads (:mod:`.rumen_workload`)
``simulation``  :mod:`.simulation`                         job-history rows of a ``mropt simulate --out`` folder
==============  =========================================  ==============================================

The package sits above the job-history database (:mod:`mropt.history`, whose batches it builds)
and beside the simulator, which it never imports (``tests/test_layering.py``). ``mropt
importers`` lists the table; ``mropt import-swim`` and ``mropt import-alibaba`` are built from it
(:mod:`mropt.cli.importers`).
"""

from __future__ import annotations

# isort: off
# registration order is detection order (mropt history import) and the order of `mropt importers`
from mropt.importers import jhist  # noqa: F401
from mropt.importers import rumen  # noqa: F401
from mropt.importers import swim  # noqa: F401
from mropt.importers import alibaba  # noqa: F401
from mropt.importers import simulation  # noqa: F401
# isort: on
