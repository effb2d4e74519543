#!/usr/bin/env python3
"""Writes TensorBoard log directories with TensorFlow itself, for test_format_edges.py.

Run with a Python that has TensorFlow (build/venv-tf):  tf_log_directories.py OUT

  OUT/two_runs/train        a tf.compat.v1 FileWriter's event file: steps 0, 1, 2
  OUT/two_runs/validation   another run's: steps 0, 1
  OUT/restarted             two event files of one run: a job that reached step 4, then one
                            restarted from the checkpoint of step 3 that ran steps 3, 4, 5
  OUT/keras                 Keras' TensorBoard callback (model.fit with validation data):
                            train/ and validation/, scalars only
Each tagged_run_metadata event is one FULL_TRACE session.run, tagged "step<N>" at step N.
"""

import os
import sys
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

tf1 = tf.compat.v1


def traced_runs(logdir: str, steps, x_value: float) -> None:
    graph = tf1.Graph()
    with graph.as_default():
        x = tf1.placeholder(tf.float32, [16, 16], name="x")
        total = tf.reduce_sum(tf.nn.relu(tf.matmul(x, x, name="square")), name="total")
        writer = tf1.summary.FileWriter(logdir, graph)
        with tf1.Session(graph=graph) as session:
            for step in steps:
                options = tf1.RunOptions(trace_level=tf1.RunOptions.FULL_TRACE)
                metadata = tf1.RunMetadata()
                session.run(total, {x: [[x_value] * 16] * 16}, options=options,
                            run_metadata=metadata)
                writer.add_run_metadata(metadata, "step%d" % step, step)
        writer.close()


def keras_fit(logdir: str) -> None:
    model = tf.keras.Sequential([tf.keras.Input((4,)), tf.keras.layers.Dense(2)])
    model.compile("sgd", "mse")
    x = np.ones((32, 4), "float32")
    y = np.ones((32, 2), "float32")
    model.fit(x, y, epochs=2, batch_size=8, validation_data=(x, y), verbose=0,
              callbacks=[tf.keras.callbacks.TensorBoard(logdir, profile_batch=0)])


def main() -> None:
    out = sys.argv[1]
    traced_runs(os.path.join(out, "two_runs", "train"), [0, 1, 2], 1.0)
    traced_runs(os.path.join(out, "two_runs", "validation"), [0, 1], 2.0)
    traced_runs(os.path.join(out, "restarted"), [0, 1, 2, 3, 4], 1.0)
    time.sleep(1.1)  # the restarted process's event file carries a later second in its name
    traced_runs(os.path.join(out, "restarted"), [3, 4, 5], 1.0)
    keras_fit(os.path.join(out, "keras"))


if __name__ == "__main__":
    main()
