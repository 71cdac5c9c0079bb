"""The zoo model ``multi30k-en-de``: its task class and recipe hooks."""
