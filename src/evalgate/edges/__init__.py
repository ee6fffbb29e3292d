"""Thin I/O edges: files, the GitHub API, the Action entry point. The core never imports these."""
