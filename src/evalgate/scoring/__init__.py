"""Scoring math, pure: probes to model requests, and log-likelihoods back to per-probe entries.

The model itself sits behind `evalgate.scorers` (torch); this package never imports it.
"""
