"""An unmodified Keras 3 training program (it knows nothing of tfprof), for `tfprof run`.

  keras_fit.py [--steps N] [--epochs E] [--input-ms MS] [--unknown-size] [--validation V]
               [--predict P] [--own-trace PATH] [--tensorboard-profile DIR] [--hidden H]
               [--predict-in-callback]

Fits a small MLP for E epochs of N batches on a tf.data pipeline whose every batch takes MS
milliseconds to make (a Python map with no parallelism: the slow input pipeline, the trainer
waits on it). --unknown-size hides the dataset's length from Keras (a filter that keeps
everything), so each first epoch ends on a fetch that finds the data exhausted. --validation V
evaluates V batches after each epoch; --predict P predicts P batches after the fit. --own-trace
PATH wraps the fit in the program's own `tfprof.trace(PATH)`; --tensorboard-profile DIR runs
Keras' TensorBoard callback profiling batches 2-3 into DIR (TensorFlow's own profiler);
--predict-in-callback has a callback predict one batch at the end of every training batch. The last
line gives the median train step time, measured by the program itself between batch ends.
"""
import argparse
import contextlib
import os
import statistics
import time

os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")

import keras  # noqa: E402
import numpy as np  # noqa: E402
import tensorflow as tf  # noqa: E402

BATCH = 32
FEATURES = 64


def dataset(batches, input_ms, unknown_size):
    rng = np.random.default_rng(0)
    features = rng.normal(size=(batches * BATCH, FEATURES)).astype("float32")
    labels = rng.integers(0, 10, size=(batches * BATCH,)).astype("int64")
    data = tf.data.Dataset.from_tensor_slices((features, labels)).batch(BATCH)
    if input_ms:
        def load(x, y):
            time.sleep(input_ms / 1000.0)  # a slow read or decode, per batch
            return x, y

        def slow(x, y):
            x2, y2 = tf.numpy_function(load, [x, y], [tf.float32, tf.int64])
            x2.set_shape(x.shape)
            y2.set_shape(y.shape)
            return x2, y2

        data = data.map(slow)
    if unknown_size:
        data = data.filter(lambda x, y: True)
    return data


class PredictAfterEachBatch(keras.callbacks.Callback):
    def __init__(self, data):
        super().__init__()
        self.data = data

    def on_train_batch_end(self, batch, logs=None):
        self.model.predict(self.data, verbose=0)


class StepClock(keras.callbacks.Callback):
    def __init__(self):
        super().__init__()
        self.ends = []

    def on_train_batch_end(self, batch, logs=None):
        self.ends.append(time.perf_counter())


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=8)
    parser.add_argument("--epochs", type=int, default=1)
    parser.add_argument("--input-ms", type=float, default=0.0)
    parser.add_argument("--unknown-size", action="store_true")
    parser.add_argument("--validation", type=int, default=0)
    parser.add_argument("--predict", type=int, default=0)
    parser.add_argument("--own-trace")
    parser.add_argument("--tensorboard-profile")
    parser.add_argument("--hidden", type=int, default=256)
    parser.add_argument("--predict-in-callback", action="store_true")
    args = parser.parse_args()
    keras.utils.set_random_seed(0)
    model = keras.Sequential([keras.Input(shape=(FEATURES,)), keras.layers.Dense(args.hidden, activation="relu"),
                              keras.layers.Dense(args.hidden, activation="relu"), keras.layers.Dense(10)])
    model.compile(optimizer="sgd", loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True))
    clock = StepClock()
    callbacks = [clock]
    if args.tensorboard_profile:
        callbacks.append(keras.callbacks.TensorBoard(args.tensorboard_profile, profile_batch=(2, 3)))
    if args.predict_in_callback:
        callbacks.append(PredictAfterEachBatch(dataset(1, 0, False)))
    train = dataset(args.steps, args.input_ms, args.unknown_size)
    validation = dataset(args.validation, 0, False) if args.validation else None
    with contextlib.ExitStack() as stack:
        if args.own_trace:
            import tfprof

            stack.enter_context(tfprof.trace(args.own_trace))
        model.fit(train, epochs=args.epochs, validation_data=validation, callbacks=callbacks, verbose=0)
        if args.predict:
            model.predict(dataset(args.predict, 0, False), verbose=0)
    gaps = [b - a for a, b in zip(clock.ends, clock.ends[1:])]
    median_ms = statistics.median(gaps) * 1000 if gaps else 0.0
    print(f"trained {len(clock.ends)} steps; median step {median_ms:.2f} ms")


if __name__ == "__main__":
    main()
