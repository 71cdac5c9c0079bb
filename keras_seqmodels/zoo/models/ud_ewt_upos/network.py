"""ud-ewt-upos network: the id-level tagger cores, their ensemble and the
string model that ships (vocabularies, vectorizer and tag strings inside)."""

import numpy as np

WIDTHS = (16, 32, 64, 160)  # padded sentence lengths: a few shapes for XLA
MAX_CHARS = 20


def build_models(word_vocab, char_vocab, tags, use_crf=True, word_dim=100,
                 char_dim=32, char_units=64, units=150, dropout=0.33):  # fmt: skip
    """Training model (ids + gold tags -> tags, CRF loss) and the ids model."""
    import keras

    from keras_seqmodels.tagging.conllu_tagger import emission_scores
    from keras_seqmodels.tagging.crf import CRF

    word_ids = keras.Input((None,), dtype="int32", name="word_ids")
    char_ids = keras.Input((None, None), dtype="int32", name="char_ids")
    gold = keras.Input((None,), dtype="int32", name="tags")
    potentials = emission_scores(
        word_ids, char_ids, len(word_vocab) + 2, len(char_vocab) + 2, len(tags),
        embedding_dim=word_dim, char_embedding_dim=char_dim, char_units=char_units,
        units=units, num_layers=2, dropout=dropout,
    )  # fmt: skip
    if use_crf:
        crf = CRF(len(tags), name="crf")
        train = keras.Model([word_ids, char_ids, gold], crf(potentials, tags=gold))
        infer_out = crf(potentials)
    else:
        train = keras.Model([word_ids, char_ids, gold], potentials)
        # A frozen CRF with zero transitions decodes to the per-word argmax.
        infer_out = CRF(len(tags), trainable=False, name="argmax")(potentials)
    infer = keras.Model([word_ids, char_ids], infer_out, name="tagger_ids")
    return train, infer


def inference_model(train):
    """The ids model (``[word_ids, char_ids]`` -> tag ids) of a training
    model of ``build_models``, sharing its layers."""
    import keras

    from keras_seqmodels.tagging.crf import CRF

    potentials = train.get_layer("potentials").output
    names = {layer.name for layer in train.layers}
    if "crf" in names:
        out = train.get_layer("crf")(potentials)
    else:
        out = CRF(potentials.shape[-1], trainable=False, name="argmax")(potentials)
    return keras.Model(train.inputs[:2], out, name="tagger_ids")


def build_serving_model(infer, vectorizer, tags):
    """strings (batch,) -> UPOS strings (batch, words); '' at padding."""
    import keras

    from keras_seqmodels.tagging.tag_lookup import TagLookup

    sentences = keras.Input((), dtype="string", name="sentences")
    word_ids, char_ids = vectorizer(sentences)
    tag_ids = infer([word_ids, char_ids])
    out = TagLookup(list(tags), name="tag_strings")([tag_ids, word_ids])
    return keras.Model(sentences, out, name="ud_ewt_upos")


def ensemble_parts(model, use_crf=None):
    """``(emitters, transition_sum)`` of a trained id model.

    ``emitters``: ``(model, use_crf)`` pairs whose ``potentials`` layer
    gives one tagger's emission scores. ``transition_sum``: the sum of the
    CRF taggers' ``[transitions, start, end]`` (``None`` without any). A
    single tagger (a ``potentials`` layer; a ``crf`` one when ``use_crf``,
    by default when it has one) is one emitter; an ensemble of
    ``build_ensemble`` (a ``mean_scores`` layer) is its members, with its
    CRF's weights times their number (it stores the mean), so that an
    ensemble can be a member of a new one, flattened.
    """
    names = {layer.name for layer in model.layers}
    if "mean_scores" in names:
        k = 0
        emitters = []
        while f"member_{k}" in names:
            emitters.append((model.get_layer(f"member_{k}"), f"log_probs_{k}" not in names))
            k += 1
        if not k:
            raise ValueError(
                f"ud-ewt-upos ensemble: {model.name!r} has a 'mean_scores' layer but no "
                "'member_0' (expected a model of build_ensemble)."
            )
        total = None
        if "crf" in names:
            total = [k * np.asarray(w) for w in model.get_layer("crf").get_weights()]
        return emitters, total
    if "potentials" not in names:
        raise ValueError(
            f"ud-ewt-upos ensemble: each member must be a tagger with a 'potentials' "
            f"layer or an ensemble with a 'mean_scores' layer; {model.name!r} has neither."
        )
    if use_crf is None:
        use_crf = "crf" in names
    total = None
    if use_crf:
        total = [np.asarray(w) for w in model.get_layer("crf").get_weights()]
    return [(model, use_crf)], total


