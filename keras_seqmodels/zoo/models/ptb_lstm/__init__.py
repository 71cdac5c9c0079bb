"""The zoo model ``ptb-lstm``: its spec (task, recipe, exporter, card)."""

from keras_seqmodels.zoo.model_spec import ModelSpec

SPEC = ModelSpec(
    name="ptb-lstm",
    package=__name__,
    task=".task:LanguageModelTask",
    exporters={"savedmodel": "keras_seqmodels.export.language_model:export_language_model"},
    export_options=".task:export_defaults",
    serving="and a .keras WordLanguageModel (train_language_model) "
    "'text' strings -> 'next_word', 'next_word_logits', 'log_likelihood'",
)
