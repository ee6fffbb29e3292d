"""evalgate: a containerised CI eval gate for language-model checkpoints."""

from evalgate.release import VERSION as __version__  # noqa: F401 (re-exported)

# Bumped whenever a change to scoring could move a log-likelihood: results measured with a
# different scoring version are not comparable (see probeset/manifest of comparability).
# "2": the prefix tree and the fused GELU (CHANGELOG.md).
# "3": the prefix tree cuts inputs longer than 128 tokens too (every 64 tokens past 64), which
# version 2 ran whole: their log-likelihoods move by float32 rounding.
SCORING_VERSION = "3"
