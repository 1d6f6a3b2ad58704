"""Rotary position embedding, RoPE (Su et al. 2021, Eqs. (15) and (34)). Book: week 2, "Positions as built today".

Nothing is added to the embeddings. Inside self-attention, after the heads
are split, each query and key at position m is rotated: dimensions 2i and
2i+1 form a pair, turned by the angle m * theta_i with
theta_i = 10000^(-2i / d_k), the formula of the sinusoidal table (Sec. 3.5
of Vaswani et al. 2017) with d_k in place of d_model. The block rotation and
theta_i are Eq. (15) of Su et al.; the element-wise form computed here is
their Eq. (34). A rotation by m and one by n leave the dot product depending
on m - n only: q_m . k_n = q . R(n - m) k.
"""

from __future__ import annotations

import tensorflow as tf

from txcourse import _validation as V

__all__ = ["rotary_tables", "rotate_pairs", "apply_rotary"]


def rotary_tables(
    length: int, d_k: int, offset: int = 0, base: float = 10000.0, dtype: tf.DType = tf.float32
) -> tuple[tf.Tensor, tf.Tensor]:
    """cos(m theta_i) and sin(m theta_i) for positions m = offset, ..., offset + length - 1, Eq. (34) of Su et al.

    theta_i = base^(-2i / d_k) for the pair i = 0, ..., d_k/2 - 1 (Eq. (15)
    of Su et al., who count pairs from 1); each value is repeated for the
    two dimensions 2i and 2i+1 of its pair. The angles are computed in
    float64.

    Args:
        length: number of positions T.
        d_k: width of one head; must be even.
        offset: position of the first row (non-zero when decoding with a cache).
        base: the 10000 of theta_i.
        dtype: dtype of the result.

    Shape:
        Returns cos (T, d_k) and sin (T, d_k).

    Example:
        >>> cos, sin = rotary_tables(2, 4)
        >>> sin[1].numpy().round(4)
        array([0.8415, 0.8415, 0.01  , 0.01  ], dtype=float32)
    """
    V.check_positive("d_k", d_k)
    if d_k % 2 != 0:
        raise ValueError(f"d_k must be even: RoPE rotates pairs of dimensions (2i, 2i+1), got d_k={d_k}")
    pair = tf.range(d_k, dtype=tf.float64) // 2  # (d_k,) 0, 0, 1, 1, ...
    theta = tf.pow(tf.constant(base, tf.float64), -2.0 * pair / d_k)  # (d_k,) theta_i for dimensions 2i and 2i+1
    position = tf.range(length, dtype=tf.float64) + tf.cast(offset, tf.float64)  # (T,); a tensor offset when compiled
    angles = position[:, tf.newaxis] * theta[tf.newaxis, :]  # (T, d_k)
    return tf.cast(tf.cos(angles), dtype), tf.cast(tf.sin(angles), dtype)  # (T, d_k) each


def rotate_pairs(x: tf.Tensor) -> tf.Tensor:
    """(x_0, x_1, x_2, x_3, ...) -> (-x_1, x_0, -x_3, x_2, ...): each pair turned by 90 degrees.

    Shape:
        x (..., d_k) with d_k even. Returns (..., d_k).
    """
    pairs = tf.reshape(x, tf.concat([tf.shape(x)[:-1], [-1, 2]], axis=0))  # (..., d_k/2, 2)
    turned = tf.stack([-pairs[..., 1], pairs[..., 0]], axis=-1)  # (..., d_k/2, 2)
    return tf.reshape(turned, tf.shape(x))  # (..., d_k)


def apply_rotary(x: tf.Tensor, offset: int = 0, base: float = 10000.0) -> tf.Tensor:
    """R_m x for every position m: x * cos(m theta) + rotate_pairs(x) * sin(m theta), Eq. (34) of Su et al. (2021).

    For the pair (x_2i, x_2i+1) at position m this is the 2 x 2 rotation
    (x_2i cos - x_2i+1 sin, x_2i sin + x_2i+1 cos) by the angle m theta_i,
    one block of Eq. (15).

    Args:
        x: queries or keys of one or more heads, positions along axis -2.
        offset: position of the first row (the number of cached positions).
        base: the 10000 of theta_i.

    Shape:
        x (..., T, d_k), d_k even. Returns (..., T, d_k).

    Example:
        >>> q = tf.constant([[1., 0.]] * 3)
        >>> apply_rotary(q, base=1.0)[:, 1].numpy().round(4)  # sin(m), m = 0, 1, 2
        array([0.    , 0.8415, 0.9093], dtype=float32)
    """
    if x.shape.rank < 2:
        raise ValueError(f"x must have at least two axes (..., T, d_k), got shape {tuple(x.shape)}")
    cos, sin = rotary_tables(tf.shape(x)[-2], x.shape[-1], offset, base, x.dtype)  # (T, d_k) each
    return x * cos + rotate_pairs(x) * sin  # (..., T, d_k)
