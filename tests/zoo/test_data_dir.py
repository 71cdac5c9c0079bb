"""Where the recipes look for data by default."""

import os


def test_default_data_dir_is_shared_data_beside_the_checkout():
    import keras_seqmodels
    from keras_seqmodels.zoo.framework.arguments import default_data_dir

    checkout = os.path.dirname(os.path.dirname(os.path.abspath(keras_seqmodels.__file__)))
    expected = os.path.join(os.path.dirname(checkout), "shared", "data")
    assert default_data_dir() == (expected if os.path.isdir(expected) else None)
