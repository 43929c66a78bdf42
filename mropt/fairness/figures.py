"""Table 2 and the data and plots of Figs 1-4 of the DDRF paper (sec. 4.2).

The paper's setting: N = 20 tasks per job, R = 3 replicas, theta = 0.05, M from 100 to
1000 nodes. It does not give the rack size; mropt uses G = 20 nodes per rack
(:data:`RACK_SIZE`, a parameter everywhere). Every series comes in two kinds, named
in the data: ``bound`` (the paper's L(E) = L(E1) + L(E2), which can exceed 1) and
``exact`` (the probability under the model of :mod:`mropt.fairness.locality`).

* Table 2: p = 1 - (1 - 0.05)^E1 for E1 = 10..60 -- computed, beside the printed values
  (errata: the formula gives 40.1, 64.2, 78.5, 87.1, 92.3, 95.4 %).
* Fig 1: L(E) against E2 for several E1, M = 1000.
* Fig 2: node locality L(E1) (no rack contribution) against E1, for M = 100..1000.
* Fig 3: E2 - E1 needed for lambda = 99 % against E1 (M = 1000); ``None`` where no E2 reaches
  it (exactly, with theta = 0.05 rack launches count little, so 99 % needs E1 in the
  thousands at M = 1000), and the exact L at the bound's setting.
* Fig 4: E2 needed for lambda = 99 % against M, for several E1 (E1 = 0: no node-local wait).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mropt.fairness.locality import ddrf_locality_bound, ddrf_locality_exact, min_e2

N, R, THETA, RACK_SIZE, TARGET = 20, 3, 0.05, 20, 0.99
TABLE2_P = 0.05
TABLE2_PRINTED = {10: 0.40, 20: 0.65, 30: 0.79, 40: 0.87, 50: 0.93, 60: 0.98}
NODE_COUNTS = tuple(range(100, 1001, 100))


def table2(p: float = TABLE2_P) -> list[dict[str, Any]]:
    """Rows E1, computed p = 1 - (1 - p)^E1, and the paper's printed value (errata)."""
    return [{"E1": e1, "computed": 1 - (1 - p) ** e1, "printed": printed} for e1, printed in TABLE2_PRINTED.items()]


def fig1(
    M: int = 1000, e1s=(1, 2, 4, 6, 8, 10), e2_max: int = 200, step: int = 10, G: int = RACK_SIZE, theta: float = THETA
) -> dict[str, Any]:
    e2s = list(range(step, e2_max + 1, step))
    series = []
    for e1 in e1s:
        pts = [e2 for e2 in e2s if e2 >= e1]
        series.append(
            {
                "E1": e1,
                "E2": pts,
                "bound": [ddrf_locality_bound(e1, e2, N, R, M, theta)["L"] for e2 in pts],
                "exact": [ddrf_locality_exact(e1, e2, N, R, M, G, theta)["L"] for e2 in pts],
            }
        )
    return {"figure": 1, "M": M, "N": N, "R": R, "theta": theta, "G": G, "series": series}


def fig2(e1_max: int = 200, step: int = 10, node_counts=NODE_COUNTS) -> dict[str, Any]:
    e1s = list(range(step, e1_max + 1, step))
    series = []
    for M in node_counts:
        series.append(
            {
                "M": M,
                "E1": e1s,
                "bound": [ddrf_locality_bound(e1, e1, N, R, M, 0.0)["L_E1"] for e1 in e1s],
                "exact": [ddrf_locality_exact(e1, e1, N, R, M, 1, 0.0)["node"] for e1 in e1s],
            }
        )
    return {"figure": 2, "N": N, "R": R, "series": series}


