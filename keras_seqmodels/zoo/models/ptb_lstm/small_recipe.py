"""ptb-lstm-small: the ``ptb-lstm`` recipe at Zaremba et al.'s "small" size.

The same data, network, training loop and packaging as
``keras_seqmodels.zoo.models.ptb_lstm.recipe``; only the defaults differ
(2 x 200, windows of 20, dropout 0.2, the rate halved every epoch after
epoch 5, 13 epochs, tied embeddings).

    seqmodels train ptb-lstm-small
    seqmodels evaluate ptb-lstm-small --split test
"""

from keras_seqmodels.zoo.models.ptb_lstm.config import SMALL_CONFIG as CONFIG  # noqa: F401
from keras_seqmodels.zoo.models.ptb_lstm.recipe import (  # noqa: F401 (the recipe's hooks)
    DATA,
    DATA_SUBDIR,
    MONITOR,
    TASK,
    build_model,
    callbacks,
    compile_options,
    evaluate,
    load_data,
    package,
)
