"""Durak rules engine: pure, synchronous, deterministic given a seed."""
