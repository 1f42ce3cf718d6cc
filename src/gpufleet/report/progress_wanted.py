"""Whether progress is drawn: asked for (no ``--no-progress``), on a terminal, and not turned off by
``GPUFLEET_NO_PROGRESS`` in the environment (set and not empty, the way ``NO_COLOR`` works). Apart from
``report.progress``, which draws it with ``rich.progress``, so that the CLI can name the variable in its
help without loading that (``tests/test_cli_start.py``)."""

from __future__ import annotations

import os
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.console import Console

#: Set (and not empty) to turn progress off, as ``--no-progress`` does.
NO_PROGRESS_ENV = "GPUFLEET_NO_PROGRESS"


def progress_wanted(console: Console, asked: bool = True) -> bool:
    """Whether to draw progress on ``console``: asked for, a terminal, not turned off by the environment."""
    return asked and console.is_terminal and not os.environ.get(NO_PROGRESS_ENV)
