"""GitHub at the edge: the REST client, the sticky comment, label approval, the Action's entry and
the pull request's scope (docs/github.md, docs/security.md).
"""
