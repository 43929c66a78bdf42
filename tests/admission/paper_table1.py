"""AMB Table 1 (M = 30, R = 20), the paper's worked example, shared by the admission tests."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from mropt.model.admission import AdmissionInstance, Cluster, Job

TABLE1: dict[str, tuple[float, float, float, float]] = {  # id: TCm, TCr, deadline, benefit
    "j1": (150, 170, 500, 300),
    "j2": (160, 140, 650, 340),
    "j3": (190, 180, 980, 400),
    "j4": (140, 200, 400, 380),
    "j5": (400, 500, 1000, 1360),
    "j6": (190, 120, 600, 350),
}


def table1(
    extra: Iterable[tuple[str, float, float, float, float, float]] = (),
    rows: Mapping[str, tuple[float, float, float, float]] = TABLE1,
) -> AdmissionInstance:
    """Table 1's jobs (or ``rows``), submitted at 0, then ``extra`` jobs given as
    (id, TCm, TCr, deadline, benefit, submit time)."""
    all_rows = [(k, *v, 0.0) for k, v in rows.items()] + list(extra)
    jobs = tuple(
        Job(id=k, map_phase_time=m, reduce_phase_time=r, deadline=d, benefit=b, submit_time=t)
        for k, m, r, d, b, t in all_rows
    )
    return AdmissionInstance(cluster=Cluster(30, 20), jobs=jobs)
