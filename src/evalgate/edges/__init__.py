"""Thin I/O edges: atomic files, bounded input reads, progress, plots, the score cache.

The pure packages never import these (docs/ARCHITECTURE.md).
"""
