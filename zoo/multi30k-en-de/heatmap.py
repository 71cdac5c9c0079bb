"""Draw the attention of the shipped model for one sentence (the card's picture).

    python zoo/multi30k-en-de/heatmap.py "A man is riding a bicycle." attention.png

Equivalent to ``seqmodels plot attention "..." --output attention.png``.
"""

import sys


def main(argv):
    from keras_seqmodels.cli.main import main as seqmodels

    sentence = argv[0] if argv else "A man in a blue shirt is riding a bicycle down the street."
    path = argv[1] if len(argv) > 1 else "attention.png"
    return seqmodels(["plot", "attention", sentence, "--output", path])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
