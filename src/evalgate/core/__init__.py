"""The pure core: no torch, no files, no network, no environment. Bytes and objects in, records out."""
