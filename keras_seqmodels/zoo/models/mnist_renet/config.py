"""Training defaults of mnist-renet: a small network (16 and 32 units per direction, no
hidden Dense layer, no shifted images) that trains in minutes. The shipped model's options
are in its card (``zoo/mnist-renet/card.md``)."""

CONFIG = {
    "epochs": 5,
    "batch_size": 128,
    "seed": 0,
    "units": 16,
    "units2": 32,
    "cell": "gru",
    "reset_after": False,  # GRU: reset gate before the recurrent matrix
    "dropout": 0.2,  # before each Dense layer (the hidden ones and the scores)
    "patch_size": 2,  # both ReNet layers' (non-overlapping square patches)
    "renet_dropout": 0.0,  # after each ReNet layer (0: none)
    "fc_units": 0,  # width of the ReLU Dense layers before the scores (0: none)
    "fc_layers": 1,  # how many of them, with fc_units > 0
    "augment_shift": 0,  # training images shifted by up to this many pixels (0: none)
    "learning_rate": 2e-3,
}
VALID_SIZE = 5000  # held out from the 60,000 training images
SPLIT_SEED = 0
