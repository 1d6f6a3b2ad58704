"""Framework-free helpers for the test cells of the lab notebooks: compare tensors of either framework.

Imports NumPy only. A PyTorch tensor is converted with ``.detach().cpu().numpy()``,
a TensorFlow tensor with ``.numpy()``, anything else with ``numpy.asarray``, so
one test cell reads the same in ``labs/source/<lab>/<lab>_torch.ipynb`` and
``<lab>_tf.ipynb``. Every failure message says what was compared, the largest
difference, where it is and both values.

Example:
    >>> assert_close([1.0, 2.0], np.array([1.0, 2.0 + 1e-7]), atol=1e-6, what="pair")
    >>> normal(2, 3, seed=0).dtype
    dtype('float32')
"""

from __future__ import annotations

import contextlib
import inspect
import sys
from collections.abc import Iterator
from typing import Any

import numpy as np

__all__ = ["to_numpy", "normal", "assert_close", "largest_difference", "assert_equal", "no_calls_to"]


def to_numpy(x: Any) -> np.ndarray:
    """``x`` (a PyTorch or TensorFlow tensor, a NumPy array, a list, a number) as a NumPy array."""
    if hasattr(x, "detach"):  # torch.Tensor (may require grad, may live on a GPU)
        x = x.detach()
        if hasattr(x, "cpu"):
            x = x.cpu()
        if str(getattr(x, "dtype", "")) == "torch.bfloat16":
            x = x.float()
    if hasattr(x, "numpy") and not isinstance(x, np.ndarray):  # tf.Tensor, torch.Tensor
        x = x.numpy()
    return np.asarray(x)


def normal(*shape: int, seed: int = 0) -> np.ndarray:
    """Standard-normal float32 numbers from a fixed seed: the same inputs in both frameworks.

    Example:
        >>> normal(2, 3, seed=1).shape
        (2, 3)
    """
    return np.random.default_rng(seed).standard_normal(shape).astype(np.float32)


def _location(diff: np.ndarray) -> tuple[int, ...]:
    """Index of the largest difference; a NaN counts as the largest."""
    filled = np.where(np.isnan(diff), np.inf, diff)
    return tuple(int(i) for i in np.unravel_index(int(np.argmax(filled)), diff.shape))


def assert_close(
    actual: Any, expected: Any, atol: float = 1e-5, what: str = "value", *, equal_nan: bool = False
) -> None:
    """Assert ``|actual - expected| <= atol`` everywhere, with the same shape.

    The package's one closeness check: lab cells, the book and the test suite use it. The same
    infinity on both sides counts as equal (a masked score is -inf in both); NaN never passes,
    unless ``equal_nan`` lets a NaN on both sides pass (never one side only). It returns None on
    purpose: a lab's hidden test cell ends with it, and nbgrader would take a number it returned
    as the cell's partial credit (use :func:`largest_difference` for the number).

    Raises:
        AssertionError: naming ``what``, the shapes, or the largest difference,
            its index, both values there and how many elements differ.

    Example:
        >>> assert_close([0.0, 1.0], [0.0, 1.5], atol=0.1, what="weights")
        Traceback (most recent call last):
        ...
        AssertionError: weights: largest difference 0.5 > 0.1 at index (1,) (got 1.0, expected 1.5); 1 of 2 elements differ
        >>> assert_close([0.0, float("-inf")], [1e-7, float("-inf")])  # passes: returns None
    """
    a = to_numpy(actual).astype(np.float64)
    e = to_numpy(expected).astype(np.float64)
    if a.shape != e.shape:
        raise AssertionError(f"{what}: shape {a.shape}, expected {e.shape}")
    if a.size == 0:
        return
    diff = _differences(a, e, equal_nan)
    bad = np.isnan(diff) | (diff > atol)
    if bad.any():
        i = _location(diff)
        raise AssertionError(
            f"{what}: largest difference {diff[i]:.3g} > {atol:g} at index {i} "
            f"(got {a[i].item()!r}, expected {e[i].item()!r}); {int(bad.sum())} of {diff.size} "
            f"elements differ"
        )


