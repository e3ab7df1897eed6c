"""Shared ``single_process`` marks (registered by ``conftest.py``; imported by test modules
only, after registration)."""

from __future__ import annotations

import pytest

#: For tests that read `Kedi.inline`'s hook recorder: it sees this process's hooks only.
recorded_hooks = pytest.mark.single_process("reads the hook calls recorded in this process")
#: For tests that monkeypatch the plugin's own modules: xdist workers never see the patch.
patched_plugin = pytest.mark.single_process("monkeypatches the plugin inside this process")
#: For tests that look at this process's objects after an in-process run.
this_process = pytest.mark.single_process("inspects the objects of this process after the run")
