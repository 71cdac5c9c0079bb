"""The zoo model ``ptb-lstm-small``: the 2 x 200 tied LSTM language model
(the ``ptb-lstm`` network and task at Zaremba et al.'s "small" size)."""

from keras_seqmodels.zoo.model_spec import ModelSpec

SPEC = ModelSpec(
    name="ptb-lstm-small",
    package=__name__,
    task="keras_seqmodels.zoo.models.ptb_lstm.task:LanguageModelTask",
    exporters={"savedmodel": "keras_seqmodels.export.language_model:export_language_model"},
    export_options="keras_seqmodels.zoo.models.ptb_lstm.task:export_defaults",
    serving="'text' strings -> 'next_word', 'next_word_logits', 'log_likelihood'",
)
