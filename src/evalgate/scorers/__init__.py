"""Model edges: the scorer protocol, the checkpoint loaders and the native reference GPT."""
