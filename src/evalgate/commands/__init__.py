"""One module per sub-command, each exposing `main(args) -> int` (see cli.py)."""
