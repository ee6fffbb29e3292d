"""Kept so `python -m evalgate.edges.pr_scope` (workflows written before 0.2) still runs.

The module lives in `evalgate.github.pr_scope`.
"""

import sys

from evalgate.github.pr_scope import main

if __name__ == "__main__":
    sys.exit(main())
