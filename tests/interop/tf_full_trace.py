#!/usr/bin/env python3
"""Produce reference TensorFlow profiling artifacts with the REAL TensorFlow.

Run with the interpreter of a venv that has `tensorflow-cpu` (and, for the
event files to be useful, `tensorboard`) installed, e.g.

    python tests/interop/tf_full_trace.py OUT_DIR [--runs 3]

It builds a small TF1-style graph in tf.compat.v1 graph mode on two virtual CPU
devices (so the trace has two DeviceStepStats and cross-device _Send/_Recv
ops), runs it with RunOptions(trace_level=FULL_TRACE) and writes into OUT_DIR:

  run_metadata.pb          RunMetadata of the first traced run (SerializeToString)
  run_metadata.pbtxt       the same, as protobuf text (str(RunMetadata))
  step_stats.pb            just RunMetadata.step_stats of the first run
  run_metadata.tfrecord    one RunMetadata record per traced run (tf.io.TFRecordWriter)
  events/                  TensorBoard logdir: tf.compat.v1.summary.FileWriter with
                           add_graph(graph) and add_run_metadata(rm, 'step_%06d' % k, k)
                           for k = 1..runs
  timeline_0.json          timeline.Timeline(step_stats).generate_chrome_trace_format(
                               show_dataflow=True, show_memory=True) of the first run
  timeline_<k>.json        same for run k when --all-timelines is given
  manifest.json            versions, options, file list, per-run node counts

Timings, thread ids, allocation ids and event-file names differ from run to
run; graph structure, node names, op types, device names, labels and tensor
descriptions are deterministic for a given TF version and option set.
"""

import argparse
import json
import os
import sys

# Must be set before TensorFlow is imported.
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "2")      # no INFO/WARNING logs from C++
os.environ.setdefault("TF_ENABLE_ONEDNN_OPTS", "0")     # deterministic numerics, no oneDNN notice
os.environ.setdefault("CUDA_VISIBLE_DEVICES", "")       # never pick up a GPU

import numpy as np  # noqa: E402


