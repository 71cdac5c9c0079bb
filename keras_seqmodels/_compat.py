"""The few private Keras imports the package cannot avoid, kept in one place.

- ``backend_rnn``: each backend's optimised time loop (``tf.while_loop`` with
  TensorArrays on TensorFlow, ``lax.scan`` on JAX). ``keras.ops.scan`` is public
  but on TensorFlow it requires the per-step outputs to have the structure of
  the carry, which would force every state to be stacked over time.
- ``DropoutRNNCell``: the mix-in whose cached masks ``keras.layers.RNN``
  pre-populates before its loop; inheriting it lets our cells use dropout
  inside Keras's own RNN layer too.
- ``tensorflow_cudnn_rnn()``: the TensorFlow backend's cuDNN wrappers
  (``_cudnn_lstm``, ``_cudnn_gru``: the weight packing for
  ``tf.raw_ops.CudnnRNNV3`` that ``keras.layers.LSTM`` / ``GRU`` use on a
  GPU), imported on use since they need TensorFlow.
- ``get_keras_mask`` / ``set_keras_mask``: read and attach a tensor's mask on
  every backend (JAX arrays take no attributes; Keras keeps a side table),
  used by models that subclass ``keras.Model`` and return a masked output.
- ``run_functional_graph``: walk a functional model's layer calls in order
  with values of one's own (``Function._run_through_graph``), used by the
  ONNX and LiteRT exporters to convert a model layer by layer.
- ``tensorflow_trainer()``: the TensorFlow backend's optimizer base class,
  trainer class and trainer module, which ``training.distribute_fixes``
  patches (gradient clipping summed over replicas, multi-worker ``fit``).

And three private TensorFlow calls of the LiteRT exporter's Elman route:

- ``create_graph_op``: add an op by its type name to a graph.
- ``registered_op_def`` / ``register_op_defs``: read and add TensorFlow op
  definitions (the stub op that LiteRT's converter fuses into its RNN kernel).
"""

from keras.src.backend import rnn as backend_rnn
from keras.src.backend.common.masking import get_keras_mask, set_keras_mask
from keras.src.layers.rnn.dropout_rnn_cell import DropoutRNNCell

__all__ = [
    "backend_rnn",
    "create_graph_op",
    "DropoutRNNCell",
    "get_keras_mask",
    "register_op_defs",
    "registered_op_def",
    "run_functional_graph",
    "set_keras_mask",
    "tensorflow_cudnn_rnn",
    "tensorflow_trainer",
]


def tensorflow_cudnn_rnn():
    """The module ``keras.src.backend.tensorflow.rnn`` (needs TensorFlow;
    the package exports a function of the same name, hence the import by
    path)."""
    import importlib

    return importlib.import_module("keras.src.backend.tensorflow.rnn")


def tensorflow_trainer():
    """``(TFOptimizer, TensorFlowTrainer, trainer_module)`` of Keras's
    TensorFlow backend (``keras.src.backend.tensorflow``; needs TensorFlow)."""
    import importlib

    optimizer = importlib.import_module("keras.src.backend.tensorflow.optimizer")
    trainer = importlib.import_module("keras.src.backend.tensorflow.trainer")
    return optimizer.TFOptimizer, trainer.TensorFlowTrainer, trainer


def run_functional_graph(model, inputs, call_fn):
    """Run ``call_fn(layer, *args, **kwargs)`` for each layer call of the
    functional ``model`` in graph order, with ``inputs`` in place of its
    ``keras.Input`` s and each call's outputs in place of its Keras tensors;
    returns the model's outputs in its output structure."""
    return model._run_through_graph(inputs, operation_fn=lambda op: op, call_fn=call_fn)


def create_graph_op(graph, op_type, inputs, dtypes, attrs):
    """Add an op to a TensorFlow ``graph`` by its type name
    (``Graph._create_op_internal``): the LiteRT exporter's RNN stub op, whose
    ``_tflite_input_indices`` attribute no public op constructor writes.
    Returns the ``tf.Operation``."""
    return graph._create_op_internal(op_type, inputs, dtypes=dtypes, attrs=attrs)


def registered_op_def(name):
    """TensorFlow's definition of the op ``name`` (an ``OpDef``), or ``None``
    (``tensorflow.python.framework.op_def_registry.get``)."""
    from tensorflow.python.framework import op_def_registry

    return op_def_registry.get(name)


def register_op_defs(op_defs):
    """Register op definitions (text ``OpDef`` s) with TensorFlow, as LiteRT's
    converter does for its own (``tensorflow.lite.python.convert
    .register_custom_opdefs``). A name may be registered once per process."""
    from tensorflow.lite.python import convert

    convert.register_custom_opdefs(list(op_defs))
