"""The zoo model ``ntm-copy``: its task class and recipe hooks."""
