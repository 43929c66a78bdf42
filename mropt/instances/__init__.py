"""Instance generators (paper defaults), the workload parameters, and the admission/workload converters.

Trace importers are in :mod:`mropt.importers`.
"""
