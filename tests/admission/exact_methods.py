"""Test-only: the exact methods of SEQ admission, read from the registry.

Every exact admission method the registry lists is held to the SEQ brute force
(``brute_force.py``), except those that solve another problem: ``slots-cpsat`` models
every task on its slot without preemption (AMB sec. 3), whose optimum differs from
SEQ's (sec. 4.1; ``tests/admission/test_slots.py`` tests it on its own problem). A new
exact method is picked up without editing the tests.
"""

from __future__ import annotations

from mropt.registry import get_method, methods

#: exact admission methods of another problem than SEQ's (module docstring)
OTHER_PROBLEM = ("slots-cpsat",)


def seq_exact_methods() -> tuple[str, ...]:
    """The registry's exact admission methods of the SEQ problem, in registry order."""
    for name in OTHER_PROBLEM:
        assert get_method(name).exact, name  # a renamed or dropped method must not slip into the SEQ list
    found = tuple(m.name for m in methods("admission") if m.exact and m.name not in OTHER_PROBLEM)
    assert found, "no exact admission method registered"
    return found
