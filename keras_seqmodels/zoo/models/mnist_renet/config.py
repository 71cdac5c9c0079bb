"""Training configuration of mnist-renet (the shipped model's)."""

CONFIG = {
    "epochs": 5,
    "batch_size": 128,
    "seed": 0,
    "units": 16,
    "units2": 32,
    "cell": "gru",
    "reset_after": False,  # GRU: reset gate before the recurrent matrix
    "dropout": 0.2,
    "learning_rate": 2e-3,
}
VALID_SIZE = 5000  # held out from the 60,000 training images
SPLIT_SEED = 0
