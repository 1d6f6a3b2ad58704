"""The errata of source notes 004 (``../shared/seeds/``), in the order of their ids."""

from txcourse.course.errata.erratum import Erratum

ERRATA: tuple[Erratum, ...] = (
    Erratum(
        "E9",
        "004 (slides), 10x10 distance table",
        "distances between encodings",
        "a distance table whose entries at the same offset differ (1.275, 1.104, 1.296, ...)",
        "||PE(p + k) - PE(p)|| depends on the offset k only",
        "For sinusoidal encodings ||PE(p+k) - PE(p)||^2 = sum_i (2 - 2 cos(k w_i)), the same for "
        "every p, so the table cannot be the distance between the encodings alone.",
        "test_E9_distance_table",
    ),
    Erratum(
        "E21",
        "004 (slides), Self-Attention의 절차 steps 2-4",
        "the order of the steps",
        "step 2: softmax of Q.K; step 3: divide by sqrt(d_k); step 4: softmax",
        "scores Q.K, divide by sqrt(d_k), then one softmax: softmax(QK^T / sqrt(d_k)) (Eq. (1))",
        "A softmax before the scaling leaves numbers that no longer sum to 1 and a second softmax that "
        "is nearly uniform: 112, 96 give 0.53, 0.47 instead of the slide's own 0.88, 0.12.",
        "test_E21_scale_before_softmax",
    ),
)
