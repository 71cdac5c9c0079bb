"""The zoo model ``babi-memn2n``: its task class and recipe hooks."""
