"""A Keras model that trains a linear-chain CRF with ``fit(x, y)``."""

import keras
from keras import ops

from keras_seqmodels._compat import get_keras_mask, set_keras_mask
from keras_seqmodels.tagging.crf import CRF, crf_log_likelihood
from keras_seqmodels.utils import bounds, serialization

_CRF_LOSSES = (None, "crf", "auto")


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class TokenAccuracy(keras.metrics.Mean):
    """Share of unmasked tokens whose predicted tag equals the target.

    ``y_pred`` holds tag ids ``(batch, time)`` (a :class:`CRFTagger`'s
    output) with its Keras mask; padded steps do not count, and every real
    token counts once: ``keras.metrics.Accuracy`` would average each row over
    its padded width first, so its figure depends on how the batches are
    padded. ``sample_weight`` ``(batch,)`` weights whole sequences.
    """

    def __init__(self, name="accuracy", dtype=None):
        super().__init__(name=name, dtype=dtype)

    def update_state(self, y_true, y_pred, sample_weight=None):
        from keras_seqmodels.seq2seq.masked_accuracy import token_mean_update

        hit = ops.cast(ops.equal(ops.cast(y_pred, "int32"), ops.cast(y_true, "int32")), "float32")
        mask = get_keras_mask(y_pred)
        mask = ops.ones_like(hit) if mask is None else ops.cast(mask, "float32")
        return token_mean_update(super().update_state, hit, mask, sample_weight)

    def get_config(self):
        return {"name": self.name, "dtype": self.dtype}


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class CRFTagger(keras.Model):
    """A sequence tagger with a CRF on top, trained the Keras way.

    Wraps a model that maps inputs to emission scores ("potentials",
    float ``(batch, time, num_tags)``, usually ``Dense(num_tags)`` over a
    recurrent encoder) and adds a :class:`CRF`. The model's output is the
    Viterbi path, int32 ``(batch, time)``; its loss is the CRF's mean
    negative log-likelihood per sequence,

        loss = mean_b [ log Z(e_b) - S(y_b) ],

    computed by the forward algorithm over the unmasked steps. So a tagger
    trains with integer tag targets as any Keras model does::

        tagger = ks.tagging.CRFTagger(potentials_model)
        tagger.compile("adam", metrics=["accuracy"])
        tagger.fit(x, y, validation_data=(x_val, y_val))
        tagger.evaluate(x_test, y_test)
        tags = tagger.predict(x_test)

    New relative to Keras: Keras 3 has no CRF. ``keras.Model(x, CRF()(p))``
    cannot be compiled with a target ``y`` because the loss needs the
    potentials and the transition scores, while the output is the decoded
    path; this model computes the loss from both in ``compute_loss``, on
    every backend. ``loss`` in ``compile`` is the CRF's own (leave it out, or
    pass ``"crf"``); ``"accuracy"`` in ``metrics`` means per-token accuracy of
    the Viterbi tags (``TokenAccuracy``), counted on unmasked steps only,
    every token once whatever the padded width of its batch.
    ``sample_weight`` weights whole sequences, shape ``(batch,)``.

    Args:
        potentials_model: a Keras model (or layer) from the inputs to
            potentials ``(batch, time, num_tags)``. Padding comes from its
            output mask (e.g. ``Embedding(mask_zero=True)``) and must be at
            the end of each row.
        num_tags: number of tags; read from the potentials model's output
            shape when left out.
        transitions_initializer: initializer of the CRF's transition, start
            and end scores.
        **kwargs: base ``keras.Model`` arguments (``name``).

    Call arguments:
        inputs: what ``potentials_model`` takes.
        training: Python boolean.

    Returns:
        int32 ``(batch, time)`` Viterbi tags, 0 at padded steps, with the
        mask of the potentials attached (metrics skip padding).

    Example:

    >>> import keras, numpy as np, keras_seqmodels as ks
    >>> words = keras.Input((None,), dtype="int32")
    >>> h = keras.layers.Embedding(20, 8, mask_zero=True)(words)
    >>> h = ks.layers.Bidirectional(
    ...     ks.layers.Recurrent(ks.cells.LSTMCell(8), return_sequences=True))(h)
    >>> tagger = ks.tagging.CRFTagger(keras.Model(words, keras.layers.Dense(3)(h)))
    >>> tagger.compile("adam", metrics=["accuracy"])
    >>> x = np.random.randint(1, 20, (8, 5)); y = x % 3
    >>> _ = tagger.fit(x, y, epochs=1, verbose=0)
    >>> tagger.predict(x, verbose=0).shape
    (8, 5)

    Reference:
        Lample et al. 2016, "Neural Architectures for Named Entity
        Recognition" (BiLSTM-CRF); Lafferty, McCallum & Pereira 2001.
    """

    def __init__(self, potentials_model, num_tags=None, transitions_initializer="zeros",
                 **kwargs):
        super().__init__(**kwargs)
        if not isinstance(potentials_model, keras.layers.Layer):
            raise TypeError(
                f"{self.name}: `potentials_model` must be a Keras model or layer that maps "
                f"the inputs to potentials (batch, time, num_tags). Received: "
                f"{type(potentials_model).__name__}"
            )
        if num_tags is None:
            try:
                num_tags = potentials_model.output.shape[-1]
            except (AttributeError, ValueError):
                num_tags = None
            if num_tags is None:
                raise ValueError(
                    f"{self.name}: pass `num_tags`; it cannot be read from "
                    f"{potentials_model.name}'s output shape."
                )
        self.potentials_model = potentials_model
        self.crf = CRF(num_tags, transitions_initializer=transitions_initializer, name="crf")
        self.num_tags = self.crf.num_tags
        self._crf_cache = None

    def build(self, input_shape=None):
        if not self.potentials_model.built:
            self.potentials_model.build(input_shape)
        if not self.crf.built:
            self.crf.build((None, None, self.num_tags))
        self.built = True

    def _potentials(self, inputs, training):
        potentials = self.potentials_model(inputs, training=training)
        mask = get_keras_mask(potentials)
        if keras.backend.standardize_dtype(potentials.dtype) != "float64":
            potentials = ops.cast(potentials, "float32")
        return potentials, mask

    def call(self, inputs, training=None):
        potentials, mask = self._potentials(inputs, training)
        # compute_loss runs right after call in the same train/test step (and
        # the same trace on JAX): it takes the potentials from here instead
        # of running the encoder a second time.
        self._crf_cache = (potentials, mask)
        tags = self.crf(potentials, mask=mask)
        if mask is not None:
            set_keras_mask(tags, mask)
        return tags

    def compute_loss(self, x=None, y=None, y_pred=None, sample_weight=None, training=True):
        if y is None:
            raise ValueError(
                f"{self.name}: fit and evaluate need integer tag targets `y` of shape "
                "(batch, time)."
            )
        cache, self._crf_cache = self._crf_cache, None
        potentials, mask = cache if cache is not None else self._potentials(x, training)
        if len(y.shape) != 2:
            raise ValueError(
                f"{self.name}: targets `y` must be integer tags of shape (batch, time). "
                f"Received shape {tuple(y.shape)}"
            )
        nll = -crf_log_likelihood(
            potentials, ops.cast(y, "int32"), mask, *self.crf._params()
        )
        if sample_weight is not None:
            weight = ops.cast(sample_weight, nll.dtype)
            if len(weight.shape) != 1:
                raise ValueError(
                    f"{self.name}: `sample_weight` weights whole sequences and must have "
                    f"shape (batch,). Received shape {tuple(weight.shape)}"
                )
            nll = nll * weight
        loss = ops.mean(nll)
        if self.losses:
            loss = loss + ops.cast(ops.sum(self.losses), loss.dtype)
        return loss

    def compile(self, optimizer="rmsprop", loss=None, metrics=None, **kwargs):
        if not (loss is None or (isinstance(loss, str) and loss in _CRF_LOSSES)):
            raise ValueError(
                f"{self.name}: the loss is the CRF's negative log-likelihood; leave `loss` "
                f"out of compile or pass loss='crf'. Received: loss={loss!r}"
            )
        if metrics is not None:
            metrics = [
                TokenAccuracy(name=m) if isinstance(m, str) and m in ("accuracy", "acc")
                else m
                for m in metrics
            ]
        super().compile(optimizer=optimizer, loss=None, metrics=metrics, **kwargs)

    def compile_from_config(self, config):
        # Keras skips compile on load when `compile` is overridden; this one
        # only maps "accuracy" and checks `loss`, so loading may call it.
        config = keras.saving.deserialize_keras_object(config)
        self.compile(**config)
        if getattr(self, "optimizer", None) is not None and self.built:
            self.optimizer.build(self.trainable_variables)

    def compute_output_spec(self, inputs, training=None):
        spec = self.potentials_model.compute_output_spec(inputs)
        return keras.KerasTensor(tuple(spec.shape[:2]), dtype="int32")

    def get_config(self):
        return {
            **super().get_config(),
            "potentials_model": keras.saving.serialize_keras_object(self.potentials_model),
            "num_tags": self.num_tags,
            "transitions_initializer": keras.initializers.serialize(
                self.crf.transitions_initializer
            ),
        }

    @classmethod
    def from_config(cls, config, custom_objects=None):
        bounds.check_config(cls.__name__, config)
        nested = serialization.deserialize_nested(config, ("potentials_model",), custom_objects)
        return cls(**nested)
