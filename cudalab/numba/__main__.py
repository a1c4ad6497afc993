"""``python -m cudalab.numba program.py args...``: run an unmodified numba.cuda program on cudalab.

A package's ``__main__`` rather than a module run as a script: with ``CUDALAB_NUMBA=1`` cudalab has
already imported ``cudalab.numba`` at start-up, and running that same module again as ``__main__``
made Python warn ('found in sys.modules ... unpredictable behaviour') before every program."""
import sys

from . import main

sys.exit(main())
