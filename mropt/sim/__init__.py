"""The discrete-event cluster simulator (layer 3): workloads run under scheduling policies.

``simulate(workload, policy_name, params, seed=...)`` (:mod:`mropt.sim.run`) is the entry
point; :mod:`mropt.sim.engine` the event loop, :mod:`mropt.sim.policy` the policy interface
and table, :mod:`mropt.sim.policies` the policies, :mod:`mropt.sim.recorder` the outputs.
"""
