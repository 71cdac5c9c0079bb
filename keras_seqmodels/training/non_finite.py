"""Keep training when a gradient is not finite: skip, or take a random step."""

import logging

import keras
from keras import ops

from keras_seqmodels.utils import serialization

logger = logging.getLogger("keras_seqmodels")

ACTIONS = ("random_step", "skip")


@keras.saving.register_keras_serializable(package="keras_seqmodels")
class NonFiniteGuard(keras.optimizers.LossScaleOptimizer):
    """Optimizer wrapper: when a gradient has a NaN or Inf, don't apply it.

    If every gradient is finite, the inner optimizer applies them (with its
    own ``clipvalue``/``clipnorm``/``global_clipnorm`` clipping: clipping is
    Keras's, not re-implemented here). Otherwise, with ``action="skip"`` the
    variables are left unchanged; with ``action="random_step"`` they move by
    a random vector of global norm v (``step_norm``), which tends to leave the
    numerically unstable region (Deep Learning, section 10.11.1). Either way
    the event is counted in ``nonfinite_steps`` (a non-trainable optimizer
    variable, saved with the optimizer); ``NonFiniteGradientLogger`` logs it.

    It reuses the non-finite branch machinery of Keras's
    ``LossScaleOptimizer`` (which works under ``tf.distribute`` and JAX's
    stateless training step) with a loss scale fixed at 1; being a
    ``LossScaleOptimizer``, it is not wrapped again under a ``mixed_float16``
    policy, so it replaces dynamic loss scaling there. New relative to
    Keras: Keras's optimizers clip but turn NaN gradients into NaN weights.

    Args:
        inner_optimizer: a ``keras.optimizers.Optimizer``, e.g.
            ``keras.optimizers.SGD(0.01, clipnorm=1.0)``.
        action: ``"random_step"`` or ``"skip"``.
        step_norm: v > 0, the norm of the random step.
        seed: seed of the random steps.
        name: the optimizer's name.

    Example:

    >>> import keras, keras_seqmodels as ks
    >>> opt = ks.training.NonFiniteGuard(keras.optimizers.SGD(0.1, clipnorm=1.0),
    ...                                  action="random_step", step_norm=0.01)

    Reference:
        Pascanu, Mikolov & Bengio, "On the difficulty of training recurrent
        neural networks", ICML 2013; Deep Learning, section 10.11.1.
    """

    def __init__(
        self, inner_optimizer, action="random_step", step_norm=0.01, seed=None, name=None, **kwargs
    ):
        kwargs.pop("initial_scale", None)
        kwargs.pop("dynamic_growth_steps", None)
        if not isinstance(inner_optimizer, keras.optimizers.Optimizer):
            raise ValueError(
                "NonFiniteGuard: `inner_optimizer` must be a keras optimizer. "
                f"Received: inner_optimizer={inner_optimizer!r}"
            )
        if action not in ACTIONS:
            raise ValueError(
                f"NonFiniteGuard: `action` must be one of {list(ACTIONS)}. "
                f"Received: action={action!r}"
            )
        if isinstance(step_norm, bool) or not isinstance(step_norm, (int, float)) or step_norm <= 0:
            raise ValueError(
                "NonFiniteGuard: `step_norm` must be a positive float. "
                f"Received: step_norm={step_norm!r}"
            )
        super().__init__(inner_optimizer, initial_scale=1.0, name=name, **kwargs)
        self.action = action
        self.step_norm = float(step_norm)
        self.seed = seed
        self.seed_generator = keras.random.SeedGenerator(seed)

    def build(self, var_list):
        super().build(var_list)
        self.nonfinite_steps = self.add_variable(
            shape=(),
            dtype="int",
            initializer="zeros",
            aggregation="none",
            name="nonfinite_steps",
        )
        # The seed state travels with the optimizer's variables so that JAX's
        # stateless step advances it.
        self._track_variable(self.seed_generator.state)

    def scale_loss(self, loss):
        return loss

    def _random_step(self, variables):
        noise = [
            keras.random.normal(ops.shape(v), seed=self.seed_generator, dtype="float32")
            for v in variables
        ]
        norm = ops.sqrt(sum(ops.sum(ops.square(n)) for n in noise))
        scale = self.step_norm / ops.maximum(norm, 1e-12)
        return [ops.cast(n * scale, v.dtype) for n, v in zip(noise, variables)]

    # Finite gradients: the inner optimizer, no loss-scale bookkeeping.
    def _stateful_handle_finite_grads(self, grads, trainable_variables):
        self.inner_optimizer.apply(grads, trainable_variables=trainable_variables)

    def _stateless_handle_finite_grads(self, optimizer_variables, grads, trainable_variables):
        mapping = list(zip(self.variables, optimizer_variables))
        with keras.StatelessScope(state_mapping=mapping):
            new_trainable, new_inner = self.inner_optimizer.stateless_apply(
                self.inner_optimizer.variables, grads, trainable_variables
            )
        own = list(optimizer_variables[: len(self._variables)])
        return new_trainable, own + list(new_inner)

    def _stateful_handle_non_finite_grads(self):
        self.nonfinite_steps.assign_add(1)
        if self.action == "random_step":
            variables = self._trainable_variables
            for v, step in zip(variables, self._random_step(variables)):
                v.assign_add(step)

    def _stateless_handle_non_finite_grads(self, optimizer_variables, trainable_variables):
        mapping = list(zip(self.variables, optimizer_variables))
        with keras.StatelessScope(state_mapping=mapping) as scope:
            self.nonfinite_steps.assign_add(1)
            if self.action == "random_step":
                steps = self._random_step(trainable_variables)
                trainable_variables = [ops.add(v, s) for v, s in zip(trainable_variables, steps)]
        own = [scope.get_current_value(v) for v in self._variables]
        own = [
            o if o is not None else ov
            for o, ov in zip(own, optimizer_variables[: len(self._variables)])
        ]
        return list(trainable_variables), own + list(optimizer_variables[len(self._variables) :])

    def get_config(self):
        return {
            "name": self.name,
            "inner_optimizer": keras.saving.serialize_keras_object(self.inner_optimizer),
            "action": self.action,
            "step_norm": self.step_norm,
            "seed": self.seed,
        }

    @classmethod
    def from_config(cls, config, custom_objects=None):
        return cls(**serialization.deserialize_nested(config, ("inner_optimizer",), custom_objects))


