"""The shipped translator's ``predict`` and ``seqmodels translate``: one compiled search.

TensorFlow only (string tensors).
"""

import io
from contextlib import redirect_stdout

import keras
import pytest

pytestmark = [pytest.mark.tf_only, pytest.mark.slow]
if keras.backend.backend() != "tensorflow":
    pytest.skip("string models need the TensorFlow backend", allow_module_level=True)

SENTENCES = [
    "A man is riding a bicycle.",
    "Two dogs play in the snow.",
    "A little girl in a pink dress is climbing the stairs of a wooden house.",
    "People.",
    "",
    "A woman with a red umbrella walks past a shop window while two children wait for the "
    "bus.",
]
# What the shipped model gave for SENTENCES (in one batch and one at a time)
# before its search was compiled once per beam size: then every call traced
# `model(strings, beam_size=...)` in a new tf.function. The compiled search
# must give the same strings.
BEFORE = {
    1: [
        "Ein Mann fährt Fahrrad.",
        "Zwei Hunde spielen im Schnee.",
        "Ein kleines Mädchen in einem rosa Kleid klettert die Treppen eines Handschaus.",
        "Leute.",
        "",
        "Eine Frau mit einem roten Schirm geht an einem Ladenfenster vorbei, während zwei "
        "Kinder warten.",
    ],
    5: [
        "Ein Mann fährt Fahrrad.",
        "Zwei Hunde spielen im Schnee.",
        "Ein kleines Mädchen in einem rosa Kleid klettert die Treppen eines Holzgeländer "
        "hinauf.",
        "Leute.",
        "",
        "Eine Frau mit einem roten Schirm geht an einem Ladenfenster vorbei, während zwei "
        "Kinder warten.",
    ],
}


@pytest.fixture(scope="module")
def task():
    from keras_seqmodels import zoo

    return zoo.load("multi30k-en-de")


@pytest.mark.parametrize("beam", [1, 5])
def test_translations_are_those_of_the_uncompiled_search(task, beam):
    assert task.predict(SENTENCES, beam_size=beam) == BEFORE[beam]
    assert [task.predict(s, beam_size=beam) for s in SENTENCES] == BEFORE[beam]


def test_predict_of_any_length_traces_once_per_beam_size(task):
    for beam in (1, 5):
        for sentence in SENTENCES:  # 0 to 17 words, one at a time
            task.predict(sentence, beam_size=beam)
        task.predict(SENTENCES[:3], beam_size=beam)
        task.predict(SENTENCES * 6, beam_size=beam)  # 32 + 4
        function = task.model.translation_function(beam)
        assert function.experimental_get_tracing_count() == 1, beam
    assert task.model.translation_function() is task.model.translation_function(5)


def test_second_call_traces_nothing(task):
    # The work bound, not a timing (the machine is shared): before, every
    # call traced the search anew (2-6 s on this project's machine).
    task.predict("A dog runs.", beam_size=5)
    function = task.model.translation_function(5)
    traced = function.experimental_get_tracing_count()
    assert task.predict("A dog runs on the beach.", beam_size=5)
    assert function.experimental_get_tracing_count() == traced


def test_cli_translate_reuses_the_tasks_compiled_search(task, monkeypatch):
    from keras_seqmodels import zoo
    from keras_seqmodels.cli.main import main

    monkeypatch.setattr(zoo, "load", lambda name: task)
    for _ in range(2):
        buf = io.StringIO()
        with redirect_stdout(buf):
            assert main(["translate", "--beam", "1", *SENTENCES[:2]]) == 0
        assert buf.getvalue().splitlines() == BEFORE[1][:2]
    assert task.model.translation_function(1).experimental_get_tracing_count() == 1
