"""Training defaults of pixel-mnist (``CONFIG``) and pixel-mnist-permuted
(``PERMUTED_CONFIG``): MNIST read one pixel at a time, 784 steps, in raster
order or in one fixed permutation. The shipped models' options are in their
cards (``zoo/pixel-mnist/card.md``, ``zoo/pixel-mnist-permuted/card.md``)."""

CONFIG = {
    "epochs": 30,
    "batch_size": 128,
    "seed": 0,
    "layer": "mingru",  # the recurrent layer of each block: network.LAYERS
    "units": 128,  # the width of every block (and of the recurrent layer)
    "blocks": 4,  # residual blocks: LayerNorm -> recurrent layer -> GLU -> dropout
    "dropout": 0.1,  # after each block's GLU, and before the scores
    "chrono": True,  # forget-gate biases at time constants up to 784 steps (lstm, min*)
    "pool": "mean",  # over the 784 steps: "mean" or "last"
    "learning_rate": 2e-3,  # the peak of the schedule (AdamW)
    "weight_decay": 0.05,  # AdamW's, on the matrices (not biases, norms, recurrent vectors)
    "warmup_epochs": 1,  # the rate climbs linearly over these epochs
    # The cosine decay spans --epochs, or with schedule_seconds > 0 this many
    # seconds of training (set it to --time-budget: the rate then reaches its
    # floor when the budget stops the run, whatever an epoch takes).
    "schedule_seconds": 0.0,
    "clipnorm": 1.0,
}
# The pixel order: numpy.random.default_rng(permutation_seed).permutation(784).
PERMUTED_CONFIG = dict(CONFIG, permutation_seed=0)
VALID_SIZE = 5000  # held out from the 60,000 training images
SPLIT_SEED = 0
PIXELS = 784
SMOKE_SIZES = {"train": 32, "validation": 16, "test": 16}
