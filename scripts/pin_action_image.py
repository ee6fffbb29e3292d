"""Write the image digest into action.yml's `image` input default (the release workflow's step).

    python scripts/pin_action_image.py action.yml ghcr.io/OWNER/evalgate@sha256:DIGEST
    python scripts/pin_action_image.py action.yml sha256:IMAGE_ID    (a local build, scripts/release.py)

Only the `image` input changes: its `default:` line becomes the pin, and its description, which
in the source says that an empty image builds from the Dockerfile, says that this action pins its
image by digest. The released action.yml is the source one plus the pin (docs/security.md,
"Releases").
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

# What action.yml's `image` input accepts: a registry reference by digest, or a local image id.
REFERENCE = re.compile(r"(?:[a-z0-9][a-z0-9._/-]*@)?sha256:[0-9a-f]{64}")
# The released action's description of `image`: the source's says an empty value builds the image.
PINNED = """    description: >-
      The evalgate image, by content only. This released action pins, by digest, the image it was
      released with (the default; docs/release.md). Another image is NAME@sha256:DIGEST (pulled)
      or an image id sha256:ID, never a tag (docs/security.md).
"""


def pin(text: str, reference: str) -> str:
    if not REFERENCE.fullmatch(reference):
        raise ValueError(f"not a registry reference by digest: {reference!r}")
    block = re.search(r"(?m)^  image:\n(?:    .*\n)*?    default: .*$", text)
    if block is None:
        raise ValueError("action.yml has no `image` input with a default")
    start, end = block.span()
    pinned = re.sub(r"(?m)^    default: .*$", f'    default: "{reference}"', text[start:end])
    described = re.sub(
        r"(?m)^    description: (?:>-\n(?:      .*\n)+|.*\n)", lambda _: PINNED, pinned, count=1
    )
    if described == pinned:
        raise ValueError("action.yml's `image` input has no description to update")
    return text[:start] + described + text[end:]


def main(argv: list[str]) -> int:
    if len(argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    path = Path(argv[0])
    try:
        path.write_text(pin(path.read_text(encoding="utf-8"), argv[1]), encoding="utf-8")
    except ValueError as exc:
        print(f"pin_action_image: {exc}", file=sys.stderr)
        return 2
    print(f"{path}: image pinned to {argv[1]}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
