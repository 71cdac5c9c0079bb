"""What an unrolled LiteRT conversion costs: a GRU at a dynamic batch size.

``python benchmarks/litert_unroll_cost.py STEPS [litert|onnx]`` builds a GRU
of 32 units over 8 features with ``STEPS`` fixed steps and a dynamic batch,
writes it with ``to_litert`` (unrolled: one copy of the step per time step,
bounded by ``keras_seqmodels.export.checks.MAX_UNROLLED_STEPS``) or
``to_onnx`` (one node whatever the length), and prints the wall and CPU
time, the ops of the file, its size and the process's peak memory. Run each
size in a fresh process (the peak is the process's own); the figures in
docs/reliability.md come from it.
"""

import os
import resource
import sys
import tempfile
import time


def main(steps, fmt):
    import keras

    import keras_seqmodels as ks

    inputs = keras.Input((steps, 8))
    model = keras.Model(inputs, ks.layers.Recurrent(ks.cells.GRUCell(32))(inputs))
    folder = tempfile.mkdtemp()
    start, cpu = time.time(), time.process_time()
    if fmt == "litert":
        from keras_seqmodels.export.litert_export import op_names, to_litert

        path = to_litert(model, os.path.join(folder, "gru.tflite"))
        ops = op_names(open(path, "rb").read())
    else:
        import onnx

        from keras_seqmodels.export import to_onnx

        path = to_onnx(model, os.path.join(folder, "gru.onnx"))
        ops = [node.op_type for node in onnx.load(path).graph.node]
    print(
        f"steps={steps} format={fmt} wall={time.time() - start:.1f}s "
        f"cpu={time.process_time() - cpu:.1f}s fully_connected={ops.count('FULLY_CONNECTED')} "
        f"ops={len(ops)} bytes={os.path.getsize(path)} "
        f"peak_rss_gb={resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1e6:.2f} "
        f"load={os.getloadavg()[0]:.1f}"
    )


if __name__ == "__main__":
    main(int(sys.argv[1]), sys.argv[2] if len(sys.argv) > 2 else "litert")