class NonFiniteGradientLogger(keras.callbacks.Callback):
    """Logs the count of non-finite gradient steps of a ``NonFiniteGuard``.

    Adds ``nonfinite_steps`` to the epoch logs (so it appears in
    ``History``) and emits a warning on the ``keras_seqmodels`` logger when
    the count grew during the epoch.

    Example:

    >>> import keras, keras_seqmodels as ks
    >>> model = keras.Sequential([keras.Input((3,)), keras.layers.Dense(1)])
    >>> model.compile(ks.training.NonFiniteGuard(keras.optimizers.SGD(0.1)), "mse")
    >>> callbacks = [ks.training.NonFiniteGradientLogger()]
    >>> # model.fit(..., callbacks=callbacks): History gains "nonfinite_steps"
    """

    def __init__(self):
        super().__init__()
        self.last = 0

    def on_epoch_end(self, epoch, logs=None):
        opt = self.model.optimizer
        if not isinstance(opt, NonFiniteGuard) or not opt.built:
            return
        sync = getattr(self.model, "jax_state_sync", None)
        if sync is not None:
            sync()
        count = int(ops.convert_to_numpy(opt.nonfinite_steps))
        if count > self.last:
            logger.warning(
                "epoch %d: %d step(s) with non-finite gradients (%s); %d in total",
                epoch,
                count - self.last,
                opt.action,
                count,
            )
        self.last = count
        if logs is not None:
            logs["nonfinite_steps"] = count
