"""Suite-wide test setup: the package imports from an uninstalled checkout too.

``python -m pytest`` puts the working directory on ``sys.path``, the ``pytest`` script does
not; CI installs the project (``pip install -e '.[dev]'``), where this is a no-op.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))
