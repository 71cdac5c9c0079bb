"""Training configuration of ntm-copy: the recipe's defaults (the LSTM
baseline's). The shipped NTM overrides ``curriculum_start`` (0) and, in its
second run, ``learning_rate`` (1e-4) on the command line; see
zoo/ntm-copy/card.md."""

CONFIG = {
    "epochs": 400,
    "batch_size": 32,
    "seed": 1,
    "network": "ntm",  # or "lstm", the baseline
    "memory_size": 128,
    "lstm_units": 128,
    "steps_per_epoch": 100,
    "max_length": 20,
    "curriculum_start": 4,  # first maximum training length (0: no curriculum)
    "curriculum_step": 2,
    "curriculum_threshold": 0.5,  # valid bit errors/seq below which it grows
    "mix": 0.2,  # fraction of sequences with lengths over the full range
    "learning_rate": 1e-3,
    "clipnorm": 10.0,
}
TEST_LENGTHS = (10, 20, 30, 40, 60, 80)
VALIDATION_LENGTHS = (10, 20, 40)
SMOKE = {"max_length": 3, "steps_per_epoch": 2, "lengths": (2,), "count": 4}
