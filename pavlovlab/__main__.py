"""``python -m pavlovlab`` and the ``pavlovlab`` console script: start, doctor, student, reproduce.

    pavlovlab start [DIR]            # learner copies into DIR (default ./pavlovlab-course), then JupyterLab there
    pavlovlab doctor                 # is this machine ready for the course? (paste it when asking for help)
    pavlovlab student OUTDIR         # learner copies of the notebooks (solutions removed)
    pavlovlab reproduce --quick      # re-run the course's figure experiments from the package
"""

from __future__ import annotations

import sys

from .teach.cli import main

__all__ = ["main"]

if __name__ == "__main__":
    sys.exit(main())
