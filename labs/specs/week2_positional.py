"""Week 2 lab: sinusoidal positional encoding (Vaswani et al. 2017, Sec. 3.5) and rotary positions (Su et al. 2021)."""

from specs._cells import HOW_IT_WORKS, INSTALL, SETUP, SETUP_NOTE, code, md, readonly, solution, tests
from txcourse.course.grading.allowlist import setup_allow

# The probe run's txcourse (txcourse/course/grading/allowlist.py): the setup's helpers only; the rest
# (positional_encoding, the rotary tables, PositionalEncoding, the plots' NumPy helpers) raises.
ALLOW = {fw: setup_allow(fw) for fw in ("torch", "tf")}

# The probes: what the grader checks outside the student's process (fresh inputs from PROBE_SEED).
PROBE_TABLE = """
    rng = np.random.default_rng(PROBE_SEED)
    for i, (max_len, d_model) in enumerate([(3, 1), (7, 5), *(tuple(int(n) for n in rng.integers(1, 90, 2)) for _ in range(3))]):
        probe_emit(f"positional_encoding({max_len}, {d_model})", positional_encoding(max_len, d_model), 1e-5)
"""
PROBE_ROTARY = """
    rng = np.random.default_rng(PROBE_SEED)
    d_k = 2 * int(rng.integers(1, 20))
    for shape, offset in (((3, 2), 0), ((2, 5, 8), int(rng.integers(0, 50))), ((2, 3, 6, d_k), int(rng.integers(0, 200)))):
        x = tensor(rng.standard_normal(shape), "float32")
        probe_emit(f"apply_rotary(x of shape {shape}, {offset})", apply_rotary(x, offset), 1e-5)
"""

