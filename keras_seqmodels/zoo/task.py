"""The task API of the zoo: raw inputs in, plain Python answers out.

``keras_seqmodels.zoo.load(name)`` returns a ``Task``: the model's own
subclass, named by the spec of its folder (``keras_seqmodels.zoo.models``),
or this generic class for a model without one.
Every task has the same four members:

- ``predict(inputs)``: one raw input (a sentence, an image, ...) gives one
  answer; a list of them gives a list of answers. Answers are plain Python
  values (``str``, ``int``, ``float``, lists and dicts of them), never tensors.
- ``model``: the ``keras.Model`` (loaded from the bytes whose SHA-256 was
  checked, in safe mode).
- ``export(path, format="savedmodel", **options)``: the model written for
  serving in any format of ``keras_seqmodels.export.FORMATS``, by the writer
  its spec names, with its assets (e.g. a vocabulary).
- ``info``: a dict: ``name``, ``task``, ``domain``, ``data``, ``license`` (of
  the training data), ``metrics``, ``intended_use``, ``limits``, ``card``.
"""

import functools

from keras_seqmodels.zoo import api
from keras_seqmodels.zoo import inputs as zoo_inputs

INFO_FIELDS = (
    "task", "domain", "data", "license", "metrics", "intended_use", "limits", "card",
)  # fmt: skip


class InputError(ValueError):
    """A raw input a zoo task cannot answer: one line naming the model, what
    is wrong and the form expected, e.g. ``<name> predict: image 0 has
    a non-finite pixel; expected (28, 28) finite pixel values 0-255``.

    Every task raises it for the same kinds of input: a wrong shape, a
    non-finite number, a value out of range, a missing part (a question
    without its story) and, for the classifiers, an empty text (nothing to
    classify). Text-to-sequence tasks answer an empty text with the empty
    answer instead (``""``, ``[]``); docs/zoo.md has the table. The CLI turns
    it into its one-line usage error (exit status 2)."""

    def __init__(self, name, problem, expected):
        super().__init__(f"{name} predict: {problem}; expected {expected}")


class Task:
    """A zoo model with its preprocessing: ``predict`` maps raw inputs to answers.

    New relative to a bare ``keras.Model``: the input and output conversions
    (tokenising, vocabularies, tree parsing, label names) live here, so
    ``predict`` takes what a user has (strings, pixel lists) and returns what
    a user reads (strings, labels, digits).

    Args:
        name: the zoo name (``keras_seqmodels.zoo.list_models()``).
        model: an already loaded ``keras.Model`` to wrap (default: the zoo's
            artifact, checked).

    Example:

    >>> from keras_seqmodels.zoo.api import list_models
    >>> task = Task(list_models()[0])
    >>> sorted(task.info) == sorted(("name",) + INFO_FIELDS)
    True
    """

    # The Python values ``predict`` takes (``keras_seqmodels.zoo.inputs``):
    # "text", "array" or "pair", and the expected form its errors name
    # (default: the kind's). Anything else is an InputError before any model
    # runs, in every subclass's ``predict`` and ``predict_batch`` alike. The
    # generic task (a model without a task module) takes what its model
    # takes: "array" for a model whose inputs are all numeric.
    input_kind = "text"
    input_expected = None

    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        for method in ("predict", "predict_batch"):
            if method in cls.__dict__:
                setattr(cls, method, _checked(cls.__dict__[method], method == "predict_batch"))

    def check_inputs(self, inputs, batch=False):
        """``inputs`` as ``predict`` (``batch``: ``predict_batch``) uses them,
        or an ``InputError`` for a value not of the task's ``input_kind``."""
        problem, value = zoo_inputs.check(self.input_kind, inputs, batch)
        if problem is not None:
            expected = self.input_expected or zoo_inputs.EXPECTED[self.input_kind]
            raise InputError(self.name, problem, expected)
        return value

    def __init__(self, name, model=None):
        entry = api.info(name)
        self.name = name
        self.info = {"name": name, **{k: entry.get(k) for k in INFO_FIELDS}}
        self.model = api.load_model(name) if model is None else model
        if type(self) is Task:
            self.input_kind = _generic_input_kind(self.model)

    def __repr__(self):
        return f"<{type(self).__name__} {self.name!r}: {self.info['task']}>"

    # For an "array" task: the number of dimensions of one input (a batch has
    # one more). ``None``: one input is a string.
    single_ndim = None

    def is_single(self, inputs):
        """Whether ``inputs`` is one raw input rather than a list of them."""
        if self.single_ndim is None:
            return isinstance(inputs, str)
        import numpy as np

        try:
            return np.ndim(inputs) == self.single_ndim
        except ValueError:  # ragged: refused as a batch by predict_batch
            return False

    def run_model(self, inputs):
        """The model's outputs for one batch of its inputs, as NumPy.

        A direct call, not ``predict_on_batch``: Keras's predict function of
        every model is one ``tf.function`` of the same code, and TensorFlow
        counts their first traces together, so a process that loads several
        zoo tasks warned of retracing that never happened.
        """
        import keras

        return keras.ops.convert_to_numpy(self.model(inputs, training=False))

    def predict_batch(self, inputs):
        """Answers for a list of raw inputs (subclasses override this).

        The generic task feeds the list to the model as one NumPy batch and
        returns the outputs as nested lists.
        """
        import numpy as np

        return np.asarray(self.run_model(np.asarray(inputs))).tolist()

    def predict(self, inputs):
        """Plain Python answers for raw inputs.

        Args:
            inputs: one raw input, or a list of them (see the subclass).

        Returns:
            One answer for one input, a list of answers for a list.
        """
        if self.is_single(inputs):
            return self.predict_batch([inputs])[0]
        inputs = list(inputs)
        if not inputs:
            return []
        return self.predict_batch(inputs)

    def export_options(self, format="savedmodel"):
        """Keyword arguments the model's writer for ``format`` needs beyond
        the model: those its spec declares (``ModelSpec.export_options``, e.g.
        the shipped vocabulary, for its SavedModel writer)."""
        spec = _spec(self.name)
        if spec is None or format != "savedmodel":
            return {}
        return spec.default_export_options()

    def export_plan(self, format):
        """``(writer, options)`` that ``export`` hands to
        ``keras_seqmodels.export.write``: the writer its spec names for
        ``format`` (``None``: the format's lookup by model type) and
        ``export_options(format)``."""
        spec = _spec(self.name)
        return (None if spec is None else spec.exporter(format)), self.export_options(format)

    def export(self, path, format="savedmodel", **options):
        """Write the model for serving (``keras_seqmodels.export.write``).

        Args:
            path: the folder (``"savedmodel"``) or file (``"litert"``:
                ``.tflite``; ``"onnx"``: ``.onnx``) to write.
            format: a key of ``keras_seqmodels.export.FORMATS``.
            **options: passed to the model's writer (e.g. ``beam_size``,
                ``quantize``).

        Returns:
            ``path``.
        """
        from keras_seqmodels import export

        writer, declared = self.export_plan(format)
        if format == "savedmodel":  # the start of the signature's limit messages
            declared = {**declared, "served_name": self.name}
        return export.write(self.model, path, format, writer=writer, **{**declared, **options})


