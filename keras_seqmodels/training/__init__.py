"""Training utilities: distribution strategies, callbacks, regularizers."""

from keras_seqmodels.training import sequence_length
from keras_seqmodels.training.distribute import STRATEGIES, get_strategy
from keras_seqmodels.training.distribute_fixes import (
    clip_after_all_reduce,
    distribution_fixes,
    fix_multi_worker_fit,
)
from keras_seqmodels.training.fault_tolerance import (
    AtomicBackupAndRestore,
    AtomicModelCheckpoint,
    atomic_save,
    fault_tolerant_callbacks,
)
from keras_seqmodels.training.gradient_flow import (
    GradientFlowRegularizer,
    gradient_flow_terms,
)
from keras_seqmodels.training.non_finite import NonFiniteGradientLogger, NonFiniteGuard
from keras_seqmodels.training.scheduled_sampling import (
    ScheduledSampling,
    teacher_forcing_probability,
)

__all__ = [
    "AtomicBackupAndRestore",
    "AtomicModelCheckpoint",
    "atomic_save",
    "fault_tolerant_callbacks",
    "GradientFlowRegularizer",
    "NonFiniteGradientLogger",
    "NonFiniteGuard",
    "ScheduledSampling",
    "gradient_flow_terms",
    "sequence_length",
    "teacher_forcing_probability",
    "STRATEGIES",
    "get_strategy",
    "clip_after_all_reduce",
    "distribution_fixes",
    "fix_multi_worker_fit",
]
