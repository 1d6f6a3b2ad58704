"""The mistakes of the source lecture notes that this course corrects.

One entry per mistake: where it is, what it says, what is right, and the
test in ``tests/test_errata.py`` that fails on the mistaken version. The
book's errata appendix is generated from this list, so the two never drift.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["Erratum", "ERRATA"]


@dataclass(frozen=True)
class Erratum:
    id: str
    source: str  # file in the source notes
    topic: str
    wrong: str  # what the notes say or do
    right: str  # what the course does instead
    why: str
    test: str  # test function in tests/test_errata.py


ERRATA: tuple[Erratum, ...] = (
    Erratum(
        "E1", "001 (notebook), get_angles", "positional-encoding exponent",
        "angle_rates = 1 / np.power(10000, (2 * i // 2) / np.float32(d_model))",
        "angle_rates = 1 / np.power(10000, (2 * (i // 2)) / np.float32(d_model))",
        "Python evaluates 2 * i // 2 as (2 * i) // 2 = i, so every dimension gets its own "
        "frequency and dimensions 2i and 2i+1 no longer share one, as the formula of Sec. 3.5 requires.",
        "test_E1_angle_exponent"),
    Erratum(
        "E2", "002 (notebook), PositionalEncoding.call", "slicing the encoding table",
        "inputs + self.pos_encoding[:, :tf.shape(inputs)[-1], :]",
        "inputs + self.pos_encoding[:, :tf.shape(inputs)[1], :]",
        "The last axis of the inputs is the model width, not the sequence length: the slice takes "
        "d_model rows, which fails (or silently takes the wrong rows) whenever T != d_model.",
        "test_E2_slice_by_length"),
    Erratum(
        "E3", "002 (notebook), MultiHeadAttention.call", "concatenating the heads",
        "concat_attention = tf.reshape(scaled_dot_product_attention, (batch_size, -1, self.d_model))",
        "concat_attention = tf.reshape(scaled_attention, (batch_size, -1, self.d_model))",
        "The line reshapes the function object instead of its result, so the layer cannot run at all.",
        "test_E3_reshape_the_result"),
    Erratum(
        "E4", "002 (notebook), encoder()", "applying the positional encoding",
        "embeddings = PositionalEncoding(vocab_size, d_model)",
        "embeddings = PositionalEncoding(max_len, d_model)(embeddings)",
        "The layer is built (with the vocabulary size as its length) but never called, so "
        "'embeddings' becomes the layer object. The next line, Dropout(rate=dropout)(embeddings), then "
        "calls Dropout on a layer instead of a tensor: run as written (Keras 3), it raises ValueError "
        "('Only input tensors may be passed as positional arguments') and the model cannot be built at all. "
        "Had it run, the encoder would have had no positional information.",
        "test_E4_encoding_is_added"),
    Erratum(
        "E5", "003 (book notes), multi-head attention", "combining the heads",
        "the results of the heads are added (멀티로 한 값들을 더한다)",
        "MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O",
        "Adding the heads would give a d_k-wide sum that mixes the subspaces; the paper concatenates "
        "them back to d_model and projects with W^O.",
        "test_E5_heads_are_concatenated"),
    Erratum(
        "E6", "001 (notebook), scaled_dot_product_attention", "masking under mixed precision",
        "scaled_attention_logits += (mask * -1e9)",
        "logits = where(mask, finfo(dtype).min, logits)",
        "TensorFlow rounds -1e9 to the tensor's dtype before multiplying: in float16 it is -inf, and "
        "0 * -inf is NaN, so every unmasked logit (mask 0) and every output becomes NaN. PyTorch's "
        "mask.half() * -1e9 multiplies by the Python number in float32 and rounds the product: 0 for "
        "unmasked and -inf for masked logits, no NaN; it does give NaN when the -1e9 is itself a float16 "
        "tensor (torch.tensor(-1e9, dtype=torch.half) * mask) or when a row has all its keys masked "
        "(softmax of only -inf). In float32, -1e9 is finite in both frameworks: no NaN, but a fully "
        "masked row gets uniform weights instead of zeros.",
        "test_E6_mask_in_float16"),
    Erratum(
        "E7", "002 (notebook), BahdanauAttention.call", "the context vector",
        "context_vec = attn * h_enc  # after h_enc = self.w_enc(h_enc)",
        "context = sum_j alpha_j h_j over the encoder states themselves",
        "The notes overwrite h_enc with its projection U_a h_j and sum that; Bahdanau et al. (2015) "
        "weight the annotations h_j, so the context has the encoder's width and meaning.",
        "test_E7_bahdanau_context"),
    Erratum(
        "E8", "000 (slides), positional-encoding table", "the worked 4x4 table",
        "denominators 1, 10, 100, 1000 and sin(3/100) in row 2",
        "d_model = 4: columns sin(pos/1), cos(pos/1), sin(pos/100), cos(pos/100); row 2 has sin(2/100)",
        "With d_model = 4 the denominators are 10000^(2i/4) for i = 0, 1, each shared by a sine and a "
        "cosine; row 2 evaluates position 2, not 3.",
        "test_E8_worked_table"),
    Erratum(
        "E9", "004 (slides), 10x10 distance table", "distances between encodings",
        "a distance table whose entries at the same offset differ (1.275, 1.104, 1.296, ...)",
        "||PE(p + k) - PE(p)|| depends on the offset k only",
        "For sinusoidal encodings ||PE(p+k) - PE(p)||^2 = sum_i (2 - 2 cos(k w_i)), the same for "
        "every p, so the table cannot be the distance between the encodings alone.",
        "test_E9_distance_table"),
    Erratum(
        "E10", "002 (notebook), Decoder.call", "the decoder's recurrent state",
        "out, h_dec = self.gru(out)",
        "state = gru(x, state): the previous decoder state is the GRU's initial state",
        "The GRU is called without initial_state, so it starts from zeros at every step: the incoming "
        "h_dec only reaches the attention query and the decoder forgets everything it has written.",
        "test_E10_decoder_keeps_its_state"),
    Erratum(
        "E11", "002 (notebook), train_step and evaluate", "the decoder's first state",
        "h_dec = enc_out[:, -1]  # sources padded with padding='post'",
        "the encoder output at each row's last non-padding token",
        "With post-padding the last column of enc_out is the state after the pads: the GRU has read "
        "`<pad>` tokens after the sentence, a different number for every sentence length.",
        "test_E11_initial_state_skips_the_padding"),
    Erratum(
        "E12", "002 (notebook), loss_function", "averaging a masked loss",
        "loss *= mask; return tf.reduce_mean(loss)",
        "sum(loss * mask) / sum(mask): the mean over real tokens",
        "reduce_mean divides by every position, pads included, so the loss (and the gradient) shrinks "
        "with the amount of padding in the batch, and short sentences weigh less than long ones.",
        "test_E12_loss_averages_over_real_tokens"),
    Erratum(
        "E13", "002 (notebook), preprocess_sentence", "cleaning Spanish text",
        're.sub(r"[^a-zA-Z?!.,]+", " ", sentence)',
        "keep every letter (Unicode \\w), as txcourse.data.WordTokenizer does",
        "The class [a-zA-Z] holds no accented letter: 'café' becomes 'caf', 'aquí' 'aqu' (the notebook's "
        "own output shows `<start> salga de aqu ! <end>`), and 'señor' two words 'se or'.",
        "test_E13_accented_letters_survive"),
    Erratum(
        "E14", "002 (notebook), Quiz 1", "the train/validation split",
        "train_test_split(enc_tensor, dec_tensor)  # 'split 8:2'",
        "train_test_split(enc_tensor, dec_tensor, test_size=0.2)",
        "Without test_size, scikit-learn keeps a quarter for the test side: 30000 pairs split 22500/7500 "
        "(3:1), not the 24000/6000 the quiz asks for.",
        "test_E14_split_is_eight_to_two"),
    Erratum(
        "E15", "002 (notebook), markdown above PositionalEncoding", "the base of the encoding",
        "PE(pos, 2i) = sin(pos / 1000^(2i/d_model))",
        "PE(pos, 2i) = sin(pos / 10000^(2i/d_model))",
        "The paper's base is 10000 (its code below the formula uses 10000 too); with 1000 the wavelengths "
        "run from 2*pi to about 2*pi*1000 only, and the table is a different one.",
        "test_E15_base_is_10000"),
    Erratum(
        "E16", "000 (slides), numeric table under the 4x4 table", "the worked table's numbers",
        "rows 0.84 0.99 0.009 0.9999995 / 0.90 0.98 0.01 0.999998 / 0.14 0.95 0.02 0.9999955",
        "d_model = 4: row 1 is 0.841 0.540 0.010 0.99995, row 2 0.909 -0.416 0.020 0.9998",
        "The numbers follow the mistaken denominators of E8 (cos(1/10) = 0.995 where cos(1) = 0.540 "
        "belongs), and column 2 does not even match the slide's own formulas: sin(3/100) = 0.030, not 0.01.",
        "test_E16_numeric_table"),
    Erratum(
        "E17", "000 (slides), Part 1 '특징' 4)", "what self-attention makes cheaper",
        "reading the input at once instead of sequentially lowers the computational complexity "
        "(순차적 입력이 아닌 한 번의 입력으로 계산 복잡도 낮춤)",
        "per layer, self-attention costs O(n^2 d) and recurrence O(n d^2); what drops is the number of "
        "sequential operations, O(1) instead of O(n)",
        "Table 1 of the paper: self-attention is cheaper than a recurrent layer only when the sequence "
        "length n is smaller than the width d; its gain is parallelism and short paths, not arithmetic.",
        "test_E17_attention_is_not_cheaper_than_recurrence"),
    Erratum(
        "E18", "001 (notebook), 패딩 마스크", "attention weights after padding",
        "after the softmax the <PAD> positions are 0, so 'the attention weights sum to 0' "
        "(어텐션 가중치의 총합이 0이 된다)",
        "the weights on <PAD> are 0 and every row still sums to 1",
        "The softmax normalises over the keys that remain; masking moves the weight of the pads onto "
        "the real tokens, it does not remove the total.",
        "test_E18_rows_still_sum_to_one"),
    Erratum(
        "E19", "001 (notebook), Pointwise_FeedForward_Network and TransformerEmbedding", "Keras layers",
        "def __call__(self, x): ...  # and def __call__(self, x, training)",
        "def call(self, x): ...  (Keras' own __call__ then runs call)",
        "Overriding __call__ bypasses Keras: the layer is never built (layer.built stays False), is not "
        "a node of a functional model (its Dense sublayers appear instead, so it cannot be saved or "
        "summarised as one layer), and Keras no longer passes training or masks to it.",
        "test_E19_keras_layers_override_call"),
    Erratum(
        "E20", "003 (book notes), self-attention step 3", "what the softmax normalises",
        "after the softmax 'the sum of all values is 1' (전체 값의 합은 1이 되고)",
        "each row (one query) sums to 1; the T x T matrix sums to T",
        "The softmax runs over the keys, the last axis, separately for every query.",
        "test_E20_softmax_rows_sum_to_one"),
    Erratum(
        "E21", "004 (slides), Self-Attention의 절차 steps 2-4", "the order of the steps",
        "step 2: softmax of Q.K; step 3: divide by sqrt(d_k); step 4: softmax",
        "scores Q.K, divide by sqrt(d_k), then one softmax: softmax(QK^T / sqrt(d_k)) (Eq. (1))",
        "A softmax before the scaling leaves numbers that no longer sum to 1 and a second softmax that "
        "is nearly uniform: 112, 96 give 0.53, 0.47 instead of the slide's own 0.88, 0.12.",
        "test_E21_scale_before_softmax"),
)