def _spec(name):
    from keras_seqmodels.zoo.models import specs

    return specs().get(name)


def _generic_input_kind(model):
    """The generic task's ``input_kind``: ``"array"`` for a model whose
    inputs are all numeric (its ``predict_batch`` feeds them to the model as
    one NumPy batch), else ``"text"``."""
    inputs = getattr(model, "inputs", None) or []
    if inputs and all(str(getattr(x, "dtype", "string")) != "string" for x in inputs):
        return "array"
    return "text"


def _checked(method, batch):
    """``method`` (a task's ``predict`` or ``predict_batch``) with its inputs
    checked by ``check_inputs`` first."""
    if getattr(method, "checks_inputs", False):
        return method

    @functools.wraps(method)
    def checked(self, inputs, *args, **kwargs):
        return method(self, self.check_inputs(inputs, batch), *args, **kwargs)

    checked.checks_inputs = True
    return checked


Task.predict = _checked(Task.predict, batch=False)
Task.predict_batch = _checked(Task.predict_batch, batch=True)


def task_class(name):
    """The ``Task`` subclass of zoo model ``name``: the one its folder's spec
    names (``Task`` for a model whose spec names none, or without a folder).

    Example:

    >>> from keras_seqmodels.zoo.models import specs
    >>> all(issubclass(task_class(name), Task) for name in specs())
    True
    """
    spec = _spec(name)
    return Task if spec is None else spec.task_class()


def load(name):
    """A zoo model as a task: raw inputs in, plain Python answers out.

    Args:
        name: a name from ``list_models()``.

    Returns:
        A ``keras_seqmodels.zoo.task.Task`` (the model's own subclass, from
        ``keras_seqmodels.zoo.models.<name with underscores>.task``; the
        generic ``Task`` for a model without one) with ``.predict(inputs)``,
        ``.model`` (the ``keras.Model``, SHA-256 checked, safe mode),
        ``.export(path, format=...)`` and ``.info``.

    Raises:
        KeyError: unknown name (the message lists the known models).
        ArtifactError: missing, modified or corrupt artifact.

    Example:

    >>> from keras_seqmodels.zoo.api import list_models
    >>> task = load(list_models()[0])
    >>> task.info["name"] == list_models()[0], task.model is not None
    (True, True)
    """
    api.info(name)  # an unknown name fails here, listing the known ones
    return task_class(name)(name)
