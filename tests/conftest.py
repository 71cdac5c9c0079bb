import os
import sys

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# The NumPy references run in float64; JAX needs this to honour float64.
os.environ.setdefault("JAX_ENABLE_X64", "1")
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
