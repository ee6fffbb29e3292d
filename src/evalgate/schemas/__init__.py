"""The packaged JSON Schemas (`<name>.schema.json` beside this file): one loader, read once.

They are package data, not user input, so each is parsed on first use and the same dict is
returned after: callers read it and must not change it (copy it first, as the tests do).
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources
from typing import Any


@cache
def schema(name: str) -> dict[str, Any]:
    """The parsed `<name>.schema.json`: "baseline", "config", "grammar", "probe" or "results"."""
    return json.loads(resources.files(__name__).joinpath(f"{name}.schema.json").read_text("utf-8"))


@cache
def loader_spec() -> re.Pattern[str]:
    """`package.module:function` (`--loader`, `loader:`): the configuration schema's own pattern,
    so the flag, the configuration and the plugin loader accept the same strings."""
    return re.compile(schema("config")["properties"]["loader"]["pattern"])
