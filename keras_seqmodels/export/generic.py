"""Generic export: Keras's own SavedModel export of a model's inputs."""


def export_model(model, directory, **options):
    """Write ``model`` with ``model.export(directory)`` (endpoint ``serve``)."""
    if options:
        raise ValueError(
            f"export: the generic exporter takes no options. Received: {sorted(options)}"
        )
    model.export(directory, format="tf_saved_model", verbose=False)
