"""A plain heapq simulator of ``bench_sim.py``'s FIFO MapReduce model: the speed mropt is measured against.

The model (``bench_sim.py``, section 1): jobs arrive at their submit times with ``maps`` map
tasks of ``map_time`` seconds, then ``reduces`` reduce tasks of ``reduce_time`` seconds, released
when the job's last map ends; ``slots`` map and ``slots`` reduce slots; a free slot goes to the
first job in submit order with a task of that type waiting. One heap of events (a job's arrival,
a task's end), one end event per task, no batching: what a researcher writes in an afternoon.
It shares no code with mropt (it is also the mean-JCT check of the benchmark).

At one instant, every arrival and end is taken before slots are handed out, so a slot freed at
t may go to a job that arrives at t (as the SimPy model and mropt's ``fifo`` in event mode do).
"""

from __future__ import annotations

import heapq

Job = tuple[float, int, float, int, float]  # (submit, maps, map time, reduces, reduce time)

_ARRIVE, _MAP_END, _REDUCE_END = 0, 1, 2


def simulate(jobs: list[Job], slots: int) -> list[float]:
    """Finish time of each job (jobs in submit order, ``slots`` map and ``slots`` reduce slots)."""
    events: list[tuple[float, int, int]] = [(submit, _ARRIVE, j) for j, (submit, *_) in enumerate(jobs)]
    heapq.heapify(events)
    maps_left = [m for _, m, _, _, _ in jobs]  # maps not yet started
    maps_running = [0] * len(jobs)
    reduces_left = [r for _, _, _, r, _ in jobs]
    reduces_running = [0] * len(jobs)
    map_queue: list[int] = []  # jobs with maps waiting, by rank
    reduce_queue: list[int] = []  # jobs with reduces waiting, by rank
    free = [slots, slots]
    finish = [0.0] * len(jobs)
    while events:
        now = events[0][0]
        while events and events[0][0] == now:
            _, kind, j = heapq.heappop(events)
            if kind == _ARRIVE:
                heapq.heappush(map_queue, j)
            elif kind == _MAP_END:
                free[0] += 1
                maps_running[j] -= 1
                if maps_running[j] == 0 and maps_left[j] == 0:
                    if reduces_left[j]:
                        heapq.heappush(reduce_queue, j)
                    else:  # a map-only job ends with its last map
                        finish[j] = now
            else:
                free[1] += 1
                reduces_running[j] -= 1
                if reduces_running[j] == 0 and reduces_left[j] == 0:
                    finish[j] = now
        for queue, left, running, kind, phase in (
            (map_queue, maps_left, maps_running, _MAP_END, 0),
            (reduce_queue, reduces_left, reduces_running, _REDUCE_END, 1),
        ):
            while free[phase] and queue:
                j = queue[0]
                duration = jobs[j][2] if phase == 0 else jobs[j][4]
                while free[phase] and left[j]:
                    free[phase] -= 1
                    left[j] -= 1
                    running[j] += 1
                    heapq.heappush(events, (now + duration, kind, j))
                if not left[j]:
                    heapq.heappop(queue)
    return finish
