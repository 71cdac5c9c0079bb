"""One input contract for every zoo task: a wrong shape, a non-finite number,
a value out of range, a missing part or (for a classifier) an empty text is
an ``InputError`` naming the model, the problem and the expected form, and
the CLI reports it as a usage error; text-to-sequence tasks answer an empty
text with an empty answer."""

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from keras_seqmodels import zoo
from keras_seqmodels.zoo import InputError

pytestmark = pytest.mark.tf_only
FIXTURE_OK = [HealthCheck.function_scoped_fixture]  # the module's loaded tasks, read only


@pytest.fixture(scope="module")
def tasks():
    loaded = {}

    def get(name):
        if name not in loaded:
            loaded[name] = zoo.load(name)
        return loaded[name]

    return get


def _refused(task, inputs, problem):
    with pytest.raises(InputError) as info:
        task.predict(inputs)
    message = str(info.value)
    assert message.startswith(f"{task.name} predict: "), message
    assert problem in message and "; expected " in message, message
    assert "\n" not in message
    return message


def test_input_error_is_a_value_error():
    # Code that caught ValueError from a task still does.
    assert issubclass(InputError, ValueError)


@settings(max_examples=25, deadline=None, suppress_health_check=FIXTURE_OK)
@given(
    row=st.integers(0, 2),
    y=st.integers(0, 27),
    x=st.integers(0, 27),
    value=st.sampled_from([np.nan, np.inf, -np.inf, -1.0, 255.5, 1e9]),
)
def test_digits_refuse_non_finite_and_out_of_range_pixels(tasks, row, y, x, value):
    images = np.zeros((3, 28, 28), "float32")
    images[row, y, x] = value
    problem = "non-finite pixel" if not np.isfinite(value) else "pixel outside 0-255"
    message = _refused(tasks("mnist-renet"), images, f"image {row} has a {problem}")
    assert "(28, 28) finite pixel values 0-255" in message


def test_digits_refuse_wrong_shapes_and_keep_valid_answers(tasks):
    task = tasks("mnist-renet")
    _refused(task, np.zeros((28, 27)), "an image of shape (28, 27)")
    _refused(task, np.zeros((2, 3, 28, 28)), "an image of shape (2, 3, 28, 28)")
    _refused(task, [[0, 1], [2]], "not numbers of one shape")
    assert task.predict(np.full((28, 28), 255.0)) in range(10)  # the range's ends are valid


@settings(max_examples=20, deadline=None, suppress_health_check=FIXTURE_OK)
@given(value=st.sampled_from([2.0, 0.5, -1.0, np.nan, np.inf]), step=st.integers(0, 4))
def test_copy_refuses_values_that_are_not_bits(tasks, value, step):
    bits = np.zeros((2, 5, 8))
    bits[1, step, 3] = value
    _refused(tasks("ntm-copy"), bits, "sequence 1 has the value")


def test_copy_refuses_wrong_shapes_and_empty_sequences(tasks):
    task = tasks("ntm-copy")
    _refused(task, np.zeros((4, 7)), "a sequence of shape (4, 7)")
    _refused(task, np.zeros((1, 0, 8)), "a sequence of shape (0, 8)")
    assert task.predict([[1, 0, 1, 1, 0, 0, 1, 0]]) == [[1, 0, 1, 1, 0, 0, 1, 0]]


@pytest.mark.parametrize(
    "item, problem",
    [
        ("Where is Mary?", "a string alone (no story)"),
        ({"question": "Where is Mary?"}, "no story"),
        ({"story": "Mary went home."}, "no question"),
        (("", "Where is Mary?"), "an empty or non-text story"),
        (("Mary went home.", "   "), "an empty or non-text question"),
        (("Mary went home.", None), "an empty or non-text question"),
    ],
)
def test_question_answering_names_the_missing_part(tasks, item, problem):
    _refused(tasks("babi-memn2n"), item, problem)


def test_question_answering_still_answers(tasks):
    task = tasks("babi-memn2n")
    story = "Mary moved to the bathroom. John went to the hallway."
    assert task.predict((story, "Where is Mary?")) == "bathroom"


@pytest.mark.parametrize("text", ["", "   ", "\n"])
def test_sentiment_refuses_empty_text(tasks, text):
    _refused(tasks("sst-treelstm"), [text], "text 0 is empty (nothing to classify)")


def test_text_to_sequence_tasks_answer_empty_text_with_an_empty_answer(tasks):
    assert tasks("ud-ewt-upos").predict("") == []
    assert tasks("ud-ewt-upos").predict(["  ", "Hi ."])[0] == []


def test_cli_reports_an_input_error_as_a_usage_error():
    from keras_seqmodels.cli.main import describe_error

    code, message = describe_error(InputError("ntm-copy", "sequence 0 has the value 2", "bits"))
    assert code == 2
    assert message == "ntm-copy predict: sequence 0 has the value 2; expected bits"
