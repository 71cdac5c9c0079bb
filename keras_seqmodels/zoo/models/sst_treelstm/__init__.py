"""The zoo model ``sst-treelstm``: its task class and recipe hooks."""
