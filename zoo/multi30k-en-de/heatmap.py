"""Draw the attention of the shipped model for one sentence (the card's picture).

    python zoo/multi30k-en-de/heatmap.py "A man is riding a bicycle." attention.png
"""

import sys


def main(argv):
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    import tensorflow as tf

    from keras_seqmodels import zoo

    sentence = argv[0] if argv else "A man in a blue shirt is riding a bicycle down the street."
    path = argv[1] if len(argv) > 1 else "attention.png"
    model = zoo.load("multi30k-en-de")
    translation = model(tf.constant([sentence])).numpy()[0].decode("utf-8")
    weights, src, tgt = model.attention_weights(sentence, translation)
    fig, ax = plt.subplots(figsize=(0.5 * len(src) + 2, 0.4 * len(tgt) + 2))
    ax.imshow(weights, cmap="Greys", vmin=0, vmax=1)
    ax.set_xticks(range(len(src)), src, rotation=60, ha="right")
    ax.set_yticks(range(len(tgt)), tgt)
    ax.set_xlabel("source pieces (English)")
    ax.set_ylabel("output pieces (German)")
    ax.set_title(f"multi30k-en-de attention\n{sentence}\n{translation}", fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(translation)
    print("wrote", path)


if __name__ == "__main__":
    main(sys.argv[1:])