def fig3(
    M: int = 1000, e1s=tuple(range(0, 201, 10)), G: int = RACK_SIZE, theta: float = THETA, target: float = TARGET
) -> dict[str, Any]:
    out: dict[str, Any] = {"figure": 3, "M": M, "target": target, "G": G, "theta": theta, "E1": list(e1s)}
    for kind in ("bound", "exact"):
        vals = []
        for e1 in e1s:
            e2 = min_e2(target, e1, N, R, M, G, theta, kind=kind)
            vals.append(None if e2 is None else e2 - e1)
        out[kind] = vals
    # what the bound's setting really gives (exact L at E2 = E1 + the bound's E2 - E1)
    out["exact_L_at_bound_E2"] = [
        None if v is None else ddrf_locality_exact(e1, e1 + max(v, 0) if e1 + v >= 1 else 1, N, R, M, G, theta)["L"]
        for e1, v in zip(e1s, out["bound"])
    ]
    return out


def fig4(
    e1s=(0, 10, 20, 40), node_counts=NODE_COUNTS, G: int = RACK_SIZE, theta: float = THETA, target: float = TARGET
) -> dict[str, Any]:
    series = []
    for e1 in e1s:
        row: dict[str, Any] = {"E1": e1, "M": list(node_counts)}
        for kind in ("bound", "exact"):
            row[kind] = [min_e2(target, e1, N, R, M, G, theta, kind=kind) for M in node_counts]
        series.append(row)
    return {"figure": 4, "target": target, "G": G, "theta": theta, "series": series}


def all_figures() -> dict[str, Any]:
    return {"table2": table2(), "fig1": fig1(), "fig2": fig2(), "fig3": fig3(), "fig4": fig4()}


def plot_figures(data: dict[str, Any], outdir: str | Path) -> list[Path]:
    """Write fig1.png .. fig4.png (matplotlib, Agg backend); solid = exact, dashed = paper's bound."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    outdir = Path(outdir)
    outdir.mkdir(parents=True, exist_ok=True)
    paths = []

    def save(fig, name: str) -> None:
        path = outdir / name
        fig.tight_layout()
        fig.savefig(path, dpi=100)
        plt.close(fig)
        paths.append(path)

    f1 = data["fig1"]
    fig, ax = plt.subplots(figsize=(6, 4))
    for s in f1["series"]:
        (line,) = ax.plot(s["E2"], s["exact"], label=f"E1={s['E1']} exact")
        ax.plot(s["E2"], s["bound"], "--", color=line.get_color(), label=f"E1={s['E1']} bound")
    ax.set(xlabel="E2", ylabel="L(E)", title=f"Fig. 1: locality vs E2 (M={f1['M']})")
    ax.legend(fontsize=6, ncol=2)
    save(fig, "fig1.png")

    fig, ax = plt.subplots(figsize=(6, 4))
    for s in data["fig2"]["series"]:
        (line,) = ax.plot(s["E1"], s["exact"], label=f"M={s['M']}")
        ax.plot(s["E1"], s["bound"], "--", color=line.get_color())
    ax.set(xlabel="E1", ylabel="node locality L(E1)", title="Fig. 2: locality vs E1 (no rack contribution)")
    ax.legend(fontsize=6, ncol=2)
    save(fig, "fig2.png")

    f3 = data["fig3"]
    fig, ax = plt.subplots(figsize=(6, 4))
    for kind, style in (("exact", "-o"), ("bound", "--s")):
        xs = [e for e, v in zip(f3["E1"], f3[kind]) if v is not None]
        ys = [v for v in f3[kind] if v is not None]
        ax.plot(xs, ys, style, markersize=3, label=kind)
    ax.set(xlabel="E1", ylabel="E2 - E1", title=f"Fig. 3: E2 - E1 for {f3['target']:.0%} locality (M={f3['M']})")
    ax.legend()
    save(fig, "fig3.png")

    fig, ax = plt.subplots(figsize=(6, 4))
    for s in data["fig4"]["series"]:
        for kind, style in (("exact", "-"), ("bound", "--")):
            xs = [m for m, v in zip(s["M"], s[kind]) if v is not None]
            ys = [v for v in s[kind] if v is not None]
            if ys:
                ax.plot(xs, ys, style, label=f"E1={s['E1']} {kind}")
    ax.set(xlabel="nodes M", ylabel="E2", title=f"Fig. 4: E2 for {data['fig4']['target']:.0%} locality")
    ax.legend(fontsize=6, ncol=2)
    save(fig, "fig4.png")
    return paths
