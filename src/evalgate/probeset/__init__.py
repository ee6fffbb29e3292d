"""The probe set, read and checked: pure (bytes and records in, probes and located findings out).

Records, text normalisation, the grammar table, the template rules, coverage, leaks, the sealed
manifest and probe lock, and authoring rows. No torch, no files, no network (docs/ARCHITECTURE.md);
`evalgate.probeset_io` is the edge that reads the configured files and hands their bytes in here.
"""
