"""The sst-treelstm recipe's pieces: skip-gram corpus and scorer, root metrics."""

import numpy as np
import pytest

from keras_seqmodels.zoo.models.sst_treelstm import network, skipgram


def test_extra_text_reads_conllu_words_and_plain_lines(tmp_path):
    conllu = tmp_path / "x.conllu"
    conllu.write_text(
        "# text = I don't like it.\n"
        "1\tI\tI\tPRON\t_\t_\t4\tnsubj\t_\t_\n"
        "2-3\tdon't\t_\t_\t_\t_\t_\t_\t_\t_\n"
        "2\tdo\tdo\tAUX\t_\t_\t4\taux\t_\t_\n"
        "3\tn't\tnot\tPART\t_\t_\t4\tadvmod\t_\t_\n"
        "4\tLike\tlike\tVERB\t_\t_\t0\troot\t_\t_\n"
        "4.1\tit\t_\t_\t_\t_\t_\t_\t_\t_\n"
        "\n"
        "1\tBad\tbad\tADJ\t_\t_\t0\troot\t_\t_\n"
    )
    plain = tmp_path / "x.txt"
    plain.write_text("A Good film\nbad\n")
    assert skipgram.text_sentences(str(conllu)) == [["i", "do", "n't", "like"], ["bad"]]
    assert skipgram.text_sentences(str(plain)) == [["a", "good", "film"], ["bad"]]
    # Only in-vocabulary words reach the corpus, as StringLookup ids; -1 ends a sentence.
    words = ["", "bad", "film", "good"]
    ids = skipgram.corpus_ids(skipgram.text_sentences(str(plain)), words)
    assert ids.tolist() == [4, 3, -1, 2, -1]


def test_pairs_stay_inside_sentences_and_the_scorer_gives_dot_products():
    # 3,000 words seen once each (rare: frequent-word subsampling keeps most),
    # in sentences of 5 words: word v is in sentence (v - 1) // 5.
    words = np.arange(1, 3001, dtype=np.int32).reshape(-1, 5)
    corpus = np.concatenate([words, -np.ones((len(words), 1), np.int32)], 1).ravel()
    data = skipgram.pair_batches(corpus, 3001, batch=64, steps=3, seed=0, window=2, negatives=4)
    assert len(data) == 3
    (c, o, n), targets, w = data[0]
    assert c.shape == o.shape == w.shape == (64,) and n.shape == (64, 4)
    assert targets.shape == (64, 5) and (targets[:, 0] == 1).all() and not targets[:, 1:].any()
    kept = w > 0
    assert 0 < kept.sum() < 64  # pairs across a sentence end are dropped
    assert ((c[kept] - 1) // 5 == (o[kept] - 1) // 5).all()
    assert (np.abs(c[kept] - o[kept]) <= 2).all() and (c[kept] != o[kept]).all()
    scorer = skipgram.build_scorer(3001, 3, seed=1)
    rng = np.random.default_rng(0)
    scorer.get_layer("output_vectors").set_weights([rng.normal(size=(3001, 3)).astype("float32")])
    w_in = scorer.get_layer("input_vectors").get_weights()[0]
    w_out = scorer.get_layer("output_vectors").get_weights()[0]
    logits = np.asarray(scorer.predict_on_batch([c, o, n]))
    expected = np.einsum("bkd,bd->bk", w_out[np.concatenate([o[:, None], n], 1)], w_in[c])
    np.testing.assert_allclose(logits, expected, rtol=1e-5, atol=1e-6)


@pytest.mark.tf_only  # the model takes strings (StringLookup)
def test_root_metrics_count_fine_and_binary_hits():
    from keras_seqmodels.trees import parse_ptb

    trees = [parse_ptb(t) for t in ["(4 (3 good) (4 fun))", "(0 (1 bad) (2 film))",
                                    "(2 (2 a) (2 film))"]]  # fmt: skip
    words = network.build_vocabulary(trees, min_count=1)
    model = network.build_model(words, embed_dim=4, units=3, dropout=0.0)
    dense = model.get_layer("classifier")
    kernel, bias = dense.get_weights()
    # Zero weights, biases favouring class 4: every root is predicted 4 (positive).
    dense.set_weights([np.zeros_like(kernel), np.array([0, 0, 0, 0, 5], "float32")])
    metrics = network.root_metrics(model, trees)
    assert metrics == {"fine_grained_accuracy": 1 / 3, "binary_accuracy": 0.5, "trees": 3,
                       "binary_trees": 2}  # fmt: skip
