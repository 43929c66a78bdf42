"""Shared data of the fairness tests."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2].parent / "shared"
ALIBABA = SHARED / "traces" / "alibaba-2017" / "batch_task.csv"

PAPER_EXAMPLE = {
    "kind": "fairness",
    "schema_version": 1,
    "resources": {"cpu": 9, "mem": 18},
    "users": [
        {"id": "A", "demand": {"cpu": 1, "mem": 4}},
        {"id": "B", "demand": {"cpu": 3, "mem": 1}, "weight": 1, "max_tasks": 10},
    ],
}


def alibaba_trace() -> Path:
    if not ALIBABA.is_file():
        pytest.skip(f"Alibaba 2017 trace not available at {ALIBABA} (kept in ../shared, not in the repo)")
    return ALIBABA
