"""The zoo model ``ptb-lstm``: its task class and recipe hooks."""
