"""Code the tests share: factories of results and probe sets, tiny models, the GitHub stand-in.

Importable as `helpers.*` because pyproject.toml puts tests/ on pytest's `pythonpath`.
"""