def build_ensemble(members, tags):
    """One id model averaging the sequence scores of several trained cores.

    ``members``: ``(model, config)`` pairs, ``model`` with the ids as its
    first two inputs and a ``potentials`` layer (and a ``crf`` one when
    ``config["use_crf"]``), or an ensemble of this function, which counts as
    its members (``ensemble_parts``: K members of it and one more tagger make
    K + 1, each weighing the same). A CRF member scores a tag sequence by
    its emission scores plus its transition scores; a softmax member by the
    sum of its per-word log-probabilities (emissions ``log_softmax``, no
    transitions). The mean of the members' emissions, with the CRF members'
    transitions summed and divided by the number of members, decoded by
    Viterbi, is the argmax of the members' mean sequence score (all-softmax:
    the per-word argmax of the mean log-probabilities).
    """
    import keras

    from keras_seqmodels.tagging.crf import CRF

    emitters, total = [], None
    for model, config in members:
        parts, transitions = ensemble_parts(model, config.get("use_crf"))
        emitters += parts
        if transitions is not None:
            total = transitions if total is None else [a + b for a, b in zip(total, transitions)]
    if len(emitters) < 2:
        raise ValueError(
            f"ud-ewt-upos ensemble: needs at least 2 taggers in all; received {len(emitters)}."
        )
    word_ids = keras.Input((None,), dtype="int32", name="word_ids")
    char_ids = keras.Input((None, None), dtype="int32", name="char_ids")
    scores = []
    for i, (model, use_crf) in enumerate(emitters):
        emitter = keras.Model(model.inputs[:2], model.get_layer("potentials").output,
                              name=f"member_{i}")  # fmt: skip
        x = emitter([word_ids, char_ids])
        if not use_crf:
            x = keras.layers.Activation("log_softmax", name=f"log_probs_{i}")(x)
        scores.append(x)
    mean = keras.layers.Average(name="mean_scores")(scores)
    use_crf = total is not None
    crf = CRF(len(tags), trainable=use_crf, name="crf" if use_crf else "argmax")
    out = crf(mean)
    if use_crf:
        crf.set_weights([w / len(emitters) for w in total])
    return keras.Model([word_ids, char_ids], out, name="tagger_ids")


def tag_sentences(model, sentences, batch_size=256):
    """Run a serving model over whitespace-tokenised sentence strings."""
    # Sorted by length so each batch pads little; results in input order.
    order = sorted(range(len(sentences)), key=lambda i: len(sentences[i].split()))
    out = [None] * len(sentences)
    for i in range(0, len(order), batch_size):
        idx = order[i : i + batch_size]
        batch = np.array([sentences[j] for j in idx], dtype=object)
        pred = np.asarray(model.predict_on_batch(batch))
        for j, row in zip(idx, pred):
            out[j] = [t.decode("utf-8") for t in row if t]
    return out


def score(model, sentences, train_words):
    """Overall and out-of-vocabulary UPOS accuracy over syntactic words."""
    pred = tag_sentences(model, [" ".join(ws) for ws, _ in sentences])
    correct = total = oov_correct = oov_total = 0
    for (words, gold), tags in zip(sentences, pred):
        if len(tags) != len(gold):
            raise RuntimeError(f"ud-ewt-upos: {len(tags)} tags for {len(gold)} words")
        for w, g, p in zip(words, gold, tags):
            correct += g == p
            total += 1
            if w.lower() not in train_words:
                oov_correct += g == p
                oov_total += 1
    return {
        "upos_accuracy": correct / total,
        "oov_upos_accuracy": oov_correct / max(oov_total, 1),
        "tokens": total,
        "oov_tokens": oov_total,
    }


def pad_batches(data, batch_size, rng=None, drop=None):
    """Fixed-shape batches ``((words, chars, tags), tags, rows)`` of
    ``batch_size`` rows (fewer for sentences over 64 words) of the arrays of
    ``keras_seqmodels.tagging.data.to_arrays``.

    Sentences are sorted by length (with random tie-breaking when ``rng``
    is given) and padded to the next width of ``WIDTHS``; a short last batch
    of a width is topped up with repeats of its own rows (``rows`` says
    which sentence each row holds, so scoring counts each once). ``drop``
    replaces word ids by the unknown id 1 with that per-id probability.
    """
    from keras_seqmodels.tagging.data import pad_rows

    words, lengths = data["words"], np.diff(data["offsets"])
    if drop is not None:
        hit = rng.random(len(words)) < drop[words]
        data = dict(data, words=np.where(hit & (words > 1), 1, words).astype(np.int32))
    noise = rng.random(len(lengths)) if rng is not None else np.zeros(len(lengths))
    width_of = np.array(WIDTHS)[np.searchsorted(WIDTHS, lengths)]
    batches = []
    for width in WIDTHS:
        members = np.flatnonzero(width_of == width)
        members = members[np.argsort(lengths[members] + noise[members], kind="stable")]
        # Beyond 64 words, fewer rows: no batch holds more than 64 * batch_size words.
        size = max(1, batch_size * 64 // width) if width > 64 else batch_size
        for i in range(0, len(members), size):
            rows = members[i : i + size]
            real = len(rows)
            if real < size:
                rows = np.concatenate([rows, np.resize(rows, size - real)])
            w, c, t = pad_rows(data, rows, width)
            batches.append(((w, c, t), t, rows[:real]))
    if rng is not None:
        rng.shuffle(batches)
    return batches


def score_ids(infer, batches):
    """Accuracy overall and on unknown-word tokens (id 1) of id batches."""
    correct = total = oov_correct = oov_total = 0
    for (w, c, t), _, rows in batches:
        pred = np.asarray(infer.predict_on_batch([w, c]))[: len(rows)]
        w, t = w[: len(rows)], t[: len(rows)]
        real = w > 0
        hit = (pred == t) & real
        correct += int(hit.sum())
        total += int(real.sum())
        oov_correct += int((hit & (w == 1)).sum())
        oov_total += int((w == 1).sum())
    return {"upos_accuracy": correct / total, "oov_upos_accuracy": oov_correct / max(oov_total, 1),
            "tokens": total, "oov_tokens": oov_total}  # fmt: skip
