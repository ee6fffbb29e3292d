"""The gate, pure: per-slice numbers, the paired statistics, the comparison with a baseline, the
verdict, baselines, the results document and shards (docs/gate.md).
"""
