"""evalgate: a containerised CI eval gate for language-model checkpoints."""

from evalgate.release import VERSION as __version__  # noqa: F401 (re-exported)

# Bumped whenever a change to scoring could move a log-likelihood: results measured with a
# different scoring version are not comparable (see probeset/manifest of comparability).
# "2": the prefix tree and the fused GELU (CHANGELOG.md).
SCORING_VERSION = "2"
