"""Training configuration of multi30k-en-de (the shipped model's)."""

CONFIG = {
    "epochs": 40,
    "batch_size": 128,
    "seed": 1,
    "learning_rate": 2e-3,
    "label_smoothing": 0.1,
    "min_count": 2,  # words seen fewer times are spelled in characters
    "embedding_dim": 256,
    "encoder_units": 256,
    "decoder_units": 512,
    "encoder_layers": 2,
    "dropout": 0.4,
    "input_feeding": False,
    # Teacher-forcing schedule (Bengio et al. 2015): none, linear,
    # exponential or inverse_sigmoid; its k (0: ScheduledSampling's default),
    # the linear slope c, updated per epoch or batch.
    "scheduled_sampling": "none",
    "ss_k": 0.0,
    "ss_c": 0.01,
    "ss_per": "epoch",
    "beam": 5,  # decoding of evaluate and of the shipped model
    "alpha": 1.0,  # length normalisation, selected on val BLEU (1.0 over 0.6)
}
# Fixed parts of the network (the shipped model's EncoderDecoder).
NETWORK = dict(
    decoder_layers=1,
    bidirectional=True,
    cell_type="lstm",
    attention="multiplicative",
    # The summary already sets the decoder's initial state; feeding it at
    # every step too would add 1M weights (4 MB) to a 38 MB artifact.
    context_input=False,
    tie_embeddings=True,
    start_id=2,
    end_id=3,
)
SPLITS = {"train": "train", "validation": "val", "test": "test2016"}
WIDTHS = (16, 24, 32, 48, 64, 96, 128)  # padded lengths of the batches
SMOKE_PAIRS = [
    ("A man rides a bike.", "Ein Mann fährt ein Fahrrad."),
    ("Two dogs play in the snow.", "Zwei Hunde spielen im Schnee."),
    ("A girl reads a book.", "Ein Mädchen liest ein Buch."),
    ("A man plays in the snow.", "Ein Mann spielt im Schnee."),
]
