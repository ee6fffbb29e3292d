"""Kept so `python -m evalgate.edges.action` (workflows written before 0.2) still starts the Action.

The entry lives in `evalgate.github.action`; `evalgate action` is the supported way in.
"""

import sys

from evalgate.github.action import main

if __name__ == "__main__":
    sys.exit(main())
