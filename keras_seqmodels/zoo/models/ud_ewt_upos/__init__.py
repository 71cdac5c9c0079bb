"""The zoo model ``ud-ewt-upos``: its task class and recipe hooks."""