def build_graph(tf, two_devices):
    """A small graph with fan-in, multi-output ops, ref and resource variables."""
    v1 = tf.compat.v1
    rng = np.random.RandomState(1234)
    cpu1 = "/device:CPU:1" if two_devices else "/device:CPU:0"
    g = tf.Graph()
    with g.as_default():
        v1.set_random_seed(1234)
        x = v1.placeholder(tf.float32, shape=[4, 8], name="x")
        with tf.device("/device:CPU:0"):
            # A classic reference variable (VariableV2, DT_FLOAT_REF outputs) ...
            w1 = v1.Variable(rng.randn(8, 16).astype(np.float32), name="w1", use_resource=False)
            # ... and resource variables (VarHandleOp + ReadVariableOp).
            b1 = v1.Variable(np.linspace(-0.5, 0.5, 16, dtype=np.float32), name="b1", use_resource=True)
            h = tf.matmul(x, w1, name="layer1/matmul")
            h = tf.add(h, b1, name="layer1/add")
            h = tf.nn.relu(h, name="layer1/relu")
        with tf.device(cpu1):
            # Cross-device edge: h (CPU:0) -> CPU:1 produces _Send/_Recv pairs.
            w2 = v1.Variable(rng.randn(16, 4).astype(np.float32), name="w2", use_resource=True)
            logits = tf.matmul(h, w2, name="layer2/matmul")
            parts = tf.split(logits, 2, axis=1, name="layer2/split")      # 2 outputs
            top = tf.nn.top_k(logits, k=2, name="layer2/top_k")           # values + indices
            mixed = tf.add_n([parts[0], parts[1], top.values], name="layer2/add_n")  # 3 inputs
        with tf.device("/device:CPU:0"):
            cat = tf.concat([mixed, tf.cast(top.indices, tf.float32)], axis=1, name="concat")
            sq = tf.square(cat, name="square")
            loss = tf.reduce_sum(sq, name="loss")
            mean = tf.reduce_mean(logits, name="mean")
            counter = v1.Variable(0, dtype=tf.int64, name="counter", use_resource=False)
            bump = v1.assign_add(counter, 1, name="counter/bump")
            with tf.control_dependencies([bump]):        # control input: "^counter/bump" in the label
                total = tf.add(loss, mean, name="total")
        init = v1.global_variables_initializer()
    feed_value = rng.randn(4, 8).astype(np.float32)
    return g, x, feed_value, [total, bump], init


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("out_dir")
    ap.add_argument("--runs", type=int, default=3, help="traced session.run calls (default 3)")
    ap.add_argument("--one-device", action="store_true", help="put everything on /device:CPU:0")
    ap.add_argument("--inter-op", type=int, default=2, help="inter_op_parallelism_threads (default 2)")
    ap.add_argument("--intra-op", type=int, default=1, help="intra_op_parallelism_threads (default 1)")
    ap.add_argument("--all-timelines", action="store_true", help="write timeline_<k>.json for every run")
    ap.add_argument("--partition-graphs", action="store_true",
                    help="also set RunOptions.output_partition_graphs (RunMetadata field 3)")
    args = ap.parse_args()

    import tensorflow as tf
    from tensorflow.python.client import timeline

    v1 = tf.compat.v1
    v1.disable_eager_execution()
    out = os.path.abspath(args.out_dir)
    os.makedirs(out, exist_ok=True)
    events_dir = os.path.join(out, "events")
    os.makedirs(events_dir, exist_ok=True)

    g, x, feed_value, fetches, init = build_graph(tf, not args.one_device)
    config = v1.ConfigProto(
        device_count={"CPU": 1 if args.one_device else 2, "GPU": 0},
        inter_op_parallelism_threads=args.inter_op,
        intra_op_parallelism_threads=args.intra_op,
        allow_soft_placement=False,
        log_device_placement=False)
    # Grappler rewrites would rename/fuse nodes (e.g. MatMul+BiasAdd); keep the graph as written.
    rw = config.graph_options.rewrite_options
    rw.disable_meta_optimizer = True
    config.graph_options.optimizer_options.opt_level = v1.OptimizerOptions.L0
    config.graph_options.optimizer_options.do_constant_folding = False
    config.graph_options.optimizer_options.do_common_subexpression_elimination = False
    config.graph_options.optimizer_options.do_function_inlining = False

    run_options = v1.RunOptions(trace_level=v1.RunOptions.FULL_TRACE,
                                output_partition_graphs=args.partition_graphs)
    metadatas = []
    with v1.Session(graph=g, config=config) as sess:
        sess.run(init)
        writer = v1.summary.FileWriter(events_dir, graph=None)
        writer.add_graph(sess.graph)
        for k in range(args.runs):
            rm = v1.RunMetadata()
            sess.run(fetches, feed_dict={x: feed_value}, options=run_options, run_metadata=rm)
            metadatas.append(rm)
            writer.add_run_metadata(rm, "step_%06d" % (k + 1), global_step=k + 1)
        writer.flush()
        writer.close()

    first = metadatas[0]
    with open(os.path.join(out, "run_metadata.pb"), "wb") as f:
        f.write(first.SerializeToString())
    with open(os.path.join(out, "run_metadata.pbtxt"), "w") as f:
        f.write(str(first))
    with open(os.path.join(out, "step_stats.pb"), "wb") as f:
        f.write(first.step_stats.SerializeToString())
    with tf.io.TFRecordWriter(os.path.join(out, "run_metadata.tfrecord")) as w:
        for rm in metadatas:
            w.write(rm.SerializeToString())

    timelines = range(len(metadatas)) if args.all_timelines else [0]
    for k in timelines:
        # Timeline overwrites NodeExecStats.thread_id (lane numbers) in the StepStats it is
        # given, so hand it a copy; every file above was written from the untouched protos.
        ss = type(metadatas[k].step_stats)()
        ss.CopyFrom(metadatas[k].step_stats)
        tl = timeline.Timeline(ss)
        with open(os.path.join(out, "timeline_%d.json" % k), "w") as f:
            f.write(tl.generate_chrome_trace_format(show_dataflow=True, show_memory=True))

    manifest = {
        "tensorflow_version": tf.__version__,
        "python": sys.version.split()[0],
        "options": vars(args),
        "runs": [
            {"devices": [d.device for d in rm.step_stats.dev_stats],
             "node_stats": [len(d.node_stats) for d in rm.step_stats.dev_stats],
             "has_cost_graph": rm.HasField("cost_graph"),
             "partition_graphs": len(rm.partition_graphs)}
            for rm in metadatas],
        "files": sorted(os.path.relpath(os.path.join(dp, fn), out)
                        for dp, _, fns in os.walk(out) for fn in fns),
    }
    with open(os.path.join(out, "manifest.json"), "w") as f:
        json.dump(manifest, f, indent=2, sort_keys=True)
        f.write("\n")
    print(json.dumps(manifest, indent=2, sort_keys=True))


if __name__ == "__main__":
    main()
