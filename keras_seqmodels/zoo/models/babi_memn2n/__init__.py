"""The zoo model ``babi-memn2n``: its spec (task, recipe, exporter, card)."""

from keras_seqmodels.zoo.model_spec import ModelSpec

SPEC = ModelSpec(
    name="babi-memn2n",
    package=__name__,
    task=".task:QuestionAnsweringTask",
    exporters={"savedmodel": "keras_seqmodels.export.question_answering:export_memory_qa"},
    export_options=".task:export_defaults",
    serving="'story' and 'question' strings -> 'answer', 'scores'",
)
