"""Differentiable memories: the Neural Turing Machine and memory networks."""

from keras_seqmodels.memory import addressing
from keras_seqmodels.memory.memory_network import MemoryNetwork
from keras_seqmodels.memory.ntm import NTM
from keras_seqmodels.memory.ntm_cell import NTMCell

__all__ = ["addressing", "MemoryNetwork", "NTM", "NTMCell"]
