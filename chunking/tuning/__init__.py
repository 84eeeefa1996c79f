"""Searching over chunking configurations: the space, the samplers, the quality-cost front
and whether the winner is real."""