CELLS = [
    md(
        (
            """
        # Week 2 lab: positional encoding ([[FW]])

        Self-attention treats its input as a set: permute the tokens and the outputs permute with them.
        The Transformer adds a position signal to every embedding, the formula of Sec. 3.5 of Vaswani et al. (2017)
        (unnumbered in the paper):

        $$PE_{(pos,\\,2i)} = \\sin\\!\\left(\\frac{pos}{10000^{2i/d_{model}}}\\right), \\qquad
          PE_{(pos,\\,2i+1)} = \\cos\\!\\left(\\frac{pos}{10000^{2i/d_{model}}}\\right)$$

        Dimensions $2i$ and $2i+1$ share one frequency: a sine and a cosine of the **same** angle.
        In this lab you write the table, check it against two mistakes of the source notes
        (errata E1 and E8 of the course) and look at it; then you write the rotary position embedding (RoPE) that
        most language models use today.
        """,
            HOW_IT_WORKS,
        )
    ),
    readonly("install", INSTALL),
    readonly("setup", SETUP),
    md(SETUP_NOTE),
    md("""
        ## Exercise 1: the table (3 + 2 + 2 points)

        Write `positional_encoding(max_len, d_model)`: the `(max_len, d_model)` table of the sinusoidal formula (Sec. 3.5)
        as a float32 tensor, row `pos` for position `pos`, column `j` for dimension `j`. An odd `d_model` ends with a
        sine column. Compute the angles in float64 (NumPy is fine) and convert at the end.

        The source notes computed the exponent as `(2 * i // 2) / d_model` for column `i`. Python reads
        `2 * i // 2` as `(2 * i) // 2 = i`, so every column gets its own frequency (errata E1). Column `j`
        belongs to pair `j // 2`, whose exponent is `2 * (j // 2) / d_model`.
        """),
    solution(
        "positional_encoding",
        {
            "torch": """
            def positional_encoding(max_len, d_model):
                \"\"\"The (max_len, d_model) table of sinusoidal encodings of Sec. 3.5, as a float32 tensor.\"\"\"
                ### BEGIN SOLUTION
                pos = np.arange(max_len, dtype=np.float64)[:, None]  # (max_len, 1)
                j = np.arange(d_model)[None, :]  # (1, D)
                angle_rates = 1.0 / np.power(10000.0, (2 * (j // 2)) / d_model)  # (1, D)
                angles = pos * angle_rates  # (max_len, D)
                table = np.where(j % 2 == 0, np.sin(angles), np.cos(angles))  # (max_len, D)
                return torch.tensor(table, dtype=torch.float32)
                ### END SOLUTION
        """,
            "tf": """
            def positional_encoding(max_len, d_model):
                \"\"\"The (max_len, d_model) table of sinusoidal encodings of Sec. 3.5, as a float32 tensor.\"\"\"
                ### BEGIN SOLUTION
                pos = np.arange(max_len, dtype=np.float64)[:, None]  # (max_len, 1)
                j = np.arange(d_model)[None, :]  # (1, D)
                angle_rates = 1.0 / np.power(10000.0, (2 * (j // 2)) / d_model)  # (1, D)
                angles = pos * angle_rates  # (max_len, D)
                table = np.where(j % 2 == 0, np.sin(angles), np.cos(angles))  # (max_len, D)
                return tf.constant(table, dtype=tf.float32)
                ### END SOLUTION
        """,
        },
    ),
    tests(
        "test_positional_encoding",
        3,
        {
            "torch": """
            # Shape, dtype, position 0, and agreement with txcourse's table.
            pe = positional_encoding(50, 16)
            assert isinstance(pe, torch.Tensor), f"return a torch.Tensor, got {type(pe).__name__}"
            assert tuple(pe.shape) == (50, 16), f"shape {tuple(pe.shape)}, expected (50, 16)"
            assert pe.dtype == torch.float32, f"dtype {pe.dtype}, expected torch.float32"
            assert_close(pe[0], np.tile([0.0, 1.0], 8), 1e-7, "position 0: sin(0) = 0, cos(0) = 1")
            assert_close(pe, tx.positional_encoding(50, 16), 1e-6, "positional_encoding(50, 16)")
        """,
            "tf": """
            # Shape, dtype, position 0, and agreement with txcourse's table.
            pe = positional_encoding(50, 16)
            assert tf.is_tensor(pe), f"return a tf.Tensor, got {type(pe).__name__}"
            assert tuple(pe.shape) == (50, 16), f"shape {tuple(pe.shape)}, expected (50, 16)"
            assert pe.dtype == tf.float32, f"dtype {pe.dtype}, expected tf.float32"
            assert_close(pe[0], np.tile([0.0, 1.0], 8), 1e-7, "position 0: sin(0) = 0, cos(0) = 1")
            assert_close(pe, tx.positional_encoding(50, 16), 1e-6, "positional_encoding(50, 16)")
        """,
        },
        probe=PROBE_TABLE,
    ),
    tests(
        "test_shared_frequency",
        2,
        """
        # Errata E1: columns 2i and 2i+1 hold the sine and the cosine of ONE angle, so sin^2 + cos^2 = 1.
        pe = to_numpy(positional_encoding(100, 32)).astype(np.float64)
        assert_close(pe[:, 0::2] ** 2 + pe[:, 1::2] ** 2, np.ones((100, 16)), 1e-5,
                     "sin^2 + cos^2 of each column pair (2i, 2i+1)")
    """,
        probe="""
            rng = np.random.default_rng(PROBE_SEED)
            max_len, d_model = int(rng.integers(20, 120)), 2 * int(rng.integers(1, 40))
            probe_emit(f"positional_encoding({max_len}, {d_model})", positional_encoding(max_len, d_model), 1e-5)
        """,
    ),
    tests(
        "test_distance_depends_on_offset",
        2,
        """
        # Errata E9: ||PE(p + k) - PE(p)|| = sqrt(sum_i (2 - 2 cos(k w_i))) is the same for every p.
        pe = to_numpy(positional_encoding(40, 64)).astype(np.float64)
        distance = np.linalg.norm(pe[:, None, :] - pe[None, :, :], axis=-1)  # (40, 40)
        for k in (1, 3, 10):
            along = np.diagonal(distance, offset=k)
            assert np.ptp(along) < 1e-4, f"distances at offset {k} differ by {np.ptp(along):.3g} between positions"
    """,
        probe="""
            rng = np.random.default_rng(PROBE_SEED + 1)
            max_len = int(rng.integers(20, 60))
            probe_emit(f"positional_encoding({max_len}, 64)", positional_encoding(max_len, 64), 1e-5)
        """,
    ),
    md("""
        ## Exercise 2: the worked table for $d_{model} = 4$ (2 points)

        The slides of the source notes worked out the table for $d_{model} = 4$ and positions 0 to 3 with
        the denominators $1, 10, 100, 1000$, one per column, and wrote $\\sin(3/100)$ in row 2 (errata E8).
        Work it out yourself from the formula (Sec. 3.5), **without** calling `positional_encoding`:

        - `denominators`: a NumPy array of the 4 column denominators $10000^{2i/d_{model}}$;
        - `worked_table`: the 4 x 4 NumPy array, row = position 0..3, written with `np.sin`/`np.cos`.
        """),
    solution(
        "worked_table",
        """
        ### BEGIN SOLUTION
        denominators = np.array([1.0, 1.0, 100.0, 100.0])  # 10000^(2i/4) for the pairs i = 0, 1
        worked_table = np.array([[np.sin(p / 1), np.cos(p / 1), np.sin(p / 100), np.cos(p / 100)]
                                 for p in range(4)])
        ### END SOLUTION
        print("denominators:", denominators)
        print(np.round(worked_table, 4))
    """,
    ),
    tests(
        "test_worked_table",
        2,
        """
        # float32 or float64 both pass: the tolerances are those of float32 (about 6e-8 relative)
        assert_close(denominators, [1, 1, 100, 100], 1e-6, "denominators of the four columns for d_model = 4")
        assert np.asarray(worked_table).shape == (4, 4), f"worked_table shape {np.asarray(worked_table).shape}, expected (4, 4)"
        assert abs(worked_table[2, 2] - np.sin(2 / 100)) < 1e-6, "row 2 is position 2: sin(2/100), not sin(3/100)"
        assert_close(worked_table, tx.positional_encoding(4, 4), 1e-6, "the worked d_model = 4 table")
        # written out, not computed with positional_encoding (the cell that defines worked_table)
        written = [cell for cell in globals().get("In", []) if "worked_table =" in cell and "assert" not in cell]
        assert not any("positional_encoding" in cell for cell in written), \\
            "work the table out with np.sin/np.cos, without calling positional_encoding"
    """,
        probe="""
            probe_emit("denominators", np.asarray(denominators, dtype=np.float64), 1e-6)
            probe_emit("worked_table", np.asarray(worked_table, dtype=np.float64), 1e-6)
        """,
    ),
    md("""
        Your function gives the same table (rounded to 4 decimals). Compare it with the slides: the second
        pair of columns changes slowly, the first pair quickly.
        """),
    code(
        """
        # NBVAL_CHECK_OUTPUT
        print(np.array2string(to_numpy(positional_encoding(4, 4)), precision=4, suppress_small=True))
    """,
        in_probe_run=False,
    ),
    md("""
        ## Looking at the encoding

        Low dimensions oscillate fast along the positions, high dimensions slowly: every position gets a
        distinct pattern, and a fixed offset is a fixed rotation of each (sin, cos) pair, which is why the
        distance between two encodings depends only on their offset (right).
        """),
    code(
        """
        table = to_numpy(positional_encoding(64, 128))
        fig, (left, right) = plt.subplots(1, 2, figsize=(12, 4), layout="constrained")
        plots.plot_positional_encoding(table, title="Your encoding: 64 positions x 128 dimensions", ax=left)
        distance = np.linalg.norm(table[:, None, :] - table[None, :, :], axis=-1)
        image = right.imshow(distance, cmap="viridis")
        right.set(title="||PE(p) - PE(q)||", xlabel="position q", ylabel="position p")
        fig.colorbar(image, ax=right)
        plt.show()
    """,
        in_probe_run=False,
    ),
    md("""
        In the model the table is added to the scaled token embeddings, `Embedding(tokens) * sqrt(d_model) + PE`
        (`tx.TransformerEmbedding`); the source notes built that layer and never applied it (errata E4).
        """),
    md("""
        ## Exercise 3: rotary position embedding, RoPE (3 + 2 points)

        RoPE (Su et al. 2021) adds nothing to the embeddings. Inside self-attention, after the heads are split, it
        **rotates** each query and each key by its position $m$: the pair of dimensions $(2i, 2i+1)$ is turned by
        the angle $m\\,\\theta_i$, with $\\theta_i = 10000^{-2i/d_k}$, the sinusoidal table's formula with $d_k$ in
        place of $d_\\text{model}$:

        $$\\begin{pmatrix} x'_{2i} \\\\ x'_{2i+1} \\end{pmatrix} =
          \\begin{pmatrix} \\cos m\\theta_i & -\\sin m\\theta_i \\\\ \\sin m\\theta_i & \\cos m\\theta_i \\end{pmatrix}
          \\begin{pmatrix} x_{2i} \\\\ x_{2i+1} \\end{pmatrix}$$

        Write `apply_rotary(x, offset=0)`: `x` has shape `(..., T, d_k)` (positions along the second-to-last axis,
        `d_k` even), row `m` sits at position `offset + m`, and the result has the shape and dtype of `x`.
        Compute the angles in float64 (NumPy is fine) and do the rotation with [[FW]] operations.
        `tx.MultiHeadAttention(..., positions="rope")` calls txcourse's version on $Q$ and $K$.
        """),
    solution(
        "apply_rotary",
        {
            "torch": """
            def apply_rotary(x, offset=0):
                \"\"\"Rotate each pair (2i, 2i+1) of x (..., T, d_k) by (offset + m) * 10000^(-2i/d_k), Su et al. (2021).\"\"\"
                ### BEGIN SOLUTION
                length, d_k = x.shape[-2], x.shape[-1]
                m = np.arange(offset, offset + length, dtype=np.float64)[:, None]  # (T, 1) positions
                i = np.arange(d_k // 2)[None, :]  # (1, d_k/2) pairs
                angles = m * 10000.0 ** (-2 * i / d_k)  # (T, d_k/2)
                cos = torch.tensor(np.cos(angles), dtype=x.dtype)  # (T, d_k/2)
                sin = torch.tensor(np.sin(angles), dtype=x.dtype)  # (T, d_k/2)
                x_even, x_odd = x[..., 0::2], x[..., 1::2]  # (..., T, d_k/2) each
                rotated_even = x_even * cos - x_odd * sin  # (..., T, d_k/2)
                rotated_odd = x_even * sin + x_odd * cos  # (..., T, d_k/2)
                return torch.stack([rotated_even, rotated_odd], dim=-1).reshape(x.shape)  # (..., T, d_k)
                ### END SOLUTION
        """,
            "tf": """
            def apply_rotary(x, offset=0):
                \"\"\"Rotate each pair (2i, 2i+1) of x (..., T, d_k) by (offset + m) * 10000^(-2i/d_k), Su et al. (2021).\"\"\"
                ### BEGIN SOLUTION
                length, d_k = x.shape[-2], x.shape[-1]
                m = np.arange(offset, offset + length, dtype=np.float64)[:, None]  # (T, 1) positions
                i = np.arange(d_k // 2)[None, :]  # (1, d_k/2) pairs
                angles = m * 10000.0 ** (-2 * i / d_k)  # (T, d_k/2)
                cos = tf.constant(np.cos(angles), dtype=x.dtype)  # (T, d_k/2)
                sin = tf.constant(np.sin(angles), dtype=x.dtype)  # (T, d_k/2)
                x_even, x_odd = x[..., 0::2], x[..., 1::2]  # (..., T, d_k/2) each
                rotated_even = x_even * cos - x_odd * sin  # (..., T, d_k/2)
                rotated_odd = x_even * sin + x_odd * cos  # (..., T, d_k/2)
                return tf.reshape(tf.stack([rotated_even, rotated_odd], axis=-1), tf.shape(x))  # (..., T, d_k)
                ### END SOLUTION
        """,
        },
    ),
    tests(
        "test_apply_rotary",
        3,
        """
        # Shape, dtype, position 0 left as it is, and agreement with txcourse's apply_rotary.
        x = tensor(normal(2, 5, 8, seed=0))
        out = apply_rotary(x)
        assert tuple(out.shape) == (2, 5, 8), f"shape {tuple(out.shape)}, expected (2, 5, 8)"
        assert out.dtype == x.dtype, f"dtype {out.dtype}, expected {x.dtype}"
        assert_close(out[:, 0], x[:, 0], 1e-7, "position 0 is rotated by the angle 0")
        assert_close(out, tx.apply_rotary(x), 1e-5, "apply_rotary(x) for x of shape (2, 5, 8)")
        assert_close(apply_rotary(x, offset=3), tx.apply_rotary(x, 3), 1e-5, "apply_rotary(x, offset=3)")
    """,
        probe=PROBE_ROTARY,
    ),
    tests(
        "test_rotary_relative",
        2,
        """
        # RoPE's point (Su et al. 2021): after rotation, q_m . k_n depends on the offset m - n only.
        q, k = normal(1, 16, seed=1), normal(1, 16, seed=2)
        qs = to_numpy(apply_rotary(tensor(np.repeat(q, 30, axis=0)))).astype(np.float64)  # q at positions 0..29
        ks = to_numpy(apply_rotary(tensor(np.repeat(k, 30, axis=0)))).astype(np.float64)  # k at positions 0..29
        scores = qs @ ks.T  # (m, n)
        for delta in (0, 1, 4, -3):
            along = np.diagonal(scores, offset=-delta)
            assert np.ptp(along) < 1e-4, f"scores at m - n = {delta} differ by {np.ptp(along):.3g}"
    """,
        probe="""
            rng = np.random.default_rng(PROBE_SEED + 2)
            q = np.repeat(rng.standard_normal((1, 16)), 30, axis=0)  # one vector at positions 0..29
            probe_emit("apply_rotary(q repeated)", apply_rotary(tensor(q, "float32")), 1e-5)
        """,
    ),
    md("""
        The book's week 2 ("Positions as built today") puts RoPE beside learned positions and ALiBi and measures
        which of them carries over from short training inputs to longer ones. Next week: attention.
        """),
]
