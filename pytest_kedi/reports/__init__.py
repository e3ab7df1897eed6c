"""Whole-report tools shared by the plugin and the CLI, with no pytest imports of their own:
reading saved ``--kedi-report`` documents (`load`), comparing a run with a baseline
(`compare`, `deltas`) and merging sharded reports into one verdict (`merge`).

This package's ``__init__`` imports nothing, so `pytest_kedi.plugin.records` can use
`deltas` without an import cycle.
"""
