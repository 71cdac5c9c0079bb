"""The ``seqmodels`` command."""
