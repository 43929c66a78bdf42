"""Problem data: instances of each problem kind, solutions, file I/O and validation.

This package imports nothing else of mropt.
"""

from mropt.model.admission import AdmissionInstance, Cluster, Job
from mropt.model.errors import InputError
from mropt.model.io import instance_from_dict, instance_to_json, load_instance, read_json, save_instance
from mropt.model.solution import Solution

__all__ = [
    "AdmissionInstance",
    "Cluster",
    "InputError",
    "Job",
    "Solution",
    "instance_from_dict",
    "instance_to_json",
    "load_instance",
    "read_json",
    "save_instance",
]
