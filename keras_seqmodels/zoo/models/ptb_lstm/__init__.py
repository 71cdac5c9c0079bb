"""The zoo models ``ptb-lstm`` (2 x 650) and ``ptb-lstm-small`` (2 x 200): one
network, task and recipe at two sizes; ``ptb-mingru``: the same data, stream
and task with linear-recurrence blocks at ptb-lstm's parameter count
(``scan_network``, ``scan_recipe``); their specs (task, recipe, exporter,
card). ``ptb-mingru`` is recipe-only (``shipped=False``): its trained file
(test perplexity 85.68 against ptb-lstm's 79.38, 24.5 MB) is not shipped."""

from keras_seqmodels.zoo.model_spec import ModelSpec

_SHARED = dict(
    package=__name__,
    task=".task:LanguageModelTask",
    exporters={"savedmodel": "keras_seqmodels.export.language_model:export_language_model"},
    export_options=".task:export_defaults",
)
SPECS = (
    ModelSpec(
        name="ptb-lstm",
        serving="and a .keras WordLanguageModel (train_language_model) "
        "'text' strings -> 'next_word', 'next_word_logits', 'log_likelihood'",
        **_SHARED,
    ),
    ModelSpec(
        name="ptb-lstm-small",
        recipe=".small_recipe",
        serving="'text' strings -> 'next_word', 'next_word_logits', 'log_likelihood'",
        **_SHARED,
    ),
    ModelSpec(
        name="ptb-mingru",
        recipe=".scan_recipe",
        shipped=False,  # recipe-only: `seqmodels train ptb-mingru`, then --model
        serving="'text' strings -> 'next_word', 'next_word_logits', 'log_likelihood'",
        **_SHARED,
    ),
)
