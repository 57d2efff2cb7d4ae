#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""A jitted JAX training step (issue 42): a small convolution + MLP classifier trained with plain
SGD, its step compiled once by jax.jit (XLA's compilation and GEMM/convolution autotuning run
then, on XLA's own threads), then run STEPS times.

  jax_step.py [STEPS]

Prints compile_ns (the first call, compilation included) and elapsed_ns (the steps after it)."""
import sys
import time

import jax
import jax.numpy as jnp


def init(key):
    k1, k2, k3 = jax.random.split(key, 3)
    return {
        "conv": jax.random.normal(k1, (3, 3, 16, 32)) * 0.1,
        "w1": jax.random.normal(k2, (32 * 16 * 16, 256)) * 0.01,
        "w2": jax.random.normal(k3, (256, 10)) * 0.01,
    }


def forward(params, x):
    y = jax.lax.conv_general_dilated(x, params["conv"], (1, 1), "SAME",
                                     dimension_numbers=("NHWC", "HWIO", "NHWC"))
    y = jax.nn.relu(y).reshape(x.shape[0], -1)
    y = jax.nn.relu(y @ params["w1"])
    return y @ params["w2"]


def loss_fn(params, x, labels):
    logits = forward(params, x)
    return -jnp.mean(jnp.sum(jax.nn.log_softmax(logits) * labels, axis=-1))


@jax.jit
def train_step(params, x, labels):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, labels)
    params = jax.tree_util.tree_map(lambda p, g: p - 1e-2 * g, params, grads)
    return params, loss


def main():
    steps = int(sys.argv[1]) if len(sys.argv) > 1 else 200
    params = init(jax.random.PRNGKey(0))
    x = jax.random.normal(jax.random.PRNGKey(1), (64, 16, 16, 16))
    labels = jax.nn.one_hot(jnp.arange(64) % 10, 10)
    t0 = time.monotonic_ns()
    params, loss = train_step(params, x, labels)
    loss.block_until_ready()
    t1 = time.monotonic_ns()
    for _ in range(steps):
        params, loss = train_step(params, x, labels)
    loss.block_until_ready()
    t2 = time.monotonic_ns()
    print(f"compile_ns {t1 - t0}\nelapsed_ns {t2 - t1}\nloss {float(loss):.4f}")


if __name__ == "__main__":
    main()
