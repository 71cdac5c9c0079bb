"""The zoo model ``mnist-renet``: its task class and recipe hooks."""
