"""One recipe framework for every zoo model.

A zoo model is a module ``keras_seqmodels/zoo/models/<name>/recipe.py`` of
hooks (``build_model``, ``load_data``, ``compile_options``, ``evaluate``, a
selection metric ``MONITOR``, optional ``callbacks`` and a ``prepare`` step),
read into a ``Recipe`` by ``Recipe.from_module``; the
framework does the rest once for all: common options (``--data-dir``,
``--work-dir``, ``--epochs``, ``--batch-size``, ``--seed``/``--seeds``,
``--sweep``, ``--time-budget``, ``--strategy``, ``--precision``,
``--smoke``), the data folder, training through the package's one loop
(``keras_seqmodels.training.loop.fit``) with the best checkpoint on the
validation split, a wall-clock budget, resume after a kill (atomic backups:
rerun the same command), several seeds or a small sweep, evaluation on the
validation or test split, export and registration.

    seqmodels train NAME --epochs 5 --work-dir runs/NAME
    seqmodels evaluate NAME --split validation
"""

from keras_seqmodels.zoo.framework.recipe import Recipe
from keras_seqmodels.zoo.framework.run import evaluate, load_model, main, register, train

__all__ = ["Recipe", "evaluate", "load_model", "main", "register", "train"]
