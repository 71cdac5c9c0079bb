"""Scheduled sampling: from teacher forcing to feeding the model's own outputs."""

import math

import keras

SCHEDULES = ("linear", "exponential", "inverse_sigmoid")


def teacher_forcing_probability(schedule, step, k=1.0, c=0.01, minimum=0.0):
    """ε_i, the probability of feeding the ground truth at training step i.

    - ``"linear"``: ε_i = max(minimum, k - c·i)  (k <= 1, slope c > 0);
    - ``"exponential"``: ε_i = max(minimum, k^i)  (0 < k < 1);
    - ``"inverse_sigmoid"``: ε_i = max(minimum, k / (k + exp(i / k)))  (k >= 1).

    Args:
        schedule: one of ``"linear"``, ``"exponential"``, ``"inverse_sigmoid"``.
        step: i >= 0 (a batch or an epoch count).
        k, c: the schedule's parameters as above.
        minimum: the floor ε never goes below.

    Returns:
        ε_i as a Python float in [minimum, 1].

    Example:

    >>> teacher_forcing_probability("linear", 30, k=1.0, c=0.01)
    0.7
    >>> round(teacher_forcing_probability("exponential", 2, k=0.9), 4)
    0.81

    Reference:
        Bengio, Vinyals, Jaitly & Shazeer, "Scheduled sampling for sequence
        prediction with recurrent neural networks", NeurIPS 2015, section 2.4.
    """
    if schedule == "linear":
        eps = k - c * step
    elif schedule == "exponential":
        eps = k**step
    elif schedule == "inverse_sigmoid":
        # k / (k + e^{i/k}) written to avoid overflowing exp for large i.
        exponent = step / k - math.log(k)
        eps = 0.0 if exponent > 700 else 1.0 / (1.0 + math.exp(exponent))
    else:
        raise ValueError(
            f"teacher_forcing_probability: `schedule` must be one of "
            f"{list(SCHEDULES)}. Received: schedule={schedule!r}"
        )
    return float(min(1.0, max(minimum, eps)))


def _feedback_layers(layer):
    found = []
    if hasattr(layer, "teacher_probability") and getattr(layer, "scheduled_sampling", False):
        found.append(layer)
    for child in getattr(layer, "layers", []) or []:
        found.extend(_feedback_layers(child))
    return found


class ScheduledSampling(keras.callbacks.Callback):
    """Lowers the probability of teacher forcing during training.

    At each epoch (``per="epoch"``) or batch (``per="batch"``) i, sets the
    ``teacher_probability`` ε of every ``OutputFeedback`` layer and every
    ``seq2seq.AttentionDecoder`` (``EncoderDecoder``) of the model built with
    ``scheduled_sampling=True`` to
    ``teacher_forcing_probability(schedule, i, k, c, minimum)``: those layers
    then feed, at each step, the ground truth y(t-1) with probability ε and
    their own previous output otherwise. ε is logged as
    ``teacher_probability``. Works on TensorFlow and JAX (on JAX a per-batch
    update first syncs the trainer's state, which costs a little time per
    batch).

    Args:
        schedule: ``"linear"``, ``"exponential"`` or ``"inverse_sigmoid"``.
        k, c, minimum: see ``teacher_forcing_probability``.
        per: ``"epoch"`` or ``"batch"``.

    Example:

    >>> import keras_seqmodels as ks
    >>> cb = ks.training.ScheduledSampling("inverse_sigmoid", k=5.0)
    >>> [round(ks.training.teacher_forcing_probability("inverse_sigmoid", i, k=5.0), 3)
    ...  for i in (0, 10, 20)]
    [0.833, 0.404, 0.084]

    Reference:
        Bengio et al., NeurIPS 2015.
    """

    def __init__(self, schedule="inverse_sigmoid", k=None, c=0.01, minimum=0.0, per="epoch"):
        super().__init__()
        if schedule not in SCHEDULES:
            raise ValueError(
                f"ScheduledSampling: `schedule` must be one of {list(SCHEDULES)}. "
                f"Received: schedule={schedule!r}"
            )
        if per not in ("epoch", "batch"):
            raise ValueError(
                f"ScheduledSampling: `per` must be 'epoch' or 'batch'. Received: per={per!r}"
            )
        if k is None:
            k = {"linear": 1.0, "exponential": 0.9, "inverse_sigmoid": 10.0}[schedule]
        if schedule == "exponential" and not 0 < k < 1:
            raise ValueError(
                f"ScheduledSampling: the exponential schedule needs 0 < k < 1. Received: k={k}"
            )
        if schedule == "inverse_sigmoid" and k < 1:
            raise ValueError(
                f"ScheduledSampling: the inverse-sigmoid schedule needs k >= 1. Received: k={k}"
            )
        self.schedule, self.k, self.c, self.minimum, self.per = schedule, k, c, minimum, per
        self._count = 0
        self.value = 1.0

    def _set(self, i):
        layers = _feedback_layers(self.model)
        if not layers:
            raise ValueError(
                "ScheduledSampling: the model has no OutputFeedback layer (nor "
                "EncoderDecoder / AttentionDecoder) built with "
                "scheduled_sampling=True."
            )
        self.value = teacher_forcing_probability(self.schedule, i, self.k, self.c, self.minimum)
        sync = getattr(self.model, "jax_state_sync", None)
        if sync is not None:
            # JAX keeps the training state outside the variables between
            # syncs; sync so the trainer re-reads the variables we assign.
            sync()
        for layer in layers:
            layer.teacher_probability.assign(self.value)

    def on_epoch_begin(self, epoch, logs=None):
        if self.per == "epoch":
            self._set(epoch)

    def on_train_batch_begin(self, batch, logs=None):
        if self.per == "batch":
            self._set(self._count)
            self._count += 1

    def on_epoch_end(self, epoch, logs=None):
        if logs is not None:
            logs["teacher_probability"] = self.value
