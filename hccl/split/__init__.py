"""Gradient split strategies for all-reduce fusion: see ``hccl.split.api``."""
