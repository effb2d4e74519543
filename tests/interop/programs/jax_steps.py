"""An unmodified JAX training loop annotated for JAX's own profiler, for `tfprof run`.

  jax_steps.py [--steps N] [--first STEP] [--input-ms MS]

Each iteration is a `jax.profiler.StepTraceAnnotation("train", step_num=STEP)` numbered from
--first; inside it the batch is made (sleeping MS milliseconds: a slow input) under a
`TraceAnnotation("load_batch")` and the jitted update runs under `TraceAnnotation("update")`.
"""
import argparse
import os
import time

os.environ.setdefault("JAX_PLATFORMS", "cpu")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402


@jax.jit
def update(weights, batch):
    gradient = jax.grad(lambda w: jnp.mean((batch @ w) ** 2))(weights)
    return weights - 0.01 * gradient


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--steps", type=int, default=6)
    parser.add_argument("--first", type=int, default=100)
    parser.add_argument("--input-ms", type=float, default=0.0)
    args = parser.parse_args()
    weights = jnp.ones((32, 1))
    key = jax.random.PRNGKey(0)
    for step in range(args.first, args.first + args.steps):
        with jax.profiler.StepTraceAnnotation("train", step_num=step):
            with jax.profiler.TraceAnnotation("load_batch"):
                time.sleep(args.input_ms / 1000.0)
                key, sub = jax.random.split(key)
                batch = jax.random.normal(sub, (64, 32))
            with jax.profiler.TraceAnnotation("update"):
                weights = update(weights, batch).block_until_ready()
    print(f"trained {args.steps} steps")


if __name__ == "__main__":
    main()