def largest_difference(actual: Any, expected: Any) -> float:
    """max |actual - expected| (the same infinity on both sides counts 0; a NaN gives nan): a number to report.

    Example:
        >>> largest_difference([0.0, 1.0], [0.0, 1.5])
        0.5
    """
    a, e = to_numpy(actual).astype(np.float64), to_numpy(expected).astype(np.float64)
    if a.shape != e.shape:
        raise ValueError(f"actual has shape {a.shape}, expected {e.shape}: the same shape is needed")
    if a.size == 0:
        return 0.0
    diff = _differences(a, e)
    return float(np.nan if np.isnan(diff).any() else diff.max())


def _differences(a: np.ndarray, e: np.ndarray, equal_nan: bool = False) -> np.ndarray:
    """|a - e| elementwise, 0 where both hold the same infinity (or, with ``equal_nan``, both NaN)."""
    with np.errstate(invalid="ignore"):
        diff = np.abs(a - e)
    same = (a == e) & ~np.isfinite(a)  # the same infinity on both sides
    if equal_nan:
        same |= np.isnan(a) & np.isnan(e)
    return np.where(same, 0.0, diff)


def assert_equal(actual: Any, expected: Any, what: str = "value") -> None:
    """Assert the same shape and exactly the same entries (masks, token ids).

    Example:
        >>> assert_equal([[True, False]], [[True, True]], what="mask")
        Traceback (most recent call last):
        ...
        AssertionError: mask: 1 of 2 entries differ, first at index (0, 1) (got False, expected True)
    """
    a, e = to_numpy(actual), to_numpy(expected)
    if a.shape != e.shape:
        raise AssertionError(f"{what}: shape {a.shape}, expected {e.shape}")
    wrong = a != e
    if wrong.any():
        i = tuple(int(j) for j in np.argwhere(wrong)[0])
        raise AssertionError(
            f"{what}: {int(wrong.sum())} of {wrong.size} entries differ, first at index {i} "
            f"(got {a[i].item()!r}, expected {e[i].item()!r})"
        )


def _code_objects(target: Any) -> dict[Any, str]:
    """The functions ``target`` stands for (a function, a method, a class's own methods, a builtin)
    -> their names: code objects for Python functions, the object itself for builtins."""
    name = getattr(target, "__qualname__", getattr(target, "__name__", repr(target)))
    if inspect.isclass(target):
        out: dict[Any, str] = {}
        for attr, value in vars(target).items():
            if inspect.isfunction(value):
                out[value.__code__] = f"{name}.{attr}"
        return out
    function = getattr(target, "python_function", target)  # a tf.function's Python function
    function = inspect.unwrap(getattr(function, "__func__", function))
    code = getattr(function, "__code__", None)
    return {code if code is not None else function: name}


@contextlib.contextmanager
def no_calls_to(*targets: Any, what: str = "your code") -> Iterator[None]:
    """Fail with an AssertionError when the code run inside the block calls one of ``targets``
    (functions, methods, classes: their own methods, builtins), however it got hold of them
    (``tx.f``, ``from ... import f``, a subclass's ``super()``). How a lab checks that an exercise
    was written rather than delegated to txcourse's version. An error raised inside the block
    propagates unchanged."""
    watched: dict[Any, str] = {}
    for target in targets:
        watched.update(_code_objects(target))
    hits: list[str] = []

    def profile(frame, event, arg):
        if event == "call" and frame.f_code in watched:
            hits.append(watched[frame.f_code])
        elif event == "c_call" and arg in watched:
            hits.append(watched[arg])

    previous = sys.getprofile()
    sys.setprofile(profile)
    try:
        yield
    finally:
        sys.setprofile(previous)
    if hits:
        raise AssertionError(
            f"{what} calls txcourse's {hits[0]}: this exercise asks you to write it yourself (see 'How this lab works')"
        )
