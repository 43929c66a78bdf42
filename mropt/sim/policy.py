"""The policy interface of the simulator, and the table of policies by name.

In the spirit of Hadoop's pluggable ``TaskScheduler`` (``org.apache.hadoop.mapred.TaskScheduler``:
``assignTasks(TaskTracker)`` returns the tasks to launch on a tracker that reported free
slots; job listeners hear of arrivals). A policy:

* decides at a job's arrival: :meth:`Policy.on_arrival` returns an :class:`Admission`
  (accept or reject, with a reason);
* fills a node with free capacity: :meth:`Policy.assign` calls ``sim.launch(job, node,
  slot_type, level)`` for each task it starts there (like ``JobInProgress.obtainNewMapTask``,
  the call takes the task and updates the state at once, so the next choice sees it);
* may kill attempts (``sim.kill``: preemption, reclaiming slots), start backup attempts
  (``sim.speculate``: LATE), drop accepted jobs (``sim.drop``: AMB's timeout handling), and
  ask to be woken (``sim.wake_at``: periodic updates, delay-scheduling timeouts);
* hears of finished attempts, stages and jobs, node failures and recoveries.

It reads the cluster and the jobs through ``sim`` (:class:`mropt.sim.view.SimView`), which
it must not mutate except through those actions.

A policy declares the assignment ``mode`` its rules are written for: ``event`` (offered
a node whenever capacity frees or work appears: SimMR's style, fast, for the admission
policies) or ``heartbeat`` (offered a node at its Hadoop 1.x heartbeats while it has free
capacity and work is pending: for rules stated per heartbeat). ``mropt simulate --mode``
overrides it.

Policies register with :func:`register_policy`; ``mropt policies`` lists them.

**What a policy needs of its workload** (issue 28): each registration declares ``needs``, names
of :data:`NEEDS` (``slots``: nodes with map and reduce slots; ``deadlines``: at least one job
with a deadline; ``admission``: a workload of the admission model, every job with a deadline and
a benefit on a homogeneous slot cluster), ``()`` for a policy that runs on any workload (``drf``
schedules resource vectors, slots, or both). :meth:`Policy.check_input` refuses a workload that
lacks one with an :class:`InputError` naming the policy and what is missing, before the run
(``simulate``) and before a study runs (``mropt gap --check``); a policy whose parameters name
more input (``hei``'s history) extends it. Pools and queues are no need: without them ``fair``
and ``hei`` give each user a pool, ``capacity`` has one queue.
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Hashable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, ClassVar

from mropt.model.errors import InputError
from mropt.registry import Param, Table, check_params

if TYPE_CHECKING:
    from mropt.model.solution import Solution
    from mropt.model.workload import WorkloadInstance
    from mropt.sim.view import AttemptView, SimView

EVENT, HEARTBEAT = "event", "heartbeat"
MODES = (EVENT, HEARTBEAT)


@dataclass(frozen=True)
class Admission:
    """A policy's answer at a job's arrival."""

    accept: bool
    reason: str = ""


ACCEPT = Admission(True, "accepted")

#: one decision a policy records in its ``trace``: (time, job id, node, what was decided)
Decision = tuple[float, str, int, str]


class Policy:
    """Base class: accepts every job, launches nothing; subclasses override what they need.

    Everything a policy is given, may call or must provide is here and in
    :class:`mropt.sim.view.SimView` (``self.sim``). ``params`` are the registered parameters
    (:func:`make_policy` checks them and fills in the defaults). Three switches are for tests, and
    none changes a decision: ``reference`` runs the policy's plain rule without its accelerations
    (``drf``: the users sorted at every launch; ``fair``, ``capacity``: the pools, queues and jobs
    sorted at every task; ``dc``, ``minedf-wc``: the active jobs sorted at every offer; ``mpsa``:
    Algorithm 2's choice slot by slot), ``self_check`` checks kept structures against a plain
    recomputation at every decision (``fair``: the kept pool order against a sort; ``dc``: its
    lists of the jobs that may launch; ``mpsa``: its running counts and order; ``drf``: each
    user's idle position), and
    ``trace``, a list, receives the policy's decisions (:data:`Decision`; ``drf``: every offer).
    A fourth, ``without``, turns off some of the accelerations one by one (names of
    :attr:`accelerations`; ``drf``: ``blocked``, ``parked``, ``index``, ``runs``, ``deferred``).
    """

    #: the registered name (``register_policy`` sets it)
    name: ClassVar[str] = ""
    #: the assignment mode the policy's rules are written for (module docstring)
    mode: ClassVar[str] = EVENT
    #: the accelerations ``without`` may turn off one by one (none: the policy has none apart)
    accelerations: ClassVar[tuple[str, ...]] = ()
    #: heartbeat mode, speed only (runs of quiet heartbeats: :mod:`mropt.sim.lone_beats`):
    #: ``quiet_heartbeats(nodes, times)``, given heartbeats in time order (node ``nodes[i]`` at
    #: ``times[i]``, each with room, nothing else happening before the last of them, the clock not
    #: moved to them), answers how many of them in order launch nothing and call nothing on ``sim``,
    #: and applies their effects on the policy as :meth:`assign` at each time would. Of the first one
    #: it does not answer, it may have made only the steps that :meth:`assign` makes first whatever
    #: follows, at that heartbeat's own time (``fair``: an update() that recomputes nothing): the
    #: caller runs that heartbeat next, alone, through :meth:`assign`; the others it leaves
    #: untouched. None (the default): every heartbeat is offered to :meth:`assign`. A policy sets it
    #: in :meth:`start` (``fair``).
    quiet_heartbeats: Callable[[Sequence[int], Sequence[float]], int] | None = None

    def __init__(
        self,
        *,
        reference: bool = False,
        self_check: bool = False,
        trace: list[Decision] | None = None,
        without: Collection[str] = (),
        **params: Any,
    ) -> None:
        unknown = sorted(set(without) - set(self.accelerations))
        if unknown:
            known = ", ".join(self.accelerations) or "none"
            raise ValueError(f"policy {self.name!r}: no acceleration {unknown[0]!r} to turn off (known: {known})")
        self.without = frozenset(without)
        self.params = dict(params)
        self.reference = reference
        self.self_check = self_check
        self.trace = trace
        self.sim: SimView

    def start(self, sim: SimView) -> None:
        """Called once before the first event."""
        self.sim = sim

    def on_arrival(self, job: int) -> Admission:
        """Accept or reject job ``job`` (an index into ``sim.jobs``) at its submit time."""
        return ACCEPT

    def assign(self, node: int) -> None:
        """Node ``node`` has free capacity and work is pending: launch what should run there."""

    def on_attempt_end(self, attempt: AttemptView, outcome: str) -> None:
        """An attempt ended: ``outcome`` is ``succeeded``, ``killed`` or ``failed``.

        A policy that overrides this hook is told of every attempt alone, which makes the
        engine end a batch of identical attempts member by member. A policy that only
        counts should override :meth:`on_attempts_end` instead.
        """

    def on_attempts_end(self, attempt: AttemptView, outcome: str, count: int) -> None:
        """``count`` attempts that share ``attempt``'s job, stage, type and demand ended together.

        Called for every end (``count`` 1 for an attempt ending alone, the number of live
        members when a batch succeeds at once) unless the policy overrides
        :meth:`on_attempt_end`; ``attempt.node`` is one member's node. Made for policies
        that keep running counts or resource usage (Fair, Capacity, DRF): one call per
        batch keeps the engine's bulk completion of batches.
        """

    def on_rule_backup(self, job: int, started: bool) -> None:
        """The run's speculation rule started (``started``) or ended a backup attempt of ``job``.

        The policy gave no slot to it and hears of it through this hook only (its counters of
        the slots it gave leave it out); what it derives from a job's attempts may change:
        Fair's demand counts every active attempt (Hadoop 1.0.3 ``JobSchedulable.updateDemand``).
        """

    def on_stage_end(self, job: int, stage: int) -> None:
        """Every task of a stage has finished."""

    def on_job_end(self, job: int) -> None:
        """A job finished (its last stage ended) or was dropped."""

    def on_timer(self, tag: Hashable) -> None:
        """A time asked for with ``sim.wake_at(t, tag)`` has come."""

    def on_node(self, node: int, up: bool) -> None:
        """A node went down (its attempts were killed and re-queued) or came back."""

    def new_work_nodes(self) -> Iterable[int] | None:
        """Event mode, when work appeared: the nodes worth offering (None: every node, the default).

        The engine offers these nodes and those whose capacity freed. A policy returns fewer
        only when it knows that an offer of the others would launch nothing and change
        nothing (``drf``: nodes it knows no waiting task fits).
        """
        return None

    def job_order(self, slot_type: int) -> Sequence[int] | None:
        """The active jobs in the order the policy serves them (None: arrival order, the default).

        A speculation rule visits jobs in this order (:mod:`mropt.sim.speculation`): ``fifo``'s
        queue, ``fair``'s pools and jobs.
        """
        return None

    def use_plan(self, plan: Solution) -> None:
        """Execute ``plan``, an admission method's answer (``mropt simulate --plan``), given before
        the run. A policy registered with ``needs_plan`` (``seq``) executes it; the others ignore it."""

    def plan_times(self) -> Mapping[str, tuple[float, float]] | None:
        """Predicted (map end, finish) per accepted job id, for policies that plan (SEQ, AMB)."""
        return None

    def check_input(self, workload: WorkloadInstance) -> None:
        """Refuse, before the run, a workload this policy cannot run (module docstring).

        The default checks the needs the policy registered (:func:`check_needs`); an unregistered
        subclass has none. Called by :func:`mropt.sim.run.simulate` and the study's checks.
        """
        info = _POLICIES.get(type(self).name)
        if info is not None:
            check_needs(info, workload)


@dataclass(frozen=True)
class Need:
    """A property of the workload a policy cannot run without: ``missing(workload)`` says what lacks, or None."""

    what: str
    missing: Callable[[WorkloadInstance], str | None]
    hint: str


def _no_slots(workload: WorkloadInstance) -> str | None:
    if workload.uses_slots:
        return None
    resources = sorted({r for spec in workload.nodes for r in spec.resources})
    return f"the workload's nodes give resources ({', '.join(resources)}), not slots"


def _no_deadline(workload: WorkloadInstance) -> str | None:
    return None if any(job.deadline is not None for job in workload.jobs) else "no job of the workload has a deadline"


def _not_admission(workload: WorkloadInstance) -> str | None:
    from mropt.instances.workload_convert import to_admission

    try:
        to_admission(workload)
    except InputError as exc:
        return str(exc)
    return None


#: the needs a policy may declare (``register_policy(needs=...)``), by name
NEEDS: dict[str, Need] = {
    "slots": Need(
        "map and reduce slots on the nodes",
        _no_slots,
        "give the nodes map_slots and reduce_slots (import-alibaba --slots N), or run a policy without this need",
    ),
    "deadlines": Need(
        "jobs with deadlines", _no_deadline, "give jobs a 'deadline' (the policy rejects a job without one)"
    ),
    "admission": Need(
        "a workload of the admission model (mropt.instances.workload_convert.to_admission)",
        _not_admission,
        "give every job a deadline and a benefit, on nodes of one shape",
    ),
}


def check_needs(info: PolicyInfo, workload: WorkloadInstance) -> None:
    """InputError naming the policy, the first need ``workload`` lacks and what lacks; nothing if none."""
    for name in info.needs:
        need = NEEDS[name]
        problem = need.missing(workload)
        if problem is not None:
            others = [p.name for p in _POLICIES.values() if name not in p.needs and not p.needs_plan]
            hint = need.hint + (f" ({', '.join(others)})" if name == "slots" and others else "")
            raise InputError(f"policy {info.name!r} needs {need.what}, but {problem}; {hint}")


@dataclass(frozen=True)
class PolicyInfo:
    """A registered policy: its class, a one-line summary, its typed parameters, its source."""

    name: str
    cls: type[Policy]
    summary: str
    params: Mapping[str, Param]
    source: str
    needs_plan: bool = False
    needs: tuple[str, ...] = ()  # names of NEEDS


_POLICIES: Table[PolicyInfo] = Table("policy")


def register_policy(
    name: str,
    *,
    summary: str,
    source: str,
    needs: tuple[str, ...],
    params: Mapping[str, Param] | None = None,
    needs_plan: bool = False,
) -> Callable[[type[Policy]], type[Policy]]:
    """Class decorator: register a policy under ``name`` (a contract: scripts use the names).

    ``needs``: what the policy needs of its workload, names of :data:`NEEDS` (``()``: nothing).
    """
    unknown = [n for n in needs if n not in NEEDS]
    if unknown:
        raise ValueError(f"policy {name!r}: unknown need {unknown[0]!r} (known: {', '.join(NEEDS)})")

    def wrap(cls: type[Policy]) -> type[Policy]:
        _POLICIES.add(name, PolicyInfo(name, cls, summary, dict(params or {}), source, needs_plan, tuple(needs)))
        cls.name = name
        return cls

    return wrap


def policies() -> dict[str, PolicyInfo]:
    """Every registered policy, in registration order."""
    _load()
    return dict(_POLICIES)


def policy_info(name: str) -> PolicyInfo:
    """The policy registered under ``name`` (InputError naming the known ones if none)."""
    _load()
    return _POLICIES.lookup(name)


def make_policy(
    name: str,
    params: Mapping[str, Any] | None = None,
    *,
    reference: bool = False,
    self_check: bool = False,
    trace: list[Decision] | None = None,
    without: Collection[str] = (),
) -> Policy:
    """An instance of policy ``name`` given every declared parameter: checked, the defaults filled in.

    The registration is the one place of a default: a policy reads ``self.params[name]`` and
    restates none. ``reference``, ``self_check``, ``trace``, ``without``: the test switches of
    :class:`Policy`.
    """
    info = policy_info(name)
    checked = check_params("policy", name, info.params, params or {}, defaults=True)
    return info.cls(reference=reference, self_check=self_check, trace=trace, without=without, **checked)


def _load() -> None:
    import mropt.sim.policies  # noqa: F401  (the policies register on import)
