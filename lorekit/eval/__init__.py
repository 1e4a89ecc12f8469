"""Evaluation: the harness that runs agents on environments, and where results live.

The run store (:mod:`lorekit.eval.store`) is the single place an evaluation
writes to, so reports, resumption and the CLI all read one source of truth.
"""
