"""Rendering, pure: a results document in, text out (REPORT.md and its sections, the PR comment,
text bars, per_slice.csv, the badge, findings as text/JSON/workflow commands). Nothing is printed
or written here; `evalgate.edges.outputs` writes the files.
"""
