"""Whole-kernel estimates: occupancy, waves, and the sampled/exact simulation driver."""
