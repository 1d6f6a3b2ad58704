"""The errata of source notes 002 (``../shared/seeds/``), in the order of their ids."""

from txcourse.course.errata.erratum import Erratum

ERRATA: tuple[Erratum, ...] = (
    Erratum(
        "E2",
        "002 (notebook), PositionalEncoding.call",
        "slicing the encoding table",
        "inputs + self.pos_encoding[:, :tf.shape(inputs)[-1], :]",
        "inputs + self.pos_encoding[:, :tf.shape(inputs)[1], :]",
        "The last axis of the inputs is the model width, not the sequence length: the slice takes "
        "min(max_len, d_model) rows, so the addition fails unless that equals the length T, and a "
        "one-token input (T = 1, decoding step by step) silently broadcasts to d_model positions.",
        "test_E2_slice_by_length",
    ),
    Erratum(
        "E3",
        "002 (notebook), MultiHeadAttention.call",
        "concatenating the heads",
        "concat_attention = tf.reshape(scaled_dot_product_attention, (batch_size, -1, self.d_model))",
        "concat_attention = tf.reshape(scaled_attention, (batch_size, -1, self.d_model))",
        "The line reshapes the function object instead of its result, so the layer cannot run at all.",
        "test_E3_reshape_the_result",
    ),
    Erratum(
        "E4",
        "002 (notebook), encoder()",
        "applying the positional encoding",
        "embeddings = PositionalEncoding(vocab_size, d_model)",
        "embeddings = PositionalEncoding(max_len, d_model)(embeddings)",
        "The layer is built (with the vocabulary size as its length) but never called, so "
        "'embeddings' becomes the layer object. The next line, Dropout(rate=dropout)(embeddings), then "
        "calls Dropout on a layer instead of a tensor: run as written (Keras 3), it raises ValueError "
        "('Only input tensors may be passed as positional arguments') and the model cannot be built at all. "
        "Had it run, the encoder would have had no positional information.",
        "test_E4_encoding_is_added",
    ),
    Erratum(
        "E7",
        "002 (notebook), BahdanauAttention.call",
        "the context vector",
        "context_vec = attn * h_enc  # after h_enc = self.w_enc(h_enc)",
        "context = sum_j alpha_j h_j over the encoder states themselves",
        "The notes overwrite h_enc with its projection U_a h_j and sum that; Bahdanau et al. (2015) "
        "weight the annotations h_j, so the context has the encoder's width and meaning.",
        "test_E7_bahdanau_context",
    ),
    Erratum(
        "E10",
        "002 (notebook), Decoder.call",
        "the decoder's recurrent state",
        "out, h_dec = self.gru(out)",
        "state = gru(x, state): the previous decoder state is the GRU's initial state",
        "The GRU is called without initial_state, so its recurrence restarts from zeros at every step. The "
        "previous state still reaches the step, but only as the attention query: it sets the weights over "
        "the encoder states and so the context vector. What the decoder has written so far survives only "
        "through that choice of context (and the previous token fed in); when the encoder states are "
        "alike, so that the query cannot change the context, the incoming state has no effect at all.",
        "test_E10_decoder_keeps_its_state",
    ),
    Erratum(
        "E11",
        "002 (notebook), train_step and evaluate",
        "the decoder's first state",
        "h_dec = enc_out[:, -1]  # sources padded with padding='post'",
        "the encoder output at each row's last non-padding token",
        "With post-padding the last column of enc_out is the state after the pads: the GRU has read "
        "`<pad>` tokens after the sentence, a different number for every sentence length.",
        "test_E11_initial_state_skips_the_padding",
    ),
    Erratum(
        "E12",
        "002 (notebook), loss_function and its call in train_step / eval_step",
        "what the masked per-step mean computes",
        "loss *= mask; return tf.reduce_mean(loss)  # called as loss_function(tgt[:, t], pred), once per step",
        "nothing to fix in the summed loss: each step divides by the batch size B, so the sum over the "
        "steps is sum(loss * mask) / B; the package divides by the number of real tokens, "
        "sum(loss * mask) / sum(mask)",
        "The notes call loss_function on one column tgt[:, t] at a time, so reduce_mean averages over the B "
        "rows of the batch, and the rows whose sentence has already ended (padded at step t) count in the "
        "denominator: a step's value is n_t / B times the mean over its n_t real targets, not that mean, and "
        "means little on its own. Summed over the steps, as train_step does before differentiating, every "
        "real token weighs 1/B whatever the padding: the loss is the mean over the sentences of their summed "
        "token losses. The package's per-token mean divides the same sum by the number N of real tokens "
        "instead: within a batch the notes' loss is the package's times N / B, the same gradient "
        "direction. (The call is easy to misread as a padding bug; the padding-dependent number is the "
        "printed batch_loss, E31.)",
        "test_E12_per_step_mean_counts_padded_rows",
    ),
    Erratum(
        "E13",
        "002 (notebook), preprocess_sentence",
        "cleaning Spanish text",
        're.sub(r"[^a-zA-Z?!.,]+", " ", sentence)',
        "keep every letter (Unicode \\w), as txcourse.data.WordTokenizer does",
        "The class [a-zA-Z] holds no accented letter: 'café' becomes 'caf', 'aquí' 'aqu' (the notebook's "
        "own output shows `<start> salga de aqu ! <end>`), and 'señor' two words 'se or'.",
        "test_E13_accented_letters_survive",
    ),
    Erratum(
        "E14",
        "002 (notebook), Quiz 1",
        "the train/validation split",
        "train_test_split(enc_tensor, dec_tensor)  # 'split 8:2'",
        "train_test_split(enc_tensor, dec_tensor, test_size=0.2)",
        "Without test_size, scikit-learn keeps a quarter for the test side: 30000 pairs split 22500/7500 "
        "(3:1), not the 24000/6000 the quiz asks for. (The notebook's progress bars, 375/375 batches of 64 "
        "per epoch, show that the run printed there used 24,000 pairs: the cell shown is not the one that "
        "ran.)",
        "test_E14_split_is_eight_to_two",
    ),
    Erratum(
        "E15",
        "002 (notebook), markdown above PositionalEncoding",
        "the base of the encoding",
        "PE(pos, 2i) = sin(pos / 1000^(2i/d_model))",
        "PE(pos, 2i) = sin(pos / 10000^(2i/d_model))",
        "The paper's base is 10000 (its code below the formula uses 10000 too); with 1000 the wavelengths "
        "run from 2*pi to about 2*pi*1000 only, and the table is a different one.",
        "test_E15_base_is_10000",
    ),
    Erratum(
        "E31",
        "002 (notebook), train_step and eval_step, lines 324 and 419",
        "the printed batch loss",
        "batch_loss = (loss / int(tgt.shape[1]))",
        "divide the summed loss by the number of real target tokens (the mask summed over tgt[:, 1:]) for a "
        "per-token mean, or print loss itself, the summed loss per sentence",
        "loss, the sum of the per-step means over the T - 1 steps t = 1 .. T - 1 (E12), does not depend on "
        "the padding; divided by the padded width T it does. The printed number is neither the mean per "
        "step (there are T - 1 steps) nor per token, and it shrinks as T grows. The notes pad the whole data "
        "set to its longest target (pad_sequences without maxlen), so every batch is divided by that one T: "
        "one longer sentence anywhere in the corpus lowers every printed loss, training and test, while the "
        "training itself (the gradient of loss) is unchanged. Such numbers cannot be compared across data "
        "sets or with a per-token cross-entropy.",
        "test_E31_printed_loss_depends_on_padding",
    ),
    Erratum(
        "E33",
        "002 (notebook), position-wise feed-forward network, line 1863",
        "a line that cannot run",
        "outpus = tf.kears.layers.Dense(units=d_model)(outpus)",
        "outputs = tf.keras.layers.Dense(units=d_model)(outputs)",
        "tf.kears is a typo: TensorFlow has no attribute kears, so the line raises AttributeError. With it "
        "fixed the line raises NameError: outpus (for outputs) is read before it is assigned. Meant is "
        "FFN(x) = max(0, x W_1 + b_1) W_2 + b_2 (Eq. (2)), the second Dense applied to the first one's output.",
        "test_E33_tf_kears_cannot_run",
    ),
    Erratum(
        "E34",
        "002 (notebook), MultiHeadAttention.__init__, line 1783",
        "which projection self.dense is",
        "# wQ에 해당하는 dense  /  self.dense = tf.keras.layers.Dense(units=d_model)",
        "# W^O: the output projection (d_model x d_model), applied to the concatenated heads",
        "W^Q is query_dense, three lines above. self.dense is applied in step 5 to concat_attention, under "
        "the class's own comment 'wo에 해당하는 dence층' (line 1825): it is W^O of Sec. 3.2.2, "
        "MultiHead(Q, K, V) = Concat(head_1, ..., head_h) W^O. It does not touch the attention weights, "
        "which W^Q and W^K alone determine.",
        "test_E34_the_wq_comment_names_w_o",
    ),
    Erratum(
        "E35",
        "002 (notebook), train_step, step 1 of its description, line 299",
        "what the context vector is",
        "'Encoder에 소스 문장을 전달해 컨텍스트 벡터인 enc_out을 생성' (the encoder makes the context vector enc_out)",
        "enc_out holds the encoder outputs, one vector h_j per source position; the context vector "
        "c_i = sum_j alpha_ij h_j is computed anew at every decoder step i (Bahdanau et al. 2015, Eq. (5))",
        "'Context vector' is the one fixed vector of the seq2seq model without attention (000 names its fixed "
        "size as the limit of RNNs). With attention there is no single context vector: enc_out (B, T_src, U) "
        "stays the same for the whole sentence, while the context (B, U) changes at every step with the "
        "decoder state. Calling enc_out the context vector hides exactly what attention changed. (The notes' "
        "own context also sums the projected states, E7.)",
        "test_E35_context_vector_is_per_step",
    ),
)
