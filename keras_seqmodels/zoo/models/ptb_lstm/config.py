"""Training configuration of ptb-lstm: Zaremba et al.'s "small" setting with
dropout 0.2 and the rate halved after epoch 5 (the shipped model's)."""

CONFIG = {
    "epochs": 13,
    "batch_size": 20,  # rows of the stream
    "seed": 20,
    "units": 200,
    "layers": 2,
    "dropout": 0.2,
    "bptt": 20,  # window length
    "lr": 1.0,  # SGD rate on the loss summed over a window
    "decay": 0.5,
    "decay_after": 5,  # the rate decays every epoch after this one
    "clip": 5.0,  # global gradient-norm clip
    "init_scale": 0.1,
    # Variants, off in the shipped model (network.build_model): one dropout
    # mask per row and window (Gal & Ghahramani), dropout on h(t-1), and the
    # logits tied to the embedding (Press & Wolf).
    "variational": False,
    "recurrent_dropout": 0.0,
    "tie_weights": False,
}
SPLITS = {"train": "train", "validation": "valid", "test": "test"}
SMOKE_WORDS = 40  # the smoke stream's vocabulary
