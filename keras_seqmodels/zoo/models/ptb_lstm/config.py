"""Training configurations of the PTB language models. ``CONFIG``
(``ptb-lstm``): Zaremba et al.'s "medium" setting (2 x 650, windows of 35,
dropout 0.5, the rate divided by 1.2 every epoch after epoch 6, 39 epochs)
with tied input and output embeddings. ``SMALL_CONFIG`` (``ptb-lstm-small``):
their "small" size with dropout 0.2, the rate halved after epoch 5, tied."""

SMALL_CONFIG = {
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
    # Variants (network.build_model): one dropout mask per row and window
    # (Gal & Ghahramani) and dropout on h(t-1), both off in the shipped
    # models; the logits tied to the embedding (Press & Wolf), on in both.
    "variational": False,
    "recurrent_dropout": 0.0,
    "tie_weights": True,
}
CONFIG = dict(
    SMALL_CONFIG,
    epochs=39,
    units=650,
    dropout=0.5,
    bptt=35,
    decay=0.8333333,  # 1 / 1.2
    decay_after=6,
    init_scale=0.05,
)
SPLITS = {"train": "train", "validation": "valid", "test": "test"}
SMOKE_WORDS = 40  # the smoke stream's vocabulary
